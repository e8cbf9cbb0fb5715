/*
 * Exponential written as straight-line arithmetic so that loops over arrays
 * of arguments vectorize (the C library's exp is an opaque call).
 *
 * exp(x) = 2^n exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2; exp(r)
 * by its Taylor polynomial of degree 13 (truncation below 1e-17 relative),
 * 2^n built from its bits in two halves so that results down to the
 * subnormal range are rounded rather than flushed.  Accuracy: within a few
 * ulp of the correctly rounded value for every finite x; NaN propagates,
 * exp(x) = 0 below -746 and +inf above 710.
 */
#ifndef BCD_VEXP_H
#define BCD_VEXP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline double bcd_exp(double x)
{
    const double log2e = 1.4426950408889634074;
    /* ln 2 split so that n * ln2_hi is exact for |n| < 2^21 */
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    /* adding 1.5 * 2^52 rounds to an integer held in the low mantissa bits */
    const double shifter = 6755399441055744.0;
    const uint64_t shifter_bits = 0x4338000000000000ULL;
    double t, n, r, p, s1, s2, v;
    uint64_t b, k, h;

    /* Computed for every x and selected at the end (outside [-746, 710]
       the intermediate values are meaningless and unused): a branch before
       the arithmetic would keep loops over x from vectorizing. */
    t = x * log2e + shifter;
    n = t - shifter;
    memcpy(&b, &t, sizeof b);
    k = b - shifter_bits + 2048;        /* n + 2048, in [971, 3073] */
    r = (x - n * ln2_hi) - n * ln2_lo;
    p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
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

/* Clones of the array loops for wider vector units (AVX2 + FMA, AVX-512),
   chosen when the module is loaded. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && \
    defined(__x86_64__) && defined(__GLIBC__)
#define BCD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define BCD_CLONES
#endif

/* out[i] = p * exp(a * s[i]) for i < w */
BCD_CLONES static void bcd_scaled_exp(const double *s, double a, double p,
                                      double *out, ptrdiff_t w)
{
    ptrdiff_t i;
    for (i = 0; i < w; i++)
        out[i] = p * bcd_exp(a * s[i]);
}

/* s[i] = sum_k (G[k * ldg + i] - z[k])^2 for i < w: squared distances
   from z to w points stored dimension-major */
BCD_CLONES static void bcd_sqdist(const double *G, ptrdiff_t ldg, const double *z,
                                  ptrdiff_t dim, double *s, ptrdiff_t w)
{
    ptrdiff_t i, k;
    double d, zk;
    const double *g;
    for (i = 0; i < w; i++)
        s[i] = 0.0;
    for (k = 0; k < dim; k++) {
        g = G + k * ldg;
        zk = z[k];
        for (i = 0; i < w; i++) {
            d = g[i] - zk;
            s[i] += d * d;
        }
    }
}

/* s[i] = sum_k wt[k] [G[k * ldg + i] != z[k]] for i < w: weighted numbers of
   mismatching features (Hamming distances) from z to w points stored
   dimension-major */
BCD_CLONES static void bcd_hamming(const double *G, ptrdiff_t ldg, const double *z,
                                   const double *wt, ptrdiff_t dim, double *s, ptrdiff_t w)
{
    ptrdiff_t i, k;
    double zk, wk;
    const double *g;
    for (i = 0; i < w; i++)
        s[i] = 0.0;
    for (k = 0; k < dim; k++) {
        g = G + k * ldg;
        zk = z[k];
        wk = wt[k];
        for (i = 0; i < w; i++)
            s[i] += g[i] != zk ? wk : 0.0;
    }
}

/* s[i] = sum_k min(G[k * ldg + i], z[k]) for i < w: histogram intersections */
BCD_CLONES static void bcd_minsum(const double *G, ptrdiff_t ldg, const double *z,
                                  ptrdiff_t dim, double *s, ptrdiff_t w)
{
    ptrdiff_t i, k;
    double zk, gi;
    const double *g;
    for (i = 0; i < w; i++)
        s[i] = 0.0;
    for (k = 0; k < dim; k++) {
        g = G + k * ldg;
        zk = z[k];
        for (i = 0; i < w; i++) {
            gi = g[i];
            s[i] += gi < zk ? gi : zk;
        }
    }
}

/* sum_i a[i] b[i] with eight independent partial sums, so that the loop
   vectorizes without reassociating a single running sum */
BCD_CLONES static double bcd_dot(const double *a, const double *b, ptrdiff_t n)
{
    double part[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double total = 0.0;
    ptrdiff_t i = 0, u;
    for (; i + 8 <= n; i += 8)
        for (u = 0; u < 8; u++)
            part[u] += a[i + u] * b[i + u];
    for (u = 0; u < 8; u++)
        total += part[u];
    for (; i < n; i++)
        total += a[i] * b[i];
    return total;
}

#endif
