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
    if solver == "liblinear":
        # liblinear's model penalizes the intercept: scikit-learn's liblinear
        ref = sk.LogisticRegression(C=0.5, solver=solver, tol=1e-10, max_iter=100000).fit(X, y)
    else:
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
    # the harmonic closed form on the graph's transition matrix (dense, as
    # the kernel returns it, with its unit diagonal, which cancels)
    T = ours._build_graph()
    assert isinstance(T, np.ndarray)
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


# ------------------------------------------------ scikit-learn's own suite: fixes

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("positive", [False, True])
def test_enet_cv_eps_one_is_alpha_max_as_in_sklearn(sparse, positive):
    X = np.array([[3.0, -1.0], [2.0, -5.0], [5.0, -3.0], [1.0, -4.0]])
    y = X @ np.array([1.0, -2.0])
    sw = np.array([1.0, 10.0, 1.0, 10.0])
    Xf = sp.csc_matrix(X) if sparse else X
    ours = ElasticNetCV(alphas=1, cv=2, eps=1, positive=positive).fit(Xf, y, sample_weight=sw)
    theirs = sk.ElasticNetCV(alphas=1, cv=2, eps=1, positive=positive).fit(
        Xf, y, sample_weight=sw)
    np.testing.assert_allclose(ours.alpha_, theirs.alpha_, rtol=1e-12)
    # at alpha_max the model is exactly 0 (no solve: w = 0 meets the KKT conditions)
    assert np.all(ours.coef_ == 0)
    np.testing.assert_allclose(ours.intercept_, np.average(y, weights=sw), rtol=1e-12)
    below = ElasticNet(alpha=0.99 * ours.alpha_, tol=1e-8, positive=positive).fit(
        Xf, y, sample_weight=sw)
    assert np.max(np.abs(below.coef_)) > 1e-3


@pytest.mark.parametrize("alphas, error, match", [
    ((1, -1, -100), ValueError, r"alphas\[1\] == -1, must be >= 0"),
    ((1, 1.0, "1"), TypeError, r"alphas\[2\] must be an instance of float, not str"),
    ((0.5, np.inf), ValueError, r"alphas\[1\] == inf, must be finite"),
])
def test_lasso_cv_alphas_checked_entry_by_entry(alphas, error, match):
    X, y = _regression(seed=3)
    with pytest.raises(error, match=match):
        LassoCV(alphas=alphas).fit(X, y)
    if np.all(np.isfinite(np.asarray(alphas, dtype=object)[:2].astype(float))) \
            and "inf" not in match:
        # scikit-learn's wording, for the entries it checks (not infinity)
        with pytest.raises(error, match=match):
            sk.LassoCV(alphas=alphas).fit(X, y)


def test_given_gram_matrix_checked_as_in_sklearn():
    X, y = _regression(seed=4)
    Xc = X - X.mean(axis=0)
    rng = np.random.RandomState(0)
    garbage = rng.standard_normal(X.shape)
    for Est in (ElasticNet, sk.ElasticNet):
        with pytest.raises(ValueError, match="Gram matrix.*did not pass validation"):
            Est(alpha=0.01, precompute=garbage.T @ garbage).fit(Xc, y)
        # X not centered, with an intercept: the Gram matrix given does not apply
        with pytest.warns(UserWarning, match="Gram matrix was provided but X was centered"):
            Est(alpha=0.01, precompute=X.T @ X).fit(X, y)
    # a correct one is accepted (and gives the model without it)
    ours = ElasticNet(alpha=0.01, fit_intercept=False, tol=1e-10,
                      precompute=X.T @ X).fit(X, y)
    theirs = sk.ElasticNet(alpha=0.01, fit_intercept=False, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-7)
    with pytest.raises(ValueError, match="precompute"):
        ElasticNet(precompute=np.eye(3)).fit(Xc, y)


def test_enet_overflowing_centering_is_named():
    rng = np.random.RandomState(0)
    X = np.finfo(np.float64).max * rng.uniform(size=(10, 2))
    y = rng.randint(0, 2, size=10).astype(float)
    with pytest.raises(ValueError, match="X is too large: centering it"):
        ElasticNet(alpha=0.1).fit(X, y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_cv_folds_missing_a_class_fit_every_class(n_classes):
    # KFold on sorted labels: every training fold lacks the held-out class;
    # the folds are fitted with every class, as scikit-learn does
    from sklearn.metrics import brier_score_loss
    y = np.array(["a", "a", "b", "b", "c", "c"])[: 2 * n_classes]
    X = np.arange(2 * n_classes, dtype=float)[:, None]
    kw = dict(cv=KFold(n_splits=n_classes), scoring="neg_brier_score",
              Cs=np.logspace(-6, 6, 5), l1_ratios=(0,), use_legacy_attributes=False,
              tol=1e-10)
    ours = LogisticRegressionCV(**kw).fit(X, y)
    theirs = sk.LogisticRegressionCV(**kw).fit(X, y)
    assert ours.C_ == theirs.C_ == 1e-6
    np.testing.assert_allclose(ours.scores_, theirs.scores_, rtol=1e-5, atol=1e-6)
    # the scores are the Brier scores of the folds' models, told every class
    for i, (train, test) in enumerate(KFold(n_splits=n_classes).split(X, y)):
        model = LogisticRegression(C=ours.C_).fit(X, y)
        model.coef_ = ours.coefs_paths_[i, 0, 0, :, :-1]
        model.intercept_ = ours.coefs_paths_[i, 0, 0, :, -1]
        kwargs = {"pos_label": "b"} if n_classes == 2 else {}
        bs = brier_score_loss(y[test], model.predict_proba(X[test]), labels=ours.classes_,
                              **kwargs)
        np.testing.assert_allclose(-ours.scores_[i, 0, 0], bs, rtol=1e-10)


def test_logistic_cv_routes_sample_weight_to_the_scorer_only_on_request():
    from sklearn import config_context
    from sklearn.metrics import get_scorer
    X, y = _classification(n=300, d=6, seed=5)
    sw = np.ones(300)
    sw[:150] = 3.0
    with config_context(enable_metadata_routing=True):
        fitted = {}
        for requested in (False, True):
            scorer = get_scorer("neg_log_loss").set_score_request(sample_weight=requested)
            kw = dict(scoring=scorer, Cs=4, cv=3, l1_ratios=(0,), tol=1e-10,
                      use_legacy_attributes=False)
            ours = LogisticRegressionCV(**kw).fit(X, y, sample_weight=sw)
            theirs = sk.LogisticRegressionCV(**kw).fit(X, y, sample_weight=sw)
            np.testing.assert_allclose(ours.scores_, theirs.scores_, rtol=1e-6)
            fitted[requested] = ours
        assert not np.allclose(fitted[False].scores_, fitted[True].scores_)
        with pytest.raises(TypeError, match="not routed to any object"):
            fitted[False].score(X, y, sample_weight=sw)
        np.testing.assert_allclose(fitted[True].score(X, y, sample_weight=sw),
                                   -__import__("sklearn.metrics").metrics.log_loss(
                                       y, fitted[True].predict_proba(X), sample_weight=sw))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        fitted[True].score(X, y, extra=1.0)


def test_logistic_cv_default_scorer_and_ovr_probabilities():
    assert LogisticRegressionCV()._get_scorer()._score_func.__name__ == "accuracy_score"
    X, y = _classification(n=60, d=5, seed=6, classes=3)
    ours = LogisticRegression(tol=1e-10).fit(X, y)
    theirs = sk.LogisticRegression(tol=1e-10).fit(X, y)
    theirs.coef_, theirs.intercept_ = ours.coef_, ours.intercept_
    np.testing.assert_allclose(ours._predict_proba_lr(X), theirs._predict_proba_lr(X),
                               rtol=1e-12)
    Xb, yb = _classification(n=60, d=5, seed=6)
    ours = LogisticRegression().fit(Xb, yb)
    np.testing.assert_allclose(ours._predict_proba_lr(Xb), ours.predict_proba(Xb), rtol=1e-12)


def test_liblinear_dual_reaches_the_accuracy_of_tol():
    # the dual's duality-gap test is scaled so that tol means the same accuracy
    # as the primal KKT test; the CV refit with liblinear starts from zero, as
    # scikit-learn's, and equals LogisticRegression's fit
    rng = np.random.RandomState(42)
    X = rng.randn(50, 5)
    y = np.sign(X @ (5 * rng.randn(5)))
    exact = sk.LogisticRegression(fit_intercept=False, tol=1e-12, max_iter=10000).fit(X, y)
    for dual in (True, False):
        for tol, err in ((1e-4, 1e-3), (1e-8, 1e-6)):
            ours = LogisticRegression(solver="liblinear", dual=dual, fit_intercept=False,
                                      tol=tol).fit(X, y)
            np.testing.assert_allclose(ours.coef_, exact.coef_, atol=err)
    single = LogisticRegression(C=1.0, fit_intercept=False, solver="liblinear").fit(X, y)
    cv = LogisticRegressionCV(Cs=[1.0], l1_ratios=(0.0,), fit_intercept=False, cv=3,
                              solver="liblinear", scoring="neg_log_loss",
                              use_legacy_attributes=False).fit(X, y)
    np.testing.assert_array_equal(cv.coef_, single.coef_)


@pytest.mark.parametrize("scaling", [1.0, 1e4])
@pytest.mark.parametrize("l1_ratio", [0.0, 1.0])
def test_liblinear_penalizes_the_intercept_as_sklearn(scaling, l1_ratio):
    # liblinear's model: the intercept is a synthetic feature of value
    # intercept_scaling, penalized like the coefficients
    rng = np.random.RandomState(42)
    X = np.concatenate((rng.randn(100, 2) + [1, 1], rng.randn(100, 2)))
    y = np.array([1] * 100 + [-1] * 100)
    kw = dict(C=0.05, tol=1e-10, intercept_scaling=scaling, solver="liblinear",
              l1_ratio=l1_ratio, max_iter=10000)
    ours = LogisticRegression(**kw).fit(X, y)
    theirs = sk.LogisticRegression(**kw).fit(X, y)
    # scikit-learn's liblinear meets its tol less closely on the badly scaled
    # column of 1e4
    atol = 2e-5 if scaling == 1.0 else 1e-4
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=atol)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=atol)
    # the same as a penalized column of value `scaling` without intercept
    A = np.c_[X, np.full(200, scaling)]
    column = LogisticRegression(C=0.05, tol=1e-10, fit_intercept=False, l1_ratio=l1_ratio,
                                max_iter=10000).fit(A, y)
    np.testing.assert_allclose(ours.coef_, column.coef_[:, :2], atol=1e-7)
    np.testing.assert_allclose(ours.intercept_, scaling * column.coef_[:, 2], atol=1e-7 * scaling)
    if l1_ratio == 0 and scaling == 1.0:
        free = LogisticRegression(C=0.05, tol=1e-10).fit(X, y)
        assert abs(free.intercept_[0] - ours.intercept_[0]) > 1e-3   # it is penalized


def test_label_propagation_knn_counts_the_point_among_its_neighbours():
    # scikit-learn's n_neighbors includes the point itself: its graph, and
    # bcd's _build_graph, link each point to itself and n_neighbors - 1 others
    import sklearn.semi_supervised as sk_semi
    samples = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 3.0]])
    labels = [0, 1, -1]
    ours = LabelPropagation(kernel="knn", n_neighbors=2).fit(samples, labels)
    theirs = sk_semi.LabelPropagation(kernel="knn", n_neighbors=2).fit(samples, labels)
    # the third point's one other neighbour is the second: class 1
    assert ours.transduction_[2] == theirs.transduction_[2] == 1
    np.testing.assert_allclose(ours._build_graph().toarray(), theirs._build_graph().toarray())
    rng = np.random.RandomState(3)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] > 0, 1, 0)
    y[5:] = -1
    ours = LabelPropagation(kernel="knn", n_neighbors=5).fit(X, y)
    theirs = sk_semi.LabelPropagation(kernel="knn", n_neighbors=5).fit(X, y)
    np.testing.assert_allclose(ours._build_graph().toarray(), theirs._build_graph().toarray())
    # n_neighbors = n_samples is allowed (every point), one more is not
    LabelPropagation(kernel="knn", n_neighbors=40).fit(X, y)
    with pytest.raises(ValueError, match="n_neighbors=41 must be at most"):
        LabelPropagation(kernel="knn", n_neighbors=41).fit(X, y)


def test_max_iter_counts_passes_whatever_the_block_size():
    # the automatic configuration of a small multinomial problem updates
    # one block of every coordinate (one Newton-type step per pass):
    # max_iter=k allows k passes, as scikit-learn's k iterations, and each
    # ends farther from the optimum than the next
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    full = LogisticRegression(tol=1e-8).fit(X, y)
    distances = []
    for k in (1, 2, 3):
        with pytest.warns(ConvergenceWarning):
            short = LogisticRegression(tol=1e-8, max_iter=k).fit(X, y)
        assert short.n_iter_[0] == k
        distances.append(np.abs(short.coef_ - full.coef_).sum())
    assert full.n_iter_[0] > 3
    assert distances[0] > distances[1] > distances[2]
    # scikit-learn's one iteration from zero is as far (its Newton step:
    # the same model to the tolerance of its solve)
    theirs = sk.LogisticRegression(solver="newton-cholesky", max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        theirs.fit(X, y)
    assert distances[0] > 2.0 and np.abs(theirs.coef_ - full.coef_).sum() > 2.0


@pytest.mark.parametrize("Estimator", [LogisticRegression, LogisticRegressionCV])
def test_named_solvers_refuse_what_scikit_learn_refuses(Estimator):
    # the same arguments fail with the same ValueError in both libraries;
    # solver="auto" fits them all
    X, y = _classification(n=60, d=4, classes=3, seed=5)
    Xb, yb = X, (y == 0).astype(int)
    cv = Estimator is LogisticRegressionCV
    ratio = (lambda r: {"l1_ratios": (r,)}) if cv else (lambda r: {"l1_ratio": r})
    extra = {"Cs": 2, "cv": 2, "scoring": "neg_log_loss", "use_legacy_attributes": False,
             "l1_ratios": (0.0,)} if cv else {}
    skl = getattr(sk, Estimator.__name__)
    cases = [(dict(solver="liblinear"), X, y)]
    cases += [(dict(solver=s, **ratio(1.0)), Xb, yb)
              for s in ("lbfgs", "newton-cg", "newton-cholesky", "sag")]
    cases += [(dict(solver=s, dual=True), Xb, yb)
              for s in ("lbfgs", "newton-cg", "newton-cholesky", "sag", "saga")]
    cases += [(dict(solver="liblinear", **ratio(0.5)), Xb, yb)]
    if not cv:
        cases += [(dict(solver="liblinear", C=np.inf), Xb, yb)]
    for kwargs, A, b in cases:
        with pytest.raises(ValueError) as theirs:
            skl(**{**extra, **kwargs}).fit(A, b)
        with pytest.raises(ValueError) as ours:
            Estimator(**{**extra, **kwargs}).fit(A, b)
        # scikit-learn's message starts ours (which adds what bcd fits instead)
        first = str(theirs.value).split(".")[0].split(",")[0]
        assert first in str(ours.value), (kwargs, str(ours.value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        Estimator(**{**extra, **ratio(1.0)}, solver="auto", dual=True).fit(X, y)


def test_liblinear_refusals_and_float64_model():
    X, y = _classification(n=40, d=3, seed=6)
    big = np.array([[0.0], [1e100]])
    for Est in (LogisticRegression, sk.LogisticRegression):
        with pytest.raises(ValueError, match="maximum value > 1e30"):
            Est(solver="liblinear").fit(big, [0, 1])
    # 64-bit sparse indices: refused by the solvers scikit-learn runs with
    # 32-bit ones, fitted by the others
    A = sp.csr_matrix(X)
    A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    for solver in ("liblinear", "sag", "saga"):
        with pytest.raises(ValueError, match="32-bit integer indices"):
            LogisticRegression(solver=solver).fit(A, y)
        with pytest.raises(ValueError, match="32-bit integer indices"):
            sk.LogisticRegression(solver=solver).fit(A, y)
    dense = LogisticRegression(solver="lbfgs", tol=1e-10).fit(X, y)
    wide = LogisticRegression(solver="lbfgs", tol=1e-10).fit(A, y)
    np.testing.assert_allclose(wide.coef_, dense.coef_, atol=1e-8)
    # float32 data: liblinear's model is float64 in scikit-learn, the others keep float32
    X32 = X.astype(np.float32)
    for solver in ("liblinear", "lbfgs", "saga"):
        ours = LogisticRegression(solver=solver).fit(X32, y)
        theirs = sk.LogisticRegression(solver=solver).fit(X32, y)
        assert ours.coef_.dtype == theirs.coef_.dtype
        assert ours.intercept_.dtype == theirs.intercept_.dtype


@pytest.mark.parametrize("solver", ["lbfgs", "newton-cg"])
def test_convergence_warning_names_the_solver(solver):
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    y = (y == 1).astype(int)
    with pytest.warns(ConvergenceWarning,
                      match=f"{solver} failed to converge.* Increase the number of iterations"):
        model = LogisticRegression(solver=solver, max_iter=2, tol=1e-15).fit(X, y)
    assert model.n_iter_[0] == 2


def test_copy_x_false_centers_in_place_and_fits_the_same_model():
    rng = np.random.RandomState(7)
    X = np.asfortranarray(rng.standard_normal((40, 8)) + 2.0)
    y = X @ rng.standard_normal(8) + 0.3
    sw = rng.uniform(0.5, 2.0, 40)
    ref = sk.ElasticNet(alpha=0.05, tol=1e-12, max_iter=100000).fit(X, y, sample_weight=sw)
    kept = X.copy(order="F")
    ours = ElasticNet(alpha=0.05, tol=1e-10).fit(kept, y, sample_weight=sw)
    np.testing.assert_array_equal(kept, X)                  # copy_X=True: untouched
    given = X.copy(order="F")
    lean = ElasticNet(alpha=0.05, tol=1e-10, copy_X=False).fit(given, y, sample_weight=sw)
    assert np.any(given != X)                               # overwritten, as scikit-learn's
    np.testing.assert_allclose(lean.coef_, ref.coef_, atol=1e-7)
    np.testing.assert_allclose(lean.intercept_, ref.intercept_, atol=1e-7)
    np.testing.assert_allclose(lean.coef_, ours.coef_, atol=1e-12)
    np.testing.assert_allclose(lean.dual_gap_, ours.dual_gap_, rtol=1e-6, atol=1e-14)
    # a C-ordered X needs converting, so it is copied and left as it was
    c_order = np.ascontiguousarray(X)
    ElasticNet(alpha=0.05, copy_X=False).fit(c_order, y)
    np.testing.assert_array_equal(c_order, X)
    # several targets: X is copied (each target's fit needs the original)
    both = X.copy(order="F")
    Y = np.column_stack([y, -y])
    multi = ElasticNet(alpha=0.05, tol=1e-10, copy_X=False).fit(both, Y)
    np.testing.assert_array_equal(both, X)
    single = ElasticNet(alpha=0.05, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(multi.coef_[0], single.coef_, atol=1e-8)


def test_check_input_false_needs_the_solver_layout():
    X, y = _regression()
    F = np.asfortranarray(X)
    for dtype in (np.float64, np.float32):
        ElasticNet(alpha=0.1).fit(F.astype(dtype), y, check_input=False)
    for Est in (ElasticNet, sk.ElasticNet):
        with pytest.raises(ValueError):
            Est(alpha=0.1).fit(np.ascontiguousarray(X), y, check_input=False)
    # check_input=True converts it; with sample weights scikit-learn
    # rescales a copy and accepts any layout, as bcd does
    ElasticNet(alpha=0.1).fit(np.ascontiguousarray(X), y)
    sw = np.full(X.shape[0], 1.25)
    for Est in (ElasticNet, sk.ElasticNet):
        Est(alpha=0.1).fit(np.ascontiguousarray(X), y, sample_weight=sw, check_input=False)
    np.testing.assert_array_equal(sw, 1.25)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("solver", ["lbfgs", "auto", "saga"])
def test_sklearn_callbacks_see_every_iteration(classes, solver):
    # scikit-learn's (experimental) callbacks: one subtask per iteration as
    # max_iter counts them, each ending with the model a fit of that many
    # iterations returns, and one empty task after the last, as with
    # scikit-learn's lbfgs
    pytest.importorskip("sklearn.callback")
    from sklearn.callback import FitCallback  # noqa: F401

    class Recorder:
        def __init__(self):
            self.events = []

        def setup(self, estimator, context):
            self.events.append(("setup", None, None))

        def teardown(self, estimator, context):
            self.events.append(("teardown", None, None))

        def on_fit_task_begin(self, estimator, context, *, fitted_estimator=None):
            self.events.append(("begin", context, fitted_estimator))

        def on_fit_task_end(self, estimator, context, *, fitted_estimator=None):
            self.events.append(("end", context, fitted_estimator))

    X, y = _classification(n=80, d=4, classes=classes, seed=8)
    kwargs = dict(solver=solver, tol=1e-6, random_state=0, max_iter=200)
    recorder = Recorder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)    # saga's multinomial fit
        model = LogisticRegression(**kwargs).set_callbacks(recorder).fit(X, y)
    n_iter = int(model.n_iter_[0])
    names = [e[0] for e in recorder.events]
    assert names[0] == "setup" and names[-1] == "teardown"
    assert names.count("begin") == names.count("end") == 1 + n_iter + 1
    ends = [e for e in recorder.events if e[0] == "end" and e[1].task_name == "iteration"]
    assert [e[1].task_id for e in ends] == list(range(n_iter + 1))
    assert ends[-1][2] is None
    for i in sorted({1, n_iter // 2, n_iter}):
        seen = ends[i - 1][2]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            short = LogisticRegression(**dict(kwargs, max_iter=i)).fit(X, y)
        np.testing.assert_allclose(seen.coef_, short.coef_, rtol=1e-7, atol=1e-12)
        np.testing.assert_array_equal(seen.predict(X), short.predict(X))
    # the last iteration's model is the fitted one; the root task ends with it
    np.testing.assert_allclose(ends[n_iter - 1][2].coef_, model.coef_, rtol=1e-7, atol=1e-12)
    assert recorder.events[-2][0] == "end" and recorder.events[-2][1].parent is None
    np.testing.assert_array_equal(recorder.events[-2][2].coef_, model.coef_)


def test_logistic_cv_fits_float32_data_in_float64():
    # as scikit-learn's LogisticRegressionCV; LogisticRegression keeps float32
    X, y = _classification(n=60, d=4, seed=9)
    X32 = X.astype(np.float32)
    kwargs = dict(Cs=3, cv=3, scoring="neg_log_loss", l1_ratios=(0.0,),
                  use_legacy_attributes=False, tol=1e-8)
    ours = LogisticRegressionCV(**kwargs).fit(X32, y)
    theirs = sk.LogisticRegressionCV(**kwargs).fit(X32, y)
    assert ours.coef_.dtype == theirs.coef_.dtype == np.float64
    assert ours.intercept_.dtype == theirs.intercept_.dtype == np.float64
    same = LogisticRegressionCV(**kwargs).fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(ours.coef_, same.coef_)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4)
