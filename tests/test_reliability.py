"""Regression tests of the solver's behaviour under stress: no hang, no
non-finite value reported as converged, time limits kept, honest statuses
and warnings, and the small input/output defects found by sceptical use.

Threads, signals, pickling and property-based tests are in test_stress.py
and test_properties.py.
"""
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import bcd


def _quiet_solve(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        return bcd.solve(*args, **kwargs)


# ------------------------------------------------------------ no endless loop

def test_gbcd_on_a_rank_deficient_quadratic_terminates():
    # units judged dependent on the block used to stay "free" in the count of
    # candidates, and the candidate draw waited for ever for units that did
    # not exist
    rs = np.random.RandomState(0)
    B = rs.randn(3, 300)
    Q = B.T @ B                                   # PSD, rank 3
    c = Q @ rs.randn(300)
    start = time.perf_counter()
    result = _quiet_solve(bcd.Quadratic(Q, c), rule="gbcd", update="exact", max_iter=10,
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
    result = _quiet_solve(bcd.Quadratic(Q, c), rule="gbcd", update="exact", block_size=100,
                          max_iter=3, max_time=5)
    assert result.n_iter == 3


def test_gp_with_an_indefinite_kernel_matrix_raises_naming_the_block():
    # the Euclidean periodic kernel is not positive definite on 2-D inputs;
    # with almost no noise K + noise I is indefinite
    X = np.random.RandomState(0).rand(200, 2)
    problem = bcd.GaussianProcess(X, np.sin(X[:, 0]), bcd.gp.Periodic(1.0, 0.3), noise=1e-6)
    with pytest.raises(ValueError, match=r"block of coordinates \[\d+(, \d+)*\].*not positive "
                                         r"definite"):
        bcd.solve(problem, rule="gbcd", update="exact", max_iter=10, max_time=5)


# ------------------------------------------------------- non-finite values

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


@pytest.mark.parametrize("penalty", [bcd.L1(0.1), bcd.L1(0.1, positive=True),
                                     bcd.NonNegative(), bcd.Box(-1.0, 1.0)])
def test_compiled_prox_lets_nan_through_instead_of_zeroing_it(penalty):
    # a diverging solve must not be hidden by a prox that maps NaN to 0 or
    # to a bound (fmax/fmin drop NaN); finite values are unchanged
    z = np.array([np.nan, 2.0, -2.0, 0.05])
    out = penalty.compile(4).prox_vector(z, 1.0)
    assert np.isnan(out[0])
    np.testing.assert_array_equal(out[1:], penalty.prox(z[1:], 1.0))


def test_a_diverging_penalized_solve_is_not_converged():
    rs = np.random.RandomState(0)
    A, b = rs.randn(30, 10), rs.randn(30)
    x0 = np.zeros(10)
    x0[3] = 1e308
    for penalty in (bcd.L1(0.1), bcd.NonNegative(), bcd.Box(-1e308, 1e308)):
        result = _quiet_solve(bcd.LeastSquares(A * 1e10, b, penalty=penalty), x0=x0)
        assert result.status == "diverged", penalty


# ------------------------------------------------------------- time limits

def test_max_time_is_kept_with_slow_iterations_and_rare_checks():
    # iterations of about 0.05-0.2 s and a stopping test every 10**5 of them:
    # the clock used to be read every 256 iterations only
    rs = np.random.RandomState(0)
    A, b = rs.randn(1500, 1500), rs.randn(1500)
    problem = bcd.LeastSquares(A, b)
    start = time.perf_counter()
    result = _quiet_solve(problem, rule="gsq", blocks="variable", block_size=150,
                          update="matrix", max_time=0.5, check_every=10**5, max_iter=10**6,
                          tol=0)
    elapsed = time.perf_counter() - start
    assert result.status == "max_time"
    per_iteration = result.iteration_time / max(result.n_iter, 1)
    assert elapsed <= 0.5 + 2 * per_iteration + 1.0


# ----------------------------------------------------- statuses and warnings

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


# ------------------------------------------------------------- small items

def test_multinomial_keeps_label_values_and_dtype():
    A = np.random.RandomState(0).rand(6, 3)
    y = np.array([2**60, 2**60 + 1, 2**60 + 2] * 2, dtype=np.int64)
    problem = bcd.Multinomial(A, y)
    assert problem.n_classes == 3
    assert problem.classes.dtype == np.int64
    np.testing.assert_array_equal(problem.classes, np.unique(y))
    with pytest.raises(ValueError, match="integer class labels"):
        bcd.Multinomial(A, [0.5, 1, 0, 1, 0, 1])


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


def test_penalty_and_kernel_parameters_are_type_checked():
    with pytest.raises(TypeError, match="positive must be True or False"):
        bcd.L1(1.0, positive="no")
    assert bcd.L1(1.0, positive=np.True_).positive is True
    with pytest.raises(ValueError, match="NaN"):
        bcd.L1(1.0).prox([np.nan, 1.0])
    with pytest.raises(TypeError, match="lengthscale"):
        bcd.gp.SquaredExponential("1")
    with pytest.raises(TypeError, match="lengthscale"):
        bcd.gp.Matern(1.5, True)


def test_complex_and_masked_inputs_are_rejected():
    W = bcd.datasets.make_lattice_graph(3, 3)
    labels = np.full(9, np.nan)
    labels[0] = 1.0
    with pytest.raises(TypeError, match="complex"):
        bcd.LabelPropagation(W, labels.astype(complex))
    masked = np.ma.masked_array(np.ones(9), mask=[False] + [True] * 8)
    with pytest.raises(TypeError, match="masked"):
        bcd.LabelPropagation(W, masked)
    with pytest.raises(TypeError, match="masked"):
        bcd.LeastSquares(np.ma.masked_array(np.ones((3, 2))), np.ones(3))
    with pytest.raises(TypeError, match="masked"):
        bcd.LeastSquares(np.ones((3, 2)), np.ma.masked_array(np.ones(3)))


def test_tree_solve_tells_asymmetry_from_a_cycle():
    one_sided = sp.csr_matrix(np.array([[2.0, 1, 0], [0, 2, 0], [0, 0, 2]]))
    with pytest.raises(ValueError, match="symmetric"):
        bcd.tree_solve(one_sided, np.ones(3))
    triangle = np.array([[3.0, 1, 1], [1, 3, 1], [1, 1, 3]])
    with pytest.raises(ValueError, match="cycle"):
        bcd.tree_solve(triangle, np.ones(3))
