"""Large dense symmetric positive definite matrices, factored in panels.

The Cholesky factorization and the inverse from it are written as loops
over column panels of ``panel`` columns: every LAPACK call works on one
panel x panel diagonal block, and the work on the rest of the matrix goes
through level-3 BLAS (dsyrk, dgemm, dtrsm, dtrmm).  This is the blocked
algorithm of LAPACK's dpotrf/dtrtri/dlauum, run by this module instead of
the BLAS library's own threaded LAPACK routines, which fail on some
machines above a size (a segmentation fault in OpenBLAS's threaded dpotrf
at 20,000 rows).  It also gives a place to stop between panels: each panel
checks for Ctrl-C and for a deadline.

The matrices are Fortran-ordered float64 arrays, changed in place; only
their upper triangle is read and written (the strict lower triangle keeps
its entries, as ``scipy.linalg.lapack.dpotrf(..., clean=0)`` does).
"""
import numpy as np
from libc.math cimport INFINITY
from scipy.linalg.cython_blas cimport dgemm, dsyrk, dtrmm, dtrsm
from scipy.linalg.cython_lapack cimport dlauum, dpotrf, dtrtri

from bcd.core._clock cimport interrupted, now

#: columns per panel (see _dense.pxd)
PANEL = PANEL_COLUMNS

#: return codes besides 0 (success) and k > 0 (the leading minor of order k
#: is not positive definite), as in LAPACK's info
cdef enum:
    _INTERRUPTED = -1
    _TIMED_OUT = -2

INTERRUPTED = _INTERRUPTED
TIMED_OUT = _TIMED_OUT


cdef inline int _stop(double deadline, const double* cancel) except -3 nogil:
    if (cancel != NULL and cancel[0] != 0.0) or interrupted():
        return _INTERRUPTED
    if deadline < INFINITY and now() > deadline:
        return _TIMED_OUT
    return 0


cdef const double* _cancel_flag(cancel) except? NULL:
    """The address of ``cancel[0]`` (a float64 array another thread may set
    to non-zero to stop the work), or NULL."""
    cdef const double[::1] c
    if cancel is None:
        return NULL
    if not (isinstance(cancel, np.ndarray) and cancel.dtype == np.float64
            and cancel.ndim == 1 and cancel.shape[0] >= 1):
        raise ValueError("cancel must be None or a float64 array of length 1.")
    c = cancel
    return &c[0]


def _check(A, panel):
    if not (isinstance(A, np.ndarray) and A.dtype == np.float64 and A.ndim == 2
            and A.shape[0] == A.shape[1] and A.flags.f_contiguous and A.flags.writeable):
        raise ValueError("A must be a writeable, Fortran-ordered, square float64 array.")
    panel = int(panel)
    if panel < 1:
        raise ValueError(f"panel must be a positive integer, got {panel}.")
    return panel


def cholesky(A, panel=PANEL, double deadline=INFINITY, cancel=None):
    """Factor A = U^T U in place (upper triangle, left-looking by panels).

    Parameters
    ----------
    A : ndarray of shape (n, n), float64, Fortran-ordered
        The symmetric matrix; its upper triangle becomes U.
    panel : int, default=PANEL
        Columns per panel.
    deadline : float, default=inf
        A time of :func:`time.monotonic`'s clock after which the
        factorization stops.
    cancel : ndarray of shape (1,), float64, optional
        A flag that another thread sets to a non-zero value to stop the
        work (Ctrl-C reaches only the main thread).

    Returns
    -------
    info : int
        0 on success; k > 0 when the leading minor of order k is not
        positive definite; ``INTERRUPTED`` (-1) after Ctrl-C or
        ``TIMED_OUT`` (-2) past the deadline (both checked between panels).  A is then partly factored.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.core._dense import cholesky
    >>> A = np.asfortranarray([[4.0, 2.0], [2.0, 3.0]])
    >>> cholesky(A, panel=1)
    0
    >>> np.triu(A)
    array([[2.        , 1.        ],
           [0.        , 1.41421356]])
    """
    cdef Py_ssize_t nb = _check(A, panel)
    cdef double[::1, :] a = A
    cdef const double* flag = _cancel_flag(cancel)
    cdef int n = <int>a.shape[0], info = 0
    if n == 0:
        return 0
    with nogil:
        info = panel_cholesky(&a[0, 0], n, n, <int>nb, deadline, flag, True)
    return int(info)


cdef int panel_cholesky(double* a, int n, int lda, int panel, double deadline,
                        const double* cancel, bint checks) except -3 nogil:
    """Factor the column-major n x n matrix ``a`` (leading dimension
    ``lda``) as U^T U in place, by panels of ``panel`` columns: LAPACK's
    info (0, or k > 0 when the leading minor of order k is not positive
    definite).  With ``checks``, Ctrl-C, ``cancel[0] != 0`` and the
    ``deadline`` are looked at between panels (``INTERRUPTED``,
    ``TIMED_OUT``; -3 when a signal handler raised another exception).  A
    matrix of at most ``panel`` columns is one call of LAPACK's dpotrf,
    bitwise."""
    cdef int j = 0, jb, m, info = 0, code
    cdef Py_ssize_t ld = lda       # offsets past 2^31 entries
    cdef double one = 1.0, minus = -1.0
    cdef char U = b'U', T = b'T', N = b'N', L = b'L'
    while j < n:
        jb = min(panel, n - j)
        if j > 0:
            # A[J, J] -= A[:j, J].T @ A[:j, J]
            dsyrk(&U, &T, &jb, &j, &minus, &a[j * ld], &lda, &one, &a[j + j * ld], &lda)
        dpotrf(&U, &jb, &a[j + j * ld], &lda, &info)
        if info != 0:
            return info + j
        m = n - j - jb
        if m > 0:
            if j > 0:
                # A[J, j+jb:] -= A[:j, J].T @ A[:j, j+jb:]
                dgemm(&T, &N, &jb, &m, &j, &minus, &a[j * ld], &lda, &a[(j + jb) * ld],
                      &lda, &one, &a[j + (j + jb) * ld], &lda)
            # A[J, j+jb:] = solve(U[J, J].T, A[J, j+jb:])
            dtrsm(&L, &U, &T, &N, &jb, &m, &one, &a[j + j * ld], &lda,
                  &a[j + (j + jb) * ld], &lda)
        j += jb
        if checks and j < n:
            code = _stop(deadline, cancel)
            if code != 0:
                return code
    return 0


def inverse_from_cholesky(U, panel=PANEL, double deadline=INFINITY, cancel=None):
    """Overwrite the upper triangle of U (a Cholesky factor, A = U^T U) with
    that of A^-1, by panels (U^-1 in place, then U^-1 U^-T).

    Parameters
    ----------
    U : ndarray of shape (n, n), float64, Fortran-ordered
        The factor, as left by :func:`cholesky`.
    panel : int, default=PANEL
        Columns per panel.
    deadline : float, default=inf
        A time of :func:`time.monotonic`'s clock after which it stops.
    cancel : ndarray of shape (1,), float64, optional
        As for :func:`cholesky`.

    Returns
    -------
    info : int
        0 on success; k > 0 when U[k-1, k-1] is zero; ``INTERRUPTED`` or
        ``TIMED_OUT`` as for :func:`cholesky`.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.core._dense import cholesky, inverse_from_cholesky
    >>> A = np.asfortranarray([[4.0, 2.0], [2.0, 3.0]])
    >>> cholesky(A), inverse_from_cholesky(A, panel=1)
    (0, 0)
    >>> np.allclose(np.triu(A), np.triu(np.linalg.inv([[4.0, 2.0], [2.0, 3.0]])))
    True
    """
    cdef Py_ssize_t nb = _check(U, panel)
    cdef double[::1, :] a = U
    cdef const double* flag = _cancel_flag(cancel)
    cdef int n = <int>a.shape[0], lda = max(1, n), j, jb, m, info = 0, code = 0
    cdef double one = 1.0, minus = -1.0
    cdef char Uc = b'U', T = b'T', N = b'N', L = b'L', R = b'R'
    if n == 0:
        return 0
    with nogil:
        # U^-1, left-looking: the columns left of panel J are inverted
        j = 0
        while j < n:
            jb = min(<int>nb, n - j)
            if j > 0:
                # A[:j, J] = X[:j, :j] @ A[:j, J]    (X = U^-1 so far)
                dtrmm(&L, &Uc, &N, &N, &j, &jb, &one, &a[0, 0], &lda, &a[0, j], &lda)
                # A[:j, J] = -A[:j, J] @ inv(U[J, J])
                dtrsm(&R, &Uc, &N, &N, &j, &jb, &minus, &a[j, j], &lda, &a[0, j], &lda)
            dtrtri(&Uc, &N, &jb, &a[j, j], &lda, &info)
            if info != 0:
                info += j
                break
            j += jb
            code = _stop(deadline, flag)
            if code != 0:
                info = code
                break
        if info == 0:
            # X X^T by panels, top to bottom (each panel reads the rows below)
            j = 0
            while j < n:
                jb = min(<int>nb, n - j)
                m = n - j - jb
                if j > 0:
                    # A[:j, J] = A[:j, J] @ X[J, J].T
                    dtrmm(&R, &Uc, &T, &N, &j, &jb, &one, &a[j, j], &lda, &a[0, j], &lda)
                dlauum(&Uc, &jb, &a[j, j], &lda, &info)
                if m > 0:
                    if j > 0:
                        # A[:j, J] += A[:j, j+jb:] @ X[J, j+jb:].T
                        dgemm(&N, &T, &j, &jb, &m, &one, &a[0, j + jb], &lda, &a[j, j + jb],
                              &lda, &one, &a[0, j], &lda)
                    # A[J, J] += X[J, j+jb:] @ X[J, j+jb:].T
                    dsyrk(&Uc, &N, &jb, &m, &one, &a[j, j + jb], &lda, &one, &a[j, j], &lda)
                j += jb
                if j < n:
                    code = _stop(deadline, flag)
                    if code != 0:
                        info = code
                        break
    return int(info)
