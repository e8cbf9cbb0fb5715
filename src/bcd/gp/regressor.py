"""A scikit-learn style estimator for Gaussian process regression."""
import numpy as np
import scipy.linalg

from .._validation import check_scalar
from .kernels import _check_inputs
from .problem import GaussianProcess

VARIANCE_METHODS = ("auto", "cholesky", "cg")


class GPRegressor:
    r"""Gaussian process regression with fixed hyperparameters, trained by
    greedy block coordinate descent with the kernel computed on the fly.

    Parameters
    ----------
    kernel : bcd.gp.kernels.Kernel
    noise : float
        Noise variance :math:`\sigma^2`.
    rule : str, default="gbcd"
        Selection rule passed to :func:`bcd.solve` (the update is "exact").
    block_size : int, optional
        Default ``min(500, n)`` for "gbcd", 5 otherwise.
    tol : float, default=1e-4
        Stop when ``||(K + noise I) alpha - y||_inf <= tol``.
    max_iter : int, default=100000
    random_state : None, int or Generator
    cache_size : float, default=0
        Bytes of kernel columns to cache during training.
    variance : {"auto", "cholesky", "cg"}, default="auto"
        How :meth:`predict` computes variances, which need
        :math:`k_*^T (K + \sigma^2 I)^{-1} k_*` for every test point:
        ``"cholesky"`` factors K + noise I once (O(n^2) memory, exact);
        ``"cg"`` solves the systems of a batch of test points together by
        conjugate gradients with the kernel computed on the fly (one kernel
        pass per iteration serves the whole batch), each to a residual of
        ``tol``; ``"auto"`` uses Cholesky while the matrix takes at most
        ``max_dense_bytes``.
    max_dense_bytes : float, default=2**28
    n_threads : int, optional
    **solve_options
        Further options of :func:`bcd.solve` (e.g. ``mi_candidates``).

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        Solution of (K + noise I) alpha = y.
    result_ : bcd.Result
        The training run.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 1)); y = np.sin(6 * X[:, 0])
    >>> gp = bcd.gp.GPRegressor(bcd.gp.SquaredExponential(0.2), noise=0.01, tol=1e-8)
    >>> mean, std = gp.fit(X, y).predict(np.array([[0.5]]), return_std=True)
    >>> bool(abs(mean[0] - np.sin(3.0)) < 0.05 and 0 <= std[0] < 0.1)
    True
    """

    def __init__(self, kernel, noise, rule="gbcd", block_size=None, tol=1e-4,
                 max_iter=100000, random_state=None, cache_size=0, variance="auto",
                 max_dense_bytes=2**28, n_threads=None, **solve_options):
        if variance not in VARIANCE_METHODS:
            raise ValueError(f"variance must be one of {', '.join(map(repr, VARIANCE_METHODS))}, "
                             f"got {variance!r}.")
        self.kernel = kernel
        self.noise = noise
        self.rule = rule
        self.block_size = block_size
        self.tol = check_scalar(tol, "tol", low=0.0, low_inclusive=False)
        self.max_iter = max_iter
        self.random_state = random_state
        self.cache_size = cache_size
        self.variance = variance
        self.max_dense_bytes = max_dense_bytes
        self.n_threads = n_threads
        self.solve_options = solve_options

    def fit(self, X, y):
        """Solve (K + noise I) alpha = y for the training data."""
        from .._solve import solve
        self.problem_ = GaussianProcess(X, y, self.kernel, self.noise,
                                        cache_size=self.cache_size, n_threads=self.n_threads)
        self.result_ = solve(self.problem_, rule=self.rule, blocks="variable",
                             block_size=self.block_size, update="exact", tol=self.tol,
                             max_iter=self.max_iter, random_state=self.random_state,
                             **self.solve_options)
        self.alpha_ = self.result_.x
        self.X_train_ = self.problem_.X
        self._chol = None
        return self

    def _check_test(self, X):
        if not hasattr(self, "alpha_"):
            raise ValueError("This GPRegressor is not fitted yet; call fit(X, y) first.")
        X = _check_inputs(X, "X")
        d = self.X_train_.shape[1]
        if X.shape[1] != d:
            raise ValueError(f"X has {X.shape[1]} features, but the model was fitted on {d}.")
        return X

    def predict(self, X, return_std=False):
        """Predictive mean k(x, X) alpha and, with ``return_std``, the standard
        deviation of the latent function (the noise is not added).

        Only the mean is computed unless ``return_std`` is set."""
        X = self._check_test(X)
        cross = self.kernel.evaluator(X, self.X_train_, n_threads=self.problem_.n_threads)
        mean = cross.matvec(self.alpha_)
        if not return_std:
            return mean
        var = self._latent_variance(X)
        return mean, np.sqrt(var)

    def _latent_variance(self, X, batch=256):
        n = self.X_train_.shape[0]
        method = self.variance
        if method == "auto":
            method = "cholesky" if 8.0 * n * n <= self.max_dense_bytes else "cg"
        k0 = self.kernel.diag_value()
        var = np.empty(X.shape[0])
        for start in range(0, X.shape[0], batch):
            Xb = X[start:start + batch]
            # k(X, Xb): the right-hand sides, one column per test point
            Kt = self.kernel.evaluator(self.X_train_, Xb, n_threads=self.problem_.n_threads).matrix()
            if method == "cholesky":
                if self._chol is None:
                    self._chol = scipy.linalg.cho_factor(self.problem_._system_matrix(),
                                                         lower=True, overwrite_a=False)
                V = scipy.linalg.cho_solve(self._chol, Kt)
            else:
                V = self._batched_cg(Kt)
            var[start:start + batch] = k0 - np.einsum("ij,ij->j", Kt, V)
        # rounding can make a tiny variance negative
        return np.maximum(var, 0.0)

    def _batched_cg(self, B):
        """Solve (K + noise I) V = B column by column, all columns advancing
        together with one kernel pass per iteration (matrix-free)."""
        ev = self.problem_._eval
        noise = self.problem_.noise
        V = np.zeros_like(B)
        R = B.copy()
        P = R.copy()
        rr = np.einsum("ij,ij->j", R, R)
        active = np.sqrt(rr) > 0
        for _ in range(10 * B.shape[0]):
            norm_inf = np.abs(R[:, active]).max(axis=0) if active.any() else np.zeros(0)
            still = np.flatnonzero(active)[norm_inf > self.tol]
            active[:] = False
            active[still] = True
            if not active.any():
                break
            Pa = P[:, active]
            AP = ev.matmat(Pa) + noise * Pa
            step = rr[active] / np.einsum("ij,ij->j", Pa, AP)
            V[:, active] += step * Pa
            R[:, active] -= step * AP
            rr_new = np.einsum("ij,ij->j", R[:, active], R[:, active])
            P[:, active] = R[:, active] + (rr_new / rr[active]) * Pa
            rr[active] = rr_new
        return V
