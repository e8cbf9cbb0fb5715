"""Smooth L2-regularized models on real data: ``bcd.solve(problem)`` with no
options against the fastest peer that reaches the same objective.

Every row solves one problem of bcd's summed form,
F(x) = sum_i s_i phi(a_i^T x) + l2/2 ||x||^2 (no intercept), in one process:

* L2-logistic regression, ridge regression (targets +-1) and the two linear
  SVMs (C = 1: l2 = 1) on the 20 Newsgroups autos/electronics tf-idf matrix
  (2000 x 29363, ``bench_text.text_dataset``; dmba data);
* multinomial logistic regression on NCI60 (64 x 6830 gene expression
  values, 14 cancer types; ISLP data), l2 = 1;
* Poisson regression on the hourly Bikeshare counts (8645 rows; ISLP data)
  with a one-hot design of month, hour, weather and weekday (47 columns),
  l2 = 1.

The reference F* of each row is a tight bcd solve cross-checked by every
peer: a solution more than ``RTOL`` (relatively) below it raises an
AssertionError.  bcd's default is timed as it is (its tolerance is
||grad F||_inf <= 1e-6, its error is shown); each peer is timed at the
loosest of its tolerances whose solution is within ``RTOL`` of F*
(``common.at_loosest_tolerance``).  Peers: scikit-learn (liblinear primal
and dual, lbfgs, newton-cg, newton-cholesky, sag, sparse_cg, lsqr), SciPy's
LSQR and glum, each where it solves the row's objective.

Run ``python -m asv_benches.smooth`` for the table; ``SmoothVsPeers``
reports each row's ratio to asv.
"""
import csv
import functools
import importlib.util
import os
import warnings

import numpy as np
import scipy.sparse as sp

import bcd

from .common import RowTrack, at_loosest_tolerance, fmt_time, median, ratio_row, timed

#: relative accuracy the peers must reach: (F - F*) / |F*|
RTOL = 1e-7
#: tolerances tried for the peers, loosest first
PEER_TOLS = tuple(10.0 ** -e for e in range(2, 15))
#: the ridge weight of every row (C = 1 in scikit-learn's terms)
L2 = 1.0


# --------------------------------------------------------------------------- data

def _islp_file(name):
    spec = importlib.util.find_spec("ISLP")
    if spec is None or spec.origin is None:
        raise ImportError("the multinomial and Poisson rows need the data of the ISLP package: "
                          "pip install --no-deps ISLP")
    return os.path.join(os.path.dirname(spec.origin), "data", name)


@functools.lru_cache(maxsize=None)
def nci60():
    """``(A, y)``: NCI60's 64 x 6830 expression matrix and its 14 labels (0..13)."""
    A = np.load(_islp_file("NCI60data.npy"))
    with open(_islp_file("NCI60labs.csv"), newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    labels = [row[-1] for row in rows]
    names = sorted(set(labels))
    return np.asfortranarray(A, dtype=np.float64), np.array([names.index(v) for v in labels])


@functools.lru_cache(maxsize=None)
def bikeshare():
    """``(A, y)``: a one-hot design of month (12), hour (24), weather (4) and
    weekday (7), 8645 x 47, and the hourly counts of bikers."""
    with open(_islp_file("Bikeshare.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    columns = []
    for field in ("mnth", "hr", "weathersit", "weekday"):
        values = [row[field] for row in rows]
        for level in sorted(set(values)):
            columns.append([1.0 if v == level else 0.0 for v in values])
    A = np.asfortranarray(np.array(columns).T)
    y = np.array([float(row["bikers"]) for row in rows])
    return A, y


@functools.lru_cache(maxsize=None)
def newsgroups():
    from .bench_text import text_dataset
    return text_dataset()


# --------------------------------------------------------------------------- peers

def _sklearn_logistic(A, y, solver, dual=False):
    from sklearn.linear_model import LogisticRegression

    def fit(tol):
        return LogisticRegression(C=1.0 / L2, solver=solver, dual=dual, fit_intercept=False,
                                  tol=tol, max_iter=100000).fit(A, y).coef_.ravel()
    return fit


def _sklearn_svm(A, y, loss, dual):
    from sklearn.svm import LinearSVC

    def fit(tol):
        return LinearSVC(C=1.0 / L2, loss=loss, dual=dual, fit_intercept=False, tol=tol,
                         max_iter=1000000).fit(A, y).coef_.ravel()
    return fit


def _sklearn_ridge(A, b, solver):
    from sklearn.linear_model import Ridge

    def fit(tol):
        # scikit-learn's Ridge: ||b - Ax||^2 + alpha ||x||^2, twice bcd's objective
        return Ridge(alpha=L2, solver=solver, fit_intercept=False, tol=tol,
                     max_iter=100000).fit(A, b).coef_.ravel()
    return fit


def _scipy_lsqr(A, b):
    from scipy.sparse.linalg import lsqr

    def fit(tol):
        return lsqr(A, b, damp=np.sqrt(L2), atol=tol, btol=tol, iter_lim=100000)[0]
    return fit


def _sklearn_poisson(A, y, solver):
    from sklearn.linear_model import PoissonRegressor
    n = A.shape[0]

    def fit(tol):
        # 1/(2n) deviance + alpha/2 ||x||^2: bcd's objective / n up to a constant
        return PoissonRegressor(alpha=L2 / n, solver=solver, fit_intercept=False, tol=tol,
                                max_iter=100000).fit(A, y).coef_.ravel()
    return fit


def _glum_poisson(A, y):
    from glum import GeneralizedLinearRegressor
    n = A.shape[0]

    def fit(tol):
        # glum: 1/n sum deviance/2 + alpha/2 ||x||^2 with l1_ratio 0 (the same scaling)
        return GeneralizedLinearRegressor(family="poisson", alpha=L2 / n, l1_ratio=0.0,
                                          fit_intercept=False, gradient_tol=tol,
                                          max_iter=100000).fit(A, y).coef_.ravel()
    return fit


def _sklearn_multinomial(A, y, solver):
    from sklearn.linear_model import LogisticRegression

    def fit(tol):
        model = LogisticRegression(C=1.0 / L2, solver=solver, fit_intercept=False, tol=tol,
                                   max_iter=100000).fit(A, y)
        return model.coef_.T.ravel()
    return fit


def _has(module):
    return importlib.util.find_spec(module) is not None


# --------------------------------------------------------------------------- rows

def _rows():
    """name -> (problem builder, reference options, [(peer name, fit builder)])."""
    def text(build, peers):
        def make():
            A, y = newsgroups()
            return build(A, y)
        return make, peers

    rows = {
        "logistic, newsgroups tf-idf": text(
            lambda A, y: bcd.Logistic(A, y, l2=L2),
            [("liblinear dual", lambda A, y: _sklearn_logistic(A, y, "liblinear", True)),
             ("liblinear primal", lambda A, y: _sklearn_logistic(A, y, "liblinear")),
             ("lbfgs", lambda A, y: _sklearn_logistic(A, y, "lbfgs")),
             ("newton-cg", lambda A, y: _sklearn_logistic(A, y, "newton-cg"))]),
        "ridge, newsgroups tf-idf": text(
            lambda A, y: bcd.LeastSquares(A, y, l2=L2),
            [("scipy lsqr", lambda A, y: _scipy_lsqr(A, y)),
             ("sklearn sparse_cg", lambda A, y: _sklearn_ridge(A, y, "sparse_cg")),
             ("sklearn sag", lambda A, y: _sklearn_ridge(A, y, "sag"))]),
        "squared-hinge SVM, newsgroups tf-idf": text(
            lambda A, y: bcd.LinearSVM(A, y, l2=L2),
            [("liblinear dual", lambda A, y: _sklearn_svm(A, y, "squared_hinge", True)),
             ("liblinear primal", lambda A, y: _sklearn_svm(A, y, "squared_hinge", False))]),
        "hinge SVM, newsgroups tf-idf": text(
            lambda A, y: bcd.LinearSVM(A, y, loss="hinge", l2=L2),
            [("liblinear dual", lambda A, y: _sklearn_svm(A, y, "hinge", True))]),
        "multinomial, NCI60": (
            lambda: bcd.Multinomial(*nci60(), l2=L2),
            [("lbfgs", lambda A, y: _sklearn_multinomial(A, y, "lbfgs")),
             ("newton-cg", lambda A, y: _sklearn_multinomial(A, y, "newton-cg"))]),
        "Poisson, Bikeshare": (
            lambda: bcd.Poisson(*bikeshare(), l2=L2),
            [("newton-cholesky", lambda A, y: _sklearn_poisson(A, y, "newton-cholesky")),
             ("lbfgs", lambda A, y: _sklearn_poisson(A, y, "lbfgs")),
             ("glum", lambda A, y: _glum_poisson(A, y))]),
    }
    return rows


ROWS = tuple(_rows())

#: the modules a row's data need
_DATA_NEEDS = {"newsgroups": "dmba", "NCI60": "ISLP", "Bikeshare": "ISLP"}


def _data_of(problem):
    A = problem.A
    if isinstance(problem, bcd.Multinomial):
        return A, problem.classes[problem.y]
    if isinstance(problem, bcd.LeastSquares):
        return A, problem.b
    if isinstance(problem, bcd.Poisson):
        return A, problem.y
    return A, problem.y


@functools.lru_cache(maxsize=None)
def reference(name):
    """F* of row ``name``: bcd at tol 1e-11 relative to ||grad F(0)||_inf."""
    make, _ = _rows()[name]
    problem = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        result = bcd.solve(problem, tol=1e-11, tol_mode="relative", max_iter=100000)
    return problem.objective(result.x)


def compare_row(name, repeats=3):
    """``(row, details)``: bcd's default time / the fastest peer's time at
    (F - F*) / |F*| <= RTOL."""
    make, peers = _rows()[name]
    f_star = reference(name)

    def error(problem, x):
        err = (problem.objective(x) - f_star) / abs(f_star)
        assert err >= -RTOL, f"{name}: a solution {err:.2e} below the reference F*"
        return err

    def run_bcd():
        problem = make()
        return problem, bcd.solve(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        times, out = [], None
        for _ in range(repeats):
            seconds, out = timed(run_bcd)
            times.append(seconds)
    problem, result = out
    ours = median(times)
    ours_err = error(problem, result.x)
    A, y = _data_of(problem)
    tuned = []
    for peer, build in peers:
        if peer == "glum" and not _has("glum"):
            continue
        fit = build(A, y)
        tuned.append(at_loosest_tolerance(
            peer, PEER_TOLS, lambda tol: (error(problem, fit(tol)), None), RTOL,
            lambda tol: timed(fit, tol, ignore=Warning)[0], repeats))
    good = [t for t in tuned if t.reached] or tuned
    best = min(good, key=lambda t: t.seconds)
    options = bcd.core.auto.configuration(result.options)
    note = (f"bcd {result.status}, error {ours_err:.1e}, {options}; peers: "
            + "; ".join(t.describe(f"error {t.error:.1e}", RTOL) for t in tuned))
    row = ratio_row(f"{name} (l2={L2:g})", ours, f"{best.name} {fmt_time(best.seconds)}",
                    ours / best.seconds, "<= 1.0x", note=note,
                    passed=result.converged and ours_err <= RTOL)
    return row


def available(name):
    """Whether the data of row ``name`` are installed."""
    for key, module in _DATA_NEEDS.items():
        if key in name and not _has(module):
            return False
    return _has("sklearn")


class SmoothVsPeers(RowTrack):
    """bcd's default / the fastest peer's time to (F - F*) / |F*| <= 1e-7 on
    the real-data rows of the smooth problems (target <= 1)."""

    params = [list(ROWS)]
    param_names = ["row"]
    requires = ("sklearn",)
    timeout = 900

    def setup(self, name):
        if not available(name):
            raise NotImplementedError(f"the data of {name!r} are not installed")
        super().setup(name)

    def track_time_ratio(self, name):
        return compare_row(name, self.repeats).figure


# --------------------------------------------------------------------------- asv timings

def _synthetic(name):
    """The synthetic smooth problems of the formulation timings."""
    from .common import paper_dataset
    if name == "logistic B":
        A, y = paper_dataset("B")
        return bcd.Logistic(A, y, l2=L2)
    if name == "ridge A":
        A, b = paper_dataset("A")
        return bcd.LeastSquares(A, b, l2=L2)
    if name == "squared-hinge SVM B":
        A, y = paper_dataset("B")
        return bcd.LinearSVM(A, y, l2=L2)
    rs = np.random.RandomState(0)
    A = sp.random(5000, 2000, density=0.01, random_state=0, format="csc")
    y = rs.poisson(np.exp(A @ (0.3 * rs.randn(2000)))).astype(float)
    return bcd.Poisson(A, y, l2=L2)


class TimeFormulations:
    """``bcd.solve`` to its default tolerance on the smooth problems, with
    the automatic choice and with each formulation that applies."""

    params = [["logistic B", "ridge A", "squared-hinge SVM B", "Poisson 5000 x 2000"],
              ["auto", "dual", "newton"]]
    param_names = ["problem", "formulation"]
    timeout = 300

    def setup(self, name, formulation):
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        self.problem = _synthetic(name)
        if formulation == "dual" and "dual" not in self.problem.capabilities:
            raise NotImplementedError("no dual")
        bcd.solve(self.problem, formulation=formulation, max_iter=1)       # warm caches

    def time_solve(self, name, formulation):
        bcd.solve(self.problem, formulation=formulation)

    def track_converged(self, name, formulation):
        return int(bcd.solve(self.problem, formulation=formulation).converged)
