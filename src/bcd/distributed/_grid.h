/*
 * The line search of CoCoA+ rounds: a partition's conjugate part of the
 * dual objective at every point q + gamma_j d + b_j e of a grid of combined
 * moves, in one pass over its rows.  The loops over the grid points are
 * straight-line arithmetic (the logarithm of _vexp.h, selections instead
 * of branches and conditional stores), so that compilers vectorize them;
 * each grid point's sum runs over the rows in order.  As the GP kernels,
 * the loops are compiled for SSE2, AVX2 and AVX-512 (_grid_loops.h), and
 * the widest path the CPU runs is used.
 */
#ifndef BCD_GRID_H
#define BCD_GRID_H

#include <stddef.h>
#include "_vexp.h"

#if defined(_OPENMP) || defined(BCD_GRID_OPENMP_SIMD)
#define BCD_GRID_SIMD _Pragma("omp simd")
#else
#define BCD_GRID_SIMD
#endif

/* loss codes */
enum { BCD_GRID_SQUARED = 0, BCD_GRID_LOGISTIC = 1, BCD_GRID_HINGE = 2,
       BCD_GRID_SQUARED_HINGE = 3 };

#define BCD_GRID_SFX(name) name##_generic
#define BCD_GRID_TARGET
#include "_grid_loops.h"
#undef BCD_GRID_SFX
#undef BCD_GRID_TARGET

#if BCD_HAVE_ISA_COPIES
#define BCD_GRID_SFX(name) name##_avx2
#define BCD_GRID_TARGET __attribute__((target("arch=x86-64-v3")))
#include "_grid_loops.h"
#undef BCD_GRID_SFX
#undef BCD_GRID_TARGET
#define BCD_GRID_SFX(name) name##_avx512
#define BCD_GRID_TARGET __attribute__((target("arch=x86-64-v4")))
#include "_grid_loops.h"
#undef BCD_GRID_SFX
#undef BCD_GRID_TARGET
#endif

/* the loops of one instruction-set path */
struct bcd_grid_ops {
    void (*conj)(int, ptrdiff_t, ptrdiff_t, const double *, const double *,
                 const double *, const double *, const double *, const double *,
                 const double *, double *, double *);
    void (*entropy)(ptrdiff_t, ptrdiff_t, ptrdiff_t, const double *, const double *,
                    const double *, const double *, const double *, const double *,
                    double *, double *, double *);
};

static const struct bcd_grid_ops bcd_grid_paths[3] = {
    {bcd_conj_grid_generic, bcd_entropy_grid_generic},
#if BCD_HAVE_ISA_COPIES
    {bcd_conj_grid_avx2, bcd_entropy_grid_avx2},
    {bcd_conj_grid_avx512, bcd_entropy_grid_avx512},
#else
    {bcd_conj_grid_generic, bcd_entropy_grid_generic},
    {bcd_conj_grid_generic, bcd_entropy_grid_generic},
#endif
};

/* the path in use (BCD_ISA_* of _vexp.h): the widest this CPU runs, unless
   bcd_grid_select says */
static int bcd_grid_isa = -1;

static int bcd_grid_path(void)
{
    if (bcd_grid_isa < 0)
        bcd_grid_isa = bcd_isa_best();
    return bcd_grid_isa;
}

/* Use path `isa`; returns 0, or -1 (nothing changed) if this CPU or build
   cannot run it. */
static int bcd_grid_select(int isa)
{
    if (!bcd_isa_available(isa))
        return -1;
    bcd_grid_isa = isa;
    return 0;
}

static void bcd_conj_grid(int loss, ptrdiff_t m, ptrdiff_t G, const double *q,
                          const double *d, const double *e, const double *t,
                          const double *s, const double *gam, const double *mom,
                          double *total, double *bad)
{
    bcd_grid_paths[bcd_grid_path()].conj(loss, m, G, q, d, e, t, s, gam, mom, total, bad);
}

static void bcd_entropy_grid(ptrdiff_t m, ptrdiff_t K, ptrdiff_t G, const double *P,
                             const double *D, const double *E, const double *s,
                             const double *gam, const double *mom, double *total,
                             double *bad, double *acc)
{
    bcd_grid_paths[bcd_grid_path()].entropy(m, K, G, P, D, E, s, gam, mom, total, bad, acc);
}

#endif
