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
from cython.parallel cimport prange, parallel
from libc.math cimport sqrt, hypot
from libc.stdlib cimport malloc, free

cdef enum:
    ROWS = 256          # rows of L rotated together by one thread


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
    cdef int nt = n_threads if n * (mcur - p) >= 65536 else 1
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
    cdef int nt = n_threads if n * k >= 65536 else 1
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
