"""Sample weights and per-coordinate ridge weights of the linear models."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

import bcd

M, N, K = 80, 12, 3


def _data(sparse, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, N))
    if sparse:
        A = sp.csr_matrix(A * (rng.random(A.shape) < 0.5))
    s = rng.uniform(0.0, 3.0, M)
    s[:5] = 0.0                                    # zero weights drop samples
    b = (A @ rng.standard_normal(N)) + rng.standard_normal(M)
    return rng, A, s, b


def _reference(kind, A, s, t, lw):
    """F and its minimum computed with dense NumPy and L-BFGS-B."""
    Ad = A.toarray() if sp.issparse(A) else A

    def f(x):
        if kind == "ls":
            r = Ad @ x - t
            return 0.5 * np.sum(s * r * r) + 0.5 * np.sum(lw * x * x)
        if kind == "logistic":
            return np.sum(s * np.logaddexp(0.0, -(2 * t - 1) * (Ad @ x))) + 0.5 * np.sum(lw * x * x)
        if kind == "poisson":
            z = Ad @ x
            return np.sum(s * (np.exp(z) - t * z)) + 0.5 * np.sum(lw * x * x)
        S = Ad @ x.reshape(N, K)
        lse = np.log(np.exp(S).sum(axis=1))
        return np.sum(s * (lse - S[np.arange(M), t])) + 0.5 * np.sum(lw * x * x)
    return f


PROBLEMS = {"ls": (bcd.LeastSquares, 1), "logistic": (bcd.Logistic, 1),
            "multinomial": (bcd.Multinomial, K), "poisson": (bcd.Poisson, 1)}
#: the configurations a problem without Lipschitz constants refuses
NEEDS_BOUNDS = {"matrix", "gsq", "gsd"}
CONFIGS = [{}, dict(rule="gs", blocks="variable", block_size=3, update="newton"),
           dict(rule="gsq", blocks="fixed", block_size=3, update="matrix"),
           dict(rule="gsd", blocks="variable", block_size=4),
           dict(rule="cyclic", block_size=1, update="linesearch")]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kind", sorted(PROBLEMS))
def test_weighted_optimum_matches_dense_reference(kind, sparse):
    rng, A, s, b = _data(sparse)
    cls, k = PROBLEMS[kind]
    if kind == "poisson":
        A = A * 0.3                                # moderate rates exp(a_i^T x)
    target = {"ls": b, "logistic": (b > 0).astype(float),
              "multinomial": rng.integers(0, K, M),
              "poisson": rng.poisson(1.5, M).astype(float)}[kind]
    lw = rng.uniform(0.0, 2.0, N * k)
    lw[-1] = 0.0                                   # an unpenalized coordinate
    problem = cls(A, target, l2=lw, sample_weight=s)
    f = _reference(kind, A, s, target, lw)
    x0 = 0.1 * rng.standard_normal(N * k)
    assert problem.objective(x0) == pytest.approx(f(x0), rel=1e-12)
    ref = minimize(f, np.zeros(N * k), jac=problem.gradient, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=10000))
    for config in CONFIGS:
        if kind == "poisson" and NEEDS_BOUNDS & set(config.values()):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = bcd.solve(problem, tol=1e-9, max_iter=200000, **config)
        assert result.converged, (config, result.message)
        assert result.objective == pytest.approx(ref.fun, rel=1e-8), config
        # the compiled state agrees with the NumPy gradient at the solution
        assert np.max(np.abs(problem.gradient(result.x))) < 1e-7


def test_integer_weights_equal_repeated_rows():
    rng, A, _, b = _data(False, seed=3)
    w = rng.integers(0, 4, M)
    w[0] = 1
    keep = np.repeat(np.arange(M), w)
    y = (b > 0).astype(float)
    counts = rng.poisson(1.5, M).astype(float)
    for cls, X, t in [(bcd.LeastSquares, A, b), (bcd.Logistic, A, y),
                      (bcd.Poisson, 0.3 * A, counts)]:
        weighted = bcd.solve(cls(X, t, l2=0.5, penalty=bcd.L1(2.0), sample_weight=w), tol=1e-10)
        repeated = bcd.solve(cls(X[keep], t[keep], l2=0.5, penalty=bcd.L1(2.0)), tol=1e-10)
        np.testing.assert_allclose(weighted.x, repeated.x, atol=1e-7)
        assert weighted.objective == pytest.approx(repeated.objective, rel=1e-10)


def test_weighted_lasso_duality_gap_certifies():
    _, A, s, b = _data(True, seed=5)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(5.0), sample_weight=s)
    result = bcd.solve(problem, tol=1e-10)
    assert result.duality_gap is not None and 0 <= result.duality_gap < 1e-8
    # an unpenalized coordinate (l2 weights all 0 keep the gap defined)
    assert bcd.LeastSquares(A, b, l2=np.zeros(N), penalty=bcd.L1(5.0)).duality_gap(
        result.x) is not None


def test_unit_weights_and_scalar_ridge_change_nothing():
    _, A, _, b = _data(False)
    y = (b > 0).astype(float)
    for cls, t in [(bcd.LeastSquares, b), (bcd.Logistic, y), (bcd.Poisson, y)]:
        plain = bcd.solve(cls(A, t, l2=0.3), tol=1e-10)
        weighted = bcd.solve(cls(A, t, l2=np.full(N, 0.3), sample_weight=np.ones(M)), tol=1e-10)
        np.testing.assert_allclose(plain.x, weighted.x, atol=1e-8)


def test_inputs_not_modified():
    _, A, s, b = _data(True)
    A0, s0, b0 = A.copy(), s.copy(), b.copy()
    lw = np.ones(N)
    bcd.solve(bcd.LeastSquares(A, b, l2=lw, sample_weight=s))
    assert (A != A0).nnz == 0 and np.array_equal(s, s0) and np.array_equal(b, b0)
    assert np.array_equal(lw, np.ones(N))


@pytest.mark.parametrize("cls", [bcd.LeastSquares, bcd.Logistic, bcd.Multinomial,
                                 bcd.Poisson])
def test_bad_weights(cls):
    _, A, s, b = _data(False)
    y = (b > 0).astype(int)
    n_coords = N * (2 if cls is bcd.Multinomial else 1)
    with pytest.raises(ValueError, match="sample_weight has length"):
        cls(A, y, sample_weight=s[:-1])
    with pytest.raises(ValueError, match="sample_weight must be >= 0"):
        cls(A, y, sample_weight=-s)
    with pytest.raises(ValueError, match="positive sum"):
        cls(A, y, sample_weight=np.zeros(M))
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        cls(A, y, sample_weight=np.full(M, np.nan))
    with pytest.raises(ValueError, match="l2 has length"):
        cls(A, y, l2=np.ones(n_coords + 1))
    with pytest.raises(ValueError, match="l2 must be >= 0"):
        cls(A, y, l2=-np.ones(n_coords))
    with pytest.raises(ValueError, match="l2 must be >= 0"):
        cls(A, y, l2=-1.0)
