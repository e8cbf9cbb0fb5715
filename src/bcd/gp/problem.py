"""The Gaussian process linear system as a problem for :func:`bcd.solve`."""
import numbers
import re
import threading

import numpy as np

from .._resources import resolve_threads
from .._validation import check_vector, result_dtype
from ..problems import Problem, Quadratic
from ..core import calibration
from ._kernel import max_threads
from ._problem import CyGaussianProcess
from .kernels import Kernel, _check_inputs

#: kernel-entry rates measured in this process, by (kernel kind, dimension, threads)
_ENTRY_RATES = {}
_BLOCK_SECONDS = {}
_ENTRY_LOCK = threading.Lock()

#: the points of the block timed by :meth:`GaussianProcess.kernel_entry_rate`:
#: ENTRY_PROBE, or a quarter of the points of a smaller problem (at least
#: ENTRY_PROBE_MIN), whose dense solve the probe would otherwise rival
ENTRY_PROBE = 1000
ENTRY_PROBE_MIN = 256

#: the points on which :meth:`GaussianProcess.block_seconds` chooses a block
SELECT_PROBE = 2000

#: smallest noise variance accepted, relative to the signal variance k(x, x)
MIN_RELATIVE_NOISE = 1e-8


def admissible_noise(kernel, noise):
    """``noise``, raised to the smallest value :class:`GaussianProcess`
    accepts with ``kernel`` when below it (learned hyperparameters may reach
    that limit with the noise at its lower bound)."""
    return max(noise, MIN_RELATIVE_NOISE * kernel.diag_value() * (1 + 1e-12))


class GaussianProcess(Problem):
    r"""Gaussian process regression as the quadratic
    :math:`f(\alpha) = \tfrac12 \alpha^T (K + \sigma^2 I) \alpha - y^T \alpha`.

    Its minimizer gives the predictive mean :math:`m(x_*) = k(x_*, X) \alpha`.
    The kernel matrix K is never formed (unless ``precomputed=True``): the
    entries a solver needs are evaluated on the fly in compiled code, in
    parallel over the rows, so memory stays O(n).  Any rule and block
    strategy of :func:`bcd.solve` applies, with ``update="exact"`` the
    natural update; ``rule="gbcd"`` is Bo and Sminchisescu's greedy block
    coordinate descent.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training inputs.
    y : array-like of shape (n_samples,)
        Training targets.
    kernel : bcd.gp.kernels.Kernel
        Covariance function, e.g. ``bcd.gp.SquaredExponential(2.0)``.
    noise : float
        Noise variance :math:`\sigma^2`, at least ``1e-8`` times the signal
        variance k(x, x) (below that K + noise I is numerically singular:
        duplicate inputs make K exactly singular).
    precomputed : bool, default=False
        Form the dense matrix K + noise I once (O(n^2) memory) instead of
        evaluating entries on the fly: faster for small n.
    cache_size : float, default=0
        Memory limit in bytes of a cache of kernel columns (0: no cache).
        Columns of recently updated coordinates are reused instead of
        recomputed.
    n_threads : int, optional
        Threads evaluating the kernel.  Default: the usable cores
        (``bcd._resources.usable_cores``: the smallest of
        ``OMP_NUM_THREADS``, the cgroup's CPU quota and the CPU affinity
        mask), capped by OpenMP's limit, which threadpoolctl's
        ``threadpool_limits(limits=k, user_api="openmp")`` sets.

    Notes
    -----
    ``bcd.solve(problem)`` with no options chooses between one exact block
    of every coordinate (a dense Cholesky solve that forms K and its
    factor, 16 n^2 bytes) and GBCD without forming K, from the times
    predicted by rates measured once per process on this machine (see
    ``bcd.core.calibration``); the dense solve never takes more than
    half of the available memory.  ``result.options["auto_prediction"]``
    records the predicted times.

    The gradient is :math:`(K + \sigma^2 I)\alpha - y`, the residual of the
    linear system, so ``tol`` bounds that residual; L_i = k(x_i, x_i) +
    noise (the same for every i with a stationary kernel).

    Examples
    --------
    >>> import numpy as np, bcd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2)); y = np.sin(6 * X[:, 0])
    >>> problem = bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(0.3), noise=0.1)
    >>> result = bcd.solve(problem, rule="gbcd", block_size=50, update="exact", tol=1e-8)
    >>> result.converged
    True
    >>> K = problem.kernel(X) + 0.1 * np.eye(300)
    >>> bool(np.allclose(K @ result.x, y, atol=1e-7))
    True
    """

    structure = "kernel"
    capabilities = frozenset({"lipschitz", "hessian_bound", "bound_products", "sirt_diagonal",
                              "block_hessian", "hessian_entries", "quadratic"})

    def __init__(self, X, y, kernel, noise, precomputed=False, cache_size=0, n_threads=None):
        if not isinstance(kernel, Kernel):
            raise TypeError(f"kernel must be a bcd.gp kernel (SquaredExponential, Matern, "
                            f"Periodic, LocallyPeriodic, Hamming, HistogramIntersection or "
                            f"their sums and products), got {type(kernel).__name__}.")
        self.dtype = result_dtype(getattr(X, "dtype", np.float64))
        X = _check_inputs(X, "X")
        n = X.shape[0]
        y = check_vector(y, "y")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows.")
        kernel._check_dim(X.shape[1])
        diag = kernel.diag(X)           # k(x_i, x_i); constant for stationary kernels
        k0 = float(diag.max())
        if isinstance(noise, bool) or not np.isscalar(noise) or not np.isreal(noise):
            raise TypeError(f"noise must be a positive real number, got {noise!r}.")
        noise = float(noise)
        if not (np.isfinite(noise) and noise > 0 and noise >= MIN_RELATIVE_NOISE * k0):
            raise ValueError(f"noise must be positive, finite and at least "
                             f"{MIN_RELATIVE_NOISE:g} times the signal variance k(x, x) = "
                             f"{k0:g} (the largest over the inputs), got {noise!r}; with less, "
                             f"K + noise I is numerically singular (exactly so with duplicate "
                             f"inputs).")
        if isinstance(cache_size, bool) or not isinstance(cache_size, numbers.Real) \
                or not (np.isfinite(cache_size) and 0 <= cache_size <= 2.0**62):
            raise ValueError(f"cache_size must be a non-negative number of bytes, at most "
                             f"2**62, got {cache_size!r}.")
        if n_threads is not None and (not isinstance(n_threads, (int, np.integer))
                                      or isinstance(n_threads, bool) or n_threads < 1):
            raise ValueError(f"n_threads must be a positive integer or None, got {n_threads!r}.")
        self.X = X
        self.y = y
        self.kernel = kernel
        self.noise = noise
        self.precomputed = bool(precomputed)
        self.cache_size = cache_size
        self.n_threads = resolve_threads(n_threads, max_threads())
        self.n_coordinates = n
        self._set_lipschitz(diag + noise)
        self._eval = kernel.evaluator(X, n_threads=self.n_threads)
        self._set_penalty(None)

    _TRANSIENT = Problem._TRANSIENT + ("_eval",)

    def _restore(self):
        self._eval = self.kernel.evaluator(self.X, n_threads=self.n_threads)

    def kernel_entry_rate(self):
        """Kernel entries per second this problem's evaluator computes on
        this machine: one block of at most 1000 x 1000 entries on the first
        inputs (of a quarter of the points of a problem of fewer than 4000,
        at least 256), timed once per process for each kernel kind (the
        kernel without its hyperparameter values), input dimension, thread
        count and block, and cached.

        Examples
        --------
        >>> import numpy as np, bcd
        >>> X = np.random.default_rng(0).uniform(size=(200, 3))
        >>> problem = bcd.GaussianProcess(X, X[:, 0], bcd.gp.SquaredExponential(1.0), 0.1)
        >>> problem.kernel_entry_rate() > 0
        True
        """
        kind = re.sub(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", "#", repr(self.kernel))
        m = min(self.n_coordinates, ENTRY_PROBE,
                max(ENTRY_PROBE_MIN, self.n_coordinates // 4))
        key = (kind, self.X.shape[1], self.n_threads, m)
        with _ENTRY_LOCK:
            rate = _ENTRY_RATES.get(key)
            if rate is None:
                ev = self.kernel.evaluator(self.X[:m], n_threads=self.n_threads)
                rate = calibration.entry_rate(ev.matrix, m * m)
                _ENTRY_RATES[key] = rate
        return rate

    def block_seconds(self, block_size, candidates):
        """Seconds GBCD takes to choose one block of ``block_size``
        coordinates with ``candidates`` candidates per added coordinate
        (rule "gbcd"), with this problem's kernel and threads: one block
        chosen on at most ``SELECT_PROBE`` of the points, timed once per
        process (the fastest of three after a warm-up) for each kernel
        kind, input dimension, thread count, block size and candidate
        count, and cached.  The choice evaluates rows of
        K against the block only, so its time does not grow with n.

        Examples
        --------
        >>> import numpy as np, bcd
        >>> X = np.random.default_rng(0).uniform(size=(300, 3))
        >>> problem = bcd.GaussianProcess(X, X[:, 0], bcd.gp.SquaredExponential(1.0), 0.1)
        >>> problem.block_seconds(50, 20) > 0
        True
        """
        from ..core import assemble
        kind = re.sub(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", "#", repr(self.kernel))
        block_size = int(min(block_size, self.n_coordinates))
        key = (kind, self.X.shape[1], self.n_threads, block_size, int(candidates))
        with _ENTRY_LOCK:
            seconds = _BLOCK_SECONDS.get(key)
            if seconds is None:
                m = min(self.n_coordinates, max(SELECT_PROBE, 4 * block_size))
                sub = GaussianProcess(self.X[:m], self.y[:m], self.kernel, self.noise,
                                      n_threads=self.n_threads)
                parts = assemble(sub, "gbcd", "variable", "exact", block_size,
                                 np.random.RandomState(0), None, mi_candidates=int(candidates))
                # the fastest of three: the probe is short, and load only slows it
                seconds = calibration.seconds_of(lambda: parts.selector.draw(parts.state, 1),
                                                 repeats=3, best=True)
                _BLOCK_SECONDS[key] = seconds
        return seconds

    def kernel_matrix(self):
        """The dense kernel matrix K (n x n, Fortran-ordered, a new array).

        O(n^2) memory: for small systems, exact factorizations and checks.

        Examples
        --------
        >>> import numpy as np, bcd
        >>> X = np.array([[0.0], [1.0]])
        >>> problem = bcd.GaussianProcess(X, [1.0, 0.0], bcd.gp.SquaredExponential(1.0), 0.1)
        >>> bool(np.allclose(problem.kernel_matrix(), [[1.0, np.exp(-0.5)], [np.exp(-0.5), 1.0]]))
        True
        """
        return self._eval.matrix()

    def kernel_product(self, W, columns=None):
        """``K @ W`` without forming K: W of shape (n,) or (n, k); with
        ``columns``, ``K[:, columns] @ W`` for W of shape (len(columns),).

        Examples
        --------
        >>> import numpy as np, bcd
        >>> X = np.array([[0.0], [1.0], [3.0]])
        >>> problem = bcd.GaussianProcess(X, np.zeros(3), bcd.gp.SquaredExponential(1.0), 0.1)
        >>> K = problem.kernel_matrix()
        >>> bool(np.allclose(problem.kernel_product(np.ones(3)), K.sum(axis=1)))
        True
        >>> bool(np.allclose(problem.kernel_product([2.0], columns=[1]), 2 * K[:, 1]))
        True
        """
        W = np.asarray(W, dtype=np.float64)
        if columns is not None:
            if W.ndim != 1:
                raise ValueError(f"W must be 1-D with columns, got shape {W.shape}.")
            return self._eval.matvec(W, columns)
        if W.ndim not in (1, 2) or W.shape[0] != self.n_coordinates:
            raise ValueError(f"W must have shape ({self.n_coordinates},) or "
                             f"({self.n_coordinates}, k), got {W.shape}.")
        return self._eval.matvec(W) if W.ndim == 1 else self._eval.matmat(W)

    def _system_matrix(self):
        """The dense K + noise I (precomputed mode), cached."""
        cache = self.__dict__
        if "_dense" not in cache:
            K = np.asfortranarray(self.kernel_matrix())
            K[np.diag_indices_from(K)] += self.noise
            cache["_dense"] = K
        return cache["_dense"]

    def compile(self, tracking, max_block):
        if self.precomputed:
            # the dense quadratic 1/2 a'(K + noise I)a - y'a, compiled as such
            # (with this problem's constants L_i, computed from the kernel's diagonal)
            dense = Quadratic(self._system_matrix(), self.y)
            dense._set_lipschitz(self.lipschitz)
            return dense.compile(True, max_block)
        columns = int(self.cache_size // (8 * self.n_coordinates))
        return CyGaussianProcess(self._eval, self.y, self.noise, self.lipschitz, int(max_block), columns)

    def matvec(self, alpha):
        """(K + noise I) alpha, without forming K."""
        alpha = check_vector(alpha, "alpha", self.n_coordinates)
        return self._eval.matvec(alpha) + self.noise * alpha

    def smooth_objective(self, alpha):
        """f(alpha) = alpha'(K + noise I)alpha / 2 - y'alpha."""
        alpha = check_vector(alpha, "alpha", self.n_coordinates)
        return 0.5 * float(alpha @ self.matvec(alpha)) - float(self.y @ alpha)

    def gradient(self, alpha):
        """(K + noise I) alpha - y, the residual of the linear system."""
        return self.matvec(alpha) - self.y

    def sirt_diagonal(self):
        # every supported kernel is positive, so |K| 1 = K 1
        return self._eval.matvec(np.ones(self.n_coordinates)) + self.noise

    def iteration_costs(self, block_size, tracking, dense=True):
        n, d = self.X.shape
        per_entry = d + 20.0
        solve = block_size ** 3 / 3.0 if dense else 0.0
        return n * block_size * per_entry + solve, 4.0 * n
