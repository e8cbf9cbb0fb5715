"""What runs on the Dask workers: the partitions' local state and the local
solves of CoCoA+ (rows) and ProxCoCoA+ (columns).

A worker keeps the local variables of the partitions it solves (the dual
variables of its rows for CoCoA+, the coefficients of its columns for
ProxCoCoA+) in :data:`STATE`, a dictionary of its process keyed by
``(fit, partition)``, with the round at which they were last written.  A
task that finds no state, or state of another round (its worker died and
the partition was moved, or a task was run twice), does nothing and says so:
the driver then resets that partition's contribution, so the combined state
stays consistent and the fit goes on to the same optimum.
"""
import time

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from . import _newton_local

#: (fit id, partition) -> {"round": int, "alpha" or "x": ndarray}
STATE = {}

#: the loss names of the distributed solvers and the largest second
#: derivative of each (the smoothness of the loss in the margin)
CURVATURE = {"squared": 1.0, "logistic": 0.25, "squared_hinge": 2.0, "hinge": None}


class Host:
    """A Dask actor on one worker that holds that worker's partitions and
    runs a round's local solves for all of them in one call: the round's
    vectors travel directly between the driver and the worker (no
    scheduler on the way, one message per worker and round; the same vector
    for several partitions is sent once)."""

    def __init__(self, ks, held, *parts):
        self.parts = dict(zip(ks, parts))
        self.held = held          # the fit's vectors sent once (the sample weights)
        self.replies = {}         # (fit, k) -> (call, its reply)

    def run(self, fn, fit, calls, shared, call=None):
        """``[fn(part_k, fit, k, rnd, *shared, *extra) for k, rnd, extra in calls]``,
        the configuration dictionaries among ``shared`` completed with the
        vectors the actor holds.  A repeated ``call`` (the driver repeats a
        call whose reply it did not receive) gets the same replies again
        without running ``fn``, which moves a partition's state on."""
        shared = tuple({**a, **self.held} if isinstance(a, dict) else a for a in shared)
        out = []
        for k, rnd, extra in calls:
            last = self.replies.get((fit, k))
            if call is not None and last is not None and last[0] == call:
                out.append(last[1])
                continue
            reply = fn(self.parts[k], fit, k, rnd, *shared, *extra)
            self.replies[(fit, k)] = (call, reply)
            out.append(reply)
        return out


def forget(fit):
    """Drop every partition state of ``fit`` held by this worker; how many."""
    keys = [key for key in STATE if key[0] == fit]
    for key in keys:
        del STATE[key]
    return len(keys)


#: the entries per panel of a partition's check for NaN and inf
FINITE_PANEL = 65536


def _aligned(a, dtype):
    """``a`` as a C-ordered, aligned array of ``dtype``, copied only where it
    is not one.  A chunk that reached its worker over the network lies in
    the received message's buffer at any byte offset: NumPy then runs its
    products without BLAS, five to eight times slower (a Newton round on a
    25,000 x 100 partition took 16 ms instead of 3)."""
    return np.require(np.asarray(a, dtype=dtype), requirements=["C", "A"])


def _all_finite(a):
    """Whether every entry of ``a`` is finite: its sum is (NaN and inf
    propagate through it; one pass, no temporary), else entry by entry, by
    panels of rows (the sum of finite entries may overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(a.sum()):
            return True
    rows = a.reshape(a.shape[0], -1) if a.ndim else a.reshape(1, 1)
    step = max(1, FINITE_PANEL // max(rows.shape[1], 1))
    return all(np.isfinite(rows[i:i + step]).all() for i in range(0, rows.shape[0], step))


def _dense_or_csr(X, name, align=True, check=True):
    """A partition's matrix as a C-ordered float64 array (aligned with
    ``align``, else at the offset at which it came) or a CSR matrix of
    aligned arrays, checked for NaN and inf with ``check``."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.data, X.indices, X.indptr = (_aligned(X.data, np.float64),
                                       _aligned(X.indices, X.indices.dtype),
                                       _aligned(X.indptr, X.indptr.dtype))
        X.sort_indices()
        finite = not check or _all_finite(X.data)
    else:
        X = _aligned(X, np.float64) if align else \
            np.require(np.asarray(X, dtype=np.float64), requirements=["C"])
        if X.ndim == 1:
            X = X.reshape(-1, 1) if X.size else X.reshape(0, 0)
        finite = not check or _all_finite(X)
    if not finite:
        raise ValueError(f"{name} holds NaN or inf values.")
    return X


def pack(k, X, y, weights, axis, classify=False, align=True, check=True):
    """The partition ``k`` as stored on its worker: ``(X, t, s)`` for a row
    partition (``axis=0``; ``t`` the targets or labels and ``s`` the sample
    weights of its rows), ``(X,)`` for a column partition, with the data
    checked (a clear error naming the partition).  Without ``align`` a dense
    matrix is kept where it lies if it is C-ordered float64, aligned or not
    (for Newton's rounds, which read it by aligned panels: an aligned copy
    of the whole partition would cost a pass over fresh memory and hold the
    data twice).  Without ``check`` the matrix is not checked for NaN and
    inf (see :func:`measure`)."""
    import bcd  # noqa: F401  (a worker without bcd fails here, in the first task)
    name = f"partition {k} ({'rows' if axis == 0 else 'columns'})"
    X = _dense_or_csr(X, f"{name} of X", align, check)
    if axis == 1:
        return (X,)
    t = _aligned(y, np.float64).ravel()
    if t.shape[0] != X.shape[0]:
        raise ValueError(f"{name}: y has {t.shape[0]} entries for {X.shape[0]} rows of X; "
                         f"y must be chunked like the rows of X.")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{name} of y holds NaN or inf values.")
    if weights is None:
        s = np.ones(X.shape[0])
    else:
        s = _aligned(weights, np.float64).ravel()
        if s.shape[0] != X.shape[0]:
            raise ValueError(f"{name}: sample_weight has {s.shape[0]} entries for "
                             f"{X.shape[0]} rows of X; it must be chunked like the rows of X.")
        if not np.all(np.isfinite(s)) or np.any(s < 0):
            raise ValueError(f"{name} of sample_weight holds negative, NaN or inf values.")
    if classify == "multinomial":
        # the labels as given (mapped to class indices at the first round,
        # once the driver knows every partition's classes)
        return (X, t, s, np.unique(t))
    if classify:
        return (X, np.where(t > 0, 1.0, -1.0), s, np.unique(t))
    return (X, t, s)


def shape_of(part, k=0, first=None):
    """The shape of a packed partition's matrix, its size in bytes, the
    distinct targets of a classification partition (else None) and, with
    ``first`` (the configuration of a Newton round), the first round of
    Newton's method at the start point (w, c) = 0 (else None): the driver
    asks for it here, right after the partition is packed, instead of in a
    round of its own."""
    X = part[0]
    nbytes = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if sp.issparse(X) \
        else X.nbytes
    terms = None if first is None else newton_round(part, None, k, 0, np.zeros(X.shape[1]),
                                                    0.0, first)
    return X.shape, int(nbytes), (part[3] if len(part) > 3 else None), terms


def measure(first, k, X, y, weights, axis, classify=False, align=True):
    """:func:`shape_of` with the first Newton round ``first``, of the
    partition that :func:`pack` makes of the same source, computed from the
    source beside ``pack`` rather than after it: a task that depends on
    another waits for the scheduler to hear that the first one finished.
    The data's check for NaN and inf is ``pack``'s."""
    return shape_of(pack(k, X, y, weights, axis, classify, align, check=False), k, first)


def _rows(X):
    """``X`` in the form of :func:`bcd.problems._dual.linear_dual`."""
    if sp.issparse(X):
        return ("csr", np.ascontiguousarray(X.indptr, dtype=np.int32),
                np.ascontiguousarray(X.indices, dtype=np.int32),
                np.ascontiguousarray(X.data, dtype=np.float64), X.shape[1])
    return ("dense", X)


def _loss_terms(loss, z, t, s):
    """sum_i s_i phi(z_i), and sum_i s_i phi'(z_i), sum_i s_i phi''(z_i)."""
    if loss == "squared":
        r = z - t
        return float(s @ (0.5 * r * r)), float(s @ r), float(np.sum(s))
    if loss == "logistic":
        u = t * z
        p = np.exp(-np.logaddexp(0.0, u))              # sigmoid(-t z)
        return float(s @ np.logaddexp(0.0, -u)), float(s @ (-t * p)), \
            float(s @ (p * (1.0 - p)))
    u = 1.0 - t * z
    inside = u > 0.0
    if loss == "hinge":
        return float(s @ np.where(inside, u, 0.0)), float(s @ np.where(inside, -t, 0.0)), 0.0
    return float(s @ np.where(inside, u * u, 0.0)), \
        float(s @ np.where(inside, -2.0 * t * u, 0.0)), float(s @ np.where(inside, 2.0, 0.0))


def _q_of(loss, alpha):
    """The dual variables in the parameterization in which the driver's
    line search is linear: the logistic loss's probabilities
    sigmoid(logit) in (0, 1), the other losses' variables as kept."""
    if loss == "logistic":
        return np.exp(-np.logaddexp(0.0, -alpha))
    return alpha


def _alpha_of(loss, q):
    """Inverse of :func:`_q_of` (q strictly inside (0, 1) for the logistic
    loss)."""
    if loss == "logistic":
        return np.log(q) - np.log1p(-q)
    return q


def _signed(loss, q, t, s):
    """beta, the signed dual variables, from q."""
    if loss == "squared":
        return q
    if loss == "logistic":
        return t * s * q
    return t * q


def _conj_value(loss, q, t, s):
    """The conjugate part of the partition's dual objective,
    sum_i -s_i phi*(-beta_i / s_i), at q; -inf where q leaves the dual's
    domain (the logistic loss's open interval, the hinge losses' bounds)."""
    live = s > 0
    a = q[live]
    if loss == "squared":
        return float(a @ t[live] - 0.5 * np.sum(a * a / s[live]))
    if loss == "logistic":
        # the domain is the closed interval (0 log 0 = 0): a dual variable
        # whose logit is large rounds to q = 1 and is still inside it
        if a.size and (a.min() < 0.0 or a.max() > 1.0):
            return -np.inf
        return float(-(s[live] @ (xlogy(a, a) + xlogy(1.0 - a, 1.0 - a))))
    if a.size and a.min() < 0.0:
        return -np.inf
    if loss == "hinge":
        return float(np.sum(a)) if not np.any(a > s[live]) else -np.inf
    return float(np.sum(a - 0.25 * a * a / s[live]))


def _conj_grid(loss, q, d, e, t, s, grid):
    """:func:`_conj_value` at q + gamma d + b e for every (gamma, b) of the
    grid (compiled, one pass over the rows)."""
    from ._grid import conj_grid
    gam, mom = _grid_arrays(grid)
    f = np.ascontiguousarray
    return conj_grid(loss, f(q, dtype=np.float64), f(d, dtype=np.float64),
                     f(e, dtype=np.float64), f(t, dtype=np.float64), f(s, dtype=np.float64),
                     gam, mom)


def _grid_arrays(grid):
    """The line-search grid's gammas and momenta as two arrays."""
    return (np.array([g for g, _ in grid], dtype=np.float64),
            np.array([b for _, b in grid], dtype=np.float64))


def _fenchel_young(loss, z, q, t, s):
    """The partition's share of the duality gap at margins z:
    sum_i s_i phi(z_i) - (-s_i phi*(-beta_i / s_i)) + beta_i z_i >= 0."""
    primal = _loss_terms(loss, z, t, s)[0]
    return primal - _conj_value(loss, q, t, s) + float(_signed(loss, q, t, s) @ z)


def _curvatures(loss, z, t):
    """phi'(z_i) and phi''(z_i) (a generalized second derivative for the
    squared hinge) of the losses that Newton's method takes."""
    if loss == "squared":
        return z - t, np.ones_like(z)
    if loss == "logistic":
        p = np.exp(-np.logaddexp(0.0, t * z))              # sigmoid(-t z)
        return -t * p, p * (1.0 - p)
    u = np.maximum(1.0 - t * z, 0.0)                       # squared hinge
    return -2.0 * t * u, np.where(u > 0.0, 2.0, 0.0)


def newton_round(part, fit, k, rnd, w, c, cfg):
    """One round of distributed Newton on row partition ``k``: at the shared
    point (w, c), the partition's loss, its gradient and (when
    ``cfg["hessian"]``) Hessian in (w, c) (the intercept last when
    ``cfg["fit_intercept"]``; its curvature is sent every round), and its pieces of
    the dual at beta_i = -s_i phi'(z_i) (the conjugate part and sum beta),
    from which the driver assembles the objective, the Newton step and the
    duality gap.  Stateless: a partition recomputed elsewhere gives the
    same answer."""
    started = time.perf_counter()
    X, t, s = part[:3]
    loss = cfg["loss"]
    m, d = X.shape
    w = np.asarray(w, dtype=np.float64)
    if not sp.issparse(X):
        if d:
            # dense: one compiled pass over the rows
            primal, grad, hess, curv_c, conj, sum_beta = _newton_local.newton_terms(
                loss, X, t, s, w, float(c), cfg.get("hessian", True), cfg["fit_intercept"])
            return {"lost": False, "primal": primal, "grad": grad, "hess": hess,
                    "curv_c": curv_c, "conj": conj, "sum_beta": sum_beta,
                    "seconds": time.perf_counter() - started}
        X = sp.csr_matrix(X)                 # no columns: the sparse path
    z = (np.asarray(X @ w).ravel() + c) if m else np.zeros(0)
    primal = _loss_terms(loss, z, t, s)[0] if m else 0.0
    g1, g2 = _curvatures(loss, z, t)
    sg1, sg2 = s * g1, s * g2
    n = d + int(cfg["fit_intercept"])
    grad = np.zeros(n)
    # the Hessian unless the driver holds it (the squared loss's is constant)
    hess = np.zeros((n, n)) if cfg.get("hessian", True) else None
    if m:
        grad[:d] = np.asarray(X.T @ sg1).ravel()
        if cfg["fit_intercept"]:
            grad[d] = float(np.sum(sg1))
    curv_c = float(np.sum(sg2)) if m and cfg["fit_intercept"] else 0.0
    if m and hess is not None:
        hess[:d, :d] = (X.T @ X.multiply(sg2[:, None]).tocsr()).toarray()
        if cfg["fit_intercept"]:
            col = np.asarray(X.T @ sg2).ravel()
            hess[:d, d] = col
            hess[d, :d] = col
            hess[d, d] = curv_c
    # the dual point beta = -s phi'(z), in the parameterization q of _signed
    # (beta = q; t s q with q = sigmoid(-t z) = -t phi'; t q), t = +-1
    beta = -sg1
    q = beta if loss == "squared" else (-g1 * t if loss == "logistic" else -sg1 * t)
    conj = _conj_value(loss, q, t, s) if m else 0.0
    return {"lost": False, "primal": primal, "grad": grad, "hess": hess, "curv_c": curv_c,
            "conj": conj,
            "sum_beta": float(np.sum(beta)), "seconds": time.perf_counter() - started}


def cocoa_round(part, fit, k, rnd, w, c, cfg, step):
    """One CoCoA+ round on row partition ``k``.

    ``step = (gamma, b)`` is the driver's choice from the last round's line
    search: the partition's dual variables move to q + gamma d + b e (d its
    last local proposal, e the move of the round before, both in the
    parameterization of :func:`_q_of`), which is the move the driver made on
    w.  Then the round measures the partition's pieces of the primal and
    dual objectives at the shared point (w, c), and solves the local
    subproblem (the dual of its rows with the quadratic term scaled by
    sigma', around w) by bcd's compiled dual coordinate ascent: passes until
    the local subproblem's duality gap is below ``cfg["local_tol"]`` times
    the partition's share of the global gap, at most ``cfg["epochs"]``.  It
    returns the proposal's change R^{-1} A_k^T (beta' - beta) of w and the
    dual's conjugate part along the line-search grid ``cfg["grid"]``."""
    from ..problems._dual import linear_dual
    from ..problems.dual import START_LOGIT
    started = time.perf_counter()
    X, t, s = part[:3]
    key = (fit, k)
    loss = cfg["loss"]
    m = X.shape[0]
    state = STATE.get(key)
    if rnd == 0:
        alpha = np.full(m, START_LOGIT) if loss == "logistic" else np.zeros(m)
        q = _q_of(loss, alpha)
        e = np.zeros(m)
    elif state is None or state["round"] != rnd:
        return {"lost": True}
    else:
        q, e = state["q"], state["e"]
        gamma, b = step
        if gamma == 1.0 and b == 0.0:
            moved = state["proposal"] - q
            q = state["proposal"]
            alpha = state["proposal_alpha"]
        else:
            moved = gamma * (state["proposal"] - q) + b * e
            q = _clip(loss, q + moved, s)
            alpha = _alpha_of(loss, q)
        e = moved
    ridge = np.asarray(cfg["ridge"], dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    z = np.asarray(X @ w).ravel() + c if m else np.zeros(0)
    primal, slope, curv = _loss_terms(loss, z, t, s)
    beta = _signed(loss, q, t, s)
    conj = _conj_value(loss, q, t, s)
    dual = conj - c * float(np.sum(beta))
    share = primal - conj + float(beta @ z)
    out = {"lost": False, "primal": primal, "dual": dual, "slope": slope, "curv": curv}
    if rnd == 0:
        # the starting point's contribution to w (non-zero for the logistic loss)
        out["v0"] = np.asarray(X.T @ beta).ravel() / ridge if m else np.zeros(w.shape[0])
    proposal_alpha = alpha.copy()
    epochs, local_seconds = 0, 0.0
    # at a starting point whose dual variables add to w (logistic), the
    # shared w does not include them yet: the driver discards this round's
    # proposals, so none is computed
    fresh_offset = rnd == 0 and bool(np.any(beta))
    if m and cfg["epochs"] > 0 and share > 0 and not fresh_offset:
        w_local = w.copy()
        intercept = (np.ones(m), float(c), None) if c != 0.0 else None
        rows, inv_ridge = _rows(X), np.ascontiguousarray(ridge / cfg["sigma"])

        def passes(batch, done):
            linear_dual(rows, t, s, inv_ridge, loss, proposal_alpha, w_local, 0.0, batch, 0.0,
                        cfg["order"], int(cfg["seed"]) + 7919 * k + 104729 * rnd + done,
                        False, 0, intercept, False, False)

        def local_gap():
            z_local = np.asarray(X @ w_local).ravel() + c
            return _fenchel_young(loss, z_local, _q_of(loss, proposal_alpha), t, s)

        epochs, local_seconds = _local_solve(passes, local_gap, cfg["local_tol"] * share, cfg)
    proposal = _q_of(loss, proposal_alpha)
    if fresh_offset and np.any(out["v0"]):
        # the driver discards this round's proposals (none was made)
        out.update(dv=np.zeros(w.shape[0]), values=np.zeros(len(cfg["grid"])))
    else:
        dbeta = _signed(loss, proposal, t, s) - beta
        out["dv"] = np.asarray(X.T @ dbeta).ravel() / ridge if m else np.zeros(w.shape[0])
        # the conjugate part (minus c sum beta) along the grid of (gamma, b)
        values = _conj_grid(loss, q, proposal - q, e, t, s, cfg["grid"])
        if c != 0.0:
            sums = (float(np.sum(beta)), float(np.sum(dbeta)),
                    float(np.sum(_signed(loss, e, t, s))))
            values -= c * np.array([sums[0] + g * sums[1] + b * sums[2]
                                    for g, b in cfg["grid"]])
        if (1.0, 0.0) in cfg["grid"]:
            # the plain step lands on the proposal itself (no rounding at the
            # edges of the domain)
            values[cfg["grid"].index((1.0, 0.0))] = \
                _conj_value(loss, proposal, t, s) - c * float(np.sum(beta + dbeta))
        out["values"] = values
    out.update(epochs=epochs, local_seconds=local_seconds,
               seconds=time.perf_counter() - started)
    STATE[key] = {"round": rnd + 1, "q": q, "e": e, "proposal": proposal,
                  "proposal_alpha": proposal_alpha}
    return out


def _local_solve(passes, local_gap, target, cfg):
    """The local solver's passes of a CoCoA+ round: ``passes(batch, done)``
    makes ``batch`` passes (``done`` made before), in batches of 1, 2, 4
    and then 8, until the local subproblem's gap ``local_gap()`` is at most
    ``target``, ``cfg["epochs"]`` passes are made, or the next pass would
    end after ``cfg["budget"]`` seconds (None: no time limit).  The gap is
    not measured when no pass may follow.  Returns the passes made and
    their seconds."""
    started = time.perf_counter()
    cap, budget = cfg["epochs"], cfg.get("budget")
    epochs, batch = 0, 1
    while True:
        passes(batch, epochs)
        epochs += batch
        spent = time.perf_counter() - started
        per_pass = spent / epochs
        if epochs >= cap or (budget is not None and spent + per_pass > budget):
            break
        if local_gap() <= target:
            break
        spent = time.perf_counter() - started
        batch = min(2 * batch, 8, cap - epochs)
        if budget is not None:
            batch = max(1, min(batch, int((budget - spent) / per_pass)))
    return epochs, time.perf_counter() - started


def _clip(loss, q, s):
    """q after a line-search move, kept inside the dual's domain against
    rounding (the driver only picks moves whose grid values were finite)."""
    if loss == "logistic":
        return np.clip(q, 1e-300, 1.0 - 1e-16)
    if loss == "squared":
        return q
    q = np.maximum(q, 0.0)
    return np.minimum(q, s) if loss == "hinge" else q


def prox_round(part, fit, k, rnd, rho, cfg, extra, step):
    """One ProxCoCoA+ round on column partition ``k``.

    ``step = (gamma, b)`` is the driver's choice from the last round's line
    search: the coefficients move to x + gamma d + b e (d the last local
    proposal, e the move before), the move the driver made on the margins.
    ``rho`` holds phi'(z_i) at the shared margins z (unweighted).  The round
    measures the partition's pieces of the objective, the dual and the KKT
    residual at x, then solves the local subproblem (the quadratic upper
    bound of the loss along its columns, scaled by sigma', plus the
    penalty) by bcd's coordinate descent, to a KKT residual of
    ``cfg["local_tol"]`` times the block's, at most ``cfg["epochs"]``
    passes.  It returns the proposal's change of the margins A_k d and the
    penalty of its columns along the line-search grid ``cfg["grid"]``."""
    from .. import LeastSquares, L1, solve
    started = time.perf_counter()
    X = part[0]
    key = (fit, k)
    n_k = X.shape[1]
    state = STATE.get(key)
    if rnd == 0:
        x = np.zeros(n_k)
        e = np.zeros(n_k)
    elif state is None or state["round"] != rnd:
        return {"lost": True}
    else:
        gamma, b = step
        x, e, zero = state["x"], state["e"], state["zero"]
        moved = np.where(zero, -x, gamma * (state["proposal"] - x) + b * e)
        x = state["proposal"] if (gamma == 1.0 and b == 0.0) else \
            np.where(zero, 0.0, x + moved)
        e = moved
    s = cfg["weights"]
    l1, l2 = cfg["l1"], cfg["l2"]
    rho = np.asarray(rho, dtype=np.float64)
    g = np.asarray(X.T @ (s * rho)).ravel()          # the gradient of the loss, block k
    penalty = l1 * float(np.sum(np.abs(x))) + 0.5 * l2 * float(x @ x)
    # the KKT residual of the block: distance of -(g + l2 x) to l1 d|x|
    h = g + l2 * x
    kkt = np.where(x != 0.0, np.abs(h + l1 * np.sign(x)), np.maximum(np.abs(h) - l1, 0.0))
    block_kkt = float(np.max(kkt, initial=0.0))
    pieces = {"penalty": penalty, "corr": float(np.max(np.abs(g), initial=0.0)),
              "kkt": block_kkt}
    if l2 > 0:
        pieces["conj"] = float(np.sum(np.maximum(np.abs(g) - l1, 0.0) ** 2) / (2.0 * l2))
    if extra is not None:
        g2 = np.asarray(X.T @ (s * np.asarray(extra, dtype=np.float64))).ravel()
        pieces["corr2"] = float(np.max(np.abs(g2), initial=0.0))
        if l2 > 0:
            pieces["conj2"] = float(np.sum(np.maximum(np.abs(g2) - l1, 0.0) ** 2) / (2.0 * l2))
    if cfg.get("polish"):
        pieces["ws"], sent = _working_set(X, state if rnd else None, x, g, l1, cfg["ws_send"])
    else:
        sent = None
    proposal = x
    epochs = 0
    if n_k and cfg["epochs"] > 0 and block_kkt > 0:
        scale = cfg["sigma"] * cfg["curvature"]
        z_k = np.asarray(X @ x).ravel()
        live = s > 0
        problem = LeastSquares(X[live] if not np.all(live) else X,
                               (z_k - rho / scale)[live], l2=l2,
                               penalty=L1(l1) if l1 > 0 else None,
                               sample_weight=(s * scale)[live])
        result = solve(problem, rule="cyclic", blocks="fixed", block_size=1,
                       update="exact" if l1 == 0 else "gradient", x0=x,
                       max_iter=int(cfg["epochs"]) * n_k,
                       tol=cfg["local_tol"] * block_kkt, warn=False,
                       working_set=False, extrapolation=0, screening=False)
        proposal = np.asarray(result.x, dtype=np.float64)
        epochs = result.n_iter / n_k
    # the coordinates the proposal sets to zero go to zero whatever the step
    # (a line-search step other than 1 would leave them small and of either
    # sign, which the L1 penalty's certificate never forgives); the others
    # move by gamma d + b e
    zero = (proposal == 0.0) if l1 > 0 else np.zeros(n_k, dtype=bool)
    d = np.where(zero, 0.0, proposal - x)
    e_free = np.where(zero, 0.0, e)
    grid = cfg["grid"]
    values = np.empty(len(grid))
    for j, (gamma, b) in enumerate(grid):
        xx = np.where(zero, 0.0, x + gamma * d + b * e_free)
        values[j] = l1 * float(np.sum(np.abs(xx))) + 0.5 * l2 * float(xx @ xx)
    STATE[key] = {"round": rnd + 1, "x": x, "e": e_free, "proposal": proposal,
                  "measured": x, "zero": zero,
                  "sent": sent}
    pieces.update(lost=False, dz=np.asarray(X @ d).ravel(), values=values, epochs=epochs,
                  seconds=time.perf_counter() - started,
                  ez=np.asarray(X @ e_free).ravel() if np.any(zero & (e != 0)) else None,
                  fz=np.asarray(X @ np.where(zero, -x, 0.0)).ravel() if np.any(zero & (x != 0))
                  else None)
    return pieces


#: a column joins the working set of the certificate's dual point when its
#: correlation with the dual point is within this fraction of l1
WS_MARGIN = 0.02


def _working_set(X, state, x, g, l1, send):
    """The partition's share of the working set of ProxCoCoA+'s certificate:
    its columns that are non-zero or whose gradient is within
    ``WS_MARGIN`` of ``l1`` (where the solution's support lies once the dual
    point is good).  ``{"count": size}`` alone, or with ``send`` also
    ``"live"`` (the columns), ``"x"`` (the coefficients on them), ``"new"``
    (the columns not sent before) and ``"cols"`` (those columns as a CSC
    matrix); and the mask of the columns sent so far (kept with the
    partition's state, so that each column travels once)."""
    sent = state.get("sent") if state is not None else None
    live = np.flatnonzero((x != 0.0) | (np.abs(g) >= (1.0 - WS_MARGIN) * l1))
    if not send:
        return {"count": int(live.size)}, sent
    sent = np.zeros(X.shape[1], dtype=bool) if sent is None else sent.copy()
    new = live[~sent[live]]
    sent[new] = True
    return {"count": int(live.size), "live": live, "x": x[live].copy(), "new": new,
            "cols": sp.csc_matrix(X[:, new])}, sent


def coefficients(fit, k, rnd):
    """The coefficients of column partition ``k`` (ProxCoCoA+) at which its
    last round measured the objective (None when lost)."""
    state = STATE.get((fit, k))
    if state is None or state["round"] != rnd:
        return None
    return state["measured"]


def margins(part, fit, k, rnd):
    """A_k x_k at the coefficients partition ``k`` holds now (None when lost)."""
    state = STATE.get((fit, k))
    if state is None or state["round"] != rnd:
        return None
    return np.asarray(part[0] @ state["x"]).ravel()


# -- multinomial CoCoA+ ---------------------------------------------------------------

#: the smallest probability the multinomial dual keeps (log p >= -700, as
#: in bcd.problems._dual_multinomial)
P_MIN = np.exp(-700.0)


def _mnl_prepare(X, t, cfg):
    """What the local solver of a multinomial partition needs, computed once
    per fit: its rows in canonical CSR form with a last column of ones (the
    intercept's, of inverse ridge 0), the class index of each row, the
    inverse ridge sigma' / r and q_ik = sum_j a_ij^2 sigma' / r_jk."""
    K = int(cfg["n_classes"])
    d = X.shape[1]
    m = X.shape[0]
    rows = sp.hstack([sp.csr_matrix(X), sp.csr_matrix(np.ones((m, 1)))], format="csr")
    rows.sum_duplicates()
    rows.sort_indices()
    r = np.asarray(cfg["ridge"], dtype=np.float64).ravel()
    ridge = np.broadcast_to(r if r.size > 1 else r[0], (d * K,)).reshape(d, K)
    per_feature = bool(np.all(ridge == ridge[:, :1]))
    inv = float(cfg["sigma"]) / ridge
    if per_feature:
        inv_r = np.r_[inv[:, 0], 0.0]
    else:
        inv_r = np.vstack([inv, np.zeros((1, K))]).ravel()
    sq = rows.multiply(rows).tocsr()
    Q = np.asarray(sq @ (inv_r.reshape(-1, 1) if per_feature else inv_r.reshape(d + 1, K)))
    Q = np.ascontiguousarray(np.broadcast_to(Q, (m, K)), dtype=np.float64)
    classes = np.asarray(cfg["classes"], dtype=np.float64)
    y = np.searchsorted(classes, t).astype(np.int64)
    return {"indptr": rows.indptr.astype(np.int32), "indices": rows.indices.astype(np.int32),
            "data": np.ascontiguousarray(rows.data, dtype=np.float64), "y": y,
            "inv_r": np.ascontiguousarray(inv_r), "per_feature": per_feature, "Q": Q}


def _mnl_scores(X, w, c):
    """The scores X W + c, (rows x classes)."""
    return np.asarray(X @ w) + c if X.shape[0] else np.zeros((0, w.shape[1]))


def _mnl_loss(Z, y, s):
    """sum_i s_i [logsumexp(z_i) - z_{i, y_i}], and the softmax of Z."""
    if Z.shape[0] == 0:
        return 0.0, np.zeros_like(Z)
    mx = Z.max(axis=1, keepdims=True)
    E = np.exp(Z - mx)
    tot = E.sum(axis=1, keepdims=True)
    lse = (mx + np.log(tot)).ravel()
    return float(s @ (lse - Z[np.arange(Z.shape[0]), y])), E / tot


def _mnl_entropy(P, s):
    """sum_i s_i sum_k p_ik log p_ik (0 log 0 = 0)."""
    return float(s @ np.sum(xlogy(P, P), axis=1)) if P.shape[0] else 0.0


def _mnl_kl(P, Z, s):
    """sum_i s_i KL(p_i || softmax(z_i)), the partition's share of the gap."""
    if P.shape[0] == 0:
        return 0.0
    mx = Z.max(axis=1, keepdims=True)
    lse = mx + np.log(np.exp(Z - mx).sum(axis=1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = xlogy(P, P) - P * (Z - lse)
    return float(s @ np.sum(terms, axis=1))


def _mnl_simplex(P):
    """P after a line-search move: entries at least P_MIN, rows summing to 1
    (the driver only takes moves whose grid values were finite)."""
    P = np.maximum(P, P_MIN)
    return P / P.sum(axis=1, keepdims=True)


def _mnl_grid(P, D, E, s, grid):
    """-sum_i s_i sum_k p_ik log p_ik at P + gamma D + b E for every (gamma, b)
    of the grid (-inf where a probability turns negative; compiled, one pass
    over the rows)."""
    from ._grid import entropy_grid
    gam, mom = _grid_arrays(grid)
    f = np.ascontiguousarray
    return entropy_grid(f(P, dtype=np.float64), f(D, dtype=np.float64),
                        f(E, dtype=np.float64), f(s, dtype=np.float64), gam, mom)


def mnl_round(part, fit, k, rnd, w, c, cfg, step):
    """One CoCoA+ round of the multinomial model on row partition ``k``.

    The dual variables of a row are a probability vector p_i (the dual of
    Yu, Huang and Lin, 2011, as in :class:`bcd.Multinomial`); the partition
    contributes v_k = R^{-1} A_k^T U_k, U_i = s_i (e_{y_i} - p_i), to the
    shared W (n_features x n_classes, flat row-major).  As in
    :func:`cocoa_round`, ``step`` is the driver's line-search choice of the
    last round, the pieces of the primal and dual objectives are measured
    at the shared (W, c), and the local subproblem (sigma' = K) is solved by
    the multinomial dual's coordinate ascent (:mod:`._mnl_local`) to
    ``cfg["local_tol"]`` of the partition's share of the gap, at most
    ``cfg["epochs"]`` passes.  Returns the proposal's change of W (flat)
    and the dual's entropy part along the line-search grid."""
    from ._mnl_local import local_passes
    started = time.perf_counter()
    X, t, s = part[:3]
    key = (fit, k)
    K = int(cfg["n_classes"])
    m, d = X.shape
    state = STATE.get(key)
    if rnd == 0:
        prep = _mnl_prepare(X, t, cfg)
        P = np.full((m, K), 1e-6 / K)
        P[np.arange(m), prep["y"]] += 1.0 - 1e-6
        E = np.zeros((m, K))
        T = None
    elif state is None or state["round"] != rnd:
        return {"lost": True}
    else:
        prep, P, E = state["prep"], state["P"], state["E"]
        gamma, b = step
        if gamma == 1.0 and b == 0.0:
            moved = state["proposal"] - P
            P, T = state["proposal"], state["proposal_T"]
        else:
            moved = gamma * (state["proposal"] - P) + b * E
            P = _mnl_simplex(P + moved)
            T = None
        E = moved
    y = prep["y"]
    Y = np.zeros((m, K))
    Y[np.arange(m), y] = 1.0
    ridge = np.asarray(cfg["ridge"], dtype=np.float64)
    W = np.asarray(w, dtype=np.float64).reshape(d, K)
    c = np.asarray(c, dtype=np.float64).reshape(K)
    Z = _mnl_scores(X, W, c)
    primal, soft = _mnl_loss(Z, y, s)
    U = s[:, None] * (Y - P)
    conj = -_mnl_entropy(P, s)
    sumU = U.sum(axis=0)
    dual = conj - float(c @ sumU)
    share = primal - conj + float(np.sum(U * Z))
    G = soft - Y
    slope = s @ G if m else np.zeros(K)
    curv = (soft * s[:, None]).T @ np.ones(m) if m else np.zeros(K)
    H = np.diag(curv) - (soft * s[:, None]).T @ soft if m else np.zeros((K, K))
    out = {"lost": False, "primal": primal, "dual": dual, "slope": slope, "curv": H}
    if rnd == 0:
        out["v0"] = (np.asarray(X.T @ U) / ridge.reshape(-1, K) if ridge.size > 1 else
                     np.asarray(X.T @ U) / ridge).ravel() if m else np.zeros(d * K)
    proposal = P.copy()
    T_loc = np.minimum(np.log(np.maximum(P, P_MIN)), 0.0) if T is None else T.copy()
    epochs, local_seconds = 0, 0.0
    # at the starting dual point, whose W(P) is not the shared w yet, the
    # driver discards the round's proposals: none is computed
    fresh_offset = rnd == 0 and bool(np.any(U))
    if m and cfg["epochs"] > 0 and share > 0 and not fresh_offset:
        W_local = np.ascontiguousarray(np.vstack([W, c[None, :]]).ravel())
        weights = np.ascontiguousarray(s, dtype=np.float64)

        def passes(batch, done):
            local_passes(prep["indptr"], prep["indices"], prep["data"], weights, proposal,
                         T_loc, prep["Q"], prep["inv_r"], prep["per_feature"], W_local, batch,
                         cfg["order"] == "random",
                         int(cfg["seed"]) + 7919 * k + 104729 * rnd + done)

        def local_gap():
            return _mnl_kl(proposal, _mnl_scores(X, W_local.reshape(d + 1, K)[:d], c), s)

        epochs, local_seconds = _local_solve(passes, local_gap, cfg["local_tol"] * share, cfg)
    if fresh_offset and np.any(out["v0"]):
        # the driver discards this round's proposals (none was made)
        out.update(dv=np.zeros(d * K), values=np.zeros(len(cfg["grid"])))
    else:
        dU = s[:, None] * (P - proposal)
        if m:
            dv = np.asarray(X.T @ dU)
            dv = dv / (ridge.reshape(-1, K) if ridge.size > 1 else ridge)
            out["dv"] = dv.ravel()
        else:
            out["dv"] = np.zeros(d * K)
        grid = cfg["grid"]
        D = proposal - P
        values = _mnl_grid(P, D, E, s, grid)
        sD, sE = s @ D if m else np.zeros(K), s @ E if m else np.zeros(K)
        # -c' sum_i U_i along the grid: U(gamma, b) = U - s (gamma D + b E)
        values -= np.array([float(c @ (sumU - g * sD - b * sE)) for g, b in grid])
        if (1.0, 0.0) in grid:
            values[grid.index((1.0, 0.0))] = -_mnl_entropy(proposal, s) - \
                float(c @ (sumU - sD))
        out["values"] = values
    out.update(epochs=epochs, local_seconds=local_seconds,
               seconds=time.perf_counter() - started)
    STATE[key] = {"round": rnd + 1, "P": P, "E": E, "proposal": proposal,
                  "proposal_T": T_loc, "prep": prep}
    return out
