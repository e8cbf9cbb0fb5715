"""Small dense symmetric linear algebra for block updates."""
import numpy as np
from libc.math cimport INFINITY, fabs, fmax, hypot, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_lapack cimport dsyevr, dpotrs, dsyev

from bcd.core._dense cimport PANEL_COLUMNS, panel_cholesky


cdef class CyBlockWork:

    def __init__(self, Py_ssize_t size):
        size = max(1, size)
        self.size = size
        self.mat = np.zeros(size * size)
        self.vecs = np.zeros(size * size)
        self.vals = np.zeros(size)
        self.tmp = np.zeros(size)
        self.work = np.zeros(max(26 * size, 3 * size) + 64)
        self.iwork = np.zeros(12 * size + 4, dtype=np.int32)


cdef double lambda_max(CyBlockWork w, const double* H, Py_ssize_t n) noexcept nogil:
    """Largest eigenvalue of the symmetric n x n matrix H (row-major)."""
    cdef int n_ = <int>n, il = n_, iu = n_, m_found = 0, info = 0, ldz = 1
    cdef int lwork = <int>(w.work.shape[0]), liwork = <int>(10 * n)
    cdef double vl = 0.0, vu = 0.0, abstol = 0.0
    cdef char jobz = b'N', rng = b'I', uplo = b'U'
    if n == 1:
        return H[0]
    memcpy(&w.mat[0], H, n * n * sizeof(double))
    # np.linalg.eigvalsh(H)[-1]
    dsyevr(&jobz, &rng, &uplo, &n_, &w.mat[0], &n_, &vl, &vu, &il, &iu, &abstol, &m_found,
           &w.vals[0], &w.vecs[0], &ldz, &w.iwork[10 * n], &w.work[0], &lwork,
           &w.iwork[0], &liwork, &info)
    if info != 0 or m_found < 1:
        return -1.0
    return w.vals[0]


cdef inline int _factor(double* H, int n, double deadline=INFINITY,
                        bint checks=False) noexcept nogil:
    """LAPACK's dpotrf of H ('U' of the column-major matrix: the lower
    triangle of a row-major one), by panels above ``PANEL_COLUMNS`` columns
    (bcd.core._dense): faster than a threaded dpotrf of the whole matrix on
    some machines and, on others, the way around its failure on large
    ones.  Bitwise one dpotrf call up to ``PANEL_COLUMNS``.  With
    ``checks``, Ctrl-C and ``deadline`` are looked at between panels
    (a negative result: ``_dense.INTERRUPTED``, ``_dense.TIMED_OUT``)."""
    return panel_cholesky(H, n, n, PANEL_COLUMNS, deadline, NULL, checks)


cdef int cholesky_solve_in_place(double* H, double* b, Py_ssize_t n, double deadline,
                                 bint checks) noexcept nogil:
    """Overwrite b with H^{-1} b through the Cholesky factor of H, factored
    in place (H is destroyed): 1, or 0 with b unchanged if H is not
    numerically positive definite.  The result is bitwise that of
    :func:`spd_solve`'s Cholesky path, without its copy of H: for callers
    that can form H again when it fails.  With ``checks`` the factorization
    stops between its panels after Ctrl-C or past ``deadline`` (a time of
    bcd.core._clock.now()): -1 or -2 (``_dense.INTERRUPTED``,
    ``_dense.TIMED_OUT``), b unchanged."""
    cdef int n_ = <int>n, info = 0, one = 1
    cdef char uplo = b'U'
    if n == 1:
        if H[0] > 0.0:
            b[0] /= H[0]
            return 1
        return 0
    info = _factor(H, n_, deadline, checks)
    if info < 0:
        return -1 if info != -2 else -2
    if info != 0:
        return 0
    dpotrs(&uplo, &n_, &one, H, &n_, b, &n_, &info)
    return 1 if info == 0 else 0


cdef int spd_solve(CyBlockWork w, const double* H, double* b, Py_ssize_t n) noexcept nogil:
    """Overwrite b with H^+ b for a symmetric positive semi-definite H.

    Cholesky first; if H is not numerically positive definite, an
    eigendecomposition gives the pseudo-inverse, ignoring eigenvalues below
    1e-12 times the largest.  Returns 0 (Cholesky), 1 (pseudo-inverse),
    -2 if H has an eigenvalue below -negative_pivot() times its largest in
    magnitude (H is indefinite) or -1 (another failure); b is unchanged on
    failure.
    """
    cdef int n_ = <int>n, info = 0, one = 1, lwork = <int>(w.work.shape[0])
    cdef char uplo = b'U', jobz = b'V'
    cdef Py_ssize_t i, j
    cdef double s, cutoff
    if n == 1:
        if H[0] > 0.0:
            b[0] /= H[0]
            return 0
        return -2 if H[0] < 0.0 else -1
    memcpy(&w.mat[0], H, n * n * sizeof(double))
    # np.linalg.solve(H, b) through the Cholesky factor
    info = _factor(&w.mat[0], n_)
    if info == 0:
        dpotrs(&uplo, &n_, &one, &w.mat[0], &n_, b, &n_, &info)
        if info == 0:
            return 0
    memcpy(&w.mat[0], H, n * n * sizeof(double))
    # vals, vecs = np.linalg.eigh(H)   (vecs column-major in mat)
    dsyev(&jobz, &uplo, &n_, &w.mat[0], &n_, &w.vals[0], &w.work[0], &lwork, &info)
    if info != 0:
        return -1
    if w.vals[0] < -negative_pivot() * fmax(fabs(w.vals[n - 1]), fabs(w.vals[0])):
        return -2
    if not w.vals[n - 1] > 0.0:
        return -1
    cutoff = 1e-12 * w.vals[n - 1]
    # b = V diag(1/vals) V^T b over eigenvalues above the cutoff
    for j in range(n):
        s = 0.0
        if w.vals[j] > cutoff:
            for i in range(n):
                s += w.mat[j * n + i] * b[i]
            s /= w.vals[j]
        w.tmp[j] = s
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += w.mat[j * n + i] * w.tmp[j]
        b[i] = s
    return 1


# ------------------------------------------------- an updated Cholesky factor
# H = R^T R with R upper triangular, stored row-major with leading dimension
# ld (R[a * ld + b], a <= b): it grows by a bordering and shrinks by Givens
# rotations in O(n^2), and stays a backward-stable factor of the current
# matrix however many times it is changed (an updated explicit inverse
# loses about cond(H) eps per change).

cdef bint chol_append(double* R, Py_ssize_t ld, Py_ssize_t n, double* h, double d,
                      double tiny) noexcept nogil:
    """Border the factor of the n x n matrix with the column (h, d).

    h (length n) is overwritten.  Returns False, with the leading n x n
    part of R unchanged, when the new pivot d - |R^-T h|^2 is not above
    tiny * d (the new column is numerically in the span of the others).
    """
    cdef Py_ssize_t a, c
    cdef double s, p = d
    for a in range(n):
        s = h[a] / R[a * ld + a]
        R[a * ld + n] = s
        p -= s * s
        for c in range(a + 1, n):
            h[c] -= R[a * ld + c] * s
    if not p > tiny * d:
        return False
    R[n * ld + n] = sqrt(p)
    return True


cdef void chol_remove(double* R, Py_ssize_t ld, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """Remove row and column k of the n x n matrix from its factor; those
    after k move up by one."""
    cdef Py_ssize_t a, c, cc
    cdef double x, y, r, cs, sn
    # drop column k of R: R^T R loses row and column k, R turns upper
    # Hessenberg from column k on
    for a in range(n):
        for c in range(max(a, k + 1), n):
            R[a * ld + c - 1] = R[a * ld + c]
    # rotate rows c, c + 1 to zero the subdiagonal (R[c + 1, c] > 0)
    for c in range(k, n - 1):
        x = R[c * ld + c]
        y = R[(c + 1) * ld + c]
        r = hypot(x, y)
        cs = x / r
        sn = y / r
        R[c * ld + c] = r
        for cc in range(c + 1, n - 1):
            x = R[c * ld + cc]
            y = R[(c + 1) * ld + cc]
            R[c * ld + cc] = cs * x + sn * y
            R[(c + 1) * ld + cc] = cs * y - sn * x


cdef void chol_solve(const double* R, Py_ssize_t ld, Py_ssize_t n, double* b) noexcept nogil:
    """Overwrite b with H^-1 b = R^-1 R^-T b."""
    cdef Py_ssize_t a, c
    cdef double s
    for a in range(n):
        b[a] /= R[a * ld + a]
        for c in range(a + 1, n):
            b[c] -= R[a * ld + c] * b[a]
    for a in range(n - 1, -1, -1):
        s = b[a]
        for c in range(a + 1, n):
            s -= R[a * ld + c] * b[c]
        b[a] = s / R[a * ld + a]
