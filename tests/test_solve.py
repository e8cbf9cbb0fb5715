"""The ``bcd.solve`` entry point: the Result and its History, the callback,
the stopping criteria and status, reproducibility from ``random_state`` and
the ConvergenceWarning."""
import warnings

import numpy as np
import pytest

import bcd

from _data import (N_FEATURES, N_SAMPLES, dense_problem, random_problem, solve_quietly,
                   sparse_problem)


# ----------------------------------------------------------- result and history

def test_history_rows_follow_check_every():
    A, b = random_problem(30, 20, seed=19)
    r = bcd.solve(bcd.LeastSquares(A, b), rule="cyclic", max_iter=100, tol=0.0, check_every=7)
    np.testing.assert_array_equal(r.history.iteration, [0, 7, 14, 21, 28, 35, 42, 49, 56, 63,
                                                        70, 77, 84, 91, 98, 100])
    assert r.status == "max_iter" and not r.converged
    assert "max_iter" in r.message
    assert np.all(np.diff(r.history.time) >= 0)


def test_verbose_prints_progress(capsys):
    A, b = random_problem(20, 10, seed=20)
    bcd.solve(bcd.LeastSquares(A, b), max_iter=20, tol=0.0, check_every=10, verbose=True)
    out = capsys.readouterr().out
    assert "iter" in out and "objective" in out


# --------------------------------------------------------------------- callback

def test_callback_every_and_stop():
    A, b = random_problem(30, 20, seed=18)
    seen = []

    def cb(info):
        seen.append((info.iteration, info.objective, info.x.copy()))
        return info.iteration >= 30

    problem = bcd.LeastSquares(A, b)
    r = bcd.solve(problem, rule="random", max_iter=1000, tol=0.0, callback=cb,
                  callback_every=10, random_state=0)
    assert [s[0] for s in seen] == [10, 20, 30]
    assert r.status == "callback" and not r.converged and r.n_iter == 30
    for it, f, x in seen:
        assert f == pytest.approx(problem.objective(x), rel=1e-12)


def test_float32_callback_iterate_dtype():
    A, b = dense_problem()
    seen = []
    bcd.solve(bcd.LeastSquares(A.astype(np.float32), b, l2=1.0), rule="gs", max_iter=3,
              callback=lambda info: seen.append(info.x.dtype))
    assert seen and all(d == np.float32 for d in seen)


# --------------------------------------------------------------------- stopping

def test_max_time_stops_early():
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=100, n_features=1000)
    r = bcd.solve(bcd.LeastSquares(A, b), rule="gs", max_iter=10**9, tol=0.0, max_time=0.05)
    assert r.status == "max_time" and not r.converged
    assert 0 < r.n_iter < 10**9
    assert r.time < 1.0


def test_infinite_max_time_means_no_limit():
    A, b = dense_problem()
    r = bcd.solve(bcd.LeastSquares(A, b), max_time=np.inf, tol=1e-8, max_iter=100000)
    assert r.converged


def test_warm_start_at_the_solution_stops_immediately():
    A, b = random_problem(50, 10, density=0.6, seed=21)
    problem = bcd.LeastSquares(A, b)
    x_ref = np.linalg.lstsq(A.toarray(), b, rcond=None)[0]
    r = bcd.solve(problem, x0=x_ref, tol=1e-8)
    assert r.converged and r.n_iter == 0


def test_max_iter_zero_returns_start():
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b)
    x0 = np.linspace(-1, 1, N_FEATURES)
    with pytest.warns(bcd.ConvergenceWarning):
        r = bcd.solve(problem, max_iter=0, x0=x0)
    assert np.array_equal(r.x, x0)
    assert r.n_iter == 0
    assert not r.converged
    assert r.status == "max_iter"
    assert r.objective == pytest.approx(problem.objective(x0))

    with pytest.warns(bcd.ConvergenceWarning):
        r = bcd.solve(problem, max_iter=0)
    assert np.array_equal(r.x, np.zeros(N_FEATURES))
    assert r.n_iter == 0 and not r.converged


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("max_iter", [0, 100])
def test_zero_target_converges_at_start(sparse, max_iter):
    A, _ = (sparse_problem() if sparse else dense_problem())
    problem = bcd.LeastSquares(A, np.zeros(N_SAMPLES))
    with warnings.catch_warnings():
        warnings.simplefilter("error", bcd.ConvergenceWarning)
        r = bcd.solve(problem, max_iter=max_iter)
    assert r.converged
    assert r.status == "converged"
    assert r.n_iter == 0
    assert np.array_equal(r.x, np.zeros(N_FEATURES))
    assert r.optimality == 0.0
    assert r.objective == 0.0


def test_optimal_x0_converges_at_start():
    A, b = dense_problem()
    x_star = np.linalg.solve(A.T @ A + np.eye(N_FEATURES), A.T @ b)
    problem = bcd.LeastSquares(A, b, l2=1.0)
    r = bcd.solve(problem, x0=x_star, max_iter=0, tol=1e-8)
    assert r.converged and r.n_iter == 0
    assert np.array_equal(r.x, x_star)


# ----------------------------------------------------------------- random_state

@pytest.mark.parametrize("kwargs", [
    dict(rule="random", blocks="variable"),
    dict(rule="lipschitz", blocks="variable"),
    dict(rule="cyclic", blocks="variable"),
    dict(rule="random", blocks="fixed", partition="order"),
    dict(rule="lipschitz", blocks="fixed", partition="order"),
    dict(rule="cyclic", blocks="fixed", partition="random"),
    dict(rule="gs", blocks="fixed", partition="random"),
], ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_random_state_reproducible(kwargs):
    A, b = sparse_problem(seed=7)
    problem = bcd.LeastSquares(A, b)
    run = lambda seed: solve_quietly(problem, block_size=3, max_iter=20, random_state=seed,
                                     **kwargs)
    r1, r2, r3 = run(42), run(42), run(43)
    assert np.array_equal(r1.x, r2.x)
    assert r1.objective == r2.objective
    assert not np.array_equal(r1.x, r3.x)

    # a RandomState seeded the same way reproduces the int seed
    r4 = run(np.random.RandomState(42))
    assert np.array_equal(r1.x, r4.x)


# ----------------------------------------------------------- ConvergenceWarning

@pytest.mark.parametrize("rule", ["gs", "cyclic"])
def test_convergence_warning_on_max_iter(rule):
    A, b = sparse_problem()
    with pytest.warns(bcd.ConvergenceWarning, match="max_iter"):
        r = bcd.solve(bcd.LeastSquares(A, b), rule=rule, block_size=2, max_iter=3, tol=1e-12)
    assert not r.converged
    assert r.status == "max_iter"
    assert r.n_iter == 3


def test_convergence_warning_on_max_time():
    A, b = sparse_problem()
    with pytest.warns(bcd.ConvergenceWarning, match="max_time"):
        r = bcd.solve(bcd.LeastSquares(A, b), rule="cyclic", block_size=1, tol=0.0,
                      max_iter=10**9, max_time=0.02, check_every=10)
    assert not r.converged
    assert r.status == "max_time"


@pytest.mark.parametrize("rule", ["gs", "cyclic", "random", "lipschitz"])
def test_no_convergence_warning_when_converged(rule):
    A, b = sparse_problem()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = bcd.solve(bcd.LeastSquares(A, b, l2=1.0), rule=rule, block_size=3,
                      max_iter=100000, tol=1e-6, random_state=0)
    assert r.converged
    assert not [w for w in caught if issubclass(w.category, bcd.ConvergenceWarning)]


def test_no_convergence_warning_when_callback_stops():
    A, b = sparse_problem()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = bcd.solve(bcd.LeastSquares(A, b), rule="cyclic", block_size=1, max_iter=1000,
                      tol=1e-12, callback=lambda info: info.iteration >= 2)
    assert r.status == "callback" and r.n_iter == 2
    assert not [w for w in caught if issubclass(w.category, bcd.ConvergenceWarning)]


def test_warn_false_reports_in_the_result_without_a_warning():
    A, b = sparse_problem()
    with pytest.warns(bcd.ConvergenceWarning, match="max_iter"):
        loud = bcd.solve(bcd.LeastSquares(A, b), rule="cyclic", block_size=2, max_iter=3,
                         tol=1e-12, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = bcd.solve(bcd.LeastSquares(A, b), rule="cyclic", block_size=2, max_iter=3,
                          tol=1e-12, warn=False, random_state=0)
    assert quiet.status == loud.status == "max_iter" and not quiet.converged
    assert quiet.message == loud.message
    np.testing.assert_array_equal(quiet.x, loud.x)
