"""Block updates: gradient steps with the Lipschitz bound or its estimate,
the line search, and the matrix, Newton and exact updates."""
import itertools

import numpy as np
import pytest

import bcd

from _data import (BLOCKS, assemble_parts, GREEDY, RULES, UPDATES, final, logistic_data, multinomial_data,
                   random_problem, small)


# --------------------------------------- gradient steps and Lipschitz estimates

def _traced_run(problem, max_iter, **options):
    rng = np.random.RandomState(0)
    _, _, _, parts = assemble_parts(problem, options.pop("rule"), options.pop("blocks"),
                                    options.pop("block_size"), options.pop("update"), "sort",
                                    rng, None, options)
    parts.update.enable_trace(max_iter)
    parts.run(max_iter)
    return parts.update.trace()


@pytest.mark.parametrize("rule,blocks", list(itertools.product(RULES, BLOCKS)))
@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
def test_gradient_steps_never_increase_the_objective(rule, blocks, kind):
    # 1/L_b steps with a valid L_b are guaranteed descent steps (eq. 11)
    if kind == "least_squares":
        A, b = random_problem(30, 40, density=0.4, seed=11)
        problem = bcd.LeastSquares(A, b)
    else:
        A, b = logistic_data(m=30, n=40, seed=11)
        problem = bcd.Logistic(A, b)
    r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=4, max_iter=300, tol=0.0,
                  check_every=1, random_state=2)
    f = r.history.objective
    assert len(f) == 301
    assert np.all(np.diff(f) <= 1e-12 * np.abs(f[:-1]))
    assert f[-1] < f[0]


def test_lipschitz_estimates_satisfy_the_progress_bound():
    problem = small("B")
    alpha, delta, slope = _traced_run(problem, 200, rule="gs", blocks="fixed", block_size=50,
                                      update="gradient", lipschitz="estimate")
    # recorded slope is -||g||^2 / L: each step decreased f by at least half of it
    assert np.all(delta <= 0.5 * slope)
    # estimates double from 1, so every accepted step is 1 / 2^j
    assert np.allclose(np.log2(1.0 / alpha), np.round(np.log2(1.0 / alpha)))


# ------------------------------------------------------------------ line search

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
    if update == "newton":
        # the unit step is usually accepted, and backtracking does happen
        assert np.mean(alpha == 1.0) > 0.5
    else:
        # the gradient search starts from 1 / L, then from 10 times its last
        # step: it is not held to steps below the first
        assert alpha.max() > 10 * alpha[0]
        assert np.mean(alpha[1:] < 10 * alpha[:-1]) > 0.5     # backtracking happens


def test_line_search_follows_the_scale_of_the_data():
    # the first trial is 1 / L and later ones follow the accepted steps, so
    # data scaled by 1e-150 or 1e150 converge like unit-scale data
    rs = np.random.RandomState(0)
    A, b = rs.randn(50, 20), rs.randn(50)
    iterations = []
    for scale in (1e-150, 1.0, 1e150):
        result = bcd.solve(bcd.LeastSquares(A * scale, b), rule="gs", blocks="variable",
                           block_size=5, update="linesearch", tol=1e-6, tol_mode="relative",
                           max_iter=5000)
        assert result.converged, (scale, result)
        np.testing.assert_allclose(result.x * scale, np.linalg.lstsq(A, b, rcond=None)[0],
                                   rtol=1e-4, atol=1e-6)
        iterations.append(result.n_iter)
    assert max(iterations) <= 1.5 * min(iterations)


# --------------------------------------------- matrix, Newton and exact updates

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


@pytest.mark.parametrize("update", ["matrix", "exact"])
def test_large_blocks_are_factored_in_place_with_a_general_fallback(update):
    # a block of at least 512 coordinates is factored in place, without a
    # copy of its matrix; where the matrix is not positive definite it is
    # formed again and solved by the pseudo-inverse (here: one step from 0
    # gives the minimum-norm least-squares solution), and the later steps
    # of the solve keep to that path
    rng = np.random.default_rng(31)
    n = 600
    for m, l2 in ((900, 0.5), (300, 0.0)):          # positive definite, then singular
        A = rng.standard_normal((m, n))
        b = rng.standard_normal(m)
        problem = bcd.LeastSquares(A, b, l2=l2)
        r = bcd.solve(problem, rule="cyclic", blocks="variable", block_size=n,
                      update=update, max_iter=2, tol=0.0)
        if l2:
            x_ref = np.linalg.solve(A.T @ A + l2 * np.eye(n), A.T @ b)
        else:
            x_ref = np.linalg.pinv(A) @ b
        np.testing.assert_allclose(r.x, x_ref, rtol=1e-7, atol=1e-9)
        assert np.max(np.abs(problem.gradient(r.x))) < 1e-8


@pytest.mark.parametrize("m", [5, 6000])
def test_dense_block_hessians_agree_with_numpy(m):
    # the dense weighted Gram matrix is accumulated over panels of rows
    # (several panels at m = 6000 with a 100-column block), for a block of
    # columns in any order, in one of a range and in one of scattered columns
    rng = np.random.RandomState(5)
    A = rng.randn(m, 130)
    y = np.where(rng.rand(m) > 0.5, 1.0, -1.0)
    problem = bcd.Logistic(A, y, l2=0.5)
    x = 0.3 * rng.randn(130)
    z = A @ x
    h = 1.0 / (2.0 + np.exp(z) + np.exp(-z))  # the logistic curvature weights
    state = problem.compile(False, 130)
    state.set_x(x)
    for blk in (rng.permutation(100), rng.permutation(130)[:100], np.array([7, 3, 120, 64])):
        blk = blk.astype(np.int32)
        H = state.get_block_matrix(blk, exact=True)
        expected = (A[:, blk] * h[:, None]).T @ A[:, blk] + 0.5 * np.eye(blk.size)
        np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-10 * max(m, 1))


def test_exact_update_rejects_non_quadratic_problems():
    A, y = multinomial_data(m=30, d=5, k=3)
    for problem in (bcd.Logistic(A, np.where(y > 0, 1, -1)), bcd.Multinomial(A, y)):
        with pytest.raises(ValueError, match="quadratic"):
            bcd.solve(problem, update="exact")


# ------------------------------------------ every greedy rule with every update

@pytest.mark.parametrize("rule,blocks,update", list(itertools.product(
    GREEDY, ["fixed", "variable"], UPDATES + ["exact"])))
def test_least_squares_every_greedy_rule_and_update(rule, blocks, update):
    A, b = random_problem(50, 20, density=0.5, seed=14)
    problem = bcd.LeastSquares(A, b, l2=0.1)
    dense = A.toarray()
    x_ref = np.linalg.solve(dense.T @ dense + 0.1 * np.eye(20), dense.T @ b)
    for lipschitz in (["bound", "estimate"] if update == "gradient" else [None]):
        r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=4, update=update, tol=1e-8,
                      max_iter=300000, lipschitz=lipschitz)
        assert r.converged, (lipschitz, r.message)
        np.testing.assert_allclose(r.x, x_ref, rtol=1e-6, atol=1e-8)


# -------------------------------------------------------- the paper's orderings

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


# ----------------------------------------------------- quasi-Newton (L-BFGS) steps

def _collinear_logistic(m=2000, n=60, seed=0):
    # columns on 10 latent factors plus 1e-3 noise, a tiny ridge: the
    # Hessian's eigenvalues spread over about eight orders of magnitude
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((m, 10))
    A = F @ rng.standard_normal((10, n)) + 1e-3 * rng.standard_normal((m, n))
    return bcd.Logistic(A, np.where(F[:, 0] + 0.3 * rng.standard_normal(m) > 0, 1, -1), l2=1e-3)


def _scaled_logistic(m=2000, n=40, seed=0):
    # columns scaled over six orders of magnitude
    rng = np.random.default_rng(seed)
    scale = np.logspace(-3, 3, n)
    A = rng.standard_normal((m, n)) * scale
    w = rng.standard_normal(n) / scale
    return bcd.Logistic(A, np.where(A @ w / 10 + 0.5 * rng.standard_normal(m) > 0, 1, -1), l2=1.0)


@pytest.mark.parametrize("make", [_collinear_logistic, _scaled_logistic])
def test_lbfgs_reaches_the_newton_optimum(make):
    problem = make()
    n = problem.n_coordinates
    full = dict(blocks="variable", block_size=n, rule="cyclic")
    newton = bcd.solve(problem, update="newton", tol=1e-10, **full)
    lbfgs = bcd.solve(problem, update="lbfgs", tol=1e-10, max_iter=5000, **full)
    assert newton.converged and lbfgs.converged
    assert lbfgs.objective == pytest.approx(newton.objective, rel=1e-12)
    assert np.max(np.abs(problem.gradient(lbfgs.x))) <= 1e-6 * np.max(np.abs(problem.gradient(
        np.zeros(n))))


def test_lbfgs_scales_its_model_by_the_lipschitz_constants():
    # with columns over six orders of magnitude a model started from gamma I
    # needs thousands of steps; started from gamma diag(L_i), a few dozen
    from bcd.core import updates
    problem = _scaled_logistic()
    full = dict(blocks="variable", block_size=problem.n_coordinates, rule="cyclic",
                update="lbfgs", max_iter=300)
    assert bcd.solve(problem, **full).converged
    spread = updates.LBFGS_SCALE_SPREAD
    try:
        updates.LBFGS_SCALE_SPREAD = np.inf
        assert bcd.solve(problem, warn=False, **full).status == "max_iter"
    finally:
        updates.LBFGS_SCALE_SPREAD = spread


def test_lbfgs_turns_to_newton_steps_after_its_budget():
    problem = _collinear_logistic()
    n = problem.n_coordinates
    full = dict(blocks="variable", block_size=n, rule="cyclic", update="lbfgs", max_iter=60)
    assert bcd.solve(problem, warn=False, **full).status == "max_iter"
    for after in (20, "auto"):
        r = bcd.solve(problem, newton_after=after, **full)
        assert r.converged and r.options["newton_after"] == after
    from bcd.core.updates import newton_budget
    assert newton_budget(n) == int(6 * (1 + n / 32)) and newton_budget(500) == 50


def test_lbfgs_starts_a_new_model_on_a_new_block_and_works_with_any_rule():
    # a new block starts a new model: random and greedy rules on fixed and
    # variable blocks still reach the optimum
    A, b = random_problem(60, 25, density=0.4, seed=3, sparse=False)
    problem = bcd.LeastSquares(A, b, l2=0.5)
    x = np.linalg.solve(A.T @ A + 0.5 * np.eye(25), A.T @ b)
    for rule, blocks in (("random", "fixed"), ("gs", "variable"), ("cyclic", "fixed")):
        r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=5, update="lbfgs",
                      tol=1e-10, max_iter=100000)
        assert r.converged
        np.testing.assert_allclose(r.x, x, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "AUTO", "never"])
def test_lbfgs_newton_after_is_checked(bad):
    problem = _scaled_logistic(m=50, n=5)
    with pytest.raises(ValueError, match="newton_after must be None, 'auto' or an integer"):
        bcd.solve(problem, update="lbfgs", newton_after=bad)


def test_lbfgs_newton_after_needs_block_hessians():
    class NoHessian(bcd.LeastSquares):
        @property
        def capabilities(self):
            return super().capabilities - {"block_hessian"}

    A, b = random_problem(30, 6, density=0.7, seed=2, sparse=False)
    problem = NoHessian(A, b)
    with pytest.raises(ValueError, match="newton_after needs a problem with block Hessians"):
        bcd.solve(problem, update="lbfgs", newton_after=5)
    assert bcd.solve(problem, update="lbfgs", newton_after="auto", tol=1e-8,
                     max_iter=100000).converged
