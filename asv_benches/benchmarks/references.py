"""NumPy/SciPy re-implementations of bcd's iterations, for speed ratios.

Each loop performs the same iterations as a bcd configuration, written the
way one would with NumPy and SciPy, and returns the blocks and steps it
took so that ``check_iterates`` can show that bcd produces the same
iterates (and locate the first iteration where it does not).

* ``numpy_gs_vb``: Gauss-Southwell with variable blocks, least squares
  (row b of compare.py).
* ``numpy_gsd_newton``: the GSD rule with variable blocks and block Newton
  steps with bcd's Armijo search (``armijo``), multinomial logistic
  regression (row f).

The Armijo constant and backtracking limit are bcd's own
(``bcd.core._update``), so the search cannot drift from the compiled one.
"""
import time

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from bcd.core._update import LINE_SEARCH_ARMIJO_C, LINE_SEARCH_MAX_BACKTRACKS

from .common import BLOCK_SIZE, run_iterations

#: options of ``bcd.solve`` doing the iterations of ``numpy_gs_vb``
GS_VB_OPTIONS = dict(rule="gs", blocks="variable", block_size=BLOCK_SIZE)


def numpy_gs_vb(A, b, n_iter, tau=BLOCK_SIZE):
    """Gauss-Southwell with variable blocks for 1/2 ||Ax - b||^2 from x = 0.

    Each iteration computes the full gradient, takes the ``tau`` coordinates
    with the largest ``|g_i|`` (never one with an all-zero column), and
    steps ``x_b -= g_b / L_b`` with ``L_b`` the largest eigenvalue of
    ``A_b^T A_b``.  Returns ``x``, seconds per iteration, and the blocks and
    steps of every iteration (to locate a divergence from bcd).
    """
    A = sp.csc_matrix(A)
    At = A.T.tocsr()
    n = A.shape[1]
    empty = np.flatnonzero(np.diff(A.indptr) == 0)
    x = np.zeros(n)
    r = -np.asarray(b, dtype=float)
    blocks = np.empty((n_iter, tau), dtype=np.intp)
    steps = np.empty((n_iter, tau))
    start = time.perf_counter()
    for k in range(n_iter):
        g = At @ r
        score = np.abs(g)
        if empty.size:
            score[empty] = -1.0
        blk = np.argpartition(score, n - tau)[n - tau:]
        blk.sort()
        Ab = A[:, blk]
        L = np.linalg.eigvalsh((Ab.T @ Ab).toarray())[-1]
        d = g[blk] / -L
        x[blk] += d
        r += Ab @ d
        blocks[k] = blk
        steps[k] = d
    elapsed = time.perf_counter() - start
    return x, elapsed / n_iter, blocks, steps


def armijo(delta, gd, alpha=1.0):
    """The backtracking search of bcd's ``Update.armijo``: the accepted step,
    or None when ``LINE_SEARCH_MAX_BACKTRACKS`` backtracks fail.
    ``delta(alpha)`` is f(x + alpha d) - f(x) and ``gd`` the directional
    derivative; trials after the first minimize the quadratic, then the
    cubic, interpolating the last trials, kept within [0.1, 0.5] alpha."""
    if not gd < 0.0:
        return None
    fa = delta(alpha)
    a_prev = f_prev = 0.0
    for k in range(LINE_SEARCH_MAX_BACKTRACKS):
        if np.isfinite(fa) and fa <= LINE_SEARCH_ARMIJO_C * alpha * gd:
            return alpha
        if not np.isfinite(fa):
            a_new = 0.1 * alpha
        elif k == 0:                     # minimizer of the interpolating quadratic
            a_new = -gd * alpha * alpha / (2.0 * (fa - gd * alpha))
        else:                            # minimizer of the cubic through the last two trials
            c1 = fa - gd * alpha
            c2 = f_prev - gd * a_prev
            d1 = 1.0 / (a_prev * a_prev * alpha * alpha * (alpha - a_prev))
            a3 = d1 * (a_prev * a_prev * c1 - alpha * alpha * c2)
            b3 = d1 * (-a_prev ** 3 * c1 + alpha ** 3 * c2)
            disc = b3 * b3 - 3.0 * a3 * gd
            if a3 == 0.0 or disc < 0.0:
                a_new = 0.5 * alpha
            else:
                a_new = (-b3 + np.sqrt(disc)) / (3.0 * a3)
        if not a_new >= 0.1 * alpha:
            a_new = 0.1 * alpha
        elif a_new > 0.5 * alpha:
            a_new = 0.5 * alpha
        a_prev, f_prev, alpha = alpha, fa, a_new
        fa = delta(alpha)
    return None


def psd_solve(H, b):
    """H^+ b: Cholesky, else the pseudo-inverse from an eigendecomposition
    (eigenvalues below 1e-12 times the largest dropped); None on failure."""
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(H, check_finite=False), b,
                                      check_finite=False)
    except np.linalg.LinAlgError:
        pass
    vals, vecs = np.linalg.eigh(H)
    if not vals[-1] > 0.0:
        return None
    keep = vals > 1e-12 * vals[-1]
    inv = np.zeros_like(vals)
    inv[keep] = 1.0 / vals[keep]
    return vecs @ (inv * (vecs.T @ b))


def softmax_minus_onehot(S, Y):
    """P - Y with P the row-wise softmax of the scores S."""
    mx = S.max(axis=1, keepdims=True)
    lse = mx + np.log(np.exp(S - mx).sum(axis=1, keepdims=True))
    return np.exp(S - lse) - Y


def numpy_gsd_newton(A, y, n_classes, lipschitz, l2, n_iter, tau=BLOCK_SIZE):
    """GSD with variable blocks and block Newton steps for the multinomial
    objective ``sum_i [logsumexp(a_i W) - a_i W_{y_i}] + l2/2 ||W||^2`` from W = 0.

    ``x`` is W (n_features x n_classes) flattened row-major, ``y`` holds class
    indices 0..n_classes-1 and ``lipschitz`` the ``L_i`` of the GSD scores.
    Each iteration computes the full gradient ``A^T (P - Y) + l2 W``, takes
    the ``tau`` coordinates with the largest ``g_i^2 / L_i``, solves with the
    block Hessian ``sum_r a_rj a_rj' p_rc (delta_cc' - p_rc') + l2 I`` and runs
    the Armijo search on ``f(x + alpha d) - f(x) = sum_r [log(1 + sum_c p_rc
    expm1(alpha dS_rc)) - alpha dS_r,y_r] + l2 (alpha x.d + alpha^2 d.d / 2)``
    over the rows the block touches, ``dS = A_b d`` by class.  The scores S
    are updated on those rows.  Returns ``x``, seconds per iteration, and the
    blocks and steps of every iteration.
    """
    A = sp.csc_matrix(A)
    At = A.T.tocsr()
    m, n_features = A.shape
    k = n_classes
    n = n_features * k
    Y = np.eye(k)[y]
    inv_L = np.zeros(n)
    inv_L[lipschitz > 0] = 1.0 / lipschitz[lipschitz > 0]
    x = np.zeros(n)
    S = np.zeros((m, k))
    W = softmax_minus_onehot(S, Y)                    # P - Y
    blocks = np.empty((n_iter, tau), dtype=np.intp)
    steps = np.empty((n_iter, tau))
    diag = np.diag_indices(tau)
    start = time.perf_counter()
    for it in range(n_iter):
        g = np.asarray(At @ W).ravel() + l2 * x
        score = inv_L * g * g
        blk = np.argpartition(score, n - tau)[n - tau:]
        blk.sort()
        feat = blk // k
        cls = blk - feat * k
        Ab = A[:, feat].toarray()
        Pb = W[:, cls] + Y[:, cls]
        M = Ab * Pb
        H = (M.T @ Ab) * (cls[:, None] == cls[None, :]) - M.T @ M
        H[diag] += l2
        gb = g[blk]
        d = psd_solve(H, -gb)
        gd = float(gb @ d) if d is not None else 0.0
        if not gd < 0.0:                              # steepest-descent fallback
            d = -gb
            gd = -float(gb @ gb)
        # the direction on the scores: dS[rows, classes] = A_b d by class
        ucls, pos = np.unique(cls, return_inverse=True)
        E = np.zeros((tau, ucls.size))
        E[np.arange(tau), pos] = d
        rows = np.flatnonzero((Ab[:, d != 0.0] != 0.0).any(axis=1))
        dS = Ab[rows] @ E
        Pr = W[np.ix_(rows, ucls)] + Y[np.ix_(rows, ucls)]
        ypos = np.minimum(np.searchsorted(ucls, y[rows]), ucls.size - 1)
        dSy = np.where(ucls[ypos] == y[rows], dS[np.arange(rows.size), ypos], 0.0)
        xd = float(x[blk] @ d)
        dd = float(d @ d)

        def delta(alpha):
            t = (Pr * np.expm1(alpha * dS)).sum(axis=1)
            return float(np.sum(np.log1p(t) - alpha * dSy)) \
                + l2 * (alpha * xd + 0.5 * alpha * alpha * dd)

        alpha = armijo(delta, gd)
        if alpha is None:
            raise RuntimeError(f"NumPy GSD-VB + Newton: line search failed at iteration {it + 1}")
        x[blk] += alpha * d
        S[np.ix_(rows, ucls)] += alpha * dS
        W[rows] = softmax_minus_onehot(S[rows], Y[rows])
        blocks[it] = blk
        steps[it] = alpha * d
    elapsed = time.perf_counter() - start
    return x, elapsed / n_iter, blocks, steps


def same_iterates(x, x_ref):
    """x equals x_ref to 1e-9, relative to the largest |x_ref_i|."""
    scale = float(np.max(np.abs(x_ref))) if x_ref.size else 0.0
    return np.allclose(x, x_ref, rtol=1e-9, atol=1e-9 * max(scale, 1e-300))


def check_iterates(problem, x_bcd, x_ref, blocks, steps, name, options=None, method="GS-VB"):
    """Raise an AssertionError locating the first iteration where bcd's
    iterates (``options``, default GS-VB) leave those of the NumPy loop."""
    if options is None:
        options = GS_VB_OPTIONS
    if same_iterates(x_bcd, x_ref):
        return
    n_iter = len(blocks)

    def reference_at(k):
        x = np.zeros(problem.n_coordinates)
        np.add.at(x, blocks[:k].ravel(), steps[:k].ravel())
        return x

    def bcd_at(k):
        return run_iterations(problem, max_iter=k, **options).x

    lo, hi = 0, n_iter          # iterates agree after lo steps, differ after hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if same_iterates(bcd_at(mid), reference_at(mid)):
            lo = mid
        else:
            hi = mid
    moved = np.flatnonzero(bcd_at(hi) != bcd_at(hi - 1))
    diff = np.abs(x_bcd - x_ref)
    raise AssertionError(
        f"{method} iterates of bcd differ from the NumPy loop on {name}: after {n_iter} "
        f"iterations max |x_bcd - x_numpy| = {diff.max():.3e} (max |x_numpy| = "
        f"{np.abs(x_ref).max():.3e}). First differing iteration: {hi} (1-based); NumPy "
        f"updated block {blocks[hi - 1].tolist()}, bcd changed coordinates {moved.tolist()}.")
