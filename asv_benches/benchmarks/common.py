"""Shared data and helpers for the benchmarks and the comparison rows.

The paper's 1000 x 10000 datasets take about half a second to generate, so
they are built lazily and kept for the lifetime of the benchmark process.
Datasets A and B are least squares and binary logistic regression; C
(1000 x 1000, 50 classes) is multinomial logistic regression with a ridge
penalty ``MULTINOMIAL_L2``.

The comparison rows of ``asv_benches/compare.py`` (defined in the area
modules) share the ``Row`` record, the timing and formatting helpers, the
tolerance search ``at_loosest_tolerance`` and the asv base class
``RowTrack``, which reports a row's ratio as an asv ``track_`` benchmark.
"""
import abc
import dataclasses
import functools
import importlib
import inspect
import re
import time
import warnings

import numpy as np
import scipy.sparse as sp

import bcd

RULES = ["cyclic", "random", "lipschitz", "gs"]
GREEDY_RULES = ["gsl", "gsd", "gsq"]    # the rules scored with curvature information
BLOCKS = ["fixed", "variable"]
DATASETS = ["A", "B"]
#: block updates; "gradient-estimate" is the gradient update with lipschitz="estimate"
UPDATES = ["gradient", "gradient-estimate", "linesearch", "matrix", "newton", "lbfgs", "exact"]
MULTINOMIAL_L2 = 1.0   # ridge penalty of the multinomial problem on dataset C
BLOCK_SIZE = 5
PARTITION = "sort"     # partition used with fixed blocks
SEED = 0               # random_state of every solve
NO_CHECKS = 10**9      # check_every value that tests only the start and the end


def quiet():
    """Silence the warning issued when a solve stops on ``max_iter``."""
    warnings.simplefilter("ignore", bcd.ConvergenceWarning)


@functools.lru_cache(maxsize=None)
def paper_dataset(name):
    """``(A, target)`` of the paper's dataset ``name`` at full size."""
    return bcd.datasets.make_paper_dataset(name, random_state=1)


@functools.lru_cache(maxsize=None)
def sparse_square(n=20000, nnz_per_column=10, seed=0):
    """``n x n`` CSC matrix with exactly ``nnz_per_column`` standard normal
    entries per column in distinct random rows, and a standard normal ``b``."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.choice(n, nnz_per_column, replace=False) for _ in range(n)])
    cols = np.repeat(np.arange(n), nnz_per_column)
    vals = rng.standard_normal(n * nnz_per_column)
    A = sp.csc_matrix((vals, (rows, cols)), shape=(n, n))
    b = rng.standard_normal(n)
    return A, b


def make_problem(name):
    """The problem of dataset ``name``: least squares for A, logistic for B,
    multinomial logistic regression (50 classes, ``l2 = MULTINOMIAL_L2``) for C."""
    A, target = paper_dataset(name)
    if name == "A":
        return bcd.LeastSquares(A, target)
    if name == "C":
        return bcd.Multinomial(A, target, l2=MULTINOMIAL_L2)
    return bcd.Logistic(A, target)


def objective(name, x):
    """Objective of dataset ``name`` at ``x``, computed with NumPy/SciPy."""
    A, target = paper_dataset(name)
    if name == "C":
        W = np.asarray(x).reshape(A.shape[1], -1)
        S = np.asarray(A @ W)
        lse = np.logaddexp.reduce(S, axis=1)
        return float(np.sum(lse - S[np.arange(S.shape[0]), target])) \
            + 0.5 * MULTINOMIAL_L2 * float(np.sum(W * W))
    z = A @ x
    if name == "A":
        r = z - target
        return 0.5 * float(r @ r)
    return float(np.sum(np.logaddexp(0.0, -target * z)))


@functools.lru_cache(maxsize=None)
def optimal_value(name):
    """Optimal objective value f* of dataset ``name``.

    A: the matrix is underdetermined with full row rank, so the least-squares
    residual can be driven to zero; f* is evaluated at a tight LSQR solution
    (it is zero up to rounding).  B: the data are linearly separable (more
    features than samples, full row rank), so the infimum of the logistic
    loss is 0.
    """
    if name == "A":
        from scipy.sparse.linalg import lsqr

        A, b = paper_dataset(name)
        x = lsqr(A, b, atol=1e-14, btol=1e-14, iter_lim=100 * A.shape[1])[0]
        return objective(name, x)
    return 0.0


def solve_options(rule, blocks):
    """Keyword arguments of ``bcd.solve`` for a rule x blocks combination."""
    options = dict(rule=rule, blocks=blocks, block_size=BLOCK_SIZE, random_state=SEED)
    if blocks == "fixed":
        options["partition"] = PARTITION
    return options


def update_options(update):
    """Keyword arguments of ``bcd.solve`` selecting the block update ``update``
    (one of ``UPDATES``)."""
    if update == "gradient-estimate":
        return dict(update="gradient", lipschitz="estimate")
    return dict(update=update)


def warm_up(problem, options):
    """One iteration, so that the caches a rule keeps on the problem (the
    row view of A, the SIRT diagonal of rule "gsl" with variable blocks) are
    built before anything is measured."""
    bcd.solve(problem, max_iter=1, tol=0.0, check_every=NO_CHECKS, **options)


class IterationTracks(abc.ABC):
    """``track_`` benchmarks shared by classes whose ``setup`` sets
    ``self.problem`` and ``self.options`` and whose first parameter is the
    dataset: the time per iteration of the compiled loop and f(x_500) - f*.
    (Abstract, so that asv does not collect it as a benchmark class.)"""

    timed_iterations = 500

    @abc.abstractmethod
    def setup(self, dataset, *params):
        """Set ``self.problem`` and ``self.options``."""

    def track_seconds_per_iteration(self, dataset, *params):
        """Time per iteration of the compiled loop (``Result.iteration_time / n_iter``)."""
        result = bcd.solve(self.problem, max_iter=self.timed_iterations, tol=0.0,
                           check_every=NO_CHECKS, **self.options)
        return result.iteration_time / result.n_iter

    track_seconds_per_iteration.unit = "seconds"

    def track_suboptimality_500(self, dataset, *params):
        """f(x_500) - f*, evaluated with NumPy/SciPy."""
        result = bcd.solve(self.problem, max_iter=500, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return objective(dataset, result.x) - optimal_value(dataset)

    track_suboptimality_500.unit = "objective gap"


# --------------------------------------------------------------------------- asv names

_BENCHMARK_METHOD = re.compile(r"(time|timeraw|track|peakmem|mem)_")


def keep_benchmark_names(module):
    """Class decorator: keep the asv names ``module.Class.method`` under which
    a class's benchmarks were recorded when it was defined in ``module``.

    asv keys results by that name, so a class that changes modules would
    otherwise start a new series.  Each benchmark method (inherited ones
    included) is replaced in the class by a wrapper carrying the old name in
    ``benchmark_name``; asv reads the source of the wrapped method, so the
    benchmark versions do not change either.  Select these benchmarks by
    class name (``asv run --bench Iterations``), not by their new module.
    """
    def rename(cls, attr, func):
        @functools.wraps(func)
        def method(self, *args):
            return func(self, *args)

        method.benchmark_name = f"{module}.{cls.__name__}.{attr}"
        return method

    def decorate(cls):
        for attr, func in inspect.getmembers(cls, inspect.isfunction):
            if _BENCHMARK_METHOD.match(attr):
                setattr(cls, attr, rename(cls, attr, func))
        return cls

    return decorate


# --------------------------------------------------------------------------- comparison rows

def median(values):
    return float(np.median(np.asarray(values, dtype=float)))


def fmt_time(seconds):
    if seconds >= 1.0:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} us"
    return f"{seconds * 1e9:.3g} ns"


def format_options(options):
    """``bcd.solve`` keyword arguments as ``key=value`` pairs (seed left out)."""
    return ", ".join(f"{k}={v!r}" for k, v in options.items() if k != "random_state")


@dataclasses.dataclass
class Row:
    """A line of the comparison table.  ``figure`` is the number the row is
    about (the ratio, or seconds for a fixed cost): what asv tracks."""

    label: str
    bcd_value: str
    reference: str
    value: str
    target: str
    passed: bool
    note: str = ""
    figure: float = float("nan")


def ratio_row(label, ours, theirs, ratio, target, digits=2, note="", passed=True):
    """Row of ``ratio`` with its target, e.g. ``"<= 1.0x"`` or ``">= 20x"``
    (the row passes if ``passed`` and the ratio meets it); ``ours`` and
    ``theirs`` are times in seconds, or ``theirs`` a ready string."""
    op, bound = target.split()
    bound = float(bound.rstrip("x"))
    met = ratio <= bound if op == "<=" else ratio >= bound
    reference = theirs if isinstance(theirs, str) else fmt_time(theirs)
    return Row(label, fmt_time(ours), reference, f"{ratio:.{digits}f}x", target,
               bool(passed and met), note, ratio)


def run_iterations(problem, **options):
    """``bcd.solve`` with the stopping test disabled (unless ``options`` set
    ``tol`` or ``check_every``): exactly ``max_iter`` iterations."""
    options.setdefault("tol", 0.0)
    options.setdefault("check_every", NO_CHECKS)
    return bcd.solve(problem, **options)


def timed(fn, *args, ignore=None, **kwargs):
    """``(seconds, fn(*args, **kwargs))``; warnings of the category ``ignore``
    (e.g. ``Warning``: all) are silenced during the call."""
    if ignore is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ignore)
            return timed(fn, *args, **kwargs)
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


@dataclasses.dataclass
class Tuned:
    """A solver timed at the loosest tolerance ``tol`` at which its solution
    is good enough (``reached``), or else at the one of its best solution.
    ``error`` is that solution's error and ``payload`` what the attempt
    returned with it."""

    name: str
    tol: float
    error: float
    seconds: float
    reached: bool
    payload: object = None

    def describe(self, error, good, extra=""):
        """``name tol=...: time, <error>`` with a remark if ``good`` was not reached."""
        state = "" if self.reached else f" (never <= {good:g}; its best)"
        return f"{self.name} tol={self.tol:.0e}: {fmt_time(self.seconds)}, {error}{state}{extra}"


def at_loosest_tolerance(name, tols, attempt, good, fit_seconds, repeats):
    """Tighten a solver's tolerance until its solution is good enough, then time it.

    ``attempt(tol)`` runs the solver and returns ``(error, payload)``.  The
    tolerances ``tols`` (loosest first) are tried until ``error <= good`` or
    three in a row bring no improvement; the tolerance of the smallest error
    is then timed ``repeats`` times by ``fit_seconds(tol)`` (median).
    """
    best = None
    stale = 0
    for tol in tols:
        error, payload = attempt(tol)
        if best is None or error < best[1]:
            best, stale = (tol, error, payload), 0
        else:
            stale += 1
        if error <= good or stale == 3:
            break
    tol, error, payload = best
    seconds = median([fit_seconds(tol) for _ in range(repeats)])
    return Tuned(name, tol, error, seconds, error <= good, payload)


def limit_blas(threads):
    """Limit BLAS to ``threads`` threads for the rest of the process (with
    threadpoolctl, when installed); returns the limiter or None."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=threads, user_api="blas")


def require(module):
    """Import ``module``; raise NotImplementedError (asv's skip) if it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise NotImplementedError(f"{module} is not installed") from None


class RowTrack:
    """Base of the asv classes that report a comparison row's ``figure``.

    ``track_`` methods of subclasses call the row's function with
    ``repeats`` repeats (the ``--quick`` setting of compare.py).  The
    benchmark is skipped when a module of ``requires`` (a peer) is not
    installed.  BLAS is limited to one thread while it runs, as in
    compare.py (the algorithms compared are single-threaded), when
    threadpoolctl is available.
    """

    unit = "ratio"
    repeats = 3
    requires = ()
    timeout = 600

    def setup(self, *params):
        quiet()
        for module in self.requires:
            require(module)
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            self._blas_limits = None
        else:
            self._blas_limits = threadpool_limits(limits=1, user_api="blas")

    def teardown(self, *params):
        if self._blas_limits is not None:
            self._blas_limits.restore_original_limits()
