"""Compiled loops of the sparse GP's inducing-point swaps.

The partial Cholesky factor L (n x m, column-major, columns in pivot order)
is lower trapezoidal: the row of the q-th inducing point is zero beyond
column q.  Moving the pivot at position p to the last position keeps that
structure by a sequence of 2 x 2 reflections of neighbouring columns
(p, p+1), (p+1, p+2), ...: L <- L G with G orthogonal, so that L L^T (the
Nystrom approximation) is unchanged and the last column becomes the
Cholesky column of the moved point as if it had been added last.  The
reflections are found from the m x m block of inducing rows (O(m^2)),
applied to all n rows in one pass over the columns p..m-1 (O(n (m - p))),
and to the triangular factor R of the QR of [L; noise^(1/2) I], which is
re-triangularised by Givens rotations from the left (O(m^2)).
"""
import numpy as np
cimport cython
from cython.parallel cimport prange, parallel, threadid
from libc.math cimport sqrt, hypot, log
from libc.stdlib cimport malloc, free

from bcd.gp._kernel import ISA_NAMES, kernel_isa

cdef extern from "_vexp.h" nogil:
    cdef struct bcd_kernel_loops:
        double (*dot)(const double* a, const double* b, Py_ssize_t n) noexcept nogil
    const bcd_kernel_loops* bcd_kl
    int bcd_kernel_loops_select(int isa)

# the same instruction-set path as the kernels (this module has its own
# copy of the loops)
bcd_kernel_loops_select(ISA_NAMES.index(kernel_isa()))

cdef enum:
    ROWS = 256          # rows of L rotated together by one thread
    # element operations below which a loop runs on one thread: waking
    # the other threads can cost milliseconds on a busy machine
    PARALLEL_WORK = 1 << 22


def rotation_coefficients(const double[::1, :] L, const int[::1] piv, Py_ssize_t p,
                          Py_ssize_t mcur):
    """Coefficients ``(c, s)`` of the reflections moving pivot ``p`` to
    position ``mcur - 1``: reflection k (columns p + k, p + k + 1) maps the
    carried column x and the next column y to ``c x + s y`` (kept at p + k)
    and ``s x - c y`` (carried on)."""
    cdef Py_ssize_t w = mcur - p, q, k
    c_arr = np.empty(max(w - 1, 0))
    s_arr = np.empty(max(w - 1, 0))
    cdef double[::1] c = c_arr
    cdef double[::1] s = s_arr
    cdef double[::1] carry = np.empty(max(w, 1))
    cdef double a, b, r, x, y
    if w <= 1:
        return c_arr, s_arr
    for q in range(w):
        carry[q] = L[piv[p + q], p]
    for k in range(w - 1):
        a = carry[k + 1]
        b = L[piv[p + k + 1], p + k + 1]
        r = hypot(a, b)
        if r == 0.0:
            c[k] = 0.0
            s[k] = 1.0
        else:
            c[k] = a / r
            s[k] = b / r
        for q in range(k + 2, w):
            x = carry[q]
            y = L[piv[p + q], p + k + 1]
            carry[q] = s[k] * x - c[k] * y
    return c_arr, s_arr


@cython.boundscheck(False)
@cython.wraparound(False)
def rotate_columns(double[::1, :] L, Py_ssize_t p, Py_ssize_t mcur, const double[::1] c,
                   const double[::1] s, int n_threads=1):
    """Apply the reflections to the columns p..mcur-1 of L (all rows), one
    pass over them; tiles of rows run in parallel."""
    cdef Py_ssize_t n = L.shape[0], n_tiles = (n + ROWS - 1) // ROWS
    cdef Py_ssize_t t, i, i0, i1, k
    cdef double* carry
    cdef double x, y, ck, sk
    if mcur - p <= 1 or n == 0:
        return
    cdef int nt = n_threads if n * (mcur - p) >= PARALLEL_WORK else 1
    with nogil, parallel(num_threads=nt):
        carry = <double*>malloc(ROWS * sizeof(double))
        for t in prange(n_tiles, schedule="static"):
            i0 = t * ROWS
            i1 = min(i0 + ROWS, n)
            for i in range(i1 - i0):
                carry[i] = L[i0 + i, p]
            for k in range(p, mcur - 1):
                ck = c[k - p]
                sk = s[k - p]
                for i in range(i1 - i0):
                    x = carry[i]
                    y = L[i0 + i, k + 1]
                    L[i0 + i, k] = ck * x + sk * y
                    carry[i] = sk * x - ck * y
            for i in range(i1 - i0):
                L[i0 + i, mcur - 1] = carry[i]
        free(carry)


def rotate_rows(double[:, ::1] T, Py_ssize_t p, Py_ssize_t mcur, const double[::1] c,
                const double[::1] s):
    """The same reflections on the rows p..mcur-1 of T (e.g. L^T E, L^T y):
    the transpose of the column operation, T <- G^T T."""
    cdef Py_ssize_t z = T.shape[1], j, k
    cdef double x, y
    cdef double[::1] carry = np.empty(max(z, 1))
    if mcur - p <= 1:
        return
    for j in range(z):
        carry[j] = T[p, j]
    for k in range(p, mcur - 1):
        for j in range(z):
            x = carry[j]
            y = T[k + 1, j]
            T[k, j] = c[k - p] * x + s[k - p] * y
            carry[j] = s[k - p] * x - c[k - p] * y
    for j in range(z):
        T[mcur - 1, j] = carry[j]


def rotate_triangular(double[:, ::1] R, Py_ssize_t p, Py_ssize_t mcur, const double[::1] c,
                      const double[::1] s):
    """R <- Q^T R G for the reflections G and Givens rotations Q^T that keep
    the leading mcur x mcur block of R upper triangular with a positive
    diagonal, so that R^T R = G^T (R^T R) G."""
    cdef Py_ssize_t k, r, j
    cdef double x, y, a, b, h, cg, sg
    for k in range(p, mcur - 1):
        for r in range(k + 2):
            x = R[r, k]
            y = R[r, k + 1]
            R[r, k] = c[k - p] * x + s[k - p] * y
            R[r, k + 1] = s[k - p] * x - c[k - p] * y
        a = R[k, k]
        b = R[k + 1, k]
        h = hypot(a, b)
        if h != 0.0:
            cg = a / h
            sg = b / h
            for j in range(k + 1, mcur):
                x = R[k, j]
                y = R[k + 1, j]
                R[k, j] = cg * x + sg * y
                R[k + 1, j] = cg * y - sg * x
            R[k, k] = h
        R[k + 1, k] = 0.0
        if R[k + 1, k + 1] < 0.0:
            for j in range(k + 1, mcur):
                R[k + 1, j] = -R[k + 1, j]
    if mcur > 0 and R[mcur - 1, mcur - 1] < 0.0:
        R[mcur - 1, mcur - 1] = -R[mcur - 1, mcur - 1]


@cython.boundscheck(False)
@cython.wraparound(False)
def row_sqnorms(const double[::1, :] L, Py_ssize_t k, double[::1] out, int n_threads=1):
    """out[i] = sum_{q < k} L[i, q]^2 (tiles of rows in parallel)."""
    cdef Py_ssize_t n = L.shape[0], n_tiles = (n + ROWS - 1) // ROWS
    cdef Py_ssize_t t, i, i0, i1, q
    cdef double v
    cdef int nt = n_threads if n * k >= PARALLEL_WORK else 1
    if n == 0:
        return
    for t in prange(n_tiles, nogil=True, schedule="static", num_threads=nt):
        i0 = t * ROWS
        i1 = min(i0 + ROWS, n)
        for i in range(i0, i1):
            out[i] = 0.0
        for q in range(k):
            for i in range(i0, i1):
                v = L[i, q]
                out[i] += v * v


def zero_upper(double[::1, :] L, const int[::1] piv, Py_ssize_t p, Py_ssize_t mcur):
    """Exact zeros beyond the diagonal in the pivot rows at positions
    p..mcur-1 (the lower trapezoidal structure)."""
    cdef Py_ssize_t q, j
    for q in range(p, mcur):
        for j in range(q + 1, mcur):
            L[piv[q], j] = 0.0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void _tile_product(const double[::1, :] L, Py_ssize_t i0, Py_ssize_t w,
                               Py_ssize_t k, const double* v, double* acc) noexcept nogil:
    """acc[:w] = L[i0:i0 + w, :k] v, column by column (each vectorized over
    the rows of the tile)."""
    cdef Py_ssize_t i, q
    cdef double vq
    for i in range(w):
        acc[i] = 0.0
    for q in range(k):
        vq = v[q]
        for i in range(w):
            acc[i] += L[i0 + i, q] * vq


@cython.boundscheck(False)
@cython.wraparound(False)
def lmul(const double[::1, :] L, Py_ssize_t k, const double[::1] v, double[::1] out,
         double alpha=1.0, int n_threads=1):
    """out[i] += alpha * sum_{q < k} L[i, q] v[q]: one pass over L[:, :k],
    tiles of rows in parallel."""
    cdef Py_ssize_t n = L.shape[0], n_tiles = (n + ROWS - 1) // ROWS
    cdef Py_ssize_t t, i, i0, i1
    cdef double* acc
    cdef int nt = n_threads if n * k >= PARALLEL_WORK else 1
    if n == 0 or k == 0:
        return
    with nogil, parallel(num_threads=nt):
        acc = <double*>malloc(ROWS * sizeof(double))
        for t in prange(n_tiles, schedule="static"):
            i0 = t * ROWS
            i1 = min(i0 + ROWS, n)
            _tile_product(L, i0, i1 - i0, k, &v[0], acc)
            for i in range(i1 - i0):
                out[i0 + i] += alpha * acc[i]
        free(acc)


@cython.boundscheck(False)
@cython.wraparound(False)
def ltmul(const double[::1, :] L, Py_ssize_t k, const double[::1] x, double[::1] out,
          int n_threads=1):
    """out[q] = sum_i L[i, q] x[i] for q < k: one pass over L[:, :k],
    columns in parallel."""
    cdef Py_ssize_t n = L.shape[0], i, q
    cdef double s
    cdef int nt = n_threads if n * k >= PARALLEL_WORK else 1
    for q in prange(k, nogil=True, schedule="static", num_threads=nt):
        out[q] = bcd_kl.dot(&L[0, q], &x[0], n)


@cython.boundscheck(False)
@cython.wraparound(False)
def rank_one_columns(double[::1, :] E, Py_ssize_t z, const double[::1] col,
                     const double[::1] cj, double sign, int n_threads=1):
    """E[:, a] += sign * col * cj[a] for a < z."""
    cdef Py_ssize_t n = E.shape[0], i, a
    cdef double w
    cdef int nt = n_threads if n * z >= PARALLEL_WORK else 1
    for a in prange(z, nogil=True, schedule="static", num_threads=nt):
        w = sign * cj[a]
        for i in range(n):
            E[i, a] += w * col[i]


def solve_upper(const double[:, ::1] R, Py_ssize_t k, double[::1] b, bint trans):
    """b <- R^{-1} b (or R^{-T} b) for the leading k x k block of the upper
    triangular R, in place."""
    cdef Py_ssize_t i, j
    cdef double s
    if trans:
        for i in range(k):
            s = b[i]
            for j in range(i):
                s -= R[j, i] * b[j]
            b[i] = s / R[i, i]
    else:
        for i in range(k - 1, -1, -1):
            s = b[i]
            for j in range(i + 1, k):
                s -= R[i, j] * b[j]
            b[i] = s / R[i, i]


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def best_candidate(const double[::1, :] E, const int[::1] sel, const double[:, ::1] Ci,
                   const double[:, ::1] G, const double[:, ::1] H, const double[::1] h,
                   const double[::1] dres, const unsigned char[::1] exclude, double thr,
                   double tiny, double s, double nu, int n_threads=1):
    """The row j maximising the approximate decrease of the objective
    0.5 (a^2 / (delta s rho^2) + log s - log rho^2 + nu b / s), with u =
    Ci e_j (e_j the selected entries of row j of E), delta = u'u, b =
    u'Gu / delta, rho^2 = s + b - u'Hu / delta and a = h'u; rows with dres
    <= thr, excluded, or delta <= tiny are skipped.  Returns (j, value) or
    (-1, -inf)."""
    cdef Py_ssize_t n = E.shape[0], z = sel.shape[0], i, a, b_, t, tid
    cdef int nt = n_threads if n * z * z >= PARALLEL_WORK else 1
    cdef double logs = log(s)
    best_i = np.full(nt, -1, dtype=np.intp)
    best_v = np.full(nt, -np.inf)
    cdef Py_ssize_t[::1] bi = best_i
    cdef double[::1] bv = best_v
    cdef double* e
    cdef double* u
    cdef double delta, q1, q2, av, gu, hu, bb, rho2, val
    if z == 0 or n == 0:
        return -1, -np.inf
    with nogil, parallel(num_threads=nt):
        e = <double*>malloc(2 * z * sizeof(double))
        u = e + z
        for i in prange(n, schedule="static"):
            if dres[i] <= thr or exclude[i]:
                continue
            for a in range(z):
                e[a] = E[i, sel[a]]
            delta = 0.0
            for a in range(z):
                gu = 0.0
                for b_ in range(a + 1):
                    gu = gu + Ci[a, b_] * e[b_]
                u[a] = gu
                delta = delta + gu * gu
            if delta <= tiny:
                continue
            q1 = 0.0
            q2 = 0.0
            av = 0.0
            for a in range(z):
                gu = 0.0
                hu = 0.0
                for b_ in range(z):
                    gu = gu + G[a, b_] * u[b_]
                    hu = hu + H[a, b_] * u[b_]
                q1 = q1 + gu * u[a]
                q2 = q2 + hu * u[a]
                av = av + h[a] * u[a]
            bb = q1 / delta
            rho2 = s + bb - q2 / delta
            if rho2 < s:
                rho2 = s
            val = 0.5 * (av * av / (delta * s * rho2) + logs - log(rho2) + nu * bb / s)
            tid = threadid()
            if val > bv[tid]:
                bv[tid] = val
                bi[tid] = i
        free(e)
    t = int(np.argmax(best_v))
    return int(best_i[t]), float(best_v[t])


def solve_upper_many(const double[:, ::1] R, Py_ssize_t k, double[:, ::1] B, bint trans):
    """B <- R^{-1} B (or R^{-T} B) for the leading k x k block of the upper
    triangular R and a C-ordered (k, q) B, in place (the inner loops run
    over the q right-hand sides)."""
    cdef Py_ssize_t q = B.shape[1], i, j, c
    cdef double r, inv
    if trans:
        for i in range(k):
            for j in range(i):
                r = R[j, i]
                if r != 0.0:
                    for c in range(q):
                        B[i, c] -= r * B[j, c]
            inv = 1.0 / R[i, i]
            for c in range(q):
                B[i, c] *= inv
    else:
        for i in range(k - 1, -1, -1):
            for j in range(i + 1, k):
                r = R[i, j]
                if r != 0.0:
                    for c in range(q):
                        B[i, c] -= r * B[j, c]
            inv = 1.0 / R[i, i]
            for c in range(q):
                B[i, c] *= inv


def upper_tmul(const double[:, ::1] R, Py_ssize_t k, const double[::1] x, double[::1] out):
    """out = R[:k, :k]^T x for the upper triangular R."""
    cdef Py_ssize_t i, j
    cdef double s
    for i in range(k):
        s = 0.0
        for j in range(i + 1):
            s += R[j, i] * x[j]
        out[i] = s


@cython.boundscheck(False)
@cython.wraparound(False)
def column_and_projection(const double[::1, :] L, Py_ssize_t k, const double[::1] lj,
                          double[::1] col, double scale, double[::1] w, int n_threads=1):
    """col <- (col - L[:, :k] lj) * scale and w = L[:, :k]^T col, in one pass
    over L: each tile of rows is read twice while it is in cache."""
    cdef Py_ssize_t n = L.shape[0], n_tiles = (n + ROWS - 1) // ROWS
    cdef Py_ssize_t t, i, i0, i1, q, r, tid
    cdef double* acc
    cdef double* wl
    cdef int nt = n_threads if n * k >= PARALLEL_WORK else 1
    part = np.zeros((nt, max(k, 1)))
    cdef double[:, ::1] pv = part
    if n == 0:
        return
    with nogil, parallel(num_threads=nt):
        acc = <double*>malloc(ROWS * sizeof(double))
        wl = <double*>malloc(max(k, 1) * sizeof(double))
        for r in range(k):
            wl[r] = 0.0
        for t in prange(n_tiles, schedule="static"):
            i0 = t * ROWS
            i1 = min(i0 + ROWS, n)
            _tile_product(L, i0, i1 - i0, k, &lj[0], acc)
            for i in range(i1 - i0):
                col[i0 + i] = (col[i0 + i] - acc[i]) * scale
            for q in range(k):
                wl[q] += bcd_kl.dot(&L[i0, q], &col[i0], i1 - i0)
        tid = threadid()
        for r in range(k):
            pv[tid, r] = wl[r]
        free(acc)
        free(wl)
    np.asarray(w)[:k] = part[:, :k].sum(axis=0)
