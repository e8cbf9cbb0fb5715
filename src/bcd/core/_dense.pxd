# Large dense symmetric positive definite matrices, factored in panels.

cdef enum:
    # columns per panel: large enough that the BLAS calls run near peak,
    # small enough that the LAPACK call on the diagonal block is a small
    # one.  At n = 6000 on 2 threads of a loaded 2-core AMD EPYC: 512
    # columns 4.3-5.4 s, 256 columns 6.7-7.7 s, SciPy's dpotrf 4.5-4.8 s
    # (the three alternated twice on one SPD matrix); on one thread 256 and
    # 512 both match dpotrf.
    PANEL_COLUMNS = 512

cdef int panel_cholesky(double* a, int n, int lda, int panel, double deadline,
                        const double* cancel, bint checks) except -3 nogil
