"""Separable penalties: L1 (and non-negative L1), non-negativity and boxes,
the proximal gradient, two-metric projection and homotopy updates, the -q
forms of the greedy rules, the duality gap and the identification of the
support."""
import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

import bcd

from _data import assemble_parts, random_problem

TOL = 1e-9


def lasso_data(m=80, n=40, seed=0, sparse=False):
    A, b = random_problem(m, n, density=0.4, seed=seed, sparse=sparse)
    return A, b


def lam_max(A, b):
    return float(np.max(np.abs(A.T @ b)))


def sklearn_lasso(A, b, lam, positive=False):
    from sklearn.linear_model import Lasso
    m = A.shape[0]
    model = Lasso(alpha=lam / m, fit_intercept=False, tol=1e-15, max_iter=200000,
                  positive=positive)
    model.fit(A, b)
    return model.coef_


# ---------------------------------------------------------------- the penalties

def test_prox_value_and_optimality_match_their_definitions():
    rs = np.random.RandomState(0)
    z = rs.randn(50) * 3
    lam = rs.uniform(0.0, 2.0, 50)
    step = 0.7
    np.testing.assert_allclose(bcd.L1(lam).prox(z, step),
                               np.sign(z) * np.maximum(np.abs(z) - step * lam, 0.0))
    np.testing.assert_allclose(bcd.L1(lam, positive=True).prox(z, step),
                               np.maximum(z - step * lam, 0.0))
    lo, up = -rs.rand(50), rs.rand(50)
    lo[:5] = -np.inf
    up[5:10] = np.inf
    np.testing.assert_allclose(bcd.Box(lo, up).prox(z, step), np.clip(z, lo, up))
    np.testing.assert_allclose(bcd.NonNegative().prox(z), np.maximum(z, 0.0))
    x = bcd.L1(lam).prox(z, step)
    assert bcd.L1(lam).value(x) == pytest.approx(float(lam @ np.abs(x)))
    assert bcd.NonNegative().value(-np.ones(3)) == np.inf
    assert bcd.NonNegative().value(np.ones(3)) == 0.0
    # optimality: y = prox(z) means z - y is in the subdifferential at y, so
    # the measure vanishes at x = y for the gradient y - z, and only there
    for pen in (bcd.L1(lam), bcd.L1(lam, positive=True), bcd.Box(lo, up)):
        y = pen.prox(z, 1.0)
        assert pen.optimality(y, y - z) == pytest.approx(0.0, abs=1e-12)
        assert pen.optimality(y, y - z + 1e-3) > 0 or pen.optimality(y, y - z - 1e-3) > 0


@pytest.mark.parametrize("make, match", [
    (lambda: bcd.L1(-1.0), "lam"),
    (lambda: bcd.L1(np.nan), "lam"),
    (lambda: bcd.L1([1.0, np.nan]), "lam"),
    (lambda: bcd.L1(np.inf), "lam"),
    (lambda: bcd.L1("1"), "lam"),
    (lambda: bcd.Box(1.0, 0.0), "lower must be <= upper"),
    (lambda: bcd.Box([0.0, 2.0], [1.0, 1.0]), "lower must be <= upper"),
    (lambda: bcd.Box(np.nan, 1.0), "lower"),
    (lambda: bcd.Box(0.0, [1.0, np.nan]), "upper"),
    (lambda: bcd.Box(np.inf, np.inf), "empty"),
    (lambda: bcd.Box([0.0, 0.0], [1.0, 1.0, 1.0]), "lengths"),
])
def test_invalid_penalties_are_rejected(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_penalty_length_and_type_are_checked():
    A, b = lasso_data()
    with pytest.raises(ValueError, match="lam has length 3, expected 40"):
        bcd.LeastSquares(A, b, penalty=bcd.L1([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="lower has length 2, expected 40"):
        bcd.LeastSquares(A, b, penalty=bcd.Box([0.0, 0.0], 1.0))
    with pytest.raises(TypeError, match="penalty must be a bcd penalty"):
        bcd.LeastSquares(A, b, penalty="l1")


def test_unsupported_combinations_say_what_works():
    A, b = lasso_data()
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(1.0))
    works = "'gradient', 'newton', 'two_metric', 'homotopy'"
    for update in ("matrix", "linesearch", "exact"):
        with pytest.raises(ValueError, match=f"does not handle a penalty.*{works}"):
            bcd.solve(problem, update=update)
    with pytest.raises(ValueError, match="with lipschitz='estimate' does not handle a penalty"):
        bcd.solve(problem, lipschitz="estimate")
    with pytest.raises(ValueError, match="rule 'gsq' does not handle a penalty.*'gsd'"):
        bcd.solve(problem, rule="gsq")
    W = bcd.datasets.make_lattice_graph(4, 4)
    labels = np.full(16, np.nan)
    labels[0] = 1.0
    lp = bcd.LabelPropagation(W, labels, penalty=bcd.NonNegative())
    with pytest.raises(ValueError, match="does not handle a penalty"):
        bcd.solve(lp, rule="gs", blocks="tree", update="newton")


# ----------------------------------------------------------- against references

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("rule, blocks", [("gsd", "variable"), ("gs", "fixed"),
                                          ("cyclic", "fixed"), ("gsl", "variable")])
def test_lasso_matches_scikit_learn(sparse, positive, rule, blocks):
    A, b = lasso_data(sparse=sparse)
    lam = 0.1 * lam_max(A, b)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam, positive=positive))
    result = bcd.solve(problem, rule=rule, blocks=blocks, block_size=4, max_iter=200000,
                       tol=TOL, random_state=0)
    ref = sklearn_lasso(A.toarray() if sparse else A, b, lam, positive)
    assert result.converged and result.optimality <= TOL
    assert result.objective == pytest.approx(problem.objective(ref), rel=1e-10)
    np.testing.assert_allclose(result.x, ref, atol=1e-6)
    # the duality gap certifies the objective
    assert 0 <= result.duality_gap <= 1e-6 * result.objective
    # optimality is the KKT residual computed from its definition
    kkt = problem.penalty.optimality(result.x, problem.gradient(result.x))
    assert kkt <= TOL
    if positive:
        assert np.all(result.x >= 0)


def test_lasso_on_diabetes():
    from sklearn.datasets import load_diabetes
    A, b = load_diabetes(return_X_y=True)
    lam = 0.05 * lam_max(A, b)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam))
    result = bcd.solve(problem, rule="gsd", block_size=3, max_iter=100000, tol=1e-6)
    ref = sklearn_lasso(A, b, lam)
    assert result.converged
    assert result.objective == pytest.approx(problem.objective(ref), rel=1e-10)
    np.testing.assert_allclose(result.x, ref, rtol=1e-5, atol=1e-4)
    assert 0 < np.count_nonzero(result.x) < A.shape[1]


def test_weighted_l1_matches_a_rescaled_lasso():
    # sum_i w_i |x_i| with x = D z is the plain Lasso in z for the matrix A D^{-1}
    A, b = lasso_data(seed=3)
    w = np.random.RandomState(3).uniform(0.5, 2.0, A.shape[1])
    lam = 0.1 * lam_max(A, b)
    result = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(lam * w)), rule="gsd",
                       max_iter=100000, tol=TOL)
    z = bcd.solve(bcd.LeastSquares(A / w, b, penalty=bcd.L1(lam)), rule="gsd",
                  max_iter=100000, tol=TOL).x
    np.testing.assert_allclose(result.x, z / w, atol=1e-7)


@pytest.mark.parametrize("sparse", [False, True])
def test_nonnegative_least_squares_matches_scipy_nnls(sparse):
    A, b = lasso_data(m=60, n=30, seed=1, sparse=sparse)
    problem = bcd.LeastSquares(A, b, penalty=bcd.NonNegative())
    result = bcd.solve(problem, rule="gsd", block_size=5, max_iter=100000, tol=TOL)
    ref, _ = scipy.optimize.nnls(A.toarray() if sparse else A, b)
    assert result.converged
    np.testing.assert_allclose(result.x, ref, atol=1e-8)
    assert 0 < np.count_nonzero(result.x) < A.shape[1]     # some bounds are active


def test_box_least_squares_matches_scipy_lsq_linear():
    A, b = lasso_data(m=60, n=30, seed=2)
    rs = np.random.RandomState(2)
    lo, up = -rs.uniform(0.0, 0.3, 30), rs.uniform(0.0, 0.3, 30)
    lo[:5] = -np.inf                          # one-sided and free coordinates
    up[3:8] = np.inf
    problem = bcd.LeastSquares(A, b, penalty=bcd.Box(lo, up))
    result = bcd.solve(problem, rule="gs", blocks="fixed", block_size=3, max_iter=100000,
                       tol=TOL)
    ref = scipy.optimize.lsq_linear(A, b, bounds=(lo, up), tol=1e-15,
                                    lsmr_tol="auto", max_iter=10000).x
    assert result.converged
    np.testing.assert_allclose(result.x, ref, atol=1e-7)
    assert np.all(result.x >= lo) and np.all(result.x <= up)


@pytest.mark.filterwarnings("ignore:.*penalty.*:FutureWarning", "ignore:.*penalty.*:UserWarning")
def test_l1_logistic_matches_liblinear():
    from sklearn.linear_model import LogisticRegression
    A, _ = lasso_data(m=120, n=25, seed=4)
    y = np.sign(A @ np.random.RandomState(4).randn(25) + 0.5 * np.random.RandomState(5).randn(120))
    lam = 2.0
    problem = bcd.Logistic(A, y, penalty=bcd.L1(lam))
    result = bcd.solve(problem, rule="gsd", block_size=3, max_iter=200000, tol=1e-8)
    model = LogisticRegression(penalty="l1", C=1.0 / lam, solver="liblinear",
                               fit_intercept=False, tol=1e-12, max_iter=100000).fit(A, y)
    ref = model.coef_.ravel()
    assert result.converged
    # ours is certified optimal; liblinear's solution can only be as good
    assert result.objective <= problem.objective(ref) + 1e-9 * abs(result.objective)
    assert result.objective == pytest.approx(problem.objective(ref), rel=1e-6)
    np.testing.assert_allclose(result.x, ref, atol=1e-3)


def test_l1_multinomial_reaches_a_kkt_point():
    rs = np.random.RandomState(6)
    A = rs.randn(90, 8)
    y = np.argmax(A @ rs.randn(8, 3) + rs.randn(90, 3), axis=1)
    problem = bcd.Multinomial(A, y, penalty=bcd.L1(3.0))
    result = bcd.solve(problem, rule="gsd", block_size=4, max_iter=200000, tol=1e-8)
    assert result.converged
    assert problem.penalty.optimality(result.x, problem.gradient(result.x)) <= 1e-8
    assert 0 < np.count_nonzero(result.x) < problem.n_coordinates
    # the objective is f + g, and no coordinate perturbation improves it
    for i in range(0, problem.n_coordinates, 5):
        for h in (1e-4, -1e-4):
            x = result.x.copy()
            x[i] += h
            assert problem.objective(x) >= result.objective - 1e-12


def test_nonnegative_quadratic_matches_bounded_lbfgs():
    rs = np.random.RandomState(7)
    M = rs.randn(40, 30)
    Q = M.T @ M + np.eye(30)
    c = rs.randn(30) * 5
    problem = bcd.Quadratic(sp.csr_matrix(Q), c, penalty=bcd.NonNegative())
    result = bcd.solve(problem, rule="gsd", block_size=3, max_iter=100000, tol=1e-10)
    ref = scipy.optimize.minimize(lambda x: 0.5 * x @ Q @ x - c @ x, np.zeros(30),
                                  jac=lambda x: Q @ x - c, method="L-BFGS-B",
                                  bounds=[(0, None)] * 30,
                                  options=dict(gtol=1e-13, ftol=1e-16, maxiter=10000)).x
    assert result.converged
    np.testing.assert_allclose(result.x, ref, atol=1e-6)


# -------------------------------------------------------------- the duality gap

def test_duality_gap_from_the_certified_state_equals_a_recomputation():
    A = sp.random(50, 120, density=0.2, random_state=5, format="csc")
    b = np.random.default_rng(5).standard_normal(50)
    lam = 0.2 * np.max(np.abs(A.T @ b))
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam))
    r = bcd.solve(problem, rule="gs", blocks="variable", block_size=10, tol=1e-10,
                  max_iter=10**5)
    assert r.converged
    assert r.duality_gap == pytest.approx(problem.duality_gap(r.x), rel=1e-9, abs=1e-12)
    # stopped early, the gap is recomputed from x
    with pytest.warns(bcd.ConvergenceWarning):
        early = bcd.solve(problem, rule="gs", blocks="variable", block_size=10, max_iter=1,
                          tol=0.0, check_every=1)
    assert early.duality_gap == pytest.approx(problem.duality_gap(early.x), rel=1e-12)
    assert early.duality_gap > r.duality_gap


# ------------------------------------------------------------------- edge cases

def test_lambda_above_lambda_max_converges_at_zero_immediately():
    A, b = lasso_data()
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(1.01 * lam_max(A, b)))
    result = bcd.solve(problem, rule="gs")
    assert result.converged and result.n_iter == 0
    assert np.all(result.x == 0)
    assert result.optimality == 0.0
    assert result.duality_gap == pytest.approx(0.0, abs=1e-9)


def test_zero_lambda_equals_the_smooth_problem():
    A, b = lasso_data()
    for rule in ("gs", "gsd", "cyclic"):
        plain = bcd.solve(bcd.LeastSquares(A, b), rule=rule, max_iter=300, tol=0.0,
                          random_state=0)
        zero = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(0.0)), rule=rule,
                         max_iter=300, tol=0.0, random_state=0)
        np.testing.assert_allclose(zero.x, plain.x, rtol=1e-12, atol=1e-14)
    unbounded = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.Box()), rule="gs", max_iter=300,
                          tol=0.0)
    np.testing.assert_allclose(unbounded.x, plain.x if rule == "gs" else
                               bcd.solve(bcd.LeastSquares(A, b), rule="gs", max_iter=300,
                                         tol=0.0).x, rtol=1e-12, atol=1e-14)


def test_infeasible_start_is_projected_and_iterates_stay_feasible():
    A, b = lasso_data(seed=8)
    problem = bcd.LeastSquares(A, b, penalty=bcd.Box(0.0, 0.1))
    x0 = np.full(A.shape[1], -1.0)
    seen = []
    result = bcd.solve(problem, rule="random", x0=x0, max_iter=500, tol=0.0, random_state=0,
                       callback=lambda info: seen.append(info.x.copy()), callback_every=50)
    assert np.all(x0 == -1.0)                 # not modified
    for x in seen + [result.x]:
        assert np.all(x >= 0.0) and np.all(x <= 0.1)
    assert np.isfinite(result.objective)


# ----------------------------------------------------------------- the -q rules

def test_gsq_rules_rank_by_the_proximal_progress():
    # at x = 0 with |g_i| <= lam_i a coordinate cannot move: its GS-q score is
    # zero however large |g_i| is, so the rule picks a coordinate that can
    A, b = lasso_data(seed=9)
    g0 = -(A.T @ b)
    lam = np.full(A.shape[1], 0.5 * np.abs(g0).max())
    big = int(np.argmax(np.abs(g0)))
    lam[big] = 10 * abs(g0[big])             # the largest gradient entry is held at 0
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam))
    kernel, _, selector, _ = assemble_parts(problem, "gs", "variable", 1, "gradient", "sort",
                                            np.random.RandomState(0))
    picked = selector.draw(kernel, 1)[0]
    assert picked[0] != big
    # GS-q with L = 1: the largest |soft-threshold(g_i, lam_i)|
    shrunk = np.maximum(np.abs(g0) - lam, 0.0)
    assert picked[0] == int(np.argmax(shrunk))


def test_greedy_q_rules_beat_random_selection():
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=100, n_features=400)
    lam = 0.3 * lam_max(A, b)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam, positive=True))
    gaps = {}
    ref = bcd.solve(problem, rule="gsd", block_size=5, max_iter=200000, tol=1e-9).objective
    for rule in ("gs", "gsd", "random"):
        gaps[rule] = bcd.solve(problem, rule=rule, block_size=5, max_iter=300, tol=0.0,
                               random_state=0).objective - ref
    assert gaps["gsd"] < 0.5 * gaps["random"], gaps
    assert gaps["gs"] < gaps["random"], gaps


# ------------------------------------------------------------------ active sets

def _figure7_problem():
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=100, n_features=400)
    return bcd.LeastSquares(A, b, penalty=bcd.L1(0.3 * lam_max(A, b), positive=True))


def test_active_set_iteration_and_target_support():
    problem = _figure7_problem()
    ref = bcd.solve(problem, rule="gsd", block_size=5, max_iter=100000, tol=1e-10)
    support = ref.x != 0
    assert ref.converged and 0 < support.sum() < support.size
    seen = []
    result = bcd.solve(problem, rule="random", block_size=5, max_iter=100000, tol=1e-10,
                       random_state=0, target_support=support, check_every=1,
                       callback=lambda info: seen.append((info.iteration, info.x != 0)))
    assert result.converged
    # recorded from the iterates themselves
    first = next(it for it, s in seen if np.array_equal(s, support))
    last_change = max(it for (it, s), (_, prev) in zip(seen[1:], seen[:-1])
                      if not np.array_equal(s, prev))
    assert result.support_iteration == first
    assert result.active_set_iteration >= last_change
    assert np.array_equal(result.x != 0, support)
    # signed faces: the same support with the signs of the solution
    signed = bcd.solve(problem, rule="random", block_size=5, max_iter=100000, tol=1e-10,
                       random_state=0, target_support=np.sign(ref.x).astype(int))
    assert signed.support_iteration == result.support_iteration
    # the greedy rule identifies the support much sooner than random selection
    greedy = bcd.solve(problem, rule="gsd", block_size=5, max_iter=100000, tol=1e-10,
                       target_support=support)
    assert greedy.support_iteration < 0.5 * result.support_iteration
    assert bcd.solve(bcd.LeastSquares(problem.A, problem.b), max_iter=5,
                     tol=0.0).active_set_iteration is None


def test_target_support_is_checked():
    problem = _figure7_problem()
    n = problem.n_coordinates
    with pytest.raises(ValueError, match="target_support must have shape"):
        bcd.solve(problem, target_support=np.ones(3, bool))
    with pytest.raises(ValueError, match="target_support must be boolean"):
        bcd.solve(problem, target_support=np.full(n, 2))
    with pytest.raises(ValueError, match="needs a penalized problem"):
        bcd.solve(bcd.LeastSquares(problem.A, problem.b), target_support=np.ones(n, bool))


# ------------------------------------------------------------- Figures 7 and 13

@pytest.fixture(scope="module")
def figure7_small():
    from experiments.paper_figures import SMALL, paper_experiment
    return paper_experiment("A+L1", **SMALL["A+L1"])


def _iterations_to(problem, tol, **options):
    result = bcd.solve(problem, max_iter=20000, tol=tol, random_state=0, **options)
    assert result.converged, options
    return result.n_iter


def test_newton_type_updates_beat_proximal_gradient(figure7_small):
    problem = figure7_small.problem
    tol = 1e-9 * float(np.max(problem.lipschitz))
    for blocks, tau in (("variable", 5), ("variable", 50), ("fixed", 50)):
        its = {u: _iterations_to(problem, tol, rule="gsd", blocks=blocks, block_size=tau,
                                 update=u) for u in ("gradient", "newton", "two_metric")}
        # two-metric projection is within a small factor of proximal Newton ...
        assert its["two_metric"] <= 2 * its["newton"] + 2, (blocks, tau, its)
        assert its["newton"] <= 2 * its["two_metric"] + 2, (blocks, tau, its)
        # ... and both beat proximal gradient
        assert its["newton"] < its["gradient"] and its["two_metric"] < its["gradient"], its


@pytest.mark.parametrize("update", ["newton", "two_metric", "homotopy"])
def test_greedy_blocks_larger_than_the_support_terminate(figure7_small, update):
    problem = figure7_small.problem
    size = int(figure7_small.support.sum())
    result = bcd.solve(problem, rule="gsd", blocks="variable", block_size=size + 10,
                       update=update, max_iter=100, tol=1e-12 * float(np.max(problem.lipschitz)),
                       target_support=figure7_small.support)
    assert result.converged and result.n_iter <= 10, result
    assert result.support_iteration is not None and result.support_iteration <= result.n_iter
    assert result.objective <= figure7_small.f_star + 1e-12 * abs(figure7_small.f_star)


def test_random_selection_needs_many_more_iterations(figure7_small):
    problem = figure7_small.problem
    tol = 1e-6 * float(np.max(problem.lipschitz))
    for update in ("gradient", "two_metric"):
        greedy = _iterations_to(problem, tol, rule="gsd", block_size=5, update=update)
        random = _iterations_to(problem, tol, rule="random", block_size=5, update=update)
        assert random > 10 * greedy, (update, greedy, random)


@pytest.mark.parametrize("positive", [False, True])
def test_homotopy_is_the_exact_block_minimizer(positive):
    A, b = lasso_data(seed=10)
    lam = 0.05 * lam_max(A, b) * np.r_[0.0, np.ones(A.shape[1] - 1)]   # one unpenalized
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam, positive=positive))
    # one block holding every coordinate: one step solves the problem
    result = bcd.solve(problem, rule="cyclic", blocks="fixed", block_size=A.shape[1],
                       update="homotopy", max_iter=1, tol=1e-9)
    assert result.converged and result.n_iter == 1
    ref = bcd.solve(problem, rule="gsd", block_size=5, max_iter=100000, tol=1e-10)
    np.testing.assert_allclose(result.x, ref.x, atol=1e-8)
    # on smaller blocks every step is the block's exact minimizer, as the
    # proximal Newton step with its exact block solve
    a = bcd.solve(problem, rule="gsd", block_size=4, update="homotopy", max_iter=30, tol=0.0)
    n = bcd.solve(problem, rule="gsd", block_size=4, update="newton", max_iter=30, tol=0.0)
    np.testing.assert_allclose(a.x, n.x, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_homotopy_solves_bound_constrained_blocks_exactly(seed):
    A, b = lasso_data(m=60, n=30, seed=seed)
    rs = np.random.RandomState(seed)
    lo, up = -rs.uniform(0.0, 0.3, 30), rs.uniform(0.0, 0.3, 30)
    lo[:5] = -np.inf
    up[3:8] = np.inf
    for pen, ref in ((bcd.NonNegative(), scipy.optimize.nnls(A, b)[0]),
                     (bcd.Box(lo, up), scipy.optimize.lsq_linear(A, b, bounds=(lo, up),
                                                                 tol=1e-15).x)):
        problem = bcd.LeastSquares(A, b, penalty=pen)
        # x0 = 0 sits on every bound of NonNegative: a degenerate start
        one = bcd.solve(problem, rule="cyclic", blocks="fixed", block_size=30,
                        update="homotopy", max_iter=1, tol=1e-9)
        assert one.converged and one.n_iter == 1, (pen, one)
        np.testing.assert_allclose(one.x, ref, atol=1e-7)
        small = bcd.solve(problem, rule="gsd", block_size=4, update="homotopy",
                          max_iter=20000, tol=1e-9)
        assert small.converged
        np.testing.assert_allclose(small.x, ref, atol=1e-7)


def test_homotopy_needs_a_quadratic():
    A, b = lasso_data()
    y = np.sign(b)
    with pytest.raises(ValueError, match="homotopy"):
        bcd.solve(bcd.Logistic(A, y, penalty=bcd.L1(1.0)), update="homotopy")
