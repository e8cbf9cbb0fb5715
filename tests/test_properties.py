"""Property-based tests of bcd.solve (hypothesis, reproducible: derandomized).

Random small problems of every class (at most 30 coordinates), given as
dense arrays (C or Fortran order) or in every SciPy sparse format (matrices
and arrays), float64 or float32, with their data scaled by 10**k for k up
to +-100 (+-30 for float32, whose range is smaller), solved with a random
valid combination of rule, blocks, update, options and penalty drawn from
the spec tables, from zero or a random start, with ``max_time=2``.

The property: the solve either

* reports ``converged=True`` at a finite point whose optimality is
  certified independently: the KKT residual recomputed in NumPy from the
  problem's data (not by bcd) is at most a multiple of ``tol`` plus the
  rounding error of evaluating the gradient at that point (which grows with
  the magnitude of the terms summed and with the precision of the returned
  x: float32 for float32 data); or
* reports ``converged=False`` with another status from the documented
  list, and a ConvergenceWarning;

and in both cases the reported objective is F(x) at the returned x (up to
rounding), a non-finite x or objective comes only with status "diverged",
and no input (the matrix in its format, the vectors, x0, penalty weights)
is modified.

Hypothesis draws plain descriptions of the cases; each is built and solved
in a worker process (forked from a forkserver that has the modules loaded),
so that a crash of the compiled code fails one example, with its
description, instead of the test run.  ``test_every_valid_configuration``
enumerates every valid configuration of the spec tables the same way.
"""
import copy
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import traceback
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from scipy.special import expit, logsumexp

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import bcd
from bcd.core.assembly import TABLES
from bcd.core.specs import check_combination

BLOCK_TABLE, RULE_TABLE, UPDATE_TABLE = TABLES

STATUSES = {"converged", "max_iter", "max_time", "callback", "stalled", "interrupted",
            "diverged"}
MAX_ITER = 3000
MAX_TIME = 2.0
#: seconds after which a solve in the worker counts as hung (max_time is 2)
HANG_TIMEOUT = 60.0

KINDS = ["least_squares", "logistic", "multinomial", "poisson", "quadratic",
         "label_propagation", "gaussian_process"]
SPARSE_FORMATS = ["csr", "csc", "coo", "lil", "dok", "bsr", "dia",
                  "csr_array", "csc_array", "coo_array"]
MATRIX_FORMATS = ["dense", "dense_fortran"] + SPARSE_FORMATS
PENALTIES = ["none", "l1", "l1_weights", "l1_positive", "nonnegative", "box", "box_half"]

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow],
                    phases=(Phase.explicit, Phase.generate, Phase.shrink), print_blob=False)


# ------------------------------------------------------------------ data

def _in_format(M, fmt, dtype):
    """M (a float64 ndarray) as ``dtype`` in the format ``fmt``."""
    M = np.asarray(M, dtype=dtype)
    if fmt == "dense":
        return np.ascontiguousarray(M)
    if fmt == "dense_fortran":
        return np.asfortranarray(M)
    if fmt.endswith("_array"):
        return getattr(sp, fmt)(M)
    return sp.csr_matrix(M).asformat(fmt)


def _snapshot(obj):
    """Copies of everything an input holds (its storage, for sparse matrices)."""
    if obj is None:
        return None
    if sp.issparse(obj):
        fmt = obj.format
        if fmt in ("csr", "csc", "bsr"):
            parts = (obj.data, obj.indices, obj.indptr)
        elif fmt == "coo":
            parts = (obj.data, obj.row, obj.col)
        elif fmt == "dia":
            parts = (obj.data, obj.offsets)
        elif fmt == "lil":
            parts = (obj.data, obj.rows)
        elif fmt == "dok":
            keys = sorted(obj.keys())
            parts = (np.array(keys), np.array([obj[key] for key in keys]))
        else:  # pragma: no cover - every format is listed
            raise AssertionError(fmt)
        return (type(obj), fmt, obj.shape, obj.dtype, [copy.deepcopy(np.asarray(p)) for p in parts])
    arr = np.asarray(obj)
    return (type(obj), arr.dtype, arr.shape, arr.flags.c_contiguous, arr.flags.f_contiguous,
            arr.copy())


def _same_snapshot(a, b):
    if a is None or b is None:
        return a is b
    if a[0] is not b[0] or len(a) != len(b):
        return False
    for u, v in zip(a[1:], b[1:]):
        if isinstance(u, list):
            if len(u) != len(v) or not all(x.dtype == y.dtype and _equal(x, y)
                                           for x, y in zip(u, v)):
                return False
        elif isinstance(u, np.ndarray):
            if u.dtype != v.dtype or not _equal(u, v):
                return False
        elif u != v:
            return False
    return True


def _equal(x, y):
    if x.dtype == object:
        return x.shape == y.shape and all(
            (np.array_equal(p, q, equal_nan=True) if isinstance(p, (list, np.ndarray)) else
             (p == q or (p != p and q != q)))
            for p, q in zip(x.ravel(), y.ravel()))
    return x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")


class Case:
    """A problem with independent NumPy references.

    ``grad(x)``: the gradient of f computed from the data in float64;
    ``mag(x)``: per coordinate, the magnitude of the terms that sum to the
    gradient and of its change under a relative perturbation of x (the
    scale of its rounding error); ``value(x)``: f(x); ``value_mag(x)``: the
    magnitude of the terms of f.  ``x_scale``: the size of a solution.
    """

    def __init__(self, kind, n, inputs, grad, mag, value, value_mag, x_scale, size):
        self.kind, self.n, self.inputs = kind, n, inputs
        self.grad, self.mag, self.value, self.value_mag = grad, mag, value, value_mag
        self.x_scale, self.size = x_scale, size
        self.problem = None
        self.penalty = None
        self.label = {}

    def __repr__(self):
        return f"Case({self.label})"


def _sparsify(rs, M, density):
    keep = rs.rand(*M.shape) < density
    return np.where(keep, M, 0.0)


def _linear_case(kind, rs, m, n, fmt, dtype, s, extra):
    A = _sparsify(rs, rs.randn(m, n), extra["density"]) * s
    A_in = _in_format(A, fmt, dtype)
    A = np.asarray(A_in.toarray() if sp.issparse(A_in) else A_in, dtype=np.float64)
    absA = np.abs(A)
    if kind == "least_squares":
        l2 = extra["l2"] * s * s
        b_in = rs.randn(m).astype(dtype)
        b = b_in.astype(np.float64)

        def grad(x):
            return A.T @ (A @ x - b) + l2 * x

        def mag(x):
            return absA.T @ (absA @ np.abs(x) + np.abs(b)) + l2 * np.abs(x)

        def value(x):
            r = A @ x - b
            return 0.5 * r @ r + 0.5 * l2 * x @ x

        def value_mag(x):
            r = absA @ np.abs(x) + np.abs(b)
            return 0.5 * r @ r + 0.5 * l2 * x @ x

        inputs = dict(A=A_in, b=b_in)
        return Case(kind, n, inputs, grad, mag, value, value_mag, 1.0 / s, m + n), \
            lambda penalty: bcd.LeastSquares(A_in, b_in, l2=l2, penalty=penalty)
    if kind == "logistic":
        l2 = extra["l2"] * s * s
        t = np.where(rs.rand(m) < 0.5, -1.0, 1.0)
        t[:2] = [-1.0, 1.0]
        y_in = (t if extra["pm"] else (t > 0).astype(float)).astype(dtype)

        def grad(x):
            return A.T @ (-t * expit(-t * (A @ x))) + l2 * x

        def mag(x):
            return absA.T @ (1.0 + absA @ np.abs(x)) + l2 * np.abs(x)

        def value(x):
            return np.sum(np.logaddexp(0.0, -t * (A @ x))) + 0.5 * l2 * x @ x

        def value_mag(x):
            return np.sum(absA @ np.abs(x) + 1.0) + 0.5 * l2 * x @ x

        inputs = dict(A=A_in, y=y_in)
        return Case(kind, n, inputs, grad, mag, value, value_mag, 1.0 / s, m + n), \
            lambda penalty: bcd.Logistic(A_in, y_in, l2=l2, penalty=penalty)
    if kind == "poisson":
        l2 = extra["l2"] * s * s
        y_in = rs.poisson(1.0, m).astype(dtype)
        y = y_in.astype(np.float64)

        def grad(x):
            return A.T @ (np.exp(A @ x) - y) + l2 * x

        def mag(x):
            e = np.exp(A @ x)
            return absA.T @ (e * (1.0 + absA @ np.abs(x)) + y) + l2 * np.abs(x)

        def value(x):
            z = A @ x
            return np.sum(np.exp(z) - y * z) + 0.5 * l2 * x @ x

        def value_mag(x):
            u = absA @ np.abs(x)
            return np.sum(np.exp(A @ x) * (1.0 + u) + y * u) + 0.5 * l2 * x @ x

        inputs = dict(A=A_in, y=y_in)
        return Case(kind, n, inputs, grad, mag, value, value_mag, 1.0 / s, m + n), \
            lambda penalty: bcd.Poisson(A_in, y_in, l2=l2, penalty=penalty)
    raise AssertionError(kind)


def _multinomial_case(rs, m, d, k, fmt, dtype, s, extra):
    A = _sparsify(rs, rs.randn(m, d), extra["density"]) * s
    A_in = _in_format(A, fmt, dtype)
    A = np.asarray(A_in.toarray() if sp.issparse(A_in) else A_in, dtype=np.float64)
    absA = np.abs(A)
    l2 = extra["l2"] * s * s
    labels = np.sort(rs.choice(np.arange(-5, 20), k, replace=False))
    idx = rs.randint(0, k, m)
    idx[:k] = np.arange(k)
    y_in = labels[idx].astype(dtype if extra["float_labels"] else np.int64)
    Y = np.eye(k)[idx]

    def grad(x):
        X = x.reshape(d, k)
        S = A @ X
        P = np.exp(S - logsumexp(S, axis=1, keepdims=True))
        return (A.T @ (P - Y) + l2 * X).ravel()

    def mag(x):
        X = np.abs(x.reshape(d, k))
        u = (absA @ X).sum(axis=1, keepdims=True)
        return (np.repeat(absA.T @ (1.0 + u), k, axis=1) + l2 * X).ravel()

    def value(x):
        X = x.reshape(d, k)
        S = A @ X
        return float(np.sum(logsumexp(S, axis=1) - S[np.arange(m), idx])) + 0.5 * l2 * x @ x

    def value_mag(x):
        X = np.abs(x.reshape(d, k))
        return float(np.sum(2.0 * (absA @ X).sum(axis=1) + np.log(k))) + 0.5 * l2 * x @ x

    inputs = dict(A=A_in, y=y_in)
    return Case("multinomial", d * k, inputs, grad, mag, value, value_mag, 1.0 / s, m + d * k), \
        lambda penalty: bcd.Multinomial(A_in, y_in, l2=l2, penalty=penalty)


def _quadratic_from(Q, c, kind, inputs, make, size):
    absQ = np.abs(Q)

    def grad(x):
        return Q @ x - c

    def mag(x):
        return absQ @ np.abs(x) + np.abs(c)

    def value(x):
        return 0.5 * x @ (Q @ x) - c @ x

    def value_mag(x):
        ax = np.abs(x)
        return 0.5 * ax @ (absQ @ ax) + np.abs(c) @ ax

    return Case(kind, Q.shape[0], inputs, grad, mag, value, value_mag, 1.0, size), make


def _quadratic_case(rs, n, fmt, dtype, s, extra):
    B = _sparsify(rs, rs.randn(n, n), extra["density"])
    Q = B @ B.T + np.diag(rs.uniform(0.2, 2.0, n))
    Q = 0.5 * (Q + Q.T) * s                     # exactly symmetric
    Q_in = _in_format(Q, fmt, dtype)
    c_in = (rs.randn(n) * s).astype(dtype)
    Q = np.asarray(Q_in.toarray() if sp.issparse(Q_in) else Q_in, dtype=np.float64)
    return _quadratic_from(Q, c_in.astype(np.float64), "quadratic", dict(Q=Q_in, c=c_in),
                           lambda penalty: bcd.Quadratic(Q_in, c_in, penalty=penalty), 2 * n)


def _indefinite_case(rs, n, fmt, dtype, s):
    """A symmetric Q with a positive diagonal that is not positive definite
    (f is unbounded below): a cycle or path with off-diagonal weights larger
    than the diagonal."""
    Q = np.diag(rs.uniform(0.5, 1.0, n))
    for i in range(n - 1):
        Q[i, i + 1] = Q[i + 1, i] = rs.uniform(1.5, 3.0) * (1 if rs.rand() < 0.5 else -1)
    Q = Q * s
    Q_in = _in_format(Q, fmt, dtype)
    c_in = (rs.randn(n) * s).astype(dtype)
    Q = np.asarray(Q_in.toarray() if sp.issparse(Q_in) else Q_in, dtype=np.float64)
    return _quadratic_from(Q, c_in.astype(np.float64), "quadratic", dict(Q=Q_in, c=c_in),
                           lambda penalty: bcd.Quadratic(Q_in, c_in, penalty=penalty), 2 * n)


def _label_propagation_case(rs, rows, cols, fmt, dtype, s, extra):
    n = rows * cols
    L = bcd.datasets.make_lattice_graph(rows, cols).toarray()
    W = np.triu(L * rs.uniform(0.2, 2.0, L.shape), 1)
    W = (W + W.T) * s
    if extra["w_diag"]:
        W += np.diag(rs.uniform(0.0, 1.0, n) * s)            # ignored by the problem
    W_in = _in_format(W, fmt, dtype)
    W = np.asarray(W_in.toarray() if sp.issparse(W_in) else W_in, dtype=np.float64)
    W = W - np.diag(np.diag(W))
    n_known = rs.randint(1, n)
    known = np.sort(rs.choice(n, n_known, replace=False))
    labels_in = np.full(n, np.nan)
    labels_in[known] = rs.randn(n_known)
    unknown = np.setdiff1d(np.arange(n), known)
    degree = W.sum(axis=1)
    Q = np.diag(degree[unknown]) - W[np.ix_(unknown, unknown)]
    c = W[np.ix_(unknown, known)] @ labels_in[known]
    return _quadratic_from(Q, c, "label_propagation", dict(W=W_in, labels=labels_in),
                           lambda penalty: bcd.LabelPropagation(W_in, labels_in,
                                                                penalty=penalty), 2 * n)


def _gp_case(rs, n, dim, dtype, s, extra):
    X_in = rs.rand(n, dim).astype(dtype)
    y_in = (rs.randn(n) * s).astype(dtype)
    X = X_in.astype(np.float64)
    y = y_in.astype(np.float64)
    ell, noise = extra["lengthscale"], extra["noise"]
    r = cdist(X, X) / ell
    if extra["matern"]:
        kernel = bcd.gp.Matern(2.5, lengthscale=ell)
        K = (1.0 + np.sqrt(5.0) * r + 5.0 / 3.0 * r * r) * np.exp(-np.sqrt(5.0) * r)
    else:
        kernel = bcd.gp.SquaredExponential(lengthscale=ell)
        K = np.exp(-0.5 * r * r)
    H = K + noise * np.eye(n)
    case, make = _quadratic_from(
        H, y, "gaussian_process", dict(X=X_in, y=y_in),
        lambda penalty: bcd.GaussianProcess(X_in, y_in, kernel, noise=noise), 2 * n)
    case.x_scale = s / noise
    return case, make


# ------------------------------------------------------------------ descriptions

@st.composite
def descriptions(draw, kind, scales="any", penalties=PENALTIES):
    """A plain description of a case (data, penalty, solve options); see
    :func:`build`.  ``scales``: "any" (10**k for k in [-100, 100], float32
    [-30, 30], with k = 0 and the extremes favoured), "extreme" (|k| >= 25)
    or "unit" (k = 0)."""
    d = dict(kind=kind, seed=draw(st.integers(0, 2**31 - 1)),
             dtype=draw(st.sampled_from(["float64", "float32"])))
    # float32 data must stay representable, with room for the random entries
    bound = 100 if d["dtype"] == "float64" else 30
    if scales == "unit":
        k = 0
    elif scales == "extreme":
        k = draw(st.one_of(st.sampled_from([-bound, bound]), st.integers(25, bound),
                           st.integers(-bound, -25)))
    else:
        k = draw(st.one_of(st.just(0), st.sampled_from([-bound, bound]),
                           st.integers(-bound, bound)))
    d["k"] = k
    d["density"] = draw(st.sampled_from([0.3, 0.7, 1.0]))
    d["l2"] = draw(st.sampled_from([0.0, 0.1, 1.0] if kind == "least_squares" else [0.1, 1.0]))
    if kind in ("least_squares", "logistic", "poisson"):
        d.update(fmt=draw(st.sampled_from(MATRIX_FORMATS)), m=draw(st.integers(2, 30)),
                 n=draw(st.integers(1, 30)), pm=draw(st.booleans()))
    elif kind == "multinomial":
        classes = draw(st.integers(2, 4))
        d.update(fmt=draw(st.sampled_from(MATRIX_FORMATS)), classes=classes,
                 d=draw(st.integers(1, 30 // classes)), m=draw(st.integers(classes, 30)),
                 float_labels=draw(st.booleans()))
    elif kind == "quadratic":
        d.update(fmt=draw(st.sampled_from(MATRIX_FORMATS)), n=draw(st.integers(1, 30)))
    elif kind == "label_propagation":
        rows = draw(st.integers(1, 5))
        d.update(fmt=draw(st.sampled_from(MATRIX_FORMATS)), rows=rows,
                 cols=draw(st.integers(2 if rows == 1 else 1, 30 // rows)),
                 w_diag=draw(st.booleans()))
    else:
        d.update(fmt="dense", n=draw(st.integers(1, 30)), dim=draw(st.integers(1, 3)),
                 lengthscale=draw(st.sampled_from([0.2, 0.5, 2.0])),
                 noise=draw(st.sampled_from([1e-3, 0.05, 1.0])), matern=draw(st.booleans()))
    d["penalty"] = "none" if kind == "gaussian_process" else draw(st.sampled_from(penalties))
    d["lam"] = draw(st.sampled_from([0.01, 0.2, 0.7, 1.5]))
    d["side"] = draw(st.sampled_from(["lower", "upper"]))
    configs = _valid_configs(kind, d["penalty"] != "none")
    if draw(st.sampled_from(["explicit"] * 4 + ["auto"])) == "auto":
        config = {}                                       # the automatic configuration
    else:
        # the block strategy first, so that the few forest-structured
        # configurations are drawn as often as the many others
        blocks = draw(st.sampled_from(sorted({c["blocks"] for c in configs})))
        config = dict(draw(st.sampled_from([c for c in configs if c["blocks"] == blocks])))
        if blocks in ("fixed", "variable"):
            # a fraction of the coordinates (their number is known once built)
            config["block_fraction"] = draw(st.sampled_from([None, 0.0, 0.3, 0.7, 1.0]))
            ws = draw(st.sampled_from([None, True, False]))
            if ws is not None:
                config["working_set"] = ws
        if config["rule"] == "cyclic":
            depth = draw(st.sampled_from([None, 0, 3]))
            if depth is not None:
                config["extrapolation"] = depth
    d["config"] = config
    d["x0"] = draw(st.sampled_from([None, "float64", "float32"]))
    d["rtol"] = draw(st.sampled_from([None, 1e-3, 1e-7, 1e-10]))
    d["random_state"] = draw(st.integers(0, 2**31 - 1))
    return d


def build(d):
    """``(case, solve options)`` of a description, deterministically."""
    kind, s = d["kind"], 10.0 ** d["k"]
    dtype = np.dtype(d["dtype"]).type
    rs = np.random.RandomState(d["seed"])
    extra = dict(density=d["density"], l2=d["l2"], pm=d.get("pm"),
                 float_labels=d.get("float_labels"), lengthscale=d.get("lengthscale"),
                 noise=d.get("noise"), matern=d.get("matern"), w_diag=d.get("w_diag"))
    if kind in ("least_squares", "logistic", "poisson"):
        case, make = _linear_case(kind, rs, d["m"], d["n"], d["fmt"], dtype, s, extra)
    elif kind == "multinomial":
        case, make = _multinomial_case(rs, d["m"], d["d"], d["classes"], d["fmt"], dtype, s,
                                       extra)
    elif kind == "quadratic" and d.get("indefinite"):
        case, make = _indefinite_case(rs, d["n"], d["fmt"], dtype, s)
    elif kind == "quadratic":
        case, make = _quadratic_case(rs, d["n"], d["fmt"], dtype, s, extra)
    elif kind == "label_propagation":
        case, make = _label_propagation_case(rs, d["rows"], d["cols"], d["fmt"], dtype, s,
                                             extra)
    else:
        case, make = _gp_case(rs, d["n"], d["dim"], dtype, s, extra)
    case.dtype = np.dtype(dtype)
    case.label = d
    n, xs = case.n, case.x_scale
    rs = np.random.RandomState(d["seed"] + 1)
    g0 = float(np.max(np.abs(case.grad(np.zeros(n)))))
    name = d["penalty"]
    penalty = {
        "none": lambda: None,
        "l1": lambda: bcd.L1(d["lam"] * g0),
        "l1_positive": lambda: bcd.L1(d["lam"] * g0, positive=True),
        "l1_weights": lambda: bcd.L1(rs.uniform(0.0, 1.0, n) * g0),
        "nonnegative": lambda: bcd.NonNegative(),
        "box": lambda: bcd.Box(-rs.uniform(0.0, 1.0, n) * xs, rs.uniform(0.0, 1.0) * xs),
        "box_half": lambda: (bcd.Box(-np.inf, rs.uniform(0.0, 1.0, n) * xs)
                             if d["side"] == "upper"
                             else bcd.Box(rs.uniform(-1.0, 0.0) * xs, np.inf)),
    }[name]()
    case.inputs.update(lam=getattr(penalty, "lam", None), lower=getattr(penalty, "lower", None),
                       upper=getattr(penalty, "upper", None))
    snapshots = {key: _snapshot(v) for key, v in case.inputs.items()}
    case.problem = make(penalty)
    case.penalty = penalty
    for key, v in case.inputs.items():
        assert _same_snapshot(snapshots[key], _snapshot(v)), \
            (f"the constructor modified {key}", d)
    options = dict(d["config"])
    fraction = options.pop("block_fraction", None)
    if fraction is not None:
        options["block_size"] = max(1, int(round(fraction * n)))
    if d.get("block_size") is not None:
        options["block_size"] = d["block_size"]
    x0 = None
    if d["x0"] is not None:
        x0 = rs.randn(n) * xs * d.get("x0_scale", 1.0)
        if d["x0"] == "float32" and np.all(np.abs(x0) < 1e30) and np.all(np.abs(x0) > 1e-30):
            x0 = x0.astype(np.float32)
    case.inputs["x0"] = x0
    tol = None if d["rtol"] is None or not g0 > 0 else d["rtol"] * g0
    options.update(tol=tol, x0=x0, random_state=d["random_state"],
                   max_iter=d.get("max_iter", MAX_ITER), max_time=MAX_TIME)
    return case, options


_CONFIGS = {}


def _valid_configs(kind, penalized):
    """Every valid (blocks, rule, update) of the spec tables for a class,
    with their default options, and every other choice of each of their
    options (the tables depend on the class and on whether it has a
    penalty)."""
    key = (kind, penalized)
    if key in _CONFIGS:
        return _CONFIGS[key]
    probe = dict(kind=kind, seed=0, dtype="float64", k=0, density=1.0, l2=0.1, fmt="dense",
                 m=6, n=4, pm=True, classes=2, d=2, float_labels=False, rows=2, cols=2,
                 w_diag=False, dim=1, lengthscale=1.0, noise=0.5, matern=False,
                 penalty="l1" if penalized else "none", lam=0.1, side="lower", config={},
                 x0=None, rtol=None, random_state=0)
    problem = build(probe)[0].problem
    out = []
    for blocks, rule, update in itertools.product(BLOCK_TABLE, RULE_TABLE, UPDATE_TABLE):
        if RULE_TABLE[rule].alias_of is not None:
            continue
        try:
            specs, resolved = check_combination(problem, blocks, rule, update, {}, TABLES)
        except ValueError:
            continue
        base = dict(rule=rule, blocks=blocks, update=update)
        out.append(base)
        for spec in specs:
            for opt in spec.options:
                if opt.choices is None or (opt.blocks is not None and blocks not in opt.blocks):
                    continue
                for choice in opt.choices:
                    if choice == resolved.get(opt.name):
                        continue
                    try:
                        check_combination(problem, blocks, rule, update, {opt.name: choice},
                                          TABLES)
                    except ValueError:
                        continue
                    out.append(dict(base, **{opt.name: choice}))
    assert out, key
    _CONFIGS[key] = out
    return out


# ------------------------------------------------------------------ checks

def _kkt(x, g, penalty, eps):
    """Per coordinate, the distance of -g to the subdifferential of the
    penalty at x, and whether x is in the penalty's domain (up to the
    rounding ``eps`` of x)."""
    if penalty is None:
        return np.abs(g), True
    n = x.shape[0]
    if isinstance(penalty, bcd.L1):
        lam = np.broadcast_to(np.asarray(penalty.lam, dtype=np.float64), (n,))
        r = np.where(x != 0, np.abs(g + lam * np.sign(x)), np.maximum(np.abs(g) - lam, 0.0))
        if penalty.positive:
            r = np.where(x == 0, np.maximum(-(g + lam), 0.0), r)
            return r, bool(np.all(x >= 0))
        return r, True
    lo = np.broadcast_to(np.asarray(penalty.lower, dtype=np.float64), (n,))
    hi = np.broadcast_to(np.asarray(penalty.upper, dtype=np.float64), (n,))
    slack_lo = np.where(np.isfinite(lo), 2 * eps * np.abs(lo), 0.0)
    slack_hi = np.where(np.isfinite(hi), 2 * eps * np.abs(hi), 0.0)
    inside = bool(np.all((x >= lo - slack_lo) & (x <= hi + slack_hi)))
    at_lo = x <= lo + slack_lo
    at_hi = x >= hi - slack_hi
    r = np.abs(g)
    r = np.where(at_lo, np.maximum(-g, 0.0), r)
    r = np.where(at_hi, np.maximum(g, 0.0), r)
    r = np.where(at_lo & at_hi, 0.0, r)
    return r, inside


def _penalty_value(x, penalty):
    """g(x) for x in the domain (a box contributes nothing there)."""
    if isinstance(penalty, bcd.L1):
        return float(np.sum(np.asarray(penalty.lam, dtype=np.float64) * np.abs(x)))
    return 0.0


def _solve_and_check(case, config):
    problem = case.problem
    snapshots = {name: _snapshot(v) for name, v in case.inputs.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bcd.ConvergenceWarning)
        result = bcd.solve(problem, **config)
    warned = any(issubclass(w.category, bcd.ConvergenceWarning) for w in caught)

    # inputs are never modified
    for name, v in case.inputs.items():
        assert _same_snapshot(snapshots[name], _snapshot(v)), f"the solve modified {name}"

    # an honest status
    assert result.status in STATUSES, f"unknown status {result.status!r}"
    assert result.converged == (result.status == "converged"), repr(result)
    if result.status not in ("converged", "callback"):
        # (a converged solve may warn too, e.g. when it stops at once on data
        # scaled far below 1; that is not a contract)
        assert warned, f"no ConvergenceWarning with status {result.status!r}"
    assert result.status not in ("interrupted", "callback"), repr(result)
    assert 0 <= result.n_iter <= config["max_iter"], f"n_iter {result.n_iter} > max_iter"
    x = result.x
    assert x.shape == (case.n,) and x.dtype == problem.dtype, \
        f"x has shape {x.shape} and dtype {x.dtype}, expected ({case.n},) {problem.dtype}"
    finite = bool(np.all(np.isfinite(x))) and np.isfinite(result.objective)
    if not finite:
        assert result.status == "diverged", f"non-finite x or objective in {result!r}"
        return result
    if result.status == "diverged":
        return result

    eps = float(np.finfo(problem.dtype).eps)
    xd = x.astype(np.float64)
    C = 8.0 * case.size + 16.0

    # the reported objective is F at the returned x
    pen_value = _penalty_value(xd, case.penalty)
    mine = case.value(xd) + pen_value
    mag = case.value_mag(xd) + pen_value + float(case.mag(xd) @ np.abs(xd))
    assert not np.isfinite(mine) or abs(result.objective - mine) <= C * eps * mag + 1e-300, \
        (f"the reported objective {result.objective!r} is not F(x) = {mine!r} (rounding "
         f"allows {C * eps * mag:.3e}; {result!r})")

    # every iterate is in the penalty's domain (x0 is projected onto it)
    g = case.grad(xd)
    residual, feasible = _kkt(xd, g, case.penalty, eps)
    assert feasible, f"x outside the domain of {case.penalty!r}: x = {xd} ({result!r})"

    if result.converged:
        tol = result.options["tol"]
        allowed = 10.0 * tol + C * eps * case.mag(xd)
        worst = int(np.argmax(residual - allowed))
        assert np.all(residual <= allowed), \
            (f"converged, but the KKT residual of coordinate {worst} is {residual[worst]:.3e} "
             f"> {allowed[worst]:.3e} (tol {tol:.3e}; solver's optimality "
             f"{result.optimality:.3e}; {result!r})")
        # (or at the attainable accuracy: tol below the rounding floor of the
        # measure, which the residual test above bounds)
        assert result.optimality <= tol or "attainable accuracy" in result.message, \
            f"converged with optimality {result.optimality} > {tol}"
    return result


# ------------------------------------------------------------------ references

def _reference(case):
    """(x*, F*) of a unit-scale problem by an independent solver."""
    p, pen = case.problem, case.penalty
    if case.kind in ("quadratic", "label_propagation", "gaussian_process"):
        g0 = case.grad(np.zeros(case.n))
        Q = np.column_stack([case.grad(e) - g0 for e in np.eye(case.n)])
        x = np.linalg.solve(Q, -g0)
        return x, case.value(x)
    A = case.inputs["A"]
    A = np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)
    b = np.asarray(case.inputs["b"], dtype=np.float64)
    m, n = A.shape
    if pen is None and p.l2 == 0:
        x = np.linalg.lstsq(A, b, rcond=None)[0]
    elif pen is None:
        x = np.linalg.solve(A.T @ A + p.l2 * np.eye(n), A.T @ b)
    elif isinstance(pen, bcd.Box):
        lo = np.broadcast_to(pen.lower, (n,))
        hi = np.broadcast_to(pen.upper, (n,))
        Aa = np.vstack([A, np.sqrt(p.l2) * np.eye(n)])
        ba = np.concatenate([b, np.zeros(n)])
        x = scipy.optimize.lsq_linear(Aa, ba, bounds=(lo, hi), method="bvls", tol=1e-14).x
    else:
        from sklearn.linear_model import ElasticNet, Lasso
        lam = float(pen.lam)
        if p.l2 == 0:
            model = Lasso(alpha=lam / m, fit_intercept=False, positive=pen.positive,
                          tol=1e-14, max_iter=200000, selection="cyclic")
        else:
            # lam |x| + l2/2 |x|^2 over m: alpha (r |x| + (1 - r)/2 |x|^2)
            alpha = (lam + p.l2) / m
            model = ElasticNet(alpha=alpha, l1_ratio=lam / (lam + p.l2), fit_intercept=False,
                               positive=pen.positive, tol=1e-14, max_iter=200000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = model.fit(A, b).coef_
    return x, case.value(x) + _penalty_value(x, pen)


def _check_reference(case, result):
    """At unit scale, a converged solve's F(x) is at most the optimum found
    by np.linalg / scipy.optimize.lsq_linear / scikit-learn's Lasso and
    ElasticNet plus what its tolerance allows: by convexity
    F(x) - F* <= (grad f(x) + s) . (x - x*) for the subgradient s of the
    KKT residual, at most 10 tol + rounding per coordinate."""
    if not result.converged:
        return
    x_ref, f_ref = _reference(case)
    xd = result.x.astype(np.float64)
    mine = case.value(xd) + _penalty_value(xd, case.penalty)
    eps = float(np.finfo(case.problem.dtype).eps)
    C = 8.0 * case.size + 16.0
    slack = float(np.sum((10.0 * result.options["tol"] + C * eps * case.mag(xd))
                         * np.abs(xd - x_ref)))
    mag = case.value_mag(xd) + float(case.mag(xd) @ np.abs(xd))
    assert mine <= f_ref + slack + C * eps * mag + 1e-12 * abs(f_ref), \
        (f"converged to F = {mine!r}, but the reference reaches {f_ref!r} (allowed "
         f"{slack + C * eps * mag:.3e} above it)")


# ------------------------------------------------------------------ isolation

HERE = os.path.dirname(os.path.abspath(__file__))

#: The worker: a "zygote" process imports the modules once and forks a
#: child that serves descriptions (JSON lines on one pipe, answers on
#: another) until it dies; when it dies in a request, the zygote answers
#: for it and forks a new child.  The zygote itself never solves, so it
#: never starts OpenMP threads and forks safely.
_ZYGOTE = """
import json, os, sys
here, req_fd, resp_fd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, here)
import warnings
warnings.simplefilter("ignore", DeprecationWarning)
import test_properties as t
try:
    import sklearn.linear_model
except ImportError:
    pass
req = os.fdopen(req_fd, "rb")
resp = os.fdopen(resp_fd, "wb")
while True:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            while True:
                line = req.readline()
                if not line:
                    code = 0
                    break
                failure = t.check(json.loads(line))
                resp.write(json.dumps({"failure": failure}).encode() + b"\\n")
                resp.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        break
    why = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
           else f"exit code {os.WEXITSTATUS(status)}")
    resp.write(json.dumps({"failure": f"the worker process died ({why}): a crash in "
                                      f"compiled code"}).encode() + b"\\n")
    resp.flush()
"""


def check(d):
    """Build, solve and check one description: None, or why it failed.
    (Runs in the worker process.)"""
    try:
        case, options = build(d)
        try:
            result = _solve_and_check(case, options)
        except ValueError as exc:
            # an exact block solve meeting a non-positive pivot raises, naming it
            if d.get("indefinite") and "not positive definite" in str(exc):
                return None
            raise
        if d.get("reference"):
            _check_reference(case, result)
    except Exception:
        return traceback.format_exc(limit=-2)[-4000:]
    return None


class _Worker:
    def __init__(self):
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-c", _ZYGOTE, HERE, str(req_r),
                                      str(resp_w)], pass_fds=(req_r, resp_w),
                                     start_new_session=True)
        os.close(req_r)
        os.close(resp_w)
        self.req = os.fdopen(req_w, "wb")
        self.resp = os.fdopen(resp_r, "rb")

    def ask(self, d):
        self.req.write(json.dumps(d).encode() + b"\n")
        self.req.flush()
        ready, _, _ = select.select([self.resp], [], [], HANG_TIMEOUT)
        if not ready:
            raise TimeoutError
        line = self.resp.readline()
        if not line:
            raise EOFError(f"the worker exited with code {self.proc.wait(10)}")
        return json.loads(line)["failure"]

    def close(self, kill=False):
        if kill:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.req.close()
        except OSError:
            pass
        self.resp.close()
        self.proc.wait(timeout=30)


_WORKER = None


@pytest.fixture(scope="module", autouse=True)
def _worker_process():
    yield
    global _WORKER
    if _WORKER is not None:
        _WORKER.close()
        _WORKER = None


def outcome(d):
    """:func:`check` of ``d`` in the worker process: None, or the failure
    (a crash or hang of the worker included)."""
    global _WORKER
    if not hasattr(os, "fork"):
        return check(json.loads(json.dumps(d)))        # no isolation without fork
    if _WORKER is None:
        _WORKER = _Worker()
    try:
        return _WORKER.ask(d)
    except TimeoutError:
        _WORKER.close(kill=True)
        _WORKER = None
        return f"hung: no answer {HANG_TIMEOUT:.0f} s into a solve with max_time={MAX_TIME}"
    except (EOFError, OSError) as exc:
        _WORKER.close(kill=True)
        _WORKER = None
        return f"the worker failed: {exc!r}"


def run_isolated(d):
    failure = outcome(d)
    if failure is not None:
        raise AssertionError(f"{failure}\ndescription: {d}")


# ------------------------------------------------------------------ tests

@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_solve_is_certified_or_honest(kind, data):
    run_isolated(data.draw(descriptions(kind), label="description"))


@settings(SETTINGS, max_examples=150)
@given(data=st.data())
def test_extreme_scales_are_certified_or_honest(data):
    """Scalings by 10**k with |k| >= 25, up to 10**-100 and 10**100."""
    kind = data.draw(st.sampled_from(KINDS), label="kind")
    run_isolated(data.draw(descriptions(kind, scales="extreme"), label="description"))


@settings(SETTINGS, max_examples=100)
@given(data=st.data())
def test_converged_objective_matches_an_independent_solver(data):
    """At unit scale, converged solves reach the optimum of independent
    solvers (see :func:`_check_reference`)."""
    kind = data.draw(st.sampled_from(["least_squares", "quadratic", "label_propagation",
                                      "gaussian_process"]), label="kind")
    penalties = (["none", "l1", "l1_positive", "nonnegative", "box"]
                 if kind == "least_squares" else ["none"])
    d = data.draw(descriptions(kind, scales="unit", penalties=penalties), label="description")
    run_isolated(dict(d, reference=True))


@settings(SETTINGS, max_examples=80)
@given(data=st.data())
def test_unbounded_and_overflowing_problems_never_converge_falsely(data):
    """Indefinite quadratics (f unbounded below) and starting points so large
    that f or its gradient overflows: a solve then stops with a non-finite
    value only as "diverged" (or raises ValueError naming a non-positive
    pivot, for an indefinite problem), and converges only where certified."""
    kind = data.draw(st.sampled_from(["quadratic", "least_squares", "logistic", "poisson",
                                      "multinomial"]), label="kind")
    d = data.draw(descriptions(kind, scales="unit"), label="description")
    if kind == "quadratic" and data.draw(st.booleans(), label="indefinite"):
        d = dict(d, indefinite=True)
    else:
        scale = 1e300 if kind != "poisson" else data.draw(st.sampled_from([1e3, 1e300]),
                                                           label="x0 scale")
        d = dict(d, x0="float64", x0_scale=scale)
    run_isolated(d)


# ------------------------------------------------------------------ every configuration

SWEEP_MAX_ITER = 1000
#: the fixed problems of the sweep, two per class (dense float64, CSR float32)
SWEEP_PROBLEMS = {
    "least_squares": dict(m=20, n=8, pm=False),
    "logistic": dict(m=20, n=8, pm=False),
    "poisson": dict(m=20, n=8, pm=False),
    "multinomial": dict(m=20, d=3, classes=3, float_labels=False),
    "quadratic": dict(n=10),
    "label_propagation": dict(rows=3, cols=4, w_diag=True),
    "gaussian_process": dict(n=12, dim=2, lengthscale=0.5, noise=0.05, matern=False),
}


def sweep(kind):
    """Descriptions of every valid configuration of the spec tables on a
    problem of ``kind``: without a penalty and with L1 or a box, with the
    default block size and (for base configurations) block size 1, with
    every other option choice, alternately on the two problems, from zero
    or a random x0."""
    penalties = ["none"] if kind == "gaussian_process" else ["none", "l1", "box"]
    for penalty in penalties:
        configs = [{}] + _valid_configs(kind, penalty != "none")      # {}: automatic
        for i, config in enumerate(configs):
            fmt, dtype = (("dense", "float64"), ("csr", "float32"))[i % 2]
            sizes = [None]
            if len(config) == 3 and config["blocks"] in ("fixed", "variable"):
                sizes.append(1)
            for size in sizes:
                yield dict(SWEEP_PROBLEMS[kind], kind=kind, seed=100 + i % 2, dtype=dtype,
                           fmt="dense" if kind == "gaussian_process" else fmt, k=0,
                           density=0.7, l2=0.1, penalty=penalty, lam=0.2, side="upper",
                           config=config, block_size=size,
                           x0="float64" if i % 3 == 0 else None, rtol=1e-8,
                           random_state=i, max_iter=SWEEP_MAX_ITER)


@pytest.mark.parametrize("kind", KINDS)
def test_every_valid_configuration_is_certified_or_honest(kind):
    """The property on every valid configuration of the spec tables,
    enumerated rather than sampled; every failure is listed."""
    failures, count = [], 0
    for d in sweep(kind):
        count += 1
        failure = outcome(d)
        if failure is not None:
            failures.append(f"{failure.strip().splitlines()[-1][:600]}\n    description: {d}")
    assert count > 0
    assert not failures, f"{len(failures)} of {count} configurations fail:\n" + \
        "\n".join(failures[:20])
