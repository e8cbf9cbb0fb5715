"""The scikit-learn estimators of ``bcd.linear_model`` against scikit-learn's
own, on the 20 Newsgroups tf-idf matrix of ``bench_text`` (2000 posts of
rec.autos and sci.electronics, 2000 x 29363, 344998 non-zeros; labels +1 and
-1), both with ``fit_intercept=True`` and their default tolerances:

* n. ``bcd.linear_model.Lasso(alpha)`` against ``sklearn.linear_model.Lasso(alpha)``,
  regressing the labels on the tf-idf matrix, alpha = alpha_max / 20
  (alpha_max = ||A^T (y - ybar)||_inf / n_samples, the smallest alpha whose
  solution is 0; 61 non-zero coefficients).
* o. ``bcd.linear_model.LogisticRegression(penalty="l1", C)`` (solver
  defaults) against ``sklearn.linear_model.LogisticRegression`` with the L1
  penalty and ``solver="liblinear"``, and with ``solver="saga"`` (in the
  note), 1 / C = lambda_max / 50 (lambda_max = ||A^T (y01 - mean)||_inf, the
  smallest 1 / C whose solution is 0; 19 non-zero coefficients).  liblinear
  penalizes its intercept like a coefficient; it runs with
  ``intercept_scaling=100`` (scikit-learn's way to weaken that penalty, to
  |b| / 100), whose minimizer is within 1e-8 F* of the optimum of the
  unpenalized intercept (measured at liblinear tol=1e-8: 8e-9 F*).  Both
  scikit-learn solvers get ``random_state=0``.

* q. ``bcd.linear_model.Ridge(alpha=1)`` against
  ``sklearn.linear_model.Ridge(alpha=1)`` (its default solver "auto":
  Cholesky on dense data, conjugate gradients on sparse data), on a dense
  20000 x 200 Gaussian design and on the paper's dataset A (sparse
  1000 x 10000), with an intercept.
* r. ``bcd.linear_model.PoissonRegressor(alpha)`` against scikit-learn's
  ``PoissonRegressor`` with its default solver "lbfgs" and with
  "newton-cholesky", and against glum's ``GeneralizedLinearRegressor(
  family="poisson", alpha, l1_ratio=0)`` (the same objective: glum's is
  ``1/(2 sum s) deviance + alpha/2 ||w||^2`` as well), on a dense
  5000 x 200 Gaussian design with Poisson counts (alpha = 1e-3) and on
  ISLP's Bikeshare data (8645 hourly counts of bikers; month, hour and
  weather one-hot encoded, working day and temperature: 39 columns; alpha
  = 1e-4), with an intercept.  glum and the Bikeshare file are optional
  (``pip install glum``, ``pip install --no-deps ISLP``); without them the
  rows are left out.

* s. ``bcd.linear_model.LinearSVC()`` against scikit-learn's ``LinearSVC()``
  (liblinear), both with their default parameters (C = 1, the squared
  hinge, the L2 penalty, the penalized intercept of liblinear, dual="auto":
  through the dual on the text data, in the primal on the dense design),
  on the newsgroups tf-idf matrix and on a dense ``make_classification(
  5000, 200)`` (random_state=0).  Both start from their default tol=1e-4
  and tighten it (1e-4, 1e-5, ..., 1e-14) until their objective is within
  ``SVC_RTOL`` = 1e-7 of the optimum F*, relatively; F* is the smaller
  objective of bcd at tol=1e-12 and liblinear at tol=1e-10.  The notes give
  both fits' (F - F*) / F* and times at the default tol.

For rows q and r, the peers run at their default tolerances, and bcd at the
loosest of the tolerances 1e-4, 1e-6, ..., 1e-14 whose objective is as
close to the optimum F* as the peer's (``F_bcd - F* <= F_peer - F* + 1e-12
F*``, the slack being rounding); a row whose bcd fit never gets there is a
MISS.  F* is the objective of a direct solve for ridge (the normal
equations, or their n x n dual form for dataset A) and the best of
scikit-learn's newton-cholesky and bcd at tol=1e-12 for Poisson.  The
notes give every fit's (F - F*) / F* and bcd's time at its default tol.

What is measured is the time of ``fit`` (median of the repeats after one
untimed fit), input conversion and the intercept column included, on the
same CSC matrix.  Both fits must reach the same objective (scikit-learn's
scaling, evaluated with NumPy/SciPy): for the Lasso within ``tol *
||y - ybar||^2 / n`` (1e-4 times the variance of y), the bound that
scikit-learn's own stopping test, a duality gap below it, guarantees; for
the logistic regression within ``LOGISTIC_RTOL`` of the optimum, relatively.
The objective difference and each fit's distance to the optimum F* (a fit of
``bcd.linear_model`` at tol=1e-10) are reported.  Target: bcd / scikit-learn
<= 1.0.  The ``RowTrack`` classes report the ratios to asv
(``EstimatorLassoVsSklearn``, ``EstimatorLogisticVsSklearn``), skipped when
scikit-learn or the dmba data are missing.
"""
import contextlib
import functools
import importlib.util
import inspect
import os
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.special import xlogy

from .bench_text import _describe_data, require_text_data, text_dataset
from .common import (RowTrack, at_loosest_tolerance, fmt_time, median, paper_dataset,
                     ratio_row, require, timed)

#: row n: alpha = alpha_max / LASSO_FRACTION
LASSO_FRACTION = 20
#: row o: 1 / C = lambda_max / LOGISTIC_FRACTION
LOGISTIC_FRACTION = 50
#: row o: liblinear's intercept_scaling (its penalty on the intercept is |b| / this)
LIBLINEAR_INTERCEPT_SCALING = 100.0
#: row o: largest (F_bcd - F_liblinear) / F* and distance of bcd's fit to F*
LOGISTIC_RTOL = 1e-4
#: the estimators' default tolerance (both libraries), in row n's objective bound
DEFAULT_TOL = 1e-4
#: the tolerance of the reference fits giving F*
REFERENCE_TOL = 1e-10


# --------------------------------------------------------------------------- objectives

def lasso_alpha_max(A, y):
    """||A^T (y - ybar)||_inf / n: the smallest alpha with the solution 0."""
    return float(np.max(np.abs(A.T @ (y - y.mean())))) / A.shape[0]


def lasso_objective(A, y, coef, intercept, alpha):
    """scikit-learn's Lasso objective 1/(2n) ||y - A w - b||^2 + alpha ||w||_1."""
    r = y - A @ np.asarray(coef, dtype=float).ravel() - float(intercept)
    return 0.5 * float(r @ r) / A.shape[0] + alpha * float(np.abs(coef).sum())


def logistic_lambda_max(A, y):
    """||A^T (y01 - mean(y01))||_inf: the smallest 1 / C with the solution 0
    (the intercept free)."""
    y01 = (y > 0).astype(float)
    return float(np.max(np.abs(A.T @ (y01 - y01.mean()))))


def logistic_objective(A, y, coef, intercept, C):
    """scikit-learn's objective C sum_i log(1 + exp(-y_i (a_i.w + b))) + ||w||_1
    (labels +1 / -1)."""
    z = A @ np.asarray(coef, dtype=float).ravel() + float(np.ravel(intercept)[0])
    return C * float(np.sum(np.logaddexp(0.0, -y * z))) + float(np.abs(coef).sum())


def _sklearn_l1_logistic(**kwargs):
    """scikit-learn's L1 logistic regression across its API versions (the
    ``penalty`` argument is deprecated from 1.8 in favour of ``l1_ratio``)."""
    from sklearn.linear_model import LogisticRegression

    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        return LogisticRegression(l1_ratio=1.0, **kwargs)
    return LogisticRegression(penalty="l1", **kwargs)


def _fit_seconds(make, A, y, repeats):
    """``(median seconds, fitted model)`` of ``make().fit(A, y)`` after one
    untimed fit; warnings (convergence, deprecation) are silenced."""
    model = timed(lambda: make().fit(A, y), ignore=Warning)[1]
    seconds = median([timed(lambda: make().fit(A, y), ignore=Warning)[0]
                      for _ in range(repeats)])
    return seconds, model


# --------------------------------------------------------------------------- n. Lasso

@functools.lru_cache(maxsize=None)
def lasso_reference(fraction=LASSO_FRACTION):
    """``(alpha, F*)``: bcd's Lasso at tol=1e-10 (duality gap <= 1e-10 var(y))."""
    from bcd.linear_model import Lasso

    A, y = text_dataset()
    alpha = lasso_alpha_max(A, y) / fraction
    model = Lasso(alpha=alpha, tol=REFERENCE_TOL, max_iter=100000).fit(A, y)
    return alpha, lasso_objective(A, y, model.coef_, model.intercept_, alpha)


def compare_lasso_estimator(repeats, fraction=LASSO_FRACTION):
    """Row n: ``bcd.linear_model.Lasso`` / ``sklearn.linear_model.Lasso``
    fit time on the newsgroups tf-idf matrix, alpha = alpha_max / 20,
    fit_intercept=True, default tolerances; both objectives within
    1e-4 ||y - ybar||^2 / n of each other and of F*."""
    from sklearn.linear_model import Lasso as SkLasso

    from bcd.linear_model import Lasso

    A, y = text_dataset()
    alpha, f_star = lasso_reference(fraction)
    bound = DEFAULT_TOL * float(np.sum((y - y.mean()) ** 2)) / A.shape[0]
    ours_s, ours = _fit_seconds(lambda: Lasso(alpha=alpha), A, y, repeats)
    ref_s, ref = _fit_seconds(lambda: SkLasso(alpha=alpha), A, y, repeats)
    f_ours = lasso_objective(A, y, ours.coef_, ours.intercept_, alpha)
    f_ref = lasso_objective(A, y, ref.coef_, ref.intercept_, alpha)
    same = abs(f_ours - f_ref) <= bound and f_ours - f_star <= bound and f_ref - f_star <= bound
    note = (f"{_describe_data(A)}; alpha = alpha_max/{fraction} = {alpha:.6g}, "
            f"fit_intercept=True, default tol (1e-4) of both; F* = {f_star!r} (bcd tol=1e-10); "
            f"F_bcd - F_sklearn = {f_ours - f_ref:.2e} (allowed {bound:.2e} = 1e-4 "
            f"||y - ybar||^2 / n), F_bcd - F* = {f_ours - f_star:.2e}, F_sklearn - F* = "
            f"{f_ref - f_star:.2e}; non-zeros {np.count_nonzero(ours.coef_)} (bcd), "
            f"{np.count_nonzero(ref.coef_)} (sklearn); bcd {ours.n_iter_} coordinate "
            f"updates, dual gap {ours.dual_gap_:.2e}; sklearn {ref.n_iter_} epochs, dual gap "
            f"{float(ref.dual_gap_):.2e}")
    return ratio_row(f"n. Lasso estimator news, alpha_max/{fraction}: bcd / sklearn",
                     ours_s, f"{fmt_time(ref_s)} sklearn Lasso", ours_s / ref_s, "<= 1.0x",
                     note=note, passed=same)


# --------------------------------------------------------------------------- o. L1-logistic

@functools.lru_cache(maxsize=None)
def logistic_reference(fraction=LOGISTIC_FRACTION):
    """``(C, F*)``: bcd's L1 logistic regression at tol=1e-10."""
    from bcd.linear_model import LogisticRegression

    A, y = text_dataset()
    C = fraction / logistic_lambda_max(A, y)
    model = LogisticRegression(penalty="l1", C=C, tol=REFERENCE_TOL, max_iter=100000).fit(A, y)
    return C, logistic_objective(A, y, model.coef_, model.intercept_, C)


def compare_logistic_estimator(repeats, fraction=LOGISTIC_FRACTION):
    """Row o: ``bcd.linear_model.LogisticRegression(penalty="l1")`` /
    scikit-learn's liblinear fit time on the newsgroups tf-idf matrix, 1/C =
    lambda_max / 50, fit_intercept=True, default tolerances (liblinear with
    intercept_scaling=100); both objectives within 1e-4 F* of each other and
    bcd's of F*; saga's time and objective in the note."""
    from bcd.linear_model import LogisticRegression

    A, y = text_dataset()
    C, f_star = logistic_reference(fraction)
    ours_s, ours = _fit_seconds(lambda: LogisticRegression(penalty="l1", C=C), A, y, repeats)
    lib_s, lib = _fit_seconds(lambda: _sklearn_l1_logistic(
        C=C, solver="liblinear", intercept_scaling=LIBLINEAR_INTERCEPT_SCALING,
        random_state=0), A, y, repeats)
    saga_s, saga = _fit_seconds(lambda: _sklearn_l1_logistic(C=C, solver="saga",
                                                             random_state=0), A, y, repeats)
    f_ours = logistic_objective(A, y, ours.coef_, ours.intercept_, C)
    f_lib = logistic_objective(A, y, lib.coef_, lib.intercept_, C)
    f_saga = logistic_objective(A, y, saga.coef_, saga.intercept_, C)
    allowed = LOGISTIC_RTOL * abs(f_star)
    same = abs(f_ours - f_lib) <= allowed and f_ours - f_star <= allowed
    note = (f"{_describe_data(A)}; 1/C = lambda_max/{fraction} (C = {C:.6g}), "
            f"fit_intercept=True, default tol (1e-4) of both, liblinear with "
            f"intercept_scaling={LIBLINEAR_INTERCEPT_SCALING:g}; F* = {f_star!r} (bcd "
            f"tol=1e-10); (F_bcd - F_liblinear) / F* = {(f_ours - f_lib) / f_star:.2e} "
            f"(allowed {LOGISTIC_RTOL:g}), (F_bcd - F*) / F* = {(f_ours - f_star) / f_star:.2e}, "
            f"(F_liblinear - F*) / F* = {(f_lib - f_star) / f_star:.2e}; non-zeros "
            f"{np.count_nonzero(ours.coef_)} (bcd), {np.count_nonzero(lib.coef_)} "
            f"(liblinear); saga (default max_iter=100): {fmt_time(saga_s)}, (F_saga - F*) / F* "
            f"= {(f_saga - f_star) / f_star:.2e}, bcd / saga {ours_s / saga_s:.2f}x")
    return ratio_row(f"o. L1-logistic estimator news, lam_max/{fraction}: bcd / sklearn "
                     "liblinear", ours_s, f"{fmt_time(lib_s)} sklearn liblinear",
                     ours_s / lib_s, "<= 1.0x", note=note, passed=same)


# --------------------------------------------------------------------------- q, r. shared

#: rows q and r: bcd's tolerances tried, loosest first
BCD_TOLS = (1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14)
#: rows q and r: the slack, relative to F*, of "as close to F* as the peer" (rounding)
SAME_FLOOR = 1e-12


def _relative_excess(objective, f_star):
    return lambda model: (objective(model.coef_, model.intercept_) - f_star) / abs(f_star)


def _matched_rows(label, data_note, make_bcd, peers, X, y, excess, repeats):
    """One row per peer: bcd's fit time at the loosest tolerance of
    ``BCD_TOLS`` whose objective is as close to F* as the peer's (at its
    default tolerance) over the peer's.  ``peers`` maps a name to a
    ``make()`` of the peer's estimator; ``excess(model)`` is (F - F*) / F*."""
    cache = {}

    def bcd_fit(tol):
        if tol not in cache:
            cache[tol] = timed(lambda: make_bcd(tol).fit(X, y), ignore=Warning)[1]
        return cache[tol]

    default_s, default = _fit_seconds(lambda: make_bcd(DEFAULT_TOL), X, y, repeats)
    rows = []
    for name, make in peers.items():
        peer_s, peer = _fit_seconds(make, X, y, repeats)
        good = max(excess(peer), 0.0) + SAME_FLOOR
        tuned = at_loosest_tolerance(
            "bcd", BCD_TOLS, lambda tol: (excess(bcd_fit(tol)), bcd_fit(tol)), good,
            lambda tol: timed(lambda: make_bcd(tol).fit(X, y), ignore=Warning)[0], repeats)
        note = (f"{data_note}; {name} at its default tol: {fmt_time(peer_s)}, (F - F*) / F* = "
                f"{excess(peer):.2e}; bcd tol={tuned.tol:.0e}: {fmt_time(tuned.seconds)}, "
                f"(F - F*) / F* = {tuned.error:.2e}"
                + ("" if tuned.reached else " (never as close as the peer's: its best)")
                + f", solver_ {tuned.payload.solver_!r}; bcd at its default tol "
                f"({DEFAULT_TOL:g}): {fmt_time(default_s)}, (F - F*) / F* = "
                f"{excess(default):.2e}")
        rows.append(ratio_row(f"{label}: bcd / {name}", tuned.seconds,
                              f"{fmt_time(peer_s)} {name}", tuned.seconds / peer_s, "<= 1.0x",
                              note=note, passed=tuned.reached))
    return rows


# --------------------------------------------------------------------------- q. Ridge

#: row q: the penalty of both ridge problems
RIDGE_ALPHA = 1.0
#: row q: the dense design
RIDGE_DENSE_SHAPE = (20000, 200)
RIDGE_DATASETS = ("dense", "A")


def ridge_objective(X, y, coef, intercept, alpha=RIDGE_ALPHA):
    """scikit-learn's ridge objective ||y - X w - b||^2 + alpha ||w||^2."""
    r = y - X @ np.asarray(coef, dtype=float) - float(intercept)
    return float(r @ r) + alpha * float(coef @ coef)


@functools.lru_cache(maxsize=None)
def ridge_data(dataset):
    """``(X, y, F*, description)`` of row q: a dense Gaussian design with
    y = X w + noise, or the paper's dataset A; F* by a direct solve of the
    centred normal equations (for A in the dual form, n x n)."""
    if dataset == "dense":
        rng = np.random.default_rng(0)
        X = rng.standard_normal(RIDGE_DENSE_SHAPE)
        y = X @ rng.standard_normal(X.shape[1]) + rng.standard_normal(X.shape[0]) + 1.0
        description = f"dense Gaussian {X.shape[0]} x {X.shape[1]}"
    else:
        X, y = paper_dataset("A")
        description = f"dataset A {X.shape[0]} x {X.shape[1]} ({X.nnz} non-zeros)"
    Xd = X.toarray() if sp.issparse(X) else X
    x_mean, y_mean = Xd.mean(axis=0), float(y.mean())
    Xc, yc = Xd - x_mean, y - y_mean
    if Xc.shape[0] >= Xc.shape[1]:
        coef = scipy.linalg.solve(Xc.T @ Xc + RIDGE_ALPHA * np.eye(Xc.shape[1]), Xc.T @ yc,
                                  assume_a="pos")
    else:
        coef = Xc.T @ scipy.linalg.solve(Xc @ Xc.T + RIDGE_ALPHA * np.eye(Xc.shape[0]), yc,
                                         assume_a="pos")
    f_star = ridge_objective(X, y, coef, y_mean - x_mean @ coef)
    return X, y, f_star, description


def compare_ridge_estimator(repeats, dataset="dense"):
    """Row q: ``bcd.linear_model.Ridge`` / ``sklearn.linear_model.Ridge``
    (solver "auto") fit time at the same objective, alpha = 1, with an
    intercept, on ``dataset`` ("dense" or "A")."""
    from sklearn.linear_model import Ridge as SkRidge

    from bcd.linear_model import Ridge

    X, y, f_star, description = ridge_data(dataset)
    excess = _relative_excess(lambda c, b: ridge_objective(X, y, c, b), f_star)
    peers = {"sklearn Ridge": lambda: SkRidge(alpha=RIDGE_ALPHA)}
    return _matched_rows(f"q. Ridge estimator {dataset}", f"{description}, alpha = "
                         f"{RIDGE_ALPHA:g}, F* = {f_star!r}",
                         lambda tol: Ridge(alpha=RIDGE_ALPHA, tol=tol), peers, X, y, excess,
                         repeats)


# --------------------------------------------------------------------------- r. Poisson

#: row r: the dense design and its penalty
POISSON_DENSE_SHAPE = (5000, 200)
POISSON_DENSE_ALPHA = 1e-3
#: row r: the penalty on the Bikeshare data (nearly the unpenalized GLM of ISLR)
BIKESHARE_ALPHA = 1e-4
POISSON_DATASETS = ("dense", "bikeshare")


def poisson_objective(X, y, coef, intercept, alpha):
    """scikit-learn's objective: the mean half Poisson deviance plus alpha/2 ||w||^2."""
    mu = np.exp(X @ np.asarray(coef, dtype=float) + float(intercept))
    return float(np.mean(xlogy(y, y / mu) - y + mu)) + 0.5 * alpha * float(coef @ coef)


def bikeshare_path():
    """The Bikeshare file of the ISLP package, found without importing it;
    NotImplementedError (asv's skip) if it is missing."""
    spec = importlib.util.find_spec("ISLP")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            path = os.path.join(folder, "data", "Bikeshare.csv")
            if os.path.exists(path):
                return path
    raise NotImplementedError("the Bikeshare data need ISLP: pip install --no-deps ISLP")


def bikeshare_data():
    """``(X, y)``: the bikers per hour of ISLP's Bikeshare (8645 hours) on
    ISLR's Poisson model: month, hour and weather situation one-hot encoded
    (first level dropped), working day and normalized temperature."""
    import pandas as pd

    frame = pd.read_csv(bikeshare_path())
    parts = [pd.get_dummies(frame[column].astype(str), prefix=column, drop_first=True)
             for column in ("mnth", "hr", "weathersit")]
    X = pd.concat(parts + [frame[["workingday", "temp"]]], axis=1).to_numpy(dtype=np.float64)
    return np.asfortranarray(X), frame["bikers"].to_numpy(dtype=np.float64)


@functools.lru_cache(maxsize=None)
def poisson_data(dataset):
    """``(X, y, alpha, description)`` of row r."""
    if dataset == "dense":
        rng = np.random.default_rng(0)
        X = rng.standard_normal(POISSON_DENSE_SHAPE)
        z = X @ rng.standard_normal(X.shape[1])
        y = rng.poisson(np.exp(0.7 * z / z.std() + 0.5)).astype(np.float64)
        return X, y, POISSON_DENSE_ALPHA, (f"dense Gaussian {X.shape[0]} x {X.shape[1]}, "
                                           f"Poisson counts")
    X, y = bikeshare_data()
    return X, y, BIKESHARE_ALPHA, f"ISLP Bikeshare {X.shape[0]} x {X.shape[1]}, bikers per hour"


@functools.lru_cache(maxsize=None)
def poisson_optimum(dataset):
    """F* of row r: the best of scikit-learn's newton-cholesky and bcd at tol=1e-12."""
    from sklearn.linear_model import PoissonRegressor as SkPoisson

    from bcd.linear_model import PoissonRegressor

    X, y, alpha, _ = poisson_data(dataset)
    fits = [SkPoisson(alpha=alpha, solver="newton-cholesky", tol=1e-12, max_iter=1000),
            PoissonRegressor(alpha=alpha, tol=1e-12, max_iter=10000)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return min(poisson_objective(X, y, m.coef_, m.intercept_, alpha)
                   for m in (f.fit(X, y) for f in fits))


@contextlib.contextmanager
def _one_thread():
    """glum's OpenMP loops on one thread, as every other solver here (when
    threadpoolctl is available)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1):
        yield


class _SingleThreaded:
    """An estimator whose ``fit`` runs under ``_one_thread``."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, y):
        with _one_thread():
            self.estimator.fit(X, y)
        return self.estimator


def compare_poisson_estimator(repeats, dataset="dense"):
    """Row r: ``bcd.linear_model.PoissonRegressor`` / scikit-learn's
    ``PoissonRegressor`` ("lbfgs", "newton-cholesky") and glum's
    ``GeneralizedLinearRegressor(family="poisson", l1_ratio=0)`` fit time at
    the same objective, with an intercept, on ``dataset`` ("dense" or
    "bikeshare"); glum's row is left out when it is not installed."""
    from sklearn.linear_model import PoissonRegressor as SkPoisson

    from bcd.linear_model import PoissonRegressor

    X, y, alpha, description = poisson_data(dataset)
    f_star = poisson_optimum(dataset)
    excess = _relative_excess(lambda c, b: poisson_objective(X, y, c, b, alpha), f_star)
    peers = {"sklearn lbfgs": lambda: SkPoisson(alpha=alpha),
             "sklearn newton-cholesky": lambda: SkPoisson(alpha=alpha,
                                                          solver="newton-cholesky")}
    if importlib.util.find_spec("glum") is not None:
        from glum import GeneralizedLinearRegressor

        peers["glum"] = lambda: _SingleThreaded(GeneralizedLinearRegressor(
            family="poisson", alpha=alpha, l1_ratio=0.0))
    return _matched_rows(f"r. Poisson estimator {dataset}", f"{description}, alpha = "
                         f"{alpha:g}, F* = {f_star!r}",
                         lambda tol: PoissonRegressor(alpha=alpha, tol=tol), peers, X, y,
                         excess, repeats)


def _bikeshare_rows(repeats):
    try:
        bikeshare_path()
    except NotImplementedError:
        return []
    return compare_poisson_estimator(repeats, "bikeshare")


# --------------------------------------------------------------------------- s. LinearSVC

#: row s: the relative accuracy (F - F*) / F* both fits must reach
SVC_RTOL = 1e-7
#: row s: the tolerances tried by both libraries, from their default, loosest first
SVC_TOLS = tuple(10.0 ** -k for k in range(4, 15))
#: row s: the dense design
SVC_DENSE_SHAPE = (5000, 200)
SVC_DATASETS = ("news", "dense")


def svc_objective(X, y, coef, intercept):
    """scikit-learn's LinearSVC objective at its defaults (C = 1, squared
    hinge, L2 penalty with the intercept penalized, intercept_scaling = 1):
    ||(w, b)||^2 / 2 + sum_i max(0, 1 - t_i (x_i.w + b))^2, t_i = +-1
    (label 1 or the larger label: +1)."""
    t = np.where(y == np.max(y), 1.0, -1.0)
    w = np.asarray(coef, dtype=float).ravel()
    b = float(np.ravel(intercept)[0])
    u = np.maximum(0.0, 1.0 - t * (X @ w + b))
    return 0.5 * (float(w @ w) + b * b) + float(u @ u)


@functools.lru_cache(maxsize=None)
def svc_data(dataset):
    """``(X, y, description)`` of row s."""
    if dataset == "news":
        X, y = text_dataset()
        return X, y, _describe_data(X)
    from sklearn.datasets import make_classification

    X, y = make_classification(*SVC_DENSE_SHAPE, random_state=0)
    return np.asarray(X, dtype=np.float64), y, (f"make_classification {X.shape[0]} x "
                                                f"{X.shape[1]} (dense)")


@functools.lru_cache(maxsize=None)
def svc_optimum(dataset):
    """F* of row s: the smaller objective of bcd at tol=1e-12 and liblinear at tol=1e-10."""
    from sklearn.svm import LinearSVC as SkLinearSVC

    from bcd.linear_model import LinearSVC

    X, y, _ = svc_data(dataset)
    fits = [LinearSVC(tol=1e-12, max_iter=100000), SkLinearSVC(tol=1e-10, max_iter=100000)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return min(svc_objective(X, y, m.coef_, m.intercept_) for m in (f.fit(X, y) for f in fits))


def compare_svc_estimator(repeats, dataset="news"):
    """Row s: ``bcd.linear_model.LinearSVC()`` / ``sklearn.svm.LinearSVC()``
    fit time at the same objective, (F - F*) / F* <= 1e-7, each at the
    loosest tolerance from its default 1e-4 that gets there, on ``dataset``
    ("news" or "dense")."""
    from sklearn.svm import LinearSVC as SkLinearSVC

    from bcd.linear_model import LinearSVC

    X, y, description = svc_data(dataset)
    f_star = svc_optimum(dataset)

    def excess(model):
        return (svc_objective(X, y, model.coef_, model.intercept_) - f_star) / abs(f_star)

    tuned = {}
    defaults = {}
    for name, make in (("bcd", lambda tol: LinearSVC(tol=tol)),
                       ("liblinear", lambda tol: SkLinearSVC(tol=tol))):
        def fit(tol, make=make):
            return timed(lambda: make(tol).fit(X, y), ignore=Warning)

        def attempt(tol, fit=fit):
            model = fit(tol)[1]
            return excess(model), model

        # one untimed fit first (in _fit_seconds)
        defaults[name] = _fit_seconds(lambda make=make: make(DEFAULT_TOL), X, y, repeats)
        tuned[name] = at_loosest_tolerance(name, SVC_TOLS, attempt, SVC_RTOL,
                                           lambda tol, fit=fit: fit(tol)[0], repeats)
    ours, ref = tuned["bcd"], tuned["liblinear"]
    options = ours.payload.result_.options
    formulation = options.get("formulation")
    if options.get("auto"):
        formulation += f", {options['auto']}"
    note = (f"{description}, C = 1, squared hinge, L2, penalized intercept; F* = {f_star!r}; "
            f"bcd tol={ours.tol:.0e} ({formulation}): {fmt_time(ours.seconds)}, (F - F*) / F* "
            f"= {ours.error:.2e}, n_iter_ {ours.payload.n_iter_}; liblinear tol={ref.tol:.0e}: "
            f"{fmt_time(ref.seconds)}, (F - F*) / F* = {ref.error:.2e}, n_iter_ "
            f"{ref.payload.n_iter_}; at the default tol (1e-4): bcd "
            f"{fmt_time(defaults['bcd'][0])}, (F - F*) / F* = {excess(defaults['bcd'][1]):.2e}, "
            f"liblinear {fmt_time(defaults['liblinear'][0])}, (F - F*) / F* = "
            f"{excess(defaults['liblinear'][1]):.2e}")
    return ratio_row(f"s. LinearSVC estimator {dataset}, (F - F*)/F* <= {SVC_RTOL:g}: bcd / "
                     "sklearn", ours.seconds, f"{fmt_time(ref.seconds)} sklearn liblinear",
                     ours.seconds / ref.seconds, "<= 1.0x", note=note,
                     passed=ours.reached and ref.reached)


def _svc_news_row(repeats):
    try:
        require_text_data()
    except NotImplementedError:
        return []
    return compare_svc_estimator(repeats, "news")


#: the rows of compare.py in this module: (progress title, run(repeats) -> Row(s))
STEPS = [
    ("n. Lasso estimator (bcd.linear_model) on newsgroups tf-idf vs scikit-learn's Lasso",
     compare_lasso_estimator),
    ("o. L1-logistic estimator (bcd.linear_model) on newsgroups tf-idf vs scikit-learn "
     "liblinear and saga", compare_logistic_estimator),
    ("q. Ridge estimator on a dense 20000 x 200 design vs scikit-learn's Ridge",
     functools.partial(compare_ridge_estimator, dataset="dense")),
    ("q. Ridge estimator on dataset A vs scikit-learn's Ridge",
     functools.partial(compare_ridge_estimator, dataset="A")),
    ("r. Poisson estimator on a dense 5000 x 200 design vs scikit-learn and glum",
     functools.partial(compare_poisson_estimator, dataset="dense")),
    ("r. Poisson estimator on ISLP's Bikeshare vs scikit-learn and glum (if ISLP is installed)",
     _bikeshare_rows),
    ("s. LinearSVC estimator on newsgroups tf-idf vs scikit-learn's LinearSVC (if dmba is "
     "installed)", _svc_news_row),
    ("s. LinearSVC estimator on a dense 5000 x 200 make_classification vs scikit-learn's "
     "LinearSVC", functools.partial(compare_svc_estimator, dataset="dense")),
]


# --------------------------------------------------------------------------- rows as asv tracks

class EstimatorLassoVsSklearn(RowTrack):
    """Row n: ``bcd.linear_model.Lasso`` / ``sklearn.linear_model.Lasso`` fit
    time on the newsgroups tf-idf matrix (target <= 1)."""

    requires = ("sklearn",)

    def setup(self):
        require_text_data()
        super().setup()

    def track_time_ratio(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compare_lasso_estimator(self.repeats).figure


class EstimatorLogisticVsSklearn(RowTrack):
    """Row o: ``bcd.linear_model.LogisticRegression(penalty="l1")`` /
    scikit-learn liblinear fit time on the newsgroups tf-idf matrix
    (target <= 1)."""

    requires = ("sklearn",)

    def setup(self):
        require_text_data()
        super().setup()

    def track_time_ratio(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compare_logistic_estimator(self.repeats).figure


class EstimatorRidgeVsSklearn(RowTrack):
    """Row q: ``bcd.linear_model.Ridge`` / ``sklearn.linear_model.Ridge`` fit
    time at the same objective (target <= 1)."""

    requires = ("sklearn",)
    params = [list(RIDGE_DATASETS)]
    param_names = ["dataset"]

    def track_time_ratio(self, dataset):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (row,) = compare_ridge_estimator(self.repeats, dataset)
            return row.figure


class EstimatorPoissonVsSklearn(RowTrack):
    """Row r on the dense design: ``bcd.linear_model.PoissonRegressor`` /
    peer fit time at the same objective (target <= 1)."""

    requires = ("sklearn",)
    params = [["sklearn lbfgs", "sklearn newton-cholesky", "glum"]]
    param_names = ["peer"]

    def setup(self, peer):
        super().setup(peer)
        if peer == "glum":
            require("glum")

    def track_time_ratio(self, peer):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = compare_poisson_estimator(self.repeats, "dense")
            return next(row.figure for row in rows if row.label.endswith(f"bcd / {peer}"))


class EstimatorLinearSVCVsSklearn(RowTrack):
    """Row s: ``bcd.linear_model.LinearSVC()`` / ``sklearn.svm.LinearSVC()``
    fit time at the same objective (target <= 1)."""

    requires = ("sklearn",)
    params = [list(SVC_DATASETS)]
    param_names = ["dataset"]

    def setup(self, dataset):
        if dataset == "news":
            require_text_data()
        super().setup(dataset)

    def track_time_ratio(self, dataset):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compare_svc_estimator(self.repeats, dataset).figure
