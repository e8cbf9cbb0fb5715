# The per-sample loops of the multinomial dual (_mnl_dual.h), shared by the
# in-memory solver (_dual_multinomial.pyx) and the local solver of
# multinomial CoCoA+ (bcd/distributed/_mnl_local.pyx).

cdef extern from "_mnl_dual.h" nogil:
    int BCD_MNL_MAX_IT
    const double BCD_MNL_TMIN
    Py_ssize_t BCD_MNL_WORK(Py_ssize_t K)
    struct bcd_mnl_data:
        Py_ssize_t K
        const int* indptr
        const int* indices
        const double* data
        double* W
        double* P
        double* T
        const double* Q
        const double* inv_r
        int per_feature
        double* work
    struct bcd_mnl_ops:
        int (*visit)(const bcd_mnl_data* s, Py_ssize_t i, double si,
                     double* change) noexcept nogil
        double (*apply)(const bcd_mnl_data* s, Py_ssize_t i, double si) noexcept nogil
        void (*gather)(const bcd_mnl_data* s, Py_ssize_t i, double* z) noexcept nogil
        void (*scatter)(const bcd_mnl_data* s, Py_ssize_t i, double scale, const double* v,
                        double* out, int ridge_scaled) noexcept nogil
        double (*check_row)(Py_ssize_t K, const double* z, const double* p, const double* t,
                            int y, double* u, double* viol) noexcept nogil
        int (*solve)(Py_ssize_t K, const double* z, const double* b, const double* pold,
                     const double* told, double* p, double* t, double* work,
                     double* G) noexcept nogil
    const bcd_mnl_ops* bcd_mnl
    int bcd_isa_available(int isa)
    int bcd_isa_best()
    int bcd_mnl_select(int isa)
