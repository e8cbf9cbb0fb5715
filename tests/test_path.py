"""Regularization paths: bcd.path against independent solves, the default
grid, lambda_max, and its input checks."""
import numpy as np
import pytest
from sklearn.linear_model import lasso_path

import bcd

from _data import logistic_data, random_problem

EXPLICIT = dict(rule="cyclic", blocks="fixed", partition="order", block_size=1,
                update="gradient", max_iter=10**7)


def _lasso(m=40, n=120, seed=3, positive=False, sparse=True):
    A, b = random_problem(m, n, density=0.3, seed=seed, sparse=sparse)
    return A, b, bcd.LeastSquares(A, b, penalty=bcd.L1(1.0, positive=positive))


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("screening", [True, False])
def test_path_matches_independent_solves(positive, screening):
    A, b, problem = _lasso(positive=positive)
    grid = np.geomspace(bcd.lambda_max(problem), bcd.lambda_max(problem) / 50, 12)
    out = bcd.path(problem, grid, tol=1e-9, screening=screening)
    assert out.converged.all()
    assert out.coefs.shape == (12, A.shape[1])
    for k, lam in enumerate(grid):
        ref = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(lam, positive=positive)),
                        tol=1e-11, **EXPLICIT)
        assert abs(out.objectives[k] - ref.objective) <= 1e-10 * abs(ref.objective)
        np.testing.assert_allclose(out.coefs[k], ref.x, atol=1e-7 * max(1, np.abs(ref.x).max()))
        assert out.optimality[k] <= 1e-9
        assert out.duality_gaps[k] <= 1e-7 * abs(ref.objective)
        # the objective is ours, computed independently
        x = out.coefs[k]
        F = 0.5 * np.sum((A @ x - b) ** 2) + lam * np.abs(x).sum()
        assert abs(F - out.objectives[k]) <= 1e-10 * abs(F)


def test_default_grid_and_scikit_learn_path():
    A, b, problem = _lasso(m=50, n=80, seed=5, sparse=False)
    out = bcd.path(problem, tol=1e-10)
    lmax = float(np.max(np.abs(A.T @ b)))
    assert out.lambda_max == pytest.approx(lmax)
    np.testing.assert_allclose(out.lambdas, np.geomspace(lmax, lmax / 1000, 100))
    # zero at lambda_max, and non-zero just below it
    assert not np.any(out.coefs[0]) and np.any(out.coefs[1])
    m = A.shape[0]
    alphas, coefs, _ = lasso_path(A, b, alphas=out.lambdas / m, tol=1e-12, max_iter=100000)
    for k in (10, 50, 99):
        x = coefs[:, k]
        F = 0.5 * np.sum((A @ x - b) ** 2) + out.lambdas[k] * np.abs(x).sum()
        # scikit-learn's solution is no better than ours
        assert out.objectives[k] <= F + 1e-9 * abs(F)


def test_weighted_and_logistic_paths():
    A, b, _ = _lasso(seed=7)
    w = np.linspace(0.5, 2.0, A.shape[1])
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(w))
    grid = np.geomspace(bcd.lambda_max(problem), bcd.lambda_max(problem) / 20, 5)
    out = bcd.path(problem, grid, tol=1e-9)
    for k in (0, 4):
        ref = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(grid[k] * w)), tol=1e-11,
                        **EXPLICIT)
        assert abs(out.objectives[k] - ref.objective) <= 1e-10 * abs(ref.objective)
    A, y = logistic_data(m=80, n=30)
    problem = bcd.Logistic(A, y, penalty=bcd.L1(1.0))
    lmax = bcd.lambda_max(problem)
    assert lmax == pytest.approx(0.5 * np.max(np.abs(A.T @ y)))
    out = bcd.path(problem, np.geomspace(lmax, lmax / 30, 6), tol=1e-9)
    assert out.converged.all() and not np.any(out.coefs[0])
    ref = bcd.solve(bcd.Logistic(A, y, penalty=bcd.L1(lmax / 30)), rule="cyclic",
                    blocks="fixed", partition="order", block_size=1, update="newton",
                    tol=1e-11, max_iter=10**7)
    assert abs(out.objectives[-1] - ref.objective) <= 1e-10 * abs(ref.objective)
    assert np.all(np.isnan(out.duality_gaps))


def test_path_does_not_modify_inputs():
    A, b, problem = _lasso()
    A_copy, b_copy = A.copy(), b.copy()
    x0 = np.full(A.shape[1], 0.01)
    x0_copy = x0.copy()
    penalty = problem.penalty
    bcd.path(problem, np.geomspace(100.0, 1.0, 4), x0=x0, tol=1e-8)
    np.testing.assert_array_equal(x0, x0_copy)
    np.testing.assert_array_equal(b, b_copy)
    assert (A != A_copy).nnz == 0
    assert problem.penalty is penalty and float(penalty.lam) == 1.0


@pytest.mark.parametrize("grid, error, match", [
    ([1.0, 2.0], ValueError, "decreasing"),
    ([1.0, 0.0], ValueError, "positive"),
    ([1.0, -1.0], ValueError, "positive"),
    ([1.0, np.nan], ValueError, "NaN"),
    ([[1.0, 0.5]], ValueError, "1-d"),
    ([], ValueError, "non-empty"),
    ("abc", TypeError, "lambdas"),
])
def test_path_rejects_bad_grids(grid, error, match):
    _, _, problem = _lasso()
    with pytest.raises(error, match=match):
        bcd.path(problem, grid)


def test_path_needs_an_l1_penalty():
    A, b = random_problem(20, 10)
    for problem in (bcd.LeastSquares(A, b), bcd.LeastSquares(A, b, penalty=bcd.NonNegative())):
        with pytest.raises(ValueError, match="L1 penalty"):
            bcd.path(problem)
    with pytest.raises(TypeError, match="problem"):
        bcd.path("not a problem")
    with pytest.raises(TypeError, match="screening"):
        bcd.path(bcd.LeastSquares(A, b, penalty=bcd.L1(1.0)), screening="yes")


def test_path_with_an_unpenalized_intercept_column():
    import scipy.sparse as sp
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=60, n_features=150, random_state=3)
    A1 = sp.hstack([A, np.ones((60, 1))]).tocsc()
    weights = np.r_[np.ones(150), 0.0]
    problem = bcd.LeastSquares(A1, b + 5.0, penalty=bcd.L1(weights))
    with pytest.raises(ValueError, match="infinite"):
        bcd.path(problem)
    lambdas = np.geomspace(1e3, 3e1, 4)
    out = bcd.path(problem, lambdas, tol=1e-9)
    assert out.lambda_max == np.inf and out.converged.all()
    for lam, x in zip(lambdas, out.coefs):
        single = bcd.solve(bcd.LeastSquares(A1, b + 5.0, penalty=bcd.L1(lam * weights)), tol=1e-9)
        assert problem.smooth_objective(x) + lam * np.abs(x[:-1]).sum() == pytest.approx(
            single.objective, rel=1e-8)
