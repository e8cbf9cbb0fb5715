"""Selection rules: cyclic, random, Lipschitz sampling and the greedy rules
GS, GSL, GSD and GSQ. What each rule selects, their equivalences, the
incremental tracking of the gradient and the orderings reported by Nutini,
Laradji and Schmidt. The GBCD rule is tested with the Gaussian processes in
test_gp.py."""
import itertools
import time

import numpy as np
import pytest
import scipy.sparse as sp

import bcd

from _data import (BLOCKS, assemble_parts, quiet_solve, GREEDY, RULES, final, lbfgs_reference, logistic_data,
                   multinomial_data, random_problem, small)


# ------------------------------------------------------- what each rule selects

def _selector(problem, rule, blocks, block_size, partition_kind="sort", seed=0):
    rng = np.random.RandomState(seed)
    return assemble_parts(problem, rule, blocks, block_size, "gradient", partition_kind, rng)


def test_gs_variable_picks_largest_gradient_entries():
    A, b = random_problem(40, 60, density=0.3, seed=13)
    problem = bcd.LeastSquares(A, b)
    kernel, units, selector, _ = _selector(problem, "gs", "variable", 7)
    g = problem.gradient(np.zeros(60))
    (blk,) = selector.draw(kernel, 1)
    np.testing.assert_array_equal(blk, np.sort(np.argsort(-np.abs(g), kind="stable")[:7]))


def test_gs_fixed_picks_block_with_largest_gradient_norm():
    A, b = random_problem(40, 60, density=0.3, seed=14)
    problem = bcd.LeastSquares(A, b)
    kernel, units, selector, _ = _selector(problem, "gs", "fixed", 6, "random")
    g = problem.gradient(np.zeros(60))
    norms = [np.sum(g[blk] ** 2) for blk in units.blocks()]
    (blk,) = selector.draw(kernel, 1)
    np.testing.assert_array_equal(blk, units.blocks()[int(np.argmax(norms))])


def test_random_variable_blocks_are_uniform_and_distinct():
    A, b = random_problem(20, 10, density=0.6, seed=15)
    kernel, units, selector, _ = _selector(bcd.LeastSquares(A, b), "random", "variable", 3)
    draws = selector.draw(kernel, 30000)
    assert all(len(np.unique(d)) == 3 for d in draws)
    counts = np.bincount(np.concatenate(draws), minlength=10)
    expected = 30000 * 3 / 10
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))


def test_lipschitz_sampling_is_proportional_to_lipschitz_constants():
    A, b = random_problem(30, 12, density=0.6, seed=16)
    problem = bcd.LeastSquares(A, b)
    # fixed blocks: P(b) proportional to L_b
    kernel, units, selector, _ = _selector(problem, "lipschitz", "fixed", 3)
    draws = selector.draw(kernel, 40000)
    index = {tuple(blk): u for u, blk in enumerate(units.blocks())}
    counts = np.bincount([index[tuple(d)] for d in draws], minlength=units.n_units)
    expected = 40000 * units.lipschitz / units.lipschitz.sum()
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected) + 1)
    # variable blocks of one coordinate: P(i) proportional to L_i
    kernel, units, selector, _ = _selector(problem, "lipschitz", "variable", 1)
    counts = np.bincount(np.concatenate(selector.draw(kernel, 40000)), minlength=12)
    expected = 40000 * problem.lipschitz / problem.lipschitz.sum()
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected) + 1)
    # variable blocks of several coordinates are drawn without replacement
    kernel, units, selector, _ = _selector(problem, "lipschitz", "variable", 5)
    assert all(len(np.unique(d)) == 5 for d in selector.draw(kernel, 2000))


def test_cyclic_orders():
    A, b = random_problem(30, 11, density=0.6, seed=17)
    problem = bcd.LeastSquares(A, b)
    kernel, units, selector, _ = _selector(problem, "cyclic", "fixed", 3, "order")
    draws = selector.draw(kernel, 2 * units.n_units)
    expected = units.blocks() * 2
    for d, e in zip(draws, expected):
        np.testing.assert_array_equal(d, e)
    # variable: every pass is a fresh permutation covering each coordinate once
    kernel, units, selector, _ = _selector(problem, "cyclic", "variable", 3)
    draws = selector.draw(kernel, 8)          # 11 coordinates: passes of 4 blocks
    first, second = np.concatenate(draws[:4]), np.concatenate(draws[4:])
    np.testing.assert_array_equal(np.sort(first), np.arange(11))
    np.testing.assert_array_equal(np.sort(second), np.arange(11))
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("rule", GREEDY)
def test_greedy_fixed_block_scores(rule):
    A, b = random_problem(40, 30, density=0.4, seed=8)
    problem = bcd.LeastSquares(A, b, l2=0.2)
    kernel, units, selector, _ = assemble_parts(problem, rule, "fixed", 5, "gradient", "random",
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
    kernel, units, selector, _ = assemble_parts(problem, "gsd", "variable", 6, "gradient", "sort",
                                           np.random.RandomState(1), None,
                                           dict(gsd_diagonal=diagonal))
    dense = A.toarray()
    D = problem.lipschitz if diagonal == "lipschitz" else \
        np.abs(dense.T @ dense + 0.2 * np.eye(30)).sum(axis=1)
    g = problem.gradient(np.zeros(30))
    (blk,) = selector.draw(kernel, 1)
    np.testing.assert_array_equal(blk, np.sort(np.argsort(-g ** 2 / D, kind="stable")[:6]))


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
    np.testing.assert_allclose(problem.sirt_diagonal(), np.abs(M).sum(axis=1), rtol=1e-12)
    dense_problem = type(problem)(dense, problem.y if kind != "least_squares" else y, l2=l2)
    np.testing.assert_allclose(dense_problem.sirt_diagonal(), np.abs(M).sum(axis=1),
                               rtol=1e-12)


@pytest.mark.parametrize("method", ["iht", "omp"])
def test_gsq_variable_blocks_never_rate_below_gs_and_gsd(method):
    problem = small("B")
    kernel, units, selector, _ = assemble_parts(problem, "gsq", "variable", 5, "matrix", "sort",
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
        capabilities = bcd.LeastSquares.capabilities - {"bound_products"}

    A, b = random_problem(20, 10, seed=12)
    with pytest.raises(ValueError, match="products with a curvature bound"):
        bcd.solve(NoBound(A, b), rule="gsq", blocks="variable")
    # fixed blocks only need the block matrices
    assert bcd.solve(NoBound(A, b), rule="gsq", blocks="fixed", tol=1e-6,
                     max_iter=100000).converged


# ------------------------------------------------- convergence and equivalences

@pytest.mark.parametrize("rule,blocks", list(itertools.product(RULES, BLOCKS)))
@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
def test_every_rule_and_block_strategy_converges(rule, blocks, kind):
    if kind == "least_squares":
        A, b = random_problem(40, 12, density=0.5, seed=7)
        problem = bcd.LeastSquares(A, b)
        f_ref = problem.objective(np.linalg.lstsq(A.toarray(), b, rcond=None)[0])
    else:
        A, y = logistic_data(m=40, n=12, seed=7)
        problem = bcd.Logistic(A, y, l2=1.0)
        f_ref = lbfgs_reference(problem)[1]
    r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=3, max_iter=500000,
                  tol=1e-7, random_state=0)
    assert r.converged, r.message
    assert r.optimality <= 1e-7
    # the reported optimality is the true gradient norm at the returned x
    assert r.optimality == pytest.approx(np.max(np.abs(problem.gradient(r.x))), rel=1e-6,
                                         abs=1e-12)
    assert r.objective == pytest.approx(problem.objective(r.x), rel=1e-12)
    assert r.objective == pytest.approx(f_ref, rel=1e-9, abs=1e-12)


def test_gs_fixed_blocks_of_one_equal_variable_blocks_of_one():
    A, b = random_problem(30, 25, density=0.4, seed=8)
    problem = bcd.LeastSquares(A, b)
    r_fixed = bcd.solve(problem, rule="gs", blocks="fixed", block_size=1, partition="random",
                        max_iter=400, tol=0.0, check_every=1, random_state=3)
    r_var = bcd.solve(problem, rule="gs", blocks="variable", block_size=1, max_iter=400,
                      tol=0.0, check_every=1)
    np.testing.assert_array_equal(r_fixed.x, r_var.x)
    np.testing.assert_array_equal(r_fixed.history.objective, r_var.history.objective)


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


def test_gsd_lipschitz_tau_selects_like_lipschitz():
    A, b = random_problem(40, 30, density=0.4, seed=10)
    problem = bcd.LeastSquares(A, b)
    runs = [bcd.solve(problem, rule="gsd", block_size=4, gsd_diagonal=diag, max_iter=100,
                      tol=0.0).x for diag in ("lipschitz", "lipschitz_tau")]
    np.testing.assert_array_equal(runs[0], runs[1])


# --------------------------------- tracking of the gradient by the greedy rules

def test_greedy_tracking_stays_exact_over_long_runs():
    # many incremental gradient updates; the certificate is recomputed
    A, y = logistic_data(m=80, n=200, seed=22)
    problem = bcd.Logistic(A, y, l2=1.0)
    r = bcd.solve(problem, rule="gs", blocks="variable", block_size=4, max_iter=200000,
                  tol=1e-9)
    assert r.converged
    assert np.max(np.abs(problem.gradient(r.x))) <= 1e-9


@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
@pytest.mark.parametrize("rule", ["gs", "gsq"])
def test_tracking_without_the_row_view_matches_the_row_view(kind, rule):
    # blocks of 25 columns of a 30%-dense matrix touch nearly every row: the
    # gradient is pushed by reading every column and the CSR copy of A is
    # not built; the iterates are those of the row view's path
    rng = np.random.default_rng(3)
    A = sp.random(60, 80, density=0.3, random_state=4, format="csc")
    t = rng.standard_normal(60) if kind == "least_squares" else np.sign(rng.standard_normal(60))
    make = (lambda: bcd.LeastSquares(A, t, l2=0.5)) if kind == "least_squares" else \
        (lambda: bcd.Logistic(A, t, l2=0.5))
    options = dict(rule=rule, blocks="variable", block_size=25, max_iter=60, tol=0.0,
                   random_state=0)
    columns_only = make()
    r_cols = bcd.solve(columns_only, **options)
    assert not columns_only._has_row_view()             # no CSR copy of A built
    with_rows = make()
    with_rows._columns(True)                            # built first: it is used
    r_rows = bcd.solve(with_rows, **options)
    np.testing.assert_allclose(r_cols.x, r_rows.x, rtol=1e-10, atol=1e-12)
    converged = bcd.solve(make(), **dict(options, max_iter=10**5, tol=1e-9))
    assert converged.converged
    np.testing.assert_allclose(converged.optimality,
                               np.max(np.abs(make().gradient(converged.x))), atol=1e-9)


# -------------------------------------------------------- the paper's orderings

@pytest.mark.parametrize("name", ["A", "B"])
def test_greedy_variable_blocks_ahead_of_random_and_cyclic(name):
    # Figure 4 / Section 7.1: GS-VB makes more progress per iteration than
    # Random-VB and cyclic selection with gradient updates.
    A, t = bcd.datasets.make_paper_dataset(name, random_state=1, n_samples=200,
                                           n_features=2000)
    problem = bcd.LeastSquares(A, t) if name == "A" else bcd.Logistic(A, t)
    f = {}
    for rule, blocks in [("gs", "variable"), ("random", "variable"), ("cyclic", "variable"),
                         ("cyclic", "fixed")]:
        r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=5,
                      partition="sort" if blocks == "fixed" else None,
                      max_iter=300, tol=0.0, random_state=0)
        f[rule, blocks] = r.objective
    gs = f["gs", "variable"]
    assert gs < f["random", "variable"]
    assert gs < f["cyclic", "variable"]
    assert gs < f["cyclic", "fixed"]


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


def test_gsq_ahead_of_gsd_with_variable_blocks():
    for name in ("B", "C"):
        p = small(name)
        assert final(p, rule="gsq", blocks="variable", block_size=5, update="matrix") < \
            final(p, rule="gsd", blocks="variable", block_size=5, update="matrix")


# ------------------------------------------------- rule gbcd: no endless loop

def test_gbcd_on_a_rank_deficient_quadratic_terminates():
    # units judged dependent on the block used to stay "free" in the count of
    # candidates, and the candidate draw waited for ever for units that did
    # not exist
    rs = np.random.RandomState(0)
    B = rs.randn(3, 300)
    Q = B.T @ B                                   # PSD, rank 3
    c = Q @ rs.randn(300)
    start = time.perf_counter()
    result = quiet_solve(bcd.Quadratic(Q, c), rule="gbcd", update="exact", max_iter=10,
                          max_time=5)
    assert time.perf_counter() - start < 4.0
    assert result.converged
    np.testing.assert_allclose(Q @ result.x, c, atol=1e-6 * np.abs(c).max())


def test_gbcd_with_few_independent_units_left_draws_from_them():
    # most units dependent: the rejection draw must fall back to a scan
    rs = np.random.RandomState(1)
    B = rs.randn(20, 2000)
    Q = B.T @ B + 1e-3 * np.eye(2000)
    c = rs.randn(2000)
    result = quiet_solve(bcd.Quadratic(Q, c), rule="gbcd", update="exact", block_size=100,
                          max_iter=3, max_time=5)
    assert result.n_iter == 3
