"""GPRegressor's "lowrank" predictive variances: certified lower and upper
bounds checked against the exact variances of a dense Cholesky solve."""
import warnings

import numpy as np
import pytest
import scipy.linalg

import bcd
from bcd import ConvergenceWarning
from bcd.gp import GPRegressor, Matern, SquaredExponential
from bcd.gp._variance import LowRankVariance, pivoted_cholesky, spatial_order, top_rows


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(3 * X[:, 0]) + X[:, -1] ** 2 + 0.05 * rng.standard_normal(n)
    return X, y


def _exact_variance(kernel, noise, X, Xt):
    """k(x, x) - k^T (K + noise I)^-1 k by a dense Cholesky factorization."""
    A = kernel(X)
    A[np.diag_indices_from(A)] += noise
    L = np.linalg.cholesky(A)
    W = scipy.linalg.solve_triangular(L, kernel(X, Xt), lower=True)
    return kernel.diag(Xt) - np.einsum("ij,ij->j", W, W)


KERNELS = {
    "se_ard": (lambda: SquaredExponential([0.3, 0.6], variance=1.5), 0.02),
    "matern32": (lambda: Matern(1.5, 0.4, variance=0.8), 0.05),
    "rq_plus_matern52": (lambda: bcd.gp.RationalQuadratic(0.5, alpha=0.7)
                         + Matern(2.5, 0.3, variance=0.3), 0.01),
}


def test_pivoted_cholesky_factors_the_pivot_columns():
    X, _ = _data(200, 2, 0)
    kernel = SquaredExponential(0.3)
    K = kernel(X)
    Q, piv, e = pivoted_cholesky(kernel, X, kernel.diag(X), 25, block=8)
    assert Q.shape == (200, 25) and len(set(piv.tolist())) == 25
    np.testing.assert_allclose(Q @ Q[piv].T, K[:, piv], atol=1e-12)
    E = K - Q @ Q.T
    np.testing.assert_allclose(e, np.maximum(np.diag(E), 0), atol=1e-12)
    assert np.all(e[piv] == 0)
    assert np.linalg.eigvalsh(E).min() > -1e-10          # a Schur complement: PSD
    # a full-rank run reproduces K (it stops early when K is exhausted)
    Q, piv, e = pivoted_cholesky(kernel, X, kernel.diag(X), 200)
    np.testing.assert_allclose(Q @ Q.T, K, atol=1e-9)
    assert e.max() <= 1e-10


def test_pivoted_cholesky_stops_at_the_trace_tolerance_and_on_control():
    from bcd.gp.hyper.common import Stopped

    X, _ = _data(200, 2, 0)
    kernel = SquaredExponential(1.0)
    diag = kernel.diag(X)
    full = pivoted_cholesky(kernel, X, diag, 200, block=4)[0]
    tol = 1e-3 * diag.sum()
    Q, piv, e = pivoted_cholesky(kernel, X, diag, 200, block=4, tol=tol)
    # it stops at the first step whose residual trace is at most tol
    assert e.sum() <= tol
    assert Q.shape[1] < full.shape[1]
    shorter = pivoted_cholesky(kernel, X, diag, Q.shape[1] - 4, block=4, tol=tol)
    assert shorter[2].sum() > tol

    class Stop:
        def check(self):
            raise Stopped("interrupted")

    with pytest.raises(Stopped):
        pivoted_cholesky(kernel, X, diag, 200, control=Stop())


@pytest.mark.parametrize("group", [1, 8])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_bounds_enclose_the_exact_variance(name, group):
    make, noise = KERNELS[name]
    kernel = make()
    X, _ = _data(300, 2, 1)
    Xt = np.vstack([np.random.default_rng(2).uniform(-0.2, 1.2, size=(40, 2)), X[:5]])
    exact = _exact_variance(kernel, noise, X, Xt)
    factor = LowRankVariance(kernel, X, noise, rank=30, neighbors=20, n_threads=1, group=group)
    assert factor.rank == 30
    var_l, cert, var_u = factor.parts(Xt, diagonal_bound=True)
    tol = 1e-9 * kernel.diag(Xt)
    assert np.all(var_l <= exact + tol)              # Q Q^T + noise I <= K + noise I
    assert np.all(exact <= var_l + cert + tol)       # the certificate
    assert np.all(exact <= var_u + tol)              # conditioning on a subset
    lower, upper = factor.bounds(Xt)
    assert np.all(lower <= exact + tol) and np.all(exact <= upper + tol)
    # the bounds are informative at this rank, not just valid
    assert np.median(upper - lower) < 0.2 * np.median(kernel.diag(Xt))
    if group == 1:
        # bounds() computes the diagonal bound only where it may beat var_u
        # (with groups, it orders the test points first: other neighbours)
        assert np.all(upper >= np.maximum(np.minimum(var_u, var_l + cert), lower) - tol)
        assert np.all(upper <= np.maximum(var_u, lower) + tol)


def test_certificate_derivation_numerically():
    """var - var_L = k^T (P^-1 - A^-1) k <= w^T E w <= (sum |w_i| sqrt(E_ii))^2
    and <= trace(E) |w|^2, with dense matrices."""
    kernel = SquaredExponential(0.25)
    noise = 0.03
    X, _ = _data(150, 2, 3)
    Xt = np.random.default_rng(4).uniform(size=(20, 2))
    K, Kt = kernel(X), kernel(X, Xt)
    Q, piv, e = pivoted_cholesky(kernel, X, kernel.diag(X), 12)
    E = K - Q @ Q.T
    P = Q @ Q.T + noise * np.eye(150)
    A = K + noise * np.eye(150)
    W = np.linalg.solve(P, Kt)
    gap = np.einsum("ij,ij->j", Kt, W) - np.einsum("ij,ij->j", Kt, np.linalg.solve(A, Kt))
    wEw = np.einsum("ij,ij->j", W, E @ W)
    diag_bound = (np.sqrt(e) @ np.abs(W)) ** 2
    trace_bound = np.trace(E) * np.einsum("ij,ij->j", W, W)
    assert np.all(gap >= -1e-12)
    assert np.all(gap <= wEw * (1 + 1e-9) + 1e-12)
    assert np.all(wEw <= diag_bound * (1 + 1e-9) + 1e-12)
    assert np.all(wEw <= trace_bound * (1 + 1e-9) + 1e-12)
    # the library's certificate is the smaller bound, sharpened by q b / (q + b)
    factor = LowRankVariance(kernel, X, noise, rank=12, neighbors=0, n_threads=1)
    var_l, cert, _ = factor.parts(Xt, diagonal_bound=True)
    q = np.einsum("ij,ij->j", Kt, W)
    b = np.minimum(diag_bound, trace_bound)
    np.testing.assert_allclose(cert, q * b / (q + b), rtol=1e-6)
    np.testing.assert_allclose(var_l, kernel.diag(Xt) - q, atol=1e-10)


def test_spatial_order_is_a_permutation_of_close_runs():
    rng = np.random.default_rng(12)
    X = np.vstack([rng.normal(c, 0.01, size=(16, 3)) for c in rng.uniform(-5, 5, (8, 3))])
    X = X[rng.permutation(len(X))]
    order = spatial_order(X, 16)
    np.testing.assert_array_equal(np.sort(order), np.arange(len(X)))
    # eight tight clusters of 16: each run of 16 is one cluster
    runs = X[order].reshape(8, 16, 3)
    assert np.all(np.ptp(runs, axis=1) < 0.2)
    assert spatial_order(X[:0], 4).size == 0


def test_top_rows_selects_the_largest_entries():
    rng = np.random.default_rng(5)
    for n in (300, 5000):                  # the exact path and the sampled threshold
        Kt = np.asfortranarray(rng.uniform(size=(n, 7)))
        exclude = np.zeros(n, dtype=bool)
        exclude[rng.choice(n, 40, replace=False)] = True
        idx = top_rows(Kt, 25, exclude)
        masked = np.where(exclude[:, None], -np.inf, Kt)
        ref = np.argsort(-masked, axis=0)[:25].T
        np.testing.assert_array_equal(np.sort(idx, axis=1), np.sort(ref, axis=1))


def test_auto_picks_lowrank_beyond_max_dense_bytes_within_tolerance():
    X, y = _data(400, 2, 6)
    Xt = np.random.default_rng(7).uniform(size=(300, 2))     # two batches
    kernel = SquaredExponential([0.5, 0.7])
    gp = GPRegressor(kernel, 0.02, tol=1e-8, random_state=0, n_threads=1,
                     max_dense_bytes=1e4, variance_tol=1e-6, variance_residual=1e-6).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        mean, std = gp.predict(Xt, return_std=True)
    info = gp.variance_info_
    assert info["method"] == "lowrank" and info["converged"] and info["stopped"] == "residual"
    assert info["estimate"] == "nystrom" and info["residual"] <= 1e-6
    exact = _exact_variance(gp.kernel_, gp.noise_, X, Xt)
    np.testing.assert_allclose(std ** 2, exact, rtol=1e-4, atol=1e-12)
    lower, upper = gp.variance_bounds(Xt)
    assert gp.variance_info_["certified"] and gp.variance_info_["max_relative_error"] <= 1e-6
    assert np.all(lower <= exact + 1e-9) and np.all(exact <= upper + 1e-9)
    np.testing.assert_allclose(upper, exact, rtol=1e-6, atol=1e-12)
    # the mean does not depend on the variance method
    ref = GPRegressor(kernel, 0.02, tol=1e-8, random_state=0, n_threads=1).fit(X, y)
    np.testing.assert_allclose(mean, ref.predict(Xt), atol=1e-12)
    ref.predict(Xt, return_std=True)
    assert ref.variance_info_ == {"method": "cholesky"}


def test_rank_cap_warns_and_bounds_certify_the_error():
    X, y = _data(300, 2, 8)
    Xt = np.random.default_rng(9).uniform(size=(30, 2))
    kernel = Matern(1.5, 0.1)                      # rough: a low rank is far from K
    gp = GPRegressor(kernel, 0.01, tol=1e-6, random_state=0, n_threads=1, variance="lowrank",
                     variance_rank=10, variance_neighbors=5, variance_tol=1e-3).fit(X, y)
    with pytest.warns(ConvergenceWarning, match=r"stopped at rank 10 \(variance_rank=10\) "
                                                r"with a largest residual diagonal of [0-9.]"):
        _, std = gp.predict(Xt, return_std=True)
    info = gp.variance_info_
    assert not info["converged"] and info["stopped"] == "max_rank" and info["rank"] == 10
    assert info["residual"] > gp.variance_residual
    exact = _exact_variance(gp.kernel_, gp.noise_, X, Xt)
    # the estimate never exceeds the exact variance given the pivots' targets
    factor = gp._lowrank
    Z = X[factor.pivots]
    sub = _exact_variance(gp.kernel_, gp.noise_, Z, Xt)
    assert np.all(std ** 2 <= sub + 1e-9) and np.all(std >= 0)
    lower, upper = gp.variance_bounds(Xt)
    info = gp.variance_info_
    assert not info["certified"] and info["max_relative_error"] > 1e-3
    assert (info["rank"], info["bound_rank"], info["neighbors"]) == (10, 10, 5)
    assert np.all(lower <= exact + 1e-9) and np.all(exact <= upper + 1e-9)
    assert np.max(upper - lower) == pytest.approx(info["max_error"])
    assert np.max((upper - lower) / upper) == pytest.approx(info["max_relative_error"])
    # within the certified relative error: (1 - e) upper <= exact
    assert np.all((1 - info["max_relative_error"]) * upper <= exact + 1e-9)


def test_zero_rank_and_zero_neighbors_still_bound():
    X, y = _data(120, 1, 10)
    Xt = np.linspace(-0.5, 1.5, 9)[:, None]
    kernel = SquaredExponential(0.3)
    exact = _exact_variance(kernel, 0.05, X, Xt)
    for rank, neighbors in ((0, 0), (0, 30), (15, 0)):
        factor = LowRankVariance(kernel, X, 0.05, rank, neighbors, n_threads=1)
        lower, upper = factor.bounds(Xt)
        assert np.all(lower <= exact + 1e-9) and np.all(exact <= upper + 1e-9)
        assert np.all(upper <= kernel.diag(Xt) + 1e-12)


@pytest.mark.parametrize("params,error,match", [
    (dict(variance="low-rank"), ValueError, "variance must be one of"),
    (dict(variance_rank=-1), ValueError, "variance_rank"),
    (dict(variance_rank=2.5), TypeError, "variance_rank"),
    (dict(variance_neighbors="many"), TypeError, "variance_neighbors"),
    (dict(variance_neighbors=-3), ValueError, "variance_neighbors"),
    (dict(variance_tol=-1e-3), ValueError, "variance_tol"),
    (dict(variance_tol=np.nan), ValueError, "variance_tol"),
    (dict(variance_residual=-0.1), ValueError, "variance_residual"),
    (dict(variance_residual=np.nan), ValueError, "variance_residual"),
    (dict(variance_residual="small"), TypeError, "variance_residual"),
])
def test_bad_variance_options(params, error, match):
    X, y = _data(30, 2, 11)
    with pytest.raises(error, match=match):
        GPRegressor(SquaredExponential(0.5), 0.1, **params).fit(X, y)


def test_options_are_estimator_parameters():
    gp = GPRegressor(SquaredExponential(0.5), 0.1, variance="lowrank", variance_rank=64)
    params = gp.get_params()
    assert params["variance_rank"] == 64 and params["variance_neighbors"] == 1536
    assert params["variance_tol"] == 0.1 and params["variance_residual"] == 0.002
    assert GPRegressor(SquaredExponential(0.5), 0.1).get_params()["variance_rank"] == 4096
    assert "variance_rank=64" in repr(gp)
    assert bcd.gp.regressor.VARIANCE_METHODS[-1] == "lowrank"


def test_pivots_and_neighbours_covering_the_training_set_are_exact_and_certified():
    # rank + neighbours >= n: the upper bound conditions on every training
    # point, so it is the exact variance and its certificate is 0
    X, y = _data(120, 2, 10)
    Xt = np.random.default_rng(11).uniform(size=(40, 2))
    kernel = Matern(1.5, 0.1)                      # rough: the low rank alone is far off
    gp = GPRegressor(kernel, 0.01, tol=1e-8, random_state=0, n_threads=1, variance="lowrank",
                     variance_rank=30, variance_neighbors=200).fit(X, y)
    lower, upper = gp.variance_bounds(Xt)
    info = gp.variance_info_
    assert info["certified"] and info["max_relative_error"] == 0.0
    exact = _exact_variance(gp.kernel_, gp.noise_, X, Xt)
    np.testing.assert_allclose(upper, exact, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(lower, upper)


def test_default_lowrank_is_accurate_on_a_smooth_ten_dimensional_problem():
    # Friedman1 (ten inputs) with smooth hyperparameters like those that
    # optimizer="ml" learns there: K is close to low rank at the noise level,
    # which the adaptive rank reaches.  256 pivots and 1,536 neighbours (the
    # former defaults, returning the certified upper bound) are 17% off.
    X, y, Xt, _ = bcd.datasets.make_friedman1(3000, 200, random_state=0)
    kernel, noise = SquaredExponential(7.0, variance=80.0), 0.04
    gp = GPRegressor(kernel, noise, max_iter=1, random_state=0, n_threads=2,
                     variance="lowrank")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)       # the one-update fit
        gp.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        _, std = gp.predict(Xt, return_std=True)
    info = gp.variance_info_
    assert info["converged"] and info["estimate"] == "nystrom"
    assert info["residual"] <= gp.variance_residual and 1000 < info["rank"] < 3000
    exact = _exact_variance(kernel, noise, X, Xt)
    error = np.abs(std ** 2 - exact) / exact
    assert np.median(error) < 0.01 and np.max(error) < 0.1
    former = LowRankVariance(kernel, X, noise, 256, 1536, n_threads=2).bounds(Xt)[1]
    assert np.median(np.abs(former - exact) / exact) > 0.1


def test_the_adaptive_rank_stops_at_the_residual_tolerance():
    X, _ = _data(400, 3, 13)
    kernel, noise = SquaredExponential(0.6), 0.01
    diag = kernel.diag(X)
    Q, piv, e = pivoted_cholesky(kernel, X, diag, 400, block=4, residual=0.05 * noise)
    r = Q.shape[1]
    assert e.max() <= 0.05 * noise and 4 < r < 400
    # one step fewer leaves a residual above the tolerance
    assert pivoted_cholesky(kernel, X, diag, r - 4, block=4)[2].max() > 0.05 * noise
    factor = LowRankVariance(kernel, X, noise, 400, 10, n_threads=1, residual=0.05 * noise)
    assert factor.converged and factor.stopped == "residual"
    assert factor.max_residual <= 0.05 * noise
    capped = LowRankVariance(kernel, X, noise, 8, 10, n_threads=1, residual=0.05 * noise)
    assert capped.rank == 8 and not capped.converged and capped.stopped == "max_rank"


def test_the_estimate_is_the_dtc_variance_below_the_pivots_posterior():
    kernel, noise = SquaredExponential(0.3), 0.02
    X, _ = _data(250, 2, 14)
    Xt = np.random.default_rng(15).uniform(-0.1, 1.1, size=(30, 2))
    factor = LowRankVariance(kernel, X, noise, 25, 0, n_threads=1)
    Q, Z = factor.Q, X[factor.pivots]
    kz, kss = kernel(Z, Xt), kernel.diag(Xt)
    KZZ = kernel(Z)
    c = np.linalg.solve(np.linalg.cholesky(KZZ), kz)
    dtc = kss - np.einsum("ij,ij->j", c, c) + noise * np.einsum(
        "ij,ij->j", c, np.linalg.solve(Q.T @ Q + noise * np.eye(25), c))
    est = factor.estimate(Xt)
    np.testing.assert_allclose(est, dtc, rtol=1e-6, atol=1e-10)
    # Q^T Q >= Q_Z^T Q_Z: never above the exact variance given the pivots'
    # targets alone (a certified upper bound), and below it here
    sub = _exact_variance(kernel, noise, Z, Xt)
    assert np.all(est <= sub + 1e-10) and np.median(sub - est) > 0.01 * np.median(sub)


@pytest.mark.parametrize("seed", range(6))
def test_bounds_hold_and_the_estimate_is_capped_on_random_problems(seed):
    rng = np.random.default_rng(100 + seed)
    d = int(rng.integers(1, 5))
    n = int(rng.integers(150, 400))
    X = rng.normal(size=(n, d)) * rng.uniform(0.3, 2.0, size=d)
    Xt = rng.normal(size=(40, d)) * 1.5
    kernel = SquaredExponential(rng.uniform(0.3, 3.0, size=d), variance=rng.uniform(0.5, 5))
    noise = float(10.0 ** rng.uniform(-3, -1))
    factor = LowRankVariance(kernel, X, noise, int(rng.integers(5, 200)),
                             int(rng.integers(0, 60)), n_threads=1,
                             group=int(rng.choice([1, 8, 32])),
                             residual=float(10.0 ** rng.uniform(-3, 0)) * noise)
    exact = _exact_variance(kernel, noise, X, Xt)
    tol = 1e-9 * kernel.diag(Xt)
    lower, upper = factor.bounds(Xt)
    assert np.all(lower <= exact + tol) and np.all(exact <= upper + tol)
    est = factor.estimate(Xt)
    sub = _exact_variance(kernel, noise, X[factor.pivots], Xt)
    assert np.all(est >= 0) and np.all(est <= sub + tol)


def test_a_spectrum_far_from_low_rank_gives_up_and_returns_the_certified_upper_bound():
    # a rough kernel in 4-D: the residual decays too slowly for 1e-4 of the
    # noise within variance_rank; the factorization stops at 512 pivots and
    # predict returns the certified upper bound of the first 256
    rng = np.random.default_rng(16)
    X = rng.uniform(size=(1200, 4))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(1200)
    Xt = rng.uniform(size=(40, 4))
    kernel, noise = Matern(1.5, 0.3), 0.01
    gp = GPRegressor(kernel, noise, max_iter=1, random_state=0, n_threads=2,
                     variance="lowrank", variance_rank=1000, variance_neighbors=300,
                     variance_residual=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp.fit(X, y)
    with pytest.warns(ConvergenceWarning, match="not close to low rank"):
        _, std = gp.predict(Xt, return_std=True)
    info = gp.variance_info_
    assert info["stopped"] == "unreachable" and not info["converged"]
    assert info["estimate"] == "upper bound"
    assert info["rank"] == 512 and info["bound_rank"] == 256
    exact = _exact_variance(kernel, noise, X, Xt)
    assert np.all(std ** 2 >= exact - 1e-9)          # never overconfident
    lower, upper = gp.variance_bounds(Xt)
    np.testing.assert_allclose(upper, std ** 2, rtol=1e-12)
    assert np.all(lower <= exact + 1e-9)
    # without a tolerance there is nothing to give up on: variance_rank stops it
    factor = LowRankVariance(kernel, X, noise, 600, 0, n_threads=2, residual=0.0, give_up=True)
    assert factor.rank == 600 and factor.stopped == "max_rank" and not factor.fallback
