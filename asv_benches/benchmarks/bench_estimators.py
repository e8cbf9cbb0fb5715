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
import functools
import inspect
import warnings

import numpy as np

from .bench_text import _describe_data, require_text_data, text_dataset
from .common import RowTrack, fmt_time, median, ratio_row, timed

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


#: the rows of compare.py in this module: (progress title, run(repeats) -> Row(s))
STEPS = [
    ("n. Lasso estimator (bcd.linear_model) on newsgroups tf-idf vs scikit-learn's Lasso",
     compare_lasso_estimator),
    ("o. L1-logistic estimator (bcd.linear_model) on newsgroups tf-idf vs scikit-learn "
     "liblinear and saga", compare_logistic_estimator),
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
