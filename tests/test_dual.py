"""The dual formulation (formulation="dual"): coordinate ascent over the
samples of L2-regularized linear models, checked against primal reference
solvers and its own duality-gap certificate."""
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

import bcd
from bcd.problems.dual import solve_dual

M, N = 40, 25


def _data(sparse, seed=0, m=M, n=N):
    rs = np.random.RandomState(seed)
    A = rs.randn(m, n) * (rs.rand(m, n) < 0.5)
    A[:, 0] = 1.0
    y = np.sign(A @ rs.randn(n) + 0.5 * rs.randn(m))
    y[y == 0] = 1.0
    b = A @ rs.randn(n) + rs.randn(m)
    return (sp.csr_matrix(A) if sparse else A), y, b


def _weights(weighted, m=M):
    if not weighted:
        return None
    s = np.random.RandomState(7).uniform(0.2, 3.0, m)
    s[3] = 0.0                    # a sample that drops out
    return s


def _problem(loss, sparse, weighted, l2=0.7):
    A, y, b = _data(sparse)
    s = _weights(weighted)
    if loss == "squared":
        return bcd.LeastSquares(A, b, l2=l2, sample_weight=s)
    if loss == "logistic":
        return bcd.Logistic(A, y, l2=l2, sample_weight=s)
    return bcd.LinearSVM(A, y, loss=loss, l2=l2, sample_weight=s)


def _reference(problem):
    """argmin P by L-BFGS-B to a gradient of 1e-12 (smooth losses)."""
    res = scipy.optimize.minimize(problem.objective, np.zeros(problem.n_coordinates),
                                  jac=problem.gradient, method="L-BFGS-B",
                                  options=dict(gtol=1e-12, ftol=0.0, maxiter=100000))
    return res.x


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
def test_dual_matches_primal_reference(loss, sparse, weighted):
    problem = _problem(loss, sparse, weighted)
    result = bcd.solve(problem, formulation="dual", tol=1e-9, random_state=0)
    assert result.converged and result.options["formulation"] == "dual"
    x_ref = _reference(problem)
    f_ref = problem.objective(x_ref)
    assert abs(result.objective - f_ref) <= 1e-8 * abs(f_ref)
    # the certificate is the duality gap at the returned x, which bounds F - F*
    assert result.optimality == result.duality_gap <= 1e-9
    assert result.duality_gap >= -1e-12 * abs(f_ref)
    assert result.objective - f_ref <= result.duality_gap + 1e-12 * abs(f_ref)
    assert np.abs(problem.gradient(result.x)).max() <= 1e-3
    assert result.dual.shape == (problem.n_samples,)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_hinge_dual_matches_scikit_learn(sparse, weighted):
    from sklearn.svm import LinearSVC
    A, y, _ = _data(sparse)
    s = _weights(weighted)
    C = 0.5
    problem = bcd.LinearSVM(A, y, loss="hinge", l2=1.0 / C, sample_weight=s)
    result = bcd.solve(problem, formulation="dual", tol=1e-10, max_iter=100000,
                       random_state=0)
    assert result.converged
    model = LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=False, tol=1e-12,
                      max_iter=1000000).fit(A, y, sample_weight=s)
    f_ref = problem.objective(model.coef_.ravel())
    # the gap certifies: no point does better than objective - gap
    assert result.objective <= f_ref + 1e-9 * f_ref
    assert result.objective - result.duality_gap <= f_ref
    assert result.duality_gap <= 1e-9 * f_ref


@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge", "hinge"])
def test_every_order_reaches_the_same_optimum(loss):
    problem = _problem(loss, True, False)
    objectives = []
    for rule in ("random", "cyclic", "gs"):
        result = bcd.solve(problem, formulation="dual", rule=rule, tol=1e-10,
                           max_iter=100000, random_state=1)
        assert result.converged, rule
        objectives.append(result.objective)
    assert np.ptp(objectives) <= 1e-9 * abs(objectives[0])


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_shrinking_does_not_change_the_optimum(loss):
    problem = _problem(loss, False, True)
    on = bcd.solve(problem, formulation="dual", tol=1e-10, max_iter=100000, random_state=2)
    off = bcd.solve(problem, formulation="dual", tol=1e-10, max_iter=100000, random_state=2,
                    shrinking=False)
    assert on.converged and off.converged
    assert on.options["shrinking"] and not off.options["shrinking"]
    assert on.objective == pytest.approx(off.objective, rel=1e-9)
    np.testing.assert_allclose(on.x, off.x, atol=1e-5)


def test_shrinking_leaves_samples_out():
    """On a separable-ish problem most dual variables sit at 0: shrinking
    skips them, so the same passes touch fewer samples (fewer passes or the
    same ones, never a different answer)."""
    A, y, _ = _data(False, m=400, n=10, seed=3)
    problem = bcd.LinearSVM(A, y, loss="hinge", l2=1.0)
    on = solve_dual(problem, 1e-9, 100000, None, "random", 0, shrinking=True)
    off = solve_dual(problem, 1e-9, 100000, None, "random", 0, shrinking=False)
    assert on.status == off.status == "converged"
    assert np.sum(on.dual == 0.0) > 0.2 * problem.n_samples
    np.testing.assert_allclose(problem.objective(on.x), problem.objective(off.x), rtol=1e-9)


def test_dual_variables_match_the_primal_solution():
    """alpha_i = -s_i phi'(a_i^T x) at the optimum, and x = A^T beta / l2."""
    problem = _problem("logistic", False, True)
    result = bcd.solve(problem, formulation="dual", tol=1e-13)
    assert result.converged
    z = problem.A @ result.x
    s = problem.sample_weight
    np.testing.assert_allclose(result.dual, s / (1.0 + np.exp(problem.y * z)), atol=1e-5)
    np.testing.assert_allclose(result.x, problem.A.T @ (problem.y * result.dual) / 0.7,
                               atol=1e-9)
    ls = _problem("squared", False, False)
    result = bcd.solve(ls, formulation="dual", tol=1e-13)
    assert result.converged
    np.testing.assert_allclose(result.dual, ls.b - ls.A @ result.x, atol=1e-5)


def test_per_coordinate_l2():
    A, y, _ = _data(False)
    l2 = np.linspace(0.1, 3.0, N)
    problem = bcd.Logistic(A, y, l2=l2)
    result = bcd.solve(problem, formulation="dual", tol=1e-10)
    assert result.converged
    f_ref = problem.objective(_reference(problem))
    assert abs(result.objective - f_ref) <= 1e-8 * abs(f_ref)


def test_warm_start_from_the_solution_converges_at_once():
    problem = _problem("logistic", True, False)
    first = bcd.solve(problem, formulation="dual", tol=1e-12)
    again = bcd.solve(problem, formulation="dual", tol=1e-8, x0=first.x)
    assert again.converged and again.n_iter <= 1
    np.testing.assert_allclose(again.x, first.x, atol=1e-5)


def test_float32_input_returns_float32():
    A, y, _ = _data(False)
    problem = bcd.Logistic(A.astype(np.float32), y, l2=1.0)
    result = bcd.solve(problem, formulation="dual", tol=1e-6)
    assert result.x.dtype == np.float32 and result.converged


def test_inputs_are_not_modified():
    A, y, b = _data(True)
    A0, y0, b0 = A.copy(), y.copy(), b.copy()
    s = _weights(True)
    s0 = s.copy()
    for problem in (bcd.LeastSquares(A, b, l2=1.0, sample_weight=s),
                    bcd.Logistic(A, y, l2=1.0, sample_weight=s),
                    bcd.LinearSVM(A, y, loss="hinge", l2=1.0, sample_weight=s)):
        x0 = np.zeros(N)
        bcd.solve(problem, formulation="dual", x0=x0)
        assert not np.any(x0)
    assert (A != A0).nnz == 0 and np.array_equal(y, y0) and np.array_equal(b, b0)
    assert np.array_equal(s, s0)


def test_dual_is_refused_without_l2_or_with_a_penalty():
    A, y, b = _data(False)
    with pytest.raises(ValueError, match="l2 > 0 on every coordinate"):
        bcd.solve(bcd.Logistic(A, y), formulation="dual")
    l2 = np.ones(N)
    l2[:2] = 0.0                                 # two unpenalized coordinates
    with pytest.raises(ValueError, match="at most one"):
        bcd.solve(bcd.LeastSquares(A, b, l2=l2), formulation="dual")
    with pytest.raises(ValueError, match="penalty"):
        bcd.solve(bcd.LeastSquares(A, b, l2=1.0, penalty=bcd.L1(1.0)), formulation="dual")
    with pytest.raises(ValueError, match="has none"):
        bcd.solve(bcd.Poisson(np.abs(A), np.ones(M), l2=1.0), formulation="dual")
    with pytest.raises(ValueError, match="l2 > 0"):
        bcd.LinearSVM(A, y, loss="hinge", l2=0.0)
    # an unpenalized intercept with the hinge: block coordinate descent stalls
    # on its kinks (measured: 9.29 against the optimum 9.25), so it is refused
    l2 = np.ones(N)
    l2[0] = 0.0
    with pytest.raises(ValueError, match="l2 > 0 on every coordinate"):
        bcd.LinearSVM(A, y, loss="hinge", l2=l2)


def test_auto_never_picks_the_dual_without_l2():
    n = 300                                     # wide, and too many columns for Newton
    A, y, b = _data(True, m=40, n=n)
    assert bcd.solve(bcd.Logistic(A, y, l2=1.0)).options["formulation"] == "dual"
    l2 = np.ones(n)
    l2[0] = 0.0                                 # an intercept
    assert bcd.solve(bcd.Logistic(A, y, l2=l2)).options["formulation"] == "dual"
    assert bcd.solve(bcd.Logistic(A, y, l2=0.0), max_iter=5).options["formulation"] != "dual"
    l2[:2] = 0.0
    assert bcd.solve(bcd.LeastSquares(A, b, l2=l2)).options["formulation"] != "dual"
    assert bcd.solve(bcd.Logistic(A, y, l2=1.0, penalty=bcd.L1(0.1))) \
        .options["formulation"] != "dual"
    # tall: the primal
    A, y, b = _data(True, m=400, n=n)
    assert bcd.solve(bcd.LeastSquares(A, b, l2=1.0), max_iter=10) \
        .options["formulation"] == "primal"


def test_options_of_the_primal_are_refused():
    problem = _problem("logistic", False, False)
    for options in (dict(blocks="fixed"), dict(update="newton"), dict(block_size=3),
                    dict(working_set=True), dict(check_every=3),
                    dict(callback=lambda info: None), dict(partition="sort")):
        with pytest.raises(ValueError, match="formulation='dual'"):
            bcd.solve(problem, formulation="dual", **options)
    with pytest.raises(ValueError, match="rule must be one of"):
        bcd.solve(problem, formulation="dual", rule="gsq")
    with pytest.raises(ValueError, match="formulation must be one of"):
        bcd.solve(problem, formulation="primal-dual")
    with pytest.raises(TypeError, match="shrinking"):
        bcd.solve(problem, formulation="dual", shrinking="yes")


def test_labels_outside_the_domain_are_refused():
    A, _, _ = _data(False)
    with pytest.raises(ValueError, match="exactly two classes"):
        bcd.LinearSVM(A, np.arange(M) % 3)
    with pytest.raises(ValueError, match="loss must be one of"):
        bcd.LinearSVM(A, np.arange(M) % 2, loss="log")


def test_stopping_statuses_warn():
    problem = _problem("logistic", True, False, l2=1e-3)
    with pytest.warns(bcd.ConvergenceWarning, match="max_iter"):
        result = bcd.solve(problem, formulation="dual", max_iter=1, tol=1e-14)
    assert result.status == "max_iter" and result.n_iter == 1 and not result.converged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = bcd.solve(problem, formulation="dual", max_iter=1, tol=1e-14, warn=False)
    assert result.status == "max_iter"


def test_non_finite_data_diverge():
    A, y, b = _data(False)
    problem = bcd.LeastSquares(A * 1e140, b * 1e170, l2=1.0)
    with pytest.warns(bcd.ConvergenceWarning, match="Diverged"):
        result = bcd.solve(problem, formulation="dual")
    assert result.status == "diverged" and not result.converged


def test_squared_hinge_primal_matches_dual():
    """The primal state of the squared hinge (its own compiled loss) gives the
    optimum the dual does, and takes an L1 penalty the dual does not."""
    problem = _problem("squared_hinge", True, True)
    dual = bcd.solve(problem, formulation="dual", tol=1e-10)
    primal = bcd.solve(problem, formulation="primal", rule="gs", blocks="variable",
                       block_size=5, update="gradient", tol=1e-8, max_iter=200000)
    assert primal.converged
    assert primal.objective == pytest.approx(dual.objective, rel=1e-9)
    A, y, _ = _data(False)
    l1 = bcd.LinearSVM(A, y, l2=0.0, penalty=bcd.L1(2.0))
    result = bcd.solve(l1, tol=1e-9)
    assert result.converged and np.sum(result.x != 0) < N


@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
def test_extrapolation_keeps_the_optimum_and_helps_the_cyclic_order(loss):
    problem = _problem(loss, False, False, l2=0.05)
    plain = bcd.solve(problem, formulation="dual", rule="cyclic", tol=1e-10,
                      max_iter=100000, shrinking=False)
    fast = bcd.solve(problem, formulation="dual", rule="cyclic", tol=1e-10,
                     max_iter=100000, shrinking=False, extrapolation=5)
    assert plain.converged and fast.converged
    assert fast.options["extrapolation"] == 5
    assert fast.objective == pytest.approx(plain.objective, rel=1e-9)
    assert fast.n_iter < plain.n_iter


def test_extrapolation_and_shrinking_exclude_each_other():
    with pytest.raises(ValueError, match="exclude each other"):
        bcd.solve(_problem("hinge", False, False), formulation="dual", extrapolation=5)


@pytest.mark.parametrize("column", ["ones", "twos", "varying"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
def test_one_unpenalized_coordinate_is_a_block_of_its_own(loss, sparse, column):
    """An intercept (l2 = 0 on one column) is minimized exactly as a second
    block; a constant column centers the rows implicitly.  The rows here are
    far from centered, which couples the intercept with w."""
    A, y, b = _data(False, seed=4)
    A = A + 1.5
    rs = np.random.RandomState(5)
    A[:, 3] = {"ones": 1.0, "twos": 2.0, "varying": rs.uniform(0.5, 2.0, M)}[column]
    A = sp.csc_matrix(A) if sparse else A
    l2 = np.full(N, 2.0)
    l2[3] = 0.0
    s = _weights(True)
    if loss == "squared":
        problem = bcd.LeastSquares(A, b, l2=l2, sample_weight=s)
    elif loss == "logistic":
        problem = bcd.Logistic(A, y, l2=l2, sample_weight=s)
    else:
        problem = bcd.LinearSVM(A, y, loss=loss, l2=l2, sample_weight=s)
    result = bcd.solve(problem, formulation="dual", tol=1e-10, max_iter=100000)
    assert result.converged
    x_ref = _reference(problem)
    f_ref = problem.objective(x_ref)
    assert abs(result.objective - f_ref) <= 1e-8 * abs(f_ref)
    assert result.x[3] == pytest.approx(x_ref[3], rel=1e-4, abs=1e-5)
    # the measure (the gap of w with the intercept fixed, plus the decrease a
    # step on the intercept promises) is not a strict bound with two coupled
    # blocks, but tracks the error
    assert result.optimality <= 1e-10
    assert result.objective - f_ref <= 10.0 * result.optimality + 1e-13 * abs(f_ref)
    assert -1e-10 * abs(f_ref) <= result.duality_gap <= result.optimality


def test_a_tolerance_below_the_rounding_of_the_gap_converges_at_it():
    """P and D are sums of rounded terms: a gap tolerance far below their
    rounding ends the solve as converged at the attainable accuracy, with a
    message saying so, instead of running to max_iter."""
    problem = _problem("logistic", False, False)
    result = bcd.solve(problem, formulation="dual", tol=1e-300, max_iter=100000)
    assert result.converged and result.n_iter < 100000
    assert "rounding" in result.message
    assert abs(result.duality_gap) <= 1e-12 * abs(result.objective)


def test_multinomial_dual_through_solve():
    """The multinomial model's own dual loops behind formulation="dual": the
    same optimum as the primal, the gap as the certificate, the dual
    variables one probability vector per sample."""
    rs = np.random.RandomState(0)
    A = sp.random(30, 120, density=0.3, random_state=1, format="csc")
    y = rs.randint(0, 3, 30)
    problem = bcd.Multinomial(A, y, l2=0.5)
    result = bcd.solve(problem)
    assert result.options["formulation"] == "dual" and result.converged
    assert result.options["auto"] == "L2-regularized multiclass linear model (dual)"
    primal = bcd.solve(problem, formulation="primal", tol=1e-10)
    assert result.objective == pytest.approx(primal.objective, rel=1e-9)
    assert result.optimality == result.duality_gap <= 1e-6
    assert result.objective - primal.objective <= result.duality_gap + 1e-12
    assert result.dual.shape == (30, 3)
    np.testing.assert_allclose(result.dual.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="l2 > 0 on every coordinate \\("):
        l2 = np.full(problem.n_coordinates, 0.5)
        l2[0] = 0.0
        bcd.solve(bcd.Multinomial(A, y, l2=l2), formulation="dual")
    again = bcd.solve(problem, formulation="dual", x0=result.x)
    assert again.converged and again.objective == pytest.approx(result.objective, rel=1e-12)


def test_relative_tolerance_is_against_the_objective():
    problem = _problem("logistic", True, False)
    result = bcd.solve(problem, formulation="dual", tol=1e-9, tol_mode="relative")
    assert result.converged
    assert result.duality_gap <= 1e-9 * abs(result.objective)
    loose = bcd.solve(problem, formulation="dual", tol=1e-3, tol_mode="relative")
    assert loose.converged and loose.n_iter <= result.n_iter
    assert loose.duality_gap <= 1e-3 * abs(loose.objective)
