"""bcd.gp.GPRegressor as a scikit-learn estimator: scikit-learn's checks,
parameters and cloning (kernel parameters included), pipelines and grid
searches, ``score``, validation, and ``import bcd`` without scikit-learn.

References: scikit-learn's ``r2_score``, ``GaussianProcessRegressor`` with
the same fixed kernel, and cross-validation loops written out by hand.
"""
import copy
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from bcd.gp import GPRegressor, Matern, Periodic, SquaredExponential

import sklearn.gaussian_process as sk_gp
import sklearn.gaussian_process.kernels as sk_kernels
from sklearn.base import clone, is_regressor
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted


def _data(n=80, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(5 * X[:, 0]) + X[:, -1] ** 2 + 0.05 * rng.standard_normal(n)
    return X, y


def _sk_reference(kernel, noise, X, y):
    return sk_gp.GaussianProcessRegressor(kernel, alpha=noise, optimizer=None,
                                          normalize_y=False).fit(X, y)


# ------------------------------------------------------ scikit-learn's checks

FIT1D_REASON = ("a 1-D X is read as a single feature (n_samples, 1), as bcd.GaussianProcess "
                "and the kernels read it, instead of being rejected")


def _expected_failures(estimator):
    return {"check_fit1d": FIT1D_REASON}


with warnings.catch_warnings():
    # GPRegressor implements the interface without inheriting from BaseEstimator
    warnings.filterwarnings("ignore", message=".*does not inherit from", category=UserWarning)
    _checks = parametrize_with_checks(
        [GPRegressor(SquaredExponential(3.0), noise=0.5, tol=1e-6, random_state=0,
                     n_threads=1),
         # hyperparameter learning (the signal variance only: a quick fit)
         GPRegressor(SquaredExponential(3.0, lengthscale_bounds="fixed"), noise=0.5,
                     noise_bounds="fixed", tol=1e-6, random_state=0, n_threads=1,
                     optimizer="ml"),
         GPRegressor(SquaredExponential(3.0, lengthscale_bounds="fixed"), noise=0.5,
                     noise_bounds="fixed", tol=1e-6, random_state=0, n_threads=1,
                     optimizer="cv_admm", cv=2),
         # every parameter learned: the CV fit and its maximum likelihood scale
         GPRegressor(SquaredExponential(3.0), noise=0.5, tol=1e-6, random_state=0,
                     n_threads=1, optimizer="cv", cv=2)],
        expected_failed_checks=_expected_failures)


@_checks
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not inherit from",
                                category=UserWarning)
        check(estimator)


def test_one_dimensional_inputs_are_one_feature():
    # the behaviour behind the expected failure above, and its limit
    X, y = _data(60, 1, seed=1)
    gp = GPRegressor(Matern(2.5, 0.3), 0.01, tol=1e-10, random_state=0).fit(X[:, 0], y)
    assert gp.n_features_in_ == 1
    np.testing.assert_array_equal(gp.predict(X[:5, 0]), gp.predict(X[:5]))
    X2, y2 = _data(30, 3, seed=2)
    gp3 = GPRegressor(SquaredExponential(0.5), 0.1).fit(X2, y2)
    with pytest.raises(ValueError, match="Reshape your data"):
        gp3.predict(X2[0])


# ------------------------------------------------------ parameters and clone

def test_get_params_returns_the_arguments():
    kernel = SquaredExponential(0.5) + Periodic(1.0, 0.7)
    options = {"mi_candidates": 30}
    gp = GPRegressor(kernel, 0.1, rule="gs", block_size=7, solver_options=options)
    params = gp.get_params(deep=False)
    assert params["kernel"] is kernel and params["solver_options"] is options
    assert params == dict(kernel=kernel, noise=0.1, rule="gs", block_size=7, tol=1e-4,
                          max_iter=100000, random_state=None, cache_size=0, variance="auto",
                          max_dense_bytes=None, n_threads=None, solver_options=options,
                          verbose=False, optimizer=None, noise_bounds=(1e-5, 1e5),
                          n_restarts=0, cv=5, cv_scheme="naive", client=None,
                          admm_options=None, candidates=None, max_time=None,
                          variance_rank=4096, variance_neighbors=1536, variance_tol=0.1,
                          variance_residual=0.002)
    deep = gp.get_params()
    assert params.items() <= deep.items()
    assert deep["kernel__k1"] is kernel.k1 and deep["kernel__k2__period"] == 1.0
    np.testing.assert_array_equal(deep["kernel__k1__lengthscale"], 0.5)


def test_constructor_only_stores_and_fit_validates():
    gp = GPRegressor("not a kernel", -1.0, tol=-3, variance="lu", solver_options=5)
    assert gp.kernel == "not a kernel" and gp.tol == -3
    X, y = _data(20)
    with pytest.raises(TypeError, match="kernel"):
        gp.fit(X, y)
    cases = [(dict(noise=-1.0), ValueError, "noise"), (dict(tol=-3), ValueError, "tol"),
             (dict(variance="lu"), ValueError, "variance"),
             (dict(solver_options=5), TypeError, "solver_options"),
             (dict(solver_options={"tol": 1e-3}), ValueError, "tol"),
             (dict(solver_options={"rule": "gs"}), ValueError, "rule"),
             (dict(max_dense_bytes=-1), ValueError, "max_dense_bytes")]
    for params, error, match in cases:
        good = dict(kernel=SquaredExponential(0.5), noise=0.1)
        with pytest.raises(error, match=match):
            GPRegressor(**dict(good, **params)).fit(X, y)
    with pytest.raises(TypeError):
        GPRegressor(SquaredExponential(0.5), 0.1, mi_candidates=3)   # no **kwargs any more


def test_clone_copies_kernels():
    kernel = SquaredExponential([0.4, 0.6], variance=np.float64(2.0)) * Matern(np.float32(1.5), 1)
    gp = GPRegressor(kernel, 0.05, tol=1e-9, random_state=0)
    X, y = _data()
    gp.fit(X, y)
    twin = clone(gp)
    assert not hasattr(twin, "alpha_")
    assert twin.kernel is not kernel and twin.kernel.k1 is not kernel.k1
    assert repr(twin.kernel) == repr(kernel)
    np.testing.assert_array_equal(twin.kernel.k1.lengthscale, kernel.k1.lengthscale)
    np.testing.assert_array_equal(twin.fit(X, y).alpha_, gp.alpha_)
    for roundtrip in (copy.deepcopy, lambda k: pickle.loads(pickle.dumps(k)),
                      lambda k: clone(k, safe=False)):
        other = roundtrip(kernel)
        assert repr(other) == repr(kernel)
        np.testing.assert_array_equal(other(X[:5], X), kernel(X[:5], X))


def test_nested_kernel_parameters():
    X, y = _data(seed=3)
    gp = GPRegressor(SquaredExponential(1.0) + Matern(2.5, 1.0, variance=0.5), 0.05,
                     tol=1e-10, random_state=0)
    assert gp.set_params(kernel__k1__lengthscale=0.3, kernel__k2__variance=0.2,
                         noise=0.02) is gp
    assert float(gp.kernel.k1.lengthscale) == 0.3 and gp.kernel.k2.variance == 0.2
    assert gp.noise == 0.02
    gp.fit(X, y)
    ref = _sk_reference(sk_kernels.RBF(0.3, "fixed")
                        + sk_kernels.ConstantKernel(0.2, "fixed")
                        * sk_kernels.Matern(1.0, "fixed", nu=2.5), 0.02, X, y)
    Xt = np.random.default_rng(4).uniform(size=(20, 2))
    np.testing.assert_allclose(gp.predict(Xt), ref.predict(Xt), rtol=0, atol=1e-8)
    # the fitted model keeps its kernel: later changes do not reach it
    before = gp.predict(Xt)
    gp.set_params(kernel__k1__lengthscale=5.0)
    np.testing.assert_array_equal(gp.predict(Xt), before)
    assert gp.kernel_ is not gp.kernel and float(gp.kernel_.k1.lengthscale) == 0.3


def test_invalid_parameters_are_rejected():
    kernel = SquaredExponential(0.5) + Periodic(1.0, 0.7)
    gp = GPRegressor(kernel, 0.1)
    with pytest.raises(ValueError, match="Invalid parameter 'nois'"):
        gp.set_params(nois=0.2)
    with pytest.raises(ValueError, match="Invalid parameter 'k3'"):
        gp.set_params(kernel__k3__period=2.0)
    with pytest.raises(ValueError, match="lengthscale"):
        gp.set_params(kernel__k1__lengthscale=-1.0)
    with pytest.raises(ValueError, match="not a kernel"):
        kernel.set_params(k1__lengthscale=1.0, k1=3.0)
    with pytest.raises(TypeError, match="k2 must be a kernel"):
        kernel.set_params(k2=3.0)
    with pytest.raises(TypeError, match="period"):
        kernel.set_params(k2__period="1")
    # a rejected value leaves the kernel as it was
    assert float(kernel.k1.lengthscale) == 0.5 and kernel.k2.period == 1.0
    gp.set_params(noise="x")
    with pytest.raises(ValueError, match="has no parameters"):
        gp.set_params(noise__a=1)


def test_repr_shows_the_changed_parameters():
    gp = GPRegressor(SquaredExponential(0.5), 0.1, tol=1e-6, solver_options={"verbose": False})
    assert repr(gp) == ("GPRegressor(kernel=SquaredExponential(lengthscale=0.5, variance=1), "
                        "noise=0.1, tol=1e-06, solver_options={'verbose': False})")


def test_tags():
    gp = GPRegressor(SquaredExponential(0.5), 0.1)
    assert is_regressor(gp)
    tags = gp.__sklearn_tags__()
    assert tags.estimator_type == "regressor" and tags.target_tags.required
    assert not tags.input_tags.sparse and not tags.target_tags.multi_output


# ------------------------------------------------------ fitted attributes, score

def test_fitted_attributes_and_not_fitted_error():
    gp = GPRegressor(SquaredExponential(0.4), 0.05, tol=1e-8, random_state=0)
    X, y = _data(seed=5)
    for method in (lambda: gp.predict(X), lambda: gp.predict(X, return_std=True),
                   lambda: gp.score(X, y), lambda: check_is_fitted(gp)):
        with pytest.raises(NotFittedError, match="not fitted"):
            method()
    gp.fit(X, y)
    check_is_fitted(gp)
    assert gp.n_features_in_ == 2 and gp.n_iter_ == gp.result_.n_iter >= 1
    assert not hasattr(gp, "feature_names_in_")
    with pytest.raises(ValueError, match="X has 3 features, but GPRegressor is expecting 2"):
        gp.predict(np.ones((4, 3)))


@pytest.mark.parametrize("weighted", [False, True])
def test_score_is_r2(weighted):
    X, y = _data(seed=6)
    Xt, yt = _data(40, seed=7)
    gp = GPRegressor(SquaredExponential(0.3), 0.05, tol=1e-8, random_state=0).fit(X, y)
    w = np.random.default_rng(8).uniform(0.1, 2.0, size=40) if weighted else None
    expected = r2_score(yt, gp.predict(Xt), sample_weight=w)
    assert gp.score(Xt, yt, sample_weight=w) == pytest.approx(expected, rel=1e-12)
    assert 0.5 < expected < 1.0
    # a constant target: 1 for exact predictions, else 0 (r2_score's convention)
    const = GPRegressor(SquaredExponential(0.3), 0.05).fit(X, y)
    assert const.score(Xt, np.full(40, 3.0)) == r2_score(np.full(40, 3.0), const.predict(Xt))


def test_nan_and_inf_are_rejected():
    X, y = _data(30, seed=9)
    gp = GPRegressor(SquaredExponential(0.4), 0.1)
    for value, word in ((np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")):
        bad = X.copy()
        bad[2, 1] = value
        with pytest.raises(ValueError, match=rf"Input X contains {word}"):
            gp.fit(bad, y)
        bad_y = y.copy()
        bad_y[4] = value
        with pytest.raises(ValueError, match=rf"Input y contains {word}"):
            gp.fit(X, bad_y)
        gp.fit(X, y)
        with pytest.raises(ValueError, match=rf"Input X contains {word}"):
            gp.predict(bad)
        with pytest.raises(ValueError, match=rf"Input y contains {word}"):
            gp.score(X, bad_y)
    with pytest.raises(TypeError, match="sparse"):
        gp.fit(sp.csr_matrix(X), y)


def test_column_vector_y_warns_and_is_raveled():
    X, y = _data(seed=10)
    gp = GPRegressor(SquaredExponential(0.4), 0.1, tol=1e-9, random_state=0)
    flat = gp.fit(X, y).alpha_.copy()
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        gp.fit(X, y[:, None])
    np.testing.assert_array_equal(gp.alpha_, flat)
    with pytest.raises(ValueError, match="1d array"):
        gp.fit(X, np.c_[y, y])


def test_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _data(seed=11)
    frame = pd.DataFrame(X, columns=["a", "b"])
    gp = GPRegressor(SquaredExponential(0.4), 0.1, tol=1e-9, random_state=0).fit(frame, y)
    np.testing.assert_array_equal(gp.feature_names_in_, ["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean = gp.predict(frame)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(gp.predict(X), mean)
    with pytest.raises(ValueError, match="feature names should match"):
        gp.predict(frame[["b", "a"]])
    gp.fit(X, y)
    assert not hasattr(gp, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names"):
        gp.predict(frame)


# --------------------------------------------------- pipelines and searches

def test_pipeline_grid_search_over_kernel_parameters():
    rng = np.random.default_rng(12)
    X = rng.uniform(size=(120, 2)) * [20.0, 0.05]      # badly scaled: the scaler matters
    y = np.sin(0.3 * X[:, 0]) + 10 * X[:, 1] + 0.05 * rng.standard_normal(120)
    pipe = Pipeline([("scale", StandardScaler()),
                     ("gp", GPRegressor(SquaredExponential(1.0), 0.01, tol=1e-8,
                                        random_state=0, n_threads=1))])
    grid = {"gp__kernel__lengthscale": [0.1, 0.5, 2.0], "gp__noise": [0.003, 0.1]}
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(pipe, grid, cv=cv).fit(X, y)
    # the reference: the folds fitted by hand with the same settings
    manual = []
    for params in search.cv_results_["params"]:
        scores = []
        for train, test in cv.split(X):
            model = clone(pipe).set_params(**params).fit(X[train], y[train])
            scores.append(r2_score(y[test], model.predict(X[test])))
        manual.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], manual, rtol=0,
                               atol=1e-12)
    best = search.cv_results_["params"][int(np.argmax(manual))]
    assert search.best_params_ == best
    assert len({p["gp__kernel__lengthscale"] for p in search.cv_results_["params"]}) == 3
    # the kernel of the searched pipeline was never changed
    assert float(pipe[-1].kernel.lengthscale) == 1.0
    refit = clone(pipe).set_params(**best).fit(X, y)
    np.testing.assert_allclose(search.predict(X), refit.predict(X), rtol=0, atol=1e-12)
    assert search.score(X, y) > 0.95


# ------------------------------------------------------ optional dependency

def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_import_bcd_does_not_import_sklearn():
    out = _run("import sys, numpy as np, bcd\n"
               "X = np.random.default_rng(0).uniform(size=(40, 2)); y = X[:, 0]\n"
               "gp = bcd.gp.GPRegressor(bcd.gp.SquaredExponential(0.5), 0.1)\n"
               "gp.get_params(); gp.set_params(kernel__lengthscale=0.4, noise=0.05)\n"
               "print(round(gp.fit(X, y).score(X, y), 3) > 0.9, repr(gp)[:11])\n"
               "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["True GPRegressor", "[]"], out.stdout


def test_gp_regressor_without_sklearn():
    out = _run("import sys\n"
               "sys.modules['sklearn'] = None\n"
               "import numpy as np, bcd\n"
               "X = np.random.default_rng(0).uniform(size=(40, 2)); y = X[:, 0]\n"
               "gp = bcd.gp.GPRegressor(bcd.gp.SquaredExponential(0.5), 0.1)\n"
               "try:\n"
               "    gp.predict(X)\n"
               "except ValueError as exc:\n"
               "    print(type(exc).__name__, isinstance(exc, AttributeError))\n"
               "print(gp.fit(X, y).score(X, y) > 0.9)\n"
               "try:\n"
               "    import bcd.semi_supervised\n"
               "except ImportError as exc:\n"
               "    print(exc)\n")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["_NotFittedError True", "True"], out.stdout
    assert "bcd[sklearn]" in lines[2]
