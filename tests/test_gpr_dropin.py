"""bcd.gp.GaussianProcessRegressor against scikit-learn's class of that name.

Kernel entries of the translations against scikit-learn's to 1e-12, the
log marginal likelihood and its gradient against scikit-learn's
``log_marginal_likelihood`` to 1e-8 relative, fits and predictions against
scikit-learn's, and scikit-learn's own test module run on the drop-in.
"""
import os
import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR  # noqa: E402
from sklearn.gaussian_process.kernels import (RBF, ConstantKernel as C, DotProduct,  # noqa: E402
                                              ExpSineSquared, Matern, RationalQuadratic,
                                              WhiteKernel)

from bcd.gp import GaussianProcessRegressor  # noqa: E402
from bcd.gp import KernelFallbackWarning  # noqa: E402
from bcd.gp._sklearn_kernels import TranslatedKernel, _RationalQuadratic, translate  # noqa: E402

#: whether bcd has a compiled rational quadratic kernel to translate to
HAVE_RQ = _RationalQuadratic is not None


def _data(n=30, d=2, seed=0, targets=None):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, (n, d))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.randn(n)
    if targets:
        y = np.column_stack([y * (k + 1) + k for k in range(targets)])
    return X, y


TRANSLATED = [
    RBF(0.7),
    RBF([0.5, 2.0]),
    C(2.0) * RBF(1.3),
    C(2.0) * RBF([0.5, 2.0]) + WhiteKernel(0.3),
    Matern(0.8, nu=1.5),
    Matern([0.8, 1.4], nu=2.5) * C(0.5),
    Matern(1.1, nu=np.inf),
    ExpSineSquared(1.2, 3.0),
    C(1.5) * ExpSineSquared(0.9, 2.5) * RBF(2.0) + C(0.2),
    (C(1.5) + RBF(0.6)) * Matern(1.2, nu=1.5),
    RBF(0.8) ** 2.5 * C(1.7) ** 0.5,
    ExpSineSquared(1.1, 2.0) ** 3 + WhiteKernel(0.1) * C(2.0),
    C(0.7, "fixed") * RBF(0.9, "fixed") + C(1e-3),
    RBF(1.0, length_scale_bounds="fixed") + RBF(0.3),
    WhiteKernel(0.3) ** 2 + RBF(0.5),
] + ([RationalQuadratic(0.7, 1.5),
      C(2.0) * RationalQuadratic(0.9, 0.5) ** 2 + WhiteKernel(0.1)] if HAVE_RQ else [])


@pytest.mark.parametrize("kernel", TRANSLATED, ids=repr)
def test_translated_entries(kernel):
    X, _ = _data(25, 2)
    Y = _data(7, 2, seed=1)[0]
    t = translate(kernel, 2)
    assert isinstance(t, TranslatedKernel), t
    np.testing.assert_allclose(t.matrix(X), kernel(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(t.cross(Y, X), kernel(Y, X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(t.diag(Y), kernel.diag(Y), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kernel", [Matern(1.0, nu=0.5), DotProduct(),
                                    RBF() + DotProduct(), (RBF() + C()) ** 2,
                                    Matern(1.0, nu=1.5) ** 2, WhiteKernel() ** 0]
                         + ([] if HAVE_RQ else [RationalQuadratic()]), ids=repr)
def test_untranslatable_kernels_name_the_part(kernel):
    t = translate(kernel, 2)
    assert isinstance(t, str) and t


def _sk_fitted(kernel, X, y, **kw):
    """scikit-learn's regressor fitted with the kernel fixed, to call its
    log_marginal_likelihood at any theta."""
    return SkGPR(kernel=kernel, optimizer=None, **kw).fit(X, y)


@pytest.mark.parametrize("kernel", TRANSLATED + [Matern(0.9, nu=0.5) + WhiteKernel(0.2),
                                                 RationalQuadratic(0.8, 1.5) * C(2.0),
                                                 RationalQuadratic(0.8, 1.5) ** 1.5 + C(0.1)],
                         ids=repr)
@pytest.mark.parametrize("targets", [None, 3])
def test_lml_and_gradient_match_sklearn(kernel, targets):
    # the periodic kernel is positive definite on one-dimensional inputs only
    X, y = _data(30, 1 if "ExpSineSquared" in repr(kernel) else 2, targets=targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelFallbackWarning)
        ours = GaussianProcessRegressor(kernel=kernel, optimizer=None, alpha=1e-6).fit(X, y)
    ref = _sk_fitted(kernel, X, y, alpha=1e-6)
    rng = np.random.RandomState(3)
    for theta in (kernel.theta, kernel.theta + 0.3 * rng.randn(kernel.n_dims)):
        lml, grad = ours.log_marginal_likelihood(theta, eval_gradient=True)
        lml_ref, grad_ref = ref.log_marginal_likelihood(theta, eval_gradient=True)
        assert lml == pytest.approx(lml_ref, rel=1e-8)
        np.testing.assert_allclose(grad, grad_ref, rtol=1e-8,
                                   atol=1e-8 * np.max(np.abs(grad_ref)))
        assert ours.log_marginal_likelihood(theta) == pytest.approx(lml, rel=1e-12)


def test_gradient_against_finite_differences():
    X, y = _data(20, 2)
    kernel = C(1.5) * RBF([0.7, 1.2]) ** 1.5 + C(0.1) + WhiteKernel(0.05)
    gpr = GaussianProcessRegressor(kernel=kernel, optimizer=None).fit(X, y)
    theta = kernel.theta
    _, grad = gpr.log_marginal_likelihood(theta, eval_gradient=True)
    h = 1e-6
    fd = [(gpr.log_marginal_likelihood(theta + h * e) - gpr.log_marginal_likelihood(theta - h * e))
          / (2 * h) for e in np.eye(theta.size)]
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel,normalize_y", [
    (C(1.0) * RBF(1.0) + WhiteKernel(0.1), False),
    (C(1.0) * Matern([1.0, 1.0], nu=2.5) + WhiteKernel(0.1), True),
    (RBF(1.0) * ExpSineSquared(1.0, 3.0, periodicity_bounds="fixed") + WhiteKernel(), False),
], ids=repr)
def test_fit_matches_sklearn(kernel, normalize_y):
    X, y = _data(40, 2)
    ours = GaussianProcessRegressor(kernel=kernel, normalize_y=normalize_y).fit(X, y)
    ref = SkGPR(kernel=kernel, normalize_y=normalize_y).fit(X, y)
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-7)
    assert type(ours.kernel_) is type(ref.kernel_)
    np.testing.assert_allclose(ours.kernel_.theta, ref.kernel_.theta, rtol=1e-3, atol=1e-3)
    # the optimum is an optimum of scikit-learn's own objective
    assert ref.log_marginal_likelihood(ours.kernel_.theta) == pytest.approx(
        ours.log_marginal_likelihood_value_, rel=1e-10)
    Xt = _data(9, 2, seed=5)[0]
    m, s = ours.predict(Xt, return_std=True)
    m_ref, s_ref = ref.predict(Xt, return_std=True)
    np.testing.assert_allclose(m, m_ref, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(s, s_ref, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("targets", [None, 2])
@pytest.mark.parametrize("normalize_y", [False, True])
def test_predict_matches_sklearn_at_fixed_kernel(targets, normalize_y):
    X, y = _data(35, 2, targets=targets)
    kernel = C(1.3) * RBF([0.8, 1.5]) + WhiteKernel(0.05) + C(0.2)
    ours = GaussianProcessRegressor(kernel=kernel, optimizer=None, normalize_y=normalize_y,
                                    alpha=1e-4).fit(X, y)
    ref = SkGPR(kernel=kernel, optimizer=None, normalize_y=normalize_y, alpha=1e-4).fit(X, y)
    Xt = _data(8, 2, seed=7)[0]
    for kw in ({}, {"return_std": True}, {"return_cov": True}):
        got, want = ours.predict(Xt, **kw), ref.predict(Xt, **kw)
        got, want = (got,) if not kw else got, (want,) if not kw else want
        for a, b in zip(got, want):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours.alpha_, ref.alpha_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours.L_, ref.L_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.sample_y(Xt, 3, random_state=1),
                               ref.sample_y(Xt, 3, random_state=1), rtol=1e-6, atol=1e-7)
    assert ours.score(X, y) == pytest.approx(ref.score(X, y), rel=1e-9)


def test_restarts_and_custom_optimizer_match_sklearn():
    X, y = _data(25, 2)
    kernel = C(1.0, (1e-2, 1e2)) * RBF([1.0, 1.0], (1e-2, 1e2)) + WhiteKernel(1e-2, (1e-5, 1))
    ours = GaussianProcessRegressor(kernel, n_restarts_optimizer=2, random_state=0).fit(X, y)
    ref = SkGPR(kernel, n_restarts_optimizer=2, random_state=0).fit(X, y)
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-7)

    calls = []

    def optimizer(obj_func, initial_theta, bounds):
        calls.append(bounds.copy())
        value, grad = obj_func(initial_theta)
        assert grad.shape == initial_theta.shape
        return initial_theta, obj_func(initial_theta, eval_gradient=False)

    gpr = GaussianProcessRegressor(kernel, optimizer=optimizer).fit(X, y)
    np.testing.assert_allclose(calls[0], kernel.bounds)
    assert gpr.log_marginal_likelihood_value_ == pytest.approx(
        _sk_fitted(kernel, X, y).log_marginal_likelihood_value_, rel=1e-10)


def test_fallback_warns_once_per_fit_and_matches_sklearn():
    X, y = _data(20, 2)
    kernel = Matern(1.0, nu=0.5) + WhiteKernel(0.1)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ours = GaussianProcessRegressor(kernel).fit(X, y)
    fallbacks = [w for w in record if issubclass(w.category, KernelFallbackWarning)]
    assert len(fallbacks) == 1
    assert "Matern with nu=0.5" in str(fallbacks[0].message)
    ref = SkGPR(kernel).fit(X, y)
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-7)


def test_prior_and_unfitted():
    X, _ = _data(6, 2)
    gpr = GaussianProcessRegressor(C(2.0) * RBF(0.5), n_targets=2)
    mean, cov = gpr.predict(X, return_cov=True)
    assert mean.shape == (6, 2) and cov.shape == (6, 6, 2)
    np.testing.assert_allclose(cov[..., 0], (C(2.0) * RBF(0.5))(X), rtol=1e-12)
    assert gpr.sample_y(X, 4).shape == (6, 2, 4)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        gpr.log_marginal_likelihood(np.zeros(2))


def test_does_not_modify_inputs_or_kernel():
    X, y = _data(15, 2)
    kernel = C(1.0) * RBF(1.0)
    X0, y0, theta0 = X.copy(), y.copy(), kernel.theta.copy()
    gpr = GaussianProcessRegressor(kernel).fit(X, y)
    gpr.predict(X, return_std=True)
    gpr.log_marginal_likelihood(gpr.kernel_.theta + 1.0)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(kernel.theta, theta0)
    assert gpr.kernel is kernel and gpr.kernel_ is not kernel


@pytest.mark.parametrize("params,error,match", [
    ({"kernel": "rbf"}, TypeError, "kernel must be None or a scikit-learn kernel"),
    ({"kernel": object()}, TypeError, "kernel"),
    ({"alpha": -1.0}, ValueError, "alpha must be a non-negative"),
    ({"alpha": np.ones(3)}, ValueError, "alpha must be a scalar or an array"),
    ({"optimizer": "bfgs"}, ValueError, "optimizer must be 'fmin_l_bfgs_b'"),
    ({"n_restarts_optimizer": -1}, ValueError, "n_restarts_optimizer"),
    ({"n_restarts_optimizer": 1.5}, ValueError, "n_restarts_optimizer"),
    ({"normalize_y": "yes"}, ValueError, "normalize_y must be a bool"),
    ({"n_targets": 0}, ValueError, "n_targets"),
    ({"n_targets": 2}, ValueError, "number of targets seen"),
])
def test_bad_input(params, error, match):
    X, y = _data(8, 2)
    with pytest.raises(error, match=match):
        GaussianProcessRegressor(**params).fit(X, y)


def test_bad_data_and_calls():
    X, y = _data(8, 2)
    with pytest.raises(ValueError):
        GaussianProcessRegressor().fit(X, y[:5])
    with pytest.raises(ValueError):
        GaussianProcessRegressor().fit(np.where(X > 0, np.nan, X), y)
    gpr = GaussianProcessRegressor(RBF()).fit(X, y)
    with pytest.raises(RuntimeError, match="At most one of return_std or return_cov"):
        gpr.predict(X, return_std=True, return_cov=True)
    with pytest.raises(ValueError, match="theta!=None"):
        gpr.log_marginal_likelihood(eval_gradient=True)
    with pytest.raises(ValueError, match="features"):
        gpr.predict(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="not returning a positive definite"):
        GaussianProcessRegressor(RBF(1.0, "fixed"), alpha=0.0, optimizer=None).fit(
            np.vstack([X, X]), np.concatenate([y, y]))


def test_sklearn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(GaussianProcessRegressor())


# ----------------------------------------------- scikit-learn's own test module

#: test items of sklearn/gaussian_process/tests/test_gpr.py not expected to
#: pass with bcd's class, counted as failures; each with its reason
EXCLUDED = {
}


def _run_sklearn_module(tmp_path):
    import sklearn.gaussian_process.tests as sktests

    src = pathlib.Path(sktests.__file__).parent / "test_gpr.py"
    text = src.read_text()
    pattern = r"^from sklearn\.gaussian_process import GaussianProcessRegressor$"
    assert re.search(pattern, text, flags=re.M), "scikit-learn's import line changed"
    text = re.sub(pattern, "from bcd.gp import GaussianProcessRegressor", text, flags=re.M)
    dest = tmp_path / "test_gpr_bcd.py"
    dest.write_text(text)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-rfEp", "--import-mode=importlib", str(dest)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    return proc.stdout + proc.stderr


def _counts(output):
    summary = output.strip().splitlines()[-1]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|error|errors|xfailed"
                                               r"|skipped|xpassed)", summary)}
    failed = set(re.findall(r"^(?:FAILED|ERROR) \S+::(\S+)", output, flags=re.M))
    return counts, failed


def test_sklearn_test_gpr_module_passes(tmp_path):
    output = _run_sklearn_module(tmp_path)
    counts, failed = _counts(output)
    passed_items = set(re.findall(r"^PASSED \S+::(\S+)", output, flags=re.M))
    passed = counts.get("passed", 0)
    # the items that build an estimator and pass with scikit-learn: its
    # xfail-marked ones (test_lml_gradient, a known scikit-learn issue) are
    # left out: they fail with scikit-learn too
    total = passed + counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    unexpected = failed - set(EXCLUDED)
    assert not unexpected, output[-5000:]
    # excluded items count as failures even where they pass
    passed_counted = passed - len(passed_items & set(EXCLUDED))
    fraction = passed_counted / total
    print(f"scikit-learn test_gpr.py with bcd: {passed_counted} / {total} = {fraction:.3f}")
    assert total >= 130, output[-3000:]
    assert fraction >= 0.95, output[-3000:]


def test_docstring_examples():
    import doctest

    import bcd.gp._sklearn_gpr as module
    failures, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failures == 0


def test_translation_maps_bounds_and_fixes_constant_parameters():
    kernel = (C(2.0, (1e-2, 1e2)) * RBF([0.5, 2.0], (1e-3, 1e3))
              + ExpSineSquared(1.0, 3.0, periodicity_bounds="fixed") ** 4)
    t = translate(kernel, 2)
    hyper = {h.name: h for h in t.compiled.hyperparameters}
    assert hyper["k1__variance"].bounds == pytest.approx((1e-2, 1e2))
    assert hyper["k1__lengthscale"].bounds == pytest.approx((1e-3, 1e3))
    assert hyper["k2__variance"].fixed and hyper["k2__period"].fixed
    # (l / sqrt(4)) has the bounds of l divided by 2
    assert hyper["k2__lengthscale"].bounds == pytest.approx((0.5e-5, 0.5e5))
    # theta: log c, log l0, log l1, log l (periodic): the chain rule's matrix
    np.testing.assert_array_equal(t.jacobian, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0],
                                               [0, 0, 0, 1]])


def test_importing_bcd_gp_does_not_import_sklearn():
    code = ("import sys, bcd.gp; assert 'sklearn' not in sys.modules; "
            "bcd.gp.GaussianProcessRegressor; assert 'sklearn' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def test_per_sample_alpha_and_no_copy_match_sklearn():
    X, y = _data(20, 2)
    alpha = np.linspace(1e-3, 1e-1, 20)
    kernel = C(1.0) * Matern(1.0, nu=1.5)
    ours = GaussianProcessRegressor(kernel, alpha=alpha, copy_X_train=False).fit(X, y)
    ref = SkGPR(kernel, alpha=alpha, copy_X_train=False).fit(X, y)
    assert ours.X_train_ is X
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-7)
    np.testing.assert_allclose(ours.predict(X[:4]), ref.predict(X[:4]), rtol=1e-4, atol=1e-6)
