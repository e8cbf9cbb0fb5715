/*
 * The per-sample work of the multinomial dual solver (_dual_multinomial.pyx):
 * gathering z = a_i' W, the sub-problem
 *
 *     min_{p in simplex} sum_k p_k log p_k - z'(p - p_old)
 *                        + 1/2 sum_k b_k (p_k - p_old_k)^2
 *
 * and the update of W.  The sub-problem's optimality conditions are, with
 * t = log p and a multiplier mu,
 *
 *     F_k + mu = 0,  F_k = t_k + b_k (e^{t_k} - p_old_k) - z_k,
 *     sum_k e^{t_k} = 1,
 *
 * solved by Newton's method on (t, mu): with h_k = 1 + b_k p_k the step is
 * dt_k = -(F_k + mu) / h_k, mu chosen so that sum_k p_k dt_k = -(sum p - 1).
 *
 * The loops over the classes are straight-line arithmetic (the exponential
 * of ../gp/_vexp.h, selections for the clamps), vectorized as written with
 * OpenMP's simd directive where the compiler has it.  They are compiled
 * once per instruction set, as the GP kernels' loops are: "generic" (the
 * compiler's baseline, SSE2 on x86-64), and on x86-64 with GCC >= 12 also
 * "avx2" (x86-64-v3) and "avx512" (x86-64-v4); bcd_mnl_select picks one.
 */
#ifndef BCD_MNL_DUAL_H
#define BCD_MNL_DUAL_H

#include <math.h>
#include <stddef.h>
#include "_vexp.h"

/* log p is kept in [BCD_MNL_TMIN, 0]: p >= e^-700 ~ 1e-304 is never zero (nor
   subnormal) and never exceeds one */
#define BCD_MNL_TMIN (-700.0)
/* converged once a step moves no log-probability by more than this beyond the
   rounding of its residual (the quadratic convergence then leaves ~1e-18) */
#define BCD_MNL_TOL 1e-9
/* a bound on the relative rounding of a residual F_k + mu (a few terms) */
#define BCD_MNL_ROUNDING (8.0 * 2.220446049250313e-16)
#define BCD_MNL_MAX_IT 30
/* a first step over FAR_STEP in some log p_k restarts from the projection
   start */
#define BCD_MNL_FAR_STEP 3.0
/* the scratch of a visit: 10 K doubles */
#define BCD_MNL_WORK(K) (10 * (K))

#if defined(_OPENMP) || defined(BCD_MNL_OPENMP_SIMD)
#define BCD_MNL_PRAGMA(x) _Pragma(#x)
#define BCD_MNL_SIMD BCD_MNL_PRAGMA(omp simd)
#define BCD_MNL_SIMD_MAX(m) BCD_MNL_PRAGMA(omp simd reduction(max:m))
#define BCD_MNL_SIMD_SUM(a) BCD_MNL_PRAGMA(omp simd reduction(+:a))
#define BCD_MNL_SIMD_SUM2(a, b) BCD_MNL_PRAGMA(omp simd reduction(+:a, b))
#define BCD_MNL_SIMD_REDUCE \
    BCD_MNL_PRAGMA(omp simd reduction(+:g, sw, swf) reduction(max:m) reduction(|:nan))
#else
#define BCD_MNL_SIMD
#define BCD_MNL_SIMD_MAX(m)
#define BCD_MNL_SIMD_SUM(a)
#define BCD_MNL_SIMD_SUM2(a, b)
#define BCD_MNL_SIMD_REDUCE
#endif

struct bcd_mnl_sums {
    double G;       /* sum_k p_k - 1 */
    double Sw;      /* sum_k p_k / h_k */
    double SwF;     /* sum_k p_k F_k / h_k */
    double dmax;    /* max_k |dt_k| of the last step (NaN propagates) */
};

/* The arrays of a solve: A's rows in CSR form, W (d x K), the probabilities
   P and their logs T (n x K), q_ik = sum_j a_ij^2 / r_jk (n x K), and the
   inverse ridge weights (d x K, or d when per_feature). */
struct bcd_mnl_data {
    ptrdiff_t K;
    const int *indptr;
    const int *indices;
    const double *data;
    double *W;
    double *P;
    double *T;
    const double *Q;
    const double *inv_r;
    int per_feature;
    double *work;   /* BCD_MNL_WORK(K) doubles */
};

struct bcd_mnl_ops {
    int (*visit)(const struct bcd_mnl_data *s, ptrdiff_t i, double si, double *change);
    double (*apply)(const struct bcd_mnl_data *s, ptrdiff_t i, double si);
    void (*gather)(const struct bcd_mnl_data *s, ptrdiff_t i, double *z);
    void (*scatter)(const struct bcd_mnl_data *s, ptrdiff_t i, double scale, const double *v,
                    double *out, int ridge_scaled);
    double (*check_row)(ptrdiff_t K, const double *z, const double *p, const double *t, int y,
                        double *u, double *viol);
    int (*solve)(ptrdiff_t K, const double *z, const double *b, const double *pold,
                 const double *told, double *p, double *t, double *work, double *G);
};

#define BCD_MNL_SFX(name) bcd_mnl_##name##_generic
#define BCD_MNL_TARGET
#include "_mnl_loops.h"
#undef BCD_MNL_SFX
#undef BCD_MNL_TARGET

#if BCD_HAVE_ISA_COPIES
#define BCD_MNL_SFX(name) bcd_mnl_##name##_avx2
#define BCD_MNL_TARGET __attribute__((target("arch=x86-64-v3")))
#include "_mnl_loops.h"
#undef BCD_MNL_SFX
#undef BCD_MNL_TARGET
#define BCD_MNL_SFX(name) bcd_mnl_##name##_avx512
#define BCD_MNL_TARGET __attribute__((target("arch=x86-64-v4")))
#include "_mnl_loops.h"
#undef BCD_MNL_SFX
#undef BCD_MNL_TARGET
#endif

/* the loops in use; the widest the CPU runs unless bcd_mnl_select says */
static const struct bcd_mnl_ops *bcd_mnl = &bcd_mnl_ops_generic;

/* Use path `isa` (BCD_ISA_* of _vexp.h); returns 0, or -1 (nothing
   changed) if this CPU or build cannot run it. */
static int bcd_mnl_select(int isa)
{
    if (!bcd_isa_available(isa))
        return -1;
#if BCD_HAVE_ISA_COPIES
    if (isa == BCD_ISA_AVX512) {
        bcd_mnl = &bcd_mnl_ops_avx512;
        return 0;
    }
    if (isa == BCD_ISA_AVX2) {
        bcd_mnl = &bcd_mnl_ops_avx2;
        return 0;
    }
#endif
    bcd_mnl = &bcd_mnl_ops_generic;
    return 0;
}

#endif
