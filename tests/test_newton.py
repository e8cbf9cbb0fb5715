"""formulation="newton": Newton steps on weighted least-squares models
solved by coordinate descent, checked against L-BFGS-B references and the
optimality certificate at the returned point."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import bcd

from _data import penalized_reference

M, N = 60, 12


def _data(sparse, seed=0):
    rs = np.random.RandomState(seed)
    A = rs.randn(M, N) * (rs.rand(M, N) < 0.6) / np.sqrt(N)
    x = rs.randn(N)
    y = np.sign(A @ x + 0.3 * rs.randn(M))
    y[y == 0] = 1.0
    counts = rs.poisson(np.exp(A @ x * 0.5)).astype(float)
    b = A @ x + 0.1 * rs.randn(M)
    return (sp.csc_matrix(A) if sparse else A), y, counts, b


def _problem(loss, sparse, weighted, penalty):
    A, y, counts, b = _data(sparse)
    s = np.random.RandomState(3).uniform(0.3, 2.0, M) if weighted else None
    l2 = 0.5 if penalty is None else 0.05
    pen = None if penalty is None else (bcd.L1(0.2) if penalty == "l1"
                                        else bcd.Box(-0.3, 0.4))
    if loss == "squared":
        return bcd.LeastSquares(A, b, l2=l2, penalty=pen, sample_weight=s)
    if loss == "logistic":
        return bcd.Logistic(A, y, l2=l2, penalty=pen, sample_weight=s)
    if loss == "poisson":
        return bcd.Poisson(A, counts, l2=l2, penalty=pen, sample_weight=s)
    return bcd.LinearSVM(A, y, l2=l2, penalty=pen, sample_weight=s)


@pytest.mark.parametrize("penalty", [None, "l1", "box"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["squared", "logistic", "poisson", "squared_hinge"])
def test_newton_matches_the_reference(loss, sparse, weighted, penalty):
    problem = _problem(loss, sparse, weighted, penalty)
    result = bcd.solve(problem, formulation="newton", tol=1e-9)
    assert result.converged, result.message
    assert result.options["formulation"] == "newton"
    f_ref = penalized_reference(problem)
    assert result.objective == pytest.approx(f_ref, rel=1e-8, abs=1e-10)
    # the certificate at the returned x
    g = problem.gradient(result.x)
    kkt = np.abs(g).max() if problem.penalty is None else problem.penalty.optimality(result.x, g)
    assert kkt == pytest.approx(result.optimality, rel=1e-6, abs=1e-13)
    assert kkt <= 1e-9


def test_least_squares_takes_one_step():
    """The quadratic model of least squares is least squares itself."""
    problem = _problem("squared", False, False, None)
    result = bcd.solve(problem, formulation="newton", tol=1e-10)
    assert result.converged and result.n_iter == 1


def test_newton_needs_few_outer_iterations():
    problem = _problem("logistic", True, False, None)
    result = bcd.solve(problem, formulation="newton", tol=1e-10)
    assert result.converged and result.n_iter <= 10
    assert result.options["inner_iterations"] > 0


def test_refusals():
    A, y, counts, b = _data(False)
    with pytest.raises(ValueError, match="formulation='newton' needs"):
        bcd.solve(bcd.Multinomial(A, np.arange(M) % 3, l2=1.0), formulation="newton")
    with pytest.raises(ValueError, match="formulation='newton' needs"):
        bcd.solve(bcd.LinearSVM(A, y, loss="hinge"), formulation="newton")
    problem = _problem("poisson", False, False, None)
    for options in (dict(rule="cyclic"), dict(blocks="fixed"), dict(extrapolation=3),
                    dict(working_set=True), dict(check_every=2)):
        with pytest.raises(ValueError, match="formulation='newton' takes only"):
            bcd.solve(problem, formulation="newton", **options)
    with pytest.raises(TypeError, match="callback must be callable"):
        bcd.solve(problem, formulation="newton", callback=3)


def test_callback_sees_every_newton_step():
    # the iterate after step k is the result of a solve with max_iter=k;
    # True stops the solve, with status "callback" and no warning
    problem = _problem("logistic", False, True, None)
    seen = []
    full = bcd.solve(problem, formulation="newton", tol=1e-10,
                     callback=lambda info: seen.append((info.iteration, info.x, info.objective)))
    assert [k for k, _, _ in seen] == list(range(1, full.n_iter + 1))
    for k, x, objective in seen:
        short = bcd.solve(problem, formulation="newton", tol=1e-10, max_iter=k, warn=False)
        np.testing.assert_array_equal(short.x, x)
        assert objective == pytest.approx(problem.objective(x), rel=1e-12)
    np.testing.assert_array_equal(seen[-1][1], full.x)
    every = []
    bcd.solve(problem, formulation="newton", tol=1e-10, callback_every=2,
              callback=lambda info: every.append(info.iteration))
    assert every == [k for k, _, _ in seen if k % 2 == 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stopped = bcd.solve(problem, formulation="newton", tol=1e-10,
                            callback=lambda info: info.iteration >= 2)
    assert stopped.status == "callback" and stopped.n_iter == 2 and not stopped.converged


def test_stopping_statuses():
    problem = _problem("poisson", True, True, None)
    with pytest.warns(bcd.ConvergenceWarning, match="max_iter"):
        result = bcd.solve(problem, formulation="newton", max_iter=1, tol=1e-14)
    assert result.status == "max_iter" and result.n_iter == 1 and not result.converged
    result = bcd.solve(problem, formulation="newton", max_iter=0, warn=False)
    assert result.n_iter == 0 and np.all(result.x == 0)


def test_warm_start_and_inputs():
    problem = _problem("logistic", False, True, "l1")
    first = bcd.solve(problem, formulation="newton", tol=1e-10)
    x0 = first.x.copy()
    again = bcd.solve(problem, formulation="newton", tol=1e-8, x0=x0)
    assert again.converged and again.n_iter == 0
    assert np.array_equal(x0, first.x)


def test_diverging_data_are_reported():
    A, y, counts, b = _data(False)
    problem = bcd.Poisson(A * 1e3, counts, l2=1e-8)
    result = bcd.solve(problem, formulation="newton", x0=np.full(N, 10.0), warn=False)
    assert not result.converged and result.status in ("diverged", "stalled", "max_iter")


def test_automatic_choice_for_poisson_with_many_columns():
    rs = np.random.RandomState(0)
    A = sp.random(600, 300, density=0.05, random_state=0, format="csc")
    y = rs.poisson(np.exp(A @ (0.3 * rs.randn(300)))).astype(float)
    result = bcd.solve(bcd.Poisson(A, y, l2=1.0))
    assert result.options["formulation"] == "newton" and result.converged
    assert result.options["auto"] == "smooth generalized linear model (Newton)"
    l1 = bcd.solve(bcd.Poisson(A, y, l2=1.0, penalty=bcd.L1(1.0)))
    assert l1.options["formulation"] == "newton" and l1.converged
    # few columns: one Newton step on all of them, in the primal
    few = bcd.solve(bcd.Poisson(A[:, :20], y, l2=1.0))
    assert few.options["formulation"] == "primal"


def test_inner_models_through_the_dual_are_solved_to_a_gradient():
    """On wide data the weighted least-squares models go through the dual,
    whose test is a gap: the loop asks for a gap that bounds the model's
    gradient, so the outer iterations still converge."""
    A, y = bcd.datasets.make_paper_dataset("B", n_samples=60, n_features=300, random_state=1)
    problem = bcd.Poisson(A, (y > 0).astype(float), l2=1.0)
    result = bcd.solve(problem, formulation="newton", tol=1e-8, random_state=0)
    assert result.converged, result.message
    assert np.abs(problem.gradient(result.x)).max() <= 1e-8
    assert result.objective == pytest.approx(penalized_reference(problem), rel=1e-9)


def test_max_time_holds_for_the_whole_newton_call():
    rs = np.random.RandomState(0)
    A = sp.random(20000, 3000, density=0.01, random_state=0, format="csc")
    problem = bcd.Poisson(A, rs.poisson(1.0, 20000).astype(float), l2=1e-3)
    import time
    start = time.perf_counter()
    result = bcd.solve(problem, formulation="newton", tol=0.0, max_time=0.2, warn=False)
    assert result.status == "max_time" and not result.converged
    assert time.perf_counter() - start < 0.2 + 0.5
