"""A scikit-learn estimator for Gaussian process regression.

scikit-learn is not imported by this module: :class:`GPRegressor` implements
the estimator interface itself (``get_params``, ``set_params``, tags,
``score``), so that ``import bcd`` needs only NumPy and SciPy.  scikit-learn's
classes are imported when they are asked for: the tags, and the exception
and warning classes of an unfitted estimator or a column-vector ``y``.
"""
import copy
import warnings

import numpy as np
import scipy.linalg

from .._resources import available_memory
from .._result import ConvergenceWarning
from .._validation import check_scalar, check_solver_options
from .base import (FitInterrupted, RegressorBase, check_array, check_max_time, check_target,
                   feature_names, not_fitted)
from .hyper.common import Control, Stopped
from .kernels import Kernel
from .optimizers import OPTIMIZERS, dense_factor, describe
from .problem import GaussianProcess, admissible_noise

VARIANCE_METHODS = ("auto", "cholesky", "cg", "lowrank")
#: options of bcd.solve that GPRegressor's own parameters set
#: the optimizers that learn hyperparameters
_LEARNING = [name for name, row in OPTIMIZERS.items() if row.fit is not None]
RESERVED_OPTIONS = ("rule", "blocks", "block_size", "update", "tol", "max_iter",
                    "random_state", "verbose")


class GPRegressor(RegressorBase):
    r"""Gaussian process regression with fixed hyperparameters, trained by
    greedy block coordinate descent with the kernel computed on the fly.

    A scikit-learn regressor (``get_params``, ``set_params``, ``clone``,
    pipelines and grid searches, ``score``) that does not need scikit-learn.
    Kernel parameters are reached as ``kernel__lengthscale`` (see
    :mod:`bcd.gp.kernels`).

    Parameters
    ----------
    kernel : bcd.gp.kernels.Kernel
        Covariance function, e.g. ``bcd.gp.SquaredExponential(0.5)``.  It is
        copied by ``fit`` (see ``kernel_``).
    noise : float
        Noise variance :math:`\sigma^2`, at least ``1e-8`` times the signal
        variance k(x, x).
    rule : str, default="gbcd"
        Selection rule passed to :func:`bcd.solve` (the update is "exact").
    block_size : int, optional
        Default ``min(500, n)`` for "gbcd", 5 otherwise.
    tol : float, default=1e-4
        Stop when ``||(K + noise I) alpha - y||_inf <= tol``.
    max_iter : int, default=100000
        Largest number of block updates.
    random_state : None, int or Generator
        Seed of the selection rule (GBCD draws its candidate coordinates at
        random).  With None, as in scikit-learn, each fit draws afresh, so
        ``n_iter_`` and the last digits of ``alpha_`` may differ between two
        fits of the same data (169 and 170 iterations in one test); pass an
        int for reproducible fits.
    cache_size : float, default=0
        Bytes of kernel columns to cache during training.
    variance : {"auto", "cholesky", "cg", "lowrank"}, default="auto"
        How :meth:`predict` computes variances, which need
        :math:`k_*^T (K + \sigma^2 I)^{-1} k_*` for every test point:
        ``"cholesky"`` factors K + noise I once (O(n^2) memory, exact);
        ``"cg"`` solves the systems of a batch of test points together by
        conjugate gradients with the kernel computed on the fly (one kernel
        pass per iteration serves the whole batch), each to a residual of
        ``tol`` (O(n^2) time per iteration: hours at 100,000 points);
        ``"lowrank"`` factors K by a partial pivoted Cholesky of adaptive
        rank r (until the residual is below ``variance_residual`` times the
        noise) and returns the Nystrom (DTC) variance of that factor, an
        estimate (not a bound) that is accurate when K is close to rank r at
        the noise level; :meth:`variance_bounds` certifies it (see Notes):
        O(n r) memory, O(n r^2) time once and O(r^2) per test point
        (O(n r + (m^2 r + m^3) / 32) per test point for the bounds, with
        ``variance_neighbors`` m); ``"auto"`` uses Cholesky while the
        matrix takes at most ``max_dense_bytes``, and ``"lowrank"`` beyond.
    max_dense_bytes : float, optional
        Memory limit of the ``"auto"`` variance method; default: half the
        memory available when :meth:`predict` first needs it (the factor,
        computed once by panels, serves every later call).
    variance_rank : int, default=4096
        ``"lowrank"``: largest number of pivots r of the partial pivoted
        Cholesky of K (fewer when ``variance_residual`` is reached first, or
        when two n x r arrays would take more than half the memory
        available).  It bounds the time: the factorization costs about
        n r^2 floating-point multiply-adds (r = 2,000 at n = 100,000 took
        about 20 s on 2 cores).  When it stops the factorization first,
        :meth:`predict` warns.
    variance_residual : float, default=0.002
        ``"lowrank"``: the pivoted Cholesky stops once the largest residual
        diagonal of K (the prior variance that the factor misses at a
        training point) is at most this times the noise.  Smaller is more
        accurate and costs more pivots; on Friedman1 with the
        hyperparameters ``optimizer="ml"`` learns there, 0.01, 0.003 and
        0.001 gave median relative errors of 12%, 3.2% and 1.0% at 20,000
        training points.
    variance_neighbors : int, default=1536
        ``"lowrank"``: training points m, besides the pivots, on which the
        certified upper bound conditions for each test point: groups of 32
        nearby test points share the m training points most correlated
        with any of them.
    variance_tol : float, default=0.1
        ``"lowrank"``: the certified relative error (upper minus lower bound
        of the variance, divided by the upper bound) that
        :meth:`variance_bounds` reports as ``certified`` in
        ``variance_info_``, and above which :meth:`predict` warns when it
        returns the upper bound (K far from low rank, see Notes).
    n_threads : int, optional
        Threads evaluating the kernel (default: the usable cores, the
        smallest of ``OMP_NUM_THREADS``, the cgroup's CPU quota and the CPU
        affinity mask, capped by OpenMP's limit that threadpoolctl sets).
    solver_options : dict, optional
        Further options of :func:`bcd.solve` (e.g. ``{"mi_candidates":
        100}``); those set by the parameters above (``rule``, ``blocks``,
        ``block_size``, ``update``, ``tol``, ``max_iter``, ``random_state``,
        ``verbose``) may not appear.
    verbose : bool or int, default=False
        Progress of the training solve (see :func:`bcd.solve`) and of the
        hyperparameter fit: ``True`` prints a line at most about once a
        second, ``2`` rewrites one line on a terminal.
    optimizer : {None, "ml", "cv", "cv_admm"}, default=None
        How the hyperparameters (the kernel's parameters whose bounds are
        not ``"fixed"``, and the noise unless ``noise_bounds="fixed"``) are
        learned; ``kernel`` and ``noise`` are the starting point.  ``None``
        uses them as given.  ``"ml"`` maximizes the log marginal likelihood
        on the log-parameters with its gradient: up to 5,000 samples
        exactly, by L-BFGS-B and a dense Cholesky factorization (O(n^3)
        time, O(n^2) memory); above, without factorizing, by estimates
        (preconditioned conjugate gradients, stochastic Lanczos quadrature
        for the log-determinant and Hutchinson's estimator for its
        gradient, about 1e-3 relative error in the likelihood reached),
        with the kernel matrix kept while it fits the memory and computed on
        the fly beyond (O(n) memory); ``hyper_["method"]`` says which
        (``"exact"``, ``"stored"`` or ``"streamed"``).
        ``"cv"`` minimizes the cross-validation error by L-BFGS-B with its
        exact gradient, each fold's systems solved by GBCD (warm-started;
        O(n) memory, kernel computed on the fly); the overall scale of the
        kernel and noise, which the CV error does not determine, is then set
        by maximum likelihood.  ``"cv_admm"`` minimizes the cross-validation
        error by the ADMM of Xu et al. (2019) with kernel products computed on the fly (O(n^2)
        time per iteration, O(n) memory); see ``cv``, ``cv_scheme`` and
        ``admm_options``.
    noise_bounds : pair of float or "fixed", default=(1e-5, 1e5)
        Bounds of the noise variance when it is learned.
    n_restarts : int, default=0
        Further starts of the optimizer, drawn log-uniformly within the
        bounds; the best run is kept (largest marginal likelihood, or
        lowest cross-validation error).
    cv : float or int, default=5
        For ``"cv"`` and ``"cv_admm"``: a fraction in (0, 1) held out
        (hold-out CV), or a number of folds K (2 <= K <= n_samples).
    cv_scheme : {"naive", "consensus"}, default="naive"
        K-fold CV: ``"naive"`` optimizes each fold on its own and averages
        the log-parameters; ``"consensus"`` optimizes one set of parameters
        for all folds: for ``"cv"`` the mean of the folds' errors (one task
        per fold and evaluation), for ``"cv_admm"`` by consensus ADMM (one
        step per fold and iteration).  Only parameter vectors are exchanged.
    client : dask.distributed.Client, optional
        Run the folds, restarts and candidates as tasks on this Dask cluster
        (the data are scattered once).  Without a client they run on a
        local thread pool.  Not pickled with the estimator.
    admm_options : dict, optional
        Constants of ``"cv_admm"`` (defaults, from the paper where it gives
        them, in :data:`bcd.gp.hyper.ADMM_DEFAULTS`): ``rho`` (5),
        ``lambda0`` (1), ``epsilon`` (1e-2, on ||delta theta||_2),
        ``max_iter`` (100), ``theta_steps``, ``theta_tol``, ``z_steps``,
        ``z_tol``, ``merit_tol``, ``feasibility_tol``, ``perturbation``,
        ``solve_tol``, ``armijo``, and ``rho_update`` (residual balancing
        of rho after each iteration, Boyd et al. 2011; False keeps the
        paper's fixed rho) with its constants ``rho_mu`` (10) and
        ``rho_tau`` (2).
    candidates : array-like of shape (n_candidates, n_hyperparameters), optional
        Further starting points of the optimizer (a grid, or starts of the
        user's choosing), as log-parameters in the order of
        ``kernel.theta`` followed by log(noise) when the noise is learned,
        each within the bounds.  They run as tasks like the restarts (on the
        thread pool or the Dask client), after the start given by
        ``kernel`` and ``noise`` and before the ``n_restarts`` random ones;
        the best of all starts is kept.  The result of each start is in
        ``hyper_["starts"]``.
    max_time : float, optional
        Wall-clock limit in seconds on the whole fit: when it runs out while
        the hyperparameters are learned, the best ones reached are kept,
        with a ``ConvergenceWarning``; the weights at those hyperparameters
        are then reused from the last exact likelihood evaluation where it
        has them, or else solved by GBCD within what remains of
        ``max_time`` (a solve stopped by the deadline reports it in
        ``result_.status``).  Ctrl-C stops any part of the fit
        (``bcd.gp.FitInterrupted``, a ``KeyboardInterrupt``).

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        Solution of (K + noise I) alpha = y.
    kernel_ : bcd.gp.kernels.Kernel
        A copy of ``kernel`` made by ``fit``, which predictions use (later
        changes of ``kernel`` do not affect the fitted model).
    X_train_ : ndarray of shape (n_samples, n_features)
        The training inputs.
    problem_ : bcd.GaussianProcess
        The training problem.
    result_ : bcd.Result
        The training run.
    n_iter_ : int
        Block updates of the training run.
    n_features_in_ : int
        Number of features seen by ``fit``.
    noise_ : float
        The noise variance of the fitted model (learned or as given).
    log_marginal_likelihood_value_ : float
        With ``optimizer="ml"``: the log marginal likelihood at the learned
        hyperparameters.
    cv_mse_ : float
        With ``optimizer="cv"`` or ``"cv_admm"``: the cross-validation mean
        squared error at the learned hyperparameters (each fold's system
        solved by GBCD; for ``"cv_admm"`` warm-started from the ADMM's
        auxiliary variable).
    history_ : ndarray
        The objective per outer iteration of the hyperparameter fit (best
        start): minus the log marginal likelihood or the CV error per L-BFGS-B
        iteration, or the (fold-summed) augmented Lagrangian per ADMM
        iteration.
    hyper_ : dict
        Details of the hyperparameter fit: ``"names"`` (of the learned
        log-parameters), ``"theta"`` (their learned values) and ``"starts"``
        (per start: the starting point, the point reached and its criterion,
        ``"lml"`` or ``"cv_mse"``), besides the optimizer's own counts;
        for ``"ml"`` also ``"method"``, how the likelihood was computed
        (``"exact"``, or estimated with the kernel matrix ``"stored"`` or
        ``"streamed"``);
        for ``"cv"``, when the noise and a variance of every term of the
        kernel are learned, also ``"scale"``, the factor by which the maximum
        likelihood step multiplied the kernel's variances and the noise
        (``result_`` is the training run before it: the residual is the
        same, and ``alpha_`` is ``result_.x`` divided by the factor);
        for ``"cv_admm"`` also ``"rho"``, the penalty parameter per
        iteration of each fold (``"folds"``) and, for the consensus scheme,
        of the consensus constraint (``"consensus"``).
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the features seen by ``fit``, when ``X`` was a data frame
        whose column names are all strings.
    variance_info_ : dict
        Set by the last :meth:`predict` with ``return_std`` (and by
        :meth:`variance_bounds`): ``"method"`` (the variance method used),
        and for ``"lowrank"`` also ``"rank"`` (pivots), ``"residual"`` (the
        largest residual diagonal over the noise), ``"converged"`` (whether
        it is at most ``variance_residual``), ``"stopped"`` (why the
        factorization stopped: ``"residual"``, ``"max_rank"``,
        ``"memory"`` or ``"unreachable"``) and ``"estimate"`` (what
        :meth:`predict` returns: ``"nystrom"``, or ``"upper bound"`` when
        the factorization gave up).  The certified bounds add
        ``"bound_rank"`` (the pivots they use), ``"neighbors"``,
        ``"max_error"`` (the largest certified error, upper minus lower
        bound), ``"max_relative_error"`` (relative to the upper bound),
        ``"median_relative_error"`` and ``"certified"`` (whether the largest
        is at most ``variance_tol``).

    Notes
    -----
    **The "lowrank" variances.**  With A = K + noise I, the exact latent
    variance at x is var = k(x, x) - k^T A^-1 k.  A greedy partial pivoted
    Cholesky of K (pivots Z) gives Q (n x r) with E = K - Q Q^T positive
    semi-definite and diagonal e known; it takes pivots until max(e) is at
    most ``variance_residual`` times the noise (or ``variance_rank``
    pivots).  :meth:`predict` returns the DTC variance of this factor,
    e(x) + noise c^T (Q^T Q + noise I)^-1 c with c = Q_Z^-1 k(Z, x) and
    e(x) = k(x, x) - |c|^2, which needs the r kernel values k(Z, x) only.
    It is an estimate: never above the exact variance given the pivots'
    targets alone, it tends to the exact variance as the residual
    vanishes, and tends to exceed it slightly.  On Friedman1 (ten
    standardized inputs) with the hyperparameters that ``optimizer="ml"``
    learns there (length-scale 7.1, variance 82, noise 0.043), the default
    tolerance stopped at 2,617 and 2,745 pivots at 20,000 and 30,000
    training points, with median relative errors of 2.0% and 3.1% (14% and
    29% at most over 1,000 test points); the error grows about as n at a
    fixed tolerance (3,066 pivots and 41 s for 10,000 test points at
    100,000 training points on 2 cores).

    :meth:`variance_bounds` certifies it (O(n r) per test point): as
    Q Q^T + noise I <= A, var_L = k(x, x) - k^T (Q Q^T + noise I)^-1 k is a
    lower bound, and with w = (Q Q^T + noise I)^-1 k, var - var_L <= b =
    min(trace(E) |w|^2, (sum_i |w_i| sqrt(e_i))^2) (sharpened to
    q b / (q + b), q = k^T w).  The exact posterior variance var_U given
    only the targets of the pivots and of the ``variance_neighbors``
    training points most correlated with x is an upper bound (fewer
    observations never lower a posterior variance); groups of 32 nearby
    test points share their neighbours.  The certified upper bound is
    min(var_U, var_L + b), and the certified error its distance to
    max(var_L, 0).

    Some kernels are far from low rank at the noise level: the number of
    eigenvalues of K above the noise grows with n, fast in several
    dimensions for a short length-scale (with the README's length-scale 2
    on Friedman1, 6,000 pivots of 20,000 points leave a residual of 0.45
    times the noise).  When the decay of the residual so far (from 512
    pivots on) predicts that the tolerance needs more than four times
    ``variance_rank`` pivots, the factorization gives up, and
    :meth:`predict` returns the certified upper bound of its first 256
    pivots and the neighbours instead (never below the exact variance),
    with a ``ConvergenceWarning`` when its certified relative error
    exceeds ``variance_tol``.  On Friedman1 with the README's
    hyperparameters, that bound exceeds the exact variances by a median
    of 14%, 34% and 60% at 5,000, 10,000 and 20,000 training points;
    use ``"cholesky"`` where K fits the memory (``asv_benches/gp_variance.py``
    measures these errors).

    As in scikit-learn, the constructor only stores its arguments; they are
    validated by ``fit``.  A 1-D ``X`` is read as a single feature, in
    ``fit`` and, for a model fitted on one feature, in ``predict``.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 1)); y = np.sin(6 * X[:, 0])
    >>> gp = bcd.gp.GPRegressor(bcd.gp.SquaredExponential(0.2), noise=0.01, tol=1e-8)
    >>> mean, std = gp.fit(X, y).predict(np.array([[0.5]]), return_std=True)
    >>> bool(abs(mean[0] - np.sin(3.0)) < 0.05 and 0 <= std[0] < 0.1)
    True
    >>> bool(gp.score(X, y) > 0.99)
    True
    >>> gp.set_params(kernel__lengthscale=0.3, noise=0.02)
    GPRegressor(kernel=SquaredExponential(lengthscale=0.3, variance=1), noise=0.02, tol=1e-08)
    """

    #: for scikit-learn before 1.6: constructor arguments without defaults
    _required_parameters = ["kernel", "noise"]

    def __init__(self, kernel, noise, rule="gbcd", block_size=None, tol=1e-4,
                 max_iter=100000, random_state=None, cache_size=0, variance="auto",
                 max_dense_bytes=None, n_threads=None, solver_options=None, verbose=False,
                 optimizer=None, noise_bounds=(1e-5, 1e5), n_restarts=0, cv=5,
                 cv_scheme="naive", client=None, admm_options=None, candidates=None,
                 max_time=None, variance_rank=4096, variance_neighbors=1536, variance_tol=0.1,
                 variance_residual=0.002):
        self.kernel = kernel
        self.noise = noise
        self.rule = rule
        self.block_size = block_size
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.cache_size = cache_size
        self.variance = variance
        self.max_dense_bytes = max_dense_bytes
        self.n_threads = n_threads
        self.solver_options = solver_options
        self.verbose = verbose
        self.optimizer = optimizer
        self.noise_bounds = noise_bounds
        self.n_restarts = n_restarts
        self.cv = cv
        self.cv_scheme = cv_scheme
        self.client = client
        self.admm_options = admm_options
        self.candidates = candidates
        self.max_time = max_time
        self.variance_rank = variance_rank
        self.variance_neighbors = variance_neighbors
        self.variance_tol = variance_tol
        self.variance_residual = variance_residual

    def __getstate__(self):
        state = dict(self.__dict__)
        if state.get("client") is not None:
            state["client"] = None       # a connection does not pickle
        return state

    def __sklearn_is_fitted__(self):
        return hasattr(self, "alpha_")

    # ------------------------------------------------------------ fit

    def _check_params(self):
        """The validated ``tol`` and options of :func:`bcd.solve`."""
        if not isinstance(self.kernel, Kernel):
            raise TypeError(f"kernel must be a bcd.gp kernel (SquaredExponential, Matern, "
                            f"Periodic, LocallyPeriodic, Hamming, HistogramIntersection or "
                            f"their sums and products), got {self.kernel!r}.")
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=False)
        self._check_predict_params()
        return tol, check_solver_options(self.solver_options, RESERVED_OPTIONS,
                                         "GPRegressor's own parameters set them")

    def _check_predict_params(self):
        if not isinstance(self.variance, str) or self.variance not in VARIANCE_METHODS:
            raise ValueError(f"variance must be one of {', '.join(map(repr, VARIANCE_METHODS))}, "
                             f"got {self.variance!r}.")
        if self.max_dense_bytes is not None:
            check_scalar(self.max_dense_bytes, "max_dense_bytes", low=0.0)
        check_scalar(self.variance_rank, "variance_rank", low=0, integer=True)
        check_scalar(self.variance_neighbors, "variance_neighbors", low=0, integer=True)
        check_scalar(self.variance_tol, "variance_tol", low=0.0)
        check_scalar(self.variance_residual, "variance_residual", low=0.0)

    def fit(self, X, y):
        """Solve (K + noise I) alpha = y for the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples,)
            Training inputs (1-D: a single feature).
        y : array-like of shape (n_samples,)
            Training targets.

        Returns
        -------
        self : GPRegressor
            The fitted estimator.
        """

        tol, options = self._check_params()
        names = feature_names(X)
        given = X
        X = check_array(X, "X", allow_1d=True)
        if isinstance(given, np.ndarray) and np.shares_memory(X, given):
            X = X.copy()        # the model keeps X: later changes of the caller's array
        y = check_target(y, X.shape[0])
        kernel = copy.deepcopy(self.kernel)
        noise = self.noise
        optimizer = self._optimizer()
        control = Control(check_max_time(self.max_time))
        hyper = space = None
        if optimizer.fit is not None:
            kernel, noise, hyper, space = self._learn(optimizer, kernel, X, y, tol, control)
        elif self.candidates is not None:
            raise ValueError(f"candidates needs an optimizer: {describe(_LEARNING)} (with "
                             f"optimizer=None the hyperparameters are not learned).")
        problem = GaussianProcess(X, y, kernel, noise, cache_size=self.cache_size,
                                  n_threads=self.n_threads)
        try:
            weights = optimizer.weights(self, X, y, problem, hyper, space, tol, options,
                                        control)
        except Stopped:
            raise FitInterrupted("interrupted", hyper) from None
        problem, result, alpha, n_iter = (weights.problem, weights.result, weights.alpha,
                                          weights.n_iter)
        kernel, chol = problem.kernel, weights.chol
        self.kernel_ = kernel
        self.noise_ = problem.noise
        for name in ("log_marginal_likelihood_value_", "cv_mse_", "history_", "hyper_"):
            self.__dict__.pop(name, None)
        if hyper is not None:
            self.hyper_ = hyper
            self.history_ = hyper["history"]
            if "lml" in hyper:
                self.log_marginal_likelihood_value_ = hyper["lml"]
            else:
                self.cv_mse_ = hyper["cv_mse"]
        self.problem_ = problem
        self.result_ = result
        self.alpha_ = alpha
        self.X_train_ = problem.X
        self.n_iter_ = n_iter
        self.n_features_in_ = X.shape[1]
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._chol = chol
        self._lowrank = None
        self.__dict__.pop("variance_info_", None)
        return self

    def _optimizer(self):
        """The row of OPTIMIZERS for ``optimizer``."""
        name = self.optimizer
        try:
            known = not isinstance(name, bool) and name in OPTIMIZERS
        except TypeError:                     # an unhashable value
            known = False
        if not known:
            raise ValueError(f"optimizer must be {describe()}, got {name!r}.")
        return OPTIMIZERS[name]

    def _check_hyper_params(self, optimizer, n_samples):
        from . import hyper

        if not isinstance(self.cv_scheme, str) or self.cv_scheme not in hyper.CV_SCHEMES:
            raise ValueError(f"cv_scheme must be 'naive' or 'consensus', got "
                             f"{self.cv_scheme!r}.")
        cv = self.cv
        if isinstance(cv, bool) or not isinstance(cv, (int, np.integer, float, np.floating)):
            raise TypeError(f"cv must be a fraction in (0, 1) or a number of folds, got {cv!r}.")
        if isinstance(cv, (float, np.floating)):
            if not 0.0 < cv < 1.0:
                raise ValueError(f"cv as a fraction held out must lie in (0, 1), got {cv!r}.")
            cv = float(cv)
            if optimizer.folds and min(round(cv * n_samples),
                                                   n_samples - round(cv * n_samples)) < 1:
                raise ValueError(f"cv={cv!r} leaves an empty training or validation set with "
                                 f"{n_samples} samples.")
        else:
            cv = int(cv)
            if cv < 2:
                raise ValueError(f"cv as a number of folds must be at least 2, got {cv}.")
            if optimizer.folds and cv > n_samples:
                raise ValueError(f"cv={cv} folds is more than the {n_samples} samples.")
        n_restarts = self.n_restarts
        if isinstance(n_restarts, bool) or not isinstance(n_restarts, (int, np.integer)) \
                or n_restarts < 0:
            raise ValueError(f"n_restarts must be a non-negative integer, got {n_restarts!r}.")
        hyper.check_client(self.client)
        options = self.admm_options
        if options is None:
            options = {}
        elif not isinstance(options, dict):
            raise TypeError(f"admm_options must be a dict or None, got "
                            f"{type(options).__name__}.")
        unknown = sorted(set(options) - set(hyper.ADMM_DEFAULTS))
        if unknown:
            raise ValueError(f"admm_options: unknown {', '.join(map(repr, unknown))}; valid "
                             f"keys are {', '.join(hyper.ADMM_DEFAULTS)}.")
        for key, value in options.items():
            default = hyper.ADMM_DEFAULTS[key]
            if isinstance(default, bool):
                if not isinstance(value, (bool, np.bool_)):
                    raise TypeError(f"admm_options[{key!r}] must be True or False, got "
                                    f"{value!r}.")
            elif key == "lambda0":
                check_scalar(value, f"admm_options[{key!r}]")
            elif key == "perturbation" or key == "epsilon" or key.endswith("tol"):
                # a spread or a tolerance: zero is allowed
                check_scalar(value, f"admm_options[{key!r}]", low=0.0)
            else:
                check_scalar(value, f"admm_options[{key!r}]", low=0.0, low_inclusive=False,
                             integer=isinstance(default, int))
        return cv, int(n_restarts), dict(options)

    def _check_candidates(self, space):
        """``candidates`` as an (m, space.size) array of log-parameters."""
        if self.candidates is None:
            return np.zeros((0, space.size))
        try:
            arr = np.array(self.candidates, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"candidates must be an array of log-parameters, got "
                            f"{type(self.candidates).__name__}.") from None
        if arr.ndim != 2 or arr.shape[1] != space.size:
            raise ValueError(f"candidates must have shape (n_candidates, {space.size}) (one "
                             f"column per learned log-parameter: {', '.join(space.names)}), "
                             f"got shape {arr.shape}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError("candidates contains NaN or infinity.")
        low, high = space.bounds[:, 0], space.bounds[:, 1]
        outside = np.nonzero(np.any((arr < low - 1e-12) | (arr > high + 1e-12), axis=1))[0]
        if outside.size:
            raise ValueError(f"candidates: row {int(outside[0])} lies outside the log-bounds "
                             f"of the hyperparameters ({', '.join(space.names)}).")
        return np.clip(arr, low, high)

    def _learn(self, optimizer, kernel, X, y, tol, control):
        """Learn the hyperparameters by ``optimizer`` (a row of OPTIMIZERS):
        (kernel, noise, summary, the hyperparameter space)."""
        from .._progress import make_progress
        from . import hyper

        cv, n_restarts, options = self._check_hyper_params(optimizer, X.shape[0])
        noise = check_scalar(self.noise, "noise", low=0.0, low_inclusive=False)
        try:
            space = hyper.Space(kernel, noise, self.noise_bounds)
        except NotImplementedError as exc:
            raise ValueError(f"optimizer={self.optimizer!r} needs a kernel with declared "
                             f"hyperparameters: {exc}") from None
        candidates = self._check_candidates(space)
        rs = self.random_state
        rng = rs if isinstance(rs, np.random.Generator) else np.random.default_rng(rs)
        X64 = np.ascontiguousarray(X, dtype=np.float64)
        y64 = np.ascontiguousarray(y, dtype=np.float64)
        progress = make_progress(self.verbose)
        n_starts = n_restarts + 1 + len(candidates)
        n_folds = 1 if not optimizer.folds or isinstance(cv, float) else cv
        n_tasks = n_starts * n_folds
        if optimizer.concurrent_tasks is not None and self.client is None:
            n_tasks = optimizer.concurrent_tasks(X.shape[0], n_tasks)
        executor = hyper.make_executor(self.client, n_tasks, control)
        try:
            result = optimizer.fit(space, X64, y64, cv=cv, scheme=self.cv_scheme,
                                   n_restarts=n_restarts, rng=rng, executor=executor,
                                   options=options, tol=tol, progress=progress,
                                   candidates=candidates, control=control)
        except Stopped as stop:
            if stop.reason == "interrupted":
                raise FitInterrupted("interrupted", None) from None
            # out of time before a single evaluation completed
            result = dict(theta=space.theta0(), history=np.zeros(0), n_iter=0, starts=[],
                          stopped="max_time")
            result["lml" if optimizer.name == "ml" else "cv_mse"] = np.nan
            if optimizer.name == "ml":
                from .hyper.ml import ml_plan
                result["method"] = ml_plan(X.shape[0], 1)[0]
        finally:
            executor.close()
        if result.get("stopped") == "interrupted":
            raise FitInterrupted("interrupted", result)
        if result.get("stopped") == "max_time":
            warnings.warn(f"max_time={self.max_time!r} ran out while learning the "
                          f"hyperparameters; the best ones reached are kept"
                          f"{'' if result['n_iter'] else ' (the initial ones)'}.",
                          ConvergenceWarning, stacklevel=3)
        kernel, noise = space.unpack(result["theta"])
        result["names"] = space.names
        return kernel, admissible_noise(kernel, noise), result, space

    # ------------------------------------------------------------ predict

    def _check_test(self, X):
        if not hasattr(self, "alpha_"):
            raise not_fitted(self)
        self._check_feature_names(X)
        d = self.n_features_in_
        X = check_array(X, "X", allow_1d=d == 1)
        if X.shape[1] != d:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {d} features as input.")
        return X

    def predict(self, X, return_std=False):
        """Predictive mean k(x, X) alpha and, with ``return_std``, the standard
        deviation of the latent function (the noise is not added).

        Only the mean is computed unless ``return_std`` is set.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Test inputs (1-D for a model fitted on a single feature).
        return_std : bool, default=False
            Also return the standard deviations.

        Returns
        -------
        mean : ndarray of shape (n_queries,)
        std : ndarray of shape (n_queries,)
            Only with ``return_std``.
        """
        X = self._check_test(X)
        cross = self.kernel_.evaluator(X, self.X_train_, n_threads=self.problem_.n_threads)
        mean = cross.matvec(self.alpha_)
        if not return_std:
            return mean
        var = self._latent_variance(X)
        return mean, np.sqrt(var)

    def variance_bounds(self, X):
        """Certified lower and upper bounds of the latent predictive variance.

        With ``variance="lowrank"`` (or ``"auto"`` beyond ``max_dense_bytes``)
        these are the bounds described in the Notes of :class:`GPRegressor`:
        ``lower <= exact <= upper`` (in exact arithmetic; rounding adds about
        1e-16 n k(x, x) / noise).  They cost O(n r) per test point for r
        pivots, far more than :meth:`predict`'s estimate at a high rank
        (minutes for 10,000 test points at 100,000 training points and
        r = 2,000).  When the factorization gave up (Notes), ``upper`` is
        the variance that :meth:`predict` returns.  With ``"cholesky"`` and
        ``"cg"`` both are the computed variance.  Sets ``variance_info_``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Test inputs (1-D for a model fitted on a single feature).

        Returns
        -------
        lower, upper : ndarray of shape (n_queries,)
            Bounds of k(x, x) - k^T (K + noise I)^-1 k, clipped at 0.

        Examples
        --------
        >>> import numpy as np, bcd
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(300, 2)); y = np.sin(4 * X[:, 0]) + X[:, 1]
        >>> gp = bcd.gp.GPRegressor(bcd.gp.SquaredExponential(0.5), noise=0.01,
        ...                         variance="lowrank", variance_rank=40).fit(X, y)
        >>> lower, upper = gp.variance_bounds(rng.uniform(size=(5, 2)))
        >>> bool(np.all(lower <= upper)), gp.variance_info_["stopped"]
        (True, 'residual')
        >>> std = gp.predict(rng.uniform(size=(5, 2)), return_std=True)[1]
        >>> gp.variance_info_["converged"], gp.variance_info_["rank"] <= 40
        (True, True)
        """
        X = self._check_test(X)
        method = self._variance_method()
        if method != "lowrank":
            var = self._latent_variance(X)
            return var, var.copy()
        return self._lowrank_bounds(X, warn=False)

    def _variance_method(self):
        self._check_predict_params()
        n = self.X_train_.shape[0]
        method = self.variance
        if method == "auto":
            method = "cholesky" if 8.0 * n * n <= self._memory_limit() else "lowrank"
        return method

    def _memory_limit(self):
        limit = self.max_dense_bytes
        if limit is None:
            available = available_memory()
            limit = 2.0**31 if available is None else 0.5 * available
        return float(limit)

    def _lowrank_factor(self):
        """The :class:`bcd.gp._variance.LowRankVariance` of the fitted model
        (computed on first use and kept)."""
        from ._variance import LowRankVariance

        n = self.X_train_.shape[0]
        # the factor Q and, for the bounds, Phi (two n x r arrays) within
        # half the memory available
        available = available_memory()
        cap = n if available is None else max(0, int(0.5 * available / (16.0 * n)))
        rank = int(min(self.variance_rank, n, cap))
        neighbors = int(self.variance_neighbors)
        residual = float(self.variance_residual) * float(self.noise_)
        key = (rank, neighbors, residual)
        factor = getattr(self, "_lowrank", None)
        if factor is None or factor.key != key:
            factor = LowRankVariance(self.kernel_, np.asarray(self.X_train_, dtype=np.float64),
                                     self.noise_, rank, neighbors, self.problem_.n_threads,
                                     residual=residual, give_up=True)
            factor.key = key
            factor.memory_capped = cap < min(self.variance_rank, n)
            self._lowrank = factor
        return factor

    def _factor_info(self, factor):
        return dict(method="lowrank", rank=factor.rank,
                    residual=factor.max_residual / float(self.noise_),
                    converged=factor.converged,
                    stopped="memory" if factor.stopped == "max_rank" and factor.memory_capped
                    else factor.stopped)

    def _lowrank_bounds(self, X, warn):
        """(lower, upper) of the "lowrank" method; records ``variance_info_``
        and, with ``warn``, warns when the certified error exceeds
        ``variance_tol``."""
        factor = self._lowrank_factor()
        lower, upper = factor.bounds(np.asarray(X, dtype=np.float64))
        error = upper - lower
        # relative to the upper bound (0 where both bounds are 0)
        relative = np.divide(error, upper, out=np.zeros_like(error), where=upper > 0)
        worst = float(np.max(relative)) if relative.size else 0.0
        tol = float(self.variance_tol)
        self.variance_info_ = dict(self._factor_info(factor), estimate="upper bound",
                                   bound_rank=factor.bound_rank, neighbors=factor.m,
                                   max_error=float(np.max(error)) if error.size else 0.0,
                                   max_relative_error=worst,
                                   median_relative_error=float(np.median(relative))
                                   if relative.size else 0.0,
                                   certified=worst <= tol)
        if warn and worst > tol:
            warnings.warn(f"variance='lowrank': K + noise I is not close to low rank (the "
                          f"pivoted Cholesky gave up at rank {factor.rank} with a residual of "
                          f"{factor.max_residual / float(self.noise_):.3g} times the noise, "
                          f"variance_residual={float(self.variance_residual):g}); the returned "
                          f"variances are certified upper bounds (never below the exact ones) "
                          f"whose certified relative error reaches {worst:.3g} (upper minus "
                          f"lower bound over the upper bound, variance_tol={tol:g}), with "
                          f"{factor.m} neighbors.  Use variance='cholesky' if K fits the "
                          f"memory, or raise variance_neighbors.",
                          ConvergenceWarning, stacklevel=4)
        return lower, upper

    def _lowrank_estimate(self, X):
        """The variances :meth:`predict` returns with ``"lowrank"``."""
        factor = self._lowrank_factor()
        if factor.fallback:
            return self._lowrank_bounds(X, warn=True)[1]
        var = factor.estimate(np.asarray(X, dtype=np.float64))
        self.variance_info_ = dict(self._factor_info(factor), estimate="nystrom")
        if not factor.converged:
            why = ("the memory available" if self.variance_info_["stopped"] == "memory"
                   else f"variance_rank={self.variance_rank}")
            warnings.warn(f"variance='lowrank': the pivoted Cholesky of K stopped at rank "
                          f"{factor.rank} ({why}) with a largest residual diagonal of "
                          f"{self.variance_info_['residual']:.3g} times the noise, above "
                          f"variance_residual={float(self.variance_residual):g}; the variances "
                          f"may be far from the exact ones (variance_bounds() certifies "
                          f"them).  Raise variance_rank, or use variance='cholesky' if K fits "
                          f"the memory.", ConvergenceWarning, stacklevel=4)
        return var

    def _latent_variance(self, X, batch=256):
        method = self._variance_method()
        if method == "lowrank":
            return self._lowrank_estimate(X)
        self.variance_info_ = dict(method=method)
        kernel = self.kernel_
        var = np.empty(X.shape[0])
        for start in range(0, X.shape[0], batch):
            Xb = X[start:start + batch]
            # k(X, Xb): the right-hand sides, one column per test point
            Kt = kernel.evaluator(self.X_train_, Xb, n_threads=self.problem_.n_threads).matrix()
            if method == "cholesky":
                if self._chol is None:
                    # K + noise I = U^T U, factored by panels, kept for later calls
                    self._chol = dense_factor(self.problem_)
                # k^T (U^T U)^-1 k = |U^-T k|^2
                W = scipy.linalg.solve_triangular(self._chol, Kt, trans="T", lower=False,
                                                  check_finite=False)
                quad = np.einsum("ij,ij->j", W, W)
            else:
                quad = np.einsum("ij,ij->j", Kt, self._batched_cg(Kt))
            var[start:start + batch] = kernel.diag(Xb) - quad
        # rounding can make a tiny variance negative
        return np.maximum(var, 0.0)

    def _batched_cg(self, B):
        """Solve (K + noise I) V = B column by column, all columns advancing
        together with one kernel pass per iteration (matrix-free)."""
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=False)
        problem = self.problem_
        noise = self.problem_.noise
        V = np.zeros_like(B)
        R = B.copy()
        P = R.copy()
        rr = np.einsum("ij,ij->j", R, R)
        active = np.sqrt(rr) > 0
        for _ in range(10 * B.shape[0]):
            norm_inf = np.abs(R[:, active]).max(axis=0) if active.any() else np.zeros(0)
            still = np.flatnonzero(active)[norm_inf > tol]
            active[:] = False
            active[still] = True
            if not active.any():
                break
            Pa = P[:, active]
            AP = problem.kernel_product(Pa) + noise * Pa
            step = rr[active] / np.einsum("ij,ij->j", Pa, AP)
            V[:, active] += step * Pa
            R[:, active] -= step * AP
            rr_new = np.einsum("ij,ij->j", R[:, active], R[:, active])
            P[:, active] = R[:, active] + (rr_new / rr[active]) * Pa
            rr[active] = rr_new
        return V
