# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A dense row partition's share of a distributed Newton round, compiled:
one pass over the rows by panels.

Each panel of rows is read from memory once, and while it is in cache the
pass computes its margins (one BLAS matrix-vector product), each row's
loss, first and second derivative and conjugate term, the panel's part of
the gradient (a second product) and of the Hessian (one BLAS rank-k update
of the panel scaled by the square roots of the curvatures).  Nothing of the
partition's size is allocated: in a Dask worker, whose allocator returns
every large block to the system, each such temporary would fault its pages
in again at every round.

The rows may lie at any byte offset (a chunk sent over the network lies in
the received message at whatever offset it had there): each panel of an
unaligned matrix is first copied to an aligned scratch panel, so that
neither BLAS nor the compiled loops ever read a misaligned double, and the
partition is never copied whole.
"""
import numpy as np

from libc.math cimport exp, log, log1p, sqrt
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemv, dsyrk

#: loss codes
LOSSES = {"squared": 0, "logistic": 1, "squared_hinge": 2}

#: the doubles of one panel of rows (64 KiB: below the allocator's mmap
#: threshold, so that the scratch comes from the heap rather than from fresh
#: pages at every round in a worker that returns freed memory at once)
PANEL = 8192


cdef inline double _xlogx(double q) noexcept nogil:
    return q * log(q) if q > 0.0 else 0.0


def newton_terms(str loss, const double[:, ::1] X, const double[::1] t, const double[::1] s,
                 const double[::1] w, double c, bint hessian, bint intercept):
    """The partition's pieces of a Newton round at ``(w, c)``, for a dense
    C-ordered ``X`` (m x d), targets or +-1 labels ``t`` and sample weights
    ``s >= 0``: ``(primal, grad, hess, curv_c, conj, sum_beta)``.

    ``primal`` is sum_i s_i phi(z_i) with z = X w + c; ``grad`` the gradient
    in (w, c) (length d + intercept) and ``hess`` the Hessian (or None
    without ``hessian``; the intercept's row and column included);
    ``curv_c`` = sum_i s_i phi''(z_i) (0 without ``intercept``); ``conj``
    the conjugate part of the dual at beta_i = -s_i phi'(z_i) (rows with
    s_i = 0 left out) and ``sum_beta`` = sum_i beta_i.  ``X`` need not be
    aligned (its panels are then read through an aligned copy).

    >>> import numpy as np
    >>> from bcd.distributed._newton_local import newton_terms
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0]]); t = np.array([1.0, 2.0])
    >>> primal, grad, hess, *_ = newton_terms("squared", X, t, np.ones(2), np.zeros(2), 0.0,
    ...                                       True, False)
    >>> float(primal), grad.tolist(), hess.tolist()
    (2.5, [-7.0, -10.0], [[10.0, 14.0], [14.0, 20.0]])
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {list(LOSSES)}, got {loss!r}.")
    cdef int code = LOSSES[loss]
    cdef Py_ssize_t m = X.shape[0], d = X.shape[1], n = d + (1 if intercept else 0)
    if t.shape[0] != m or s.shape[0] != m:
        raise ValueError(f"t and s must have {m} entries (the rows of X).")
    if w.shape[0] != d:
        raise ValueError(f"w must have {d} entries (the columns of X), got {w.shape[0]}.")
    grad = np.zeros(n)
    hess = np.zeros((n, n)) if hessian else None
    cdef double[::1] gv = grad
    cdef double[:, ::1] hv
    cdef double* H = NULL
    if hessian:
        hv = hess
        H = &hv[0, 0]
    cdef double primal = 0.0, conj = 0.0, sum_beta = 0.0, curv_c = 0.0
    cdef Py_ssize_t rows = PANEL // d if d > 0 else m
    if rows < 16:
        rows = 16
    if rows > m:
        rows = m
    cdef Py_ssize_t a, b, i, j
    cdef double zi, ti, si, r, u, e, p, g1, g2, q
    cdef double one = 1.0, zero = 0.0
    cdef int d_ = <int>d, b_, inc = 1, n_ = <int>n
    cdef char tr = b'T', nt = b'N', up = b'U'
    cdef double* z = NULL
    cdef double* v1 = NULL
    cdef double* v2 = NULL
    cdef double* Y = NULL
    cdef double* P = NULL                   # the aligned copy of an unaligned panel
    cdef double* Xa                         # the panel's rows as read
    cdef bint unaligned
    if m == 0 or d == 0:
        return primal, grad, hess, curv_c, conj, sum_beta
    unaligned = (<uintptr_t>&X[0, 0]) % sizeof(double) != 0
    z = <double*>malloc(3 * rows * sizeof(double))
    if hessian:
        Y = <double*>malloc(rows * d * sizeof(double))
    if unaligned:
        P = <double*>malloc(rows * d * sizeof(double))
    if z == NULL or (hessian and Y == NULL) or (unaligned and P == NULL):
        free(z)
        free(Y)
        free(P)
        raise MemoryError("no memory for a panel of the Newton round")
    v1 = z + rows
    v2 = v1 + rows
    with nogil:
        a = 0
        while a < m:
            b = rows if a + rows <= m else m - a
            b_ = <int>b
            if unaligned:
                memcpy(P, &X[a, 0], b * d * sizeof(double))
                Xa = P
            else:
                Xa = <double*>&X[a, 0]
            # z = X[a:a+b] w (the panel is d x b in column-major terms)
            dgemv(&tr, &d_, &b_, &one, Xa, &d_, <double*>&w[0], &inc, &zero, z, &inc)
            for i in range(b):
                zi = z[i] + c
                ti = t[a + i]
                si = s[a + i]
                if code == 0:
                    r = zi - ti
                    primal += si * (0.5 * r * r)
                    g1 = r
                    g2 = 1.0
                    q = -si * r                      # beta
                    if si > 0.0:
                        conj += q * ti - 0.5 * q * q / si
                elif code == 1:
                    u = ti * zi
                    # log(1 + exp(-u)) and p = sigmoid(-u), both stable
                    if u >= 0.0:
                        e = exp(-u)
                        primal += si * log1p(e)
                        p = e / (1.0 + e)
                    else:
                        e = exp(u)
                        primal += si * (log1p(e) - u)
                        p = 1.0 / (1.0 + e)
                    g1 = -ti * p
                    g2 = p * (1.0 - p)
                    if si > 0.0:
                        conj -= si * (_xlogx(p) + _xlogx(1.0 - p))
                else:
                    u = 1.0 - ti * zi
                    if u > 0.0:
                        primal += si * (u * u)
                        g1 = -2.0 * ti * u
                        g2 = 2.0
                        q = 2.0 * si * u
                        if si > 0.0:
                            conj += q - 0.25 * q * q / si
                    else:
                        g1 = 0.0
                        g2 = 0.0
                v1[i] = si * g1
                v2[i] = si * g2
                sum_beta -= v1[i]
                curv_c += v2[i]
            # grad[:d] += X[a:a+b].T (s g1)
            dgemv(&nt, &d_, &b_, &one, Xa, &d_, v1, &inc, &one, &gv[0], &inc)
            if intercept:
                for i in range(b):
                    gv[d] += v1[i]
            if hessian:
                # H[:d, :d] += Y.T Y with Y = sqrt(s g2) X[a:a+b]: the upper
                # triangle of the column-major n x n H (its lower triangle in
                # C order), filled in below
                for i in range(b):
                    e = sqrt(v2[i])
                    for j in range(d):
                        Y[i * d + j] = e * Xa[i * d + j]
                dsyrk(&up, &nt, &d_, &b_, &one, Y, &d_, &one, H, &n_)
                if intercept:
                    # H[:d, d] += X[a:a+b].T (s g2): row d of the C-ordered H
                    dgemv(&nt, &d_, &b_, &one, Xa, &d_, v2, &inc, &one, H + d * n, &inc)
            a += b
        if hessian:
            for i in range(d):
                for j in range(i):
                    H[j * n + i] = H[i * n + j]
            if intercept:
                for i in range(d):
                    H[i * n + d] = H[d * n + i]
                H[d * n + d] = curv_c
    free(z)
    free(Y)
    free(P)
    if not intercept:
        curv_c = 0.0
    return primal, grad, hess, curv_c, conj, sum_beta
