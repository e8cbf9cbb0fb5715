"""Tests of the sparse GP (bcd.gp.SparseGPRegressor) and of the kernels on
discrete inputs (Hamming, HistogramIntersection).

References are dense: the kernels from NumPy formulas, the objectives (the
variational free energy and the projected-process likelihood) and the
predictive distribution from the n x n matrices, the gradients by central
finite differences, the greedy selection by brute force.
"""
import copy
import pickle
import warnings

import numpy as np
import pytest
import threadpoolctl

import bcd
from bcd.gp import (GPRegressor, Hamming, HistogramIntersection, Matern, Overlap, Periodic,
                    SparseGPRegressor, SquaredExponential)
from bcd.gp import sparse as sparse_mod
from bcd.gp.sparse import _Factor, _InfoPivots, _minimize_cg, _Run


@pytest.fixture(autouse=True, scope="module")
def _single_threaded_blas():
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        yield


# ---------------------------------------------------------------- references

def _hamming_ref(X1, X2, w, v):
    return v * np.exp(-((X1[:, None, :] != X2[None, :, :]) * w).sum(-1))


def _hi_ref(X1, X2, v):
    return v * np.minimum(X1[:, None, :], X2[None, :, :]).sum(-1)


def _dense_objective(K, y, idx, s, nu):
    """The objective from the n x n matrices (the constant n/2 log 2 pi included)."""
    n = K.shape[0]
    Kn = K[:, idx]
    Q = Kn @ np.linalg.solve(K[np.ix_(idx, idx)], Kn.T)
    C = Q + s * np.eye(n)
    _, logdet = np.linalg.slogdet(C)
    return 0.5 * (y @ np.linalg.solve(C, y) + logdet + nu * np.trace(K - Q) / s) \
        + 0.5 * n * np.log(2 * np.pi)


def _dense_predict(kernel, X, y, idx, s, Xt):
    """The sparse GP's predictive mean and latent variance from the n x n
    matrices: with Q = K_nI K_II^-1 K_In, mean = Q_tn (Q + s I)^-1 y and
    variance = k_tt - Q_tn (Q + s I)^-1 Q_nt."""
    n = X.shape[0]
    Kmm = kernel(X[idx])
    Qtn = kernel(Xt, X[idx]) @ np.linalg.solve(Kmm, kernel(X[idx], X))
    Q = kernel(X, X[idx]) @ np.linalg.solve(Kmm, kernel(X[idx], X))
    C = Q + s * np.eye(n)
    mean = Qtn @ np.linalg.solve(C, y)
    var = np.diag(kernel(Xt)) - np.einsum("ij,ji->i", Qtn, np.linalg.solve(C, Qtn.T))
    return mean, var


def _data(n=120, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(5 * X[:, 0]) + X[:, -1] ** 2 + 0.1 * rng.standard_normal(n)
    return X, y


def _data1d(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 3, size=(n, 1))
    y = np.sin(4 * X[:, 0]) + 0.3 * X[:, 0] + 0.1 * rng.standard_normal(n)
    return X, y


def _categorical(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 3, n), rng.integers(0, 5, n)])
    y = np.where(X[:, 0] == 1, 1.0, 0.0) + 0.5 * (X[:, 2] % 2) - 0.3 * X[:, 1] \
        + 0.1 * rng.standard_normal(n)
    return X.astype(float), y


def _histograms(n=100, d=6, seed=0):
    rng = np.random.default_rng(seed)
    H = rng.dirichlet(np.ones(d), size=n)
    y = H[:, 0] - H[:, 1] + 0.05 * rng.standard_normal(n)
    return H, y


KERNELS = {
    "se-ard": (lambda: SquaredExponential([0.3, 0.5], 1.2), _data),
    # periodic kernels are positive definite on one-dimensional inputs
    "matern+periodic": (lambda: Matern(2.5, 0.4) + Periodic(1.6, 1.0, 0.5), _data1d),
    "hamming": (lambda: Hamming([0.5, 1.0, 2.0], 1.5), _categorical),
    "hamming*se": (lambda: Hamming(0.7) * SquaredExponential(3.0, 2.0), _categorical),
    "intersection": (lambda: HistogramIntersection(2.0), _histograms),
}


def _factor(kernel, X, y, noise, nu, m):
    fac = _Factor(np.ascontiguousarray(X, dtype=float), y, m, 1, nu)
    fac.set_model(kernel, noise)
    return fac


# ---------------------------------------------------------------- discrete kernels

def test_discrete_kernels_match_numpy_references():
    rng = np.random.default_rng(1)
    X1 = rng.integers(-2, 3, size=(40, 4)).astype(float)
    X2 = rng.integers(-2, 3, size=(25, 4)).astype(float)
    w = np.array([0.3, 1.0, 2.0, 0.7])
    np.testing.assert_allclose(Hamming(w, 1.7)(X1, X2), _hamming_ref(X1, X2, w, 1.7),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Overlap(0.4)(X1), _hamming_ref(X1, X1, 0.4, 1.0),
                               rtol=1e-12, atol=1e-12)
    H1, H2 = rng.uniform(size=(40, 5)), rng.uniform(size=(25, 5))
    np.testing.assert_allclose(HistogramIntersection(0.8)(H1, H2), _hi_ref(H1, H2, 0.8),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(HistogramIntersection(0.8).diag(H1), 0.8 * H1.sum(1), rtol=1e-12)
    # sums and products with the continuous kernels, and mixed metrics
    k = Hamming(w, 1.7) * HistogramIntersection(0.5) + SquaredExponential(2.0)
    Xc1, Xc2 = np.abs(X1), np.abs(X2)
    ref = _hamming_ref(Xc1, Xc2, w, 1.7) * _hi_ref(Xc1, Xc2, 0.5) \
        + np.exp(-0.5 * ((Xc1[:, None] - Xc2[None]) ** 2).sum(-1) / 4.0)
    np.testing.assert_allclose(k(Xc1, Xc2), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.diag(Xc1), np.diag(k(Xc1)), rtol=1e-12)
    # the evaluator's products agree with the dense matrix
    ev = k.evaluator(Xc1)
    v = rng.standard_normal(40)
    np.testing.assert_allclose(ev.matvec(v), k(Xc1) @ v, rtol=1e-11)


def test_discrete_kernel_parameters_and_errors():
    k = Hamming([1.0, 2.0], 3.0)
    assert k.get_params() == {"weights": k.weights, "variance": 3.0}
    k.set_params(weights=0.5)
    assert repr(k) == "Hamming(weights=0.5, variance=3)"
    assert Overlap is Hamming
    assert HistogramIntersection(2.0).set_params(variance=4.0).variance == 4.0
    prod = Hamming(1.0) * HistogramIntersection()
    assert set(prod.get_params()) >= {"k1__weights", "k2__variance"}
    assert not prod.stationary and Hamming(1.0).stationary
    with pytest.raises(ValueError, match="weights must be positive"):
        Hamming([1.0, -1.0])
    with pytest.raises(ValueError, match="categorical codes must be integers"):
        Hamming(1.0)(np.array([[0.0, 1.5]]))
    with pytest.raises(ValueError, match="must be non-negative"):
        HistogramIntersection()(np.array([[0.2, -0.1]]))
    with pytest.raises(ValueError, match="2 weights but the inputs have 3"):
        Hamming([1.0, 2.0])(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="not stationary"):
        HistogramIntersection().diag_value()


@pytest.mark.parametrize("name", ["hamming", "intersection"])
def test_discrete_kernels_in_the_exact_gp(name):
    make, data = KERNELS[name]
    X, y = data(80)
    kernel = make()
    gp = GPRegressor(kernel, noise=0.1, tol=1e-10, n_threads=1).fit(X, y)
    K = kernel(X) + 0.1 * np.eye(80)
    alpha = np.linalg.solve(K, y)
    np.testing.assert_allclose(gp.alpha_, alpha, atol=1e-7)
    Xt = X[:7] if name == "hamming" else data(7, seed=3)[0]
    mean, std = gp.predict(Xt, return_std=True)
    Kt = kernel(Xt, X)
    np.testing.assert_allclose(mean, Kt @ alpha, atol=1e-7)
    var = np.diag(kernel(Xt)) - np.einsum("ij,ji->i", Kt, np.linalg.solve(K, Kt.T))
    np.testing.assert_allclose(std ** 2, np.maximum(var, 0), atol=1e-8)


def test_kernel_log_parameter_derivatives_match_finite_differences():
    from bcd.gp._kernel import CyKernelEvaluator
    rng = np.random.default_rng(2)
    cases = [
        ((SquaredExponential([0.7, 1.2]) + Matern(1.5, [0.5, 2.0], 0.7))
         * Periodic(1.3, 0.8, 1.5), rng.standard_normal((20, 2)), rng.standard_normal((6, 2))),
        (Matern(2.5, 0.8) + LocallyPeriodicFactory(), rng.standard_normal((20, 2)),
         rng.standard_normal((6, 2))),
        (Hamming([0.5, 1.5], 1.7) * HistogramIntersection(0.5) + HistogramIntersection(2.0),
         rng.integers(0, 3, (20, 2)).astype(float), rng.integers(0, 3, (6, 2)).astype(float)),
    ]
    for kernel, X, Z in cases:
        spec, gmap = kernel._spec(2, gradient=True)
        ev = CyKernelEvaluator(spec, X, Z)
        ev.set_gradient_map(*gmap)
        G = rng.standard_normal((20, 6))
        theta = kernel._get_theta()
        got = ev.grad_contract(G)
        got_diag = ev.grad_diagonal(np.arange(20.0))
        for p in range(theta.shape[0]):
            e = np.zeros_like(theta)
            e[p] = 1e-6
            up = copy.deepcopy(kernel)._set_theta(theta + e)
            dn = copy.deepcopy(kernel)._set_theta(theta - e)
            num = np.sum((up(X, Z) - dn(X, Z)) * G) / 2e-6
            assert got[p] == pytest.approx(num, rel=1e-6, abs=1e-7), kernel._theta_names()[p]
            num_d = np.sum((up.diag(X) - dn.diag(X)) * np.arange(20.0)) / 2e-6
            assert got_diag[p] == pytest.approx(num_d, rel=1e-6, abs=1e-6)


def test_gradient_contraction_paths_agree():
    """The evaluator's dense, symmetric and low-rank contractions, with the
    fused squared-exponential path and a weight shared by every dimension,
    agree with finite differences and do not depend on the thread count."""
    from bcd.gp._kernel import CyKernelEvaluator
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 3))
    Xd = rng.integers(0, 3, (300, 3)).astype(float)
    for kernel, X in [(SquaredExponential(0.9, 1.3), X), (SquaredExponential([0.7, 1.2, 2.0]), X),
                      (Hamming(0.8, 1.4), Xd)]:
        spec, gmap = kernel._spec(3, gradient=True)
        S = rng.standard_normal((300, 300))
        S = S + S.T
        U, V = rng.standard_normal((300, 2)), rng.standard_normal((300, 2))
        one = CyKernelEvaluator(spec, X, None, 1)
        two = CyKernelEvaluator(spec, X, None, 2)
        for ev in (one, two):
            ev.set_gradient_map(*gmap)
        dense = one.grad_contract(S)
        np.testing.assert_allclose(one.grad_contract(S, symmetric=True), dense, rtol=1e-10)
        np.testing.assert_allclose(one.grad_low_rank(U, V), one.grad_contract(U @ V.T),
                                   rtol=1e-10)
        assert np.array_equal(two.grad_contract(S), dense)
        assert np.array_equal(two.grad_low_rank(U, V), one.grad_low_rank(U, V))
        theta = kernel._get_theta()
        for p in range(theta.shape[0]):
            e = np.zeros_like(theta)
            e[p] = 1e-6
            up = copy.deepcopy(kernel)._set_theta(theta + e)
            dn = copy.deepcopy(kernel)._set_theta(theta - e)
            num = np.sum((up(X) - dn(X)) * S) / 2e-6
            assert dense[p] == pytest.approx(num, rel=1e-6, abs=1e-6)


def LocallyPeriodicFactory():
    from bcd.gp import LocallyPeriodic
    return LocallyPeriodic(1.1, 0.9, 0.6)


# ---------------------------------------------------------------- objectives

@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("objective", ["vfe", "nmll"])
def test_objectives_match_dense_reference(name, objective):
    make, data = KERNELS[name]
    X, y = data()
    kernel = make()
    nu = 1 if objective == "vfe" else 0
    K = kernel(X)
    rng = np.random.default_rng(0)
    fac = _factor(kernel, X, y, 0.07, nu, 15)
    idx = rng.choice(X.shape[0], 15, replace=False)
    if name.startswith("hamming"):
        idx = np.unique(X, axis=0, return_index=True)[1][:15]     # distinct inputs
    fac.factorize(idx)
    assert fac.objective() == pytest.approx(_dense_objective(K, y, idx, 0.07, nu), rel=1e-10)
    # the residual diagonal and the factor
    np.testing.assert_allclose(fac.L[:, :15] @ fac.L[:, :15].T,
                               K[:, idx] @ np.linalg.solve(K[np.ix_(idx, idx)], K[idx]),
                               atol=1e-10)
    np.testing.assert_allclose(fac.R[:15, :15].T @ fac.R[:15, :15],
                               fac.L[:, :15].T @ fac.L[:, :15] + 0.07 * np.eye(15), atol=1e-10)


def test_householder_qr_path_agrees(monkeypatch):
    X, y = _data()
    kernel = SquaredExponential(0.4)
    idx = np.arange(0, 120, 8)
    fac = _factor(kernel, X, y, 0.05, 1, 15)
    fac.factorize(idx)
    R1 = fac.R[:15, :15].copy()
    monkeypatch.setattr(sparse_mod, "CHOLQR_MAX_CONDITION", 0.0)
    fac.factorize(idx)
    np.testing.assert_allclose(fac.R[:15, :15], R1, rtol=1e-9, atol=1e-10)


# ---------------------------------------------------------------- swaps

def _fresh(fac, piv):
    other = _factor(fac.kernel, fac.X, fac.y, fac.s, fac.nu, len(piv))
    other.factorize(piv)
    return other


@pytest.mark.parametrize("name", ["se-ard", "hamming"])
@pytest.mark.parametrize("objective", ["vfe", "nmll"])
def test_swaps_never_increase_the_objective(name, objective):
    make, data = KERNELS[name]
    X, y = data()
    kernel = make()
    nu = 1 if objective == "vfe" else 0
    K = kernel(X)
    est = SparseGPRegressor(kernel, 0.05, n_inducing=12, n_info_pivots=5,
                            optimize_hyperparameters=False)
    fac = _factor(kernel, X, y, 0.05, nu, 12)
    run = _Run(est, fac, kernel, np.random.default_rng(1), 12, 5, None, 0.0)
    run.start()
    info = _InfoPivots(fac, 5, run.rng)
    info.refresh()
    accepted = 0
    for t in range(40):
        if t % 5 == 0:
            info.refresh()
        before = _dense_objective(K, y, fac.piv[:12], 0.05, nu)
        assert run.F == pytest.approx(before, rel=1e-9)
        ok = run._swap(t % 12, info)
        after = _dense_objective(K, y, fac.piv[:12], 0.05, nu)
        assert after <= before + 1e-9 * abs(before)
        if ok:
            accepted += 1
            assert after < before
        # the updated state is the factorization of the new pivots
        ref = _fresh(fac, fac.piv[:12].copy())
        np.testing.assert_allclose(fac.L[:, :12] @ fac.L[:, :12].T,
                                   ref.L[:, :12] @ ref.L[:, :12].T, atol=1e-9)
        np.testing.assert_allclose(fac.R[:12, :12].T @ fac.R[:12, :12],
                                   ref.R[:12, :12].T @ ref.R[:12, :12], atol=1e-8)
        np.testing.assert_allclose(fac.d, ref.d, atol=1e-9)
        np.testing.assert_allclose(fac.Ly[:12] @ np.linalg.solve(
            fac.R[:12, :12].T @ fac.R[:12, :12], fac.Ly[:12]),
            ref.Ly[:12] @ np.linalg.solve(ref.R[:12, :12].T @ ref.R[:12, :12], ref.Ly[:12]),
            rtol=1e-9)
        # the information pivots' residual columns and L^T E stay exact
        z = info.J.shape[0]
        Res = K - ref.L[:, :12] @ ref.L[:, :12].T
        np.testing.assert_allclose(info.E[:, :z], Res[:, info.J], atol=1e-9)
        np.testing.assert_allclose(info.T[:12, :z], fac.L[:, :12].T @ info.E[:, :z],
                                   atol=1e-8)
        assert len(set(fac.piv[:12])) == 12
    assert accepted >= 3


def test_fit_history_decreases_and_matches_dense():
    X, y = _data(200)
    kernel = SquaredExponential([0.3, 0.5], 1.2)
    gp = SparseGPRegressor(kernel, 0.05, n_inducing=15, optimize_hyperparameters=False,
                           random_state=0, n_threads=1).fit(X, y)
    h = gp.history_["objective"]
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))
    assert h[-1] < h[0] and gp.history_["accepted"].sum() > 0
    assert gp.objective_ == pytest.approx(
        _dense_objective(kernel(X), y, gp.inducing_indices_, 0.05, 1), rel=1e-9)
    assert gp.noise_ == 0.05 and gp.kernel_.lengthscale.tolist() == [0.3, 0.5]
    # cholqr swaps beat the random start they came from
    rnd = SparseGPRegressor(kernel, 0.05, n_inducing=15, optimizer="random",
                            optimize_hyperparameters=False, random_state=0).fit(X, y)
    assert rnd.objective_ == pytest.approx(h[0], rel=1e-12)


# ---------------------------------------------------------------- predictions

@pytest.mark.parametrize("name", list(KERNELS))
def test_predictions_match_dense_sparse_gp_formulas(name):
    make, data = KERNELS[name]
    X, y = data()
    gp = SparseGPRegressor(make(), 0.07, n_inducing=10, random_state=0, max_epochs=3,
                           n_threads=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        gp.fit(X, y)
    Xt = data(30, seed=5)[0]
    mean, std = gp.predict(Xt, return_std=True)
    ref_mean, ref_var = _dense_predict(gp.kernel_, X, y, gp.inducing_indices_, gp.noise_, Xt)
    scale = np.abs(ref_mean).max()
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-7, atol=1e-8 * scale)
    np.testing.assert_allclose(std ** 2, np.maximum(ref_var, 0), rtol=1e-6, atol=1e-8)
    assert np.all(std >= 0)
    np.testing.assert_array_equal(gp.predict(Xt), mean)
    np.testing.assert_array_equal(gp.inducing_points_, X[gp.inducing_indices_])
    nu = 1 if gp.objective == "vfe" else 0
    assert gp.objective_ == pytest.approx(_dense_objective(
        gp.kernel_(X), y, gp.inducing_indices_, gp.noise_, nu), rel=1e-9)


def test_std_is_never_negative_at_the_inducing_points():
    X, y = _data(150)
    gp = SparseGPRegressor(SquaredExponential(0.05), 1e-4, n_inducing=150,
                           optimize_hyperparameters=False).fit(X, y)
    _, std = gp.predict(X, return_std=True)
    assert np.all(std >= 0) and np.all(np.isfinite(std))


# ---------------------------------------------------------------- gradients

@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("objective", ["vfe", "nmll"])
def test_hyperparameter_gradient_matches_finite_differences(name, objective):
    make, data = KERNELS[name]
    X, y = data(60)
    kernel = make()
    nu = 1 if objective == "vfe" else 0
    fac = _factor(kernel, X, y, 0.08, nu, 8)
    idx = np.unique(X, axis=0, return_index=True)[1][:8]
    fac.factorize(idx)
    spec, gmap = kernel._spec(X.shape[1], gradient=True)
    f, g = fac.gradient(spec, gmap)
    theta = np.append(kernel._get_theta(), np.log(0.08))

    def objective_at(th):
        k = copy.deepcopy(kernel)._set_theta(th[:-1])
        other = _factor(k, X, y, np.exp(th[-1]), nu, 8)
        other.factorize(idx)
        return other.objective()

    assert f == pytest.approx(objective_at(theta), rel=1e-12)
    for p in range(theta.shape[0]):
        e = np.zeros_like(theta)
        e[p] = 1e-5
        num = (objective_at(theta + e) - objective_at(theta - e)) / 2e-5
        assert g[p] == pytest.approx(num, rel=1e-5, abs=1e-5 * max(1.0, abs(f)))


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("objective", ["vfe", "nmll"])
def test_gram_form_of_the_gradient_matches_the_factor_form(name, objective):
    # the hyperparameter step evaluates the objective and its gradient from
    # the Gram matrix of K[:, I], without the factor L
    make, data = KERNELS[name]
    X, y = data(60)
    kernel = make()
    nu = 1 if objective == "vfe" else 0
    idx = np.unique(X, axis=0, return_index=True)[1][:8]
    spec, gmap = kernel._spec(X.shape[1], gradient=True)
    fac = _factor(kernel, X, y, 0.08, nu, 8)
    fac.factorize(idx)
    f_ref, g_ref = fac.gradient(spec, gmap)
    calls = []
    fac.factorize = lambda *a, **k: calls.append(a)      # the fallback is not taken
    f, g = fac.value_and_gradient(idx, spec, gmap)
    assert not calls
    # the two forms round differently (the Gram form is used while chol(K_II)
    # is well conditioned)
    assert f == pytest.approx(f_ref, rel=1e-8)
    np.testing.assert_allclose(g, g_ref, rtol=1e-6, atol=1e-8 * max(1.0, abs(f_ref)))


def test_gram_form_falls_back_to_the_factor_when_ill_conditioned():
    # nearly duplicate inducing inputs: the Gram matrix would square the
    # conditioning of chol(K_II), so the factor form is used
    X, y = _data(80)
    X[1] = X[0] + 1e-7
    kernel = SquaredExponential(1.0)
    spec, gmap = kernel._spec(X.shape[1], gradient=True)
    idx = np.arange(6)
    fac = _factor(kernel, X, y, 1e-3, 1, 6)
    fac.factorize(idx)
    f_ref, g_ref = fac.gradient(spec, gmap)
    f, g = fac.value_and_gradient(idx, spec, gmap)
    assert fac.k == 6                                    # refactorized
    assert f == f_ref
    np.testing.assert_array_equal(g, g_ref)


def test_nonlinear_cg_minimizes_within_its_budget():
    A = np.diag([1.0, 10.0, 100.0])
    calls = []

    def fg(x):
        calls.append(1)
        return 0.5 * x @ A @ x, A @ x

    x, f, g, evals = _minimize_cg(fg, np.ones(3), 40)
    assert evals == len(calls) <= 40 and f < 1e-8

    def rosen(x):
        calls.append(1)
        f = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        return f, np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2),
                            200 * (x[1] - x[0] ** 2)])

    calls.clear()
    x, f, g, evals = _minimize_cg(rosen, np.array([-1.2, 1.0]), 20)
    assert evals == len(calls) <= 20 and f < rosen(np.array([-1.2, 1.0]))[0]


def test_hyperparameters_are_learned():
    X, y = _data(300)
    start = SquaredExponential([2.0, 2.0], 0.3)
    gp = SparseGPRegressor(start, 0.5, n_inducing=20, random_state=0, n_threads=1).fit(X, y)
    h = gp.history_["objective"]
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))
    assert gp.noise_ < 0.05 and gp.history_["evaluations"][1] <= 20
    assert start.lengthscale.tolist() == [2.0, 2.0]          # the estimator's kernel is kept
    assert gp.score(X, y) > 0.9


# ---------------------------------------------------------------- baselines

def test_random_baseline_keeps_its_set():
    X, y = _data(200)
    gp = SparseGPRegressor(SquaredExponential(0.4), 0.1, n_inducing=10, optimizer="random",
                           random_state=3, max_epochs=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        gp.fit(X, y)
    gp2 = SparseGPRegressor(SquaredExponential(0.4), 0.1, n_inducing=10, optimizer="random",
                            random_state=3, optimize_hyperparameters=False).fit(X, y)
    assert sorted(gp.inducing_indices_) == sorted(gp2.inducing_indices_)
    assert gp.history_["swaps"].sum() == 0 and gp.objective_ < gp2.objective_


@pytest.mark.parametrize("objective", ["vfe", "nmll"])
def test_greedy_with_all_candidates_is_brute_force_greedy(objective):
    X, y = _data(60)
    kernel = SquaredExponential(0.3)
    nu = 1 if objective == "vfe" else 0
    K = kernel(X)
    gp = SparseGPRegressor(kernel, 0.05, n_inducing=6, objective=objective, optimizer="greedy",
                           n_candidates=60, optimize_hyperparameters=False).fit(X, y)
    chosen = []
    for _ in range(6):
        rest = [j for j in range(60) if j not in chosen]
        values = [_dense_objective(K, y, np.array(chosen + [j]), 0.05, nu) for j in rest]
        chosen.append(rest[int(np.argmin(values))])
    assert list(gp.inducing_indices_) == chosen
    assert gp.objective_ == pytest.approx(_dense_objective(K, y, np.array(chosen), 0.05, nu),
                                          rel=1e-10)


def test_cholqr_beats_random_and_greedy_16_on_the_objective():
    X, y = bcd.datasets.make_friedman1(600, 10, random_state=0)[:2]
    kernel = SquaredExponential(np.full(10, 2.0))
    out = {}
    for opt in ("cholqr", "random", "greedy"):
        gp = SparseGPRegressor(kernel, 0.05, n_inducing=24, optimizer=opt,
                               optimize_hyperparameters=False, random_state=0).fit(X, y)
        out[opt] = gp.objective_
    assert out["cholqr"] < out["greedy"] < out["random"]


# ---------------------------------------------------------------- duplicates

def test_duplicate_inputs_are_skipped():
    X, y = _data(40)
    X = np.repeat(X, 3, axis=0)                 # every input three times
    y = np.repeat(y, 3) + 0.01 * np.arange(120) % 3
    for opt in ("cholqr", "random", "greedy"):
        gp = SparseGPRegressor(SquaredExponential(0.3), 0.05, n_inducing=30, optimizer=opt,
                               optimize_hyperparameters=False, random_state=0).fit(X, y)
        Z = gp.inducing_points_
        assert np.unique(Z, axis=0).shape[0] == 30
        assert np.isfinite(gp.objective_)
    with pytest.warns(UserWarning, match="Only 40 training inputs"):
        gp = SparseGPRegressor(SquaredExponential(0.3), 0.05, n_inducing=60,
                               optimize_hyperparameters=False, random_state=0).fit(X, y)
    assert gp.inducing_indices_.shape[0] == 40
    mean, std = gp.predict(X[:5], return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(std >= 0)


def test_categorical_duplicates_end_to_end():
    X, y = _categorical(300)                   # 60 distinct code combinations
    n_distinct = np.unique(X, axis=0).shape[0]
    gp = SparseGPRegressor(Hamming([1.0, 1.0, 1.0]), 0.1, n_inducing=20, random_state=0,
                           n_threads=1).fit(X, y)
    assert np.unique(gp.inducing_points_, axis=0).shape[0] == 20 < n_distinct
    assert gp.score(X, y) > 0.9
    assert np.all(gp.kernel_.weights > 0) and gp.noise_ > 0
    Xh, yh = _histograms(150)
    gp = SparseGPRegressor(HistogramIntersection(1.0), 0.1, n_inducing=15,
                           random_state=0, n_threads=1).fit(Xh, yh)
    assert gp.score(Xh, yh) > 0.5


# ---------------------------------------------------------------- estimator

def test_convergence_warning_keeps_the_best_model():
    X, y = _data(200)
    gp = SparseGPRegressor(SquaredExponential([1.0, 1.0]), 0.3, n_inducing=10,
                           optimizer="greedy", max_epochs=2, random_state=0)
    with pytest.warns(bcd.ConvergenceWarning, match="max_epochs=2"):
        gp.fit(X, y)
    assert gp.n_iter_ == 2
    assert gp.objective_ == pytest.approx(gp.history_["objective"].min())
    assert gp.objective_ == pytest.approx(_dense_objective(
        gp.kernel_(X), y, gp.inducing_indices_, gp.noise_, 1), rel=1e-9)


def test_pickle_and_parameters():
    X, y = _data(100)
    gp = SparseGPRegressor(SquaredExponential(0.4), 0.1, n_inducing=8, random_state=0,
                           max_epochs=2)
    assert gp.get_params()["kernel__lengthscale"] == 0.4
    gp.set_params(kernel__lengthscale=0.5, n_inducing=9)
    assert gp.kernel.lengthscale == 0.5 and gp.n_inducing == 9
    assert "n_inducing=9" in repr(gp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        gp.fit(X, y)
    clone = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(clone.predict(X[:10], return_std=True)[1],
                                  gp.predict(X[:10], return_std=True)[1])
    assert len(pickle.dumps(gp)) < 100_000           # no n x m matrix is kept
    from sklearn.base import clone as sk_clone
    copy_ = sk_clone(gp)
    assert not hasattr(copy_, "beta_") and copy_.get_params()["n_inducing"] == 9


with warnings.catch_warnings():
    # the estimator implements the interface without inheriting from BaseEstimator
    warnings.filterwarnings("ignore", message=".*does not inherit from", category=UserWarning)
    from sklearn.utils.estimator_checks import parametrize_with_checks
    _checks = parametrize_with_checks(
        [SparseGPRegressor(SquaredExponential(3.0), 0.5, n_inducing=3, max_epochs=3,
                           random_state=0, n_threads=1)],
        expected_failed_checks=lambda est: {
            "check_fit1d": "a 1-D X is read as a single feature, as by GPRegressor"})


@_checks
def test_sklearn_compatible_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        check(estimator)


def test_verbose_prints_epochs(capsys):
    X, y = _data(80)
    SparseGPRegressor(SquaredExponential(0.4), 0.1, n_inducing=5, verbose=True,
                      optimize_hyperparameters=False).fit(X, y)
    out = capsys.readouterr().out
    assert "epoch" in out and "objective" in out and "converged" in out


BAD = [
    (dict(n_inducing=0), ValueError, "n_inducing must be between 1"),
    (dict(n_inducing=101), ValueError, "n_inducing must be between 1"),
    (dict(n_inducing=2.5), TypeError, "n_inducing must be an integer"),
    (dict(n_info_pivots=0), ValueError, "n_info_pivots must be at least 1"),
    (dict(objective="mll"), ValueError, "objective must be one of"),
    (dict(optimizer="swap"), ValueError, "optimizer must be one of"),
    (dict(max_epochs=0), ValueError, "max_epochs must be >= 1"),
    (dict(noise=-1.0), ValueError, "noise must be positive"),
    (dict(noise=1e-9), ValueError, "noise must be at least"),
    (dict(kernel="rbf"), TypeError, "kernel must be a bcd.gp kernel"),
]


@pytest.mark.parametrize("params, error, match", BAD)
def test_bad_parameters_raise(params, error, match):
    X, y = _data(100)
    kw = dict(kernel=SquaredExponential(0.4), noise=0.1, n_inducing=5)
    kw.update(params)
    with pytest.raises(error, match=match):
        SparseGPRegressor(**kw).fit(X, y)


def test_bad_inputs_raise():
    X, y = _data(50)
    gp = SparseGPRegressor(SquaredExponential(0.4), 0.1, n_inducing=5)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        gp.fit(Xn, y)
    yn = y.copy()
    yn[0] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        gp.fit(X, yn)
    Xc, yc = _categorical(50)
    Xc[4, 0] = 0.5
    with pytest.raises(ValueError, match="categorical codes must be integers"):
        SparseGPRegressor(Hamming(1.0), 0.1, n_inducing=5).fit(Xc, yc)
    Xh, yh = _histograms(50)
    Xh[2, 2] = -0.1
    with pytest.raises(ValueError, match="histograms must be non-negative"):
        SparseGPRegressor(HistogramIntersection(), 0.1, n_inducing=5).fit(Xh, yh)
    gp = SparseGPRegressor(Hamming(1.0), 0.1, n_inducing=5).fit(*_categorical(50))
    with pytest.raises(ValueError, match="categorical codes must be integers"):
        gp.predict(np.array([[0.0, 1.0, 2.5]]))
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        SparseGPRegressor(Hamming(1.0), 0.1).predict(Xc)


@pytest.mark.parametrize("objective", ["vfe", "nmll"])
def test_scores_with_every_point_as_information_pivot_are_exact(objective):
    # with all candidates as information pivots the Nystrom form of the
    # residual is exact, so are the approximate decreases of the objective
    X, y, _, _ = bcd.datasets.make_friedman1(200, 10, random_state=0)
    kernel = SquaredExponential(np.full(10, 2.0))
    nu = 1 if objective == "vfe" else 0
    fac = _factor(kernel, X, y, 0.05, nu, 12)
    rng = np.random.default_rng(0)
    fac.factorize(rng.choice(200, 12, replace=False))
    info = _InfoPivots(fac, 200, rng)
    info.refresh()
    k = fac.k
    fac.move_to_end(3, (info.T,))
    li = fac.L[:, k - 1]
    dres = fac.d + li * li
    dres[fac.piv[:k - 1]] = 0.0
    info.rank_one(li, fac.removed_projection(), 1.0)
    j, value = info.best_candidate(k - 1, dres, fac.inducing)
    valid = np.flatnonzero((dres > fac.thr) & ~fac.inducing)
    C, W = fac.residual_columns(valid, k - 1, dres)
    exact = fac.gains(C, W, k - 1)[0]
    assert j == valid[np.argmax(exact)]
    assert value == pytest.approx(exact.max(), rel=1e-8)


def test_small_pivoted_cholesky():
    from bcd.gp.sparse import _pivoted_cholesky
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 4))
    S = A @ A.T                                  # rank 4
    sel, C = _pivoted_cholesky(S, 1e-10)
    assert sel.shape[0] == 4
    np.testing.assert_allclose(C @ C.T, S[np.ix_(sel, sel)], atol=1e-12)
    assert np.all(np.diag(C)[:-1] >= np.diag(C)[1:])   # largest pivots first


def test_numerically_dependent_inducing_points_are_replaced():
    # a length-scale so long that the inducing set becomes dependent: the
    # factorization drops such points and the fit refills the set
    X, y = _data(200)
    kernel = SquaredExponential([0.3, 0.4])
    fac = _factor(kernel, X, y, 0.05, 1, 20)
    idx = np.arange(0, 200, 10)
    fac.factorize(idx)
    assert fac.k == 20
    fac.set_model(SquaredExponential([30.0, 40.0]), 0.05)
    with pytest.raises(Exception):
        fac.factorize(idx)
    fac.factorize(idx, repair=True)
    kept = fac.k
    assert 0 < kept < 20
    assert fac.objective() == pytest.approx(
        _dense_objective(fac.kernel(X), y, fac.piv[:kept], 0.05, 1), rel=1e-6)
    est = SparseGPRegressor(kernel, 0.05, n_inducing=20, random_state=0, n_threads=1)
    run = _Run(est, fac, fac.kernel, np.random.default_rng(0), 20, 5, None, 0.0)
    run._refill(20)
    k = fac.k
    assert len(set(fac.piv[:k])) == k
    # refilled as far as candidates with a positive residual variance remain
    assert k == 20 or not np.any((fac.d > fac.thr) & ~fac.inducing)
    np.testing.assert_allclose(fac.objective(), _dense_objective(
        fac.kernel(X), y, fac.piv[:k], 0.05, 1), rtol=1e-6)
