"""The estimated marginal likelihood of large GP problems (bcd.gp.hyper.ml_iterative):
pivoted Cholesky, its preconditioner, block conjugate gradients, Lanczos
quadrature, the estimates against the exact dense values, the
gradient-trusting L-BFGS, and GPRegressor's choice of method."""
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from bcd.gp import GPRegressor, SquaredExponential
from bcd.gp.hyper import Space, log_marginal_likelihood
from bcd.gp.hyper import ml as ml_module
from bcd.gp.hyper import ml_iterative as mi


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    return X, np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(n)


def test_preconditioner_solve_logdet_and_samples():
    rng = np.random.default_rng(1)
    L = rng.standard_normal((40, 6))
    pre = mi.Preconditioner(L, 0.3)
    P = L @ L.T + 0.3 * np.eye(40)
    B = rng.standard_normal((40, 3))
    np.testing.assert_allclose(pre.solve(B), np.linalg.solve(P, B), rtol=1e-10, atol=1e-12)
    assert pre.logdet == pytest.approx(np.linalg.slogdet(P)[1], rel=1e-12)
    Z = pre.sample(np.random.default_rng(2), 20000)
    np.testing.assert_allclose(np.cov(Z), P, atol=0.1 * np.abs(P).max())


def test_block_pcg_solves_every_column():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((50, 50))
    A = A @ A.T + 0.5 * np.eye(50)
    B = rng.standard_normal((50, 4))
    X, rz0, _, _, converged = mi.block_pcg(lambda V: A @ V, lambda R: R / np.diag(A)[:, None],
                                           B, np.full(4, 1e-10), 1000)
    assert converged.all()
    np.testing.assert_allclose(X, np.linalg.solve(A, B), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(rz0, np.einsum("ij,ij->j", B, B / np.diag(A)[:, None]))


def test_lanczos_quadrature_of_a_full_krylov_space_is_exact():
    # after n steps of conjugate gradients, |b|^2 e1^T log(T) e1 = b^T log(A) b
    rng = np.random.default_rng(4)
    Q, _ = np.linalg.qr(rng.standard_normal((12, 12)))
    w = np.linspace(0.5, 20.0, 12)
    A = (Q * w) @ Q.T
    b = rng.standard_normal((12, 1))
    _, rz0, (steps, ratios), _, _ = mi.block_pcg(lambda V: A @ V, lambda R: R.copy(), b,
                                                 np.array([1e-14]), 12)
    exact = float(b[:, 0] @ (Q * np.log(w)) @ Q.T @ b[:, 0])
    assert rz0[0] * mi.lanczos_log_quadrature(steps[0], ratios[0]) == pytest.approx(
        exact, rel=1e-8)


def test_estimates_match_the_exact_likelihood_and_gradient():
    X, y = data(400)
    space = Space(SquaredExponential(1.0), 0.05, (1e-5, 1e5))
    theta = space.theta0() + np.array([0.2, -0.3, 0.4])
    lml, grad = log_marginal_likelihood(space, theta, X, y)
    kernel, noise = space.unpack(theta)
    C = kernel.evaluator(X).matrix() + noise * np.eye(400)
    logdet = abs(np.linalg.slogdet(C)[1])
    for store in (True, False):
        est, egrad, alpha = mi.log_marginal_likelihood_iterative(
            space, theta, X, y, rank=100, probes=200, store=store, return_alpha=True)
        # the data term is solved, the log-determinant estimated: its error
        # is a small fraction of its size (here |log det C| is about 780)
        assert abs(est - lml) <= 2e-3 * logdet
        np.testing.assert_allclose(egrad, grad, rtol=0.05, atol=0.02 * np.abs(grad).max())
        assert np.linalg.norm(C @ alpha - y) <= 1e-6 * np.linalg.norm(y)
    # a preconditioner of full rank leaves nothing to estimate in the value
    exact_pre = mi.log_marginal_likelihood_iterative(space, theta, X, y, rank=400,
                                                     eval_gradient=False, store=True)[0]
    assert abs(exact_pre - lml) <= 1e-6 * logdet


def test_gradient_lbfgs_reaches_the_minimizer_within_bounds():
    A = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    c = np.array([1.0, -2.0, -4.0])
    bounds = np.array([[-5.0, 5.0], [-5.0, 5.0], [-1.0, 5.0]])

    def fun(x):
        return 0.5 * x @ A @ x - c @ x, A @ x - c

    res, history = mi.gradient_lbfgs(fun, np.zeros(3), bounds, ftol=1e-14)
    ref = scipy.optimize.minimize(fun, np.zeros(3), jac=True, method="L-BFGS-B",
                                  bounds=bounds, options=dict(ftol=1e-15, gtol=1e-12))
    assert res.success
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    assert res.x[2] == -1.0                     # the bound is active
    assert len(history) == res.nit and res.nfev >= res.nit


def test_gradient_lbfgs_follows_a_gradient_that_disagrees_with_the_value():
    # values off by a smooth perturbation that the gradient does not know:
    # the minimizer of the gradient's function is still found
    def fun(x):
        return float(np.sum((x - 1.0) ** 2) + 0.3 * np.sin(5 * x[0])), 2.0 * (x - 1.0)

    res, _ = mi.gradient_lbfgs(fun, np.array([-2.0, 3.0]), np.array([[-5.0, 5.0]] * 2),
                               ftol=1e-12)
    assert res.success
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-5)


def test_ml_plan_chooses_by_size_and_memory():
    n = ml_module.EXACT_MAX_SAMPLES
    plenty = 1e15
    assert ml_module.ml_plan(n, 4, plenty) == ("exact", 4)
    assert ml_module.ml_plan(n + 1, 4, plenty) == ("stored", 4)
    # two matrices fit: two tasks at once
    two = 2.0 * ml_module.dense_bytes(n + 1) / ml_module.DENSE_MEMORY_FRACTION
    assert ml_module.ml_plan(n + 1, 4, two) == ("stored", 3)
    assert ml_module.ml_plan(n, 4, two) == ("exact", 2)
    # the stored lower triangle takes about half the dense matrix
    half = 2.0 * mi.stored_bytes(n + 1) / ml_module.DENSE_MEMORY_FRACTION
    assert ml_module.ml_plan(n + 1, 4, half) == ("stored", 2)
    assert ml_module.ml_plan(n + 1, 4, 0.99 * half / 2) == ("streamed", 4)
    assert ml_module.ml_plan(1000, 4, 1e6) == ("streamed", 4)


@pytest.mark.parametrize("n, panel", [(1, 4), (7, 3), (12, 4), (50, 7), (40, 64)])
def test_lower_kernel_is_the_kernel_matrix_in_half_the_memory(n, panel):
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, 3))
    kernel = SquaredExponential(0.7)
    K = kernel(X)
    lower = mi.LowerKernel(kernel, X, panel=panel)
    V = rng.standard_normal((n, 5))
    np.testing.assert_allclose(lower.matmul(V), K @ V, rtol=1e-13, atol=1e-13)
    assert lower.nbytes == mi.stored_bytes(n, panel)
    if n >= 4 * panel:
        assert lower.nbytes < 0.65 * K.nbytes


@pytest.mark.parametrize("available", [None, 1e5])
def test_estimated_ml_fit_is_close_to_the_exact_one(monkeypatch, available):
    from bcd import _resources

    X, y = data(300, seed=5)
    exact = GPRegressor(SquaredExponential(1.0), 0.1, optimizer="ml", random_state=0).fit(X, y)
    assert exact.hyper_["method"] == "exact"
    monkeypatch.setattr(ml_module, "EXACT_MAX_SAMPLES", 100)
    if available is not None:
        monkeypatch.setattr(_resources, "available_memory", lambda: available)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = GPRegressor(SquaredExponential(1.0), 0.1, optimizer="ml", tol=1e-8,
                          random_state=0).fit(X, y)
    assert est.hyper_["method"] == ("stored" if available is None else "streamed")
    space = Space(SquaredExponential(1.0), 0.1, (1e-5, 1e5))
    at_est = log_marginal_likelihood(space, est.hyper_["theta"], X, y, eval_gradient=False)[0]
    # the learned hyperparameters are nearly as likely as the exact optimum's
    best = exact.log_marginal_likelihood_value_
    assert best - 1e-3 * abs(best) <= at_est <= best + 1e-9 * abs(best)
    # the lengthscale and the noise agree; the likelihood is flat along the
    # signal variance, which the estimates determine less well
    np.testing.assert_allclose(est.hyper_["theta"][1:], exact.hyper_["theta"][1:], atol=0.1)
    # the weights solve the system at the learned hyperparameters to tol
    assert est.result_.converged
    C = est.kernel_.evaluator(X).matrix() + est.noise_ * np.eye(300)
    assert np.max(np.abs(C @ est.alpha_ - y)) <= 1e-8
    np.testing.assert_allclose(est.predict(X[:50]), exact.predict(X[:50]), atol=0.05)
