r"""Predictive variances of a GP without the n x n matrix
(``GPRegressor(variance="lowrank")``): an estimate from an adaptive-rank
Nystrom factor, and two-sided certified bounds.

With A = K + s2 I (n training points, noise s2) and a test point x*, the
exact latent variance is var = k** - k*^T A^-1 k*.  A greedy partial
pivoted Cholesky of K (pivots Z, r kernel columns, chosen once) gives Q
(n x r) with E = K - Q Q^T positive semi-definite (a Schur complement of
K) and its diagonal e known.  It takes pivots until max(e) is at most a
fraction (``variance_residual``) of s2: K is then Q Q^T up to a residual
below the noise level, and r is about the number of eigenvalues of K
above it (it grows with n for a smooth kernel in several dimensions).

* **estimate** (what ``predict`` returns).  With L = Q_Z (the pivots' rows
  of Q, lower triangular, L L^T = K_ZZ), c* = L^-1 k(Z, x*) and
  e* = k** - |c*|^2 (the residual prior variance at x*), the DTC variance

      v = e* + s2 c*^T (Q^T Q + s2 I)^-1 c*

  is the exact variance of the model in which the training targets see f
  only through its Nystrom part Q u (u = L^-1 f_Z).  It needs only the r
  kernel values k(Z, x*): O(r^2) per test point, against O(n r) for the
  bounds below.  As Q^T Q >= Q_Z^T Q_Z, v is at most the exact variance
  given the targets of the pivots alone (a certified upper bound of var),
  but it is not a bound of var: it tends to exceed it slightly (e* counts
  the residual at x* in full), and tends to var as max(e) / s2 -> 0.
* **lower bound** (low rank).  P = Q Q^T + s2 I <= A, so P^-1 >= A^-1
  and var_L = k** - q with q = k*^T P^-1 k* (Woodbury, r x r) is at most
  var.  Its certificate: with w = P^-1 k*,

      P^-1 - A^-1 = P^-1 E P^-1 - P^-1 E A^-1 E P^-1 <= P^-1 E P^-1,

  so var - var_L <= b = w^T E w, and since |E_ij| <= sqrt(e_i e_j),
  b <= (sum_i |w_i| sqrt(e_i))^2 ("diagonal bound") and
  b <= lambda_max(E) |w|^2 <= trace(E) |w|^2 ("trace bound"; |w|^2 =
  (q - |c|^2) / s2 in r-space, c = (Q^T Q + s2 I)^-1 Q^T k*).  The scaled
  trial vector t w in k*^T A^-1 k* >= 2 t w^T k* - t^2 w^T A w, at its best
  t, sharpens this to var - var_L <= q b / (q + b).
* **upper bound** (a subset of the data).  Conditioning on fewer
  observations never lowers the posterior variance: var_U, the exact
  variance given the noisy targets of the pivots Z and of m training
  points S (not pivots) correlated with x*, is at least var.  After
  conditioning on y_Z, the covariance is C = K - Phi Phi^T with Phi = Q B
  (n x r, computed once).  Groups of nearby test points share S (the m
  points with the largest k(x_i, x*) over the group), so that each group
  costs one m x m factorization.

The certified upper bound is min(var_U, var_L + q b / (q + b)), and the
certified error is that minus max(var_L, 0).  Both bounds hold in exact
arithmetic; the rounding of the computation is of order
1e-16 n k** / s2 in the variance.  They cost O(n r) per test point (the
products Q^T k*), which at r in the thousands is minutes for 10,000 test
points at 100,000 training points; ``GPRegressor.variance_bounds``
computes them on request.

When K is far from low rank at the noise level (a rough or short kernel
in several dimensions: the residual decays so slowly with the rank that
the tolerance would need several times the largest rank), the
factorization gives up early, the estimate would be poor, and ``predict``
returns the certified upper bound of the first ``FALLBACK`` pivots and
the neighbours instead.
"""
import math
import time

import numpy as np
import scipy.linalg

#: pivots per step of the blocked pivoted Cholesky
BLOCK = 64
#: candidates per pivot of a block (the pool the block's pivots come from)
POOL = 4
#: a block stops taking pivots from its pool when their residual diagonal
#: falls below this fraction of the pool's largest (a later block may)
REJECT = 1e-2
#: the pivoted Cholesky stops when the largest residual diagonal is at most
#: this fraction of the largest kernel diagonal (K is then Q Q^T to rounding)
EXACT = 1e-12
#: test points per batch of the variance computation
BATCH = 256
#: test points that share one set of neighbours (1: each its own)
GROUP = 32
#: the pivots from which the decay of the residual is extrapolated
GIVE_UP_FROM = 512
#: give up when the residual tolerance needs more than this many times the
#: largest rank (by the extrapolation)
GIVE_UP = 4.0
#: pivots the bounds use after giving up
FALLBACK = 256


def pivoted_cholesky(kernel, X, diag, max_rank, n_threads=1, block=BLOCK, pool=POOL, tol=0.0,
                     control=None, residual=0.0, reachable=None):
    """Greedy partial pivoted Cholesky of K = k(X, X), by blocks of pivots.

    Each step takes the ``pool * block`` training points with the largest
    residual diagonal, forms their residual covariance (a small kernel
    matrix minus the part already factored), runs a greedy pivoted Cholesky
    within it for up to ``block`` pivots, keeping those whose residual stays
    above ``REJECT`` times the pool's largest, and only then computes the
    kernel columns of the chosen pivots and removes the part already
    factored (one GEMM).  Stops at ``max_rank`` columns, when the largest
    residual diagonal is at most ``EXACT`` times the largest diagonal, when
    the residual trace is at most ``tol``, or when the largest residual
    diagonal is at most ``residual``.  ``reachable`` (a function of the
    rank and the largest residual diagonal after each step, from the
    second step on) may end it early: when it returns False, the
    factorization stops there.  ``control`` (a
    :class:`bcd.gp.hyper.common.Control`) is checked at every step.

    Returns ``(Q, pivots, e)``: Q of shape (n, r), Fortran-ordered, with
    ``K[:, pivots] = Q @ Q[pivots].T`` and ``e`` the diagonal of
    ``K - Q Q^T`` (clipped at 0, exactly 0 at the pivots).
    """
    n = diag.shape[0]
    max_rank = int(min(max_rank, n))
    Q = np.zeros((n, max_rank), order="F")
    d = np.array(diag, dtype=np.float64)
    floor = EXACT * float(np.max(d)) if n else 0.0
    pivots = np.empty(max_rank, dtype=np.int64)
    evaluator = kernel.evaluator(X, n_threads=n_threads)
    r = 0
    steps = 0
    while r < max_rank and float(d.sum()) > tol and float(d.max(initial=0.0)) > residual:
        if control is not None:
            control.check()
        if steps and reachable is not None and not reachable(r, float(d.max())):
            break
        steps += 1
        z = min(pool * block, n - r)
        cand = np.argpartition(-d, z - 1)[:z] if z < n else np.arange(n)
        cand = cand[d[cand] > floor]
        if cand.size == 0:
            break
        # the residual covariance of the candidates: K_cc - Q_c Q_c^T
        Qc = Q[cand, :r]
        S = kernel.evaluator(X[cand], n_threads=1).matrix() - Qc @ Qc.T
        dc = d[cand].copy()
        threshold = max(REJECT * float(dc.max()), floor)
        b = min(block, max_rank - r, cand.size)
        Lc = np.zeros((cand.size, b))
        sel = []
        for j in range(b):
            p = int(np.argmax(dc))
            if dc[p] <= threshold:
                break
            v = (S[:, p] - Lc[:, :j] @ Lc[p, :j]) / math.sqrt(dc[p])
            Lc[:, j] = v
            sel.append(p)
            dc -= v * v
            dc[p] = 0.0
        j = len(sel)
        cols = cand[sel]
        # the residual columns of the pivots, C = K[:, cols] - Q Q[cols]^T,
        # then the new factor columns C Lc_sel^-T (Lc_sel lower triangular)
        C = np.empty((n, j), order="F")
        evaluator.columns_into(cols.astype(np.int32), C)
        if r:
            C -= Q[:, :r] @ Q[cols, :r].T
        new = scipy.linalg.solve_triangular(Lc[sel, :j], C.T, lower=True,
                                            check_finite=False).T
        Q[:, r:r + j] = new
        pivots[r:r + j] = cols
        d -= np.einsum("ij,ij->i", new, new)
        d[cols] = 0.0
        np.maximum(d, 0.0, out=d)
        r += j
    return np.asfortranarray(Q[:, :r]), pivots[:r].copy(), d


class LowRankVariance:
    """The factors of the variance estimate and of both bounds for one
    fitted model: the pivoted Cholesky factor Q of K, computed until its
    largest residual diagonal is at most ``residual`` (or ``rank`` columns),
    its residual diagonal, the Cholesky factor of Q^T Q + s2 I, and (for
    the bounds, computed when first needed) the Cholesky factor of
    K_ZZ + s2 I and Phi (n x r, Phi Phi^T = K_{:,Z} (K_ZZ + s2 I)^-1 K_{Z,:}).

    Parameters
    ----------
    kernel : bcd.gp.kernels.Kernel
    X : ndarray of shape (n, d)
        Training inputs.
    noise : float
        Noise variance s2.
    rank : int
        Largest number of pivots.
    neighbors : int
        Training points (besides the pivots) on which the upper bound
        conditions each test point.
    n_threads : int
        Threads of the kernel evaluations.
    group : int, default=GROUP
        Test points, consecutive in :func:`spatial_order`, that share their
        ``neighbors`` training points (the most correlated with any of
        them): one m x m factorization per group.  1: each test point has
        its own m most correlated training points.
    residual : float, default=0.0
        The pivoted Cholesky stops once the largest residual diagonal of K
        is at most ``residual`` (an absolute variance; the regressor passes
        ``variance_residual`` times the noise).
    give_up : bool, default=False
        With ``residual`` > 0, stop early, from ``GIVE_UP_FROM`` pivots on,
        when the decay of the largest residual diagonal so far (a power law
        fitted between the current rank and half of it) predicts that
        ``residual`` needs more than ``GIVE_UP`` times ``rank`` pivots; the
        bounds then use the first ``FALLBACK`` pivots only (``fallback`` is
        True).
    control : bcd.gp.hyper.common.Control, optional
        Checked at every step of the pivoted Cholesky.
    """

    def __init__(self, kernel, X, noise, rank, neighbors, n_threads, group=GROUP, residual=0.0,
                 give_up=False, control=None):
        self.kernel, self.X, self.noise = kernel, X, float(noise)
        self.group = int(group)
        self.grouped = self.group > 1
        self.neighbors, self.n_threads = int(neighbors), n_threads
        self.residual = float(residual)
        n = X.shape[0]
        start = time.perf_counter()
        #: seconds spent per part (the factors once; then summed over calls)
        self.seconds = dict(factor=0.0, estimate=0.0, kernel=0.0, lowrank=0.0, neighbors=0.0,
                            diagonal=0.0)
        self.train_diag = kernel.diag(X)
        max_rank = int(min(rank, n))
        history = []

        def reachable(r, dmax):
            # the largest residual diagonal against the rank, a power law
            # between r/2 and r, extrapolated to the tolerance
            history.append((r, dmax))
            if r < GIVE_UP_FROM or dmax <= self.residual or self.residual <= 0.0:
                return True
            r0, d0 = next(((a, b) for a, b in reversed(history) if a <= r / 2), history[0])
            if r0 <= 0 or d0 <= dmax:
                return False
            slope = math.log(d0 / dmax) / math.log(r / r0)
            need = r * (dmax / max(self.residual, 1e-300)) ** (1.0 / slope)
            return need <= GIVE_UP * max_rank

        self.Q, self.pivots, self.e = pivoted_cholesky(
            kernel, X, self.train_diag, max_rank, n_threads, residual=self.residual,
            reachable=reachable if give_up else None, control=control)
        r = self.rank = self.Q.shape[1]
        s2 = self.noise
        self.max_residual = float(np.max(self.e, initial=0.0))
        if self.max_residual <= self.residual or r == n or \
                self.max_residual <= EXACT * float(np.max(self.train_diag, initial=0.0)):
            self.stopped = "residual"
        elif r >= max_rank:
            self.stopped = "max_rank"
        else:
            self.stopped = "unreachable"
        # M = Q^T Q + s2 I = Lm Lm^T (its leading blocks: the same for a
        # prefix of the pivots)
        M = self.Q.T @ self.Q
        M[np.diag_indices(r)] += s2
        self.Lm = scipy.linalg.cholesky(M, lower=True, check_finite=False)
        del M
        # Q_Z = Q[pivots], lower triangular (pivot order): K_ZZ = Q_Z Q_Z^T
        self.Lz = np.tril(self.Q[self.pivots])
        self.is_pivot = np.zeros(n, dtype=bool)
        #: the pivots the bounds use (all of them unless ``fallback``)
        self.bound_rank = min(r, FALLBACK) if self.fallback else r
        self._bound_state = None
        self.m = int(min(self.neighbors, n - self.bound_rank))
        self.seconds["factor"] = time.perf_counter() - start

    @property
    def converged(self):
        """Whether the factorization reached the residual tolerance."""
        return self.stopped == "residual"

    @property
    def fallback(self):
        """Whether it gave up (the bounds then use ``FALLBACK`` pivots)."""
        return self.stopped == "unreachable"

    @property
    def nbytes(self):
        phi = self._bound_state["Phi"].nbytes if self._bound_state is not None else 0
        return self.Q.nbytes + phi + self.Lm.nbytes + self.Lz.nbytes

    def estimate(self, Xt, batch=1024):
        """The variance estimate at the rows of Xt (see the module
        docstring): e* + s2 |Lm^-1 c*|^2 with c* = Lz^-1 k(Z, x*) and
        e* = k** - |c*|^2 (clipped at 0), at most the exact variance given
        the targets of the pivots alone.  O(r^2) per test point."""
        s2 = self.noise
        clock = time.perf_counter()
        out = np.empty(Xt.shape[0])
        XZ = self.X[self.pivots]
        for start in range(0, Xt.shape[0], batch):
            Xb = Xt[start:start + batch]
            kss = self.kernel.diag(Xb)
            if self.rank == 0:
                out[start:start + batch] = kss
                continue
            kz = self.kernel.evaluator(XZ, Xb, n_threads=self.n_threads).matrix()
            c = scipy.linalg.solve_triangular(self.Lz, kz, lower=True, check_finite=False)
            e_star = np.maximum(kss - np.einsum("ij,ij->j", c, c), 0.0)
            h = scipy.linalg.solve_triangular(self.Lm, c, lower=True, check_finite=False,
                                              overwrite_b=True)
            dtc = e_star + s2 * np.einsum("ij,ij->j", h, h)
            out[start:start + batch] = np.minimum(dtc, kss)
        self.seconds["estimate"] += time.perf_counter() - clock
        return out

    def _bounds_factors(self):
        """The factors of the bounds for the first ``bound_rank`` pivots:
        Q, its certified residual diagonal, Lm, La and Phi."""
        if self._bound_state is not None:
            return self._bound_state
        clock = time.perf_counter()
        r, s2 = self.bound_rank, self.noise
        Q = self.Q if r == self.rank else np.asfortranarray(self.Q[:, :r])
        pivots = self.pivots[:r]
        if r == self.rank:
            e = self.e
        else:
            e = np.maximum(self.train_diag - np.einsum("ij,ij->i", Q, Q), 0.0)
            e[pivots] = 0.0
        # rounding of e (accumulated as diag - sum of squares): a margin of a
        # few ulps of the diagonal per pivot keeps the certificate honest
        e_cert = e + 4.0 * (r + 1) * np.finfo(float).eps * self.train_diag
        e_cert[pivots] = 0.0
        Lm = self.Lm[:r, :r]
        # La La^T = K_ZZ + s2 I = Q_Z Q_Z^T + s2 I; B = Q_Z^T La^-T; Phi = Q B
        QZ = Q[pivots]
        AZ = QZ @ QZ.T
        AZ[np.diag_indices(r)] += s2
        La = scipy.linalg.cholesky(AZ, lower=True, check_finite=False)
        B = scipy.linalg.solve_triangular(La, QZ, lower=True, check_finite=False).T
        Phi = np.ascontiguousarray(Q @ B) if self.m > 0 else None
        self.is_pivot[:] = False
        self.is_pivot[pivots] = True
        self._bound_state = dict(Q=Q, pivots=pivots, e_cert=e_cert, trace_e=float(np.sum(e_cert)),
                                 sqrt_e=np.sqrt(e_cert), Lm=Lm, La=La, Phi=Phi)
        self.seconds["factor"] += time.perf_counter() - clock
        return self._bound_state

    def bounds(self, Xt, batch=BATCH):
        """Lower and upper bounds of the latent variances at the rows of Xt:
        ``(lower, upper)``, ``lower <= var <= upper`` in exact arithmetic,
        ``lower`` clipped at 0 and ``upper`` at ``lower``."""
        lower = np.empty(Xt.shape[0])
        upper = np.empty(Xt.shape[0])
        # batches and groups of nearby test points share their neighbours
        order = spatial_order(Xt, self.group) if self.grouped else np.arange(Xt.shape[0])
        for start in range(0, Xt.shape[0], batch):
            sl = order[start:start + batch]
            var_l, cert, var_u = self.parts(Xt[sl])
            lower[sl] = np.maximum(var_l, 0.0)
            upper[sl] = np.maximum(np.minimum(var_u, var_l + cert), lower[sl])
        return lower, upper

    def parts(self, Xb, diagonal_bound="auto"):
        """The pieces of both bounds at the rows of Xb (one batch):
        ``(var_l, cert, var_u)`` with var_l <= var <= var_l + cert and
        var <= var_u.  ``diagonal_bound``: ``"auto"`` computes the diagonal
        bound where the trace bound leaves var_l + cert above var_u,
        ``True`` everywhere, ``False`` nowhere."""
        s2 = self.noise
        st = self._bounds_factors()
        Q, pivots = st["Q"], st["pivots"]
        clock = time.perf_counter()
        kss = self.kernel.diag(Xb)
        # k(X, Xb): n x nb, Fortran-ordered
        Kt = self.kernel.evaluator(self.X, Xb, n_threads=self.n_threads).matrix()
        clock = self._tick("kernel", clock)
        # ---- lower bound: q = k^T (Q Q^T + s2 I)^-1 k
        H = scipy.linalg.solve_triangular(st["Lm"], Q.T @ Kt, lower=True, check_finite=False)
        kk = np.einsum("ij,ij->j", Kt, Kt)
        hh = np.einsum("ij,ij->j", H, H)
        q = np.maximum((kk - hh) / s2, 0.0)
        var_l = kss - q
        c = scipy.linalg.solve_triangular(st["Lm"].T, H, lower=False, check_finite=False)
        ww = np.maximum((q - np.einsum("ij,ij->j", c, c)) / s2, 0.0)     # |w|^2
        cert = ww * st["trace_e"]
        clock = self._tick("lowrank", clock)
        # ---- upper bound: condition on y_Z, then on y_S
        Zk = Kt[pivots]                                              # k(Z, Xb)
        PhiT = scipy.linalg.solve_triangular(st["La"], Zk, lower=True, check_finite=False)
        var_u = kss - np.einsum("ij,ij->j", PhiT, PhiT)
        if self.m > 0:
            term = self._group_term if self.grouped else self._neighbors_term
            var_u -= term(Xb, Kt, PhiT)
        clock = self._tick("neighbors", clock)
        if len(pivots) + self.m >= self.X.shape[0]:
            # the pivots and the neighbours are the whole training set: the
            # upper bound is the exact variance
            return var_u.copy(), np.zeros_like(var_u), var_u
        # the diagonal bound where the trace bound leaves the low-rank side
        # above the subset side (one n x r x k GEMM for those k points),
        # except where the lower bound is not positive: the low rank misses
        # the variance there, and the bound has not been seen to help (on
        # Friedman1 at 100,000 points it cost 59 s of 195 for nothing)
        if diagonal_bound == "auto":
            need = np.flatnonzero((var_l + cert > var_u) & (var_l > 0))
        else:
            need = np.arange(Xb.shape[0] if diagonal_bound else 0)
        if need.size:
            W = (Kt[:, need] - Q @ c[:, need]) / s2
            diag_b = (st["sqrt_e"] @ np.abs(W)) ** 2
            cert[need] = np.minimum(cert[need], diag_b)
        with np.errstate(invalid="ignore", divide="ignore"):
            cert = np.where(q + cert > 0, q * cert / np.maximum(q + cert, 1e-300), 0.0)
        self._tick("diagonal", clock)
        return var_l, cert, var_u

    def _tick(self, part, clock):
        now = time.perf_counter()
        self.seconds[part] += now - clock
        return now

    def _group_term(self, Xb, Kt, PhiT):
        """cs^T C^-1 cs per test point, for groups of ``self.group``
        consecutive test points that share one set S of m training points
        (not pivots; the largest of max_j k(x_i, x*_j) over the group):
        C = K_SS + s2 I - Phi_S Phi_S^T, cs = k(S, x*) - Phi_S phi_*."""
        m, nb = self.m, Xb.shape[0]
        out = np.empty(nb)
        for g0 in range(0, nb, self.group):
            g = slice(g0, min(g0 + self.group, nb))
            score = Kt[:, g].max(axis=1)[:, None]
            S = top_rows(score, m, self.is_pivot)[0]
            PhiS = self._bound_state["Phi"][S]                       # (m, r)
            C = self.kernel.evaluator(self.X[S], n_threads=self.n_threads).matrix()
            # C -= Phi_S Phi_S^T (lower triangle), C += s2 I
            C = scipy.linalg.blas.dsyrk(-1.0, PhiS, beta=1.0, c=np.asfortranarray(C),
                                        lower=1, overwrite_c=1)
            C[np.diag_indices(m)] += self.noise
            cs = Kt[S, g] - PhiS @ PhiT[:, g]
            L = scipy.linalg.cholesky(C, lower=True, check_finite=False, overwrite_a=True)
            u = scipy.linalg.solve_triangular(L, cs, lower=True, check_finite=False)
            out[g] = np.einsum("ij,ij->j", u, u)
        return out

    def _neighbors_term(self, Xb, Kt, PhiT):
        """cs^T C^-1 cs per test point: C = K_SS + s2 I - Phi_S Phi_S^T and
        cs = k(S, x*) - Phi_S phi_*, S its m most correlated non-pivots."""
        m, nb = self.m, Xb.shape[0]
        idx = top_rows(Kt, m, self.is_pivot)                       # (nb, m)
        PhiS = self._bound_state["Phi"][idx]                        # (nb, m, r)
        C = np.empty((nb, m, m))
        for j in range(nb):
            S = self.X[idx[j]]
            C[j] = self.kernel.evaluator(S, n_threads=1).matrix()
        # C -= Phi_S Phi_S^T; C += s2 I
        C -= PhiS @ PhiS.transpose(0, 2, 1)
        C[:, np.arange(m), np.arange(m)] += self.noise
        cs = np.take_along_axis(Kt, idx.T, axis=0).T                # (nb, m)
        cs -= np.einsum("jmr,rj->jm", PhiS, PhiT)
        L = np.linalg.cholesky(C)
        u = np.linalg.solve(L, cs[:, :, None])[:, :, 0]
        return np.einsum("jm,jm->j", u, u)


def spatial_order(X, leaf):
    """An order of the rows of X in which runs of ``leaf`` consecutive rows
    are close: recursive halving at the median along the leading principal
    direction of each part."""
    parts, out = [np.arange(X.shape[0])], []
    while parts:
        idx = parts.pop()
        if idx.size <= leaf:
            out.append(idx)
            continue
        Y = X[idx] - X[idx].mean(axis=0)
        _, vecs = np.linalg.eigh(Y.T @ Y)
        proj = Y @ vecs[:, -1]
        half = idx.size // 2
        split = np.argpartition(proj, half)
        # the second half is popped first: the order runs from the first part
        parts.append(idx[split[half:]])
        parts.append(idx[split[:half]])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def top_rows(Kt, m, exclude):
    """For each column of Kt (n x nb), the rows of its m largest entries
    among those not ``exclude``d: an (nb, m) integer array.

    A threshold from a sample of the rows keeps most rows out of the exact
    selection, which runs on the rows above it (all rows where the sample
    was not enough)."""
    n, nb = Kt.shape
    keep = np.flatnonzero(~exclude)
    out = np.empty((nb, m), dtype=np.int64)
    if keep.size <= 4 * m or keep.size <= 2048:
        vals = Kt[keep]
        part = np.argpartition(-vals, m - 1, axis=0)[:m] if m < keep.size else \
            np.broadcast_to(np.arange(keep.size)[:, None], (keep.size, nb))
        return keep[part.T]
    rng = np.random.default_rng(0)
    sample = rng.choice(keep, size=min(keep.size, 4096), replace=False)
    # the sample's value ranked so that about 3 m rows of all lie above it
    rank = min(sample.size - 1, int(math.ceil(3.0 * m * sample.size / keep.size)))
    thr = -np.partition(-Kt[sample], rank, axis=0)[rank]            # (nb,)
    above = Kt > thr
    above[exclude] = False
    for j in range(nb):
        rows = np.flatnonzero(above[:, j])
        if rows.size < m:
            rows = keep
        vals = Kt[rows, j]
        out[j] = rows[np.argpartition(-vals, m - 1)[:m]] if rows.size > m else rows
    return out
