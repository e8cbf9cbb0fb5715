/*
 * Array loops of the compiled kernels, included by _vexp.h once per
 * instruction set: BCD_SFX(name) names this copy's functions and BCD_TARGET
 * is the target attribute it is compiled for.  Written as plain C loops
 * over fixed-size chunks that compilers vectorize (see _vexp.h).
 */

typedef double BCD_SFX(vd) __attribute__((vector_size(8 * BCD_VL), aligned(8)));
typedef int64_t BCD_SFX(vi) __attribute__((vector_size(8 * BCD_VL), aligned(8)));
#define VD BCD_SFX(vd)
#define VI BCD_SFX(vi)
/* Arrays of doubles are read and written as whole vectors through these
   8-byte-aligned types (GCC gives a vector type its elements' alias set).
   A memcpy to or from a vector temporary may instead be split into halves
   under generic tuning, and a vector read back from halves just stored is
   not forwarded from them: that stall alone cost 12% of K[:, b] w. */

/* bcd_exp on a vector, the same operations lane by lane (see bcd_exp) */
BCD_TARGET static inline __attribute__((always_inline)) VD BCD_SFX(bcd_vexp)(VD x)
{
    const VD shifter = (VD){0} + BCD_EXP_SHIFTER;
    VD t, n, r, p, s1, s2, v;
    VI k, h;
    t = x * BCD_EXP_LOG2E + shifter;
    n = t - shifter;
    k = (VI)t - (int64_t)BCD_EXP_SHIFTER_BITS + 2048;
    r = (x - n * BCD_EXP_LN2_HI) - n * BCD_EXP_LN2_LO;
    BCD_EXP_POLY(p, r, (VD){0});
    h = k >> 1;
    s1 = (VD)((h - 1) << 52);
    s2 = (VD)((k - h - 1) << 52);
    v = p * s1 * s2;
    /* masks of all ones where true: exp underflows to 0 below -746 and
       overflows to inf above 710 */
    v = (VD)((VI)v & ~(x < -746.0));
    v = (VD)(((VI)v & ~(x > 710.0)) | ((VI)((VD){0} + (double)INFINITY) & (x > 710.0)));
    return v;
}

/* acc[u] = squared distances from z to the nv * BCD_VL consecutive points
   of G (stored dimension-major, leading dimension ldg): the partial sums
   stay in vector registers over the loop on dimensions instead of being
   loaded and stored once per dimension.  The sum runs over the dimensions
   in order, as in a plain loop. */
BCD_TARGET static inline __attribute__((always_inline)) void
BCD_SFX(bcd_chunk_sqdist)(const double *G, ptrdiff_t ldg, const double *z, ptrdiff_t dim,
                          VD *acc, const int nv)
{
    ptrdiff_t k;
    int u;
    VD d;
    for (u = 0; u < nv; u++)
        acc[u] = (VD){0};
    for (k = 0; k < dim; k++) {
        const VD *g = (const VD *)(G + k * ldg);
        const double zk = z[k];
        for (u = 0; u < nv; u++) {
            d = g[u] - zk;
            acc[u] += d * d;
        }
    }
}

/* squared distance from z to the single point G[k * ldg], k < dim */
static inline double BCD_SFX(bcd_sqdist_one)(const double *G, ptrdiff_t ldg, const double *z,
                                             ptrdiff_t dim)
{
    ptrdiff_t k;
    double s = 0.0, d;
    for (k = 0; k < dim; k++) {
        d = G[k * ldg] - z[k];
        s += d * d;
    }
    return s;
}

/* s[i] = sum_k (G[k * ldg + i] - z[k])^2 for i < w */
BCD_TARGET static void BCD_SFX(bcd_sqdist)(const double *G, ptrdiff_t ldg, const double *z,
                                          ptrdiff_t dim, double *s, ptrdiff_t w)
{
    ptrdiff_t i = 0;
    int u;
    VD acc[BCD_NV];
    for (; i + BCD_NV * BCD_VL <= w; i += BCD_NV * BCD_VL) {
        BCD_SFX(bcd_chunk_sqdist)(G + i, ldg, z, dim, acc, BCD_NV);
        for (u = 0; u < BCD_NV; u++)
            ((VD *)(s + i))[u] = acc[u];
    }
    for (; i + BCD_VL <= w; i += BCD_VL) {
        BCD_SFX(bcd_chunk_sqdist)(G + i, ldg, z, dim, acc, 1);
        *(VD *)(s + i) = acc[0];
    }
    for (; i < w; i++)
        s[i] = BCD_SFX(bcd_sqdist_one)(G + i, ldg, z, dim);
}

/* out[i] = p * exp(a * sum_k (G[k * ldg + i] - z[k])^2) for i < w: the
   squared-exponential column of a tile in one pass, the distances kept in
   registers */
BCD_TARGET static void BCD_SFX(bcd_se)(const double *G, ptrdiff_t ldg, const double *z,
                                      ptrdiff_t dim, double a, double p, double *out,
                                      ptrdiff_t w)
{
    ptrdiff_t i = 0;
    int u;
    VD acc[BCD_NV], e;
    for (; i + BCD_NV * BCD_VL <= w; i += BCD_NV * BCD_VL) {
        BCD_SFX(bcd_chunk_sqdist)(G + i, ldg, z, dim, acc, BCD_NV);
        for (u = 0; u < BCD_NV; u++) {
            e = p * BCD_SFX(bcd_vexp)(a * acc[u]);
            ((VD *)(out + i))[u] = e;
        }
    }
    for (; i + BCD_VL <= w; i += BCD_VL) {
        BCD_SFX(bcd_chunk_sqdist)(G + i, ldg, z, dim, acc, 1);
        e = p * BCD_SFX(bcd_vexp)(a * acc[0]);
        *(VD *)(out + i) = e;
    }
    for (; i < w; i++)
        out[i] = p * bcd_exp(a * BCD_SFX(bcd_sqdist_one)(G + i, ldg, z, dim));
}

/* sum_i wv[i] exp(a * sum_k (G[k * ldg + i] - z[k])^2) over i < w, times p:
   a squared-exponential row times a vector, the row never stored (no pass
   over a buffer, as evaluating the row and then its dot product would) */
BCD_TARGET static double BCD_SFX(bcd_se_dot)(const double *G, ptrdiff_t ldg, const double *z,
                                            ptrdiff_t dim, double a, double p,
                                            const double *wv, ptrdiff_t w)
{
    ptrdiff_t i = 0;
    int u;
    VD acc[BCD_NV], part[BCD_NV];
    double lanes[BCD_VL], total = 0.0;
    for (u = 0; u < BCD_NV; u++)
        part[u] = (VD){0};
    for (; i + BCD_NV * BCD_VL <= w; i += BCD_NV * BCD_VL) {
        const VD *wp = (const VD *)(wv + i);
        BCD_SFX(bcd_chunk_sqdist)(G + i, ldg, z, dim, acc, BCD_NV);
        for (u = 0; u < BCD_NV; u++)
            part[u] += BCD_SFX(bcd_vexp)(a * acc[u]) * wp[u];
    }
    for (; i + BCD_VL <= w; i += BCD_VL) {
        BCD_SFX(bcd_chunk_sqdist)(G + i, ldg, z, dim, acc, 1);
        part[0] += BCD_SFX(bcd_vexp)(a * acc[0]) * *(const VD *)(wv + i);
    }
    for (u = 1; u < BCD_NV; u++)
        part[0] += part[u];
    memcpy(lanes, &part[0], sizeof(VD));
    for (u = 0; u < BCD_VL; u++)
        total += lanes[u];
    for (; i < w; i++)
        total += wv[i] * bcd_exp(a * BCD_SFX(bcd_sqdist_one)(G + i, ldg, z, dim));
    return p * total;
}

/* s[i] = sum_k wt[k] [G[k * ldg + i] != z[k]] for i < w (Hamming), whole
   vectors first and the remaining rows one by one */
BCD_TARGET static void BCD_SFX(bcd_hamming)(const double *G, ptrdiff_t ldg, const double *z,
                                           const double *wt, ptrdiff_t dim, double *s,
                                           ptrdiff_t w)
{
    ptrdiff_t i = 0, k;
    int u;
    VD acc[BCD_NV], wk;
    double t;
    for (; i + BCD_NV * BCD_VL <= w; i += BCD_NV * BCD_VL) {
        for (u = 0; u < BCD_NV; u++)
            acc[u] = (VD){0};
        for (k = 0; k < dim; k++) {
            const VD *g = (const VD *)(G + k * ldg + i);
            const double zk = z[k];
            wk = (VD){0} + wt[k];
            for (u = 0; u < BCD_NV; u++)
                acc[u] += (VD)((VI)wk & (g[u] != zk));
        }
        for (u = 0; u < BCD_NV; u++)
            ((VD *)(s + i))[u] = acc[u];
    }
    for (; i < w; i++) {
        t = 0.0;
        for (k = 0; k < dim; k++)
            t += G[k * ldg + i] != z[k] ? wt[k] : 0.0;
        s[i] = t;
    }
}

/* s[i] = sum_k min(G[k * ldg + i], z[k]) for i < w (histogram intersection) */
BCD_TARGET static void BCD_SFX(bcd_minsum)(const double *G, ptrdiff_t ldg, const double *z,
                                          ptrdiff_t dim, double *s, ptrdiff_t w)
{
    ptrdiff_t i = 0, k;
    int u;
    VD acc[BCD_NV], zv;
    VI lt;
    double t, gi;
    for (; i + BCD_NV * BCD_VL <= w; i += BCD_NV * BCD_VL) {
        for (u = 0; u < BCD_NV; u++)
            acc[u] = (VD){0};
        for (k = 0; k < dim; k++) {
            const VD *g = (const VD *)(G + k * ldg + i);
            zv = (VD){0} + z[k];
            for (u = 0; u < BCD_NV; u++) {
                lt = g[u] < zv;
                acc[u] += (VD)(((VI)g[u] & lt) | ((VI)zv & ~lt));
            }
        }
        for (u = 0; u < BCD_NV; u++)
            ((VD *)(s + i))[u] = acc[u];
    }
    for (; i < w; i++) {
        t = 0.0;
        for (k = 0; k < dim; k++) {
            gi = G[k * ldg + i];
            t += gi < z[k] ? gi : z[k];
        }
        s[i] = t;
    }
}

/* out[i] *= factor `code` at metric s[i], for i < w, with its parameters
   a, b, c: each kind's formula from kernels/kinds.h.  The kind is tested
   once, outside the loops, which all vectorize where the formula is
   straight-line arithmetic (exp, sqrt and the periodic kinds'
   sin^2(pi r / period)). */
#define BCD_FACTOR_MUL_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE)  \
    case BCD_KIND_##NAME:                                        \
        for (i = 0; i < w; i++)                                  \
            out[i] *= VALUE(s[i], a, b, c);                      \
        break;
BCD_TARGET static void BCD_SFX(bcd_factor_mul)(int code, const double *s, double a, double b,
                                              double c, double *out, ptrdiff_t w)
{
    ptrdiff_t i;
    switch (code) {
        BCD_KERNEL_KINDS(BCD_FACTOR_MUL_CASE)
    }
}
#undef BCD_FACTOR_MUL_CASE

/* out[i] = p * exp(a * s[i]) for i < w */
BCD_TARGET static void BCD_SFX(bcd_scaled_exp)(const double *s, double a, double p,
                                              double *out, ptrdiff_t w)
{
    ptrdiff_t i;
    for (i = 0; i < w; i++)
        out[i] = p * bcd_exp(a * s[i]);
}

/* sum_i a[i] b[i] with eight independent partial sums, so that the loop
   vectorizes without reassociating a single running sum */
BCD_TARGET static double BCD_SFX(bcd_dot)(const double *a, const double *b, ptrdiff_t n)
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

static const struct bcd_kernel_loops BCD_SFX(bcd_loops) = {
    BCD_SFX(bcd_sqdist), BCD_SFX(bcd_se), BCD_SFX(bcd_hamming), BCD_SFX(bcd_minsum),
    BCD_SFX(bcd_factor_mul), BCD_SFX(bcd_scaled_exp), BCD_SFX(bcd_dot), BCD_SFX(bcd_se_dot),
};

#undef VD
#undef VI
