"""Rejected options of ``bcd.solve``: every bad value is reported by the
option's name, with the valid values when there is a list of them.

Rejected input to the problem classes is tested in test_problems.py; that of
penalties, forest-structured blocks and Gaussian processes in their own files."""
import numpy as np
import pytest

import bcd

from _data import N_FEATURES, dense_problem, random_problem, with_value


@pytest.fixture(scope="module")
def ls_problem():
    A, b = dense_problem()
    return bcd.LeastSquares(A, b)


# ------------------------------------------- rule, blocks, update and partition

@pytest.mark.parametrize("name, valid", [
    ("rule", ["cyclic", "random", "lipschitz", "gs"]),
    ("blocks", ["fixed", "variable"]),
    ("update", ["gradient"]),
    ("partition", ["order", "random", "sort", "avg"]),
])
@pytest.mark.parametrize("bad", ["nope", "near-miss", 3, ""])
def test_unknown_option_lists_valid_values(ls_problem, name, valid, bad):
    if bad == "near-miss":
        bad = valid[0].upper() + " "     # e.g. "CYCLIC ": matching is exact
    extra = {"blocks": "fixed"} if name == "partition" else {}
    with pytest.raises(ValueError, match=name) as excinfo:
        bcd.solve(ls_problem, **{name: bad}, **extra)
    message = str(excinfo.value)
    for value in valid:
        assert repr(value) in message, (value, message)


@pytest.mark.parametrize("name", ["rule", "blocks", "update"])
def test_none_option_is_an_error(ls_problem, name):
    with pytest.raises(ValueError, match=name):
        bcd.solve(ls_problem, **{name: None})


def test_partition_none_is_the_default(ls_problem):
    result = bcd.solve(ls_problem, blocks="fixed", partition=None, max_iter=5, tol=0)
    assert result.options["partition"] == "sort"


@pytest.mark.parametrize("name,value", [("lipschitz", "guess"), ("gsd_diagonal", "L"),
                                        ("gsq_method", "lasso")])
def test_unknown_rule_and_update_options(name, value):
    A, b = random_problem(20, 10, seed=13)
    with pytest.raises(ValueError, match=name):
        bcd.solve(bcd.LeastSquares(A, b), **{name: value})


# ------------------------------------------------------------------- block_size

@pytest.mark.parametrize("block_size", [0, -1, N_FEATURES + 1])
def test_block_size_out_of_range(ls_problem, block_size):
    with pytest.raises(ValueError, match="block_size"):
        bcd.solve(ls_problem, block_size=block_size)


@pytest.mark.parametrize("block_size", [2.5, 2.0, "3", True])
def test_block_size_not_integer(ls_problem, block_size):
    with pytest.raises((TypeError, ValueError), match="block_size"):
        bcd.solve(ls_problem, block_size=block_size)


def test_block_size_numpy_integer_and_full_size_accepted(ls_problem):
    r = bcd.solve(ls_problem, block_size=np.int64(N_FEATURES), max_iter=5)
    assert r.x.shape == (N_FEATURES,)
    assert np.all(np.isfinite(r.x))


# ------------------------------------------ stopping, callback and random_state

@pytest.mark.parametrize("tol, exc", [(-1e-3, ValueError), (np.nan, ValueError),
                                      ("small", TypeError)])
def test_bad_tol(ls_problem, tol, exc):
    with pytest.raises(exc, match="tol"):
        bcd.solve(ls_problem, tol=tol)


@pytest.mark.parametrize("max_time, exc", [(0, ValueError), (0.0, ValueError),
                                           (-1.0, ValueError), ("1s", TypeError)])
def test_bad_max_time(ls_problem, max_time, exc):
    with pytest.raises(exc, match="max_time"):
        bcd.solve(ls_problem, max_time=max_time)


@pytest.mark.parametrize("max_iter, exc", [(-1, ValueError), (1.5, TypeError),
                                           ("10", TypeError)])
def test_bad_max_iter(ls_problem, max_iter, exc):
    with pytest.raises(exc, match="max_iter"):
        bcd.solve(ls_problem, max_iter=max_iter)


@pytest.mark.parametrize("check_every", [0, -3, "sometimes", 2.5])
def test_bad_check_every(ls_problem, check_every):
    with pytest.raises((ValueError, TypeError), match="check_every"):
        bcd.solve(ls_problem, check_every=check_every)


@pytest.mark.parametrize("callback_every", [0, -1])
def test_bad_callback_every(ls_problem, callback_every):
    with pytest.raises(ValueError, match="callback_every"):
        bcd.solve(ls_problem, callback=lambda info: False, callback_every=callback_every)


@pytest.mark.parametrize("callback", [1, "print", [print]])
def test_non_callable_callback(ls_problem, callback):
    with pytest.raises(TypeError, match="callback"):
        bcd.solve(ls_problem, callback=callback)


@pytest.mark.parametrize("random_state", ["seed", 1.5, True])
def test_bad_random_state(ls_problem, random_state):
    with pytest.raises(TypeError, match="random_state"):
        bcd.solve(ls_problem, random_state=random_state)


def test_huge_integer_options_are_rejected_by_name():
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b)
    for name in ("max_iter", "check_every", "callback_every"):
        with pytest.raises(ValueError, match=name):
            bcd.solve(problem, **{name: 2**70})


# --------------------------------------------------------------- problem and x0

@pytest.mark.parametrize("problem", [
    np.ones((3, 3)), None, "least_squares", bcd.LeastSquares,
], ids=["array", "none", "string", "class"])
def test_problem_must_be_bcd_problem(problem):
    with pytest.raises(TypeError, match="problem"):
        bcd.solve(problem)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_x0_rejected(bad):
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b)
    x0 = with_value(np.zeros(N_FEATURES), 2, bad)
    with pytest.raises(ValueError, match=r"x0.*(NaN|infinity)"):
        bcd.solve(problem, x0=x0)


def test_x0_length_mismatch():
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b)
    with pytest.raises(ValueError, match=r"x0.*length"):
        bcd.solve(problem, x0=np.zeros(N_FEATURES + 1))
    with pytest.raises(ValueError, match=r"x0"):
        bcd.solve(problem, x0=np.zeros((N_FEATURES, 2)))


# --------------------------------------------- parameters and inputs rejected

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


def test_lazy_entropy_seed_words_and_draws():
    from bcd._validation import LazyEntropy, seed_words
    words = [seed_words(LazyEntropy()) for _ in range(4)]
    for pair in words:
        assert len(pair) == 2 and all(isinstance(w, int) and 0 <= w < 2 ** 63 for w in pair)
    assert len(set(words)) == 4                     # fresh entropy every time
    source = LazyEntropy()
    perm = source.permutation(10)                   # any other draw: a Generator
    assert sorted(perm.tolist()) == list(range(10))
    assert len(seed_words(source)) == 2


def test_order_partition_is_consecutive_blocks():
    from bcd.core.blocks import partition_arrays
    L = np.array([1.0, 0.0, 2.0, 3.0, 0.0, 1.0, 1.0, 5.0])
    for coordinates in (None, np.array([0, 2, 4, 5, 7], dtype=np.int32)):
        active = np.flatnonzero(L > 0) if coordinates is None else \
            coordinates[L[coordinates] > 0]
        for size in (1, 2, 3, 10):
            ptr, coords = partition_arrays(L, size, "order", None, coordinates)
            assert ptr.dtype == np.int32 and coords.dtype == np.int32
            blocks = [coords[ptr[u]:ptr[u + 1]].tolist() for u in range(len(ptr) - 1)]
            expected = [active[i:i + size].tolist() for i in range(0, active.size, size)]
            assert blocks == expected
