r"""Sparse Gaussian process regression with inducing points chosen among the
training inputs by swaps (CholQR, Cao, Brubaker, Fleet and Hertzmann,
"Efficient optimization for sparse Gaussian process regression", 2013).

The model replaces the kernel matrix K by its Nystrom approximation on m
inducing points :math:`I`, :math:`\hat K = K_{:,I} K_{I,I}^{-1} K_{I,:} = L
L^T` with L the n x m partial Cholesky factor pivoted on I.  With
:math:`\tilde L = [L; \sigma I_m] = QR` and :math:`\tilde y = [y; 0]`
(:math:`\sigma^2` the noise variance), up to the constant
:math:`\tfrac n2 \log 2\pi`:

* ``"nmll"``, the projected-process negative log marginal likelihood
  (eq. 4): :math:`\tfrac12 (E_D + E_C)`;
* ``"vfe"``, Titsias' variational free energy (eq. 5): :math:`\tfrac12 (E_D
  + E_C + E_V)`;

with :math:`E_D = \sigma^{-2}(\|y\|^2 - \|Q^T \tilde y\|^2)`, :math:`E_C =
(n - m) \log \sigma^2 + 2 \log |R|` and :math:`E_V = \sigma^{-2}
\operatorname{tr}(K - L L^T)`.  No n x n matrix is formed: the state is L
(n x m), R (m x m), :math:`L^T y` and the residual diagonal
:math:`\operatorname{diag}(K - LL^T)`; :math:`Q^T \tilde y = R^{-T} L^T y`,
so Q itself is never stored.

A swap (Section 3.4 of the paper) moves the inducing point to replace to the
last pivot position by reflections of neighbouring columns of L (the
model is unchanged), drops it (a rank-one downdate), scores every candidate
approximately from z "information pivots" (a rank-z partial Cholesky
factor of the residual :math:`K - \hat K`, replaced by a random set at
regular intervals), evaluates the best candidate exactly (eqs. 14-16) and
keeps it only if the objective decreases; each step costs O(mn).
"""
import copy
import math
import time
import warnings

import numpy as np
import scipy.linalg
from scipy.linalg import blas

from .._progress import Progress, check_verbose
from .._resources import resolve_threads
from .._result import ConvergenceWarning
from .._validation import check_scalar
from ._kernel import CyKernelEvaluator, max_threads
from . import _sparse
from ._sparse import (column_and_projection, lmul, ltmul, rank_one_columns, rotate_columns,
                      rotate_rows, rotate_triangular, rotation_coefficients, row_sqnorms,
                      solve_upper, solve_upper_many, upper_tmul, zero_upper)
from .kernels import Kernel
from .base import (FitInterrupted, RegressorBase, check_array, check_max_time, check_target,
                   feature_names, not_fitted)

OBJECTIVES = ("vfe", "nmll")
OPTIMIZERS = ("cholqr", "random", "greedy")
#: a candidate (or information pivot) needs a residual variance above this
#: fraction of the largest k(x, x): duplicates of inducing inputs have none
PIVOT_TOL = 1e-10
#: after a hyperparameter step, inducing points whose residual variance fell
#: to this fraction of the largest k(x, x) (rounding level: numerically
#: dependent on the others) are dropped and replaced
REPAIR_TOL = 1e-12
#: smallest noise variance accepted, relative to the largest k(x, x)
MIN_RELATIVE_NOISE = 1e-6
#: R comes from the Cholesky factor of L^T L + noise I (CholeskyQR) while
#: tr(L^T L) / noise, which bounds the squared condition number of the
#: augmented factor, stays below this; above, by Householder QR in blocks
CHOLQR_MAX_CONDITION = 1e8
#: log-parameters are kept in [-LOG_BOUND, LOG_BOUND]
LOG_BOUND = 25.0
#: the hyperparameter step forms L^T L from the Gram matrix of K[:, I] (which
#: loses a factor cond(chol(K_II)) of accuracy against the triangular solve)
#: while the Frobenius-norm condition number of chol(K_II) is below this
GRAM_MAX_CONDITION = 1e5
#: below this many flops, a triangular solve with many right-hand sides is
#: made a product with the inverse
SMALL_FLOPS = 2e7
_LOG_2PI = math.log(2.0 * math.pi)


def _tri(A, b, lower=False, trans=False):
    """Solve op(A) x = b for triangular A (op: transpose if ``trans``), b a
    vector or matrix, by BLAS trsv/trsm called directly (SciPy's
    ``solve_triangular`` with a matrix right-hand side can be far slower on
    small systems)."""
    b = np.asarray(b, dtype=np.float64)
    if A.shape[0] == 0 or b.size == 0:
        return np.array(b, dtype=np.float64, copy=True)
    if b.ndim == 1:
        return blas.dtrsv(A, b, lower=int(lower), trans=int(trans))
    return blas.dtrsm(1.0, A, b, lower=int(lower), trans_a=int(trans))


def _rsolve(R, k, b, trans):
    """R[:k, :k]^{-1} b (or ^{-T}) for the upper triangular R (C-ordered,
    leading block used in place), b a vector or a (k, q) matrix; a new array."""
    out = np.array(b, dtype=np.float64, order="C", copy=True)
    if k == 0 or out.size == 0:
        return out
    if out.ndim == 1:
        solve_upper(R, k, out, trans)
    else:
        solve_upper_many(R, k, out, trans)
    return out


class _blas_threads:
    """Limit BLAS to ``n`` threads while in the block when ``n`` is given and
    threadpoolctl is installed (otherwise BLAS keeps its own setting)."""

    def __init__(self, n):
        self.n = n
        self.limits = None

    def __enter__(self):
        if self.n is not None:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                return self
            self.limits = threadpool_limits(limits=int(self.n), user_api="blas")
        return self

    def __exit__(self, *exc):
        if self.limits is not None:
            self.limits.restore_original_limits()
        return False


class _NotPositiveDefinite(Exception):
    """The kernel matrix of the inducing points is numerically singular."""


def _cholesky_or_fail(K):
    """Lower Cholesky factor of K, or _NotPositiveDefinite."""
    try:
        B = scipy.linalg.cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        raise _NotPositiveDefinite() from None
    if not np.all(np.diag(B) > 0):
        raise _NotPositiveDefinite()
    return B


# --------------------------------------------------------------------------- the factorization

class _Factor:
    """The factored sparse GP for a fixed kernel, noise and objective.

    ``L[:, :k]`` is the partial Cholesky factor pivoted on ``piv[:k]``
    (lower trapezoidal in that order), ``R[:k, :k]`` the triangular factor
    of the QR of ``[L; sqrt(noise) I]``, ``Ly = L^T y`` and ``d`` the
    residual diagonal diag(K - L L^T).
    """

    def __init__(self, X, y, capacity, n_threads, nu):
        self.X = X
        self.y = y
        self.n = X.shape[0]
        self.nu = nu                     # 1 for "vfe", 0 for "nmll"
        self.n_threads = n_threads
        self.yy = float(y @ y)
        self.L = np.zeros((self.n, capacity), order="F")
        self.R = np.zeros((capacity, capacity))
        self.Ly = np.zeros(capacity)
        self.piv = np.zeros(capacity, dtype=np.int32)
        self.k = 0
        self.inducing = np.zeros(self.n, dtype=bool)
        self._sq = np.empty(self.n)

    # -- kernel and noise
    def set_model(self, kernel, noise):
        self.kernel = kernel
        self.s = float(noise)
        self.ev = kernel.evaluator(self.X, n_threads=self.n_threads)
        # single columns on one thread (not worth waking the others)
        self.ev1 = CyKernelEvaluator(kernel._spec(self.X.shape[1]), self.X, None, 1) \
            if self.n_threads > 1 else self.ev
        self.diag = (np.full(self.n, kernel.diag_value()) if kernel.stationary
                     else self.ev.diagonal())
        self.dmax = max(float(self.diag.max()), 0.0)
        self.thr = PIVOT_TOL * self.dmax if self.dmax > 0 else np.inf
        self.thr_repair = REPAIR_TOL * self.dmax if self.dmax > 0 else np.inf
        self.trace = float(self.diag.sum())

    # -- from scratch
    def reset(self):
        """No inducing point."""
        self.k = 0
        self.d = self.diag.copy()
        self.inducing[:] = False

    def factorize(self, piv, repair=False):
        """L = K[:, I] chol(K_II)^{-T} for the pivots ``piv``, then R, L^T y, d.

        With ``repair``, pivots whose residual variance against those before
        them is at most the pivot tolerance are dropped (after a change of
        the hyperparameters an inducing set can become numerically
        dependent); the caller refills the set."""
        piv = np.asarray(piv, dtype=np.int32)
        m = piv.shape[0]
        if m == 0:
            self.reset()
            return
        Lm = self.L[:, :m]
        self.ev.columns_into(piv, Lm)
        Kmm = Lm[piv, :]
        Kmm = 0.5 * (Kmm + Kmm.T)
        if repair:
            taken, Lc = _in_order_pivots(Kmm, m, self.thr_repair)
            if taken.shape[0] < m:
                piv = piv[taken]
                m = piv.shape[0]
                if m == 0:
                    self.reset()
                    return
                Lm = self.L[:, :m]
                self.ev.columns_into(piv, Lm)
            B = np.tril(Lc[taken])
        else:
            B = _cholesky_or_fail(Kmm)
        if self.n * m * m >= SMALL_FLOPS:
            out = blas.dtrsm(1.0, B, Lm, side=1, lower=1, trans_a=1, overwrite_b=1)
            if not np.shares_memory(out, self.L):
                Lm[:] = out
        else:
            # small: a product with the inverse (OpenBLAS runs even small
            # triangular solves on all threads, slow on a busy machine)
            Lm[:] = Lm @ _tri(B, np.eye(m), lower=True).T
        Lm[piv, :] = np.tril(B)          # the exact structure of the pivot rows
        self.piv[:m] = piv
        self.k = m
        self.R[:m, :m] = self._r_factor(Lm)
        self.R[m:, :m] = 0.0
        ltmul(self.L, m, self.y, self.Ly, self.n_threads)
        row_sqnorms(self.L, m, self._sq, self.n_threads)
        self.d = np.maximum(self.diag - self._sq, 0.0)
        self.d[piv] = 0.0
        self.inducing[:] = False
        self.inducing[piv] = True

    def _r_factor(self, Lm):
        """R of the QR of [Lm; sqrt(noise) I]: by the Cholesky factor of the
        Gram matrix Lm^T Lm + noise I (CholeskyQR) when that is well
        conditioned, else by Householder QR of blocks of rows."""
        m = Lm.shape[1]
        G = blas.dsyrk(1.0, Lm, trans=1, lower=0)
        if np.trace(G) / self.s <= CHOLQR_MAX_CONDITION:
            G = np.triu(G) + np.triu(G, 1).T
            G[np.diag_indices(m)] += self.s
            try:
                return scipy.linalg.cholesky(G, lower=False, check_finite=False)
            except np.linalg.LinAlgError:
                pass
        R = math.sqrt(self.s) * np.eye(m)
        step = max(4 * m, 1024)
        for start in range(0, self.n, step):
            R = scipy.linalg.qr(np.vstack([R, Lm[start:start + step]]), mode="r",
                                check_finite=False)[0][:m]
        return R * np.where(np.diag(R) < 0, -1.0, 1.0)[:, None]

    # -- objective
    def objective_parts(self, k=None, dsum=None):
        """(F, E_D, E_C, E_V) of the first k pivots (default all) with the
        residual diagonal summing to ``dsum`` (default sum(d))."""
        k = self.k if k is None else k
        dsum = float(self.d.sum()) if dsum is None else dsum
        c = _rsolve(self.R, k, self.Ly[:k], True)
        ed = (self.yy - float(c @ c)) / self.s
        logdet = float(np.sum(np.log(np.abs(np.diag(self.R)[:k]))))
        ec = (self.n - k) * math.log(self.s) + 2.0 * logdet
        ev = max(dsum, 0.0) / self.s
        f = 0.5 * (ed + ec + self.nu * ev) + 0.5 * self.n * _LOG_2PI
        return f, ed, ec, ev

    def objective(self, k=None, dsum=None):
        return self.objective_parts(k, dsum)[0]

    # -- columns of candidates and their exact gains
    def residual_columns(self, js, k, dres):
        """Cholesky columns (K - L_k L_k^T)[:, js] / sqrt(dres[js]) of the
        candidates ``js`` against the first k pivots, and L_k^T times them
        (one pass over L_k for a single candidate)."""
        js = np.asarray(js, dtype=np.int32)
        q = js.shape[0]
        C = np.empty((self.n, q), order="F")
        (self.ev1 if q == 1 else self.ev).columns_into(js, C)
        W = np.zeros((k, q))
        Lk = self.L[:, :k]
        if q == 1:
            # one pass over L_k: the column and its projection, then the pivot rows
            j = js[0]
            root = math.sqrt(dres[j])
            lj = np.ascontiguousarray(self.L[j, :k])
            w = np.empty(k)
            column_and_projection(self.L, k, lj, C[:, 0], 1.0 / root, w, self.n_threads)
            rows = self.piv[:k]
            if k:
                w -= self.L[rows, :k].T @ C[rows, 0]
                w -= lj * C[j, 0]
                C[rows, 0] = 0.0
            C[j, 0] = root
            W[:, 0] = w + root * lj
            return C, W
        if k:
            C = blas.dgemm(-1.0, Lk, np.ascontiguousarray(Lk[js, :].T), beta=1.0, c=C,
                           overwrite_c=1)
        root = np.sqrt(dres[js])
        C /= root
        if k:
            C[self.piv[:k], :] = 0.0
        C[js, np.arange(q)] = root
        if k:
            W = blas.dgemm(1.0, Lk, C, trans_a=1)
        return C, W

    def gains(self, C, W, k):
        """Exact decrease of the objective from adding each column of C (with
        W = L_k^T C) to the first k pivots: ``(dF, V, rho, yc)`` with V the new
        columns of R above the diagonal, rho the new diagonal entries and yc
        = y^T C."""
        c = _rsolve(self.R, k, self.Ly[:k], True)
        V = _rsolve(self.R, k, W, True)
        nl = np.einsum("ij,ij->j", C, C)
        yc = self.y @ C
        rho2 = self.s + nl - np.einsum("ij,ij->j", V, V)
        rho2 = np.maximum(rho2, self.s)
        a = yc - c @ V
        s = self.s
        dF = 0.5 * (a * a / (s * rho2) + math.log(s) - np.log(rho2) + self.nu * nl / s)
        return dF, V, np.sqrt(rho2), yc

    def append(self, col, v, rho, yc, j):
        """Add pivot j with Cholesky column ``col`` at position k."""
        k = self.k
        self.L[:, k] = col
        self.R[:k, k] = v
        self.R[k, :k] = 0.0
        self.R[k, k] = rho
        self.Ly[k] = yc
        self.piv[k] = j
        self.d -= col * col
        np.maximum(self.d, 0.0, out=self.d)
        self.d[j] = 0.0
        self.inducing[j] = True
        self.k = k + 1

    # -- moving a pivot to the end
    def move_to_end(self, p, extra_rows=()):
        """Reorder the pivots so that the one at position p comes last (same
        model); the reflections also act on the rows of each matrix of
        ``extra_rows`` (m x z, C-ordered, e.g. L^T E)."""
        k = self.k
        if p == k - 1:
            return
        c, s = rotation_coefficients(self.L, self.piv, p, k)
        rotate_columns(self.L, p, k, c, s, self.n_threads)
        rotate_triangular(self.R, p, k, c, s)
        rotate_rows(self.Ly[:, None], p, k, c, s)
        for T in extra_rows:
            rotate_rows(T, p, k, c, s)
        moved = self.piv[p]
        self.piv[p:k - 1] = self.piv[p + 1:k].copy()
        self.piv[k - 1] = moved
        # exact zeros above the diagonal in the pivot rows that moved
        zero_upper(self.L, self.piv, p, k)

    def removed_projection(self):
        """L_{k-1}^T l for the last column l: from R^T R = L^T L + noise I."""
        k = self.k
        out = np.empty(k - 1)
        upper_tmul(self.R, k - 1, np.ascontiguousarray(self.R[:k - 1, k - 1]), out)
        return out

    # -- gradient of the objective with respect to the log-parameters
    def gradient(self, spec, gmap):
        r"""d objective / d (log kernel parameters, log noise) at the current
        pivots, through the Nystrom form: with :math:`\Phi = K_{:,I}`,
        :math:`B = \operatorname{chol}(K_{I,I})`, :math:`A = L^T L +
        \sigma^2 I = R^T R`, :math:`\alpha = A^{-1} L^T y`, :math:`\beta =
        B^{-T}\alpha` and :math:`r = y - L\alpha`, the derivative of the
        objective with respect to :math:`\Phi` is :math:`L (A^{-1} - \nu
        \sigma^{-2} I) B^{-1} - \sigma^{-2} r \beta^T` and with respect to
        :math:`K_{I,I}` it is :math:`\tfrac12 B^{-T}(\alpha\alpha^T +
        \sigma^2 A^{-1} - I + \nu(\sigma^{-2} A - I)) B^{-1}` (nu = 1 for the
        free energy, 0 for the likelihood); they are contracted with the
        derivatives of the kernel entries in compiled code, O(nm) per
        parameter on top of one O(nm^2) product."""
        k, n, s, nu = self.k, self.n, self.s, self.nu
        piv = self.piv[:k]
        Lk = self.L[:, :k]
        Rk = self.R[:k, :k]
        B = Lk[piv, :]
        c = _rsolve(self.R, k, self.Ly[:k], True)
        alpha = _rsolve(self.R, k, c, False)
        beta = _tri(B, alpha, lower=True, trans=True)
        eye = np.eye(k)
        Rinv = _tri(Rk, eye)
        Ainv = Rinv @ Rinv.T
        Binv = _tri(B, eye, lower=True)
        Wp = (Ainv - (nu / s) * eye) @ Binv
        inner = np.outer(alpha, alpha) + s * Ainv - eye
        if nu:
            inner += Rk.T @ Rk / s - eye
        Gmm = 0.5 * Binv.T @ inner @ Binv
        r = self.y.copy()
        lmul(self.L, k, alpha, r, -1.0, self.n_threads)
        g = self._contract(spec, gmap, piv, lambda rows: Wp.T @ Lk[rows].T, beta, r, Gmm)
        f, ed, ec, ev = self.objective_parts()
        g_noise = 0.5 * (-ed + float(alpha @ alpha) + (n - k) + s * float(np.sum(Rinv * Rinv))
                         - nu * ev)
        return f, np.append(g, g_noise)

    def value_and_gradient(self, piv, spec, gmap):
        r"""Objective and gradient at the pivots ``piv`` without the factor L
        (the hyperparameter step only needs A = L^T L + sigma^2 I, L^T y and
        the weights of the kernel derivatives): with :math:`\Phi = K_{:,I}`
        and :math:`B = \operatorname{chol}(K_{I,I})`, :math:`L^T L = B^{-1}
        \Phi^T\Phi B^{-T}` (one symmetric rank-k product instead of a
        triangular solve and the product) and the weights on :math:`\Phi`
        are :math:`\Phi P - \sigma^{-2} r\beta^T` with :math:`P = B^{-T}
        (A^{-1} - \nu\sigma^{-2} I) B^{-1}` and :math:`r = y - \Phi\beta`.

        Forming the Gram matrix squares the conditioning of B, so when B is
        not well conditioned (or A is not, as in :meth:`_r_factor`) this
        falls back to :meth:`factorize` and :meth:`gradient`.  In the Gram case
        the factor L is left invalid (``self.k == 0``): the caller
        refactorizes after the step."""
        piv = np.asarray(piv, dtype=np.int32)
        k, n, s, nu = piv.shape[0], self.n, self.s, self.nu
        Phi = self.L[:, :k]
        self.ev.columns_into(piv, Phi)
        self.k = 0                                    # L no longer holds a factor
        Kmm = Phi[piv, :]
        B = _cholesky_or_fail(0.5 * (Kmm + Kmm.T))
        eye = np.eye(k)
        Binv = _tri(B, eye, lower=True)
        G = blas.dsyrk(1.0, Phi, trans=1, lower=0)
        G = np.triu(G) + np.triu(G, 1).T
        cond = math.sqrt(float(np.sum(B * B)) * float(np.sum(Binv * Binv)))
        M = Binv @ G @ Binv.T
        M = 0.5 * (M + M.T)
        tr_m = float(np.trace(M))
        R = None
        if cond <= GRAM_MAX_CONDITION and tr_m / s <= CHOLQR_MAX_CONDITION:
            A = M + s * eye
            try:
                R = scipy.linalg.cholesky(A, lower=False, check_finite=False)
            except np.linalg.LinAlgError:
                R = None
        if R is None:
            self.factorize(piv)
            return self.gradient(spec, gmap)
        Ly = Binv @ (Phi.T @ self.y)
        c = _tri(R, Ly, trans=True)
        alpha = _tri(R, c)
        ed = (self.yy - float(c @ c)) / s
        ec = (n - k) * math.log(s) + 2.0 * float(np.sum(np.log(np.diag(R))))
        ev = max(self.trace - tr_m, 0.0) / s
        f = 0.5 * (ed + ec + nu * ev) + 0.5 * n * _LOG_2PI
        beta = Binv.T @ alpha
        Rinv = _tri(R, eye)
        Ainv = Rinv @ Rinv.T
        P = Binv.T @ (Ainv - (nu / s) * eye) @ Binv
        P = 0.5 * (P + P.T)
        inner = np.outer(alpha, alpha) + s * Ainv - eye
        if nu:
            inner += A / s - eye
        Gmm = 0.5 * Binv.T @ inner @ Binv
        r = self.y - Phi @ beta
        g = self._contract(spec, gmap, piv, lambda rows: P @ Phi[rows].T, beta, r, Gmm)
        g_noise = 0.5 * (-ed + float(alpha @ alpha) + (n - k) + s * float(np.sum(Rinv * Rinv))
                         - nu * ev)
        return f, np.append(g, g_noise)

    def _contract(self, spec, gmap, piv, weights, beta, r, Gmm):
        """Derivatives of the objective with respect to the kernel's
        log-parameters: the weights on K[:, I] (``weights(rows)`` gives the
        first term, transposed, for a slice of rows; minus r beta^T / noise
        is added here), on K[I, I] (``Gmm``) and, for the free energy, on
        the diagonal of K, contracted with the kernel's derivatives."""
        k, n, s = piv.shape[0], self.n, self.s
        Z = self.X[piv]
        evx = CyKernelEvaluator(spec, self.X, Z, self.n_threads)
        evx.set_gradient_map(*gmap)
        g = np.zeros(gmap[3])
        step = max(256, 4_000_000 // max(k, 1))      # about 32 MB of weights at a time
        for start in range(0, n, step):
            rows = slice(start, min(n, start + step))
            # the weights transposed: (k, rows) C-ordered is (rows, k) F-ordered
            Gt = weights(rows)
            Gt -= np.outer(beta, r[rows] / s)
            g += evx.grad_contract(Gt.T, start)
        evz = CyKernelEvaluator(spec, Z, None, self.n_threads)
        evz.set_gradient_map(*gmap)
        g += evz.grad_contract(Gmm)
        if self.nu:
            g += (0.5 / s) * evx.grad_diagonal(np.ones(n))
        return g


# --------------------------------------------------------------------------- information pivots

class _InfoPivots:
    """z information pivots J: the residual columns E = (K - L L^T)[:, J]
    (kept up to date under rank-one changes of the residual) and T = L^T E
    (kept up to date under the changes of L)."""

    def __init__(self, fac, z, rng):
        self.fac = fac
        self.z_max = z
        self.rng = rng
        self.E = np.zeros((fac.n, z), order="F")
        self.T = np.zeros((fac.L.shape[1], z))
        self.J = np.zeros(0, dtype=np.int32)

    def _valid(self):
        fac = self.fac
        return np.flatnonzero((fac.d > fac.thr) & ~fac.inducing)

    def refresh(self):
        """A new random set (distinct candidates with a positive residual)."""
        fac = self.fac
        valid = self._valid()
        z = min(self.z_max, valid.shape[0])
        self.J = np.sort(self.rng.choice(valid, z, replace=False)).astype(np.int32)
        if z == 0:
            return
        k = fac.k
        E = self.E[:, :z]
        fac.ev.columns_into(self.J, E)
        if k:
            Lk = fac.L[:, :k]
            out = blas.dgemm(-1.0, Lk, np.ascontiguousarray(Lk[self.J, :].T), beta=1.0, c=E,
                             overwrite_c=1)
            if not np.shares_memory(out, self.E):
                E[:] = out
            self.T[:k, :z] = blas.dgemm(1.0, Lk, E, trans_a=1)

    def replace(self, slot):
        """Replace pivot ``slot`` (now an inducing point) by a random candidate."""
        fac = self.fac
        z = self.J.shape[0]
        valid = np.setdiff1d(self._valid(), self.J)
        if valid.shape[0] == 0:
            # no candidate left: drop the slot
            self.E[:, slot:z - 1] = self.E[:, slot + 1:z]
            self.T[:, slot:z - 1] = self.T[:, slot + 1:z]
            self.J = np.delete(self.J, slot)
            return
        j = int(self.rng.choice(valid))
        k = fac.k
        fac.ev1.columns_into([j], self.E[:, slot:slot + 1])
        if k:
            col = self.E[:, slot]
            lmul(fac.L, k, np.ascontiguousarray(fac.L[j, :k]), col, -1.0, fac.n_threads)
            w = np.empty(k)
            ltmul(fac.L, k, col, w, fac.n_threads)
            self.T[:k, slot] = w
        self.J[slot] = j

    def rank_one(self, col, proj, sign):
        """Residual += sign col col^T (proj = L^T col for the kept columns)."""
        z = self.J.shape[0]
        if z == 0:
            return
        cj = np.ascontiguousarray(col[self.J])
        rank_one_columns(self.E, z, np.ascontiguousarray(col), cj, sign, self.fac.n_threads)
        k = proj.shape[0]
        self.T[:k, :z] += sign * np.outer(proj, cj)

    def set_last_row(self, col):
        """T[k-1] = col^T E for the column in the last position."""
        z = self.J.shape[0]
        if z:
            w = np.empty(z)
            ltmul(self.E, z, np.ascontiguousarray(col), w, self.fac.n_threads)
            self.T[self.fac.k - 1, :z] = w

    def best_candidate(self, k, dres, exclude):
        """The candidate with the largest approximate decrease of the
        objective when added to the first k pivots, with the residual
        approximated by the Nystrom form on the information pivots:
        ``(index, approximate decrease)``, or (-1, -inf)."""
        fac = self.fac
        z = self.J.shape[0]
        if z == 0:
            return -1, -np.inf
        E = self.E[:, :z]
        S = E[self.J, :]
        S = 0.5 * (S + S.T)
        sel, C = _pivoted_cholesky(S, PIVOT_TOL * max(float(np.max(np.diag(S))), fac.thr))
        if not sel.shape[0]:
            return -1, -np.inf
        Cinv = _tri(C, np.eye(sel.shape[0]), lower=True)
        Es = E[:, sel]
        Ety = Es.T @ fac.y
        EtE = Es.T @ Es
        cvec = _rsolve(fac.R, k, fac.Ly[:k], True)
        Pt = _rsolve(fac.R, k, self.T[:k, sel], True)
        Gz = Cinv @ EtE @ Cinv.T
        Pu = Pt @ Cinv.T
        H = Pu.T @ Pu
        h = Cinv @ (Ety - Pt.T @ cvec)
        # for every row e_j of E, with u = C^{-1} e_j: u'u approximates the
        # residual variance, u'Gu / u'u the squared norm of the new column
        # and u'Hu / u'u its part in the span of L (compiled, rows in parallel)
        return _sparse.best_candidate(
            self.E, sel.astype(np.int32), np.ascontiguousarray(Cinv), np.ascontiguousarray(Gz),
            np.ascontiguousarray(H), np.ascontiguousarray(h), dres, exclude.view(np.uint8),
            fac.thr, PIVOT_TOL * fac.thr, fac.s, float(fac.nu), fac.n_threads)


def _pivoted_cholesky(S, tol):
    """Greedy pivoted Cholesky of a small PSD matrix, stopping when the
    largest remaining diagonal is at most ``tol``: ``(sel, C)`` with
    ``S[sel][:, sel] = C C^T``, C lower triangular."""
    z = S.shape[0]
    work = S.copy()
    order = np.arange(z)
    Lc = np.zeros((z, z))
    r = 0
    for r in range(z):
        dg = np.array([work[order[q], order[q]] for q in range(r, z)])
        q = r + int(np.argmax(dg))
        if dg[q - r] <= tol:
            break
        order[[r, q]] = order[[q, r]]
        Lc[[r, q], :r] = Lc[[q, r], :r]
        pr = order[r]
        Lc[r, r] = math.sqrt(work[pr, pr])
        rest = order[r + 1:]
        Lc[r + 1:, r] = work[rest, pr] / Lc[r, r]
        work[np.ix_(rest, rest)] -= np.outer(Lc[r + 1:, r], Lc[r + 1:, r])
    else:
        r = z
    return order[:r], Lc[:r, :r]


# --------------------------------------------------------------------------- nonlinear CG

def _minimize_cg(fg, x, max_evals, f=None, g=None):
    """Minimize by nonlinear conjugate gradients (Polak-Ribiere with
    restarts) and a line search for the strong Wolfe conditions by cubic
    interpolation and extrapolation, within ``max_evals`` evaluations of
    ``fg(x) -> (f, g)`` (a start value ``f, g`` given counts as none).
    Returns ``(x, f, g, evaluations)`` at the best point seen."""
    RHO, SIG, EXT, INT = 0.01, 0.5, 3.0, 0.1
    evals = 0
    if f is None:
        f, g = fg(x)
        evals += 1
    if not np.isfinite(f):
        return x, f, g, evals
    best = (x, f, g)
    d = -g
    slope = float(g @ d)
    step = 1.0 / (1.0 - slope)
    failed = False
    while evals < max_evals and slope < 0:
        # line search along d from (x, f, slope) for the strong Wolfe conditions
        t_lo, f_lo, s_lo, g_lo = 0.0, f, slope, g
        t_prev = f_prev = s_prev = None
        t_hi = f_hi = s_hi = None
        t = step
        found = None
        while evals < max_evals:
            ft, gt = fg(x + t * d)
            evals += 1
            finite = bool(np.isfinite(ft))
            st = float(gt @ d) if finite else np.nan
            if finite and ft < best[1]:
                best = (x + t * d, ft, gt)
            if not finite or ft > f + RHO * t * slope or ft >= f_lo:
                t_hi, f_hi, s_hi = t, ft, st
            elif abs(st) <= -SIG * slope:
                found = (t, ft, gt)
                break
            else:
                if (t_hi is None and st >= 0) or (t_hi is not None and st * (t_hi - t_lo) >= 0):
                    t_hi, f_hi, s_hi = t_lo, f_lo, s_lo
                t_prev, f_prev, s_prev = t_lo, f_lo, s_lo
                t_lo, f_lo, s_lo, g_lo = t, ft, st, gt
            if t_hi is None:
                # extrapolate by a cubic through the last two points, within limits
                t = _cubic_min(t_prev, f_prev, s_prev, t_lo, f_lo, s_lo) \
                    if t_prev is not None else np.nan
                t = min(max(t, 1.1 * t_lo), EXT * t_lo) if np.isfinite(t) else EXT * t_lo
            else:
                width = abs(t_hi - t_lo)
                if width <= 1e-12 * max(abs(t_hi), abs(t_lo)):
                    break
                lo = min(t_lo, t_hi) + INT * width
                hi = max(t_lo, t_hi) - INT * width
                t = (_cubic_min(t_lo, f_lo, s_lo, t_hi, f_hi, s_hi)
                     if np.isfinite(f_hi) and np.isfinite(s_hi) else np.nan)
                t = min(max(t, lo), hi) if np.isfinite(t) else 0.5 * (t_lo + t_hi)
        if found is None and t_lo > 0:
            found = (t_lo, f_lo, g_lo)          # a sufficient decrease, if not Wolfe
        if found is None:
            if failed:
                break
            failed = True
            x, f, g = best
            d = -g
            slope = float(g @ d)
            step = 1.0 / (1.0 - slope)
            continue
        failed = False
        t, f_new, g_new = found
        x = x + t * d
        gamma = max(0.0, float(g_new @ (g_new - g)) / max(float(g @ g), 1e-300))
        d = -g_new + gamma * d
        new_slope = float(g_new @ d)
        if new_slope >= 0:
            d = -g_new
            new_slope = -float(g_new @ g_new)
        step = t * min(10.0, slope / new_slope) if new_slope != 0 else t
        f, g, slope = f_new, g_new, new_slope
    return best[0], best[1], best[2], evals


def _cubic_min(t1, f1, s1, t2, f2, s2):
    """Minimizer of the cubic interpolating values and slopes at t1, t2."""
    if t1 == t2:
        return np.nan
    d1 = s1 + s2 - 3.0 * (f1 - f2) / (t1 - t2)
    disc = d1 * d1 - s1 * s2
    if disc < 0:
        return np.nan
    d2 = math.copysign(math.sqrt(disc), t2 - t1)
    denom = s2 - s1 + 2.0 * d2
    if denom == 0:
        return np.nan
    t = t2 - (t2 - t1) * (s2 + d2 - d1) / denom
    return t


# --------------------------------------------------------------------------- the estimator

class SparseGPRegressor(RegressorBase):
    r"""Sparse Gaussian process regression with m inducing points chosen
    among the training inputs by swaps (CholQR) and hyperparameters learned
    by nonlinear conjugate gradients, both on one objective.

    A scikit-learn regressor that does not need scikit-learn.  Training costs
    O(nm^2) per hyperparameter evaluation and O(nm) per swap, in O(nm)
    memory; predictions cost O(m) (mean) and O(m^2) (standard deviation)
    per test point.  Because the inducing points are training inputs and no
    derivative with respect to the inputs is needed, every kernel of
    :mod:`bcd.gp.kernels` works, those on discrete inputs
    (:class:`~bcd.gp.Hamming`, :class:`~bcd.gp.HistogramIntersection`)
    included.

    Parameters
    ----------
    kernel : bcd.gp.kernels.Kernel
        Covariance function; its parameters are the starting point of the
        hyperparameter optimization (copied by ``fit``: see ``kernel_``).
    noise : float
        Noise variance :math:`\sigma^2` (starting value when learned), at
        least ``1e-6`` times the largest k(x, x).
    n_inducing : int, default=64
        Number of inducing points m, 1 <= m <= n.  Fewer are used (with a
        warning) when fewer training inputs have a positive residual
        variance, e.g. with many duplicate inputs.
    objective : {"vfe", "nmll"}, default="vfe"
        Titsias' variational free energy or the projected-process negative
        log marginal likelihood.
    n_info_pivots : int, default=16
        Number z of information pivots scoring the candidates of a swap;
        they are replaced by a random set every z swaps.
    optimizer : {"cholqr", "random", "greedy"}, default="cholqr"
        ``"cholqr"``: each epoch makes min(60, m) swaps, then a
        hyperparameter step.  ``"random"``: a random inducing set, kept;
        hyperparameter steps only.  ``"greedy"``: each epoch selects the
        inducing set again by Titsias' greedy forward selection, adding
        the best of ``n_candidates`` random candidates at a time (exact
        gains), then a hyperparameter step.
    optimize_hyperparameters : bool, default=True
        Learn the kernel's parameters and the noise; ``False`` keeps them.
    max_epochs : int, default=50
        Largest number of epochs.
    tol : float, default=1e-4
        Stop when an epoch decreases the objective by less than ``tol``
        times its absolute value.
    n_candidates : int, default=16
        Candidates per step of ``optimizer="greedy"``.
    random_state : None, int or numpy.random.Generator
        Seed of the initial inducing set, the order of the swaps, the
        information pivots and the greedy candidates.
    n_threads : int, optional
        Threads of the compiled loops (kernel, swaps, gradients); when given
        and threadpoolctl is installed, also the limit of BLAS threads during
        ``fit`` (default: the usable cores, the smallest of
        ``OMP_NUM_THREADS``, the cgroup's CPU quota and the CPU affinity
        mask, capped by OpenMP's limit that threadpoolctl sets; and BLAS's
        own setting).  On a busy
        machine, waking threads for short operations can cost more than they
        save.
    verbose : bool or int, default=False
        ``True`` prints a line per epoch, ``2`` rewrites one line on a
        terminal.

    Attributes
    ----------
    inducing_indices_ : ndarray of int
        Indices of the inducing points among the training inputs.
    inducing_points_ : ndarray of shape (m, n_features)
        The inducing inputs.
    kernel_ : bcd.gp.kernels.Kernel
        The kernel with the learned parameters (a copy).
    noise_ : float
        The learned noise variance.
    objective_ : float
        The objective of the fitted model (including n/2 log 2 pi).
    history_ : dict of ndarrays
        Per epoch (0 is the start): ``"objective"``, ``"time"`` (seconds
        since the start of ``fit``), ``"swaps"`` and ``"accepted"`` (swaps
        tried and accepted), ``"evaluations"`` (of the objective and its
        gradient by the hyperparameter step).
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        When ``X`` was a data frame with string column names.

    Notes
    -----
    If ``max_epochs`` is reached, a :class:`bcd.ConvergenceWarning` is
    issued and the model with the smallest objective is kept.  Inputs
    duplicating an inducing input have no residual variance and are never
    chosen.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(500, 1)); y = np.sin(6 * X[:, 0]) + 0.1 * rng.standard_normal(500)
    >>> gp = bcd.gp.SparseGPRegressor(bcd.gp.SquaredExponential(0.1), noise=0.1,
    ...                               n_inducing=10, random_state=0).fit(X, y)
    >>> mean, std = gp.predict(np.array([[0.5]]), return_std=True)
    >>> bool(abs(mean[0] - np.sin(3.0)) < 0.05 and 0 <= std[0] < 0.05)
    True
    >>> gp.inducing_points_.shape, bool(gp.noise_ < 0.02)
    ((10, 1), True)
    """

    _required_parameters = ["kernel", "noise"]

    def __init__(self, kernel, noise, n_inducing=64, objective="vfe", n_info_pivots=16,
                 optimizer="cholqr", optimize_hyperparameters=True, max_epochs=50, tol=1e-4,
                 n_candidates=16, random_state=None, n_threads=None, verbose=False,
                 max_time=None):
        self.kernel = kernel
        self.noise = noise
        self.n_inducing = n_inducing
        self.objective = objective
        self.n_info_pivots = n_info_pivots
        self.optimizer = optimizer
        self.optimize_hyperparameters = optimize_hyperparameters
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_candidates = n_candidates
        self.random_state = random_state
        self.n_threads = n_threads
        self.verbose = verbose
        self.max_time = max_time

    def __sklearn_is_fitted__(self):
        return hasattr(self, "beta_")

    # ------------------------------------------------------------ validation
    def _check_params(self, n):
        if not isinstance(self.kernel, Kernel):
            raise TypeError(f"kernel must be a bcd.gp kernel (SquaredExponential, Matern, "
                            f"Periodic, LocallyPeriodic, Hamming, HistogramIntersection or "
                            f"their sums and products), got {self.kernel!r}.")
        if isinstance(self.noise, bool) or not np.isscalar(self.noise) \
                or not np.isreal(self.noise):
            raise TypeError(f"noise must be a positive real number, got {self.noise!r}.")
        if not (np.isfinite(self.noise) and self.noise > 0):
            raise ValueError(f"noise must be positive and finite, got {self.noise!r}.")
        m = self.n_inducing
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
            raise TypeError(f"n_inducing must be an integer, got {m!r}.")
        if not 1 <= m <= n:
            raise ValueError(f"n_inducing must be between 1 and the number of training "
                             f"points (n_samples = {n}), got {m}.")
        z = self.n_info_pivots
        if isinstance(z, bool) or not isinstance(z, (int, np.integer)):
            raise TypeError(f"n_info_pivots must be an integer, got {z!r}.")
        if z < 1:
            raise ValueError(f"n_info_pivots must be at least 1, got {z}.")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(map(repr, OBJECTIVES))}, "
                             f"got {self.objective!r}.")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(map(repr, OPTIMIZERS))}, "
                             f"got {self.optimizer!r}.")
        check_scalar(self.max_epochs, "max_epochs", low=1, integer=True)
        check_scalar(self.tol, "tol", low=0.0)
        check_scalar(self.n_candidates, "n_candidates", low=1, integer=True)
        if self.n_threads is not None and (isinstance(self.n_threads, bool) or not isinstance(
                self.n_threads, (int, np.integer)) or self.n_threads < 1):
            raise ValueError(f"n_threads must be a positive integer or None, got "
                             f"{self.n_threads!r}.")
        if not isinstance(self.optimize_hyperparameters, (bool, np.bool_)):
            raise TypeError(f"optimize_hyperparameters must be True or False, got "
                            f"{self.optimize_hyperparameters!r}.")
        return int(m), int(z), check_verbose(self.verbose)

    # ------------------------------------------------------------ fit
    def fit(self, X, y):
        """Select the inducing points and learn the hyperparameters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples,)
            Training inputs (1-D: a single feature).
        y : array-like of shape (n_samples,)
            Training targets.

        Returns
        -------
        self : SparseGPRegressor
        """
        t_start = time.perf_counter()
        names = feature_names(X)
        X = check_array(X, "X", allow_1d=True, owner="SparseGPRegressor")
        y = check_target(y, X.shape[0], owner="SparseGPRegressor")
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        n = X.shape[0]
        m, z, verbose = self._check_params(n)
        kernel = copy.deepcopy(self.kernel)
        kernel._check_dim(X.shape[1])
        kernel._validate_inputs(X, "X")
        rng = np.random.default_rng(self.random_state)
        n_threads = resolve_threads(self.n_threads, max_threads())
        nu = 1 if self.objective == "vfe" else 0
        fac = _Factor(X, y, m, n_threads, nu)
        fac.set_model(kernel, float(self.noise))
        floor = MIN_RELATIVE_NOISE * fac.dmax
        if fac.s < floor:
            raise ValueError(f"noise must be at least {MIN_RELATIVE_NOISE:g} times the largest "
                             f"signal variance k(x, x) = {fac.dmax:g}, got {self.noise!r}.")
        self._noise_floor = floor
        max_time = check_max_time(self.max_time)
        progress = Progress(verbose) if verbose else None
        run = _Run(self, fac, kernel, rng, m, z, progress, t_start)
        run.deadline = math.inf if max_time is None else t_start + max_time
        with _blas_threads(self.n_threads):
            try:
                run.start()
                run.loop(int(self.max_epochs), float(self.tol))
            except KeyboardInterrupt:
                # Ctrl-C: the best model so far, refactored from its pivots
                # (the interrupted swap may have left the factor half-changed)
                if not hasattr(run, "best"):
                    raise FitInterrupted("interrupted", None) from None
                run.stopped = "interrupted"
                run.F = math.inf
            run.finish()
        if run.stopped is not None:
            warnings.warn(f"SparseGPRegressor.fit was "
                          f"{'interrupted' if run.stopped == 'interrupted' else 'stopped by max_time'}"
                          f" after {run.epochs} epochs; the model with the smallest objective "
                          f"so far is kept.", ConvergenceWarning, stacklevel=2)
        self.status_ = run.stopped or ("converged" if run.converged else "max_epochs")
        self.n_features_in_ = X.shape[1]
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    # ------------------------------------------------------------ predict
    def _check_test(self, X):
        if not hasattr(self, "beta_"):
            raise not_fitted(self)
        self._check_feature_names(X)
        d = self.n_features_in_
        X = check_array(X, "X", allow_1d=d == 1, owner=type(self).__name__)
        if X.shape[1] != d:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {d} features as input.")
        return np.ascontiguousarray(X, dtype=np.float64)

    def predict(self, X, return_std=False, batch=8192):
        r"""Predictive mean :math:`k_{*I}\beta` and, with ``return_std``, the
        standard deviation of the latent function (the noise is not added):
        :math:`\sqrt{k_{**} - \|B^{-1}k_{I*}\|^2 + \sigma^2 \|R^{-T}
        B^{-1}k_{I*}\|^2}` with B the Cholesky factor of :math:`K_{I,I}`,
        never negative.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        return_std : bool, default=False
        batch : int, default=8192
            Test points handled together.

        Returns
        -------
        mean : ndarray of shape (n_queries,)
        std : ndarray of shape (n_queries,)
            Only with ``return_std``.
        """
        X = self._check_test(X)
        mean = np.empty(X.shape[0])
        std = np.empty(X.shape[0]) if return_std else None
        threads = int(self.n_threads) if self.n_threads else None
        for start in range(0, X.shape[0], batch):
            Xb = X[start:start + batch]
            Kb = self.kernel_.evaluator(Xb, self.inducing_points_, n_threads=threads).matrix()
            mean[start:start + batch] = Kb @ self.beta_
            if return_std:
                W = _tri(self._B, Kb.T, lower=True)
                U = _tri(self._R, W, trans=True)
                var = (self.kernel_.diag(Xb) - np.einsum("ij,ij->j", W, W)
                       + self.noise_ * np.einsum("ij,ij->j", U, U))
                std[start:start + batch] = np.sqrt(np.maximum(var, 0.0))
        return (mean, std) if return_std else mean


class _Run:
    """One ``fit``: the epochs of swaps (or greedy selections) and
    hyperparameter steps, the history and the best model."""

    def __init__(self, est, fac, kernel, rng, m, z, progress, t_start):
        self.est = est
        self.fac = fac
        self.kernel = kernel
        self.rng = rng
        self.m = m
        self.z = z
        self.progress = progress
        self.t_start = t_start
        self.optimizer = est.optimizer
        self.hyper = bool(est.optimize_hyperparameters)
        n_theta = kernel._get_theta().shape[0] + 1
        self.max_evals = min(20, max(15, 2 * n_theta))
        self.history = {key: [] for key in ("objective", "time", "swaps", "accepted",
                                            "evaluations")}
        self.queue = []
        self.deadline = math.inf
        self.stopped = None
        self.epochs = 0
        self.converged = False

    def _out_of_time(self):
        if time.perf_counter() > self.deadline:
            self.stopped = "max_time"
        return self.stopped is not None

    # -- the start
    def start(self):
        fac = self.fac
        if self.optimizer == "greedy":
            fac.reset()
        else:
            piv = self._random_pivots()
            self._factorize_or_fail(piv)
        self.F = fac.objective()
        self._record(0, 0, 0)
        self.best = self._snapshot()

    def _factorize_or_fail(self, piv):
        try:
            self.fac.factorize(piv)
        except _NotPositiveDefinite:
            raise ValueError(f"The kernel matrix of the inducing points is not positive "
                             f"definite for {self.kernel!r} at the initial hyperparameters: is "
                             f"the kernel valid for these inputs?") from None

    def _random_pivots(self):
        """m random training points whose residual variances, taken in a
        random order, stay positive (duplicates and numerically dependent
        points skipped)."""
        fac, m = self.fac, self.m
        order = self.rng.permutation(fac.n).astype(np.int32)
        chosen = np.zeros(0, dtype=np.int32)
        B = np.zeros((0, 0))
        pos = 0
        batch = max(2 * m, 256)
        while chosen.shape[0] < m and pos < fac.n:
            cand = order[pos:pos + batch]
            pos += batch
            batch = min(2 * batch, 16 * m + 256)
            if chosen.shape[0]:
                # drop the candidates without residual against the chosen points
                W = _tri(B, fac.kernel(fac.X[chosen], fac.X[cand]), lower=True)
                res = fac.diag[cand] - np.einsum("ij,ij->j", W, W)
                cand = cand[res > fac.thr]
            pool = np.concatenate([chosen, cand])
            taken, Lc = _in_order_pivots(fac.kernel(fac.X[pool]), m, fac.thr)
            chosen = pool[taken]
            B = Lc[taken]
        if chosen.shape[0] < m:
            warnings.warn(f"Only {chosen.shape[0]} training inputs have a positive residual "
                          f"variance (duplicates or a low-rank kernel); using "
                          f"{chosen.shape[0]} inducing points instead of {m}.", UserWarning,
                          stacklevel=4)
            self.m = chosen.shape[0]
        return chosen

    # -- bookkeeping
    def _record(self, swaps, accepted, evaluations):
        h = self.history
        h["objective"].append(self.F)
        h["time"].append(time.perf_counter() - self.t_start)
        h["swaps"].append(swaps)
        h["accepted"].append(accepted)
        h["evaluations"].append(evaluations)

    def _theta(self):
        return np.append(self.kernel._get_theta(), math.log(self.fac.s))

    def _snapshot(self):
        return dict(theta=self._theta(), piv=self.fac.piv[:self.fac.k].copy(), F=self.F)

    def _set_theta(self, theta):
        """Set the kernel and noise from log-parameters; False if invalid."""
        if not np.all(np.isfinite(theta)) or np.any(np.abs(theta) > LOG_BOUND):
            return False
        if math.exp(theta[-1]) < self.est._noise_floor:
            return False
        try:
            self.kernel._set_theta(theta[:-1])
        except (ValueError, TypeError):
            return False
        self.fac.set_model(self.kernel, math.exp(theta[-1]))
        return True

    # -- the epochs
    def loop(self, max_epochs, tol):
        converged = False
        epoch = 0
        for epoch in range(1, max_epochs + 1):
            if self._out_of_time():
                break
            F_prev = self.F
            swaps = accepted = evals = 0
            if self.optimizer == "cholqr":
                swaps, accepted = self._swap_epoch()
            elif self.optimizer == "greedy":
                self._greedy()
                self.F = self.fac.objective()
            if self.hyper:
                evals = self._hyper_step()
            self._record(swaps, accepted, evals)
            if self.F < self.best["F"]:
                self.best = self._snapshot()
            if self.progress is not None:
                self.progress.show(f"epoch {epoch:>4d}  objective {self.F:.10e}  swaps "
                                   f"{accepted}/{swaps}  hyperparameter evaluations {evals}  "
                                   f"time {self.progress.elapsed():.1f}s",
                                   force=self.progress.level == 1)
            self.epochs = epoch
            if F_prev - self.F <= tol * abs(F_prev):
                converged = True
                break
        self.converged = converged
        if not converged and self.stopped is None:
            warnings.warn(f"SparseGPRegressor stopped after max_epochs={max_epochs} epochs "
                          f"before the relative decrease of the objective fell below "
                          f"tol={tol:g}; the model with the smallest objective is kept.",
                          ConvergenceWarning, stacklevel=3)

    def _swap_epoch(self):
        """min(60, m) swaps; returns (tried, accepted)."""
        fac = self.fac
        if fac.k == 0:
            return 0, 0
        info = _InfoPivots(fac, self.z, self.rng)
        info.refresh()
        n_swaps = min(60, fac.k)
        accepted = 0
        for t in range(n_swaps):
            if self._out_of_time():
                break
            if t and t % self.z == 0:
                info.refresh()
            if not self.queue:
                self.queue = list(self.rng.permutation(fac.piv[:fac.k]))
            target = self.queue.pop()
            positions = np.flatnonzero(fac.piv[:fac.k] == target)
            if positions.shape[0] == 0:
                continue
            accepted += self._swap(int(positions[0]), info)
        return n_swaps, accepted

    def _swap(self, p, info):
        """Try to replace the inducing point at position p (steps I-VI of
        Section 3.4); returns whether the swap was accepted."""
        fac = self.fac
        k = fac.k
        F_old = self.F
        # (I) downdate: move the point to the end, then drop its column
        fac.move_to_end(p, (info.T,))
        i = int(fac.piv[k - 1])
        li = fac.L[:, k - 1]
        wi = fac.removed_projection()
        dres = fac.d + li * li
        dres[fac.piv[:k - 1]] = 0.0
        dsum = float(dres.sum())
        info.rank_one(li, wi, 1.0)
        # (II) the downdated objective
        F_down = fac.objective(k - 1, dsum)
        # (III) the best candidate by the approximate decrease
        j, _ = info.best_candidate(k - 1, dres, fac.inducing)
        if j >= 0:
            # (IV) its exact decrease
            fac.k = k - 1
            C, W = fac.residual_columns([j], k - 1, dres)
            dF, V, rho, yc = fac.gains(C, W, k - 1)
            fac.k = k
            F_new = F_down - float(dF[0])
            # (V) accept only if the objective decreases
            if F_new < F_old - 1e-12 * max(1.0, abs(F_old)):
                col = C[:, 0]
                info.rank_one(col, W[:, 0], -1.0)
                fac.k = k - 1
                fac.d = dres
                fac.inducing[i] = False
                fac.append(col, V[:, 0], float(rho[0]), float(yc[0]), j)
                info.set_last_row(col)
                self.F = F_new
                self.queue = [q for q in self.queue if q != i]
                hit = np.flatnonzero(info.J == j)
                if hit.shape[0]:
                    info.replace(int(hit[0]))          # (VI)
                return True
        # restore the factorization with the removed point
        info.rank_one(li, wi, -1.0)
        info.set_last_row(li)
        return False

    def _greedy(self):
        """Titsias' greedy forward selection from scratch: add, m times, the
        best of ``n_candidates`` random candidates by the exact decrease."""
        fac = self.fac
        fac.reset()
        size = int(self.est.n_candidates)
        for _ in range(self.m):
            valid = np.flatnonzero((fac.d > fac.thr) & ~fac.inducing)
            if valid.shape[0] == 0:
                break
            cand = self.rng.choice(valid, min(size, valid.shape[0]), replace=False)
            C, W = fac.residual_columns(cand, fac.k, fac.d)
            dF, V, rho, yc = fac.gains(C, W, fac.k)
            b = int(np.argmax(dF))
            fac.append(C[:, b].copy(), V[:, b], float(rho[b]), float(yc[b]), int(cand[b]))
        if fac.k < self.m:
            warnings.warn(f"Only {fac.k} training inputs have a positive residual variance; "
                          f"using {fac.k} inducing points instead of {self.m}.", UserWarning,
                          stacklevel=4)
            self.m = fac.k

    def _hyper_step(self):
        """Nonlinear CG on the log-parameters with the inducing set fixed,
        at most min(20, max(15, 2d)) evaluations; the state is left at the
        best point.  Returns the number of evaluations."""
        fac = self.fac
        piv = fac.piv[:fac.k].copy()
        if piv.shape[0] == 0:
            return 0
        theta0 = self._theta()
        spec_dim = fac.X.shape[1]
        last = {"theta": None}

        def fg(theta):
            if self._out_of_time() or not self._set_theta(theta):
                last["theta"] = None
                return np.inf, np.zeros_like(theta)
            try:
                spec, gmap = self.kernel._spec(spec_dim, gradient=True)
                f, g = fac.value_and_gradient(piv, spec, gmap)
            except _NotPositiveDefinite:
                last["theta"] = None
                return np.inf, np.zeros_like(theta)
            if not (np.isfinite(f) and np.all(np.isfinite(g))):
                last["theta"] = None
                return np.inf, np.zeros_like(theta)
            last["theta"] = theta.copy()
            return f, g

        f0, g0 = fg(theta0)
        if not np.isfinite(f0):
            self._set_theta(theta0)
            try:
                fac.factorize(piv)
            except _NotPositiveDefinite:
                raise ValueError(
                    f"The kernel matrix of the inducing points is not positive definite for "
                    f"{self.kernel!r}: is the kernel valid for these inputs?  (Periodic "
                    f"kernels of a Euclidean distance are positive definite for "
                    f"one-dimensional inputs only.)") from None
            return 1
        theta, f, _, evals = _minimize_cg(fg, theta0, self.max_evals - 1, f0, g0)
        evals += 1
        if last["theta"] is None or not np.array_equal(last["theta"], theta):
            self._set_theta(theta)
        fac.factorize(piv, repair=True)
        if fac.k < piv.shape[0]:
            self._refill(piv.shape[0])
        self.F = fac.objective()
        return evals

    def _refill(self, m):
        """Add inducing points up to m after numerically dependent ones were
        dropped: the best candidates by the information-pivot scores (exact
        gains of the best), or random ones for the random and greedy sets."""
        fac = self.fac
        while fac.k < m:
            if self.optimizer == "cholqr":
                info = _InfoPivots(fac, self.z, self.rng)
                info.refresh()
                j, _ = info.best_candidate(fac.k, fac.d, fac.inducing)
            else:
                valid = np.flatnonzero((fac.d > fac.thr) & ~fac.inducing)
                j = int(self.rng.choice(valid)) if valid.shape[0] else -1
            if j < 0:
                break
            C, W = fac.residual_columns([j], fac.k, fac.d)
            _, V, rho, yc = fac.gains(C, W, fac.k)
            fac.append(C[:, 0].copy(), V[:, 0], float(rho[0]), float(yc[0]), j)
        self.queue = []

    # -- the end
    def finish(self):
        fac, est = self.fac, self.est
        if self.F > self.best["F"]:
            self._set_theta(self.best["theta"])
            fac.factorize(self.best["piv"], repair=True)
            self.F = fac.objective()
        k = fac.k
        piv = fac.piv[:k].copy()
        Rk = fac.R[:k, :k].copy()
        B = np.ascontiguousarray(fac.L[piv, :k])
        alpha = _rsolve(fac.R, k, _rsolve(fac.R, k, fac.Ly[:k], True), False)
        est.beta_ = _tri(B, alpha, lower=True, trans=True)
        est._B = B
        est._R = Rk
        est.inducing_indices_ = piv.astype(np.intp)
        est.inducing_points_ = fac.X[piv].copy()
        est.kernel_ = self.kernel
        est.noise_ = fac.s
        est.objective_ = float(self.F)
        est.history_ = {key: np.asarray(v) for key, v in self.history.items()}
        est.n_iter_ = self.epochs
        if self.progress is not None:
            self.progress.end(f"{self.epochs} epochs, objective {self.F:.10e}, "
                              f"{'converged' if self.converged else 'max_epochs reached'}, "
                              f"{self.progress.elapsed():.1f}s")


def _in_order_pivots(G, m, thr):
    """Positions of the first m points (in order) of the Gram matrix G that
    keep a residual variance above ``thr`` against those before them, and
    the partial Cholesky factor (its rows at those positions: the Cholesky
    factor of their Gram matrix)."""
    N = G.shape[0]
    Lc = np.zeros((N, min(m, N)))
    dd = np.diag(G).copy()
    taken = []
    for q in range(N):
        if len(taken) == m:
            break
        if dd[q] <= thr:
            continue
        t = len(taken)
        col = G[:, q] - Lc[:, :t] @ Lc[q, :t]
        col /= math.sqrt(dd[q])
        Lc[:, t] = col
        dd -= col * col
        dd[q] = 0.0
        taken.append(q)
    taken = np.asarray(taken, dtype=np.intp)
    return taken, Lc[:, :taken.shape[0]]
