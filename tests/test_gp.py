"""Tests of the Gaussian process part: kernels, the GP linear system as a
problem, greedy block coordinate descent (GBCD) and GPRegressor.

Every numerical check is against an independent reference: dense kernels
built from ``scipy.spatial.distance.cdist``, ``scipy.linalg.cho_solve``,
``scipy.sparse.linalg.spsolve``, scikit-learn's Gaussian process regressor
and kernels, and a small NumPy implementation of the greedy block growth.
"""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.spatial.distance import cdist

import bcd
from bcd.gp import (GPRegressor, LocallyPeriodic, Matern, Periodic, Product,
                    SquaredExponential, Sum)

import sklearn.gaussian_process as sk_gp
import sklearn.gaussian_process.kernels as sk_kernels
import threadpoolctl

from _data import assemble_parts, with_value


@pytest.fixture(autouse=True, scope="module")
def _single_threaded_blas():
    # The dense references (Cholesky, products) run on one BLAS thread: on a
    # loaded machine a multi-threaded BLAS spins and dominates the runtime.
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        yield


# ---------------------------------------------------------------- references

def _se(s):
    return np.exp(-0.5 * s)


def _matern32(r):
    t = np.sqrt(3.0) * r
    return (1.0 + t) * np.exp(-t)


def _matern52(r):
    t = np.sqrt(5.0) * r
    return (1.0 + t + t * t / 3.0) * np.exp(-t)


def _ref_kernel(spec, X1, X2):
    """Dense reference of a kernel described as a nested tuple:
    ("se", l, v), ("m32", l, v), ("m52", l, v), ("per", p, l, v),
    ("lp", p, l, v), ("+", a, b), ("*", a, b)."""
    kind = spec[0]
    if kind == "+":
        return _ref_kernel(spec[1], X1, X2) + _ref_kernel(spec[2], X1, X2)
    if kind == "*":
        return _ref_kernel(spec[1], X1, X2) * _ref_kernel(spec[2], X1, X2)
    if kind in ("se", "m32", "m52"):
        l = np.asarray(spec[1], dtype=float)
        s = cdist(X1 / l, X2 / l, "sqeuclidean")
        f = {"se": lambda: _se(s), "m32": lambda: _matern32(np.sqrt(s)),
             "m52": lambda: _matern52(np.sqrt(s))}[kind]()
        return spec[2] * f
    p, l, v = spec[1:]
    d = cdist(X1, X2)
    per = np.exp(-2.0 * np.sin(np.pi * d / p) ** 2 / l ** 2)
    if kind == "per":
        return v * per
    return v * np.exp(-d ** 2 / (2 * l ** 2)) * per


def _build(spec):
    """The bcd kernel of a reference description."""
    kind = spec[0]
    if kind == "+":
        return _build(spec[1]) + _build(spec[2])
    if kind == "*":
        return _build(spec[1]) * _build(spec[2])
    if kind == "se":
        return SquaredExponential(spec[1], variance=spec[2])
    if kind == "m32":
        return Matern(1.5, spec[1], variance=spec[2])
    if kind == "m52":
        return Matern(2.5, spec[1], variance=spec[2])
    if kind == "per":
        return Periodic(spec[1], spec[2], variance=spec[3])
    return LocallyPeriodic(spec[1], spec[2], variance=spec[3])


KERNEL_SPECS = {
    "se_iso": ("se", 0.7, 1.0),
    "se_ard": ("se", [0.3, 0.8, 2.0], 1.7),
    "matern32": ("m32", [0.4, 0.9, 1.3], 0.8),
    "matern52": ("m52", 0.6, 2.2),
    "periodic": ("per", 0.9, 0.7, 1.3),
    "locally_periodic": ("lp", 1.1, 0.8, 0.6),
    "sum": ("+", ("se", [0.3, 0.8, 2.0], 1.2), ("per", 0.5, 1.1, 0.4)),
    "product": ("*", ("m52", [0.5, 0.5, 1.5], 1.5), ("lp", 0.8, 1.2, 0.9)),
    "shared_metric_product": ("*", ("se", 1.0, 2.0), ("per", 0.7, 1.0, 0.5)),
    "sum_of_products": ("*", ("+", ("se", 0.5, 1.0), ("m32", 0.9, 0.5)),
                        ("+", ("per", 1.3, 0.8, 1.0), ("m52", [1.0, 2.0, 0.5], 0.3))),
}


def _data(n, d, seed, noise_y=0.1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(3.0 * X[:, 0]) + X[:, -1] ** 2 + noise_y * rng.standard_normal(n)
    return X, y


def _cho_reference(K, noise, y):
    A = K + noise * np.eye(K.shape[0])
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, lower=True), y)


def _rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


# ------------------------------------------------- 1. alpha against cho_solve

N_BIG, D_BIG, NOISE_BIG = 1500, 5, 0.05
LS_BIG = [0.6, 0.8, 1.0, 1.5, 2.0]
VAR_BIG = 1.3


@pytest.fixture(scope="module")
def big_problem():
    X, y = _data(N_BIG, D_BIG, seed=1)
    K = _ref_kernel(("se", LS_BIG, VAR_BIG), X, X)
    return X, y, _cho_reference(K, NOISE_BIG, y)


@pytest.mark.parametrize("mode", ["on_the_fly", "precomputed", "cache"])
def test_gbcd_alpha_matches_cho_solve(big_problem, mode):
    X, y, alpha = big_problem
    kernel = SquaredExponential(LS_BIG, variance=VAR_BIG)
    options = {"on_the_fly": {}, "precomputed": {"precomputed": True},
               "cache": {"cache_size": 8 * N_BIG * 100}}[mode]
    problem = bcd.GaussianProcess(X, y, kernel, NOISE_BIG, n_threads=1, **options)
    result = bcd.solve(problem, rule="gbcd", block_size=100, update="exact", tol=1e-10,
                       random_state=0, max_iter=10000)
    assert result.converged
    assert _rel(result.x, alpha) < 1e-8
    # the reported objective and optimality are those of the returned iterate
    A = _ref_kernel(("se", LS_BIG, VAR_BIG), X, X) + NOISE_BIG * np.eye(N_BIG)
    assert np.abs(A @ result.x - y).max() <= 2e-10
    f = 0.5 * result.x @ A @ result.x - y @ result.x
    assert result.objective == pytest.approx(f, rel=1e-10)


def test_column_cache_is_used_and_changes_nothing(big_problem):
    X, y, alpha = big_problem
    # a Matern kernel: without the cache its products K[:, b] d run over the
    # same column tiles as with it (the squared exponential's are summed row
    # by row, in another order), so the two runs can be compared bitwise
    kernel = Matern(2.5, LS_BIG, variance=VAR_BIG)
    xs, stats = [], []
    for cache in (0, 8 * N_BIG * 100):
        problem = bcd.GaussianProcess(X, y, kernel, NOISE_BIG, cache_size=cache, n_threads=1)
        k, units, selector, parts = assemble_parts(problem, "gbcd", "variable", 100, "exact",
                                                   None, np.random.RandomState(3), None,
                                                   {"mi_candidates": 30})
        assert k.cache_columns == (100 if cache else 0)
        parts.run(40)
        xs.append(np.asarray(k.get_x()).copy())
        stats.append(k.cache_stats())
    # same seed, same blocks: the cached columns are the computed ones
    assert np.array_equal(xs[1], xs[0])
    hits, misses = stats[1]
    assert hits > 0 and misses > 0
    assert stats[0] == (0, 0)


@pytest.mark.parametrize("refresh", [None, 7])
def test_threads_do_not_change_the_iterates(big_problem, refresh):
    # 1 to 8 threads, oversubscribed where the machine has fewer cores: one
    # thread grows the block alone (one pass over the factor's inverse),
    # the others share each step's rows and columns as a team; the entries
    # are the same, by the same arithmetic, whoever computes them
    X, y, _ = big_problem
    kernel = SquaredExponential(LS_BIG, variance=VAR_BIG)
    xs = []
    for threads in (1, 2, 3, 4, 8):
        problem = bcd.GaussianProcess(X, y, kernel, NOISE_BIG, n_threads=threads)
        xs.append(bcd.solve(problem, rule="gbcd", block_size=100, update="exact",
                            max_iter=5, tol=0.0, random_state=7, mi_refresh=refresh).x)
    for x in xs[1:]:
        assert np.array_equal(x, xs[0])


def test_concurrent_gbcd_solves_oversubscribing_the_cores(big_problem):
    # four solves at once, each with a team of two threads, on however few
    # cores the machine has: the waiting team members must yield, not
    # starve the thread that posts the work
    from concurrent.futures import ThreadPoolExecutor
    X, y, _ = big_problem
    kernel = SquaredExponential(LS_BIG, variance=VAR_BIG)

    def run(seed):
        problem = bcd.GaussianProcess(X, y, kernel, NOISE_BIG, n_threads=2)
        return bcd.solve(problem, rule="gbcd", block_size=100, update="exact",
                         max_iter=5, tol=0.0, random_state=seed).x

    alone = [run(seed) for seed in range(4)]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(run, range(4)))
    for a, b in zip(alone, together):
        assert np.array_equal(a, b)


def test_gbcd_defaults_and_full_block():
    X, y = _data(120, 2, seed=11)
    kernel = SquaredExponential(0.4)
    problem = bcd.GaussianProcess(X, y, kernel, 0.1)
    result = bcd.solve(problem, rule="gbcd", update="exact", random_state=0)
    assert result.options["block_size"] == 120 and result.options["tol"] == 1e-4
    # a block of every coordinate is the exact solve: one iteration
    assert result.n_iter == 1 and result.converged
    alpha = _cho_reference(_ref_kernel(("se", 0.4, 1.0), X, X), 0.1, y)
    assert _rel(result.x, alpha) < 1e-10
    big = bcd.GaussianProcess(*_data(600, 2, seed=11), kernel, 0.1)
    r = bcd.solve(big, rule="mi", update="exact", max_iter=1, random_state=0)
    assert r.options["block_size"] == 500
    assert np.count_nonzero(r.x) == 500


@pytest.mark.parametrize("name", ["se_ard", "sum_of_products"])
def test_block_matrix_lower_triangle_is_bitwise_that_of_whole_rows(name):
    # the matrix update forms one triangle of K_b + s I (K is symmetric):
    # each row over a prefix of whole vector chunks, so that its entries are
    # bitwise those of the whole row; blocks of 200 and 150 shuffled points,
    # one with a repeated coordinate (noise where the coordinates coincide)
    spec = KERNEL_SPECS[name]
    X, y = _data(300, 3, seed=21)
    problem = bcd.GaussianProcess(X, y, _build(spec), 0.2)
    state = problem.compile(False, 300)
    rng = np.random.default_rng(4)
    A = _ref_kernel(spec, X, X) + 0.2 * np.eye(300)
    for blk in (rng.permutation(300)[:200], np.r_[rng.permutation(300)[:149], 7, 7][1:]):
        blk = blk.astype(np.int32)
        full = state.get_block_matrix(blk)
        lower = state.get_block_matrix(blk, lower=True)
        assert np.array_equal(lower, np.tril(full))
        np.testing.assert_allclose(full, A[np.ix_(blk, blk)], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n", [700, 1100])
def test_dense_default_solve_certifies_the_true_residual(n):
    # no options: one block of every point, factored by panels of 512 (two
    # or three panels here); the gradient after the step is computed from
    # alpha (no second product), and the reported optimality is the true
    # residual of the returned alpha
    X, y = _data(n, 4, seed=3)
    kernel = SquaredExponential(0.8)
    result = bcd.solve(bcd.GaussianProcess(X, y, kernel, 0.05))
    assert result.options["auto_prediction"]["choice"] == "dense"
    assert result.n_iter == 1 and result.converged
    A = _ref_kernel(("se", 0.8, 1.0), X, X) + 0.05 * np.eye(n)
    residual = np.abs(A @ result.x - y).max()
    assert result.optimality == pytest.approx(residual, rel=1e-3, abs=1e-12)
    assert _rel(result.x, _cho_reference(A - 0.05 * np.eye(n), 0.05, y)) < 1e-9


def test_dense_solve_at_its_attainable_accuracy_stops_after_a_few_refinements():
    # duplicate inputs with the smallest noise accepted: K + noise I has a
    # condition number near 1e11, and no solve gets the residual to 1e-9
    # (numpy's neither); the block of every point is refined EXACT_STEPS
    # times, then the solve stops with a warning rather than running
    # 10,000 direct solves
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    X = np.vstack([X, X])
    y = rng.standard_normal(600)
    kernel = SquaredExponential(0.5)
    A = _ref_kernel(("se", 0.5, 1.0), X, X) + 1e-8 * np.eye(600)
    assert np.abs(A @ np.linalg.solve(A, y) - y).max() > 1e-9
    with pytest.warns(bcd.ConvergenceWarning, match="max_iter"):
        result = bcd.solve(bcd.GaussianProcess(X, y, kernel, 1e-8), tol=1e-9)
    assert result.status == "max_iter" and result.n_iter == bcd._solve.EXACT_STEPS == 10
    assert result.options["max_iter"] == 10
    assert result.optimality < 1e-3
    # a given max_iter is kept
    r = bcd.solve(bcd.GaussianProcess(X, y, kernel, 1e-8), tol=1e-9, max_iter=12,
                  warn=False)
    assert r.n_iter == 12


def test_problem_python_side_against_dense():
    X, y = _data(80, 3, seed=12)
    spec = KERNEL_SPECS["sum"]
    A = _ref_kernel(spec, X, X) + 0.2 * np.eye(80)
    problem = bcd.problems.make("gaussian_process", X=X, y=y, kernel=_build(spec), noise=0.2)
    assert isinstance(problem, bcd.GaussianProcess)
    a = np.random.default_rng(0).standard_normal(80)
    np.testing.assert_allclose(problem.matvec(a), A @ a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(problem.gradient(a), A @ a - y, rtol=1e-12, atol=1e-12)
    assert problem.smooth_objective(a) == pytest.approx(0.5 * a @ A @ a - y @ a, rel=1e-12)
    np.testing.assert_allclose(problem.lipschitz, np.diag(A), rtol=1e-14)


# ---------------------------------------------- 2. predictions against sklearn

def _sk_regressor(sk_kernel, noise, X, y):
    return sk_gp.GaussianProcessRegressor(kernel=sk_kernel, alpha=noise, optimizer=None,
                                          normalize_y=False).fit(X, y)


PREDICT_CASES = {
    "se_ard": (lambda: SquaredExponential([0.3, 0.5], variance=1.7),
               lambda: sk_kernels.ConstantKernel(1.7, "fixed")
               * sk_kernels.RBF([0.3, 0.5], "fixed")),
    "matern32_ard": (lambda: Matern(1.5, [0.3, 0.5], variance=0.9),
                     lambda: sk_kernels.ConstantKernel(0.9, "fixed")
                     * sk_kernels.Matern([0.3, 0.5], "fixed", nu=1.5)),
    "matern52": (lambda: Matern(2.5, 0.4, variance=2.0),
                 lambda: sk_kernels.ConstantKernel(2.0, "fixed")
                 * sk_kernels.Matern(0.4, "fixed", nu=2.5)),
}


@pytest.mark.parametrize("variance", ["cholesky", "cg"])
@pytest.mark.parametrize("case", sorted(PREDICT_CASES))
def test_predictions_match_sklearn(case, variance):
    make_bcd, make_sk = PREDICT_CASES[case]
    X, y = _data(150, 2, seed=2)
    rng = np.random.default_rng(5)
    Xt = np.vstack([rng.uniform(-0.2, 1.2, size=(40, 2)), X[:5]])
    noise = 0.01
    ref = _sk_regressor(make_sk(), noise, X, y)
    mean_ref, std_ref = ref.predict(Xt, return_std=True)
    gp = GPRegressor(make_bcd(), noise, block_size=40, tol=1e-10, variance=variance,
                     random_state=0, n_threads=1)
    assert gp.fit(X, y) is gp
    assert gp.result_.converged and gp.result_.n_iter > 1
    np.testing.assert_allclose(gp.alpha_, ref.alpha_, rtol=1e-7, atol=1e-9)
    mean_only = gp.predict(Xt)
    mean, std = gp.predict(Xt, return_std=True)
    np.testing.assert_array_equal(mean_only, mean)
    np.testing.assert_allclose(mean, mean_ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(std, std_ref, rtol=0, atol=1e-6 if variance == "cg" else 1e-9)


def test_cg_variance_agrees_over_batches():
    X, y = _data(100, 2, seed=3)
    Xt = np.random.default_rng(1).uniform(size=(600, 2))   # more than one batch of 256
    kernel = SquaredExponential([0.4, 0.6])
    chol = GPRegressor(kernel, 0.05, tol=1e-10, variance="auto", random_state=0,
                       n_threads=1).fit(X, y)
    cg = GPRegressor(kernel, 0.05, tol=1e-10, variance="cg", random_state=0,
                     n_threads=1).fit(X, y)
    m1, s1 = chol.predict(Xt, return_std=True)
    m2, s2 = cg.predict(Xt, return_std=True)
    ref = _sk_regressor(sk_kernels.RBF([0.4, 0.6], "fixed"), 0.05, X, y)
    _, s_ref = ref.predict(Xt, return_std=True)
    np.testing.assert_allclose(s1, s_ref, atol=1e-9)
    np.testing.assert_allclose(s2, s_ref, atol=1e-6)
    np.testing.assert_allclose(m1, m2, atol=1e-12)


@pytest.mark.parametrize("variance,tol", [("cholesky", 1e-9), ("cg", 1e-9), ("cg", 1e-4)])
def test_std_is_never_negative_or_nan(variance, tol):
    rng = np.random.default_rng(4)
    X = np.sort(rng.uniform(size=(60, 1)), axis=0)
    y = np.sin(6 * X[:, 0])
    kernel = SquaredExponential(0.3, variance=2.0)
    # the smallest noise accepted: the latent variance at a training point is
    # ~ noise, below the error of a loose CG solve (tol=1e-4), which makes
    # k0 - k'(K + noise I)^{-1} k negative before clipping
    gp = GPRegressor(kernel, 1e-8 * 2.0, block_size=20, tol=tol, variance=variance,
                     random_state=0, n_threads=1).fit(X, y)
    far = np.array([[50.0]])
    mean, std = gp.predict(np.vstack([X, X[::-1], far]), return_std=True)
    assert np.all(np.isfinite(std)) and np.all(std >= 0)
    assert np.all(std[:-1] < (1e-3 if tol < 1e-6 else 0.05))
    # far from the data: the prior
    assert std[-1] == pytest.approx(np.sqrt(2.0), rel=1e-12)
    assert mean[-1] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(mean[:60], y, atol=1e-4 if tol < 1e-6 else 1e-2)


def test_predict_one_dimensional_inputs():
    rng = np.random.default_rng(8)
    x = rng.uniform(size=50)
    y = np.cos(4 * x)
    gp = GPRegressor(Matern(2.5, 0.3), 0.01, tol=1e-10, random_state=0).fit(x, y)
    ref = _sk_regressor(sk_kernels.Matern(0.3, "fixed", nu=2.5), 0.01, x[:, None], y)
    xt = np.linspace(0, 1, 7)
    np.testing.assert_allclose(gp.predict(xt), ref.predict(xt[:, None]), atol=1e-8)


# ------------------------------------------------------- 3. kernel matrices

@pytest.fixture(scope="module")
def kernel_inputs():
    rng = np.random.default_rng(6)
    # X1 spans several row tiles (256) and enough entries for the parallel path
    return rng.uniform(-1, 2, size=(300, 3)), rng.uniform(-1, 2, size=(250, 3))


@pytest.mark.parametrize("name", sorted(KERNEL_SPECS))
def test_kernel_matrix_and_products_match_dense_reference(name, kernel_inputs):
    spec = KERNEL_SPECS[name]
    X1, X2 = kernel_inputs
    kernel = _build(spec)
    ref = _ref_kernel(spec, X1, X2)
    K = kernel(X1, X2)
    assert K.shape == (300, 250)
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-14)
    # symmetric case and the constant diagonal
    K11 = kernel(X1)
    np.testing.assert_allclose(K11, _ref_kernel(spec, X1, X1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.diag(K11), kernel.diag_value(), rtol=1e-14)
    assert kernel.diag_value() == pytest.approx(_ref_kernel(spec, X1[:1], X1[:1])[0, 0])
    rng = np.random.default_rng(0)
    ev = kernel.evaluator(X1, X2, n_threads=2)
    np.testing.assert_allclose(ev.matrix(), ref, rtol=1e-12, atol=1e-14)
    w = rng.standard_normal(250)
    np.testing.assert_allclose(ev.matvec(w), ref @ w, rtol=1e-11, atol=1e-11)
    cols = np.array([3, 0, 249, 17])
    np.testing.assert_allclose(ev.matvec(w[:4], cols=cols), ref[:, cols] @ w[:4],
                               rtol=1e-11, atol=1e-12)
    W = rng.standard_normal((250, 3))
    np.testing.assert_allclose(ev.matmat(W), ref @ W, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("name", ["se_iso", "sum_of_products"])
def test_symmetric_products_match_dense_and_ignore_the_thread_count(name):
    # K[:, S] w through the symmetry of K: the rows of S over one triangle
    # (blocks of 64 rows here, up to 64 blocks), the others whole; the
    # result is bitwise the same for any number of threads
    spec = KERNEL_SPECS[name]
    X, _ = _data(1300, 3, seed=8)
    ref = _ref_kernel(spec, X, X)
    rng = np.random.default_rng(2)
    kernel = _build(spec)
    for cols in (np.arange(1300), rng.permutation(1300)[:1000], np.array([5])):
        w = rng.standard_normal(cols.size)
        outs = [kernel.evaluator(X, n_threads=t).matvec(w, cols, symmetric=True)
                for t in (1, 2, 3, 8)]
        np.testing.assert_allclose(outs[0], ref[:, cols] @ w, rtol=1e-11, atol=1e-11)
        for out in outs[1:]:
            assert np.array_equal(out, outs[0])
    ev = kernel.evaluator(X, X[:10])
    with pytest.raises(ValueError, match="symmetric=True"):
        ev.matvec(np.ones(10), symmetric=True)
    with pytest.raises(ValueError, match="distinct cols"):
        kernel.evaluator(X).matvec(np.ones(2), [4, 4], symmetric=True)


@pytest.mark.parametrize("n_points", [1, 7, 1000])      # scalar tails and vector loops
def test_squared_exponential_over_the_whole_exponent_range(n_points):
    # exp(-r^2 / 2) from 1 down through the subnormals to underflow, against
    # NumPy's exp: the compiled exponential is a polynomial of its own
    r2 = np.concatenate([[0.0, 1e-300, 1e-17], np.linspace(0.0, 1600.0, n_points),
                         [2 * 708.39, 2 * 744.4, 2 * 745.2, 2 * 746.0, 1e6, 1e300]])
    x2 = np.sqrt(r2)[:, None]
    K = SquaredExponential(1.0)(np.zeros((1, 1)), x2)[0]
    ref = np.exp(-0.5 * x2[:, 0] ** 2)
    normal = ref > np.finfo(float).tiny
    np.testing.assert_allclose(K[normal], ref[normal], rtol=4 * np.finfo(float).eps)
    np.testing.assert_allclose(K[~normal], ref[~normal], rtol=0, atol=1e-322)
    assert np.all(K >= 0) and np.all(np.isfinite(K))
    assert K[-1] == 0.0 and K[-2] == 0.0


def test_kernel_composition_types():
    a, b = SquaredExponential(1.0), Periodic(1.0, 1.0)
    assert isinstance(a + b, Sum) and isinstance(a * b, Product)
    with pytest.raises(TypeError):
        a + 1.0
    with pytest.raises(TypeError):
        a * "x"


def test_many_metrics_hessian_entries():
    # more distinct length-scale vectors than the on-stack scratch of one entry
    rng = np.random.default_rng(9)
    X = rng.uniform(size=(40, 2))
    specs = [("se", [0.2 + 0.05 * i, 1.0], 0.1) for i in range(18)]
    spec = specs[0]
    for s in specs[1:]:
        spec = ("+", spec, s)
    kernel = _build(spec)
    ref = _ref_kernel(spec, X, X)
    np.testing.assert_allclose(kernel(X), ref, rtol=1e-12)
    problem = bcd.GaussianProcess(X, np.ones(40), kernel, 0.3)
    k, _, _, _ = assemble_parts(problem, "gbcd", "variable", 5, "exact", None,
                           np.random.RandomState(0))
    rows, cols = [1, 5, 7], [5, 0, 39, 7]
    H = np.asarray(k.get_hessian_entries(rows, cols)).reshape(3, 4)
    A = ref + 0.3 * np.eye(40)
    np.testing.assert_allclose(H, A[np.ix_(rows, cols)], rtol=1e-12)


SKLEARN_KERNELS = {
    "rbf_ard": (lambda: SquaredExponential([0.3, 0.8, 2.0], variance=1.7),
                lambda: sk_kernels.ConstantKernel(1.7) * sk_kernels.RBF([0.3, 0.8, 2.0])),
    "matern32": (lambda: Matern(1.5, [0.4, 0.9, 1.3]),
                 lambda: sk_kernels.Matern([0.4, 0.9, 1.3], nu=1.5)),
    "matern52": (lambda: Matern(2.5, 0.6, variance=2.2),
                 lambda: sk_kernels.ConstantKernel(2.2) * sk_kernels.Matern(0.6, nu=2.5)),
    "exp_sine_squared": (lambda: Periodic(0.9, 0.7, variance=1.3),
                         lambda: sk_kernels.ConstantKernel(1.3)
                         * sk_kernels.ExpSineSquared(length_scale=0.7, periodicity=0.9)),
    "locally_periodic": (lambda: LocallyPeriodic(1.1, 0.8),
                         lambda: sk_kernels.RBF(0.8)
                         * sk_kernels.ExpSineSquared(length_scale=0.8, periodicity=1.1)),
    "rational_quadratic": (lambda: bcd.gp.RationalQuadratic(0.7, alpha=0.4, variance=1.6),
                           lambda: sk_kernels.ConstantKernel(1.6)
                           * sk_kernels.RationalQuadratic(length_scale=0.7, alpha=0.4)),
    "rq*matern": (lambda: bcd.gp.RationalQuadratic(1.2, alpha=3.0) * Matern(2.5, 0.9),
                  lambda: sk_kernels.RationalQuadratic(1.2, 3.0) * sk_kernels.Matern(0.9, nu=2.5)),
    "sum": (lambda: SquaredExponential(0.5) + Matern(1.5, 0.7, variance=0.3),
            lambda: sk_kernels.RBF(0.5)
            + sk_kernels.ConstantKernel(0.3) * sk_kernels.Matern(0.7, nu=1.5)),
}


@pytest.mark.parametrize("name", sorted(SKLEARN_KERNELS))
def test_kernels_match_sklearn(name, kernel_inputs):
    make_bcd, make_sk = SKLEARN_KERNELS[name]
    X1, X2 = kernel_inputs
    X1 = X1[:60]
    np.testing.assert_allclose(make_bcd()(X1, X2), make_sk()(X1, X2), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(make_bcd()(X1), make_sk()(X1), rtol=1e-12, atol=1e-14)


def test_rational_quadratic_system_solved_by_gbcd(kernel_inputs):
    # the entries one at a time (Hessian blocks) and by columns (products)
    X = kernel_inputs[0][:150]
    kernel = bcd.gp.RationalQuadratic([0.8, 1.5, 0.6], alpha=0.8, variance=1.2)
    y = np.sin(X[:, 0]) + X[:, 1]
    K = kernel(X)
    problem = bcd.GaussianProcess(X, y, kernel, 0.1, n_threads=1)
    r = bcd.solve(problem, rule="gbcd", block_size=20, update="exact", tol=1e-10,
                  max_iter=100000)
    assert r.converged
    np.testing.assert_allclose((K + 0.1 * np.eye(150)) @ r.x, y, atol=1e-9)
    np.testing.assert_allclose(problem.kernel_product(r.x), K @ r.x, rtol=1e-12, atol=1e-12)


# ------------------------------------------------ 4. rules and convergence

@pytest.fixture(scope="module")
def small_problem():
    X, y = _data(200, 3, seed=7)
    spec = ("se", [0.5, 0.7, 1.0], 1.0)
    alpha = _cho_reference(_ref_kernel(spec, X, X), 0.1, y)
    return X, y, _build(spec), alpha


@pytest.mark.parametrize("rule", ["cyclic", "random", "lipschitz", "gs", "gsl", "gsd", "gsq",
                                  "gbcd"])
def test_variable_block_rules_converge_to_cho_solve(rule, small_problem):
    X, y, kernel, alpha = small_problem
    problem = bcd.GaussianProcess(X, y, kernel, 0.1, n_threads=1)
    result = bcd.solve(problem, rule=rule, blocks="variable", block_size=20, update="exact",
                       tol=1e-9, max_iter=50000, random_state=0)
    assert result.converged
    assert _rel(result.x, alpha) < 1e-7


@pytest.mark.parametrize("rule,blocks,options", [
    ("gs", "fixed", {}), ("random", "fixed", {}), ("gsq", "fixed", {}),
    ("lipschitz", "fixed", {"cache_size": 8 * 200 * 50}),
    ("cyclic", "variable", {"cache_size": 8 * 200 * 50}),
    ("gs", "variable", {"precomputed": True})])
def test_block_rules_with_cache_or_fixed_blocks_converge(rule, blocks, options):
    # shorter length-scales than small_problem: fixed blocks converge slowly
    # when the coordinates are strongly coupled
    X, y = _data(200, 3, seed=7)
    spec = ("se", [0.2, 0.3, 0.4], 1.0)
    kernel = _build(spec)
    alpha = _cho_reference(_ref_kernel(spec, X, X), 0.1, y)
    problem = bcd.GaussianProcess(X, y, kernel, 0.1, n_threads=1, **options)
    result = bcd.solve(problem, rule=rule, blocks=blocks, block_size=40, partition=(
                           "random" if blocks == "fixed" else None),
                       update="exact", tol=1e-9, max_iter=50000, random_state=0)
    assert result.converged
    assert _rel(result.x, alpha) < 1e-7


def test_matrix_update_converges(small_problem):
    X, y, kernel, alpha = small_problem
    problem = bcd.GaussianProcess(X, y, kernel, 0.1, n_threads=1)
    result = bcd.solve(problem, rule="gsq", block_size=20, update="matrix", tol=1e-8,
                       max_iter=50000, random_state=0)
    assert result.converged
    assert _rel(result.x, alpha) < 1e-6


def test_gbcd_needs_far_fewer_iterations_than_cyclic():
    # Bo and Sminchisescu, Fig. 3: greedy blocks beat cyclic and random blocks
    X, y = _data(400, 2, seed=0)
    kernel = SquaredExponential(0.3)
    iters = {}
    for rule in ("gbcd", "cyclic", "random"):
        problem = bcd.GaussianProcess(X, y, kernel, 0.01, n_threads=1)
        result = bcd.solve(problem, rule=rule, block_size=40, update="exact", tol=1e-6,
                           max_iter=20000, random_state=0)
        assert result.converged
        iters[rule] = result.n_iter
    assert 4 * iters["gbcd"] < iters["cyclic"], iters
    assert 4 * iters["gbcd"] < iters["random"], iters


# ------------------------------------------- 5. GBCD is the exact greedy rule

def _greedy_reference(H, g, size):
    """Greedy block growth with every coordinate a candidate."""
    diag = np.diag(H)
    block = [int(np.argmax(g * g / diag))]
    while len(block) < size:
        delta = -np.linalg.solve(H[np.ix_(block, block)], g[block])
        e = g + H[:, block] @ delta
        score = e * e / diag
        score[block] = -np.inf
        block.append(int(np.argmax(score)))
    delta = -np.linalg.solve(H[np.ix_(block, block)], g[block])
    return np.array(block), delta


@pytest.mark.parametrize("precomputed", [False, True])
@pytest.mark.parametrize("start", ["zero", "random"])
@pytest.mark.parametrize("size", [1, 2, 9, 40])
def test_gbcd_with_all_candidates_is_the_exact_greedy_rule(size, start, precomputed):
    n = 120
    X, y = _data(n, 2, seed=13)
    spec = ("+", ("se", [0.3, 0.6], 1.0), ("m52", 0.5, 0.5))
    H = _ref_kernel(spec, X, X) + 0.05 * np.eye(n)
    x0 = None if start == "zero" else np.random.default_rng(1).standard_normal(n) * 0.3
    g = -y if x0 is None else H @ x0 - y
    block_ref, delta_ref = _greedy_reference(H, g, size)
    problem = bcd.GaussianProcess(X, y, _build(spec), 0.05, precomputed=precomputed)
    kernel, _, selector, _ = assemble_parts(problem, "gbcd", "variable", size, "exact", None,
                                       np.random.RandomState(0), x0, {"mi_candidates": n})
    (block,) = selector.draw(kernel, 1)
    np.testing.assert_array_equal(block, np.sort(block_ref))
    expected = np.zeros(n) if x0 is None else x0.copy()
    expected[block_ref] += delta_ref
    for kappa in (n, 10 * n):
        result = bcd.solve(problem, rule="gbcd", block_size=size, update="exact", max_iter=1,
                           tol=0.0, x0=x0, mi_candidates=kappa, random_state=5)
        assert result.n_iter == 1
        np.testing.assert_allclose(result.x, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("precomputed", [False, True])
@pytest.mark.parametrize("size", [2, 9, 40])
def test_gbcd_pool_of_every_candidate_is_the_exact_greedy_rule(size, precomputed):
    # with kappa = n every coordinate outside B is in the pool, and with
    # mi_refresh=1 only the chosen one leaves it: the kept rows gain one
    # column per step, and must give the exact greedy choices and delta
    n = 120
    X, y = _data(n, 2, seed=13)
    spec = ("+", ("se", [0.3, 0.6], 1.0), ("m52", 0.5, 0.5))
    H = _ref_kernel(spec, X, X) + 0.05 * np.eye(n)
    x0 = np.random.default_rng(1).standard_normal(n) * 0.3
    block_ref, delta_ref = _greedy_reference(H, H @ x0 - y, size)
    expected = x0.copy()
    expected[block_ref] += delta_ref
    for threads in (1, 2):
        problem = bcd.GaussianProcess(X, y, _build(spec), 0.05, precomputed=precomputed,
                                      n_threads=threads)
        result = bcd.solve(problem, rule="gbcd", block_size=size, update="exact", max_iter=1,
                           tol=0.0, x0=x0, mi_candidates=n, mi_refresh=1, random_state=5)
        np.testing.assert_allclose(result.x, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("refresh", [1, 7, 30])
def test_gbcd_pool_reaches_cho_solve_and_threads_do_not_change_it(big_problem, refresh):
    X, y, alpha = big_problem
    kernel = SquaredExponential(LS_BIG, variance=VAR_BIG)
    xs = []
    for threads in (1, 2):
        problem = bcd.GaussianProcess(X, y, kernel, NOISE_BIG, n_threads=threads)
        result = bcd.solve(problem, rule="gbcd", block_size=100, update="exact", tol=1e-9,
                           max_iter=5000, mi_refresh=refresh, random_state=3)
        assert result.converged
        assert _rel(result.x, alpha) < 1e-6
        xs.append(result.x)
    assert np.array_equal(xs[0], xs[1])


def test_gbcd_refreshing_every_candidate_is_the_default_rule():
    X, y = _data(400, 3, seed=21)
    problem = bcd.GaussianProcess(X, y, SquaredExponential(0.5), 0.05)
    runs = [bcd.solve(problem, rule="gbcd", block_size=40, update="exact", max_iter=4, tol=0.0,
                      random_state=2, mi_candidates=25, **extra).x
            for extra in ({}, {"mi_refresh": 25}, {"mi_refresh": 100})]
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])
    kept = bcd.solve(problem, rule="gbcd", block_size=40, update="exact", max_iter=4, tol=0.0,
                     random_state=2, mi_candidates=25, mi_refresh=5).x
    assert not np.array_equal(runs[0], kept)


def test_gbcd_exact_greedy_on_quadratic():
    rng = np.random.default_rng(14)
    n = 80
    Q = sp.random(n, n, density=0.05, random_state=3)
    Q = (Q + Q.T + sp.diags(np.full(n, 2.0) + rng.uniform(size=n))).tocsc()
    Q = Q + sp.diags(np.abs(Q).sum(axis=1).A1)          # diagonally dominant: SPD
    c = rng.standard_normal(n)
    H = Q.toarray()
    block_ref, delta_ref = _greedy_reference(H, -c, 12)
    expected = np.zeros(n)
    expected[block_ref] = delta_ref
    for refresh in (None, 1):       # the pool of all candidates, kept rows extended
        result = bcd.solve(bcd.Quadratic(Q, c), rule="gbcd", block_size=12, update="exact",
                           max_iter=1, tol=0.0, mi_candidates=n, mi_refresh=refresh)
        np.testing.assert_allclose(result.x, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kappa, refresh", [(5, None), (60, None), (1000, None), (60, 10)])
def test_gbcd_on_sparse_quadratic_reaches_spsolve(kappa, refresh):
    m = 15
    T = sp.diags([[-1.0] * (m - 1), [4.0] * m, [-1.0] * (m - 1)], [-1, 0, 1])
    off = sp.diags([[-1.0] * (m - 1), [-1.0] * (m - 1)], [-1, 1])
    Q = (sp.kron(sp.eye(m), T) + sp.kron(off, sp.eye(m)) + 0.1 * sp.eye(m * m)).tocsc()
    c = np.random.default_rng(15).standard_normal(m * m)
    x_ref = spla.spsolve(Q, c)
    result = bcd.solve(bcd.Quadratic(Q, c), rule="gbcd", block_size=20, update="exact",
                       tol=1e-10, random_state=0, mi_candidates=kappa, mi_refresh=refresh,
                       max_iter=100000)
    assert result.converged
    assert _rel(result.x, x_ref) < 1e-8


# ---------------------------------------------------------- 6. reproducibility

@pytest.mark.parametrize("rule", ["gbcd", "random", "cyclic"])
def test_same_seed_same_iterates(rule):
    X, y = _data(300, 2, seed=16)
    kernel = Matern(1.5, 0.3)
    runs = []
    for seed in (42, 42, 43):
        problem = bcd.GaussianProcess(X, y, kernel, 0.05)
        runs.append(bcd.solve(problem, rule=rule, block_size=30, update="exact", max_iter=6,
                              tol=0.0, random_state=seed,
                              mi_candidates=20 if rule == "gbcd" else None).x)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])      # the seed is used


def test_regressor_same_seed_same_fit():
    X, y = _data(300, 2, seed=17)
    fits = [GPRegressor(SquaredExponential(0.3), 0.05, block_size=30, tol=1e-6,
                        random_state=np.random.default_rng(3)).fit(X, y).alpha_
            for _ in range(2)]
    np.testing.assert_array_equal(fits[0], fits[1])


def test_regressor_options_are_passed_to_solve():
    X, y = _data(150, 2, seed=18)
    gp = GPRegressor(SquaredExponential(0.3), 0.05, rule="cyclic", tol=1e-9,
                     random_state=0).fit(X, y)
    assert gp.result_.options["rule"] == "cyclic"
    assert gp.result_.options["block_size"] == 5
    assert gp.result_.options["update"] == "exact"
    alpha = _cho_reference(_ref_kernel(("se", 0.3, 1.0), X, X), 0.05, y)
    assert _rel(gp.alpha_, alpha) < 1e-7
    # solver_options reach bcd.solve
    gp = GPRegressor(SquaredExponential(0.3), 0.05, block_size=30, max_iter=1, tol=1e-12,
                     solver_options={"mi_candidates": 150}).fit(X, y)
    H = _ref_kernel(("se", 0.3, 1.0), X, X) + 0.05 * np.eye(150)
    block, delta = _greedy_reference(H, -y, 30)
    expected = np.zeros(150)
    expected[block] = delta
    np.testing.assert_allclose(gp.alpha_, expected, atol=1e-10)


# ------------------------------------------------------------ 7. bad input

_X, _Y = _data(20, 2, seed=19)
_K = SquaredExponential(0.5)


def _gp(**kw):
    args = dict(X=_X, y=_Y, kernel=_K, noise=0.1)
    args.update(kw)
    return bcd.GaussianProcess(**args)


_DUP_X = np.vstack([_X, _X[:5]])
_DUP_Y = np.r_[_Y, _Y[:5]]

BAD_INPUTS = {
    "nan_X": (lambda: _gp(X=with_value(_X, (3, 1), np.nan)), ValueError, r"\bX\b"),
    "inf_X": (lambda: _gp(X=with_value(_X, (0, 0), -np.inf)), ValueError, r"\bX\b"),
    "nan_y": (lambda: _gp(y=with_value(_Y, 2, np.nan)), ValueError, r"\by\b"),
    "inf_y": (lambda: _gp(y=with_value(_Y, 2, np.inf)), ValueError, r"\by\b"),
    "short_y": (lambda: _gp(y=_Y[:-1]), ValueError, r"\by\b"),
    "matrix_y": (lambda: _gp(y=_Y.reshape(4, 5)), ValueError, r"\by\b"),
    "empty_X": (lambda: _gp(X=np.zeros((0, 2)), y=np.zeros(0)), ValueError, r"\bX\b"),
    "complex_X": (lambda: _gp(X=_X.astype(complex)), TypeError, r"\bX\b"),
    "zero_noise": (lambda: _gp(noise=0.0), ValueError, "noise"),
    "negative_noise": (lambda: _gp(noise=-0.1), ValueError, "noise"),
    "nan_noise": (lambda: _gp(noise=np.nan), ValueError, "noise"),
    "inf_noise": (lambda: _gp(noise=np.inf), ValueError, "noise"),
    "str_noise": (lambda: _gp(noise="0.1"), TypeError, "noise"),
    "array_noise": (lambda: _gp(noise=[0.1]), TypeError, "noise"),
    "bool_noise": (lambda: _gp(noise=True), TypeError, "noise"),
    "not_a_kernel": (lambda: _gp(kernel="rbf"), TypeError, "kernel"),
    "negative_cache": (lambda: _gp(cache_size=-1), ValueError, "cache_size"),
    "zero_threads": (lambda: _gp(n_threads=0), ValueError, "n_threads"),
    "duplicates_tiny_noise": (lambda: _gp(X=_DUP_X, y=_DUP_Y, noise=1e-10), ValueError,
                              "noise"),
    "duplicates_tiny_relative_noise": (
        lambda: _gp(X=_DUP_X, y=_DUP_Y, kernel=SquaredExponential(0.5, variance=100.0),
                    noise=5e-7), ValueError, "noise"),
    "ard_count": (lambda: _gp(kernel=SquaredExponential([1.0, 2.0, 3.0])), ValueError,
                  "length-?scale"),
    "ard_count_in_product": (lambda: _gp(kernel=SquaredExponential([1.0, 2.0])
                                         * Matern(2.5, [1.0, 2.0, 3.0])), ValueError,
                             "length-?scale"),
    "ard_count_dense": (lambda: Matern(1.5, [1.0, 2.0, 3.0])(_X), ValueError, "length-?scale"),
    "se_zero_lengthscale": (lambda: SquaredExponential(0.0), ValueError, "lengthscale"),
    "se_negative_ard": (lambda: SquaredExponential([1.0, -1.0]), ValueError, "lengthscale"),
    "se_nan_lengthscale": (lambda: SquaredExponential(np.nan), ValueError, "lengthscale"),
    "se_empty_lengthscale": (lambda: SquaredExponential([]), ValueError, "lengthscale"),
    "se_zero_variance": (lambda: SquaredExponential(1.0, variance=0.0), ValueError, "variance"),
    "matern_negative_lengthscale": (lambda: Matern(1.5, -2.0), ValueError, "lengthscale"),
    "matern_negative_variance": (lambda: Matern(2.5, 1.0, variance=-1.0), ValueError,
                                 "variance"),
    "matern_nu_half": (lambda: Matern(0.5, 1.0), ValueError, r"\bnu\b"),
    "matern_nu_two": (lambda: Matern(2, 1.0), ValueError, r"\bnu\b"),
    "matern_nu_str": (lambda: Matern("1.5", 1.0), ValueError, r"\bnu\b"),
    "periodic_zero_period": (lambda: Periodic(0.0, 1.0), ValueError, "period"),
    "periodic_zero_lengthscale": (lambda: Periodic(1.0, 0.0), ValueError, "lengthscale"),
    "periodic_inf_variance": (lambda: Periodic(1.0, 1.0, variance=np.inf), ValueError,
                              "variance"),
    "locally_periodic_negative_period": (lambda: LocallyPeriodic(-1.0, 1.0), ValueError,
                                         "period"),
    "locally_periodic_negative_lengthscale": (lambda: LocallyPeriodic(1.0, -1.0), ValueError,
                                              "lengthscale"),
    "evaluator_feature_mismatch": (lambda: _K.evaluator(_X, np.ones((3, 3))), ValueError,
                                   "X2"),
    "unknown_variance_method": (lambda: GPRegressor(_K, 0.1, variance="lu").fit(_X, _Y),
                                ValueError, "variance"),
    "regressor_bad_noise": (lambda: GPRegressor(_K, -1.0).fit(_X, _Y), ValueError, "noise"),
    "regressor_nan_y": (lambda: GPRegressor(_K, 0.1).fit(_X, with_value(_Y, 0, np.nan)),
                        ValueError, r"\by\b"),
    "predict_before_fit": (lambda: GPRegressor(_K, 0.1).predict(_X), ValueError, "fit"),
    "predict_wrong_columns": (lambda: GPRegressor(_K, 0.1).fit(_X, _Y).predict(np.ones((4, 3))),
                              ValueError, "features"),
    "predict_nan": (lambda: GPRegressor(_K, 0.1).fit(_X, _Y).predict(np.full((2, 2), np.nan)),
                    ValueError, r"\bX\b"),
    "gbcd_fixed_blocks": (lambda: bcd.solve(_gp(), rule="gbcd", blocks="fixed", block_size=4,
                                            update="exact"), ValueError, "gbcd"),
    "mi_fixed_blocks": (lambda: bcd.solve(_gp(), rule="mi", blocks="fixed", block_size=4,
                                          update="exact"), ValueError, "variable"),
    "gbcd_penalty": (lambda: bcd.solve(bcd.Quadratic(sp.eye(20, format="csc") * 2.0, _Y,
                                                     penalty=bcd.L1(0.1)),
                                       rule="gbcd", block_size=4, update="homotopy"),
                     ValueError, "gbcd"),
    "gbcd_least_squares": (lambda: bcd.solve(bcd.LeastSquares(np.eye(20)[:, :10] + 1.0, _Y),
                                             rule="gbcd", block_size=4, update="exact"),
                           ValueError, "entries of a constant Hessian"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_raises(case):
    make, exc, match = BAD_INPUTS[case]
    with pytest.raises(exc, match=match):
        make()


def test_noise_at_the_floor_is_accepted_with_duplicates():
    problem = _gp(X=_DUP_X, y=_DUP_Y, kernel=SquaredExponential(0.5, variance=4.0),
                  noise=4e-8)
    result = bcd.solve(problem, rule="gbcd", block_size=10, update="exact", tol=1e-6,
                       random_state=0, max_iter=100000)
    assert result.converged and np.all(np.isfinite(result.x))


@pytest.mark.parametrize("layout", ["C", "F", "float32"])
def test_inputs_are_not_modified(layout):
    X, y = _data(150, 3, seed=20)
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "float32":
        X, y = X.astype(np.float32), y.astype(np.float32)
    x0 = np.random.default_rng(0).standard_normal(150)
    Xt = np.random.default_rng(1).uniform(size=(10, 3))
    copies = [a.copy(order="K") for a in (X, y, x0, Xt)]
    kernel = SquaredExponential([0.5, 0.6, 0.7])
    problem = bcd.GaussianProcess(X, y, kernel, 0.1, cache_size=8 * 150 * 10)
    bcd.solve(problem, rule="gbcd", block_size=10, update="exact", x0=x0, max_iter=20)
    bcd.solve(problem, rule="gs", block_size=5, update="exact", x0=x0, max_iter=20)
    for variance in ("cholesky", "cg"):
        gp = GPRegressor(kernel, 0.1, block_size=20, variance=variance, cache_size=8 * 150 * 20)
        gp.fit(X, y).predict(Xt, return_std=True)
    kernel(X, Xt)
    kernel.evaluator(X).matvec(x0)
    for arr, copy in zip((X, y, x0, Xt), copies):
        assert arr.dtype == copy.dtype and arr.flags.f_contiguous == copy.flags.f_contiguous
        np.testing.assert_array_equal(arr, copy)


# --------------------------------------------------------------- 8. float32

def test_float32_inputs():
    X, y = _data(300, 3, seed=21)
    kernel = SquaredExponential([0.5, 0.7, 1.0])
    X32, y32 = X.astype(np.float32), y.astype(np.float32)
    spec = ("se", [0.5, 0.7, 1.0], 1.0)
    alpha64 = _cho_reference(_ref_kernel(spec, X, X), 0.1, y)
    # the float32 data, exactly, in float64
    X_up, y_up = X32.astype(np.float64), y32.astype(np.float64)
    alpha_up = _cho_reference(_ref_kernel(spec, X_up, X_up), 0.1, y_up)
    problem = bcd.GaussianProcess(X32, y32, kernel, np.float32(0.1))
    result = bcd.solve(problem, rule="gbcd", block_size=50, update="exact", tol=1e-9,
                       random_state=0)
    assert result.x.dtype.kind == "f"
    # the certificate is that of the float32 x returned, which tol=1e-9 may
    # be out of reach of: the status then says so
    assert result.converged == (result.optimality <= 1e-9)
    if not result.converged:
        assert result.status == "stalled" and "float32" in result.message, result.message
    assert _rel(result.x, alpha_up) < 1e-7
    assert _rel(result.x, alpha64) < 1e-4
    np.testing.assert_allclose(kernel(X32), _ref_kernel(spec, X_up, X_up), rtol=1e-12)
    gp = GPRegressor(kernel, 0.1, block_size=50, tol=1e-9, random_state=0).fit(X32, y32)
    gp64 = GPRegressor(kernel, 0.1, block_size=50, tol=1e-9, random_state=0).fit(X, y)
    Xt = np.random.default_rng(2).uniform(size=(20, 3))
    m32, s32 = gp.predict(Xt.astype(np.float32), return_std=True)
    m64, s64 = gp64.predict(Xt, return_std=True)
    assert np.all(np.isfinite(m32)) and np.all(np.isfinite(s32))
    np.testing.assert_allclose(m32, m64, rtol=0, atol=1e-4)
    np.testing.assert_allclose(s32, s64, rtol=0, atol=1e-4)


# ------------------------------------------------------------ regressions

def test_column_cache_with_single_coordinate_blocks():
    # the cache scratch must exist even when no block larger than 1 is reserved
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 2))
    y = np.sin(4 * X[:, 0])
    problem = bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(0.5), 0.1,
                                  cache_size=8 * 60 * 10)
    result = bcd.solve(problem, rule="cyclic", block_size=1, update="exact", tol=1e-8,
                       max_iter=100000)
    K = problem.kernel(X) + 0.1 * np.eye(60)
    assert result.converged
    np.testing.assert_allclose(K @ result.x, y, atol=1e-7)


def test_cache_size_accepts_numpy_integers():
    problem = _gp(cache_size=np.int64(8 * 20 * 5))
    result = bcd.solve(problem, rule="gbcd", block_size=5, update="exact", tol=1e-8,
                       random_state=0)
    assert result.converged


def test_a_team_on_busy_cores_grows_blocks_alone(big_problem):
    # 16 times more threads than cores: the team's threads do not all run
    # at once, its leader keeps yielding at the barriers, and the next blocks
    # grow on one thread instead (a barrier per step would otherwise wait for
    # a time slice); the iterates do not change
    import os
    X, y, _ = big_problem
    kernel = SquaredExponential(LS_BIG, variance=VAR_BIG)
    xs, solo = [], []
    for threads in (1, 16 * (os.cpu_count() or 1)):
        problem = bcd.GaussianProcess(X, y, kernel, NOISE_BIG, n_threads=threads)
        k, units, selector, parts = assemble_parts(problem, "gbcd", "variable", 100, "exact",
                                                   None, np.random.RandomState(3), None,
                                                   {"mi_candidates": 60})
        parts.run(20)
        xs.append(np.asarray(k.get_x()).copy())
        solo.append(selector.n_solo_blocks)
    assert np.array_equal(xs[1], xs[0])
    assert solo[0] == 0 and solo[1] > 0
