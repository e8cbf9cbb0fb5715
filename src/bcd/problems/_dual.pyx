"""Dual coordinate ascent for L2-regularized linear models.

The primal problem is

    P(w) = sum_i s_i phi(a_i^T w; t_i) + 1/2 sum_j r_j w_j^2        (r_j > 0)

and its Fenchel dual has one variable per sample.  With beta_i the signed
dual variable, the primal point of a dual point is w = R^{-1} A^T beta,
kept up to date by every step (one pass over the row a_i).  The losses and
their dual variables:

* least squares, phi = (z - b)^2 / 2: beta_i = alpha_i free, the dual term
  alpha b - alpha^2 / (2 s); the coordinate maximizer is closed form;
* logistic, phi = log(1 + exp(-t z)): beta_i = t_i alpha_i with alpha_i in
  (0, s_i), the dual term the binary entropy of alpha_i / s_i (times s_i);
  alpha_i is kept through its logit u_i, alpha_i = s_i sigmoid(u_i), so
  that alpha_i and s_i - alpha_i are both accurate near the bounds, and the
  coordinate maximizer is found by a safeguarded Newton iteration on u
  (the one-variable problem of Yu, Huang and Lin, 2011);
* hinge, phi = max(0, 1 - t z): alpha_i in [0, s_i], dual term alpha;
* squared hinge, phi = max(0, 1 - t z)^2: alpha_i >= 0, dual term
  alpha - alpha^2 / (4 s) (Hsieh et al., 2008).

The two hinge losses shrink: a variable at a bound whose projected gradient
points outward by more than the largest violation of the previous pass is
left out of the following passes, until the remaining ones converge, when
all are brought back (liblinear's heuristic).  Shrinking never decides
convergence: the stopping test always runs on all samples.

Stopping: the duality gap P(w) - D(alpha) <= tol (or tol |P(w)|); it
bounds P(w) - P*.  A test costs about half a pass (a product with the
rows), so tests are spaced: after each pass, the sum of squares of the
samples' dual violations (measured as they are visited) is scaled by its
ratio to the gap at the last test, and a test runs when that prediction
reaches tol or ``MAX_SPACING`` passes after the last one.  With shrinking, whose violations collapse on the shrunk set, a test
runs when the shrunk set has converged (and every sample is brought back)
or after ``SHRUNK_WORK`` passes' worth of updates; otherwise by the linear
rate observed between the last two tests.
"""
import numpy as np
from libc.math cimport exp, log, log1p, fabs, isfinite, sqrt, INFINITY, ceil
from bcd.core._clock cimport interrupted as _interrupted, now as _now
from bcd.core._random cimport RNG, rng_seed, rng_below

cdef enum Loss:
    SQUARED = 0
    LOGISTIC = 1
    HINGE = 2
    SQUARED_HINGE = 3

#: loss names accepted by :func:`linear_dual`, with their codes
LOSSES = {"squared": SQUARED, "logistic": LOGISTIC, "hinge": HINGE,
          "squared_hinge": SQUARED_HINGE}
#: sample orders accepted by :func:`linear_dual`
ORDERS = ("cyclic", "random", "greedy")

cdef enum Status:
    CONVERGED = 0
    MAX_ITER = 1
    MAX_TIME = 2
    INTERRUPTED = 5
    DIVERGED = 6

STATUS_NAMES = {CONVERGED: "converged", MAX_ITER: "max_iter", MAX_TIME: "max_time",
                INTERRUPTED: "interrupted", DIVERGED: "diverged"}

#: seconds between checks for Ctrl-C
cdef double SIGNAL_INTERVAL = 0.1
#: the most passes between two stopping tests
cdef int MAX_SPACING = 8
#: a gap within this fraction of |P| + |D| is zero up to the rounding of P and D
GAP_ROUNDING = 1e-13
cdef double _GAP_ROUNDING = GAP_ROUNDING
#: with shrinking, the most updates between two tests, in passes over all samples
cdef int SHRUNK_WORK = 10
#: with "greedy", a pass updates the samples whose violation is at least this
#: fraction of the largest
cdef double GREEDY_FRACTION = 0.1


cdef inline double _sigmoid(double u) noexcept nogil:
    cdef double e
    if u >= 0.0:
        return 1.0 / (1.0 + exp(-u))
    e = exp(u)
    return e / (1.0 + e)


cdef inline double _log1pexp(double u) noexcept nogil:
    """log(1 + exp(u)), overflow-free."""
    if u > 0.0:
        return u + log1p(exp(-u))
    return log1p(exp(u))


cdef struct Rows:
    # the rows a_i of A: dense row-major (data[i * n + j]) or CSR
    bint dense
    Py_ssize_t m
    Py_ssize_t n
    const int* indptr
    const int* indices
    const double* data


cdef inline double _row_dot(const Rows* A, Py_ssize_t i, const double* w) noexcept nogil:
    """a_i^T w."""
    cdef Py_ssize_t k, k0, k1
    cdef double s = 0.0
    cdef const double* row
    if A.dense:
        row = A.data + i * A.n
        for k in range(A.n):
            s += row[k] * w[k]
        return s
    k0 = A.indptr[i]
    k1 = A.indptr[i + 1]
    for k in range(k0, k1):
        s += A.data[k] * w[A.indices[k]]
    return s


cdef inline void _row_axpy(const Rows* A, Py_ssize_t i, double c, const double* inv_r,
                           bint uniform, double* w) noexcept nogil:
    """w += c R^{-1} a_i (inv_r[0] is 1/r when the ridge is uniform)."""
    cdef Py_ssize_t k, k0, k1
    cdef const double* row
    cdef double cr
    if uniform:
        cr = c * inv_r[0]
        if A.dense:
            row = A.data + i * A.n
            for k in range(A.n):
                w[k] += cr * row[k]
        else:
            k0 = A.indptr[i]
            k1 = A.indptr[i + 1]
            for k in range(k0, k1):
                w[A.indices[k]] += cr * A.data[k]
        return
    if A.dense:
        row = A.data + i * A.n
        for k in range(A.n):
            w[k] += c * row[k] * inv_r[k]
    else:
        k0 = A.indptr[i]
        k1 = A.indptr[i + 1]
        for k in range(k0, k1):
            w[A.indices[k]] += c * A.data[k] * inv_r[A.indices[k]]


cdef inline double _dloss(int loss, double z, double t) noexcept nogil:
    """phi'(z; t)."""
    cdef double u
    if loss == SQUARED:
        return z - t
    if loss == LOGISTIC:
        u = t * z
        return -t * _sigmoid(-u)
    u = 1.0 - t * z
    if loss == SQUARED_HINGE:
        return -2.0 * t * u if u > 0.0 else 0.0
    return -t if u > 0.0 else 0.0          # a subgradient of the hinge


cdef inline double _loss(int loss, double z, double t) noexcept nogil:
    """phi(z; t)."""
    cdef double u
    if loss == SQUARED:
        return 0.5 * (z - t) * (z - t)
    if loss == LOGISTIC:
        return _log1pexp(-t * z)
    u = 1.0 - t * z
    if u <= 0.0:
        return 0.0
    return u * u if loss == SQUARED_HINGE else u


cdef double _logistic_step(double u, double q, double C, double G) noexcept nogil:
    """The logit u' of the minimizer over alpha' = C sigmoid(u') of
    q/2 (alpha' - alpha)^2 + G (alpha' - alpha) + alpha' log alpha'
    + (C - alpha') log (C - alpha'), alpha = C sigmoid(u): the root of
    h(u') = u' + G + q C (sigmoid(u') - sigmoid(u)), increasing in u', by
    Newton's method from u kept inside a bracket of the root."""
    cdef double qC = q * C, base = G - qC * _sigmoid(u)
    # u' + q C sigmoid(u') lies in (u', u' + qC): the root is in [lo, hi]
    cdef double lo = -base - qC, hi = -base
    cdef double x = u, h, s, step
    cdef int it
    if x <= lo or x >= hi:
        x = 0.5 * (lo + hi)
    for it in range(100):
        s = _sigmoid(x)
        h = x + base + qC * s
        if h > 0.0:
            hi = x
        else:
            lo = x
        step = h / (1.0 + qC * s * (1.0 - s))
        if fabs(step) <= 1e-14 * (1.0 + fabs(x)) or hi - lo <= 1e-14 * (1.0 + fabs(x)):
            return x - step if lo <= x - step <= hi else x
        x -= step
        if not (lo < x < hi):
            x = 0.5 * (lo + hi)
    return x


cdef struct Work:
    Rows A
    int loss
    const double* t          # targets b_i or labels t_i
    const double* C          # sample weights s_i
    const double* inv_r      # 1 / r_j (one entry when uniform)
    const double* ridge      # r_j (one entry when uniform)
    bint uniform
    const double* q          # a_i^T R^{-1} a_i
    double* alpha            # alpha_i (the logit u_i for the logistic loss)
    double* w
    double* z                # scratch of m
    # an unpenalized coordinate (the intercept): margins a_i^T w + col0_i c
    bint has_c
    const double* col0
    double c
    double* off              # col0_i c
    double* zr               # scratch of m: a_i^T w
    # the rows are centered implicitly along col0: a_i - col0_i mu, with mu
    # the rows' weighted projection on col0, and w = u - gamma R^{-1} mu is
    # kept through u (in ``w``, updated on the row's support), gamma =
    # sum_i beta_i col0_i and nu = mu^T u, so that a step costs what the row
    # holds
    bint centered
    const double* mu
    const double* pc         # p_i = a_i^T R^{-1} mu
    double rho               # mu^T R^{-1} mu
    double gamma
    double nu
    double* wf               # scratch of n: w itself


cdef inline double _centered_dot(Work* k, Py_ssize_t i) noexcept nogil:
    """(a_i - col0_i mu)^T w for w = u - gamma R^{-1} mu (u in ``w``)."""
    cdef double a = k.col0[i]
    return _row_dot(&k.A, i, k.w) - k.gamma * k.pc[i] - a * (k.nu - k.gamma * k.rho)


cdef inline double _margin(Work* k, Py_ssize_t i) noexcept nogil:
    """a_i^T w (+ col0_i c with an unpenalized coordinate; rows centered)."""
    if k.centered:
        return _centered_dot(k, i) + k.off[i]
    if k.has_c:
        return _row_dot(&k.A, i, k.w) + k.off[i]
    return _row_dot(&k.A, i, k.w)


cdef inline void _move(Work* k, Py_ssize_t i, double d) noexcept nogil:
    """beta_i += d: w += d R^{-1} (a_i - col0_i mu)."""
    _row_axpy(&k.A, i, d, k.inv_r, k.uniform, k.w)
    if k.centered:
        k.nu += d * k.pc[i]
        k.gamma += d * k.col0[i]


cdef double* _materialize(Work* k) noexcept nogil:
    """w itself: ``w`` without centering, else u - gamma R^{-1} mu in ``wf``."""
    cdef Py_ssize_t j
    if not k.centered:
        return k.w
    for j in range(k.A.n):
        k.wf[j] = k.w[j] - k.gamma * k.mu[j] * (k.inv_r[0] if k.uniform else k.inv_r[j])
    return k.wf


cdef inline double _d2loss(int loss, double z, double t) noexcept nogil:
    """phi''(z; t) (a generalized one for the squared hinge, 0 for the hinge)."""
    cdef double p
    if loss == SQUARED:
        return 1.0
    if loss == LOGISTIC:
        p = _sigmoid(t * z)
        return p * (1.0 - p)
    if loss == SQUARED_HINGE:
        return 2.0 if 1.0 - t * z > 0.0 else 0.0
    return 0.0


cdef double _intercept_slope(Work* k, double c, double* curv) noexcept nogil:
    """d/dc sum_i s_i phi(zr_i + col0_i c), and the second derivative in ``curv``."""
    cdef Py_ssize_t i
    cdef double h = 0.0, hh = 0.0, s, a, z
    for i in range(k.A.m):
        s = k.C[i]
        a = k.col0[i]
        if s == 0.0 or a == 0.0:
            continue
        z = k.zr[i] + a * c
        h += s * a * _dloss(k.loss, z, k.t[i])
        hh += s * a * a * _d2loss(k.loss, z, k.t[i])
    curv[0] = hh
    return h


cdef void _intercept_step(Work* k) noexcept nogil:
    """Minimize over the unpenalized coordinate c with w fixed (margins in
    zr): its derivative is non-decreasing in c, so the root is bracketed,
    then found by Newton steps kept inside the bracket."""
    cdef double x = k.c, hx, hh, lo, hi, d, hl, xn
    cdef int it
    hx = _intercept_slope(k, x, &hh)
    if hx == 0.0 or not isfinite(hx):
        return
    d = 1.0 + fabs(x)
    if hx > 0.0:
        hi = x
        lo = x - d
        for it in range(200):
            if _intercept_slope(k, lo, &hl) <= 0.0:
                break
            hi = lo
            d *= 2.0
            lo = x - d
    else:
        lo = x
        hi = x + d
        for it in range(200):
            if _intercept_slope(k, hi, &hl) >= 0.0:
                break
            lo = hi
            d *= 2.0
            hi = x + d
    x = 0.5 * (lo + hi) if not (lo < x < hi) else x
    for it in range(200):
        hx = _intercept_slope(k, x, &hh)
        if hx == 0.0:
            break
        if hx > 0.0:
            hi = x
        else:
            lo = x
        xn = x - hx / hh if hh > 0.0 else 0.5 * (lo + hi)
        if not (lo < xn < hi):
            xn = 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * (1.0 + fabs(x)) or xn == x:
            x = xn
            break
        x = xn
    k.c = x
    for it in range(k.A.m):
        k.off[it] = k.col0[it] * x


cdef Py_ssize_t _all_live(Work* k, Py_ssize_t* active) noexcept nogil:
    """The samples of non-zero weight into ``active``; their count."""
    cdef Py_ssize_t i, n = 0
    for i in range(k.A.m):
        if k.C[i] != 0.0:
            active[n] = i
            n += 1
    return n


cdef double _measure(Work* k, const double* wv, double* size) noexcept nogil:
    """P - D at the current point: the duality gap, which bounds P - P*
    (for an unpenalized coordinate: with it fixed at its value, whose
    margins are read from ``zr``).  One product with the rows (none with an
    unpenalized coordinate, whose margins are given)."""
    cdef Py_ssize_t i, j, m = k.A.m, n = k.A.n
    cdef double zi, t, s, a, v, primal = 0.0, dual = 0.0, wRw = 0.0, r
    for i in range(m):
        s = k.C[i]
        if s == 0.0:
            continue
        t = k.t[i]
        zi = k.zr[i] + k.off[i] if k.has_c else _row_dot(&k.A, i, wv)
        primal += s * _loss(k.loss, zi, t)
        a = k.alpha[i]
        if k.loss == SQUARED:
            dual += a * t - 0.5 * a * a / s
        elif k.loss == LOGISTIC:
            # s [sigma log sigma + (1 - sigma) log(1 - sigma)], sigma = sigmoid(u)
            v = _sigmoid(a)
            dual -= s * (-v * _log1pexp(-a) - (1.0 - v) * _log1pexp(a))
        elif k.loss == HINGE:
            dual += a
        else:
            dual += a - 0.25 * a * a / s
        if k.has_c:
            dual -= _beta(k, i) * k.off[i]
    for j in range(n):
        r = k.ridge[0] if k.uniform else k.ridge[j]
        wRw += r * wv[j] * wv[j]
    size[0] = fabs(primal + 0.5 * wRw) + fabs(dual - 0.5 * wRw)
    size[1] = primal + 0.5 * wRw
    return (primal + 0.5 * wRw) - (dual - 0.5 * wRw)


cdef void _dual_intercept_step(Work* k) noexcept nogil:
    """For least squares with centered rows: maximize D along beta + delta
    col0, which leaves w unchanged (sum_i col0_i (a_i - col0_i mu) = 0).  It
    is the dual's flattest direction (curvature sum_i col0_i^2 / s_i, against
    up to 1 / s_i + q_i along a coordinate), which coordinate steps relax
    slowly after the intercept moves; here it is solved exactly, in closed
    form, in O(n_samples + n_features)."""
    cdef Py_ssize_t i, j
    cdef double num = 0.0, den = 0.0, a, s, delta, norm = 0.0
    for i in range(k.A.m):
        s = k.C[i]
        a = k.col0[i]
        if s == 0.0 or a == 0.0:
            continue
        num += a * (k.t[i] - k.off[i] - k.alpha[i] / s)
        den += a * a / s
        norm += a * a
    if not (den > 0.0):
        return
    delta = num / den
    for i in range(k.A.m):
        if k.C[i] != 0.0:
            k.alpha[i] += delta * k.col0[i]
    # u += delta R^{-1} sum_i col0_i a_i = delta |col0|^2 R^{-1} mu: w is unchanged
    for j in range(k.A.n):
        k.w[j] += delta * norm * k.mu[j] * (k.inv_r[0] if k.uniform else k.inv_r[j])
    k.nu += delta * norm * k.rho
    k.gamma += delta * norm


cdef double _optimality(Work* k, double* gap_out, double tol, double* size) noexcept nogil:
    """The stopping test's measure: the duality gap P - D (in ``gap_out``
    too), which bounds P - P*.

    With an unpenalized coordinate c the problem has two blocks: w, moved
    by the dual steps for c fixed, and c, minimized exactly here.  With the
    rows centered along c's column the blocks are decoupled (exactly for
    least squares) and c moves at every test: the dual's slowest direction
    is the one that c's error excites.  Without centering (a zero column),
    c moves when the decrease that promises, h_c^2 / (2 h_c'), is at least
    the gap of the w block or the gap is below tol.  The measure is the w
    block's gap plus c's promised decrease."""
    cdef Py_ssize_t i
    cdef double gap, gc, hc, promise
    cdef const double* wv = _materialize(k)
    if not k.has_c:
        gap = _measure(k, wv, size)
        gap_out[0] = gap
        return gap
    for i in range(k.A.m):
        if k.C[i] == 0.0:
            k.zr[i] = 0.0
        elif k.centered:
            k.zr[i] = _centered_dot(k, i)
        else:
            k.zr[i] = _row_dot(&k.A, i, k.w)
    gap = _measure(k, wv, size)
    gc = _intercept_slope(k, k.c, &hc)
    promise = gc * gc / (2.0 * hc) if hc > 0.0 else (0.0 if gc == 0.0 else INFINITY)
    if promise > 0.0 and (k.centered or promise >= gap or gap <= tol):
        _intercept_step(k)
        if k.centered and k.loss == SQUARED:
            _dual_intercept_step(k)
        gap = _measure(k, wv, size)
        gc = _intercept_slope(k, k.c, &hc)
        promise = gc * gc / (2.0 * hc) if hc > 0.0 else (0.0 if gc == 0.0 else INFINITY)
    gap_out[0] = gap
    return gap + promise


cdef inline double _violation(Work* k, Py_ssize_t i, double zi) noexcept nogil:
    """How far sample i is from its coordinate optimum (0 there)."""
    cdef double a = k.alpha[i], t = k.t[i], s = k.C[i], G
    if k.loss == SQUARED:
        return fabs(t - zi - a / s)
    if k.loss == LOGISTIC:
        return fabs(t * zi + a)
    G = t * zi - 1.0
    if k.loss == SQUARED_HINGE:
        G += 0.5 * a / s
        return fabs(G) if a > 0.0 else (-G if G < 0.0 else 0.0)
    if a <= 0.0:
        return -G if G < 0.0 else 0.0
    if a >= s:
        return G if G > 0.0 else 0.0
    return fabs(G)


cdef inline double _beta(Work* k, Py_ssize_t i) noexcept nogil:
    """The signed dual variable beta_i of sample i."""
    if k.loss == SQUARED:
        return k.alpha[i]
    if k.loss == LOGISTIC:
        return k.t[i] * k.C[i] * _sigmoid(k.alpha[i])
    return k.t[i] * k.alpha[i]


cdef double _dual_value(Work* k, const double* beta, const double* w) noexcept nogil:
    """D at the signed dual variables ``beta`` whose primal point is ``w``;
    -inf where beta is outside the dual's domain."""
    cdef Py_ssize_t i, j
    cdef double total = 0.0, a, s, p, wRw = 0.0, r
    for i in range(k.A.m):
        s = k.C[i]
        if s == 0.0:
            continue
        if k.loss == SQUARED:
            a = beta[i]
            total += a * k.t[i] - 0.5 * a * a / s
            continue
        a = k.t[i] * beta[i]
        if k.loss == LOGISTIC:
            p = a / s
            if not (0.0 < p < 1.0):
                return -INFINITY
            total -= s * (p * log(p) + (1.0 - p) * log1p(-p))
        elif k.loss == HINGE:
            if not (0.0 <= a <= s):
                return -INFINITY
            total += a
        else:
            if a < 0.0:
                return -INFINITY
            total += a - 0.25 * a * a / s
    for j in range(k.A.n):
        r = k.ridge[0] if k.uniform else k.ridge[j]
        wRw += r * w[j] * w[j]
    return total - 0.5 * wRw


cdef bint _solve_small(double* G, double* c, Py_ssize_t K) noexcept nogil:
    """Solve G c = c in place (G symmetric positive semi-definite, K x K) by
    Gaussian elimination with a relative shift; False when singular."""
    cdef Py_ssize_t a, b2, l
    cdef double piv, f, shift = 0.0
    for a in range(K):
        shift += G[a * K + a]
    shift *= 1e-10
    for a in range(K):
        G[a * K + a] += shift
    for a in range(K):
        piv = G[a * K + a]
        if not (piv > 0.0):
            return False
        for b2 in range(a + 1, K):
            f = G[b2 * K + a] / piv
            for l in range(a, K):
                G[b2 * K + l] -= f * G[a * K + l]
            c[b2] -= f * c[a]
    for a in range(K - 1, -1, -1):
        f = c[a]
        for l in range(a + 1, K):
            f -= G[a * K + l] * c[l]
        c[a] = f / G[a * K + a]
    return True


cdef bint _extrapolate(Work* k, Py_ssize_t K, double* B, double* Wh, double* G, double* c,
                       double* beta_e, double* w_e) noexcept nogil:
    """Anderson extrapolation from the K + 1 stored (beta, w) pairs (rows of
    B and Wh, the last one current): the combination sum_k c_k beta_(k+1)
    with sum c = 1 that minimizes ||sum_k c_k (beta_(k+1) - beta_k)||, taken
    when it raises the dual objective.  True when taken (alpha and w
    updated)."""
    cdef Py_ssize_t m = k.A.m, n = k.A.n, a, b2, i, j
    cdef double s, total, d_now, d_new, p
    for a in range(K):
        for b2 in range(a, K):
            s = 0.0
            for i in range(m):
                s += (B[(a + 1) * m + i] - B[a * m + i]) * (B[(b2 + 1) * m + i] - B[b2 * m + i])
            G[a * K + b2] = s
            G[b2 * K + a] = s
        c[a] = 1.0
    if not _solve_small(G, c, K):
        return False
    total = 0.0
    for a in range(K):
        total += c[a]
    if total == 0.0 or not isfinite(total):
        return False
    for a in range(K):
        c[a] /= total
    for i in range(m):
        s = 0.0
        for a in range(K):
            s += c[a] * B[(a + 1) * m + i]
        beta_e[i] = s
    for j in range(n):
        s = 0.0
        for a in range(K):
            s += c[a] * Wh[(a + 1) * n + j]
        w_e[j] = s
    d_now = _dual_value(k, &B[K * m], k.w)
    d_new = _dual_value(k, beta_e, w_e)
    if not (d_new > d_now):
        return False
    for i in range(m):
        if k.C[i] == 0.0:
            continue
        if k.loss == SQUARED:
            k.alpha[i] = beta_e[i]
        elif k.loss == LOGISTIC:
            p = k.t[i] * beta_e[i] / k.C[i]
            k.alpha[i] = log(p) - log1p(-p)
        else:
            k.alpha[i] = k.t[i] * beta_e[i]
    for j in range(n):
        k.w[j] = w_e[j]
    return True


def linear_dual(rows, const double[::1] target, const double[::1] sample_weight,
                const double[::1] ridge, str loss, double[::1] alpha, double[::1] w,
                double tol, long max_epochs, double max_time, str order, seed,
                bint shrinking=True, Py_ssize_t depth=0, intercept=None,
                bint relative=False, bint check=True):
    """Run dual coordinate ascent in place on ``alpha`` and ``w``.

    Parameters
    ----------
    rows : tuple
        ``("dense", X)`` with X a C-contiguous float64 array of shape (m, n),
        or ``("csr", indptr, indices, data, n)`` (int32 indices).
    target : (m,) targets b_i (squared) or labels t_i in {-1, +1}.
    sample_weight : (m,) s_i >= 0 (the box of the hinge duals).
    ridge : (n,) r_j > 0, or (1,) for a uniform ridge.
    loss : a key of ``LOSSES``.
    alpha : (m,) the dual variables (logits for the logistic loss); ``w``
        must equal R^{-1} A^T beta for them.
    tol : stopping tolerance (see the module docstring).
    max_epochs : passes over the samples.
    max_time : seconds, 0 for no limit.
    order : a key of ``ORDERS``: natural order, a fresh random permutation
        every pass, or the samples whose violation is within
        ``GREEDY_FRACTION`` of the largest, measured at the start of the pass.
    seed : two 64-bit integers seeding the permutations.
    shrinking : leave bound-held variables of the hinge losses out of passes.
    intercept : ``(col0, c0, mu)`` for one unpenalized coordinate c: its
        column (m,), left out of ``rows``, its starting value, and None or
        the rows' weighted projection on col0 (n,), by which they are
        centered implicitly, a_i - col0_i mu (the model is unchanged; c is
        shifted by mu^T w).  c is minimized exactly, with w fixed,
        at the stopping tests (a second block), and the test covers its
        derivative.
    relative : the test is gap <= tol * |P| (P at the tested point), not
        gap <= tol.
    check : False runs exactly ``max_epochs`` passes without a stopping
        test (a fixed amount of local work, as in the local subproblems of
        :mod:`bcd.distributed`, where ``ridge`` is the ridge divided by
        the aggregation parameter sigma' and the test's gap is not the
        problem's); an unpenalized coordinate then stays at its value.
        The returned optimality and gap are then inf.
    depth : Anderson extrapolation of the dual iterates over ``depth``
        passes (0: none); a proposal is taken when it raises the dual
        objective.  Not with shrinking, whose passes skip samples.

    Returns
    -------
    (status_name, epochs, optimality, gap, n_tests, c): ``gap`` is
    P - D at the last test, for c fixed at its value there; ``w`` holds the
    primal w on return.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}.")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}, got {order!r}.")
    cdef Work k
    cdef object keep_data = rows
    cdef const double[:, ::1] X
    cdef const int[::1] indptr, indices
    cdef const double[::1] data
    if rows[0] == "dense":
        X = rows[1]
        k.A.dense = True
        k.A.m = X.shape[0]
        k.A.n = X.shape[1]
        k.A.data = &X[0, 0] if X.shape[0] * X.shape[1] > 0 else NULL
        k.A.indptr = NULL
        k.A.indices = NULL
    else:
        indptr, indices, data = rows[1], rows[2], rows[3]
        k.A.dense = False
        k.A.m = indptr.shape[0] - 1
        k.A.n = rows[4]
        k.A.indptr = &indptr[0]
        k.A.indices = &indices[0] if indices.shape[0] else NULL
        k.A.data = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t m = k.A.m, n = k.A.n, i, j, pos, n_active, kk
    k.loss = LOSSES[loss]
    k.t = &target[0]
    k.C = &sample_weight[0]
    k.uniform = ridge.shape[0] == 1
    inv = 1.0 / np.asarray(ridge)
    cdef const double[::1] inv_r = inv
    k.inv_r = &inv_r[0]
    k.ridge = &ridge[0]
    # q_i = a_i^T R^{-1} a_i
    q_arr = np.zeros(m)
    cdef double[::1] q = q_arr
    z_arr = np.zeros(max(m, 1))
    cdef double[::1] zbuf = z_arr
    k.q = &q[0]
    k.alpha = &alpha[0]
    k.w = &w[0]
    k.z = &zbuf[0]
    k.has_c = intercept is not None
    k.centered = False
    k.c = 0.0
    k.gamma = 0.0
    k.nu = 0.0
    k.rho = 0.0
    off_arr = np.zeros(max(m, 1))
    zr_arr = np.zeros(max(m, 1))
    wf_arr = np.zeros(max(n, 1))
    pc_arr = np.zeros(max(m, 1))
    cdef double[::1] offv = off_arr, zrv = zr_arr, wfv = wf_arr, pcv = pc_arr
    cdef const double[::1] col0v, muv
    cdef double muw = 0.0
    k.off = &offv[0]
    k.zr = &zrv[0]
    k.wf = &wfv[0]
    k.pc = &pcv[0]
    k.col0 = NULL
    k.mu = NULL
    if k.has_c:
        col0, c0, mu = intercept
        col0v = np.ascontiguousarray(col0, dtype=np.float64)
        if col0v.shape[0] != m:
            raise ValueError("the intercept column must have one entry per sample.")
        k.col0 = &col0v[0] if m else NULL
        k.c = float(c0)
        if mu is not None:
            muv = np.ascontiguousarray(mu, dtype=np.float64)
            if muv.shape[0] != n:
                raise ValueError("mu must have one entry per feature.")
            k.centered = True
            k.mu = &muv[0]
            mu_r = np.asarray(mu) * inv
            pc_arr[:m] = _rows_times(rows, mu_r, m)
            k.rho = float(np.dot(mu, mu_r))
            # u holds R^{-1} A^T beta: gamma and nu from it
            k.gamma = float(np.dot(_beta_array(loss, np.asarray(alpha), np.asarray(target),
                                               np.asarray(sample_weight)), np.asarray(col0v)))
            k.nu = float(np.dot(mu, w))
            muw = float(np.dot(mu, np.asarray(w) - k.gamma * mu_r))
            k.c = k.c + muw                  # c' = c + mu^T w
        for i in range(m):
            offv[i] = col0v[i] * k.c
    rs = np.random.RandomState(seed)
    cdef unsigned long long s0 = int(rs.randint(0, 2**63, dtype=np.int64))
    cdef unsigned long long s1 = int(rs.randint(0, 2**63, dtype=np.int64))
    cdef RNG rng
    active_arr = np.arange(m, dtype=np.intp)
    cdef Py_ssize_t[::1] active = active_arr
    cdef bint greedy = order == "greedy", shuffle = order == "random"
    cdef bint shrink = shrinking and (k.loss == HINGE or k.loss == SQUARED_HINGE)
    if depth > 0 and shrink:
        raise ValueError("extrapolation (depth > 0) and shrinking exclude each other.")
    if depth > 0 and intercept is not None:
        raise ValueError("extrapolation (depth > 0) needs l2 > 0 on every coordinate.")
    cdef int status = MAX_ITER
    cdef long epoch = 0, next_test = 1, last_test_epoch = 0, n_tests = 0
    cdef double opt = INFINITY, last_opt = INFINITY, gap = INFINITY, rate, needed
    cdef double t0, t_signal, zi, a, a_new, s, t, G, qi, d, u, vmax, thresh
    cdef double PGmax_old = INFINITY, PGmin_old = -INFINITY, PGmax, PGmin, PG, qq
    cdef double viol2 = 0.0, viol = 0.0, scale = 0.0
    cdef double sizes[2]
    cdef double rel_tol = tol
    cdef Py_ssize_t work = 0
    # the violations predict the primal measure for the losses without
    # shrinking (whose violations collapse on the shrunk set)
    cdef bint predict = not shrink
    cdef Py_ssize_t K = depth if depth > 0 else 0, stored = 0
    hist_b = np.zeros((K + 1) * m if K else 1)
    hist_w = np.zeros((K + 1) * n if K else 1)
    gram_arr = np.zeros(K * K if K else 1)
    coef_arr = np.zeros(K if K else 1)
    be_arr = np.zeros(m if K else 1)
    we_arr = np.zeros(n if K else 1)
    cdef double[::1] HB = hist_b, HW = hist_w, GR = gram_arr, CO = coef_arr
    cdef double[::1] BE = be_arr, WE = we_arr
    cdef long accepted = 0
    cdef Py_ssize_t m_live
    cdef double shrink_tol = 0.1
    with nogil:
        rng_seed(&rng, s0, s1)
        for i in range(m):
            if k.C[i] == 0.0:
                q[i] = 0.0
                continue
            if k.A.dense:
                for j in range(n):
                    d = k.A.data[i * n + j]
                    q[i] += d * d * (k.inv_r[0] if k.uniform else k.inv_r[j])
            else:
                for kk in range(k.A.indptr[i], k.A.indptr[i + 1]):
                    d = k.A.data[kk]
                    q[i] += d * d * (k.inv_r[0] if k.uniform else k.inv_r[k.A.indices[kk]])
        if k.centered:
            for i in range(m):
                if k.C[i] != 0.0:
                    q[i] += k.col0[i] * (k.col0[i] * k.rho - 2.0 * k.pc[i])
        # samples with weight 0 never move
        n_active = _all_live(&k, &active[0])
        m_live = n_active
        t0 = _now()
        t_signal = t0
        while True:
            # -- stopping test ------------------------------------------------
            if check and epoch >= next_test:
                opt = _optimality(&k, &gap, tol, sizes)
                if relative:
                    tol = rel_tol * fabs(sizes[1])
                n_tests += 1
                # the gap against the squared violations of the pass before:
                # their ratio predicts when to test next
                scale = opt / (viol * viol) if viol > 0.0 else 0.0
                if not isfinite(opt) or not isfinite(gap):
                    status = DIVERGED
                    break
                if opt <= tol or opt <= _GAP_ROUNDING * sizes[0]:
                    # the test runs on every sample, shrunk or not
                    status = CONVERGED
                    break
                # space the tests by the observed linear rate (with a prediction
                # from the violations: at most MAX_SPACING passes apart)
                if shrink:
                    # the next test comes when the shrunk set converges or
                    # after SHRUNK_WORK passes' worth of updates
                    next_test = max_epochs + 1
                    work = 0
                elif predict:
                    next_test = epoch + MAX_SPACING
                elif epoch > last_test_epoch and last_opt < INFINITY and opt < last_opt \
                        and opt > 0.0:
                    rate = log(opt / last_opt) / (epoch - last_test_epoch)
                    needed = log(tol / opt) / rate
                    next_test = epoch + <long>min(max(ceil(0.8 * needed), 1.0), MAX_SPACING)
                else:
                    next_test = epoch + 1
                last_opt = opt
                last_test_epoch = epoch
            if epoch >= max_epochs:
                status = MAX_ITER
                break
            if max_time > 0.0 and _now() - t0 >= max_time:
                status = MAX_TIME
                break
            if _now() - t_signal >= SIGNAL_INTERVAL:
                t_signal = _now()
                if _interrupted():
                    status = INTERRUPTED
                    break
            # -- one pass -----------------------------------------------------
            thresh = -1.0
            viol2 = 0.0
            if greedy:
                vmax = 0.0
                for pos in range(n_active):
                    i = active[pos]
                    k.z[i] = _violation(&k, i, _margin(&k, i))
                    if k.z[i] > vmax:
                        vmax = k.z[i]
                thresh = GREEDY_FRACTION * vmax
            elif shuffle:
                for pos in range(n_active - 1, 0, -1):
                    j = rng_below(&rng, pos + 1)
                    i = active[pos]
                    active[pos] = active[j]
                    active[j] = i
            PGmax = -INFINITY
            PGmin = INFINITY
            pos = 0
            while pos < n_active:
                i = active[pos]
                if greedy and k.z[i] < thresh:
                    pos += 1
                    continue
                s = k.C[i]
                t = k.t[i]
                qi = q[i]
                a = k.alpha[i]
                zi = _margin(&k, i)
                d = 0.0
                if k.loss == SQUARED:
                    G = t - zi - a / s
                    viol2 += G * G
                    a_new = a + G / (qi + 1.0 / s)
                    d = a_new - a
                    k.alpha[i] = a_new
                elif k.loss == LOGISTIC:
                    G = t * zi + a
                    viol2 += G * G
                    u = _logistic_step(a, qi, s, t * zi)
                    d = t * s * (_sigmoid(u) - _sigmoid(a))
                    k.alpha[i] = u
                else:
                    G = t * zi - 1.0
                    qq = qi
                    if k.loss == SQUARED_HINGE:
                        G += 0.5 * a / s
                        qq = qi + 0.5 / s
                    PG = 0.0
                    if a <= 0.0:
                        if shrink and G > PGmax_old:
                            n_active -= 1
                            active[pos] = active[n_active]
                            active[n_active] = i
                            continue
                        if G < 0.0:
                            PG = G
                    elif k.loss == HINGE and a >= s:
                        if shrink and G < PGmin_old:
                            n_active -= 1
                            active[pos] = active[n_active]
                            active[n_active] = i
                            continue
                        if G > 0.0:
                            PG = G
                    else:
                        PG = G
                    viol2 += PG * PG
                    if PG > PGmax:
                        PGmax = PG
                    if PG < PGmin:
                        PGmin = PG
                    if PG != 0.0:
                        if qq > 0.0:
                            a_new = a - G / qq
                        else:
                            a_new = INFINITY if G < 0.0 else 0.0
                        if a_new < 0.0:
                            a_new = 0.0
                        if k.loss == HINGE and a_new > s:
                            a_new = s
                        k.alpha[i] = a_new
                        d = t * (a_new - a)
                if d != 0.0:
                    _move(&k, i, d)
                pos += 1
            epoch += 1
            work += n_active
            if shrink and work >= SHRUNK_WORK * m_live:
                next_test = epoch
            viol = sqrt(viol2)
            if predict and scale > 0.0 and scale * viol * viol <= tol:
                next_test = epoch          # the dual's violation predicts convergence
            if K:
                for i in range(m):
                    HB[stored * m + i] = _beta(&k, i)
                for j in range(n):
                    HW[stored * n + j] = k.w[j]
                stored += 1
                if stored == K + 1:
                    if _extrapolate(&k, K, &HB[0], &HW[0], &GR[0], &CO[0], &BE[0], &WE[0]):
                        accepted += 1
                    stored = 0
            if shrink:
                if n_active < m_live and (n_active == 0 or PGmax - PGmin <= shrink_tol):
                    # the shrunk set has converged: bring every sample back,
                    # and test
                    n_active = _all_live(&k, &active[0])
                    PGmax_old = INFINITY
                    PGmin_old = -INFINITY
                    next_test = epoch
                    shrink_tol *= 0.1
                else:
                    PGmax_old = PGmax if PGmax > 0.0 else INFINITY
                    PGmin_old = PGmin if PGmin < 0.0 else -INFINITY
    if k.centered:
        _materialize(&k)
        for j in range(n):
            w[j] = k.wf[j]
        muw = 0.0
        for j in range(n):
            muw += k.mu[j] * w[j]
        k.c -= muw
    return STATUS_NAMES[status], int(epoch), float(opt), float(gap), int(n_tests), float(k.c)


def _rows_times(rows, v, m):
    """A v for the rows of ``linear_dual``."""
    if rows[0] == "dense":
        return rows[1] @ v
    indptr, indices, data = rows[1], rows[2], rows[3]
    out = np.zeros(m)
    np.add.at(out, np.repeat(np.arange(m), np.diff(indptr)), data * v[indices])
    return out


def _beta_array(loss, alpha, target, weights):
    """The signed dual variables from the loops' state (NumPy)."""
    if loss == "squared":
        return alpha
    if loss == "logistic":
        return target * weights * np.exp(-np.logaddexp(0.0, -alpha))
    return target * alpha


def logistic_dual_value(const double[::1] u, const double[::1] C):
    """sum_i of the logistic dual's entropy term at the logits u:
    -C_i [sigma log sigma + (1 - sigma) log (1 - sigma)], sigma = sigmoid(u_i)."""
    cdef Py_ssize_t i
    cdef double s = 0.0, v
    for i in range(u.shape[0]):
        if C[i] != 0.0:
            v = _sigmoid(u[i])
            s += C[i] * (v * _log1pexp(-u[i]) + (1.0 - v) * _log1pexp(u[i]))
    return s
