"""Working sets (``bcd.core.workingset``), Anderson extrapolation
(``bcd.core._extrapolate``), gap safe screening and ``gap_tol``: the same
optimum as plain block coordinate descent for every combination of working
set, extrapolation, rule, block strategy and update, on dense, sparse and
float32 data; screening never discards a coordinate of the solution's
support; reproducibility, the callback, max_time and the duality-gap stop."""
import functools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bcd
from bcd.core import workingset

from _data import logistic_data, penalized_reference, random_problem

# ------------------------------------------------------------------ problems

KINDS = ["lasso", "lasso_positive", "nnls", "box", "l1_logistic", "l2_logistic"]


def _lam_max(A, b):
    return float(np.max(np.abs(A.T @ b)))


@functools.lru_cache(maxsize=None)
def make(kind, sparse=False, dtype="float64"):
    """Problems with more coordinates than the smallest working set (100), so
    that the working sets are proper subsets."""
    dtype = np.dtype(dtype)
    if kind in ("lasso", "lasso_positive"):
        A, b = random_problem(60, 150, density=0.3, seed=0, sparse=sparse)
        lam = 0.1 * _lam_max(A, b)
        penalty = bcd.L1(lam, positive=kind == "lasso_positive")
        return bcd.LeastSquares(A.astype(dtype), b.astype(dtype), penalty=penalty)
    if kind in ("nnls", "box"):
        A, b = random_problem(200, 150, density=0.3, seed=5, sparse=sparse)
        penalty = bcd.NonNegative() if kind == "nnls" else bcd.Box(-0.02, 0.03)
        return bcd.LeastSquares(A.astype(dtype), b.astype(dtype), penalty=penalty)
    A, y = logistic_data(m=80, n=150, sparse=sparse)
    if kind == "l1_logistic":
        return bcd.Logistic(A.astype(dtype), y, penalty=bcd.L1(1.0))
    return bcd.Logistic(A.astype(dtype), y, l2=5.0)


@functools.lru_cache(maxsize=None)
def plain(kind, sparse=False):
    """A tight plain solve (no working set, no extrapolation): (x, F)."""
    r = bcd.solve(make(kind, sparse), rule="gs", blocks="variable", block_size=5,
                  update="newton", tol=1e-11, max_iter=10**6)
    assert r.converged and r.options["working_set"] is False
    return r.x, r.objective


def test_the_plain_reference_is_the_optimum():
    for kind in KINDS:
        problem = make(kind)
        f_ref = penalized_reference(problem)
        assert plain(kind)[1] == pytest.approx(f_ref, rel=1e-10)
        assert plain(kind)[1] <= f_ref + 1e-12 * abs(f_ref)


def test_the_working_sets_are_proper_subsets():
    # the penalized problems have a generalized support well below n
    for kind in ("lasso", "lasso_positive", "nnls", "box", "l1_logistic"):
        problem = make(kind)
        x, _ = plain(kind)
        parts = bcd.core.assemble(problem, "cyclic", "fixed", "gradient", 1, 0, x,
                                  working_set=True)
        _, smooth, _ = parts.state.kkt_scores()
        assert 0 < np.count_nonzero(smooth) < 0.5 * problem.n_coordinates, kind


# ------------------------------------------- the same optimum as plain BCD

TOL = 1e-8

CONFIGS = [
    dict(rule="cyclic", blocks="fixed", block_size=1, update="gradient", working_set=False,
         extrapolation=0),
    dict(rule="cyclic", blocks="fixed", block_size=1, update="gradient", working_set=True,
         extrapolation=0),
    dict(rule="cyclic", blocks="fixed", block_size=1, update="gradient", working_set=False,
         extrapolation=5),
    dict(rule="cyclic", blocks="fixed", block_size=1, update="gradient", working_set=True,
         extrapolation=5),
    dict(rule="cyclic", blocks="fixed", block_size=1, update="newton", working_set=True,
         extrapolation=5),
    dict(rule="cyclic", blocks="fixed", block_size=3, update="newton", working_set=True,
         extrapolation=0),
    dict(rule="cyclic", blocks="variable", block_size=5, update="newton", working_set=True,
         extrapolation=5),
    dict(rule="cyclic", blocks="variable", block_size=5, update="newton", working_set=False,
         extrapolation=5),
    dict(rule="gs", blocks="variable", block_size=5, update="gradient", working_set=True),
    dict(rule="gs", blocks="variable", block_size=5, update="newton", working_set=True),
    dict(rule="gs", blocks="fixed", block_size=5, update="newton", working_set=True),
    dict(rule="random", blocks="fixed", block_size=5, update="gradient", working_set=True,
         partition="random"),
]


def _config_id(config):
    return "-".join(f"{v}" for v in config.values())


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("kind", KINDS)
def test_same_optimum_as_plain_bcd(kind, sparse, config):
    problem = make(kind, sparse)
    x_ref, f_ref = plain(kind, sparse)
    result = bcd.solve(problem, tol=TOL, max_iter=10**6, random_state=0, **config)
    assert result.converged, result.message
    assert result.optimality <= TOL
    for key, value in config.items():
        assert result.options[key] == value
    # the KKT residual from its definition, at the returned point
    grad = problem.gradient(result.x)
    kkt = (problem.penalty.optimality(result.x, grad) if problem.penalty is not None
           else np.max(np.abs(grad)))
    assert kkt <= 1.01 * TOL
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)
    assert result.objective == pytest.approx(f_ref, rel=1e-9)
    np.testing.assert_allclose(result.x, x_ref, atol=1e-6 * max(1.0, np.abs(x_ref).max()))
    if kind in ("lasso", "lasso_positive"):
        assert result.duality_gap is not None
        assert 0 <= result.duality_gap <= 1e-7 * result.objective
        assert result.duality_gap == pytest.approx(problem.duality_gap(result.x), rel=1e-6,
                                                   abs=1e-12)
        assert np.array_equal(result.x != 0, x_ref != 0)
    if kind == "lasso_positive" or kind == "nnls":
        assert np.all(result.x >= 0)
    if kind == "box":
        assert np.all(result.x >= -0.02) and np.all(result.x <= 0.03)


@pytest.mark.parametrize("kind", ["lasso", "lasso_positive", "nnls", "box", "l1_logistic"])
def test_automatic_configuration_has_working_sets(kind):
    problem = make(kind)
    result = bcd.solve(problem, tol=TOL)
    assert result.options["working_set"] is True
    assert result.options["extrapolation"] > 0
    assert result.converged
    assert result.objective == pytest.approx(plain(kind)[1], rel=1e-9)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("kind", ["lasso", "nnls", "l1_logistic", "l2_logistic"])
@pytest.mark.parametrize("config", [
    dict(),                                      # the automatic configuration
    dict(rule="cyclic", blocks="fixed", block_size=1, working_set=True, extrapolation=5),
    dict(rule="gs", blocks="variable", update="newton", working_set=True),
], ids=["auto", "cyclic-ws-extrapolation", "gs-ws-newton"])
def test_float32_input(kind, sparse, config):
    p32 = make(kind, sparse, "float32")
    assert p32.dtype == np.float32
    # the same numbers in float64
    A64 = p32.A.astype(np.float64)
    if isinstance(p32, bcd.LeastSquares):
        p64 = bcd.LeastSquares(A64, p32.b.astype(np.float64), penalty=p32.penalty)
    else:
        p64 = bcd.Logistic(A64, p32.y, l2=p32.l2, penalty=p32.penalty)
    r32 = bcd.solve(p32, tol=TOL, max_iter=10**6, random_state=0, **config)
    r64 = bcd.solve(p64, tol=TOL, max_iter=10**6, random_state=0, **config)
    assert r64.converged
    assert r32.x.dtype == np.float32 and r64.x.dtype == np.float64
    # the certificates describe the float32 array returned, which may not
    # meet a tol this small: the status then says so
    x32 = r32.x.astype(np.float64)
    assert r32.objective == pytest.approx(p64.objective(x32), rel=1e-12)
    assert r32.converged == (r32.optimality <= TOL)
    if not r32.converged:
        assert r32.status == "stalled" and "float32" in r32.message, r32.message
    np.testing.assert_allclose(r32.x, r64.x, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------- Anderson extrapolation

def _least_squares_system(sparse=False):
    A, b = random_problem(80, 40, density=0.4, seed=1, sparse=sparse)
    dense = A.toarray() if sparse else A
    return bcd.LeastSquares(A, b), np.linalg.lstsq(dense, b, rcond=None)[0]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("blocks, block_size", [("fixed", 1), ("fixed", 4), ("variable", 5)])
def test_extrapolation_alone_on_least_squares(blocks, block_size, sparse):
    problem, x_ref = _least_squares_system(sparse)
    results = [bcd.solve(problem, rule="cyclic", blocks=blocks, block_size=block_size,
                         extrapolation=depth, tol=1e-9, max_iter=10**6, random_state=0)
               for depth in (0, 5)]
    for r in results:
        assert r.converged and r.optimality <= 1e-9
        assert r.options["working_set"] is False
        np.testing.assert_allclose(r.x, x_ref, rtol=1e-7, atol=1e-9)
        assert r.objective == pytest.approx(problem.objective(x_ref), rel=1e-12)
    assert results[1].options["extrapolation"] == 5


@pytest.mark.parametrize("kind", ["least_squares", "label_propagation"])
def test_extrapolated_steps_never_increase_the_objective(kind):
    # the proposal is taken only when it lowers F; coordinate minimization
    # never raises it either
    if kind == "least_squares":
        problem, _ = _least_squares_system()
        opts = dict(rule="cyclic", blocks="fixed", block_size=1)
    else:
        W, labels = bcd.datasets.make_lattice_dataset(12, 10, 1.0, random_state=0)
        problem = bcd.LabelPropagation(W, labels)
        opts = dict(rule="cyclic", blocks="forest_partition", update="exact")
    values = []
    bcd.solve(problem, extrapolation=3, max_iter=600, tol=0.0,
              callback=lambda info: values.append(info.objective), **opts)
    values = np.array(values)
    assert np.all(np.diff(values) <= 1e-12 * np.abs(values[:-1]))


def test_extrapolation_on_label_propagation_forest_partition():
    W, labels = bcd.datasets.make_lattice_dataset(20, 20, 1.0, random_state=0)
    problem = bcd.LabelPropagation(W, labels)
    x_ref = spla.spsolve(sp.csc_matrix(problem.Q), problem.c)
    f_ref = problem.objective(x_ref)
    results = {depth: bcd.solve(problem, rule="cyclic", blocks="forest_partition",
                                update="exact", extrapolation=depth, tol=1e-9, max_iter=10**6)
               for depth in (0, 5)}
    for depth, r in results.items():
        assert r.converged and r.optimality <= 1e-9
        assert r.options["extrapolation"] == depth
        assert r.objective == pytest.approx(f_ref, rel=1e-12)
        np.testing.assert_allclose(r.x, x_ref, rtol=0, atol=1e-8 * np.abs(x_ref).max())
    # what it is for: the row "sparse quadratic" of the table (0.44 s -> 0.12 s)
    assert results[5].n_iter < results[0].n_iter


# ------------------------------------------------------------------ gap_tol

@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("positive", [False, True])
def test_gap_tol_stops_on_the_duality_gap(positive, sparse):
    kind = "lasso_positive" if positive else "lasso"
    problem = make(kind, sparse)
    f_star = plain(kind, sparse)[1]
    gap_tol = 1e-3 * f_star
    result = bcd.solve(problem, tol=1e-12, gap_tol=gap_tol, max_iter=10**6)
    assert result.options["working_set"] is True
    assert result.converged and result.status == "converged"
    assert "duality gap" in result.message
    assert result.duality_gap <= gap_tol
    # it stopped on the gap, well before the KKT residual reached tol
    assert result.optimality > 1e-12
    assert result.duality_gap == pytest.approx(problem.duality_gap(result.x), rel=1e-6)
    # the gap bounds the suboptimality
    assert 0 <= result.objective - f_star <= result.duality_gap + 1e-12 * f_star
    # a KKT stop says so
    tight = bcd.solve(problem, tol=1e-8, gap_tol=0.0, max_iter=10**6)
    assert tight.converged and "duality gap" not in tight.message


def test_gap_tol_with_explicit_working_sets():
    problem = make("lasso")
    result = bcd.solve(problem, rule="gs", blocks="variable", update="newton",
                       working_set=True, tol=1e-12, gap_tol=1e-4, max_iter=10**6)
    assert result.converged and "duality gap" in result.message
    assert result.duality_gap <= 1e-4


# ---------------------------------------------------------------- screening

def _screening_problem(frac, positive=False, sparse=True):
    A, b = random_problem(60, 300, density=0.2, seed=3, sparse=sparse)
    return bcd.LeastSquares(A, b, penalty=bcd.L1(frac * _lam_max(A, b), positive=positive))


@functools.lru_cache(maxsize=None)
def _exact(frac, positive=False, sparse=True):
    r = bcd.solve(_screening_problem(frac, positive, sparse), rule="cyclic", blocks="fixed",
                  block_size=1, working_set=False, tol=1e-12, max_iter=10**7)
    assert r.converged
    return r.x


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("start", ["larger_lambda", "smaller_lambda", "zero"])
def test_screening_from_warm_starts_keeps_the_solution(start, positive):
    problem = _screening_problem(0.12, positive)
    x_star = _exact(0.12, positive)
    x0 = {"larger_lambda": _exact(0.3, positive), "smaller_lambda": _exact(0.04, positive),
          "zero": None}[start]
    results = [bcd.solve(problem, x0=x0, screening=screening, tol=1e-9)
               for screening in (True, False)]
    for r in results:
        assert r.converged and r.options["working_set"] is True
        assert r.objective == pytest.approx(problem.objective(x_star), rel=1e-10)
        np.testing.assert_array_equal(r.x != 0, x_star != 0)
        np.testing.assert_allclose(r.x, x_star, atol=1e-6)
    assert results[0].objective == pytest.approx(results[1].objective, rel=1e-12)


@pytest.mark.parametrize("start", ["larger_lambda", "smaller_lambda", "zero"])
def test_screening_discards_coordinates(start):
    problem = _screening_problem(0.12)
    x_star = _exact(0.12)
    x0 = {"larger_lambda": _exact(0.3), "smaller_lambda": _exact(0.04), "zero": None}[start]
    counts = {}
    for screening in (True, False):
        parts = bcd.core.assemble(problem, "cyclic", "fixed", "gradient", 1, 0, x0,
                                  partition="order", working_set=True)
        out, info = workingset.run(parts, problem, max_iter=10**6, tol=1e-9,
                                   screening=screening, extrapolation=5)
        assert out.status_name == "converged"
        x = parts.state.get_x()
        np.testing.assert_array_equal(x != 0, x_star != 0)
        assert problem.objective(x) == pytest.approx(problem.objective(x_star), rel=1e-10)
        assert max(info.sizes) < problem.n_coordinates
        counts[screening] = info.n_screened
    assert counts[False] == 0
    # most of the zeros of the solution are proven zero on the way
    assert counts[True] >= 0.5 * np.count_nonzero(x_star == 0)


def _midway(problem, iterations):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        return bcd.solve(problem, rule="cyclic", blocks="fixed", block_size=1,
                         max_iter=iterations, tol=0.0).x


def _safe_zeros_at(problem, x):
    parts = bcd.core.assemble(problem, "cyclic", "fixed", "gradient", 1, None,
                              np.ascontiguousarray(x, dtype=np.float64))
    scores, smooth, gradient = parts.state.kkt_scores()
    np.testing.assert_allclose(gradient, problem.gradient(x), rtol=1e-10,
                               atol=1e-10 * np.abs(gradient).max())
    gap, zeros = problem.safe_zeros(parts.state, gradient)
    assert gap == pytest.approx(problem.duality_gap(x), rel=1e-9, abs=1e-12)
    return gap, zeros


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("frac", [0.05, 0.12, 0.5])
def test_safe_zeros_are_zero_at_the_solution(frac, positive, sparse):
    problem = _screening_problem(frac, positive, sparse)
    x_star = _exact(frac, positive, sparse)
    zero = x_star == 0
    assert 0 < np.count_nonzero(~zero)
    rs = np.random.RandomState(0)
    scale = np.abs(x_star).max()
    points = {"zero": np.zeros_like(x_star), "midway_10": _midway(problem, 10),
              "midway_300": _midway(problem, 300), "midway_3000": _midway(problem, 3000)}
    for eps in (1e-1, 1e-3, 1e-6):
        x = x_star + eps * scale * rs.randn(x_star.size)
        points[f"perturbed_{eps:g}"] = np.maximum(x, 0.0) if positive else x
    for label, x in points.items():
        gap, zeros = _safe_zeros_at(problem, x)
        assert gap >= -1e-9 * abs(problem.objective(x)), label
        wrong = np.flatnonzero(zeros & ~zero)
        assert wrong.size == 0, (label, wrong)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("frac", [0.05, 0.12, 0.5])
def test_safe_zeros_at_the_solution(frac, positive, sparse):
    # at the solution the gap is ~0 (it may round to 0 or below): the sphere
    # test finds nearly every zero, and still none of the support
    problem = _screening_problem(frac, positive, sparse)
    x_star = _exact(frac, positive, sparse)
    zero = x_star == 0
    gap, zeros = _safe_zeros_at(problem, x_star)
    assert abs(gap) <= 1e-8 * problem.objective(x_star)
    assert np.count_nonzero(zeros) >= 0.9 * np.count_nonzero(zero)
    wrong = np.flatnonzero(zeros & ~zero)
    assert wrong.size == 0, (gap, wrong, x_star[wrong])


@pytest.mark.parametrize("start", ["solution", "zero"])
def test_unreachable_tol_with_screening_keeps_the_solution(start):
    # tol=0 cannot be reached: the solve must stop on max_iter (with the
    # warning) at the optimum, as it does with screening=False, and must not
    # discard the support once the gap rounds to zero.  max_time only guards
    # against the outer loop spinning without iterations.
    A, b = random_problem(60, 300, density=0.2, seed=3, sparse=False)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(0.5 * _lam_max(A, b)))
    x_star = _exact(0.5, False, False)
    x0 = x_star if start == "solution" else None
    f_star = problem.objective(x_star)
    results = {}
    for screening in (False, True):
        results[screening] = bcd.solve(problem, x0=x0, tol=0.0, max_iter=20000,
                                       max_time=0.5, screening=screening)
    for screening, r in results.items():
        assert r.options["working_set"] is True
        # max_iter, or stalled where the working set's measure is exactly 0
        assert r.status in ("max_iter", "stalled"), (screening, r.status, r.n_iter)
        assert r.optimality <= 1e-12 * f_star
        assert r.objective == pytest.approx(f_star, rel=1e-12), screening
        np.testing.assert_array_equal(r.x != 0, x_star != 0)


def test_safe_zeros_without_a_gap():
    # a ridge term or a box: no duality gap, no screening
    A, b = random_problem(40, 30, density=0.4, seed=2)
    for problem in (bcd.LeastSquares(A, b, l2=1.0, penalty=bcd.L1(1.0)),
                    bcd.LeastSquares(A, b, penalty=bcd.NonNegative()),
                    bcd.LeastSquares(A, b, penalty=bcd.L1(np.r_[0.0, np.ones(29)]))):
        parts = bcd.core.assemble(problem, "cyclic", "fixed", "gradient", 1)
        _, _, gradient = parts.state.kkt_scores()
        assert problem.safe_zeros(parts.state, gradient) == (None, None)
        result = bcd.solve(problem, tol=1e-9)
        assert result.converged and result.options["working_set"] is True
        assert result.objective == pytest.approx(penalized_reference(problem), rel=1e-9)


# ------------------------------------------------------- support monitoring

@pytest.mark.parametrize("screening", [False, True])
@pytest.mark.parametrize("start", ["larger_lambda", "smaller_lambda", "zero"])
def test_support_iteration_on_working_sets(start, screening):
    # iteration numbers run on across the inner solves: the first iteration
    # at which the iterate has the target signs, as a callback sees it
    problem = _screening_problem(0.12)
    target = np.sign(_exact(0.12)).astype(int)
    x0 = {"larger_lambda": _exact(0.3), "smaller_lambda": _exact(0.04), "zero": None}[start]
    seen = []
    result = bcd.solve(problem, x0=x0, target_support=target, screening=screening, tol=1e-9,
                       callback=lambda info: seen.append(
                           (info.iteration, np.array_equal(np.sign(info.x), target))))
    assert result.converged and result.options["working_set"] is True
    first = next(it for it, ok in seen if ok)
    assert result.support_iteration is not None
    if screening:
        # screening may zero coordinates between two iterations
        assert result.support_iteration <= first
    else:
        assert result.support_iteration == first
    assert result.support_iteration <= result.n_iter


# ---------------------------------------------------------- reproducibility

@pytest.mark.parametrize("config", [
    dict(),
    dict(rule="cyclic", blocks="variable", block_size=5, working_set=True, extrapolation=5),
    dict(rule="random", blocks="variable", block_size=5, working_set=True),
    dict(rule="random", blocks="fixed", block_size=5, partition="random", working_set=True),
    dict(rule="lipschitz", blocks="fixed", block_size=3, update="newton", working_set=True),
], ids=["auto", "cyclic-variable", "random-variable", "random-partition", "lipschitz"])
def test_same_seed_same_iterates(config):
    problem = _screening_problem(0.1)

    def run(seed):
        seen = []
        r = bcd.solve(problem, tol=1e-8, max_iter=10**6, random_state=seed,
                      callback=lambda info: seen.append(info.objective), callback_every=50,
                      **config)
        assert r.converged
        return r, seen

    (r1, s1), (r2, s2) = run(7), run(7)
    np.testing.assert_array_equal(r1.x, r2.x)
    assert r1.n_iter == r2.n_iter and s1 == s2
    np.testing.assert_array_equal(r1.history.objective, r2.history.objective)
    (r3, _), (r4, _) = run(np.random.RandomState(11)), run(np.random.RandomState(11))
    np.testing.assert_array_equal(r3.x, r4.x)


# ------------------------------------------------- callback and max_time

def test_callback_stops_a_working_set_solve():
    problem = _screening_problem(0.05)
    seen = []

    def callback(info):
        seen.append(info.iteration)
        assert info.objective == pytest.approx(problem.objective(info.x), rel=1e-10)
        return len(seen) >= 3

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = bcd.solve(problem, callback=callback, tol=1e-10)
    assert result.options["working_set"] is True
    assert result.status == "callback" and not result.converged
    assert "callback" in result.message
    assert len(seen) == 3 and result.n_iter == seen[-1]
    assert not [w for w in caught if issubclass(w.category, bcd.ConvergenceWarning)]
    # the reported values describe the returned point
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)


def test_callback_every_on_working_sets():
    # "called every callback_every iterations", as without working sets
    problem = _screening_problem(0.1)
    seen = {}
    for working_set in (False, True):
        its = []
        bcd.solve(problem, rule="cyclic", blocks="fixed", block_size=1,
                  working_set=working_set, extrapolation=5, tol=1e-8,
                  callback=lambda info: its.append(info.iteration), callback_every=7)
        seen[working_set] = np.array(its)
    for its in seen.values():
        assert its.size > 10
        np.testing.assert_array_equal(its, 7 * np.arange(1, its.size + 1))


def test_max_time_stops_a_working_set_solve():
    A, b = random_problem(300, 3000, density=0.05, seed=3, sparse=True)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(0.01 * _lam_max(A, b)))
    with pytest.warns(bcd.ConvergenceWarning, match="max_time"):
        result = bcd.solve(problem, tol=1e-12, max_time=1e-6)
    assert result.options["working_set"] is True
    assert result.status == "max_time" and not result.converged
    assert np.isfinite(result.objective)
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)


def test_max_iter_stops_a_working_set_solve():
    problem = _screening_problem(0.05)
    with pytest.warns(bcd.ConvergenceWarning, match="max_iter"):
        result = bcd.solve(problem, tol=1e-12, max_iter=50)
    assert result.status == "max_iter" and not result.converged
    assert result.n_iter == 50
    assert result.history.iteration[-1] == result.n_iter
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)
