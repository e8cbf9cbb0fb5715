"""Greedy rules GSL/GSD/GSQ, the matrix, Newton, line-search and exact
updates, Lipschitz estimation and the multinomial problem."""
import itertools

import numpy as np
import pytest

import bcd
from bcd._solve import _assemble
from bcd.core import _engine

from _data import lbfgs_reference, random_problem

UPDATES = ["gradient", "linesearch", "matrix", "newton"]
GREEDY = ["gs", "gsl", "gsd", "gsq"]


def multinomial_data(m=80, d=12, k=4, seed=1, sparse=True):
    A, _ = random_problem(m, d, density=0.5, seed=seed, sparse=sparse)
    rs = np.random.RandomState(seed)
    y = np.argmax(A @ rs.randn(d, k) + rs.randn(m, k), axis=1)
    return A, y


def small(name, seed=1):
    if name == "C":
        A, t = bcd.datasets.make_paper_dataset("C", random_state=seed, n_samples=200,
                                               n_features=200, n_classes=10)
        return bcd.Multinomial(A, t)
    A, t = bcd.datasets.make_paper_dataset(name, random_state=seed, n_samples=200,
                                           n_features=2000)
    return bcd.LeastSquares(A, t) if name == "A" else bcd.Logistic(A, t)


def final(problem, max_iter=300, **options):
    return bcd.solve(problem, max_iter=max_iter, tol=0.0, random_state=0, **options).objective


# ---------------------------------------------------------- multinomial

@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_matches_lbfgs(sparse):
    A, y = multinomial_data(sparse=sparse)
    problem = bcd.Multinomial(A, y, l2=0.5)
    x_ref, f_ref = lbfgs_reference(problem)
    r = bcd.solve(problem, rule="gsd", blocks="variable", block_size=6, update="newton",
                  tol=1e-8, max_iter=100000)
    assert r.converged and r.optimality <= 1e-8
    assert r.objective == pytest.approx(f_ref, rel=1e-8)
    assert np.max(np.abs(problem.gradient(r.x))) <= 1e-8
    np.testing.assert_allclose(r.x, x_ref, rtol=1e-5, atol=1e-6)


def test_multinomial_matches_scikit_learn_objective():
    linear_model = pytest.importorskip("sklearn.linear_model")
    A, y = multinomial_data(m=120, d=10, k=3, seed=4, sparse=False)
    l2 = 2.0
    problem = bcd.Multinomial(A, y, l2=l2)
    r = bcd.solve(problem, rule="gsd", update="newton", block_size=5, tol=1e-9, max_iter=100000)
    # scikit-learn minimizes C * sum(loss) + ||W||^2 / 2 with the same
    # symmetric parametrization, so C = 1 / l2 gives the same minimizer
    clf = linear_model.LogisticRegression(C=1.0 / l2, fit_intercept=False, tol=1e-12,
                                          max_iter=100000).fit(A, y)
    f_sklearn = problem.objective(clf.coef_.T)
    assert r.converged
    assert r.objective <= f_sklearn + 1e-9 * abs(f_sklearn)
    assert r.objective == pytest.approx(f_sklearn, rel=1e-7)
    np.testing.assert_allclose(problem.coef(r.x), clf.coef_.T, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rule,blocks,update", list(itertools.product(
    ["cyclic", "random", "lipschitz"] + GREEDY, ["fixed", "variable"], UPDATES)))
def test_multinomial_every_rule_and_update(rule, blocks, update):
    A, y = multinomial_data(m=50, d=8, k=3, seed=2)
    problem = bcd.Multinomial(A, y, l2=1.0)
    f_ref = lbfgs_reference(problem)[1]
    r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=4, update=update, tol=1e-7,
                  max_iter=300000, random_state=0)
    assert r.converged, r.message
    assert r.objective == pytest.approx(f_ref, rel=1e-9)


def test_multinomial_labels_with_gaps_are_remapped():
    A, y = multinomial_data(m=60, d=6, k=3, seed=3)
    p_dense = bcd.Multinomial(A, y, l2=1.0)
    p_gaps = bcd.Multinomial(A, 10 * y + 7, l2=1.0)
    np.testing.assert_array_equal(p_gaps.classes, [7, 17, 27])
    r1 = bcd.solve(p_dense, tol=1e-9, max_iter=100000)
    r2 = bcd.solve(p_gaps, tol=1e-9, max_iter=100000)
    np.testing.assert_allclose(r1.x, r2.x, rtol=1e-9, atol=1e-12)


def test_multinomial_kernel_oracles():
    A, y = multinomial_data(m=40, d=5, k=3, seed=5)
    problem = bcd.Multinomial(A, y, l2=0.3)
    rs = np.random.RandomState(0)
    x = 0.3 * rs.randn(problem.n_coordinates)
    kernel = problem._make_kernel(True, 6)
    kernel.set_x(x)
    assert kernel.get_objective() == pytest.approx(problem.objective(x), rel=1e-13)
    np.testing.assert_allclose(kernel.get_gradient(), problem.gradient(x), atol=1e-12)
    block = [0, 1, 4, 7, 13]
    H = kernel.get_block_matrix(block, exact=True)
    H_fd = np.empty((5, 5))
    for a, i in enumerate(block):
        e = np.zeros_like(x)
        e[i] = 1e-6
        H_fd[:, a] = (problem.gradient(x + e)[block] - problem.gradient(x - e)[block]) / 2e-6
    np.testing.assert_allclose(H, H_fd, atol=1e-7)
    # Boehning's bound with k' dominates the Hessian
    Hb = kernel.get_block_matrix(block)
    assert np.linalg.eigvalsh(Hb - H).min() >= -1e-12
    # a single coordinate: k' = 2 gives L = ||a_j||^2 / 4 + l2
    dense = A.toarray()
    assert kernel.get_block_matrix([4])[0, 0] == pytest.approx(
        0.25 * dense[:, 1] @ dense[:, 1] + 0.3)


# ------------------------------------------------------------ updates

@pytest.mark.parametrize("update", ["matrix", "newton", "exact"])
@pytest.mark.parametrize("blocks", ["fixed", "variable"])
def test_matrix_newton_exact_solve_a_quadratic_in_one_step(update, blocks):
    A, b = random_problem(40, 8, density=0.6, seed=21, sparse=False)
    problem = bcd.LeastSquares(A, b, l2=0.1)
    r = bcd.solve(problem, rule="gs", blocks=blocks, block_size=8, update=update, max_iter=1,
                  tol=1e-9)
    x_ref = np.linalg.solve(A.T @ A + 0.1 * np.eye(8), A.T @ b)
    np.testing.assert_allclose(r.x, x_ref, rtol=1e-10, atol=1e-12)
    assert r.converged and r.n_iter == 1


@pytest.mark.parametrize("update", ["matrix", "exact", "newton"])
def test_block_step_minimizes_over_the_block(update):
    A, b = random_problem(40, 20, density=0.5, seed=22)
    problem = bcd.LeastSquares(A, b)
    r = bcd.solve(problem, rule="cyclic", blocks="fixed", partition="order", block_size=5,
                  update=update, max_iter=1, tol=0.0)
    g = problem.gradient(r.x)
    first_block = np.arange(5)
    assert np.max(np.abs(g[first_block])) < 1e-10
    assert np.max(np.abs(g[5:])) > 1e-3


def test_exact_update_rejects_non_quadratic_problems():
    A, y = multinomial_data(m=30, d=5, k=3)
    for problem in (bcd.Logistic(A, np.where(y > 0, 1, -1)), bcd.Multinomial(A, y)):
        with pytest.raises(ValueError, match="quadratic"):
            bcd.solve(problem, update="exact")


def test_singular_block_hessians_are_handled():
    # duplicated columns make every block Gram matrix singular
    A, b = random_problem(30, 6, density=0.7, seed=23, sparse=False)
    A = np.hstack([A, A])
    problem = bcd.LeastSquares(A, b)
    x_ls = np.linalg.lstsq(A, b, rcond=None)[0]
    for update in ("matrix", "newton", "exact"):
        r = bcd.solve(problem, rule="gs", block_size=4, update=update, tol=1e-8,
                      max_iter=100000)
        assert r.converged and np.all(np.isfinite(r.x))
        assert r.objective == pytest.approx(problem.objective(x_ls), rel=1e-10)


def _traced_run(problem, max_iter, **options):
    rng = np.random.RandomState(0)
    kernel, units, selector, step = _assemble(problem, options.pop("rule"), options.pop("blocks"),
                                              options.pop("block_size"), options.pop("update"),
                                              "sort", rng, None, options)
    step.enable_trace(max_iter)
    _engine.run(kernel, selector, step, max_iter, 0.0, 0.0, 10**9, None, 1,
                max(units.max_size, 50), False)
    return step.trace()


@pytest.mark.parametrize("update", ["linesearch", "newton"])
@pytest.mark.parametrize("kind", ["logistic", "multinomial"])
def test_every_accepted_line_search_step_satisfies_armijo(update, kind):
    if kind == "logistic":
        A, y = multinomial_data(m=60, d=40, k=2, seed=6)
        problem = bcd.Logistic(A, np.where(y > 0, 1, -1))
    else:
        A, y = multinomial_data(m=60, d=15, k=4, seed=6)
        problem = bcd.Multinomial(A, y)
    alpha, delta, slope = _traced_run(problem, 300, rule="gsd", blocks="variable", block_size=5,
                                      update=update)
    assert len(alpha) == 300
    assert np.all(slope < 0)
    assert np.all(delta <= 1e-10 * slope)
    # the unit step is usually accepted, and backtracking does happen
    assert np.mean(alpha == 1.0) > 0.5


def test_lipschitz_estimates_satisfy_the_progress_bound():
    problem = small("B")
    alpha, delta, slope = _traced_run(problem, 200, rule="gs", blocks="fixed", block_size=50,
                                      update="gradient", lipschitz="estimate")
    # recorded slope is -||g||^2 / L: each step decreased f by at least half of it
    assert np.all(delta <= 0.5 * slope)
    # estimates double from 1, so every accepted step is 1 / 2^j
    assert np.allclose(np.log2(1.0 / alpha), np.round(np.log2(1.0 / alpha)))


# --------------------------------------------------------------- rules

def test_gsq_equals_gsl_when_block_matrices_are_multiples_of_identity():
    # orthogonal columns with equal norms inside each block: H_b = L_b I
    rs = np.random.RandomState(7)
    Q, _ = np.linalg.qr(rs.randn(40, 12))
    scales = np.repeat([1.0, 3.0, 0.5, 2.0], 3)
    A = Q * scales
    problem = bcd.LeastSquares(A, rs.randn(40))
    runs = [bcd.solve(problem, rule=rule, blocks="fixed", partition="order", block_size=3,
                      max_iter=40, tol=0.0, check_every=1) for rule in ("gsq", "gsl")]
    np.testing.assert_array_equal(runs[0].history.objective, runs[1].history.objective)
    # and they differ from plain GS on these unequal scales
    gs = bcd.solve(problem, rule="gs", blocks="fixed", partition="order", block_size=3,
                   max_iter=40, tol=0.0, check_every=1)
    assert not np.array_equal(gs.history.objective, runs[0].history.objective)


@pytest.mark.parametrize("rule", GREEDY)
def test_greedy_fixed_block_scores(rule):
    A, b = random_problem(40, 30, density=0.4, seed=8)
    problem = bcd.LeastSquares(A, b, l2=0.2)
    kernel, units, selector, _ = _assemble(problem, rule, "fixed", 5, "gradient", "random",
                                           np.random.RandomState(1))
    g = problem.gradient(np.zeros(30))
    L = problem.lipschitz
    scores = []
    for blk in units.blocks():
        H = kernel.get_block_matrix(blk)
        scores.append({"gs": g[blk] @ g[blk],
                       "gsl": g[blk] @ g[blk] / np.linalg.eigvalsh(H)[-1],
                       "gsd": np.sum(g[blk] ** 2 / L[blk]),
                       "gsq": g[blk] @ np.linalg.solve(H, g[blk])}[rule])
    (blk,) = selector.draw(kernel, 1)
    np.testing.assert_array_equal(blk, units.blocks()[int(np.argmax(scores))])


@pytest.mark.parametrize("diagonal", ["lipschitz", "sirt"])
def test_gsd_variable_picks_largest_scaled_entries(diagonal):
    A, b = random_problem(40, 30, density=0.4, seed=9)
    problem = bcd.LeastSquares(A, b, l2=0.2)
    kernel, units, selector, _ = _assemble(problem, "gsd", "variable", 6, "gradient", "sort",
                                           np.random.RandomState(1), None,
                                           dict(gsd_diagonal=diagonal))
    dense = A.toarray()
    D = problem.lipschitz if diagonal == "lipschitz" else \
        np.abs(dense.T @ dense + 0.2 * np.eye(30)).sum(axis=1)
    g = problem.gradient(np.zeros(30))
    (blk,) = selector.draw(kernel, 1)
    np.testing.assert_array_equal(blk, np.sort(np.argsort(-g ** 2 / D, kind="stable")[:6]))


def test_gsd_lipschitz_tau_selects_like_lipschitz():
    A, b = random_problem(40, 30, density=0.4, seed=10)
    problem = bcd.LeastSquares(A, b)
    runs = [bcd.solve(problem, rule="gsd", block_size=4, gsd_diagonal=diag, max_iter=100,
                      tol=0.0).x for diag in ("lipschitz", "lipschitz_tau")]
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize("kind", ["least_squares", "logistic", "multinomial"])
def test_sirt_diagonal_is_row_sums_of_the_bound(kind):
    A, y = multinomial_data(m=30, d=8, k=3, seed=11)
    dense = A.toarray()
    l2 = 0.4
    if kind == "multinomial":
        problem = bcd.Multinomial(A, y, l2=l2)
        M = np.kron(dense.T @ dense, 0.5 * (np.eye(3) - 1.0 / 3)) + l2 * np.eye(24)
    else:
        c = 1.0 if kind == "least_squares" else 0.25
        problem = (bcd.LeastSquares(A, y, l2=l2) if kind == "least_squares"
                   else bcd.Logistic(A, np.where(y > 0, 1, -1), l2=l2))
        M = c * dense.T @ dense + l2 * np.eye(8)
    np.testing.assert_allclose(problem._sirt_diagonal(), np.abs(M).sum(axis=1), rtol=1e-12)
    dense_problem = type(problem)(dense, problem.y if kind != "least_squares" else y, l2=l2)
    np.testing.assert_allclose(dense_problem._sirt_diagonal(), np.abs(M).sum(axis=1),
                               rtol=1e-12)


@pytest.mark.parametrize("method", ["iht", "omp"])
def test_gsq_variable_blocks_never_rate_below_gs_and_gsd(method):
    problem = small("B")
    kernel, units, selector, _ = _assemble(problem, "gsq", "variable", 5, "matrix", "sort",
                                           np.random.RandomState(0), None,
                                           dict(gsq_method=method))
    g = problem.gradient(np.zeros(problem.n_coordinates))

    def bound(blk):
        H = kernel.get_block_matrix(blk)
        return g[blk] @ np.linalg.solve(H, g[blk])

    (blk,) = selector.draw(kernel, 1)
    gs_blk = np.sort(np.argsort(-np.abs(g), kind="stable")[:5])
    gsd_blk = np.sort(np.argsort(-g ** 2 / problem.lipschitz, kind="stable")[:5])
    assert len(np.unique(blk)) == 5
    assert bound(blk) >= max(bound(gs_blk), bound(gsd_blk)) * (1 - 1e-12)


def test_gsq_variable_needs_a_hessian_bound():
    class NoBound(bcd.LeastSquares):
        _has_hessian_bound = False

    A, b = random_problem(20, 10, seed=12)
    with pytest.raises(ValueError, match="Hessian"):
        bcd.solve(NoBound(A, b), rule="gsq", blocks="variable")
    # fixed blocks only need the block matrices
    assert bcd.solve(NoBound(A, b), rule="gsq", blocks="fixed", tol=1e-6,
                     max_iter=100000).converged


@pytest.mark.parametrize("name,value", [("lipschitz", "guess"), ("gsd_diagonal", "L"),
                                        ("gsq_method", "lasso")])
def test_unknown_rule_and_update_options(name, value):
    A, b = random_problem(20, 10, seed=13)
    with pytest.raises(ValueError, match=name):
        bcd.solve(bcd.LeastSquares(A, b), **{name: value})


@pytest.mark.parametrize("rule,blocks,update", list(itertools.product(
    GREEDY, ["fixed", "variable"], UPDATES + ["exact"])))
def test_least_squares_every_greedy_rule_and_update(rule, blocks, update):
    A, b = random_problem(50, 20, density=0.5, seed=14)
    problem = bcd.LeastSquares(A, b, l2=0.1)
    dense = A.toarray()
    x_ref = np.linalg.solve(dense.T @ dense + 0.1 * np.eye(20), dense.T @ b)
    for lipschitz in (["bound", "estimate"] if update == "gradient" else ["bound"]):
        r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=4, update=update, tol=1e-8,
                      max_iter=300000, lipschitz=lipschitz)
        assert r.converged, (lipschitz, r.message)
        np.testing.assert_allclose(r.x, x_ref, rtol=1e-6, atol=1e-8)


# ------------------------------------------------- the paper's orderings

def test_gsl_ahead_of_gs_with_fixed_blocks():
    for name in ("A", "B", "C"):
        p = small(name)
        assert final(p, rule="gsl", blocks="fixed", block_size=5) < \
            final(p, rule="gs", blocks="fixed", block_size=5)


def test_greedy_variable_blocks_ahead_of_fixed():
    for name in ("A", "B", "C"):
        p = small(name)
        assert final(p, rule="gs", blocks="variable", block_size=5) < \
            final(p, rule="gs", blocks="fixed", block_size=5)


def test_gsd_ahead_of_gs_with_matrix_updates_on_a():
    p = small("A")
    assert final(p, rule="gsd", blocks="variable", block_size=5, update="matrix") < \
        0.01 * final(p, rule="gs", blocks="variable", block_size=5, update="matrix")


def test_newton_ahead_of_matrix_updates_on_b_and_c():
    for name in ("B", "C"):
        p = small(name)
        assert final(p, rule="gsd", blocks="variable", block_size=5, update="newton") < \
            0.1 * final(p, rule="gsd", blocks="variable", block_size=5, update="matrix")


def test_lipschitz_estimates_ahead_of_the_bound_for_large_blocks():
    for name in ("A", "B", "C"):
        p = small(name)
        for rule in ("gs", "cyclic"):
            assert final(p, rule=rule, blocks="fixed", block_size=50, lipschitz="estimate") < \
                final(p, rule=rule, blocks="fixed", block_size=50)


def test_gsq_ahead_of_gsd_with_variable_blocks():
    for name in ("B", "C"):
        p = small(name)
        assert final(p, rule="gsq", blocks="variable", block_size=5, update="matrix") < \
            final(p, rule="gsd", blocks="variable", block_size=5, update="matrix")
