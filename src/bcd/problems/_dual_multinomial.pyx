"""Dual coordinate ascent for L2-regularized multinomial logistic regression.

The primal problem is

    P(W) = sum_i s_i [logsumexp(a_i' W) - (a_i' W)_{y_i}] + 1/2 sum_jk r_jk W_jk^2

with W of shape d x K (row-major), r > 0.  Its (maximum-entropy) dual has one
probability vector p_i in the simplex per sample:

    D(p) = -sum_i s_i sum_k p_ik log p_ik - 1/2 sum_jk (A' U)_jk^2 / r_jk,
    U_i = s_i (e_{y_i} - p_i),    W(p) = (A' U) ./ r,

and the primal optimum is W(p*), with p*_i = softmax(a_i' W(p*)).  An epoch
maximizes D exactly over each p_i in turn (all others fixed) and keeps W
up to date.  With z = a_i' W, q_k = sum_j a_ij^2 / r_jk and b_k = s_i q_k the
sub-problem is

    min_{p in simplex} sum_k p_k log p_k - z'(p - p_old) + 1/2 sum_k b_k (p_k - p_old_k)^2,

whose optimality conditions are, with t = log p,

    t_k + b_k e^{t_k} = z_k + b_k p_old_k - mu,    sum_k e^{t_k} = 1.

They are solved by Newton's method on (t, mu) jointly (O(K) per iteration,
warm-started at p_old, so that late in the run one or two iterations
suffice; far from p_old it starts from the solution without the entropy, a
projection onto the simplex), in _mnl_dual.h, with a monotone nested Newton
method as the fallback: for fixed mu each t_k solves a convex scalar
equation, and sum_k e^{t_k(mu)} - 1 is convex and decreasing in mu, so
Newton's method on mu started where it is non-negative increases
monotonically to the root.  The rows of W that a_i touches are then updated,
W_jk += a_ij s_i (p_old_k - p_new_k) / r_jk.

For W = W(p) the duality gap is sum_i s_i KL(p_i || softmax(a_i' W)) (plus
1/2 sum_jk r_jk (W - W(p))_jk^2 for the rounding drift of the incremental
updates), and the primal gradient is A' S (softmax(A W) - Y) + r o W, the
optimality measure of bcd.solve; a stopping test computes both in one pass
over the data, placed where a proxy (the largest change of a probability
in the epoch, scaled by the ratio of optimality to proxy at the last test)
predicts convergence, and otherwise as often as a tenth of the epochs'
work allows.
"""
import numpy as np
from libc.math cimport exp, log1p, fabs, isfinite
from libc.stdlib cimport qsort
from libc.stdint cimport uint64_t
from bcd.core._clock cimport interrupted as _interrupted, now as _now

from bcd.core._random cimport RNG, rng_seed, rng_below


from bcd.problems._mnl_dual cimport (
    BCD_MNL_MAX_IT, BCD_MNL_TMIN, BCD_MNL_WORK, bcd_mnl_data, bcd_mnl_ops, bcd_mnl,
    bcd_isa_available, bcd_isa_best, bcd_mnl_select)


cdef extern from *:
    """
    /* fraction of the epochs' work that the stopping tests may add */
    #define CHECK_BUDGET 0.1
    /* the cost of a Newton iteration on one class, and of the stopping
       test's work on one class of a sample, in multiply-adds of the
       products with A (measured: about 4 ns against 0.15 ns) */
    #define COST_CLASS 25.0
    /* iterations of the fallback's Newton methods */
    #define NESTED_MAX_IT 200
    """
    const double CHECK_BUDGET
    const double COST_CLASS
    const int NESTED_MAX_IT


cdef enum:
    ORDER_CYCLIC = 0
    ORDER_RANDOM = 1
    ORDER_GREEDY = 2

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    MAX_TIME = 2
    DIVERGED = 3
    INTERRUPTED = 4

STATUS_NAMES = {CONVERGED: "converged", MAX_ITER: "max_iter", MAX_TIME: "max_time",
                DIVERGED: "diverged", INTERRUPTED: "interrupted"}

#: seconds between checks for Ctrl-C
cdef double SIGNAL_INTERVAL = 0.1
ORDERS = {"cyclic": ORDER_CYCLIC, "random": ORDER_RANDOM, "greedy": ORDER_GREEDY}

#: the instruction-set paths of the per-sample loops (as in bcd.gp)
ISA_NAMES = ("generic", "avx2", "avx512")


def available_isas():
    """The instruction-set paths this CPU and build can run, narrowest first."""
    return tuple(name for code, name in enumerate(ISA_NAMES) if bcd_isa_available(code))


def _select_isa(name=None):
    """Use the loops of instruction set ``name`` (None: the widest the CPU
    runs); returns the name in use.  For tests and measurements."""
    global _ISA
    code = bcd_isa_best() if name is None else ISA_NAMES.index(name)
    if bcd_mnl_select(code) != 0:
        raise ValueError(f"instruction set {name!r} is not available; "
                         f"available: {', '.join(available_isas())}")
    _ISA = ISA_NAMES[code]
    return _ISA


_ISA = "generic"
_select_isa()


# ------------------------------------------------------- fallback sub-solver
cdef inline double _scalar_root(double v, double bk, double t0) noexcept nogil:
    """The root of t + bk e^t = v (bk > 0) by Newton's method from t0, a
    point at or right of the root (the iterates then decrease to it)."""
    cdef double t = t0, e, step
    cdef int it
    for it in range(NESTED_MAX_IT):
        e = bk * exp(t)
        step = (t + e - v) / (1.0 + e)
        t -= step
        if fabs(step) <= 4e-16 * (1.0 + fabs(t)):
            break
    return t


cdef void _solve_nested(Py_ssize_t K, const double* z, const double* b, const double* pold,
                        double* p, double* t) noexcept nogil:
    """The sub-problem by Newton's method on mu, each t_k(mu) solved exactly
    (slower than the joint Newton method of _mnl_dual.h, but convergent
    from any start).  Started at mu = max_k (c_k - b_k), c_k = z_k + b_k
    p_old_k, where some p_k = 1 (so sum_k p_k(mu) >= 1), the iterates
    increase monotonically to the root (the sum is convex and decreasing in
    mu); every t_k stays <= 0 and decreases, so that the previous t_k is a
    start at or right of the next root."""
    cdef Py_ssize_t k
    cdef int it
    cdef double mu = -1e308, c, f, fp, pk, step, s = 0.0, g
    for k in range(K):
        c = z[k] + b[k] * pold[k]
        if c - b[k] > mu:
            mu = c - b[k]
        t[k] = 0.0
    for it in range(NESTED_MAX_IT):
        f = -1.0
        fp = 0.0
        for k in range(K):
            c = z[k] + b[k] * pold[k]
            if b[k] > 0.0:
                t[k] = _scalar_root(c - mu, b[k], min(t[k], c - mu, 0.0))
            else:
                t[k] = min(c - mu, 0.0)
            if t[k] < BCD_MNL_TMIN:
                t[k] = BCD_MNL_TMIN
            pk = exp(t[k])
            p[k] = pk
            f += pk
            fp += pk / (1.0 + b[k] * pk)
        if f <= 4e-16 or not isfinite(f):
            break
        step = f / fp
        mu += step
        if step <= 4e-16 * (1.0 + fabs(mu)):
            break
    # onto the simplex
    for k in range(K):
        s += p[k]
    g = log1p(s - 1.0)
    for k in range(K):
        p[k] /= s
        t[k] = min(t[k] - g, 0.0)


def _subproblem(z, b, p_old, method="newton"):
    """The sub-problem of one sample, for tests: argmin over the simplex of
    sum_k p_k log p_k - z'(p - p_old) + 1/2 sum_k b_k (p_k - p_old_k)^2.
    method: "newton" (the solver of the epochs; None if it does not
    converge) or "nested" (the fallback).  Returns (p, log p, iterations)."""
    cdef double[::1] zv = np.ascontiguousarray(z, dtype=np.float64)
    cdef double[::1] bv = np.ascontiguousarray(b, dtype=np.float64)
    po = np.asarray(p_old, dtype=np.float64)
    if not np.all(np.isfinite(po)) or np.any(po < 0) or not po.sum() > 0:
        raise ValueError("p_old must be finite, non-negative and not all zero")
    po = np.maximum(po / po.sum(), np.exp(BCD_MNL_TMIN))
    po = po / po.sum()
    cdef double[::1] pv = po
    cdef double[::1] tv = np.minimum(np.log(po), 0.0)
    cdef Py_ssize_t K = zv.shape[0]
    if bv.shape[0] != K or pv.shape[0] != K or K < 1:
        raise ValueError("z, b and p_old must have the same length >= 1")
    if not np.all(np.asarray(bv) >= 0):
        raise ValueError("b must be >= 0")
    p = np.zeros(K)
    t = np.zeros(K)
    cdef double[::1] pn = p, tn = t, work = np.zeros(5 * K)
    cdef double G = 0.0, s
    cdef int it = 0
    if method == "newton":
        it = bcd_mnl.solve(K, &zv[0], &bv[0], &pv[0], &tv[0], &pn[0], &tn[0], &work[0], &G)
        if it < 0:
            return None
        s = 1.0 + G
        p /= s
        t -= log1p(G)
        np.minimum(t, 0.0, out=t)
    elif method == "nested":
        _solve_nested(K, &zv[0], &bv[0], &pv[0], &pn[0], &tn[0])
    else:
        raise ValueError(f"method must be 'newton' or 'nested'; got {method!r}")
    return p, t, it


# ---------------------------------------------------------------- ordering
cdef struct Ranked:
    double v
    int i


cdef int _by_violation(const void* a, const void* b) noexcept nogil:
    cdef double va = (<const Ranked*>a).v, vb = (<const Ranked*>b).v
    cdef int ia = (<const Ranked*>a).i, ib = (<const Ranked*>b).i
    if va > vb:
        return -1
    if va < vb:
        return 1
    return (ia > ib) - (ia < ib)


# ---------------------------------------------------------------- the solver
cdef class _State:
    """The arrays of one solve (P, T = log P and Q row-major n x K; W and
    the gradient row-major d x K) and the per-sample loops on them."""
    cdef bcd_mnl_data s
    cdef Py_ssize_t n, d, K
    cdef const int* y
    cdef const double* sw           # NULL: all ones
    cdef const double* ridge        # d x K
    cdef object keep                # the arrays the pointers point into
    cdef double[::1] G              # d x K
    cdef double[::1] u              # K
    cdef int[::1] active            # samples with s_i > 0
    cdef Py_ssize_t n_active
    cdef Py_ssize_t n_newton         # Newton iterations of all visits
    cdef int n_fallback              # visits solved by the fallback

    cdef inline double weight(self, Py_ssize_t i) noexcept nogil:
        return 1.0 if self.sw == NULL else self.sw[i]

    cdef void weights_from_dual(self, double* out) noexcept nogil:
        """out = W(p) = A' S (Y - P) ./ r."""
        cdef Py_ssize_t K = self.K, i, k, a
        cdef double* u = &self.u[0]
        for k in range(self.d * K):
            out[k] = 0.0
        for a in range(self.n_active):
            i = self.active[a]
            for k in range(K):
                u[k] = -self.s.P[i * K + k]
            u[self.y[i]] += 1.0
            bcd_mnl.scatter(&self.s, i, self.weight(i), u, out, 1)

    cdef double check(self, double* gap, Ranked* rank, bint want_grad) noexcept nogil:
        """One pass at the current W: the gap sum_i s_i KL(p_i || softmax(z_i))
        into gap, the violations s_i ||p_i - softmax(z_i)||_1 into rank (when
        not NULL) and, if want_grad, the inf-norm of the primal gradient
        A' S (softmax(A W) - Y) + r o W (returned; -1 otherwise)."""
        cdef Py_ssize_t K = self.K, i, k, a, j
        cdef double* z = self.s.work
        cdef double* u = &self.u[0]
        cdef double si, kl, viol, opt = 0.0, gsum = 0.0, g
        if want_grad:
            for k in range(self.d * K):
                self.G[k] = 0.0
        for a in range(self.n_active):
            i = self.active[a]
            si = self.weight(i)
            bcd_mnl.gather(&self.s, i, z)
            kl = bcd_mnl.check_row(K, z, &self.s.P[i * K], &self.s.T[i * K], self.y[i], u,
                                   &viol)
            gsum += si * kl
            if rank != NULL:
                rank[a].v = si * viol
                rank[a].i = <int>i
            if want_grad:
                bcd_mnl.scatter(&self.s, i, si, u, &self.G[0], 0)
        gap[0] = gsum
        if not want_grad:
            return -1.0
        for j in range(self.d * K):
            g = fabs(self.G[j] + self.ridge[j] * self.s.W[j])
            if not (g <= opt):          # NaN propagates
                opt = g
        return opt

    cdef double visit(self, Py_ssize_t i) noexcept nogil:
        """Maximize D over p_i; returns s_i ||p_new - p_old||_inf."""
        cdef Py_ssize_t K = self.K
        cdef double si = self.weight(i), change = 0.0
        cdef double* w = self.s.work
        cdef int it = bcd_mnl.visit(&self.s, i, si, &change)
        if it >= 0:
            self.n_newton += it
            return change
        # z and b are in the scratch; p_new and log p_new go after them
        self.n_newton += BCD_MNL_MAX_IT
        self.n_fallback += 1
        _solve_nested(K, w, w + K, &self.s.P[i * K], w + 2 * K, w + 3 * K)
        return bcd_mnl.apply(&self.s, i, si)


def multinomial_dual(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                     const int[::1] y, Py_ssize_t n_classes, sample_weight,
                     const double[::1] ridge, P0, double tol, Py_ssize_t max_epochs,
                     double max_time=0.0, order="random", seed=0, Py_ssize_t check_every=0):
    """Dual coordinate ascent for L2-regularized multinomial logistic regression.

    Parameters
    ----------
    indptr, indices, data : the rows of A (n x d) in canonical CSR form
        (int32, int32, float64; sorted column indices without duplicates).
    y : int32 array of labels in 0..n_classes-1.
    n_classes : K.
    sample_weight : float64 array of length n (>= 0), or None for all ones.
    ridge : float64 array of length d * K, all > 0 and finite (coordinate
        j * K + k).
    P0 : None or a float64 n x K array of non-negative rows (normalized to
        sum to one; entries are raised to at least e^-700), tested before
        the first epoch (no epoch runs if it is optimal already).  None
        starts at p_i = (1 - 1e-6) e_{y_i} + 1e-6 / K, where W is nearly 0.
    tol : stop when the primal gradient's inf-norm is at most tol.
    max_epochs : maximum number of passes over the samples.
    max_time : time limit in seconds (0: none).
    order : "cyclic", "random" (a fresh permutation each epoch) or "greedy"
        (decreasing violation s_i ||p_i - softmax(a_i' W)||_1 at the start
        of each epoch).
    seed : seed of the permutations (int).
    check_every : 0 to space the stopping tests adaptively, else test
        every check_every epochs.

    Returns
    -------
    dict with "W" (flat row-major d x K), "P" (n x K), "n_epochs", "status"
    ("converged", "max_iter", "max_time", "diverged", "interrupted": Ctrl-C,
    checked between epochs about every 0.1 s), "optimality" (the
    primal gradient's inf-norm at W), "duality_gap" (P(W) - D(P) >= 0),
    "n_checks", "n_fallbacks" (visits whose Newton method did not converge,
    solved by the fallback), "newton_iterations", "drift" (max |W - W(P)|
    at the end: the rounding accumulated by the incremental updates of W),
    "time_epochs" and "time_checks" (seconds), "isa" (the loops used) and
    "history" ((epoch, seconds, optimality, gap, proxy) at each test, the
    proxy being the largest s_i |p_ik change| of the epoch).
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1, K = n_classes, d, i, k, j, a, e
    if n < 0:
        raise ValueError("indptr must have at least one entry")
    if K < 2:
        raise ValueError("n_classes must be at least 2")
    if ridge.shape[0] == 0 or ridge.shape[0] % K:
        raise ValueError("ridge must have length n_features * n_classes")
    d = ridge.shape[0] // K
    if y.shape[0] != n:
        raise ValueError("y must have one label per row")
    if indptr[0] != 0 or indptr[n] > indices.shape[0] or indptr[n] > data.shape[0]:
        raise ValueError("indptr does not match indices and data")
    for i in range(n):
        if indptr[i + 1] < indptr[i]:
            raise ValueError("indptr must be non-decreasing")
        if y[i] < 0 or y[i] >= K:
            raise ValueError("labels must lie in 0..n_classes-1")
    for i in range(n):
        for j in range(indptr[i], indptr[i + 1]):
            if indices[j] < 0 or indices[j] >= d:
                raise ValueError("column index out of range")
            if j > indptr[i] and indices[j] <= indices[j - 1]:
                raise ValueError("the column indices of each row must increase strictly "
                                 "(canonical CSR: sorted, without duplicates)")
            if not isfinite(data[j]):
                raise ValueError("A must be finite")
    for j in range(d * K):
        if not (ridge[j] > 0.0) or not isfinite(ridge[j]):
            raise ValueError("the dual needs a finite l2 > 0 on every coordinate")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {sorted(ORDERS)}; got {order!r}")
    cdef int order_code = ORDERS[order]
    cdef const double[::1] sw
    cdef _State st = _State()
    st.n = n
    st.d = d
    st.K = K
    st.y = &y[0] if n else NULL
    st.ridge = &ridge[0]
    if sample_weight is None:
        st.sw = NULL
        act = np.arange(n, dtype=np.int32)
    else:
        sw = np.ascontiguousarray(sample_weight, dtype=np.float64)
        if sw.shape[0] != n:
            raise ValueError("sample_weight must have one weight per row")
        if not np.all(np.isfinite(sw)) or np.any(np.asarray(sw) < 0):
            raise ValueError("sample_weight must be finite and >= 0")
        st.sw = &sw[0] if n else NULL
        act = np.flatnonzero(np.asarray(sw) > 0).astype(np.int32)
    st.active = act
    st.n_active = act.shape[0]

    R = np.asarray(ridge).reshape(d, K)
    per_feature = bool(np.all(R == R[:, :1]))
    inv_r = np.ascontiguousarray(1.0 / (R[:, 0] if per_feature else R.ravel()))
    # q_ik = sum_j a_ij^2 / r_jk
    nnz = int(indptr[n])
    rows = np.repeat(np.arange(n), np.diff(np.asarray(indptr)))
    cols = np.asarray(indices)[:nnz]
    sq = np.asarray(data)[:nnz] ** 2
    Qm = np.zeros((n, K))
    if per_feature:
        Qm += np.bincount(rows, weights=sq * inv_r[cols], minlength=n)[:, None]
    else:
        for k in range(K):
            Qm[:, k] = np.bincount(rows, weights=sq / R[cols, k], minlength=n)
    if P0 is None:
        Pm = np.full((n, K), 1e-6 / K)
        Pm[np.arange(n), np.asarray(y)] += 1.0 - 1e-6
    else:
        Pm = np.array(P0, dtype=np.float64, order="C", copy=True)
        if Pm.shape != (n, K):
            raise ValueError(f"P0 must have shape ({n}, {K}); got {Pm.shape}")
        if not np.all(np.isfinite(Pm)) or np.any(Pm < 0) or np.any(Pm.sum(axis=1) <= 0):
            raise ValueError("P0 must hold finite non-negative rows with a positive sum")
        Pm /= Pm.sum(axis=1, keepdims=True)
        Pm = np.maximum(Pm, np.exp(BCD_MNL_TMIN))
        Pm /= Pm.sum(axis=1, keepdims=True)
    Tm = np.minimum(np.log(Pm), 0.0)
    Wm = np.zeros(d * K)
    work = np.zeros(BCD_MNL_WORK(K))
    indptr_arr = np.asarray(indptr)
    st.keep = (Pm, Tm, Qm, Wm, inv_r, work, indptr, indices, data)
    cdef double[:, ::1] Pv = Pm, Tv = Tm, Qv = Qm
    cdef double[::1] Wv = Wm, irv = inv_r, wv = work
    st.s.K = K
    st.s.indptr = &indptr[0]
    st.s.indices = &indices[0] if indices.shape[0] else NULL
    st.s.data = &data[0] if data.shape[0] else NULL
    st.s.W = &Wv[0]
    st.s.P = &Pv[0, 0] if n else NULL
    st.s.T = &Tv[0, 0] if n else NULL
    st.s.Q = &Qv[0, 0] if n else NULL
    st.s.inv_r = &irv[0]
    st.s.per_feature = per_feature
    st.s.work = &wv[0]
    st.G = np.zeros(d * K)
    st.u = np.zeros(K)
    ranked = np.zeros(max(st.n_active, 1), dtype=np.dtype([("v", np.float64), ("i", np.int32)],
                                                           align=True))
    cdef Ranked[::1] rank = ranked
    cdef int[::1] perm = np.array(act, dtype=np.int32)
    cdef RNG rng
    rng_seed(&rng, <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF), <uint64_t>0x5DEECE66D)

    history = []
    cdef double t_start = _now(), t0, t_epochs = 0.0, t_checks = 0.0
    cdef double t_signal = t_start
    # work of the epochs and of the tests so far, and of one test, in
    # multiply-adds (a model rather than the clock, so that where the tests
    # fall, and so the result, does not depend on the machine's load)
    cdef double nnz_active = float(np.diff(np.asarray(indptr))[act].sum())
    cdef double work_epochs = 0.0, work_checks = 0.0
    cdef double work_check = K * (2.0 * nnz_active + COST_CLASS * st.n_active)
    cdef Py_ssize_t newton_before
    cdef double opt = -1.0, gap = 0.0, proxy = 0.0, proxy_ref = 0.0, opt_ref = 0.0, drift = 0.0
    cdef Py_ssize_t n_epochs = 0, n_checks = 0, last_check = -1, tmp
    cdef int status = MAX_ITER
    cdef bint do_check

    cdef bint warm = P0 is not None
    with nogil:
        st.weights_from_dual(st.s.W)
        if warm and max_epochs > 0:
            # a warm start may already be optimal
            t0 = _now()
            opt = st.check(&gap, NULL, True)
            t_checks += _now() - t0
            work_checks += work_check
            n_checks += 1
            last_check = 0
            with gil:
                history.append((0, _now() - t_start, opt, gap, 0.0))
            if opt <= tol:
                status = CONVERGED
                max_epochs = 0
            elif not isfinite(opt) or not isfinite(gap):
                status = DIVERGED
                max_epochs = 0
        for e in range(max_epochs):
            t0 = _now()
            newton_before = st.n_newton
            if order_code == ORDER_RANDOM:
                for a in range(st.n_active - 1, 0, -1):
                    j = rng_below(&rng, a + 1)
                    tmp = perm[a]
                    perm[a] = perm[j]
                    perm[j] = <int>tmp
            elif order_code == ORDER_GREEDY:
                st.check(&gap, &rank[0], False)
                work_epochs += K * (nnz_active + COST_CLASS * st.n_active)
                qsort(&rank[0], st.n_active, sizeof(Ranked), _by_violation)
                for a in range(st.n_active):
                    perm[a] = rank[a].i
            proxy = 0.0
            for a in range(st.n_active):
                proxy = max(proxy, st.visit(perm[a]))
                # long epochs look at the clock now and then
                if (max_time > 0.0 and (a & 1023) == 1023
                        and _now() - t_start >= max_time):
                    break
            n_epochs = e + 1
            t_epochs += _now() - t0
            if _now() - t_signal >= SIGNAL_INTERVAL:
                # Ctrl-C: stop with the current iterate, as bcd.solve does
                t_signal = _now()
                if _interrupted():
                    status = INTERRUPTED
                    break
            work_epochs += K * (2.0 * nnz_active + COST_CLASS * (st.n_newton - newton_before))
            if not isfinite(proxy):
                status = DIVERGED
                break
            # stopping test: every check_every epochs, or adaptively: when the
            # proxy (the largest change of a probability this epoch), scaled
            # by the ratio optimality / proxy at the last test, predicts
            # convergence, or as often as the budget for tests allows
            if check_every > 0:
                do_check = n_epochs % check_every == 0
            elif n_checks == 0 or (warm and n_checks == 1):
                do_check = True
            else:
                do_check = (proxy * opt_ref <= tol * proxy_ref
                            or work_checks + work_check <= CHECK_BUDGET * work_epochs)
            if max_time > 0.0 and _now() - t_start >= max_time:
                do_check = True
            if do_check:
                t0 = _now()
                opt = st.check(&gap, NULL, True)
                t_checks += _now() - t0
                work_checks += work_check
                n_checks += 1
                last_check = n_epochs
                proxy_ref = proxy
                opt_ref = opt
                with gil:
                    history.append((n_epochs, _now() - t_start, opt, gap, proxy))
                if not isfinite(opt) or not isfinite(gap):
                    status = DIVERGED
                    break
                if opt <= tol:
                    status = CONVERGED
                    break
                if max_time > 0.0 and _now() - t_start >= max_time:
                    status = MAX_TIME
                    break
        if last_check != n_epochs:
            opt = st.check(&gap, NULL, True)
            n_checks += 1
            if status == MAX_ITER and opt <= tol:
                status = CONVERGED
        # the drift of W from W(P), and its share of the gap: P(W) - D(P) =
        # sum_i s_i KL + 1/2 sum_jk r_jk (W - W(P))_jk^2
        st.weights_from_dual(&st.G[0])
        for j in range(d * K):
            drift = max(drift, fabs(st.s.W[j] - st.G[j]))
            gap += 0.5 * (st.s.W[j] - st.G[j]) ** 2 * st.ridge[j]
    if not isfinite(opt) or not isfinite(gap):
        status = DIVERGED
    if not history or history[len(history) - 1][0] != n_epochs:
        history.append((n_epochs, _now() - t_start, opt, gap, proxy))
    return {
        "W": Wm,
        "P": Pm,
        "n_epochs": int(n_epochs),
        "status": STATUS_NAMES[status],
        "optimality": float(opt),
        "duality_gap": float(gap),
        "n_checks": int(n_checks),
        "n_fallbacks": int(st.n_fallback),
        "newton_iterations": int(st.n_newton),
        "drift": float(drift),
        "time_epochs": float(t_epochs),
        "time_checks": float(t_checks),
        "isa": _ISA,
        "history": history,
    }

