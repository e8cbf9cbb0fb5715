"""Tests of bcd.semi_supervised.LabelPropagation.

The label distributions are checked against an independent reference: the
graph built with NumPy (brute-force nearest neighbours, Gaussian weights by
broadcasting) and the harmonic system L_UU F_U = W_UL Y_L solved by
``scipy.sparse.linalg.spsolve`` in each connected component.  Labels are
compared with scikit-learn's LabelPropagation and LabelSpreading on data
where the methods agree, and the estimator passes scikit-learn's checks.
"""
import doctest
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.special
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import spsolve

from bcd.semi_supervised import LabelPropagation

import sklearn.semi_supervised as sk_semi
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

GAMMA = 20.0


# ---------------------------------------------------------------- references

def knn_weights(X, k):
    """(G + G^T) / 2 of the brute-force k-nearest-neighbour graph, each point
    counted among its own k neighbours as in scikit-learn (G: its k - 1
    nearest others)."""
    k = k - 1
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(D, np.inf)
    nearest = np.argsort(D, axis=1, kind="stable")[:, :k]
    n = X.shape[0]
    G = sp.csr_matrix((np.ones(n * k), (np.repeat(np.arange(n), k), nearest.ravel())),
                      shape=(n, n))
    return sp.csr_matrix((G + G.T) / 2.0)


def rbf_weights(X, gamma):
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    W = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    np.fill_diagonal(W, 0.0)
    return sp.csr_matrix(W)


def harmonic_reference(W, y):
    """Label distributions of the harmonic solution by spsolve, component by
    component; components without a label get the class prior."""
    W = sp.csr_matrix(W)
    n = W.shape[0]
    labelled = y != -1
    classes = np.unique(y[labelled])
    Y = (y[:, None] == classes[None, :]).astype(float)
    prior = Y[labelled].mean(axis=0)
    degree = np.asarray(W.sum(axis=1)).ravel()
    F = np.empty((n, classes.size))
    _, comp = connected_components(W, directed=False)
    for c in np.unique(comp):
        nodes = np.flatnonzero(comp == c)
        L, U = nodes[labelled[nodes]], nodes[~labelled[nodes]]
        if L.size == 0:
            F[nodes] = prior
            continue
        F[L] = Y[L]
        if U.size:
            A = sp.csc_matrix(sp.diags(degree[U]) - W[U][:, U])
            F[U] = np.asarray(spsolve(A, W[U][:, L] @ Y[L])).reshape(U.size, classes.size)
    return F


def blobs(n=180, centers=3, std=1.5, labelled=0.1, seed=0):
    """Blobs scaled into the unit square, with a fraction of the labels kept
    (at least one per class) and the others -1."""
    X, truth = make_blobs(n, centers=centers, cluster_std=std, random_state=seed)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    rng = np.random.default_rng(seed)
    y = np.full(n, -1)
    keep = rng.random(n) < labelled
    keep[[np.flatnonzero(truth == c)[0] for c in range(centers)]] = True
    y[keep] = truth[keep]
    return X, y, truth


# ------------------------------------------------------ scikit-learn's checks

N_ITER_REASON = ("most checks fit fully labelled data, where nothing is propagated: no solve "
                 "runs and n_iter_ is 0")


def _expected_failures(estimator):
    return {"check_non_transformer_estimators_n_iter": N_ITER_REASON}


@parametrize_with_checks([LabelPropagation(), LabelPropagation(kernel="knn")],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


#: an explicit configuration of one coordinate per update, so that a pass is
#: far from the solution
CYCLIC = {"rule": "cyclic", "blocks": "fixed", "block_size": 1, "update": "exact"}


def _passes(model):
    """The documented n_iter_: passes over the unlabelled nodes of the longest solve."""
    return max((-(-r.n_iter // model._n_unknown) for r in model.results_), default=0)


def test_n_iter_is_counted_when_points_are_unlabelled():
    # the counterpart of the expected failure above
    X, y, _ = blobs()
    model = LabelPropagation(kernel="knn").fit(X, y)
    assert model.n_iter_ == _passes(model) >= 1


# ----------------------------------------------------- the harmonic solution

@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kernel", ["knn", "rbf"])
def test_matches_direct_sparse_solve(kernel, sparse, n_classes):
    X, y, _ = blobs(centers=n_classes, seed=n_classes)
    W = knn_weights(X, 7) if kernel == "knn" else rbf_weights(X, GAMMA)
    _, comp = connected_components(W)
    assert set(comp[y != -1]) == set(comp)         # every component has a label
    F = harmonic_reference(W, y)
    Xin = sp.csr_matrix(X) if sparse else X
    model = LabelPropagation(kernel=kernel, tol=1e-10).fit(Xin, y)
    np.testing.assert_array_equal(model.classes_, np.arange(n_classes))
    np.testing.assert_allclose(model.label_distributions_, F, rtol=0, atol=1e-7)
    np.testing.assert_allclose(model.label_distributions_.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(model.transduction_, np.argmax(F, axis=1))
    labelled = y != -1
    np.testing.assert_array_equal(model.transduction_[labelled], y[labelled])
    # one solve per class but the last, with bcd.solve's automatic configuration
    assert len(model.results_) == n_classes - 1
    for result in model.results_:
        assert result.converged
        assert result.options["auto"] == "sparse quadratic"
        assert result.options["blocks"] == "forest_partition"
    assert model.n_iter_ == _passes(model)


def test_default_tolerance_is_close_to_the_solution():
    X, y, truth = blobs(n=300, seed=4)
    F = harmonic_reference(knn_weights(X, 7), y)
    model = LabelPropagation(kernel="knn").fit(X, y)
    assert np.abs(model.label_distributions_ - F).max() < 0.05
    assert np.mean(model.transduction_ == np.argmax(F, axis=1)) >= 0.99


def test_weights_are_scaled_without_changing_the_solution():
    # Gaussian weights far below 1 (gamma large relative to the spread):
    # the solution is that of the unscaled system
    X, y, _ = blobs(seed=7)
    model = LabelPropagation(kernel="rbf", gamma=200.0, tol=1e-10).fit(X, y)
    W = rbf_weights(X, 200.0)
    assert W.max() < 1.0
    F = harmonic_reference(W, y)
    np.testing.assert_allclose(model.label_distributions_, F, rtol=0, atol=1e-7)


def test_solver_options_reach_solve():
    X, y, _ = blobs(seed=1)
    F = harmonic_reference(knn_weights(X, 7), y)
    options = {"rule": "random", "blocks": "tree", "update": "exact", "random_state": 0}
    model = LabelPropagation(kernel="knn", tol=1e-10, solver_options=options).fit(X, y)
    assert options == {"rule": "random", "blocks": "tree", "update": "exact",
                       "random_state": 0}
    for result in model.results_:
        assert result.options["blocks"] == "tree" and result.options["auto"] is None
    np.testing.assert_allclose(model.label_distributions_, F, rtol=0, atol=1e-7)


def test_the_solver_warning_is_silenced_without_catch_warnings(monkeypatch):
    """fit may run on several threads: the estimator's own code must not
    touch the process-wide warning filters (warnings.catch_warnings is not
    thread-safe); only its own warning is issued."""
    import bcd._result
    import bcd.semi_supervised._label_propagation as module

    class NoCatch:
        warn = staticmethod(warnings.warn)

        @staticmethod
        def catch_warnings(*args, **kwargs):
            raise AssertionError("warnings.catch_warnings is not thread-safe")

    X, y, _ = blobs(seed=2)
    with pytest.warns(ConvergenceWarning) as record:
        with monkeypatch.context() as m:
            m.setattr(module, "warnings", NoCatch)
            m.setattr(bcd._result, "warnings", NoCatch)
            LabelPropagation(kernel="knn", max_iter=1, tol=1e-12,
                             solver_options=CYCLIC).fit(X, y)
    messages = [str(w.message) for w in record]
    assert messages and all(m.startswith("max_iter=1 was reached") for m in messages)


def test_max_iter_and_tol_reach_solve():
    X, y, _ = blobs(seed=2)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        model = LabelPropagation(kernel="knn", max_iter=2, tol=1e-12,
                                 solver_options=CYCLIC).fit(X, y)
    # max_iter counts passes over the unlabelled nodes
    n_unknown = int(np.sum(y == -1))
    assert all(r.n_iter == 2 * n_unknown and not r.converged for r in model.results_)
    assert model.n_iter_ == 2
    P = model.label_distributions_
    assert np.all(np.isfinite(P)) and np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    loose = LabelPropagation(kernel="knn", tol=1e-1).fit(X, y)
    tight = LabelPropagation(kernel="knn", tol=1e-8).fit(X, y)
    assert all(r.options["tol"] == 1e-1 for r in loose.results_)
    assert sum(r.n_iter for r in loose.results_) < sum(r.n_iter for r in tight.results_)


# ------------------------------------------------------------ components

def test_components_without_labels_get_the_prior():
    rng = np.random.default_rng(3)
    # three clusters far apart; the third has no label
    X = np.vstack([rng.normal(c, 0.05, size=(40, 2)) for c in (0.0, 5.0, 10.0)])
    y = np.full(120, -1)
    y[[0, 1, 2, 50]] = [0, 1, 0, 2]
    y[[41, 42]] = [2, 2]
    for kernel in ("knn", "rbf"):
        W = knn_weights(X, 5) if kernel == "knn" else rbf_weights(X, GAMMA)
        n_comp, comp = connected_components(W)
        assert n_comp >= 3 and len(set(comp[:40]) & set(comp[80:])) == 0
        F = harmonic_reference(W, y)
        model = LabelPropagation(kernel=kernel, n_neighbors=5, tol=1e-10).fit(X, y)
        P = model.label_distributions_
        assert np.all(np.isfinite(P))
        np.testing.assert_allclose(P, F, rtol=0, atol=1e-7)
        # the prior of the labelled points: classes 0, 1, 2 with 2, 1, 3 labels
        np.testing.assert_allclose(P[80:], np.tile([2 / 6, 1 / 6, 3 / 6], (40, 1)), atol=1e-15)
        assert np.all(model.transduction_[80:] == 2)


def test_isolated_points_and_every_point_labelled():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(0.0, 0.05, size=(20, 2)), [[50.0, 50.0]]])
    y = np.r_[np.zeros(10, dtype=int), np.ones(10, dtype=int), -1]
    # the Gaussian weights of the last point underflow to 0: it is alone
    model = LabelPropagation(kernel="rbf").fit(X, y)
    np.testing.assert_array_equal(model.label_distributions_[:20], np.eye(2)[y[:20]])
    np.testing.assert_allclose(model.label_distributions_[20], [0.5, 0.5])
    assert model.results_ == [] and model.n_iter_ == 0
    np.testing.assert_array_equal(model.transduction_[:20], y[:20])


def test_string_and_float_labels():
    X, y, _ = blobs(seed=5)
    names = np.array(["apple", "kiwi", "pear"], dtype=object)
    full = np.where(y == -1, 0, y)
    model = LabelPropagation(kernel="knn").fit(X, names[full])
    np.testing.assert_array_equal(model.classes_, names)
    np.testing.assert_array_equal(model.transduction_, names[full])
    a = LabelPropagation(kernel="knn", tol=1e-10).fit(X, y.astype(float))
    b = LabelPropagation(kernel="knn", tol=1e-10).fit(X, y)
    np.testing.assert_array_equal(a.classes_, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(a.label_distributions_, b.label_distributions_)


# ------------------------------------------------------- against scikit-learn

@pytest.mark.parametrize("seed", [2, 11])
@pytest.mark.parametrize("kernel", ["knn", "rbf"])
def test_labels_agree_with_sklearn_on_separated_data(kernel, seed):
    # separated clusters and a local Gaussian graph (gamma = 100 on the unit
    # square): every method labels every point by its cluster
    X, y, truth = blobs(n=200, centers=4, std=0.6, labelled=0.05, seed=seed)
    ours = LabelPropagation(kernel=kernel, gamma=100.0).fit(X, y)
    np.testing.assert_array_equal(ours.transduction_, truth)
    references = [
        sk_semi.LabelPropagation(kernel=kernel, gamma=100.0, tol=1e-12, max_iter=10000),
        # nearly hard clamping, iterated to convergence
        sk_semi.LabelSpreading(kernel=kernel, gamma=100.0, alpha=0.01, tol=1e-12,
                               max_iter=10000),
    ]
    Xt = np.random.default_rng(0).uniform(size=(50, 2))
    for reference in references:
        reference.fit(X, y)
        np.testing.assert_array_equal(reference.transduction_, truth)
        np.testing.assert_array_equal(ours.transduction_, reference.transduction_)
        agree = np.mean(ours.predict(Xt) == reference.predict(Xt))
        assert agree >= 0.9, (reference, agree)


def test_moons_agree_with_sklearn():
    X, truth = make_moons(600, noise=0.08, random_state=0)
    y = np.full(600, -1)
    labelled = np.random.default_rng(0).choice(600, 30, replace=False)
    y[labelled] = truth[labelled]
    ours = LabelPropagation(kernel="knn", n_neighbors=10).fit(X, y)
    theirs = sk_semi.LabelPropagation(kernel="knn", n_neighbors=10, tol=1e-10,
                                      max_iter=100000).fit(X, y)
    assert np.mean(ours.transduction_ == truth) >= 0.99
    np.testing.assert_array_equal(ours.transduction_, theirs.transduction_)


# ------------------------------------------------------------ prediction

def test_predict_proba_knn_reference():
    X, y, _ = blobs(seed=6)
    model = LabelPropagation(kernel="knn", n_neighbors=5).fit(X, y)
    Xt = np.random.default_rng(1).uniform(-0.2, 1.2, size=(40, 2))
    D = ((Xt[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    nearest = np.argsort(D, axis=1, kind="stable")[:, :5]
    expected = model.label_distributions_[nearest].mean(axis=1)
    P = model.predict_proba(Xt)
    np.testing.assert_allclose(P, expected, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(model.predict(Xt), model.classes_[np.argmax(expected, 1)])
    # training points: their neighbourhood includes themselves
    np.testing.assert_allclose(model.predict_proba(X[:3]),
                               model.label_distributions_[
                                   np.argsort(((X[:3, None] - X[None]) ** 2).sum(-1), 1,
                                              kind="stable")[:, :5]].mean(1), atol=1e-14)


def test_predict_proba_rbf_reference():
    X, y, _ = blobs(seed=8)
    model = LabelPropagation(kernel="rbf", gamma=GAMMA).fit(X, y)
    Xt = np.vstack([np.random.default_rng(2).uniform(size=(30, 2)), [[40.0, -30.0]]])
    D = ((Xt[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    expected = np.empty((31, 3))
    near = slice(0, 30)
    weights = np.exp(-GAMMA * D[near])
    expected[near] = weights @ model.label_distributions_
    expected[near] /= expected[near].sum(axis=1, keepdims=True)
    # far away every weight underflows: the normalized weights are a softmax
    expected[30] = scipy.special.softmax(-GAMMA * D[30]) @ model.label_distributions_
    assert np.all(np.exp(-GAMMA * D[30]) == 0.0)
    P = model.predict_proba(Xt)
    np.testing.assert_allclose(P, expected, rtol=1e-10, atol=1e-14)
    assert np.all(np.isfinite(P))
    # the prediction of many points is made in batches
    many = np.random.default_rng(3).uniform(size=(2100, 2))
    np.testing.assert_allclose(model.predict_proba(many)[-5:], model.predict_proba(many[-5:]),
                               rtol=1e-12)


def test_score_is_accuracy():
    X, y, truth = blobs(seed=9)
    model = LabelPropagation(kernel="knn").fit(X, y)
    assert model.score(X, truth) == pytest.approx(np.mean(model.predict(X) == truth))


def test_pickle_and_clone():
    X, y, _ = blobs(seed=10)
    for kernel in ("knn", "rbf"):
        model = LabelPropagation(kernel=kernel, n_neighbors=4, gamma=5.0).fit(X, y)
        copy = pickle.loads(pickle.dumps(model))
        # the same numbers, up to rounding: BLAS may round the products of
        # differently aligned copies of the arrays differently
        np.testing.assert_allclose(copy.predict_proba(X), model.predict_proba(X), rtol=1e-12,
                                   atol=1e-15)
        fresh = clone(model)
        assert fresh.get_params() == model.get_params()
        assert not hasattr(fresh, "label_distributions_")


def test_parameters_changed_after_fit_do_not_change_predictions():
    X, y, _ = blobs(seed=12)
    model = LabelPropagation(kernel="rbf").fit(X, y)
    before = model.predict_proba(X[:10])
    model.set_params(gamma=1.0, kernel="knn")
    np.testing.assert_array_equal(model.predict_proba(X[:10]), before)


# ------------------------------------------------------------ bad input

def _xy():
    X, y, _ = blobs(n=30, seed=13)
    return X, y


def _with(value):
    X, y = _xy()
    X = X.copy()
    X[3, 1] = value
    return X, y


BAD_INPUTS = {
    "nan_X": (lambda: LabelPropagation().fit(*_with(np.nan)), ValueError, "NaN"),
    "inf_X": (lambda: LabelPropagation(kernel="knn").fit(*_with(np.inf)), ValueError,
              "infinity"),
    "nan_X_sparse": (lambda: LabelPropagation().fit(sp.csr_matrix(_with(np.nan)[0]), _xy()[1]),
                     ValueError, "NaN"),
    "nan_X_predict": (lambda: LabelPropagation().fit(*_xy()).predict(_with(np.nan)[0]),
                      ValueError, "NaN"),
    "no_label": (lambda: LabelPropagation().fit(_xy()[0], np.full(30, -1)), ValueError,
                 "no labelled point"),
    "one_class": (lambda: LabelPropagation().fit(_xy()[0], np.r_[[1, 1], np.full(28, -1)]),
                  ValueError, "one class"),
    "unknown_kernel": (lambda: LabelPropagation(kernel="linear").fit(*_xy()), ValueError,
                       "kernel"),
    "zero_neighbors": (lambda: LabelPropagation(kernel="knn", n_neighbors=0).fit(*_xy()),
                       ValueError, "n_neighbors"),
    "too_many_neighbors": (lambda: LabelPropagation(kernel="knn", n_neighbors=31).fit(*_xy()),
                           ValueError, "n_neighbors"),
    "float_neighbors": (lambda: LabelPropagation(kernel="knn", n_neighbors=2.5).fit(*_xy()),
                        TypeError, "n_neighbors"),
    "zero_gamma": (lambda: LabelPropagation(gamma=0.0).fit(*_xy()), ValueError, "gamma"),
    "negative_gamma": (lambda: LabelPropagation(gamma=-1.0).fit(*_xy()), ValueError, "gamma"),
    "nan_gamma": (lambda: LabelPropagation(gamma=np.nan).fit(*_xy()), ValueError, "gamma"),
    "negative_tol": (lambda: LabelPropagation(tol=-1.0).fit(*_xy()), ValueError, "tol"),
    "zero_max_iter": (lambda: LabelPropagation(max_iter=0).fit(*_xy()), ValueError, "max_iter"),
    "reserved_option": (lambda: LabelPropagation(solver_options={"tol": 1e-3}).fit(*_xy()),
                        ValueError, "tol"),
    "options_not_dict": (lambda: LabelPropagation(solver_options=[("rule", "gs")]).fit(*_xy()),
                         TypeError, "solver_options"),
    "bad_solver_option": (lambda: LabelPropagation(solver_options={"rule": "nope"}).fit(*_xy()),
                          ValueError, "nope"),
    "continuous_y": (lambda: LabelPropagation().fit(_xy()[0], np.linspace(0, 1, 30)),
                     ValueError, "Unknown label type"),
    "y_length": (lambda: LabelPropagation().fit(_xy()[0], _xy()[1][:-1]), ValueError,
                 "inconsistent"),
    "predict_unfitted": (lambda: LabelPropagation().predict(_xy()[0]), NotFittedError, "fit"),
    "proba_unfitted": (lambda: LabelPropagation().predict_proba(_xy()[0]), NotFittedError,
                       "fit"),
    "predict_features": (lambda: LabelPropagation().fit(*_xy()).predict(np.ones((2, 3))),
                         ValueError, "features"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_raises(case):
    make, error, match = BAD_INPUTS[case]
    with pytest.raises(error, match=match):
        make()


def test_constructor_only_stores_parameters():
    options = {"rule": "gs"}
    model = LabelPropagation(kernel="nope", gamma=-1, n_neighbors=0, max_iter=-5, tol="x",
                             solver_options=options, n_jobs=3)
    assert model.get_params() == dict(kernel="nope", gamma=-1, n_neighbors=0, max_iter=-5,
                                      tol="x", solver_options=options, n_jobs=3,
                                      max_time=None)
    assert model.solver_options is options


@pytest.mark.parametrize("sparse", [False, True])
def test_inputs_are_not_modified(sparse):
    X, y, _ = blobs(seed=14)
    X = sp.csr_matrix(X) if sparse else np.asfortranarray(X)
    copies = (X.copy(), y.copy())
    options = {"rule": "cyclic", "blocks": "forest_partition", "update": "exact"}
    for kernel in ("knn", "rbf"):
        model = LabelPropagation(kernel=kernel, solver_options=options).fit(X, y)
        model.predict_proba(X)
    assert options == {"rule": "cyclic", "blocks": "forest_partition", "update": "exact"}
    if sparse:
        assert (X != copies[0]).nnz == 0
    else:
        assert X.flags.f_contiguous
        np.testing.assert_array_equal(X, copies[0])
    np.testing.assert_array_equal(y, copies[1])


def test_float32_and_integer_inputs():
    X, y, _ = blobs(seed=15)
    ref = LabelPropagation(kernel="knn", tol=1e-10).fit(X.astype(np.float32).astype(float), y)
    single = LabelPropagation(kernel="knn", tol=1e-10).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(single.label_distributions_, ref.label_distributions_,
                               atol=1e-12)
    grid = np.round(X * 1000).astype(np.int64)
    model = LabelPropagation(kernel="rbf", gamma=GAMMA / 1e6, tol=1e-10).fit(grid.tolist(), y)
    F = harmonic_reference(rbf_weights(grid.astype(float), GAMMA / 1e6), y)
    np.testing.assert_allclose(model.label_distributions_, F, atol=1e-7)


# --------------------------------------------------- pipelines and searches

def _labelled_accuracy(estimator, X, y):
    keep = y != -1
    return float(np.mean(estimator.predict(X[keep]) == y[keep]))


@pytest.mark.parametrize("kernel,grid", [("knn", {"lp__n_neighbors": [3, 7, 15]}),
                                         ("rbf", {"lp__gamma": [0.5, 5.0, 50.0]})])
def test_pipeline_grid_search(kernel, grid):
    X, truth = make_moons(240, noise=0.1, random_state=1)
    X = X * [100.0, 0.01]          # badly scaled: the scaler matters
    y = truth.copy()
    y[np.random.default_rng(1).random(240) < 0.5] = -1
    pipe = Pipeline([("scale", StandardScaler()), ("lp", LabelPropagation(kernel=kernel))])
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(pipe, grid, cv=cv, scoring=_labelled_accuracy).fit(X, y)
    # the reference: the same folds fitted by hand
    (name, values), = grid.items()
    manual = []
    for value in values:
        scores = []
        for train, test in cv.split(X, y):
            model = clone(pipe).set_params(**{name: value}).fit(X[train], y[train])
            scores.append(_labelled_accuracy(model, X[test], y[test]))
        manual.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], manual, rtol=0,
                               atol=1e-12)
    best = values[int(np.argmax(manual))]
    assert search.best_params_ == {name: best}
    refit = clone(pipe).set_params(**{name: best}).fit(X, y)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))
    assert np.mean(search.best_estimator_[-1].transduction_ == truth) > 0.9


# ------------------------------------------------------ optional dependency

def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_missing_sklearn_names_the_extra():
    out = _run("import sys\n"
               "sys.modules['sklearn'] = None\n"
               "import bcd\n"
               "try:\n"
               "    import bcd.semi_supervised\n"
               "except ImportError as exc:\n"
               "    print('ImportError:', exc)\n")
    assert out.returncode == 0, out.stderr
    assert "ImportError:" in out.stdout and "bcd[sklearn]" in out.stdout, out.stdout


def test_import_bcd_does_not_import_sklearn():
    out = _run("import sys, bcd\n"
               "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_docstring_examples():
    from bcd.semi_supervised import _label_propagation
    failures, attempted = doctest.testmod(_label_propagation,
                                          optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failures == 0
