"""Input validation: rejected inputs, accepted layouts and dtypes, and the
guarantee that the caller's data is never modified."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import bcd

N_SAMPLES, N_FEATURES = 30, 12


# ------------------------------------------------------------------ helpers

def dense_problem(m=N_SAMPLES, n=N_FEATURES, seed=0):
    """A seeded, well-conditioned dense least-squares system (C-ordered)."""
    rs = np.random.RandomState(seed)
    A = rs.randn(m, n)
    b = rs.randn(m)
    return A, b


def sparse_problem(m=N_SAMPLES, n=N_FEATURES, seed=0, density=0.5):
    rs = np.random.RandomState(seed)
    A = sp.random(m, n, density=density, random_state=rs, format="csc")
    A.data = rs.randn(A.nnz)
    # every column gets at least one entry so the system has full column rank
    A = sp.csc_matrix(A + sp.eye(m, n, format="csc"))
    b = rs.randn(m)
    return A, b


def labels(m=N_SAMPLES, seed=0):
    """Labels in {-1, +1} with both classes present."""
    rs = np.random.RandomState(seed + 10)
    y = np.where(rs.rand(m) < 0.5, -1.0, 1.0)
    y[0], y[1] = -1.0, 1.0
    return y


def solve_quietly(problem, **kwargs):
    kwargs.setdefault("tol", 1e-10)
    kwargs.setdefault("max_iter", 100000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        return bcd.solve(problem, **kwargs)


def ls_solution(A, b, l2=0.0, **kwargs):
    return solve_quietly(bcd.LeastSquares(A, b, l2=l2), **kwargs).x


def with_value(arr, index, value):
    out = np.array(arr, dtype=np.float64)
    out[index] = value
    return out


# ----------------------------------------------------------- NaN and inf

@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_dense_A_rejected(bad):
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.LeastSquares(with_value(A, (3, 4), bad), b)
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.Logistic(with_value(A, (3, 4), bad), labels())


@pytest.mark.parametrize("fmt", ["csc", "csr", "coo", "lil"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_sparse_A_rejected(fmt, bad):
    A, b = sparse_problem()
    A = A.copy()
    A.data[2] = bad
    A = A.asformat(fmt)
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.LeastSquares(A, b)
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.Logistic(A, labels())


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_b_rejected(bad):
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b.*(NaN|infinity)"):
        bcd.LeastSquares(A, with_value(b, 5, bad))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_y_rejected(bad):
    A, _ = dense_problem()
    with pytest.raises(ValueError, match=r"\by\b"):
        bcd.Logistic(A, with_value(labels(), 5, bad))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_x0_rejected(bad):
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b)
    x0 = with_value(np.zeros(N_FEATURES), 2, bad)
    with pytest.raises(ValueError, match=r"x0.*(NaN|infinity)"):
        bcd.solve(problem, x0=x0)


# ------------------------------------------------------------------ shapes

def test_b_length_mismatch():
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b.*length"):
        bcd.LeastSquares(A, b[:-1])
    with pytest.raises(ValueError, match=r"\bb\b.*length"):
        bcd.LeastSquares(A, np.append(b, 1.0))


def test_y_length_mismatch():
    A, _ = dense_problem()
    with pytest.raises(ValueError, match=r"\by\b.*length"):
        bcd.Logistic(A, labels()[:-1])


def test_x0_length_mismatch():
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b)
    with pytest.raises(ValueError, match=r"x0.*length"):
        bcd.solve(problem, x0=np.zeros(N_FEATURES + 1))
    with pytest.raises(ValueError, match=r"x0"):
        bcd.solve(problem, x0=np.zeros((N_FEATURES, 2)))


def test_b_two_columns_rejected():
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b.*1-dimensional"):
        bcd.LeastSquares(A, np.column_stack([b, b]))


def test_b_single_column_accepted():
    A, b = dense_problem()
    x_col = ls_solution(A, b[:, None])
    x_flat = ls_solution(A, b)
    assert np.allclose(x_col, x_flat)


@pytest.mark.parametrize("shape", [(N_SAMPLES,), (2, N_SAMPLES, N_FEATURES)])
def test_A_wrong_ndim_rejected(shape):
    A = np.ones(shape)
    with pytest.raises(ValueError, match=r"\bA\b.*2-dimensional"):
        bcd.LeastSquares(A, np.ones(N_SAMPLES))
    with pytest.raises(ValueError, match=r"\bA\b.*2-dimensional"):
        bcd.Logistic(A, labels())


def test_A_scalar_rejected():
    with pytest.raises(ValueError, match=r"\bA\b"):
        bcd.LeastSquares(np.float64(1.0), [1.0])


@pytest.mark.parametrize("A", [
    np.zeros((0, 5)),
    np.zeros((5, 0)),
    sp.csc_matrix((0, 0)),
    sp.csr_matrix((0, 5)),
    sp.csc_matrix((5, 0)),
], ids=["dense-0x5", "dense-5x0", "csc-0x0", "csr-0x5", "csc-5x0"])
def test_empty_A_rejected(A):
    b = np.zeros(A.shape[0])
    with pytest.raises(ValueError, match=r"\bA\b.*non-empty"):
        bcd.LeastSquares(A, b)


# ------------------------------------------------------------- labels

@pytest.mark.parametrize("y", [
    np.ones(N_SAMPLES),                                   # one class
    np.arange(N_SAMPLES) % 3 - 1.0,                       # {-1, 0, 1}
    np.arange(N_SAMPLES) % 2 + 1.0,                       # {1, 2}
    np.arange(N_SAMPLES) % 2 - 1.0,                       # {-1, 0}
    np.where(np.arange(N_SAMPLES) % 2, 1.0, 0.5),         # {0.5, 1}
    np.where(np.arange(N_SAMPLES) % 2, 1.0, -0.5),        # {-0.5, 1}
], ids=["single", "three", "one-two", "minus-one-zero", "half-one", "neg-half-one"])
def test_logistic_bad_label_sets(y):
    A, _ = dense_problem()
    with pytest.raises(ValueError, match=r"\by\b.*two classes"):
        bcd.Logistic(A, y)


def test_logistic_label_encodings_agree():
    A, _ = sparse_problem()
    y = labels()
    y01 = (y > 0).astype(np.int64)
    ybool = y > 0
    opts = dict(rule="gs", blocks="variable", block_size=3, tol=1e-10)
    r_pm = solve_quietly(bcd.Logistic(A, y, l2=1.0), **opts)
    r_01 = solve_quietly(bcd.Logistic(A, y01, l2=1.0), **opts)
    r_bool = solve_quietly(bcd.Logistic(A, ybool, l2=1.0), **opts)
    assert r_pm.converged and r_01.converged and r_bool.converged
    assert np.allclose(r_pm.x, r_01.x, rtol=1e-8, atol=1e-10)
    assert np.allclose(r_pm.x, r_bool.x, rtol=1e-8, atol=1e-10)
    assert np.any(r_pm.x != 0)


# ------------------------------------------------------------- options

@pytest.fixture(scope="module")
def ls_problem():
    A, b = dense_problem()
    return bcd.LeastSquares(A, b)


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
    with pytest.raises(ValueError, match=name) as excinfo:
        bcd.solve(ls_problem, **{name: bad})
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


@pytest.mark.parametrize("l2, exc", [
    (-1.0, ValueError), (-1e-12, ValueError), (np.nan, ValueError), (np.inf, ValueError),
    ("1.0", TypeError), (None, TypeError),
])
@pytest.mark.parametrize("cls", ["LeastSquares", "Logistic"])
def test_bad_l2(cls, l2, exc):
    A, b = dense_problem()
    target = b if cls == "LeastSquares" else labels()
    with pytest.raises(exc, match="l2"):
        getattr(bcd, cls)(A, target, l2=l2)


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


@pytest.mark.parametrize("problem", [
    np.ones((3, 3)), None, "least_squares", bcd.LeastSquares,
], ids=["array", "none", "string", "class"])
def test_problem_must_be_bcd_problem(problem):
    with pytest.raises(TypeError, match="problem"):
        bcd.solve(problem)


# ------------------------------------------------- layouts and read-only data

def test_non_contiguous_dense_inputs():
    rs = np.random.RandomState(3)
    A_wide = rs.randn(N_SAMPLES, 2 * N_FEATURES)
    b_long = rs.randn(2 * N_SAMPLES)
    A_view, b_view = A_wide[:, ::2], b_long[::2]
    assert not A_view.flags.c_contiguous and not A_view.flags.f_contiguous
    assert not b_view.flags.c_contiguous
    x0_long = rs.randn(2 * N_FEATURES)
    x0_view = x0_long[::2]

    for kwargs in [dict(rule="gs", blocks="variable"), dict(rule="cyclic", blocks="fixed")]:
        ref = ls_solution(np.ascontiguousarray(A_view), np.ascontiguousarray(b_view),
                          block_size=3, x0=np.ascontiguousarray(x0_view), **kwargs)
        got = ls_solution(A_view, b_view, block_size=3, x0=x0_view, **kwargs)
        assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_transposed_C_array():
    rs = np.random.RandomState(4)
    At = rs.randn(N_FEATURES, N_SAMPLES)        # C-ordered, so At.T is F-ordered
    b = rs.randn(N_SAMPLES)
    ref = ls_solution(np.ascontiguousarray(At.T), b, block_size=3)
    got = ls_solution(At.T, b, block_size=3)
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_non_contiguous_labels():
    A, _ = dense_problem()
    y_long = np.repeat(labels(), 2)
    y_view = y_long[::2]
    ref = solve_quietly(bcd.Logistic(A, np.ascontiguousarray(y_view), l2=1.0)).x
    got = solve_quietly(bcd.Logistic(A, y_view, l2=1.0)).x
    assert np.allclose(got, ref)


def _readonly(arr):
    arr = np.array(arr, copy=True, order="K")
    arr.setflags(write=False)
    return arr


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("rule", ["gs", "cyclic"])
def test_read_only_dense_inputs(order, rule):
    A, b = dense_problem()
    A = np.asarray(A, order=order)
    x0 = np.linspace(-1, 1, N_FEATURES)
    ref = ls_solution(A.copy(order=order), b.copy(), rule=rule, block_size=3, x0=x0.copy())
    A_ro, b_ro, x0_ro = _readonly(A), _readonly(b), _readonly(x0)
    got = ls_solution(A_ro, b_ro, rule=rule, block_size=3, x0=x0_ro)
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)

    y = labels()
    ref = solve_quietly(bcd.Logistic(A, y, l2=1.0), rule=rule, block_size=3).x
    got = solve_quietly(bcd.Logistic(A_ro, _readonly(y), l2=1.0), rule=rule, block_size=3).x
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csc", "csr", "coo"])
@pytest.mark.parametrize("rule", ["gs", "random"])
def test_read_only_sparse_arrays(fmt, rule):
    A, b = sparse_problem()
    A = A.asformat(fmt)
    ref = ls_solution(A.copy(), b, rule=rule, block_size=3, random_state=0)
    A_ro = A.copy()
    A_ro.data.setflags(write=False)
    for attr in ("indices", "indptr", "row", "col"):
        if hasattr(A_ro, attr):
            getattr(A_ro, attr).setflags(write=False)
    got = ls_solution(A_ro, _readonly(b), rule=rule, block_size=3, random_state=0)
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ dtypes

def test_integer_dtype_inputs():
    rs = np.random.RandomState(5)
    A = rs.randint(-5, 6, size=(N_SAMPLES, N_FEATURES)).astype(np.int64)
    b = rs.randint(-5, 6, size=N_SAMPLES).astype(np.int64)
    p_int = bcd.LeastSquares(A, b)
    assert p_int.dtype == np.float64
    r_int = solve_quietly(p_int, block_size=3)
    r_float = solve_quietly(bcd.LeastSquares(A.astype(np.float64), b.astype(np.float64)),
                            block_size=3)
    assert r_int.x.dtype == np.float64
    assert r_int.converged
    assert np.allclose(r_int.x, r_float.x, rtol=1e-12, atol=1e-14)

    r_sparse = solve_quietly(bcd.LeastSquares(sp.csr_matrix(A), b), block_size=3)
    assert np.allclose(r_sparse.x, r_float.x, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("make", [np.asarray, sp.csr_matrix], ids=["dense", "sparse"])
def test_complex_A_rejected(make):
    A, b = dense_problem()
    with pytest.raises(TypeError, match=r"\bA\b.*complex"):
        bcd.LeastSquares(make(A + 1j * A), b)


def test_complex_b_rejected():
    A, b = dense_problem()
    with pytest.raises(TypeError, match=r"\bb\b"):
        bcd.LeastSquares(A, b + 0j)


@pytest.mark.parametrize("A", [
    np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=object),
    np.array([["1", "2"], ["3", "4"], ["5", "6"]]),
    np.array([[b"1", b"2"], [b"3", b"4"], [b"5", b"6"]]),
], ids=["object", "str", "bytes"])
def test_non_numeric_A_rejected(A):
    with pytest.raises(TypeError, match=r"\bA\b"):
        bcd.LeastSquares(A, np.ones(3))


def test_string_labels_rejected():
    A, _ = dense_problem()
    y = np.where(labels() > 0, "pos", "neg")
    with pytest.raises(TypeError, match=r"\by\b"):
        bcd.Logistic(A, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_float32_input(sparse):
    A, b = (sparse_problem() if sparse else dense_problem())
    A32 = A.astype(np.float32)
    A64 = A32.astype(np.float64)               # the same numbers in float64
    opts = dict(rule="gs", blocks="variable", block_size=3, tol=1e-10)
    r32 = solve_quietly(bcd.LeastSquares(A32, b, l2=1.0), **opts)
    r64 = solve_quietly(bcd.LeastSquares(A64, b, l2=1.0), **opts)
    assert r32.x.dtype == np.float32
    assert r64.x.dtype == np.float64
    assert r32.converged
    np.testing.assert_allclose(r32.x, r64.x, rtol=1e-5, atol=1e-6)

    r32 = solve_quietly(bcd.Logistic(A32, labels(), l2=1.0), **opts)
    r64 = solve_quietly(bcd.Logistic(A64, labels(), l2=1.0), **opts)
    assert r32.x.dtype == np.float32
    np.testing.assert_allclose(r32.x, r64.x, rtol=1e-5, atol=1e-6)


def test_float32_callback_iterate_dtype():
    A, b = dense_problem()
    seen = []
    bcd.solve(bcd.LeastSquares(A.astype(np.float32), b, l2=1.0), max_iter=3,
              callback=lambda info: seen.append(info.x.dtype))
    assert seen and all(d == np.float32 for d in seen)


# ----------------------------------------------- caller's data is not modified

def _noncanonical_csc():
    """A 6 x 4 CSC matrix with unsorted row indices and duplicate entries."""
    data = np.array([1.0, 2.0, -1.5, 0.5, 3.0, 1.0, 2.5, -2.0, 1.25, 4.0])
    indices = np.array([3, 0, 3, 5, 1, 2, 1, 4, 0, 2], dtype=np.int32)
    indptr = np.array([0, 3, 5, 8, 10], dtype=np.int32)
    A = sp.csc_matrix((data, indices, indptr), shape=(6, 4))
    assert not A.has_canonical_format
    return A


def _coo_with_duplicates():
    rows = np.array([0, 1, 2, 3, 4, 5, 0, 2, 2, 5])
    cols = np.array([0, 1, 2, 3, 0, 1, 0, 3, 2, 3])
    data = np.array([1.0, 2.0, 3.0, -1.0, 0.5, 1.5, 2.0, -0.5, 1.0, 2.0])
    return sp.coo_matrix((data, (rows, cols)), shape=(6, 4))


def _sparse_arrays(A):
    names = [n for n in ("data", "indices", "indptr", "row", "col", "coords")
             if hasattr(A, n)]
    out = {}
    for name in names:
        value = getattr(A, name)
        if isinstance(value, tuple):
            for i, v in enumerate(value):
                out[f"{name}{i}"] = np.array(v, copy=True)
        elif isinstance(value, np.ndarray):
            out[name] = value.copy()
        else:   # lil: object arrays of lists
            out[name] = [list(v) for v in value]
    if A.format == "lil":
        out["rows"] = [list(r) for r in A.rows]
        out["data"] = [list(r) for r in A.data]
    return out


def _assert_same_sparse(before, A):
    after = _sparse_arrays(A)
    assert before.keys() == after.keys()
    for name in before:
        if isinstance(before[name], np.ndarray):
            assert before[name].dtype == after[name].dtype, name
            assert np.array_equal(before[name], after[name]), name
        else:
            assert before[name] == after[name], name


SOLVE_VARIANTS = [
    dict(rule="gs", blocks="variable", block_size=2),
    dict(rule="gs", blocks="fixed", block_size=2, partition="sort"),
    dict(rule="cyclic", blocks="fixed", block_size=3, partition="order"),
    dict(rule="random", blocks="variable", block_size=2),
    dict(rule="lipschitz", blocks="fixed", block_size=2, partition="avg"),
]


def _solve_all_variants(problem, x0):
    for kwargs in SOLVE_VARIANTS:
        solve_quietly(problem, x0=x0, max_iter=200, random_state=0, **kwargs)


def test_dense_inputs_not_modified():
    A, b = dense_problem()
    x0 = np.linspace(-1, 1, N_FEATURES)
    y = labels()
    for A_in in (A, np.asfortranarray(A)):
        A_copy, b_copy, x0_copy, y_copy = A_in.copy(order="K"), b.copy(), x0.copy(), y.copy()
        _solve_all_variants(bcd.LeastSquares(A_in, b, l2=0.1), x0)
        _solve_all_variants(bcd.Logistic(A_in, y, l2=0.1), x0)
        assert np.array_equal(A_in, A_copy)
        assert A_in.flags.c_contiguous == A_copy.flags.c_contiguous
        assert np.array_equal(b, b_copy)
        assert np.array_equal(x0, x0_copy)
        assert np.array_equal(y, y_copy)


def test_integer_and_list_inputs_not_modified():
    A = np.arange(24, dtype=np.int64).reshape(6, 4) % 5 - 2
    b = [1, 0, -1, 2, 3, 1]
    A_copy, b_copy = A.copy(), list(b)
    _solve_all_variants(bcd.LeastSquares(A, b, l2=0.1), np.zeros(4))
    assert np.array_equal(A, A_copy) and A.dtype == np.int64
    assert b == b_copy


@pytest.mark.parametrize("make", [
    lambda: sp.csc_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.csr_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.coo_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.lil_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.csc_array(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.csc_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2, dtype=np.float32),
    lambda: sp.csc_matrix((np.arange(24.0).reshape(6, 4) % 5 - 2).astype(np.int64)),
    _noncanonical_csc,
    _coo_with_duplicates,
], ids=["csc", "csr", "coo", "lil", "csc_array", "csc-float32", "csc-int64",
        "csc-noncanonical", "coo-duplicates"])
def test_sparse_inputs_not_modified(make):
    A = make()
    fmt, dtype, nnz = A.format, A.dtype, A.nnz
    dense_before = A.toarray()
    before = _sparse_arrays(A)
    b = np.arange(6, dtype=np.float64) - 2.5
    b_copy = b.copy()
    y = np.array([1, -1, 1, -1, -1, 1], dtype=np.float64)
    y_copy = y.copy()
    x0 = np.array([0.5, -0.25, 1.0, 0.0])
    x0_copy = x0.copy()

    _solve_all_variants(bcd.LeastSquares(A, b, l2=0.1), x0)
    _solve_all_variants(bcd.Logistic(A, y, l2=0.1), x0)

    assert A.format == fmt and A.dtype == dtype and A.nnz == nnz
    _assert_same_sparse(before, A)
    assert np.array_equal(A.toarray(), dense_before)
    assert np.array_equal(b, b_copy)
    assert np.array_equal(y, y_copy)
    assert np.array_equal(x0, x0_copy)


def test_noncanonical_csc_matches_canonical():
    A = _noncanonical_csc()
    b = np.arange(6, dtype=np.float64) - 2.5
    canonical = A.copy()
    canonical.sum_duplicates()
    ref = ls_solution(canonical, b, l2=0.1, block_size=2)
    got = ls_solution(A, b, l2=0.1, block_size=2)
    assert np.allclose(got, ref, rtol=1e-10, atol=1e-12)
    assert np.allclose(got, ls_solution(A.toarray(), b, l2=0.1, block_size=2))


def test_problem_does_not_alias_target():
    """Changing b after building the problem must not change the problem."""
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b, l2=1.0)
    ref = solve_quietly(problem, block_size=3).x
    b[:] = 0.0
    again = solve_quietly(problem, block_size=3).x
    assert np.allclose(again, ref)


# ------------------------------------------------------------ random_state

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


# ---------------------------------------------------------------- registry

@pytest.fixture
def registered_subclass():
    class RidgeLeastSquares(bcd.LeastSquares):
        def __init__(self, A, b, l2=1.0):
            super().__init__(A, b, l2=l2)

    name = "ridge_least_squares_test"
    yield name, RidgeLeastSquares
    bcd.problems._REGISTRY.pop(name, None)


def test_registry_builtin_names():
    names = bcd.problems.available()
    assert "least_squares" in names
    assert "logistic" in names


def test_registry_make_builtins():
    A, b = dense_problem()
    p = bcd.problems.make("least_squares", A=A, b=b)
    assert isinstance(p, bcd.LeastSquares)
    assert p.n_features == N_FEATURES
    q = bcd.problems.make("logistic", A=A, y=labels(), l2=0.5)
    assert isinstance(q, bcd.Logistic)
    assert q.l2 == 0.5


def test_registry_make_unknown_lists_names():
    with pytest.raises(ValueError, match="nope") as excinfo:
        bcd.problems.make("nope")
    message = str(excinfo.value)
    for name in bcd.problems.available():
        assert repr(name) in message


def test_registry_make_validates_arguments():
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b"):
        bcd.problems.make("least_squares", A=A, b=b[:-1])


@pytest.mark.parametrize("cls", [dict, object, 42, lambda A, b: None,
                                 bcd.LeastSquares(np.eye(2), [1.0, 2.0])],
                         ids=["dict", "object", "int", "function", "instance"])
def test_register_rejects_non_problem(cls):
    before = dict(bcd.problems._REGISTRY)
    with pytest.raises(TypeError, match="Problem"):
        bcd.problems.register("not_a_problem_test", cls)
    assert "not_a_problem_test" not in bcd.problems.available()
    assert bcd.problems._REGISTRY == before


def test_register_subclass(registered_subclass):
    name, cls = registered_subclass
    bcd.problems.register(name, cls)
    assert name in bcd.problems.available()
    A, b = dense_problem()
    p = bcd.problems.make(name, A=A, b=b)
    assert isinstance(p, cls)
    assert p.l2 == 1.0
    r = solve_quietly(p, block_size=3)
    assert r.converged
    # the built-in entry is untouched
    assert type(bcd.problems.make("least_squares", A=A, b=b)) is bcd.LeastSquares


def test_registry_cleanup_after_subclass_test():
    assert "ridge_least_squares_test" not in bcd.problems.available()


# ---------------------------------------------- max_iter = 0 and trivial optima

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


# ---------------------------------------------------------- all-zero column

@pytest.mark.parametrize("sparse", [False, True, "explicit-zeros"])
@pytest.mark.parametrize("kwargs", [
    dict(rule="gs", blocks="variable", block_size=3),
    dict(rule="gs", blocks="variable", block_size=N_FEATURES),
    dict(rule="gs", blocks="fixed", block_size=3, partition="sort"),
    dict(rule="cyclic", blocks="fixed", block_size=3, partition="order"),
    dict(rule="random", blocks="variable", block_size=N_FEATURES),
    dict(rule="lipschitz", blocks="fixed", block_size=4, partition="avg"),
], ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_zero_column(sparse, kwargs):
    A, b = dense_problem()
    A = A.copy()
    A[:, 4] = 0.0
    if sparse == "explicit-zeros":
        # the column's entries are stored, but all of them are zero
        A = sp.csc_matrix(A + 1e-3)
        A.data[A.indptr[4]:A.indptr[5]] = 0.0
        assert A.indptr[5] - A.indptr[4] == N_SAMPLES
    elif sparse:
        A = sp.csc_matrix(A)
        assert A[:, 4].nnz == 0
    r = solve_quietly(bcd.LeastSquares(A, b), tol=1e-8, random_state=0, **kwargs)
    assert r.converged, r
    assert r.x[4] == 0.0
    assert np.all(np.isfinite(r.x))
    assert np.isfinite(r.objective) and np.isfinite(r.optimality)
    assert np.all(np.isfinite(r.history.objective))
    assert np.all(np.isfinite(r.history.optimality))
    dense = A.toarray() if sp.issparse(A) else A
    x_ref = np.linalg.lstsq(np.delete(dense, 4, axis=1), b, rcond=None)[0]
    assert np.allclose(np.delete(r.x, 4), x_ref, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("sparse", [False, True])
def test_zero_column_logistic(sparse):
    A, _ = dense_problem()
    A = A.copy()
    A[:, 0] = 0.0
    if sparse:
        A = sp.csr_matrix(A)
    r = solve_quietly(bcd.Logistic(A, labels(), l2=0.0), block_size=3, tol=1e-6,
                      max_iter=20000)
    assert r.x[0] == 0.0
    assert np.all(np.isfinite(r.x))
    assert np.isfinite(r.objective)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("blocks", ["variable", "fixed"])
def test_all_zero_matrix(sparse, blocks):
    A = np.zeros((N_SAMPLES, N_FEATURES))
    if sparse:
        A = sp.csc_matrix(A)
    b = np.ones(N_SAMPLES)
    x0 = np.linspace(-1, 1, N_FEATURES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bcd.ConvergenceWarning)
        r = bcd.solve(bcd.LeastSquares(A, b), blocks=blocks, block_size=3)
        r0 = bcd.solve(bcd.LeastSquares(A, b), blocks=blocks, block_size=3, x0=x0)
    assert r.converged and r.n_iter == 0
    assert np.array_equal(r.x, np.zeros(N_FEATURES))
    assert r.objective == pytest.approx(0.5 * N_SAMPLES)
    # the gradient is zero everywhere, so any start is optimal and kept
    assert r0.converged and r0.n_iter == 0
    assert np.array_equal(r0.x, x0)


# ----------------------------------------------------- ConvergenceWarning

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
        r = bcd.solve(bcd.LeastSquares(A, b), max_iter=1000, tol=1e-12,
                      callback=lambda info: info.iteration >= 2)
    assert r.status == "callback" and r.n_iter == 2
    assert not [w for w in caught if issubclass(w.category, bcd.ConvergenceWarning)]


# -------------------------------------------------------- edge-case limits

def test_huge_integer_options_are_rejected_by_name():
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b)
    for name in ("max_iter", "check_every", "callback_every"):
        with pytest.raises(ValueError, match=name):
            bcd.solve(problem, **{name: 2**70})


def test_infinite_max_time_means_no_limit():
    A, b = dense_problem()
    r = bcd.solve(bcd.LeastSquares(A, b), max_time=np.inf, tol=1e-8, max_iter=100000)
    assert r.converged


def test_overflowing_column_norms_are_rejected():
    A, b = dense_problem()
    A[:, 3] = 1e160
    with pytest.raises(ValueError, match="overflows"):
        bcd.LeastSquares(A, b)


def test_registering_an_alias_does_not_rename_the_class():
    try:
        bcd.problems.register("ls_alias", bcd.LeastSquares)
        assert bcd.problems.make("ls_alias", A=np.eye(2), b=[1.0, 2.0]).__class__ is bcd.LeastSquares
        assert "least_squares" in bcd.problems.available()
        assert bcd.problems.make("least_squares", A=np.eye(2), b=[1.0, 2.0]) is not None
    finally:
        bcd.problems._REGISTRY.pop("ls_alias", None)
