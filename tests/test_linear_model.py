"""The scikit-learn estimators of bcd.linear_model: scikit-learn's estimator
checks, the optima against scikit-learn's estimators and SciPy's NNLS,
pipelines under grid search, the optional import, dtypes, sparse input, warm
starts and input validation."""
import doctest
import importlib
import inspect
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import xlogy

sklearn = pytest.importorskip("sklearn")

import sklearn.linear_model as sk  # noqa: E402
from scipy.optimize import nnls  # noqa: E402
from sklearn.exceptions import ConvergenceWarning, NotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import MaxAbsScaler, StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import (  # noqa: E402
    check_sample_weight_equivalence_on_dense_data, check_sample_weight_equivalence_on_sparse_data,
    parametrize_with_checks)

import bcd  # noqa: E402
from bcd import linear_model as lm  # noqa: E402
from bcd.linear_model import (ElasticNet, Lasso, LassoCV, LogisticRegression,  # noqa: E402
                              LogisticRegressionCV, NonNegativeLinearRegression,
                              PoissonRegressor, Ridge)

# --------------------------------------------------------------------------- data


def regression_data(n=60, d=12, sparse=False, seed=0):
    """A noisy sparse linear model with a non-zero mean (and, sparse, 60% zeros)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 2.0, d)
    if sparse:
        X[rng.uniform(size=(n, d)) < 0.6] = 0.0
    w = rng.standard_normal(d) * (rng.uniform(size=d) < 0.5)
    y = X @ w + 0.3 * rng.standard_normal(n) + 2.0
    sw = rng.uniform(0.2, 3.0, n)
    return (sp.csr_matrix(X) if sparse else X), y, sw


def classification_data(n_classes=2, n=80, d=5, sparse=False, seed=0):
    """Labels of a noisy linear model; the first rows are repeated with other
    labels, so the data are never separable."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, d))
    if sparse:
        X[rng.uniform(size=(n, d)) < 0.5] = 0.0
    scores = X @ rng.standard_normal((d, n_classes)) + rng.standard_normal((n, n_classes))
    y = np.argmax(scores, axis=1)
    X = np.vstack([X, X[:n_classes]])
    y = np.r_[y, (y[:n_classes] + 1) % n_classes]
    sw = rng.randint(1, 4, y.size).astype(float)      # integers: also repetitions
    return (sp.csr_matrix(X) if sparse else X), y, sw


def count_data(n=200, d=8, sparse=False, seed=0):
    """Poisson counts of a log-linear model with an intercept (sparse: 50% zeros)."""
    rng = np.random.RandomState(seed)
    X = 0.4 * rng.standard_normal((n, d)) * rng.uniform(0.5, 2.0, d)
    if sparse:
        X[rng.uniform(size=(n, d)) < 0.5] = 0.0
    z = X @ rng.standard_normal(d)
    y = rng.poisson(np.exp(0.7 * z / z.std() + 0.5)).astype(float)
    sw = rng.uniform(0.2, 3.0, n)
    return (sp.csr_matrix(X) if sparse else X), y, sw


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


# --------------------------------------------------------------------------- objectives


def enet_objective(X, y, sw, coef, intercept, alpha, l1_ratio):
    """scikit-learn's elastic net objective (weights normalized to sum to n)."""
    s = np.ones(y.size) if sw is None else sw * (y.size / np.sum(sw))
    r = y - dense(X) @ coef - intercept
    return (0.5 * np.sum(s * r * r) / y.size + alpha * l1_ratio * np.abs(coef).sum()
            + 0.5 * alpha * (1 - l1_ratio) * coef @ coef)


def ridge_objective(X, y, sw, coef, intercept, alpha):
    """scikit-learn's ridge objective of one target: sum_i s_i r_i^2 + alpha ||w||^2."""
    s = np.ones(y.size) if sw is None else sw
    r = y - dense(X) @ coef - intercept
    return np.sum(s * r * r) + alpha * coef @ coef


def ridge_reference(X, y, sw, alpha, fit_intercept):
    """The ridge solution of one target by a dense direct solve of the
    (weighted, centred) normal equations."""
    Xd = dense(X)
    s = np.ones(y.size) if sw is None else sw
    if fit_intercept:
        x_mean, y_mean = np.average(Xd, axis=0, weights=s), np.average(y, weights=s)
    else:
        x_mean, y_mean = np.zeros(Xd.shape[1]), 0.0
    Xc = Xd - x_mean
    coef = np.linalg.solve(Xc.T @ (s[:, None] * Xc) + alpha * np.eye(Xd.shape[1]),
                           Xc.T @ (s * (y - y_mean)))
    return coef, y_mean - x_mean @ coef


def poisson_objective(X, y, sw, coef, intercept, alpha):
    """scikit-learn's Poisson objective: the weighted mean half deviance plus
    alpha / 2 ||w||^2."""
    s = np.ones(y.size) if sw is None else sw
    mu = np.exp(dense(X) @ coef + intercept)
    half_deviance = xlogy(y, y / mu) - y + mu
    return np.sum(s * half_deviance) / np.sum(s) + 0.5 * alpha * coef @ coef


def logistic_objective(X, y, sw, coef, intercept, C, penalty, l1_ratio):
    """C * sum_i s_i log-loss_i + r(w), computed from the probabilities."""
    classes = np.unique(y)
    S = dense(X) @ np.atleast_2d(coef).T + intercept
    if classes.size == 2:
        S = np.column_stack([np.zeros(len(y)), S[:, 0]])
    log_p = S - np.logaddexp.reduce(S, axis=1, keepdims=True)
    loss = -log_p[np.arange(len(y)), np.searchsorted(classes, y)]
    s = np.ones(len(y)) if sw is None else sw
    w = np.ravel(coef)
    ratio = {"l2": 0.0, "l1": 1.0, "elasticnet": l1_ratio, None: None}[penalty]
    pen = 0.0 if ratio is None else ratio * np.abs(w).sum() + 0.5 * (1 - ratio) * w @ w
    return (C if penalty is not None else 1.0) * np.sum(s * loss) + pen


def sk_logistic(penalty, C=1.0, l1_ratio=None, **kwargs):
    """scikit-learn's LogisticRegression with the same objective (lbfgs for
    l2 and no penalty, saga for the L1 penalties), across its API versions."""
    solver = "lbfgs" if penalty in ("l2", None) else "saga"
    params = inspect.signature(sk.LogisticRegression).parameters
    if params["penalty"].default == "deprecated":
        ratio = {"l2": 0.0, "l1": 1.0, "elasticnet": l1_ratio, None: 0.0}[penalty]
        return sk.LogisticRegression(C=np.inf if penalty is None else C, l1_ratio=ratio,
                                     solver=solver, **kwargs)
    return sk.LogisticRegression(penalty=penalty, C=C, l1_ratio=l1_ratio, solver=solver,
                                 **kwargs)


# --------------------------------------------------------------------------- 1. estimator checks

TIGHT_TOLERANCE_REASON = (
    "the check asks for predictions equal to rtol 1e-7 after fits on weighted and on "
    "repeated rows, while the default tol=1e-4 stops every solve of the cross-validation "
    "path at an accuracy of about tol; the same check passes at tol=1e-10 "
    "(test_cv_sample_weight_equivalence_at_tight_tolerance)")


def expected_failed_checks(estimator):
    if isinstance(estimator, (LassoCV, lm.ElasticNetCV)):
        return {"check_sample_weight_equivalence_on_dense_data": TIGHT_TOLERANCE_REASON}
    if isinstance(estimator, LogisticRegressionCV):
        # (these pass on some BLAS kernels and not others: with OpenBLAS's
        # Sandybridge kernels one decision value differed by 3.8e-7 relative)
        return {f"check_sample_weight_equivalence_on_{kind}_data": TIGHT_TOLERANCE_REASON
                for kind in ("dense", "sparse")}
    return {}


CHECKED = [Lasso(), ElasticNet(), NonNegativeLinearRegression(), Ridge(), LogisticRegression(),
           PoissonRegressor(), LassoCV(alphas=10, cv=3),
           lm.ElasticNetCV(l1_ratio=[0.5, 1.0], alphas=10, cv=3),
           LogisticRegressionCV(Cs=[0.01, 1.0, 100.0], cv=3, l1_ratios=(0.0,),
                                scoring="accuracy", use_legacy_attributes=False)]


@parametrize_with_checks(CHECKED, expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("check", [check_sample_weight_equivalence_on_dense_data,
                                   check_sample_weight_equivalence_on_sparse_data])
@pytest.mark.parametrize("estimator", [
    LassoCV(alphas=10, cv=3, tol=1e-10, max_iter=100000),
    LogisticRegressionCV(Cs=[0.01, 0.1, 1.0], cv=3, tol=1e-10)], ids=["LassoCV", "LogisticCV"])
def test_cv_sample_weight_equivalence_at_tight_tolerance(estimator, check):
    check(type(estimator).__name__, estimator)


# --------------------------------------------------------------------------- 2. optima


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("model", ["lasso", "lasso_positive", "enet", "enet_positive"])
def test_least_squares_optimum_matches_sklearn(model, sparse, fit_intercept, weighted):
    X, y, sw = regression_data(sparse=sparse)
    sw = sw if weighted else None
    alpha = 0.05
    l1_ratio = 0.3 if model.startswith("enet") else 1.0
    positive = model.endswith("positive")
    if l1_ratio == 1.0:
        ours = Lasso(alpha=alpha, fit_intercept=fit_intercept, positive=positive, tol=1e-10)
        ref = sk.Lasso(alpha=alpha, fit_intercept=fit_intercept, positive=positive, tol=1e-12,
                       max_iter=100000)
    else:
        ours = ElasticNet(alpha=alpha, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                          positive=positive, tol=1e-10)
        ref = sk.ElasticNet(alpha=alpha, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                            positive=positive, tol=1e-12, max_iter=100000)
    ours.fit(X, y, sample_weight=sw)
    ref.fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-7)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=1e-7)
    f_ours = enet_objective(X, y, sw, ours.coef_, ours.intercept_, alpha, l1_ratio)
    f_ref = enet_objective(X, y, sw, ref.coef_, ref.intercept_, alpha, l1_ratio)
    assert f_ours <= f_ref + 1e-12 * abs(f_ref)
    if positive:
        assert np.all(ours.coef_ >= 0)
    # the duality gap of the per-sample objective meets scikit-learn's test
    w = np.ones(y.size) if sw is None else sw * (y.size / np.sum(sw))
    y_c = y - np.average(y, weights=w) if fit_intercept else y
    assert 0 <= ours.dual_gap_ <= 1e-10 * np.sum(w * y_c ** 2) / y.size
    assert ours.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("model", ["lasso", "enet"])
def test_default_tolerance_reaches_sklearn_accuracy(model, sparse):
    # with both at their default tol, the objectives agree to within
    # scikit-learn's own stopping test: gap <= tol * ||y - ybar||^2 / n
    X, y, _ = regression_data(n=80, d=40, sparse=sparse, seed=3)
    alpha, l1_ratio = 0.02, (1.0 if model == "lasso" else 0.5)
    ours = (Lasso(alpha=alpha) if model == "lasso" else ElasticNet(alpha=alpha,
                                                                   l1_ratio=l1_ratio)).fit(X, y)
    ref = (sk.Lasso(alpha=alpha) if model == "lasso"
           else sk.ElasticNet(alpha=alpha, l1_ratio=l1_ratio)).fit(X, y)
    bound = 1e-4 * np.sum((y - y.mean()) ** 2) / y.size
    f_ours = enet_objective(X, y, None, ours.coef_, ours.intercept_, alpha, l1_ratio)
    f_ref = enet_objective(X, y, None, ref.coef_, ref.intercept_, alpha, l1_ratio)
    assert ours.dual_gap_ <= bound
    assert abs(f_ours - f_ref) <= bound


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_nnls_matches_scipy(sparse, fit_intercept, weighted):
    X, y, sw = regression_data(sparse=sparse, seed=1)
    sw = sw if weighted else None
    model = NonNegativeLinearRegression(fit_intercept=fit_intercept, tol=1e-10)
    model.fit(X, y, sample_weight=sw)
    # the reference: scipy's NNLS on the (weighted-)centred data
    s = np.ones(y.size) if sw is None else sw
    Xd = dense(X)
    if fit_intercept:
        x_mean, y_mean = np.average(Xd, axis=0, weights=s), np.average(y, weights=s)
    else:
        x_mean, y_mean = np.zeros(Xd.shape[1]), 0.0
    root = np.sqrt(s)
    coef, _ = nnls(root[:, None] * (Xd - x_mean), root * (y - y_mean))
    assert np.count_nonzero(coef == 0) >= 2        # the constraint is active
    np.testing.assert_allclose(model.coef_, coef, rtol=0, atol=1e-7)
    np.testing.assert_allclose(model.intercept_, y_mean - x_mean @ coef, rtol=0, atol=1e-7)
    assert model.dual_gap_ is None


def test_nnls_with_l1_is_positive_lasso():
    X, y, sw = regression_data(sparse=True, seed=2)
    ours = NonNegativeLinearRegression(alpha=0.05, tol=1e-10).fit(X, y, sample_weight=sw)
    ref = sk.Lasso(alpha=0.05, positive=True, tol=1e-12, max_iter=100000)
    ref.fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-7)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=1e-7)


RIDGE_SHAPES = {"small": (60, 12), "wide": (80, 300)}    # Newton on all; coordinate descent


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("shape", sorted(RIDGE_SHAPES))
def test_ridge_optimum_matches_sklearn(shape, sparse, fit_intercept, weighted):
    n, d = RIDGE_SHAPES[shape]
    X, y, sw = regression_data(n=n, d=d, sparse=sparse, seed=13)
    sw = sw if weighted else None
    alpha = 2.5
    # tol bounds the objective's relative excess: at 1e-15 the coefficients are
    # within about sqrt(1e-15) of the optimum's relatively, and much closer
    ours = Ridge(alpha=alpha, fit_intercept=fit_intercept, tol=1e-15).fit(X, y, sample_weight=sw)
    ref = sk.Ridge(alpha=alpha, fit_intercept=fit_intercept, solver="cholesky")
    ref.fit(dense(X), y, sample_weight=sw)
    coef, intercept = ridge_reference(X, y, sw, alpha, fit_intercept)
    np.testing.assert_allclose(ref.coef_, coef, rtol=1e-9, atol=1e-12)  # the same optimum
    assert ours.coef_.shape == (d,) and np.ndim(ours.intercept_) == 0
    # 1e-6 relative to the largest coefficient (an entry near 0 may differ
    # more relatively), and in norm
    np.testing.assert_allclose(ours.coef_, coef, rtol=1e-6, atol=1e-6 * np.abs(coef).max())
    assert np.linalg.norm(ours.coef_ - coef) <= 1e-6 * np.linalg.norm(coef)
    np.testing.assert_allclose(ours.intercept_, intercept, rtol=1e-6, atol=1e-9)
    f_ours = ridge_objective(X, y, sw, ours.coef_, ours.intercept_, alpha)
    f_ref = ridge_objective(X, y, sw, coef, intercept, alpha)
    assert f_ours <= f_ref * (1 + 1e-8)
    np.testing.assert_allclose(ours.predict(X), ref.predict(dense(X)), rtol=1e-6, atol=1e-8)
    assert ours.n_iter_.shape == (1,) and ours.n_iter_[0] >= 1
    assert isinstance(ours.result_, bcd.Result) and ours.result_.converged
    assert ours.solver_ == ours.result_.options["auto"]
    if not sparse:      # centred: no intercept column, the problem's ridge is alpha itself
        assert ours.result_.x.shape == (d,)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_ridge_multiple_targets(sparse):
    X, y, sw = regression_data(n=70, d=10, sparse=sparse, seed=14)
    rng = np.random.RandomState(0)
    Y = np.column_stack([y, dense(X) @ rng.standard_normal(10) - 1.0, np.zeros(70)])
    alphas = np.array([0.5, 4.0, 1.0])
    ours = Ridge(alpha=alphas, tol=1e-15).fit(X, Y, sample_weight=sw)
    ref = sk.Ridge(alpha=alphas, solver="cholesky").fit(dense(X), Y, sample_weight=sw)
    assert ours.coef_.shape == (3, 10) and ours.intercept_.shape == (3,)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-10)
    assert ours.predict(X).shape == (70, 3)
    for k in range(3):
        f_ours = ridge_objective(X, Y[:, k], sw, ours.coef_[k], ours.intercept_[k], alphas[k])
        f_ref = ridge_objective(X, Y[:, k], sw, ref.coef_[k], ref.intercept_[k], alphas[k])
        assert f_ours <= f_ref * (1 + 1e-8) + 1e-12
    # the zero target needs no solve
    assert ours.n_iter_[2] == 0 and ours.result_[2] is None
    assert np.all(ours.coef_[2] == 0) and ours.intercept_[2] == 0
    # one alpha for all targets; a single column keeps scikit-learn's shapes
    single = Ridge(alpha=2.0, tol=1e-15).fit(X, Y)
    np.testing.assert_allclose(single.coef_, sk.Ridge(alpha=2.0).fit(dense(X), Y).coef_,
                               rtol=1e-6, atol=1e-10)
    column = Ridge(alpha=2.0).fit(X, Y[:, :1])
    assert column.coef_.shape == (10,) and column.intercept_.shape == (1,)


@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_ridge_positive_matches_nnls(sparse, fit_intercept):
    # the ridge with w >= 0 is the NNLS problem of [sqrt(S) X_c; sqrt(alpha) I]
    X, y, sw = regression_data(n=60, d=12, sparse=sparse, seed=15)
    alpha = 3.0
    ours = Ridge(alpha=alpha, positive=True, fit_intercept=fit_intercept,
                 tol=1e-15).fit(X, y, sample_weight=sw)
    Xd = dense(X)
    if fit_intercept:
        x_mean, y_mean = np.average(Xd, axis=0, weights=sw), np.average(y, weights=sw)
    else:
        x_mean, y_mean = np.zeros(12), 0.0
    root = np.sqrt(sw)
    M = np.vstack([root[:, None] * (Xd - x_mean), np.sqrt(alpha) * np.eye(12)])
    coef, _ = nnls(M, np.r_[root * (y - y_mean), np.zeros(12)])
    assert np.count_nonzero(coef == 0) >= 2
    np.testing.assert_allclose(ours.coef_, coef, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, y_mean - x_mean @ coef, rtol=1e-6, atol=1e-8)
    assert np.all(ours.coef_ >= 0)
    f_ours = ridge_objective(X, y, sw, ours.coef_, ours.intercept_, alpha)
    f_ref = ridge_objective(X, y, sw, coef, y_mean - x_mean @ coef, alpha)
    assert f_ours <= f_ref * (1 + 1e-8)


@pytest.mark.parametrize("solver", ["cd", "gs"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_ridge_explicit_solvers(solver, sparse):
    X, y, sw = regression_data(n=60, d=12, sparse=sparse, seed=16)
    ours = Ridge(alpha=1.5, solver=solver, tol=1e-15).fit(X, y, sample_weight=sw)
    coef, intercept = ridge_reference(X, y, sw, 1.5, True)
    np.testing.assert_allclose(ours.coef_, coef, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, intercept, rtol=1e-6, atol=1e-9)
    assert ours.solver_ == solver
    options = ours.result_.options
    assert options["rule"] == {"cd": "cyclic", "gs": "gs"}[solver]
    assert options["block_size"] == 1


@pytest.mark.parametrize("positive", [False, True], ids=["free", "positive"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("tol", [1e-2, 1e-4, 1e-6])
def test_ridge_tolerance_bounds_the_objective(tol, sparse, positive):
    # coordinate descent (300 coordinates, fewer samples): the objective is
    # within a factor 1 + tol of the optimum's
    X, y, sw = regression_data(n=80, d=300, sparse=sparse, seed=17)
    alpha = 0.5
    model = Ridge(alpha=alpha, tol=tol, positive=positive).fit(X, y, sample_weight=sw)
    if positive:
        ref = Ridge(alpha=alpha, tol=1e-15, positive=True).fit(X, y, sample_weight=sw)
        coef, intercept = ref.coef_, ref.intercept_
    else:
        coef, intercept = ridge_reference(X, y, sw, alpha, True)
    f_opt = ridge_objective(X, y, sw, coef, intercept, alpha)
    f = ridge_objective(X, y, sw, model.coef_, model.intercept_, alpha)
    assert f_opt * (1 - 1e-12) <= f <= f_opt * (1 + tol)


def test_ridge_random_state_reproduces():
    X, y, _ = regression_data(n=80, d=300, sparse=True, seed=17)
    a = Ridge(alpha=1.0, random_state=3).fit(X, y)
    b = Ridge(alpha=1.0, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


POISSON_SHAPES = {"small": (200, 8), "wide": (400, 300)}  # Newton on all; line searches


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("shape", sorted(POISSON_SHAPES))
def test_poisson_optimum_matches_sklearn(shape, sparse, fit_intercept, weighted):
    n, d = POISSON_SHAPES[shape]
    X, y, sw = count_data(n=n, d=d, sparse=sparse, seed=18)
    sw = sw if weighted else None
    alpha = 0.02
    ours = PoissonRegressor(alpha=alpha, fit_intercept=fit_intercept, tol=1e-10)
    ours.fit(X, y, sample_weight=sw)
    ref = sk.PoissonRegressor(alpha=alpha, fit_intercept=fit_intercept, solver="newton-cholesky",
                              tol=1e-12, max_iter=1000).fit(X, y, sample_weight=sw)
    assert ours.result_.converged
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=1e-5)
    f_ours = poisson_objective(X, y, sw, ours.coef_, ours.intercept_, alpha)
    f_ref = poisson_objective(X, y, sw, ref.coef_, ref.intercept_, alpha)
    assert f_ours <= f_ref + 1e-8 * abs(f_ref)
    assert abs(f_ours - f_ref) <= 1e-8 * abs(f_ref)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-4)
    assert ours.score(X, y, sw) == pytest.approx(ref.score(X, y, sw), abs=1e-8)


def test_poisson_tolerance_is_sklearns_gradient_test():
    # the largest partial derivative of scikit-learn's objective (coefficients and
    # intercept) at our solution is at most tol
    X, y, sw = count_data(n=300, d=10, seed=19)
    alpha, tol = 0.1, 1e-6
    model = PoissonRegressor(alpha=alpha, tol=tol).fit(X, y, sample_weight=sw)
    s = sw / sw.sum()
    r = s * (np.exp(X @ model.coef_ + model.intercept_) - y)
    gradient = np.r_[X.T @ r + alpha * model.coef_, r.sum()]
    assert np.abs(gradient).max() <= tol
    # the default starts from the best constant model, as scikit-learn does
    assert model.result_.x.shape == (11,)


@pytest.mark.parametrize("solver,update", [("cd", "newton"), ("gs", "newton"),
                                           ("lbfgs", "lbfgs"), ("newton-cholesky", "newton")])
def test_poisson_explicit_solvers(solver, update):
    # bcd's own configurations and scikit-learn's solver names (one block of
    # every coordinate, the intercept included)
    X, y, sw = count_data(n=150, d=6, sparse=True, seed=20)
    ours = PoissonRegressor(alpha=0.05, solver=solver, tol=1e-10).fit(X, y, sample_weight=sw)
    ref = PoissonRegressor(alpha=0.05, tol=1e-10).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-8)
    assert ours.solver_ == solver and ours.result_.options["update"] == update
    if solver in ("lbfgs", "newton-cholesky"):
        assert ours.result_.options["block_size"] == 7
        theirs = sk.PoissonRegressor(alpha=0.05, solver=solver, tol=1e-10,
                                     max_iter=1000).fit(X.toarray(), y, sample_weight=sw)
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-6)


def test_poisson_score_is_sklearns():
    X, y, sw = count_data(n=120, d=5, seed=21)
    ours = PoissonRegressor(alpha=0.1).fit(X, y)
    ref = sk.PoissonRegressor(alpha=0.1).fit(X, y)
    ref.coef_, ref.intercept_ = ours.coef_.copy(), ours.intercept_      # the same model
    for weights in (None, sw):
        assert ours.score(X, y, weights) == pytest.approx(ref.score(X, y, weights), rel=1e-12)
    assert ours.score(X, y) > 0.2
    assert np.all(ours.predict(X) > 0)


def test_poisson_rejects_negative_targets():
    X, y, _ = count_data(n=20, d=3)
    y[4] = -1.0
    with pytest.raises(ValueError, match="non-negative.*-1.0"):
        PoissonRegressor().fit(X, y)


def test_poisson_all_zero_targets():
    # the optimum drives the intercept to -inf; the fit stops when the gradient
    # of the mean loss, exp(intercept), is at most tol
    X, _, _ = count_data(n=30, d=3, seed=22)
    model = PoissonRegressor(tol=1e-6, max_iter=1000).fit(X, np.zeros(30))
    assert np.all(model.predict(X) <= 1e-6 * 1.01)


LOGISTIC_CASES = [(True, False), (False, True), (True, True)]


@pytest.mark.parametrize("fit_intercept,weighted", LOGISTIC_CASES,
                         ids=["intercept", "weighted", "intercept_weighted"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("penalty", ["l2", "l1", "elasticnet", None])
@pytest.mark.parametrize("n_classes", [2, 3], ids=["binary", "multinomial"])
def test_logistic_optimum_matches_sklearn(n_classes, penalty, sparse, fit_intercept, weighted):
    X, y, sw = classification_data(n_classes, sparse=sparse, seed=n_classes)
    sw = sw if weighted else None
    C, l1_ratio = 0.5, (0.4 if penalty == "elasticnet" else None)
    ours = LogisticRegression(penalty, C=C, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                              tol=1e-10).fit(X, y, sample_weight=sw)
    ref = sk_logistic(penalty, C, l1_ratio, fit_intercept=fit_intercept, tol=1e-12,
                      max_iter=100000)
    if sw is not None and penalty in ("l1", "elasticnet"):
        # saga stops well above the optimum with sample_weight on these data (its
        # objective 1-10% above ours), so its reference is fitted on the rows
        # repeated as many times as their (integer) weights
        repeat = sw.astype(int)
        rows = np.repeat(np.arange(len(y)), repeat)
        ref.fit(X[rows], y[rows])
    else:
        ref.fit(X, y, sample_weight=sw)
    width = 1 if n_classes == 2 else n_classes
    assert ours.coef_.shape == ref.coef_.shape == (width, X.shape[1])
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    f_ours = logistic_objective(X, y, sw, ours.coef_, ours.intercept_, C, penalty, l1_ratio)
    f_ref = logistic_objective(X, y, sw, ref.coef_, ref.intercept_, C, penalty, l1_ratio)
    assert f_ours <= f_ref + 1e-10 * abs(f_ref)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=2e-6)
    ref_intercept = np.asarray(ref.intercept_, dtype=float)
    if width > 1:
        ref_intercept = ref_intercept - ref_intercept.mean()   # softmax-invariant shift
    np.testing.assert_allclose(ours.intercept_, ref_intercept, rtol=0, atol=2e-6)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_logistic_prediction_methods():
    for n_classes in (2, 3):
        X, y, _ = classification_data(n_classes, seed=5)
        labels = np.array(["ant", "bee", "cat"])[y]
        model = LogisticRegression(C=2.0).fit(X, labels)
        proba = model.predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_allclose(model.predict_log_proba(X), np.log(proba), atol=1e-12)
        scores = model.decision_function(X)
        assert scores.shape == ((len(y),) if n_classes == 2 else (len(y), n_classes))
        np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
        assert model.score(X, labels) > 0.7


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_lasso_cv_matches_sklearn(sparse, fit_intercept, weighted):
    X, y, sw = regression_data(n=60, d=15, sparse=sparse, seed=4)
    sw = sw if weighted else None
    ours = LassoCV(alphas=15, cv=KFold(3), fit_intercept=fit_intercept, tol=1e-10,
                   max_iter=100000).fit(X, y, sample_weight=sw)
    ref = sk.LassoCV(alphas=15, cv=KFold(3), fit_intercept=fit_intercept, tol=1e-12,
                     max_iter=100000).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.alphas_, ref.alphas_, rtol=1e-12)
    np.testing.assert_allclose(ours.mse_path_, ref.mse_path_, rtol=1e-6)
    np.testing.assert_allclose(ours.alpha_, ref.alpha_, rtol=1e-12)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-7)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=1e-7)


def _sk_cv_scores(model):
    scores = model.scores_
    if isinstance(scores, dict):                     # legacy: one entry per class
        scores = next(iter(scores.values()))
    return np.asarray(scores).reshape(np.shape(scores)[0], -1)


# saga, scikit-learn's solver for the L1 penalty, leaves the intercept of
# strongly penalized models far from its optimum (at C = 0.01 the intercept of
# the zero model, logit(mean y), is off by 0.08), so the L1 case is compared
# without intercept
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("n_classes,penalty,fit_intercept",
                         [(2, "l2", True), (3, "l2", True), (2, "l1", False)])
def test_logistic_cv_matches_sklearn(n_classes, penalty, fit_intercept, sparse):
    X, y, _ = classification_data(n_classes, n=90, sparse=sparse, seed=6)
    Cs = [0.01, 0.1, 1.0, 10.0]
    ours = LogisticRegressionCV(Cs=Cs, l1_ratios=(0.0 if penalty == "l2" else 1.0,),
                                cv=StratifiedKFold(3), fit_intercept=fit_intercept,
                                scoring="neg_log_loss", use_legacy_attributes=False,
                                tol=1e-10).fit(X, y)
    kwargs = dict(Cs=Cs, cv=StratifiedKFold(3), scoring="neg_log_loss", tol=1e-12,
                  max_iter=100000, solver="lbfgs" if penalty == "l2" else "saga",
                  fit_intercept=fit_intercept)
    params = inspect.signature(sk.LogisticRegressionCV).parameters
    if "use_legacy_attributes" in params:
        kwargs.update(use_legacy_attributes=False, l1_ratios=(0.0 if penalty == "l2" else 1.0,))
    else:
        kwargs.update(penalty=penalty)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ref = sk.LogisticRegressionCV(**kwargs).fit(X, y)
    np.testing.assert_allclose(ours.Cs_, ref.Cs_)
    np.testing.assert_allclose(ours.scores_[:, 0], _sk_cv_scores(ref), rtol=1e-6)
    assert ours.C_ == float(np.ravel(ref.C_)[0])
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=2e-6)


# --------------------------------------------------------------------------- 3. pipelines


def _grid_search(estimator, grid, X, y, sparse):
    scaler = MaxAbsScaler() if sparse else StandardScaler()
    search = GridSearchCV(Pipeline([("scale", scaler), ("model", estimator)]),
                          {f"model__{k}": v for k, v in grid.items()}, cv=3)
    return search.fit(X, y)


PIPELINE_CASES = {
    "Lasso": (Lasso(tol=1e-8), sk.Lasso(tol=1e-10, max_iter=100000),
              {"alpha": [0.003, 0.3]}, "regression"),
    "ElasticNet": (ElasticNet(tol=1e-8), sk.ElasticNet(tol=1e-10, max_iter=100000),
                   {"alpha": [0.003, 0.3], "l1_ratio": [0.2, 0.8]}, "regression"),
    "NonNegativeLinearRegression": (
        NonNegativeLinearRegression(tol=1e-8),
        sk.Lasso(positive=True, tol=1e-10, max_iter=100000), {"alpha": [0.003, 0.3]},
        "regression"),
    "LogisticRegression": (LogisticRegression(tol=1e-8), sk_logistic("l2", tol=1e-10),
                           {"C": [0.001, 1.0]}, "classification"),
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(PIPELINE_CASES))
def test_pipeline_grid_search_chooses_as_sklearn(name, sparse):
    ours, ref, grid, kind = PIPELINE_CASES[name]
    if kind == "regression":
        X, y, _ = regression_data(n=60, d=10, sparse=sparse, seed=7)
    else:
        X, y, _ = classification_data(3, n=60, sparse=sparse, seed=7)
    a = _grid_search(ours, grid, X, y, sparse)
    b = _grid_search(ref, grid, X, y, sparse)
    assert a.best_params_ == b.best_params_
    np.testing.assert_allclose(a.cv_results_["mean_test_score"],
                               b.cv_results_["mean_test_score"], rtol=1e-5)
    np.testing.assert_allclose(a.predict(X[:5]), b.predict(X[:5]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_pipeline_grid_search_over_cv_estimators(sparse):
    X, y, _ = regression_data(n=60, d=10, sparse=sparse, seed=8)
    search = _grid_search(LassoCV(alphas=8, cv=3), {"eps": [1e-2, 1e-3]}, X, y, sparse)
    assert search.best_params_["model__eps"] in (1e-2, 1e-3)
    assert search.score(X, y) > 0.5
    X, y, _ = classification_data(2, n=60, sparse=sparse, seed=8)
    search = _grid_search(LogisticRegressionCV(Cs=[0.1, 1.0, 10.0], cv=3),
                          {"penalty": ["l1", "l2"]}, X, y, sparse)
    assert search.best_params_["model__penalty"] in ("l1", "l2")
    assert search.score(X, y) > 0.6


# --------------------------------------------------------------------------- 4. details


def test_missing_sklearn_names_the_extra(monkeypatch):
    for name in [m for m in sys.modules if m.startswith("bcd.linear_model")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ImportError, match=r"bcd\[sklearn\]"):
        importlib.import_module("bcd.linear_model")


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_float32_input(sparse):
    X, y, _ = regression_data(sparse=sparse, seed=9)
    X32 = X.astype(np.float32)
    a = Lasso(alpha=0.05, tol=1e-8).fit(X32, y)
    b = Lasso(alpha=0.05, tol=1e-8).fit(X, y)
    assert a.coef_.dtype == np.float32 and a.intercept_.dtype == np.float32
    assert a.predict(X32).dtype == np.float32
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-5)
    for make in (lambda: Ridge(alpha=2.0, tol=1e-8), lambda: PoissonRegressor(tol=1e-8)):
        target = np.abs(y) if isinstance(make(), PoissonRegressor) else y
        a, b = make().fit(X32, target), make().fit(X, target)
        assert a.coef_.dtype == np.float32 and a.intercept_.dtype == np.float32
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-5)
    X, y, _ = classification_data(3, sparse=sparse, seed=9)
    X32 = X.astype(np.float32)
    a = LogisticRegression(tol=1e-8).fit(X32, y)
    b = LogisticRegression(tol=1e-8).fit(X, y)
    assert a.coef_.dtype == np.float32 and a.intercept_.dtype == np.float32
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a.predict_proba(X32), b.predict_proba(X), atol=1e-5)


@pytest.fixture
def problem_spy(monkeypatch):
    """Records the matrix of every problem the estimators build (and of the
    compiled elastic-net paths of the cross-validation)."""
    from bcd.core.enetpath import EnetPath
    from bcd.linear_model import _coordinate_descent, _cv, _glm, _logistic, _ridge

    seen = []

    def spy(cls):
        def build(A, *args, **kwargs):
            seen.append(A)
            return cls(A, *args, **kwargs)
        return build

    monkeypatch.setattr(_coordinate_descent, "LeastSquares", spy(bcd.LeastSquares))
    monkeypatch.setattr(_ridge, "LeastSquares", spy(bcd.LeastSquares))
    monkeypatch.setattr(_glm, "Poisson", spy(bcd.Poisson))
    monkeypatch.setattr(_logistic, "Logistic", spy(bcd.Logistic))
    monkeypatch.setattr(_logistic, "Multinomial", spy(bcd.Multinomial))
    monkeypatch.setattr(_cv, "EnetPath", spy(EnetPath))
    return seen


@pytest.mark.parametrize("estimator", [
    Lasso(alpha=0.05), ElasticNet(alpha=0.05), NonNegativeLinearRegression(),
    NonNegativeLinearRegression(alpha=0.05), Ridge(), Ridge(positive=True),
    PoissonRegressor(), LogisticRegression(), LogisticRegression(penalty="l1"),
    LassoCV(alphas=4, cv=2), LogisticRegressionCV(Cs=2, cv=2)], ids=lambda e: repr(e))
def test_sparse_input_is_never_densified(estimator, problem_spy):
    regression = not isinstance(estimator, (LogisticRegression, LogisticRegressionCV))
    X, y, sw = (regression_data(n=40, d=8, sparse=True) if regression
                else classification_data(3, n=40, d=8, sparse=True))
    if isinstance(estimator, PoissonRegressor):
        X, y, sw = count_data(n=40, d=8, sparse=True)
    estimator.fit(X, y, sample_weight=sw)
    assert problem_spy
    for A in problem_spy:
        assert sp.issparse(A)
        # the data and at most two intercept columns (+1 and -1) of n entries each
        assert A.nnz <= X.nnz + 2 * X.shape[0]


@pytest.mark.parametrize("make", [
    lambda: (Lasso(alpha=0.05, warm_start=True), "alpha", 0.04, "regression"),
    lambda: (ElasticNet(alpha=0.05, warm_start=True), "alpha", 0.04, "regression"),
    lambda: (LogisticRegression(C=1.0, penalty="l1", warm_start=True), "C", 1.3, "binary"),
    lambda: (LogisticRegression(C=1.0, warm_start=True), "C", 1.05, "multinomial"),
    lambda: (PoissonRegressor(alpha=0.01, warm_start=True, solver="cd"), "alpha", 0.011,
             "counts"),
], ids=["Lasso", "ElasticNet", "LogisticL1", "Multinomial", "Poisson"])
def test_warm_start_uses_previous_solution(make):
    model, name, value, kind = make()
    if kind == "regression":
        X, y, _ = regression_data(n=100, d=60, sparse=True, seed=10)
    elif kind == "counts":
        X, y, _ = count_data(n=200, d=20, sparse=True, seed=10)
    else:
        X, y, _ = classification_data(2 if kind == "binary" else 3, n=200, d=20, seed=10)
    model.set_params(tol=1e-8).fit(X, y)
    model.set_params(**{name: value}).fit(X, y)
    cold = type(model)(**dict(model.get_params(), warm_start=False)).fit(X, y)
    assert np.all(model.n_iter_ < cold.n_iter_)
    np.testing.assert_allclose(model.coef_, cold.coef_, rtol=0, atol=1e-5)


def test_inputs_are_not_modified():
    for sparse in (False, True):
        X, y, sw = regression_data(sparse=sparse)
        copies = [X.copy(), y.copy(), sw.copy()]
        Lasso(alpha=0.01).fit(X, y, sample_weight=sw)
        LassoCV(alphas=3, cv=2).fit(X, y, sample_weight=sw)
        Ridge(copy_X=False).fit(X, y, sample_weight=sw)
        Ridge(positive=True, fit_intercept=False).fit(X, y, sample_weight=sw)
        PoissonRegressor().fit(X, np.abs(y), sample_weight=sw)
        Xc, yc, swc = classification_data(3, sparse=sparse)
        class_copies = [Xc.copy(), yc.copy(), swc.copy()]
        LogisticRegression().fit(Xc, yc, sample_weight=swc)
        for before, after in zip(copies + class_copies, [X, y, sw, Xc, yc, swc]):
            np.testing.assert_array_equal(dense(before), dense(after))


def test_convergence_warning_is_sklearns_and_issued_once():
    X, y, _ = regression_data(n=50, d=30, seed=11)
    Xc, yc, _ = classification_data(3, seed=11)
    for model, data in [(Lasso(alpha=1e-4, max_iter=1, tol=1e-12), (X, y)),
                        (LassoCV(alphas=5, cv=2, max_iter=1, tol=1e-12), (X, y)),
                        (LogisticRegression(max_iter=1, tol=1e-12, solver_options=dict(
                            rule="cyclic", block_size=1, update="gradient")), (Xc, yc))]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(*data)
        ours = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
        solver = [w for w in caught if issubclass(w.category, bcd.ConvergenceWarning)]
        assert len(ours) == 1 and not solver, [str(w.message) for w in caught]
        assert type(model).__name__ in str(ours[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Lasso(alpha=0.1).fit(X, y)


def test_solver_options_are_passed_on():
    X, y, _ = regression_data(seed=12)
    default = Lasso(alpha=0.05, tol=1e-10).fit(X, y)
    explicit = Lasso(alpha=0.05, tol=1e-10, solver_options=dict(
        rule="gs", blocks="variable", block_size=3, update="gradient")).fit(X, y)
    np.testing.assert_allclose(explicit.coef_, default.coef_, atol=1e-7)
    assert explicit.n_iter_ != default.n_iter_
    with pytest.warns(ConvergenceWarning):
        Lasso(alpha=0.05, solver_options={"max_iter": 1, "tol": 1e-14}).fit(X, y)
    with pytest.raises(ValueError, match="x0"):
        Lasso(solver_options={"x0": np.zeros(12)}).fit(X, y)


def test_not_fitted():
    for model in (Lasso(), Ridge(), PoissonRegressor(), LogisticRegression(), LassoCV(),
                  LogisticRegressionCV()):
        with pytest.raises(NotFittedError):
            model.predict(np.ones((2, 3)))


BAD_REGRESSION = [
    (Lasso(alpha=-1.0), {}, "alpha"),
    (ElasticNet(l1_ratio=1.5), {}, "l1_ratio"),
    (ElasticNet(l1_ratio=-0.1), {}, "l1_ratio"),
    (Lasso(tol=-1.0), {}, "tol"),
    (NonNegativeLinearRegression(alpha=-0.5), {}, "alpha"),
    (Lasso(), {"sample_weight": np.ones(7)}, "sample_weight|samples"),
    (Lasso(), {"sample_weight": -np.ones(20)}, "[Nn]egative"),
    (LassoCV(alphas=[-1.0, 0.5]), {}, "alphas"),
    (Ridge(alpha=-1.0), {}, "alpha"),
    (Ridge(alpha=np.nan), {}, "alpha"),
    (Ridge(alpha=np.array([-1.0])), {}, "alpha"),
    (Ridge(alpha=np.array([np.nan])), {}, "alpha"),
    (Ridge(alpha=np.array([np.inf])), {}, "alpha"),
    (Ridge(alpha=np.array([1.0, 2.0])), {}, "alpha has 2 values but y has 1 target"),
    (Ridge(alpha=np.ones((1, 1))), {}, "alpha must be a number or a 1-d array"),
    (Ridge(alpha="a"), {}, "alpha"),
    (Ridge(solver="cholesky"), {}, "solver"),
    (Ridge(tol=-1.0), {}, "tol"),
    (PoissonRegressor(alpha=-1.0), {}, "alpha"),
    (PoissonRegressor(alpha=np.nan), {}, "alpha"),
    (PoissonRegressor(solver="newton"), {}, "solver"),
    (PoissonRegressor(max_iter=0), {}, "max_iter"),
]


@pytest.mark.parametrize("model,kwargs,match", BAD_REGRESSION,
                         ids=lambda v: repr(v) if not isinstance(v, dict) else "")
def test_bad_regression_input(model, kwargs, match):
    X, y, _ = regression_data(n=20, d=4)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y, **kwargs)


BAD_CLASSIFICATION = [
    (LogisticRegression(C=-1.0), "C"),
    (LogisticRegression(C=0.0), "C"),
    (LogisticRegression(penalty="l3"), "penalty"),
    (LogisticRegression(penalty="elasticnet", l1_ratio=None), "l1_ratio"),
    (LogisticRegression(penalty="elasticnet", l1_ratio=2.0), "l1_ratio"),
    (LogisticRegressionCV(Cs=[0.0, 1.0]), "Cs"),
    (LogisticRegressionCV(penalty="elasticnet"), "l1_ratio"),
]


@pytest.mark.parametrize("model,match", BAD_CLASSIFICATION, ids=lambda v: repr(v))
def test_bad_classification_input(model, match):
    X, y, _ = classification_data(2, n=20, d=3)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)


@pytest.mark.parametrize("model", [Lasso(), Ridge(), PoissonRegressor(), LogisticRegression(),
                                   LassoCV(cv=2), LogisticRegressionCV(cv=2)],
                         ids=lambda e: repr(e))
def test_nan_and_inf_rejected(model):
    X, y, _ = classification_data(2, n=20, d=3)
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError):
            model.fit(Xb, y)
        yb = y.astype(float)
        yb[2] = bad
        with pytest.raises(ValueError):
            model.fit(X, yb)


def test_single_class_rejected():
    X = np.random.RandomState(0).standard_normal((10, 3))
    for model in (LogisticRegression(), LogisticRegressionCV(cv=2)):
        with pytest.raises(ValueError, match="class"):
            model.fit(X, np.zeros(10))


def test_continuous_target_rejected_by_classifiers():
    X, y, _ = regression_data(n=20, d=3)
    with pytest.raises(ValueError, match="[Uu]nknown label type"):
        LogisticRegression().fit(X, y)


def test_feature_names_are_kept():
    pd = pytest.importorskip("pandas")
    X, y, _ = regression_data(n=30, d=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = Lasso(alpha=0.01).fit(frame, y)
    np.testing.assert_array_equal(model.feature_names_in_, ["a", "b", "c"])


@pytest.mark.parametrize("module", ["bcd.linear_model._coordinate_descent",
                                    "bcd.linear_model._logistic", "bcd.linear_model._cv",
                                    "bcd.linear_model._ridge", "bcd.linear_model._glm"])
def test_docstring_examples(module):
    failures, attempted = doctest.testmod(importlib.import_module(module),
                                          optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failures == 0


def test_public_names():
    assert sorted(lm.__all__) == sorted(["Lasso", "ElasticNet", "NonNegativeLinearRegression",
                                         "Ridge", "LogisticRegression", "PoissonRegressor",
                                         "LinearSVC", "LassoCV", "ElasticNetCV",
                                         "LogisticRegressionCV"])
    for name in lm.__all__:
        cls = getattr(lm, name)
        assert issubclass(cls, sklearn.base.BaseEstimator)
        assert "Examples" in cls.__doc__
