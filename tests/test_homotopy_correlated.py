"""The homotopy update on correlated designs.

Columns that are exact sums of others, exact duplicates and near duplicates
put simultaneous breakpoints, near-tangent crossings and (nearly) dependent
columns on the homotopy path of a block.  The update must still return the
block minimizer there: greedy BCD converges to the Lasso solution instead of
stalling on a step that is not a descent or repeating an update that leaves
the block unchanged.
"""
import warnings

import numpy as np
import pytest
from sklearn.linear_model import Lasso, LassoLars

import bcd

RTOL = 1e-8


def _design(kind, seed, m=80, n=160, k=10):
    rs = np.random.RandomState(seed)
    A = rs.randn(m, n)
    for i in range(k):
        if kind == "sums":
            A[:, i] = A[:, k + 2 * i] + A[:, k + 2 * i + 1]
        elif kind == "duplicates":
            A[:, i] = A[:, k + i]
        elif kind == "near-duplicates":
            A[:, i] = A[:, k + i] + 1e-4 * rs.randn(m)
    b = rs.randn(m)
    lam = 0.01 * np.abs(A.T @ b).max()
    return A, b, lam


def _objective(A, b, lam, x):
    return 0.5 * np.sum((A @ x - b) ** 2) + lam * np.abs(x).sum()


def _reference(A, b, lam, positive=False):
    """The lower objective of scikit-learn's coordinate descent and LARS
    (neither is accurate on all these designs: LARS gives up on exact
    duplicates, coordinate descent crawls along near duplicates)."""
    alpha = lam / A.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cd = Lasso(alpha=alpha, fit_intercept=False, positive=positive, tol=1e-15,
                   max_iter=20000).fit(A, b)
        lars = LassoLars(alpha=alpha, fit_intercept=False, positive=positive).fit(A, b)
    return min(_objective(A, b, lam, cd.coef_), _objective(A, b, lam, lars.coef_))


def _check(result, A, b, lam, positive=False):
    assert result.converged, (result.status, result.n_iter, result.optimality)
    f_ref = _reference(A, b, lam, positive)
    assert abs(result.objective - f_ref) <= RTOL * abs(f_ref), (result.objective, f_ref)
    if not positive:
        # and a certificate: F(x) - F* <= duality gap
        assert result.duality_gap <= RTOL * abs(result.objective)


def _homotopy(A, b, penalty, block_size, **kwargs):
    return bcd.solve(bcd.LeastSquares(A, b, penalty=penalty), rule="gs", blocks="variable",
                     block_size=block_size, update="homotopy", tol=1e-8, **kwargs)


@pytest.mark.parametrize("kind", ["sums", "duplicates", "near-duplicates"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_converges_on_correlated_columns(kind, seed):
    A, b, lam = _design(kind, seed)
    result = _homotopy(A, b, bcd.L1(lam), A.shape[0], max_iter=2000)
    _check(result, A, b, lam)


@pytest.mark.parametrize("kind", ["duplicates", "near-duplicates"])
def test_converges_on_correlated_columns_with_nonnegativity(kind):
    A, b, lam = _design(kind, 0)
    result = _homotopy(A, b, bcd.L1(lam, positive=True), A.shape[0], max_iter=2000)
    assert result.x.min() >= 0.0
    _check(result, A, b, lam, positive=True)


def test_wide_design_with_summed_columns():
    # a smaller instance of the reported case: n = 3m, the solution's
    # support about m, lam = 0.002 lam_max, blocks of m coordinates
    rs = np.random.RandomState(0)
    A = rs.randn(100, 300)
    for i in range(5):
        A[:, i] = A[:, 5 + 2 * i] + A[:, 6 + 2 * i]
    b = rs.randn(100)
    lam = 0.002 * np.abs(A.T @ b).max()
    result = _homotopy(A, b, bcd.L1(lam), 100, max_iter=5000)
    _check(result, A, b, lam)


def test_simultaneous_breakpoints_are_all_taken():
    # orthogonal columns with equal |A^T b|: every coordinate reaches the
    # kink at the same t, and the block minimizer over all of them is the
    # solution, soft-thresholding, so one update solves the problem
    A = 2.0 * np.eye(6)
    b = np.array([1.0, -1.0, 1.0, -1.0, 0.5, 0.05])
    lam = 0.4
    result = _homotopy(A, b, bcd.L1(lam), 6, max_iter=1)
    x_star = np.sign(b) * np.maximum(2.0 * np.abs(b) - lam, 0.0) / 4.0
    np.testing.assert_allclose(result.x, x_star, rtol=1e-14, atol=1e-15)
    assert result.converged


def test_a_coordinate_can_cross_zero_along_the_path():
    # on this path coordinate 4 enters negative, returns to 0 (t = 5.1) and
    # re-enters positive (t = 2.6) with no other breakpoint in between
    rs = np.random.RandomState(9)
    A = rs.randn(10, 6)
    b = rs.randn(10)
    lam = 0.01 * np.abs(A.T @ b).max()
    result = _homotopy(A, b, bcd.L1(lam), 6, max_iter=1)
    assert result.converged, (result.status, result.n_iter, result.optimality)
    assert result.x[4] > 0.0
    f_ref = _reference(A, b, lam)
    assert abs(result.objective - f_ref) <= 1e-12 * abs(f_ref)
