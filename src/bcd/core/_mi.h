/* Dense loops of the greedy maximum-improvement rule (rule "gbcd").
 *
 * The rule keeps W = L^{-1}, the inverse of the Cholesky factor of H_BB
 * (lower triangular), so that joining a coordinate costs two triangular
 * matrix-vector products instead of two triangular solves: the products
 * split into independent rows (W h) and columns (W^T l), which a team of
 * threads shares, where a solve is a chain.
 *
 * W is stored in panels of BCD_MI_CHUNK columns: panel q holds rows
 * a >= q * BCD_MI_CHUNK of columns q * BCD_MI_CHUNK ... + BCD_MI_CHUNK - 1,
 * row-major and contiguous, with zeros above the diagonal.  A column chunk
 * of W^T x is then one contiguous stream, and a row of W h reads one
 * contiguous piece per panel.
 *
 * Every output entry is a sum in a fixed order whatever the split, and the
 * same code computes it whichever thread does, so the results do not
 * depend on the number of threads.  Where GCC can dispatch at load time
 * (x86-64 Linux), each loop is also compiled for AVX2 and AVX-512
 * machines; a machine always runs the same copy.
 */
#ifndef BCD_MI_H
#define BCD_MI_H

#include <stddef.h>

/* columns per panel of W, per column chunk of a step, per piece of a
   candidate's dot product */
#define BCD_MI_CHUNK 32

/* a * b + c is never fused into one rounding: whether a compiler fuses it
   can differ between two loops computing the same entry, and the results
   must not depend on which loop computed an entry */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) \
    && __GNUC__ >= 11
#define BCD_MI_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                                                   "default"), optimize("fp-contract=off")))
#elif defined(__GNUC__) && !defined(__clang__)
#define BCD_MI_CLONES __attribute__((optimize("fp-contract=off")))
#elif defined(__clang__)
#define BCD_MI_CLONES
#pragma STDC FP_CONTRACT OFF
#else
#define BCD_MI_CLONES
#endif

#define BCD_MI_C BCD_MI_CHUNK

/* the offset of panel q in a factor of k rows */
static inline ptrdiff_t bcd_mi_panel(ptrdiff_t k, ptrdiff_t q)
{
    /* sum over q' < q of (k - q' C) C */
    return q * k * BCD_MI_C - BCD_MI_C * BCD_MI_C * (q * (q - 1) / 2);
}

/* the doubles of a factor of k rows */
static inline ptrdiff_t bcd_mi_size(ptrdiff_t k)
{
    return bcd_mi_panel(k, (k + BCD_MI_C - 1) / BCD_MI_C);
}

/* the sum of the BCD_MI_C partial sums p, in a fixed order */
static inline double bcd_mi_total(double *p)
{
    int u;
    for (u = 0; u < BCD_MI_C / 2; u++)
        p[u] += p[u + BCD_MI_C / 2];
    for (u = 0; u < 8; u++)
        p[u] += p[u + 8];
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

/* sum_{u < C} a[u] b[u], summed as by bcd_mi_total */
BCD_MI_CLONES double bcd_mi_piece(const double *a, const double *b)
{
    double p[BCD_MI_C];
    int u;
    for (u = 0; u < BCD_MI_C; u++)
        p[u] = a[u] * b[u];
    return bcd_mi_total(p);
}

/* sum_{i < n} a[i] b[i], in pieces of C summed as by bcd_mi_total */
BCD_MI_CLONES double bcd_mi_dot(const double *a, const double *b, ptrdiff_t n)
{
    double p[BCD_MI_C];
    ptrdiff_t i = 0;
    int u;
    for (u = 0; u < BCD_MI_C; u++)
        p[u] = 0.0;
    for (; i + BCD_MI_C <= n; i += BCD_MI_C)
        for (u = 0; u < BCD_MI_C; u++)
            p[u] += a[i + u] * b[i + u];
    for (u = 0; i < n; i++, u++)
        p[u] += a[i] * b[i];
    return bcd_mi_total(p);
}

/* out[a] = (W h)_a for a0 <= a < a1: h is read in whole chunks, zero past
   the rows of W in use.  Row a sums its pieces panel by panel into C
   partial sums; rows a, a + 1, a + 2, a + 3 (a a multiple of 4, so they
   meet the same panels) go together, so that each piece of h is loaded
   once for four rows and the rows stream through each panel, by the same
   operations per row as one row alone. */
BCD_MI_CLONES void bcd_mi_lower_mv(const double *W, ptrdiff_t k, const double *h,
                                   ptrdiff_t a0, ptrdiff_t a1, double *out)
{
    double p[4][BCD_MI_C];
    ptrdiff_t a = a0, q;
    int u, r, m;
    const double *row, *hq;
    while (a < a1) {
        m = (a % 4 == 0 && a + 4 <= a1) ? 4 : 1;
        for (r = 0; r < m; r++)
            for (u = 0; u < BCD_MI_C; u++)
                p[r][u] = 0.0;
        for (q = 0; q <= a / BCD_MI_C; q++) {
            row = W + bcd_mi_panel(k, q) + (a - q * BCD_MI_C) * BCD_MI_C;
            hq = h + q * BCD_MI_C;
            if (m == 4) {
                for (r = 0; r < 4; r++)
                    for (u = 0; u < BCD_MI_C; u++)
                        p[r][u] += row[r * BCD_MI_C + u] * hq[u];
            } else {
                for (u = 0; u < BCD_MI_C; u++)
                    p[0][u] += row[u] * hq[u];
            }
        }
        for (r = 0; r < m; r++)
            out[a + r] = bcd_mi_total(p[r]);
        a += m;
    }
}

/* Column chunk q of W^T x over rows a < s: u[c] for the columns q C + c,
   each summed over a in increasing order. */
BCD_MI_CLONES void bcd_mi_lower_tmv(const double *W, ptrdiff_t k, const double *x,
                                    ptrdiff_t s, ptrdiff_t q, double *u)
{
    double uu[BCD_MI_C];
    const double *row = W + bcd_mi_panel(k, q);
    ptrdiff_t a;
    int c;
    double xa;
    for (c = 0; c < BCD_MI_C; c++)
        uu[c] = 0.0;
    for (a = q * BCD_MI_C; a < s; a++, row += BCD_MI_C) {
        xa = x[a];
        for (c = 0; c < BCD_MI_C; c++)
            uu[c] += row[c] * xa;
    }
    for (c = 0; c < BCD_MI_C; c++)
        u[c] = uu[c];
}

/* &W[a, q C]: row a's piece of panel q (a >= q C) */
static inline double *bcd_mi_at(double *W, ptrdiff_t k, ptrdiff_t a, ptrdiff_t q)
{
    return W + bcd_mi_panel(k, q) + (a - q * BCD_MI_C) * BCD_MI_C;
}

#undef BCD_MI_C
#endif
