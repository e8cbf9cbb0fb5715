/*
 * Exponential written as straight-line arithmetic so that loops over arrays
 * of arguments vectorize (the C library's exp is an opaque call).
 *
 * exp(x) = 2^n exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2; exp(r)
 * by a minimax polynomial of degree 11 (error below 1e-17 relative),
 * 2^n built from its bits in two halves so that results down to the
 * subnormal range are rounded rather than flushed.  Accuracy: within a few
 * ulp of the correctly rounded value for every finite x; NaN propagates,
 * exp(x) = 0 below -746 and +inf above 710.
 *
 * The periodic kernels' sin^2(pi t), t = distance / period, likewise: the
 * argument is reduced by the period exactly, before any rounding by pi.
 */
#ifndef BCD_VEXP_H
#define BCD_VEXP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Constants of bcd_exp and of its vector copies in _kloops.h: log2(e); ln 2
   split so that n * ln2_hi is exact for |n| < 2^21; 1.5 * 2^52, whose
   addition rounds to an integer held in the low mantissa bits, and its bits. */
#define BCD_EXP_LOG2E 1.4426950408889634074
#define BCD_EXP_LN2_HI 6.93147180369123816490e-01
#define BCD_EXP_LN2_LO 1.90821492927058770002e-10
#define BCD_EXP_SHIFTER 6755399441055744.0
#define BCD_EXP_SHIFTER_BITS 0x4338000000000000ULL

/* p = e^r for |r| <= ln 2 / 2 by a degree-11 polynomial, Horner's rule: the
   minimax polynomial of the relative error on that interval (Remez
   exchange in 60-digit arithmetic), whose error, 3.1e-18, is below that of
   the degree-13 Taylor polynomial (4.5e-18) for two multiply-adds fewer;
   zero is 0 of p's type, so that one definition serves doubles and vectors. */
#define BCD_EXP_POLY(p, r, zero) do {              \
        (p) = (zero) + 2.4994304884817207e-08;     \
        (p) = (p) * (r) + 2.7632293279459877e-07;  \
        (p) = (p) * (r) + 2.7557622530872255e-06;  \
        (p) = (p) * (r) + 2.4801486521427463e-05;  \
        (p) = (p) * (r) + 0.00019841269432679237;  \
        (p) = (p) * (r) + 0.0013888888951223987;   \
        (p) = (p) * (r) + 0.00833333333355927;     \
        (p) = (p) * (r) + 0.04166666666649277;     \
        (p) = (p) * (r) + 0.1666666666666617;      \
        (p) = (p) * (r) + 0.5000000000000018;      \
        (p) = (p) * (r) + 1.0;                     \
        (p) = (p) * (r) + 1.0;                     \
    } while (0)

static inline double bcd_exp(double x)
{
    const double shifter = BCD_EXP_SHIFTER;
    const uint64_t shifter_bits = BCD_EXP_SHIFTER_BITS;
    double t, n, r, p, s1, s2, v;
    uint64_t b, k, h;

    /* Computed for every x and selected at the end (outside [-746, 710]
       the intermediate values are meaningless and unused): a branch before
       the arithmetic would keep loops over x from vectorizing. */
    t = x * BCD_EXP_LOG2E + shifter;
    n = t - shifter;
    memcpy(&b, &t, sizeof b);
    k = b - shifter_bits + 2048;        /* n + 2048, in [971, 3073] */
    r = (x - n * BCD_EXP_LN2_HI) - n * BCD_EXP_LN2_LO;
    BCD_EXP_POLY(p, r, 0.0);
    /* 2^n as 2^m 2^(n-m) with m = floor(n / 2), both factors normal, so
       that subnormal results are rounded once */
    h = k >> 1;                          /* m + 1024 */
    b = (h - 1024 + 1023) << 52;
    memcpy(&s1, &b, sizeof s1);
    b = (k - h - 1024 + 1023) << 52;
    memcpy(&s2, &b, sizeof s2);
    v = p * s1 * s2;
    /* selections, not branches: compiled with -fno-trapping-math they
       become vector blends */
    v = x < -746.0 ? 0.0 : v;
    v = x > 710.0 ? (double)INFINITY : v;
    return v;
}

/* log(x) for finite x > 0, as straight-line arithmetic so that loops over
   arrays of arguments vectorize.  x = 2^n m with m in [sqrt(1/2), sqrt(2));
   log m = 2 atanh(s) = 2 s (1 + s^2/3 + s^4/5 + ...), s = (m - 1)/(m + 1),
   |s| <= 0.1716, by the series through s^21, whose truncation error is
   below 1e-18 relative; n ln 2 in two parts as in bcd_exp.  Accuracy:
   within a few ulp for normal x.  A subnormal x gives a value within 5%
   (its exponent is read as that of the smallest normal numbers), and x <= 0,
   NaN or inf meaningless values: callers select them away. */
static inline double bcd_log(double x)
{
    const double shifter = 4503599627370496.0;            /* 2^52 */
    uint64_t b, mb, eb;
    double m, n, f, s, z, p, big;

    memcpy(&b, &x, sizeof b);
    /* the biased exponent as a double, through the bits of 2^52 + e */
    eb = ((b >> 52) & 0x7ffULL) | 0x4330000000000000ULL;
    memcpy(&n, &eb, sizeof n);
    n = n - shifter - 1023.0;
    mb = (b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    memcpy(&m, &mb, sizeof m);                            /* [1, 2) */
    big = m > 1.4142135623730951 ? 1.0 : 0.0;
    m = big > 0.0 ? 0.5 * m : m;
    n = n + big;
    f = m - 1.0;
    s = f / (2.0 + f);
    z = s * s;
    p = 0.09523809523809523;                              /* 2/21 */
    p = p * z + 0.10526315789473684;                      /* 2/19 */
    p = p * z + 0.11764705882352941;
    p = p * z + 0.13333333333333333;
    p = p * z + 0.15384615384615385;
    p = p * z + 0.18181818181818182;
    p = p * z + 0.2222222222222222;
    p = p * z + 0.2857142857142857;
    p = p * z + 0.4;
    p = p * z + 0.6666666666666666;
    p = p * z + 2.0;                                      /* 2/1 */
    return n * BCD_EXP_LN2_HI + (n * BCD_EXP_LN2_LO + s * p);
}

/* Taylor coefficients of sin(pi f) = f (c1 + c3 f^2 + ... + c21 f^20),
   (-1)^k pi^(2k+1) / (2k+1)! rounded to double: for |f| <= 1/2 the
   truncation error is below 2e-18, under a hundredth of an ulp of sin. */
#define BCD_SINPI_C1 3.141592653589793
#define BCD_SINPI_C3 -5.16771278004997
#define BCD_SINPI_C5 2.5501640398773455
#define BCD_SINPI_C7 -0.5992645293207921
#define BCD_SINPI_C9 0.08214588661112823
#define BCD_SINPI_C11 -0.0073704309457143504
#define BCD_SINPI_C13 0.00046630280576761255
#define BCD_SINPI_C15 -2.1915353447830217e-05
#define BCD_SINPI_C17 7.952054001475513e-07
#define BCD_SINPI_C19 -2.2948428997269873e-08
#define BCD_SINPI_C21 5.392664662608129e-10
/* 2^52: from there on every double is an integer */
#define BCD_TWO52 4503599627370496.0

/* t - n for t >= 0 with n the nearest integer, so |f| <= 1/2, exactly
   (NaN propagates): adding 2^52 rounds t < 2^52 to an integer, and t - n
   is then representable; from 2^52 on every double is an integer.  Unlike
   sin(x) with x = (pi / period) * distance, no multiple of a rounded pi is
   subtracted, so the reduction adds no error however large t is; the error
   left is that of t itself (an ulp or two of distance / period). */
static inline double bcd_reduce_half(double t)
{
    double n = (t + BCD_TWO52) - BCD_TWO52;
    double f = t - n;
    return t >= BCD_TWO52 ? 0.0 : f;
}

/* sin(pi f) for |f| <= 1/2, by its odd Taylor polynomial. */
static inline double bcd_sinpi_poly(double f)
{
    double u = f * f, p;
    p = BCD_SINPI_C21;
    p = p * u + BCD_SINPI_C19;
    p = p * u + BCD_SINPI_C17;
    p = p * u + BCD_SINPI_C15;
    p = p * u + BCD_SINPI_C13;
    p = p * u + BCD_SINPI_C11;
    p = p * u + BCD_SINPI_C9;
    p = p * u + BCD_SINPI_C7;
    p = p * u + BCD_SINPI_C5;
    p = p * u + BCD_SINPI_C3;
    p = p * u + BCD_SINPI_C1;
    return p * f;
}

/* Taylor coefficients of cos(pi f) = 1 + c2 f^2 + ... + c22 f^22, rounded to
   double: for |f| <= 1/2 the truncation error is below 1e-19. */
#define BCD_COSPI_C2 -4.934802200544679
#define BCD_COSPI_C4 4.0587121264167685
#define BCD_COSPI_C6 -1.3352627688545895
#define BCD_COSPI_C8 0.2353306303588932
#define BCD_COSPI_C10 -0.02580689139001406
#define BCD_COSPI_C12 0.0019295743094039231
#define BCD_COSPI_C14 -0.0001046381049248457
#define BCD_COSPI_C16 4.303069587032947e-06
#define BCD_COSPI_C18 -1.3878952462213771e-07
#define BCD_COSPI_C20 3.604730797462501e-09
#define BCD_COSPI_C22 -7.700707130601354e-11

/* cos(pi f) for |f| <= 1/2, by its even Taylor polynomial. */
static inline double bcd_cospi_poly(double f)
{
    double u = f * f, c;
    c = BCD_COSPI_C22;
    c = c * u + BCD_COSPI_C20;
    c = c * u + BCD_COSPI_C18;
    c = c * u + BCD_COSPI_C16;
    c = c * u + BCD_COSPI_C14;
    c = c * u + BCD_COSPI_C12;
    c = c * u + BCD_COSPI_C10;
    c = c * u + BCD_COSPI_C8;
    c = c * u + BCD_COSPI_C6;
    c = c * u + BCD_COSPI_C4;
    c = c * u + BCD_COSPI_C2;
    return c * u + 1.0;
}

/* sin^2(pi t) for t >= 0: sin^2 has period 1 in t, so it is sin^2(pi f)
   with f = t - n reduced exactly. */
static inline double bcd_sin2pi(double t)
{
    double s = bcd_sinpi_poly(bcd_reduce_half(t));
    return s * s;
}

/* sin(2 pi t) for t >= 0, the derivative of the periodic kernels with
   respect to their period: sin(2 pi t) = 2 sin(pi f) cos(pi f) whatever
   the parity of n (|f| <= 1/2, where cos(pi f) >= 0). */
static inline double bcd_sin_2pi(double t)
{
    double f = bcd_reduce_half(t);
    return 2.0 * bcd_sinpi_poly(f) * bcd_cospi_poly(f);
}

/* The array loops of the kernels, compiled once per instruction set:
   "generic" (the compiler's baseline, SSE2 on x86-64), and on x86-64 with
   GCC >= 12 also "avx2" (x86-64-v3: AVX2 + FMA) and "avx512" (x86-64-v4).
   One copy is chosen at run time through bcd_kernel_loops_select, from
   the CPU's features or from the caller's choice (BCD_KERNEL_ISA in
   _kernel.pyx), so that every path can be run and tested on one machine. */
struct bcd_kernel_loops {
    void (*sqdist)(const double *G, ptrdiff_t ldg, const double *z, ptrdiff_t dim, double *s,
                   ptrdiff_t w);
    void (*se)(const double *G, ptrdiff_t ldg, const double *z, ptrdiff_t dim, double a,
               double p, double *out, ptrdiff_t w);
    void (*hamming)(const double *G, ptrdiff_t ldg, const double *z, const double *wt,
                    ptrdiff_t dim, double *s, ptrdiff_t w);
    void (*minsum)(const double *G, ptrdiff_t ldg, const double *z, ptrdiff_t dim, double *s,
                   ptrdiff_t w);
    void (*factor_mul)(int code, const double *s, double a, double b, double c, double *out,
                       ptrdiff_t w);
    void (*scaled_exp)(const double *s, double a, double p, double *out, ptrdiff_t w);
    double (*dot)(const double *a, const double *b, ptrdiff_t n);
    double (*se_dot)(const double *G, ptrdiff_t ldg, const double *z, ptrdiff_t dim, double a,
                     double p, const double *wv, ptrdiff_t w);
};

/* the kinds of factors, their formulas and derivatives (one table) */
#include "kernels/kinds.h"

/* Rows of a chunk whose squared distances are accumulated together: lanes
   of a vector (BCD_VL) times vectors (BCD_NV).  Eight independent vectors
   cover the latency of the additions; sixteen doubles per chunk for the
   generic path, which has eight SSE2 registers to spare. */
#define BCD_SFX(name) name##_generic
#define BCD_TARGET
#define BCD_VL 2
#define BCD_NV 8
#include "_kloops.h"
#undef BCD_SFX
#undef BCD_TARGET
#undef BCD_VL
#undef BCD_NV

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__)
#define BCD_HAVE_ISA_COPIES 1
#define BCD_SFX(name) name##_avx2
#define BCD_TARGET __attribute__((target("arch=x86-64-v3")))
#define BCD_VL 4
#define BCD_NV 8
#include "_kloops.h"
#undef BCD_SFX
#undef BCD_TARGET
#undef BCD_VL
#undef BCD_NV
#define BCD_SFX(name) name##_avx512
#define BCD_TARGET __attribute__((target("arch=x86-64-v4")))
#define BCD_VL 8
#define BCD_NV 8
#include "_kloops.h"
#undef BCD_SFX
#undef BCD_TARGET
#undef BCD_VL
#undef BCD_NV
#else
#define BCD_HAVE_ISA_COPIES 0
#endif

/* instruction-set paths, in the order of BCD_KERNEL_ISA's names */
enum { BCD_ISA_GENERIC = 0, BCD_ISA_AVX2 = 1, BCD_ISA_AVX512 = 2 };

/* Whether this CPU (and build) can run path `isa`. */
static int bcd_isa_available(int isa)
{
    if (isa == BCD_ISA_GENERIC)
        return 1;
#if BCD_HAVE_ISA_COPIES
    __builtin_cpu_init();
    if (isa == BCD_ISA_AVX2)
        return __builtin_cpu_supports("x86-64-v3");
    if (isa == BCD_ISA_AVX512)
        return __builtin_cpu_supports("x86-64-v4");
#endif
    return 0;
}

/* the loops in use; generic until bcd_kernel_loops_select is called */
static const struct bcd_kernel_loops *bcd_kl = &bcd_loops_generic;

/* Use path `isa`; returns 0, or -1 (nothing changed) if it is not available. */
static int bcd_kernel_loops_select(int isa)
{
    if (!bcd_isa_available(isa))
        return -1;
#if BCD_HAVE_ISA_COPIES
    if (isa == BCD_ISA_AVX512) {
        bcd_kl = &bcd_loops_avx512;
        return 0;
    }
    if (isa == BCD_ISA_AVX2) {
        bcd_kl = &bcd_loops_avx2;
        return 0;
    }
#endif
    bcd_kl = &bcd_loops_generic;
    return 0;
}

/* the widest path this CPU runs */
static int bcd_isa_best(void)
{
    return bcd_isa_available(BCD_ISA_AVX512) ? BCD_ISA_AVX512
         : bcd_isa_available(BCD_ISA_AVX2) ? BCD_ISA_AVX2 : BCD_ISA_GENERIC;
}

#endif
