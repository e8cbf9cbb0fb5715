"""The ``bcd.solve`` entry point: the Result and its History, the callback,
the stopping criteria and status, reproducibility from ``random_state`` and
the ConvergenceWarning."""
import time
import warnings

import numpy as np
import pytest

import bcd

from _data import (N_FEATURES, N_SAMPLES, dense_problem, quiet_solve, random_problem,
                   solve_quietly, sparse_problem)


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


# ------------------------------------ indefinite blocks and non-finite values

def test_gp_with_an_indefinite_kernel_matrix_raises_naming_the_block():
    # the Euclidean periodic kernel is not positive definite on 2-D inputs;
    # with almost no noise K + noise I is indefinite
    X = np.random.RandomState(0).rand(200, 2)
    problem = bcd.GaussianProcess(X, np.sin(X[:, 0]), bcd.gp.Periodic(1.0, 0.3), noise=1e-6)
    with pytest.raises(ValueError, match=r"block of coordinates \[\d+(, \d+)*\].*not positive "
                                         r"definite"):
        bcd.solve(problem, rule="gbcd", update="exact", max_iter=10, max_time=5)


def test_a_starting_point_that_overflows_is_diverged_not_converged():
    rs = np.random.RandomState(0)
    A, b = rs.randn(20, 8), rs.randn(20)
    with pytest.warns(bcd.ConvergenceWarning, match="starting point"):
        result = bcd.solve(bcd.LeastSquares(A, b), x0=np.full(8, 1e308))
    assert result.status == "diverged" and not result.converged
    assert not np.isfinite(result.objective)


@pytest.mark.parametrize("options", [
    dict(rule="gbcd", update="exact"),
    dict(rule="gs", blocks="variable", block_size=2, update="exact"),
    dict(rule="gs", blocks="tree", update="exact"),
    dict(rule="cyclic", blocks="fixed", block_size=2, partition="order", update="matrix"),
])
def test_an_indefinite_block_is_an_error_naming_it(options):
    Q = np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"coordinates \[0, 1(, 2)?\].*not positive definite"):
        bcd.solve(bcd.Quadratic(Q, np.ones(3)), **options)


@pytest.mark.parametrize("options, penalty", [
    (dict(blocks="coloring", update="exact"), None),
    (dict(rule="cyclic", blocks="fixed", block_size=1, update="gradient"), None),
    (dict(rule="cyclic", blocks="fixed", block_size=1, update="gradient"), bcd.L1(0.1)),
    (dict(rule="gs", blocks="variable", block_size=1, update="gradient"), bcd.L1(0.1)),
])
def test_an_unbounded_problem_diverges_honestly(options, penalty):
    # coordinate-wise steps on an indefinite quadratic run off to infinity
    Q = np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]])
    with pytest.warns(bcd.ConvergenceWarning, match="Diverged"):
        result = bcd.solve(bcd.Quadratic(Q, np.ones(3), penalty=penalty), max_iter=10**5,
                           **options)
    assert result.status == "diverged" and not result.converged


def test_a_diverging_penalized_solve_is_not_converged():
    rs = np.random.RandomState(0)
    A, b = rs.randn(30, 10), rs.randn(30)
    x0 = np.zeros(10)
    x0[3] = 1e308
    for penalty in (bcd.L1(0.1), bcd.NonNegative(), bcd.Box(-1e308, 1e308)):
        result = quiet_solve(bcd.LeastSquares(A * 1e10, b, penalty=penalty), x0=x0)
        assert result.status == "diverged", penalty


# ---------------------------------------------------------------- time limits

def test_max_time_is_kept_with_slow_iterations_and_rare_checks():
    # iterations of about 0.05-0.2 s and a stopping test every 10**5 of them:
    # the clock used to be read every 256 iterations only
    rs = np.random.RandomState(0)
    A, b = rs.randn(1500, 1500), rs.randn(1500)
    problem = bcd.LeastSquares(A, b)
    start = time.perf_counter()
    result = quiet_solve(problem, rule="gsq", blocks="variable", block_size=150,
                          update="matrix", max_time=0.5, check_every=10**5, max_iter=10**6,
                          tol=0)
    elapsed = time.perf_counter() - start
    assert result.status == "max_time"
    per_iteration = result.iteration_time / max(result.n_iter, 1)
    assert elapsed <= 0.5 + 2 * per_iteration + 1.0


# ------------------------------- statuses, warnings and the callback's answer

def test_stalled_solves_warn():
    rs = np.random.RandomState(0)
    A, b = rs.randn(50, 20), rs.randn(50)
    with pytest.warns(bcd.ConvergenceWarning, match="could not make progress"):
        result = bcd.solve(bcd.LeastSquares(A * 1e150, b), update="newton", max_iter=2000)
    assert result.status == "stalled"


def test_relative_tolerance_follows_the_scale_of_the_data():
    rs = np.random.RandomState(0)
    A, b = rs.randn(40, 15), rs.randn(40)
    exact = np.linalg.lstsq(A, b, rcond=None)[0]
    # absolute: scaled down by 1e-6, the origin already passes tol, with a warning
    with pytest.warns(bcd.ConvergenceWarning, match="tol_mode='relative'"):
        result = bcd.solve(bcd.LeastSquares(A * 1e-6, b * 1e-6))
    assert result.converged and result.n_iter == 0
    for scale in (1e-6, 1.0, 1e6):
        with warnings.catch_warnings():
            warnings.simplefilter("error", bcd.ConvergenceWarning)
            result = bcd.solve(bcd.LeastSquares(A * scale, b * scale), tol=1e-9,
                               tol_mode="relative")
        assert result.converged and result.n_iter > 0
        np.testing.assert_allclose(result.x, exact, rtol=1e-5, atol=1e-7)
        assert result.options["tol"] == pytest.approx(1e-9 * np.abs(A.T @ b).max() * scale ** 2)
    with pytest.raises(ValueError, match="tol_mode"):
        bcd.solve(bcd.LeastSquares(A, b), tol_mode="scaled")


def test_a_warm_start_at_the_solution_does_not_warn():
    rs = np.random.RandomState(0)
    A, b = rs.randn(40, 15), rs.randn(40)
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", bcd.ConvergenceWarning)
        result = bcd.solve(bcd.LeastSquares(A, b), x0=x)
    assert result.converged and result.n_iter == 0


def test_only_true_from_a_callback_stops_the_solve():
    CD = dict(rule="cyclic", block_size=1)      # a configuration of many iterations
    rs = np.random.RandomState(0)
    problem = bcd.LeastSquares(rs.randn(40, 15), rs.randn(40))
    with pytest.warns(UserWarning, match="callback returned 'no'"):
        result = bcd.solve(problem, callback=lambda info: "no", tol=1e-8, **CD)
    assert result.converged
    result = bcd.solve(problem, callback=lambda info: info.iteration >= 3, tol=1e-8, **CD)
    assert result.status == "callback" and result.n_iter == 3
    result = bcd.solve(problem, callback=lambda info: np.bool_(info.iteration >= 3), tol=1e-8,
                       **CD)
    assert result.status == "callback"


# ----------------------------------------------------------- output precision

@pytest.mark.parametrize("dtype", ["<f4", ">f4", "<f8", ">f8", "int32"])
def test_output_precision_follows_the_input(dtype):
    rs = np.random.RandomState(0)
    A = rs.rand(20, 5).astype(dtype)
    expected = np.float32 if dtype.endswith("f4") else np.float64
    assert bcd.solve(bcd.LeastSquares(A, np.ones(20)), tol=1e-4).x.dtype == expected
    X = rs.rand(30, 2).astype(dtype)
    gp = bcd.GaussianProcess(X, X[:, 0].astype(np.float64), bcd.gp.SquaredExponential(0.5),
                             noise=0.1)
    assert bcd.solve(gp).x.dtype == expected
