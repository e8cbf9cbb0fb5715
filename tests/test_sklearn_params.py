"""scikit-learn's parameters of the linear estimators and LabelPropagation,
checked against scikit-learn itself or an optimality certificate."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn")
import sklearn.linear_model as sk  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import KFold, StratifiedKFold  # noqa: E402

from bcd._validation import LazyRandomState, seed_words  # noqa: E402
from bcd.linear_model import (ElasticNet, ElasticNetCV, Lasso, LassoCV,  # noqa: E402
                              LogisticRegression, LogisticRegressionCV)
from bcd.semi_supervised import LabelPropagation  # noqa: E402


def _classification(n=120, d=15, seed=0, classes=2):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, d))
    scores = X[:, :3] @ rng.standard_normal((3, classes)) + rng.standard_normal((n, classes))
    return X, np.argmax(scores, axis=1)


def _regression(n=60, d=12, seed=0, targets=None):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((d, targets or 1)) * (rng.uniform(size=(d, 1)) < 0.4)
    Y = X @ W + 0.1 * rng.standard_normal((n, targets or 1))
    return X, (Y[:, 0] if targets is None else Y)


def _kkt_l1_logistic(model, X, y, C):
    """Largest violation of the L1 optimality conditions of the binary model."""
    z = X @ model.coef_.ravel() + model.intercept_[0]
    g = X.T @ (1 / (1 + np.exp(-z)) - y)          # gradient of the summed log-loss
    w = model.coef_.ravel()
    viol = np.where(w != 0, np.abs(C * g + np.sign(w)), np.maximum(np.abs(C * g) - 1, 0))
    return float(viol.max())


def test_l1_ratio_alone_selects_the_l1_penalty():
    """LogisticRegression(l1_ratio=1.0, C=0.1) is the L1 model, as in scikit-learn >= 1.8."""
    X, y = _classification()
    ours = LogisticRegression(l1_ratio=1.0, C=0.1, tol=1e-10).fit(X, y)
    ref = sk.LogisticRegression(l1_ratio=1.0, C=0.1, solver="saga", tol=1e-12,
                                max_iter=100000).fit(X, y)
    assert np.count_nonzero(ours.coef_) == np.count_nonzero(ref.coef_) < X.shape[1]
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    assert _kkt_l1_logistic(ours, X, y, 0.1) < 1e-6


def test_c_inf_is_unpenalized_and_penalty_is_deprecated():
    X, y = _classification(seed=1)
    free = LogisticRegression(C=np.inf, tol=1e-10).fit(X, y)
    # no penalty: the gradient of the log-loss vanishes
    z = X @ free.coef_.ravel() + free.intercept_[0]
    p = 1 / (1 + np.exp(-z))
    assert np.max(np.abs(X.T @ (p - y))) < 1e-6 and abs(np.sum(p - y)) < 1e-6
    with pytest.warns(FutureWarning, match="'penalty' was deprecated"):
        old = LogisticRegression(penalty=None, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(old.coef_, free.coef_, atol=1e-6)
    with pytest.warns(FutureWarning, match="'l1_ratio=None' was deprecated"):
        LogisticRegression(l1_ratio=None).fit(X, y)


@pytest.mark.parametrize("solver", ["auto", "lbfgs", "newton-cg", "newton-cholesky",
                                    "liblinear", "sag", "saga"])
def test_every_solver_name_reaches_the_same_model(solver):
    X, y = _classification(seed=2)
    ref = LogisticRegression(C=0.5, tol=1e-10).fit(X, y)
    ours = LogisticRegression(C=0.5, solver=solver, tol=1e-10, max_iter=100000,
                              random_state=3).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)


def test_class_weight_is_a_sample_weight():
    X, y = _classification(classes=3, seed=4)
    weights = {0: 2.0, 1: 0.5, 2: 1.0}
    ours = LogisticRegression(class_weight=weights, tol=1e-10).fit(X, y)
    same = LogisticRegression(tol=1e-10).fit(X, y, sample_weight=np.vectorize(weights.get)(y))
    np.testing.assert_allclose(ours.coef_, same.coef_, atol=1e-7)
    balanced = LogisticRegression(class_weight="balanced", tol=1e-10).fit(X, y)
    ref = sk.LogisticRegression(class_weight="balanced", tol=1e-12, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(balanced.coef_ - balanced.coef_.mean(axis=0),
                               ref.coef_ - ref.coef_.mean(axis=0), atol=1e-4)


def test_max_iter_zero_and_tol_zero():
    X, y = _classification(seed=5)
    with pytest.warns(ConvergenceWarning):
        model = LogisticRegression(max_iter=0).fit(X, y)
    assert model.n_iter_[0] == 0 and not np.any(model.coef_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = Lasso(alpha=0.05, tol=0.0, max_iter=50).fit(*_regression())
    assert model.n_iter_ >= 1


def test_multi_target_lasso_is_one_fit_per_column():
    X, Y = _regression(targets=3, seed=6)
    both = ElasticNet(alpha=0.05, l1_ratio=0.7, tol=1e-10).fit(X, Y)
    assert both.coef_.shape == (3, X.shape[1]) and both.intercept_.shape == (3,)
    for t in range(3):
        one = ElasticNet(alpha=0.05, l1_ratio=0.7, tol=1e-10).fit(X, Y[:, t])
        np.testing.assert_allclose(both.coef_[t], one.coef_, atol=1e-10)
    ref = sk.ElasticNet(alpha=0.05, l1_ratio=0.7, tol=1e-12, max_iter=100000).fit(X, Y)
    np.testing.assert_allclose(both.coef_, ref.coef_, atol=1e-6)
    assert both.predict(X).shape == Y.shape


def test_warm_start_from_a_hand_set_coef():
    X, y = _regression(seed=7)
    solution = Lasso(alpha=0.05, tol=1e-10).fit(X, y)
    model = Lasso(alpha=0.05, tol=1e-6, warm_start=True)
    model.coef_ = solution.coef_.copy()          # set by hand: no intercept_ yet
    model.intercept_ = solution.intercept_
    model.fit(X, y)
    assert model.n_iter_ == 0                    # the start meets the tolerance
    model = Lasso(alpha=0.05, warm_start=True)
    model.coef_ = np.zeros(X.shape[1])
    model.fit(X, y)                              # no AttributeError without intercept_
    np.testing.assert_allclose(model.coef_, solution.coef_, atol=1e-3)


def test_sparsify_keeps_predictions():
    X, y = _classification(seed=8)
    model = LogisticRegression(l1_ratio=1.0, C=0.05).fit(X, y)
    dense = model.decision_function(X)
    model.sparsify()
    assert sp.issparse(model.coef_)
    np.testing.assert_allclose(model.decision_function(X), dense)
    assert isinstance(model.densify().coef_, np.ndarray)
    reg = Lasso(alpha=0.1).fit(*_regression())
    pred = reg.predict(_regression()[0])
    np.testing.assert_allclose(reg.sparsify().predict(_regression()[0]), pred)


def test_logistic_cv_layouts_match_sklearn():
    X, y = _classification(classes=3, seed=9, n=90)
    kwargs = dict(Cs=[0.1, 1.0, 10.0], cv=StratifiedKFold(3), scoring="neg_log_loss")
    for extra in (dict(use_legacy_attributes=True), dict(use_legacy_attributes=False),
                  dict(use_legacy_attributes=True, l1_ratios=(0.5, 1.0)),
                  dict(use_legacy_attributes=False, l1_ratios=np.array([0.5, 1.0]), refit=False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = LogisticRegressionCV(**kwargs, **extra, tol=1e-8).fit(X, y)
            ref = sk.LogisticRegressionCV(**kwargs, **extra, solver="saga", tol=1e-8,
                                          max_iter=20000).fit(X, y)
        for name in ("scores_", "coefs_paths_"):
            a, b = getattr(ours, name), getattr(ref, name)
            if isinstance(b, dict):
                assert isinstance(a, dict) and list(a) == list(b)
                assert all(a[k].shape == b[k].shape for k in b)
            else:
                assert a.shape == b.shape
        assert np.shape(ours.C_) == np.shape(ref.C_)
        assert np.shape(ours.l1_ratio_) == np.shape(ref.l1_ratio_)
        assert np.shape(ours.n_iter_) == np.shape(ref.n_iter_)
        np.testing.assert_allclose(np.ravel(ours.C_), np.ravel(ref.C_))


def test_elastic_net_cv_matches_sklearn_and_runs_folds_in_parallel():
    X, y = _regression(n=80, seed=10)
    kwargs = dict(l1_ratio=[0.5, 1.0], alphas=12, cv=KFold(4))
    ours = ElasticNetCV(**kwargs, tol=1e-10).fit(X, y)
    ref = sk.ElasticNetCV(**kwargs, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.alphas_, ref.alphas_)
    np.testing.assert_allclose(ours.mse_path_, ref.mse_path_, rtol=1e-5)
    assert (ours.alpha_, ours.l1_ratio_) == (ref.alpha_, ref.l1_ratio_)
    parallel = ElasticNetCV(**kwargs, tol=1e-10, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(parallel.mse_path_, ours.mse_path_)
    lasso = LassoCV(alphas=12, cv=KFold(4), tol=1e-10, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(lasso.mse_path_, ours.mse_path_[1], rtol=1e-6)


def test_groups_need_metadata_routing_as_in_sklearn():
    X, y = _regression(seed=11)
    groups = np.arange(X.shape[0]) % 3
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        LassoCV(alphas=5, cv=3).fit(X, y, groups=groups)


def test_callable_kernel_equals_the_rbf_graph():
    from sklearn.metrics.pairwise import rbf_kernel
    rng = np.random.RandomState(12)
    X = np.r_[rng.standard_normal((30, 2)), rng.standard_normal((30, 2)) + 4]
    y = np.full(60, -1)
    y[[0, 1, 30, 31]] = [0, 0, 1, 1]
    ours = LabelPropagation(kernel=lambda a, b: rbf_kernel(a, b, gamma=0.5), tol=1e-10).fit(X, y)
    rbf = LabelPropagation(kernel="rbf", gamma=0.5, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(ours.label_distributions_, rbf.label_distributions_, atol=1e-8)
    np.testing.assert_allclose(ours.predict_proba(X[:5] + 0.1), rbf.predict_proba(X[:5] + 0.1),
                               atol=1e-8)
    # the harmonic closed form on the graph's transition matrix
    T = ours._build_graph().toarray()
    u, lab = np.flatnonzero(y == -1), np.flatnonzero(y != -1)
    Y = np.eye(2)[y[lab]]
    F = np.linalg.solve(np.eye(u.size) - T[np.ix_(u, u)], T[np.ix_(u, lab)] @ Y)
    np.testing.assert_allclose(ours.label_distributions_[u], F / F.sum(1, keepdims=True),
                               atol=1e-6)


def test_lazy_random_state_gives_the_random_state_stream():
    for seed in (0, 7):
        lazy, real = LazyRandomState(seed), np.random.RandomState(seed)
        assert [seed_words(lazy) for _ in range(10)] == [seed_words(real) for _ in range(10)]
        lazy, real = LazyRandomState(seed), np.random.RandomState(seed)
        seed_words(lazy), seed_words(real)
        np.testing.assert_array_equal(lazy.permutation(9), real.permutation(9))
        assert seed_words(lazy) == seed_words(real)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_label_propagation_build_graph_is_sklearns_transition_matrix(kind):
    # a non-symmetric callable kernel: scikit-learn's private _build_graph
    # scales the rows of kernel(X, X) to sum to 1; bcd's returns the same
    import sklearn.semi_supervised as sk_semi
    X = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 3.0], [0.0, 2.0]])
    y = [0, 1, -1, -1]
    A = np.array([[1.0, 1.0, 0.0, 2.0], [2.0, 1.0, 1.0, 0.0],
                  [0.0, 1.0, 3.0, 1.0], [1.0, 0.0, 0.5, 0.0]])

    def kernel(a, b):
        if a.shape[0] != A.shape[0] or b.shape[0] != A.shape[0]:
            return np.ones((b.shape[0], a.shape[0])).T
        return sp.csr_matrix(A) if kind == "sparse" else A.copy()

    ours = LabelPropagation(kernel=kernel).fit(X, y)._build_graph()
    theirs = sk_semi.LabelPropagation(kernel=kernel).fit(X, y)._build_graph()
    assert sp.issparse(ours) == sp.issparse(theirs)
    dense = lambda M: M.toarray() if sp.issparse(M) else M  # noqa: E731
    np.testing.assert_allclose(dense(ours), dense(theirs), rtol=1e-14)
    np.testing.assert_allclose(dense(ours).sum(axis=1), 1.0)


def test_label_propagation_rbf_closed_form_with_build_graph():
    # the harmonic solution satisfies f_U = T_UU f_U + T_UL y_L with the rbf
    # transition matrix (diagonal included), dense as in scikit-learn
    rng = np.random.RandomState(0)
    X = rng.standard_normal((40, 3))
    y = (X[:, 0] > 0).astype(int)
    y[::3] = -1
    model = LabelPropagation(gamma=0.3, tol=1e-12).fit(X, y)
    T = model._build_graph()
    assert isinstance(T, np.ndarray)
    np.testing.assert_allclose(np.diag(T), 1.0 / np.exp(-0.3 * ((X[:, None] - X[None]) ** 2)
                                                       .sum(-1)).sum(axis=1))
    U, L = np.flatnonzero(y == -1), np.flatnonzero(y != -1)
    Y = np.eye(2)[y[L]]
    F_U = np.linalg.solve(np.eye(U.size) - T[np.ix_(U, U)], T[np.ix_(U, L)] @ Y)
    np.testing.assert_allclose(model.label_distributions_[U], F_U, atol=1e-8)
