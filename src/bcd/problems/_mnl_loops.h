/*
 * Loops of the multinomial dual solver, included by _mnl_dual.h once per
 * instruction set: BCD_MNL_SFX(name) names this copy's functions and
 * BCD_MNL_TARGET is the target attribute it is compiled for.  Plain C loops
 * that compilers vectorize (see _mnl_dual.h).
 */

/* the sums of the arrays w = p / h, wF = p F / h and d = |dt| */
BCD_MNL_TARGET static inline void
BCD_MNL_SFX(reduce)(ptrdiff_t K, const double *p, const double *w, const double *wF,
                    const double *d, struct bcd_mnl_sums *s)
{
    double g = 0.0, sw = 0.0, swf = 0.0, m = 0.0;
    int nan = 0;
    ptrdiff_t k;
    BCD_MNL_SIMD_REDUCE
    for (k = 0; k < K; k++) {
        g += p[k];
        sw += w[k];
        swf += wF[k];
        m = d[k] > m ? d[k] : m;
        nan |= !(d[k] == d[k]);
    }
    s->G = g - 1.0;
    s->Sw = sw;
    s->SwF = swf;
    s->dmax = nan ? NAN : m;
}

/* the residuals F at (t, p), ih = 1 / h and the arrays of the sums */
BCD_MNL_TARGET static inline void
BCD_MNL_SFX(residuals)(ptrdiff_t K, const double *z, const double *b, const double *pold,
                       const double *t, const double *p, double *F, double *ih, double *w,
                       double *wF)
{
    ptrdiff_t k;
    BCD_MNL_SIMD
    for (k = 0; k < K; k++) {
        double Fk = t[k] + b[k] * (p[k] - pold[k]) - z[k];
        double h = 1.0 / (1.0 + b[k] * p[k]);
        F[k] = Fk;
        ih[k] = h;
        w[k] = p[k] * h;
        wF[k] = p[k] * h * Fk;
    }
}

/* One Newton step with multiplier mu: t, p, F, ih, w, wF, and in d the
   step |dt_k| less what the rounding of F_k + mu, through the terms up to
   |z_k| + b_k + |t_k| + |mu|, accounts for (it may be negative). */
BCD_MNL_TARGET static inline void
BCD_MNL_SFX(step)(ptrdiff_t K, const double *z, const double *b, const double *pold, double mu,
                  double *t, double *p, double *F, double *ih, double *w, double *wF,
                  double *d)
{
    const double amu = fabs(mu);
    ptrdiff_t k;
    BCD_MNL_SIMD
    for (k = 0; k < K; k++) {
        double tk = t[k];
        double tn = tk - (F[k] + mu) * ih[k];
        double noise = BCD_MNL_ROUNDING * (fabs(z[k]) + b[k] + fabs(tk) + amu) * ih[k];
        double pk, h, Fk;
        tn = tn > 0.0 ? 0.0 : tn;
        tn = tn < BCD_MNL_TMIN ? BCD_MNL_TMIN : tn;
        pk = bcd_exp(tn);
        h = 1.0 / (1.0 + b[k] * pk);
        Fk = tn + b[k] * (pk - pold[k]) - z[k];
        d[k] = fabs(tn - tk) - noise;
        t[k] = tn;
        p[k] = pk;
        F[k] = Fk;
        ih[k] = h;
        w[k] = pk * h;
        wF[k] = pk * h * Fk;
    }
}

/*
 * A starting point for a sub-problem far from p_old: the solution without
 * the entropy, p = argmin_{simplex} sum_k b_k (p_k - p_old_k - z_k / b_k)^2,
 * read as log p on its support and log p_k = c_k - m off it (the root of the
 * full equation as b_k p_k -> 0).  With c_k = z_k + b_k p_old_k the threshold
 * m solves sum_k max(0, c_k - m) / b_k = 1, a convex decreasing piecewise-
 * linear equation, by Newton's method from m = max_k (c_k - b_k) (where the
 * sum is >= 1): it increases monotonically and stops when the support no
 * longer changes.  Returns 0 (nothing set) when some b_k is not > 0.
 */
BCD_MNL_TARGET static int
BCD_MNL_SFX(projection_start)(ptrdiff_t K, const double *z, const double *b,
                              const double *pold, double *t, double *p)
{
    double m = -HUGE_VAL, mn, c, S0, S1;
    ptrdiff_t k, it;
    for (k = 0; k < K; k++) {
        if (!(b[k] > 0.0))
            return 0;
        c = z[k] + b[k] * pold[k];
        if (c - b[k] > m)
            m = c - b[k];
    }
    for (it = 0; it < K + 2; it++) {
        S0 = 0.0;
        S1 = 0.0;
        for (k = 0; k < K; k++) {
            c = z[k] + b[k] * pold[k];
            if (c > m) {
                S0 += 1.0 / b[k];
                S1 += c / b[k];
            }
        }
        mn = (S1 - 1.0) / S0;
        if (!(mn > m))
            break;
        m = mn;
    }
    for (k = 0; k < K; k++) {
        double tk;
        c = z[k] + b[k] * pold[k] - m;
        tk = c > 0.0 ? log(c / b[k]) : c;
        tk = tk > 0.0 ? 0.0 : tk;
        tk = tk < BCD_MNL_TMIN ? BCD_MNL_TMIN : tk;
        t[k] = tk;
        p[k] = bcd_exp(tk);
    }
    return 1;
}

/*
 * The sub-problem by Newton's method from t = log p_old, or from the
 * projection start when the first step would change some p_k by a factor
 * over e^FAR_STEP.  work: 5 K doubles.  Returns the number of iterations,
 * or -1 if it did not converge (p and t are then meaningless); *G gets
 * sum p - 1 at the solution.
 *
 * Converged once a step moves no log-probability by more than BCD_MNL_TOL
 * beyond the rounding of its residual, or once the quadratic convergence,
 * its constant estimated from the last two steps (both small), predicts
 * that the next step would be below 1e-16.
 */
BCD_MNL_TARGET static int
BCD_MNL_SFX(solve)(ptrdiff_t K, const double *z, const double *b, const double *pold,
                   const double *told, double *p, double *t, double *work, double *G)
{
    double *F = work, *ih = work + K, *w = work + 2 * K, *wF = work + 3 * K, *d = work + 4 * K;
    struct bcd_mnl_sums s;
    double mu, prev = HUGE_VAL, dt, dmax = 0.0;
    ptrdiff_t k;
    int it;
    for (k = 0; k < K; k++) {
        t[k] = told[k];
        p[k] = pold[k];
    }
    BCD_MNL_SFX(residuals)(K, z, b, pold, t, p, F, ih, w, wF);
    BCD_MNL_SFX(reduce)(K, p, w, wF, w, &s);        /* (its dmax is not used) */
    mu = (s.G - s.SwF) / s.Sw;
    for (k = 0; k < K; k++) {
        dt = fabs(F[k] + mu) * ih[k];
        dmax = dt > dmax ? dt : dmax;
    }
    if (dmax > BCD_MNL_FAR_STEP && BCD_MNL_SFX(projection_start)(K, z, b, pold, t, p)) {
        BCD_MNL_SFX(residuals)(K, z, b, pold, t, p, F, ih, w, wF);
        BCD_MNL_SFX(reduce)(K, p, w, wF, w, &s);
    }
    for (it = 1; it <= BCD_MNL_MAX_IT; it++) {
        mu = (s.G - s.SwF) / s.Sw;
        if (!isfinite(mu))
            return -1;
        BCD_MNL_SFX(step)(K, z, b, pold, mu, t, p, F, ih, w, wF, d);
        BCD_MNL_SFX(reduce)(K, p, w, wF, d, &s);
        if (!isfinite(s.dmax))
            return -1;
        if (s.dmax <= BCD_MNL_TOL || (prev <= 1e-2 && s.dmax <= 1e-4
                                      && s.dmax * s.dmax * s.dmax <= 1e-16 * prev * prev)) {
            *G = s.G;
            return it;
        }
        prev = s.dmax;
    }
    return -1;
}

/* z = a_i' W, four rows of W at a time */
BCD_MNL_TARGET static void
BCD_MNL_SFX(gather)(const struct bcd_mnl_data *s, ptrdiff_t i, double *z)
{
    const ptrdiff_t K = s->K;
    ptrdiff_t k, p = s->indptr[i];
    const ptrdiff_t end = s->indptr[i + 1];
    for (k = 0; k < K; k++)
        z[k] = 0.0;
    for (; p + 3 < end; p += 4) {
        const double a0 = s->data[p], a1 = s->data[p + 1], a2 = s->data[p + 2],
                     a3 = s->data[p + 3];
        const double *w0 = s->W + (ptrdiff_t)s->indices[p] * K;
        const double *w1 = s->W + (ptrdiff_t)s->indices[p + 1] * K;
        const double *w2 = s->W + (ptrdiff_t)s->indices[p + 2] * K;
        const double *w3 = s->W + (ptrdiff_t)s->indices[p + 3] * K;
        BCD_MNL_SIMD
        for (k = 0; k < K; k++)
            z[k] += (a0 * w0[k] + a1 * w1[k]) + (a2 * w2[k] + a3 * w3[k]);
    }
    for (; p < end; p++) {
        const double a0 = s->data[p];
        const double *w0 = s->W + (ptrdiff_t)s->indices[p] * K;
        BCD_MNL_SIMD
        for (k = 0; k < K; k++)
            z[k] += a0 * w0[k];
    }
}

/* out += scale a_i v', divided by the ridge weights if ridge_scaled; four
   rows of out at a time (the rows of one sample are distinct) */
BCD_MNL_TARGET static void
BCD_MNL_SFX(scatter)(const struct bcd_mnl_data *s, ptrdiff_t i, double scale, const double *v,
                     double *out, int ridge_scaled)
{
    const ptrdiff_t K = s->K, end = s->indptr[i + 1];
    const int per_class = ridge_scaled && !s->per_feature;
    ptrdiff_t k, p = s->indptr[i];
    for (; p + 3 < end; p += 4) {
        const ptrdiff_t j0 = s->indices[p], j1 = s->indices[p + 1], j2 = s->indices[p + 2],
                        j3 = s->indices[p + 3];
        double *o0 = out + j0 * K, *o1 = out + j1 * K, *o2 = out + j2 * K, *o3 = out + j3 * K;
        double c0 = scale * s->data[p], c1 = scale * s->data[p + 1],
               c2 = scale * s->data[p + 2], c3 = scale * s->data[p + 3];
        if (per_class) {
            const double *r0 = s->inv_r + j0 * K, *r1 = s->inv_r + j1 * K,
                         *r2 = s->inv_r + j2 * K, *r3 = s->inv_r + j3 * K;
            BCD_MNL_SIMD
            for (k = 0; k < K; k++) {
                o0[k] += (c0 * r0[k]) * v[k];
                o1[k] += (c1 * r1[k]) * v[k];
                o2[k] += (c2 * r2[k]) * v[k];
                o3[k] += (c3 * r3[k]) * v[k];
            }
            continue;
        }
        if (ridge_scaled) {
            c0 *= s->inv_r[j0];
            c1 *= s->inv_r[j1];
            c2 *= s->inv_r[j2];
            c3 *= s->inv_r[j3];
        }
        BCD_MNL_SIMD
        for (k = 0; k < K; k++) {
            o0[k] += c0 * v[k];
            o1[k] += c1 * v[k];
            o2[k] += c2 * v[k];
            o3[k] += c3 * v[k];
        }
    }
    for (; p < end; p++) {
        const ptrdiff_t j = s->indices[p];
        double *o = out + j * K;
        double c = scale * s->data[p];
        if (per_class) {
            const double *ir = s->inv_r + j * K;
            BCD_MNL_SIMD
            for (k = 0; k < K; k++)
                o[k] += (c * ir[k]) * v[k];
        } else {
            if (ridge_scaled)
                c *= s->inv_r[j];
            BCD_MNL_SIMD
            for (k = 0; k < K; k++)
                o[k] += c * v[k];
        }
    }
}

/*
 * The end of a visit, once p_new and log p_new are in the scratch: the
 * change p_old - p_new goes into W, p_new and its log into P and T.
 * Returns s_i max_k |p_new_k - p_old_k|.
 */
BCD_MNL_TARGET static double
BCD_MNL_SFX(apply)(const struct bcd_mnl_data *s, ptrdiff_t i, double si)
{
    const ptrdiff_t K = s->K;
    double *pn = s->work + 2 * K, *tn = s->work + 3 * K, *delta = s->work + 4 * K;
    double *pold = s->P + i * K, *told = s->T + i * K;
    double m = 0.0;
    ptrdiff_t k;
    BCD_MNL_SIMD_MAX(m)
    for (k = 0; k < K; k++) {
        double dk = pold[k] - pn[k];
        double a = fabs(dk);
        delta[k] = dk;
        m = a > m ? a : m;
        pold[k] = pn[k];
        told[k] = tn[k];
    }
    if (m > 0.0)
        BCD_MNL_SFX(scatter)(s, i, si, delta, s->W, 1);
    return si * m;
}

/*
 * Maximize the dual over p_i (sample weight si > 0).  Scratch (s->work):
 * z, b, p_new, log p_new, p_old - p_new, then the solver's 5 K doubles.
 * Returns the number of Newton iterations and stores s_i ||p_new -
 * p_old||_inf in *change; or returns -1, having changed nothing but the
 * scratch, if Newton's method did not converge (the caller then solves
 * for p_new and log p_new from z and b and calls apply).
 */
BCD_MNL_TARGET static int
BCD_MNL_SFX(visit)(const struct bcd_mnl_data *s, ptrdiff_t i, double si, double *change)
{
    const ptrdiff_t K = s->K;
    double *z = s->work, *b = s->work + K, *pn = s->work + 2 * K, *tn = s->work + 3 * K;
    const double *q = s->Q + i * K;
    double G = 0.0;
    ptrdiff_t k;
    int it;
    BCD_MNL_SFX(gather)(s, i, z);
    for (k = 0; k < K; k++)
        b[k] = si * q[k];
    it = BCD_MNL_SFX(solve)(K, z, b, s->P + i * K, s->T + i * K, pn, tn, s->work + 5 * K, &G);
    if (it < 0)
        return -1;
    if (fabs(G) > 4.440892098500626e-16) {
        /* onto the simplex: p / sum p, log p - log(sum p) */
        double inv = 1.0 / (1.0 + G), lg = log1p(G);
        BCD_MNL_SIMD
        for (k = 0; k < K; k++) {
            double tk = tn[k] - lg;
            pn[k] *= inv;
            tn[k] = tk > 0.0 ? 0.0 : tk;
        }
    }
    *change = BCD_MNL_SFX(apply)(s, i, si);
    return it;
}


/*
 * The stopping test's work on one sample, at z = a_i' W: q = softmax(z)
 * into u, then u -= e_y (the sample's row of softmax(A W) - Y).  Returns
 * KL(p || q) as sum_k p_k h(dl_k), h(x) = x - 1 + e^-x >= 0 and dl = log p -
 * log q (the sums of p and q are both one): a sum of non-negative terms,
 * with a series where h cancels.  *viol gets ||p - q||_1.
 */
BCD_MNL_TARGET static double
BCD_MNL_SFX(check_row)(ptrdiff_t K, const double *z, const double *p, const double *t, int y,
                       double *u, double *viol)
{
    double mx = z[0], s = 0.0, lse, inv, kl = 0.0, v = 0.0;
    ptrdiff_t k;
    for (k = 1; k < K; k++)
        mx = z[k] > mx ? z[k] : mx;
    BCD_MNL_SIMD_SUM(s)
    for (k = 0; k < K; k++) {
        u[k] = bcd_exp(z[k] - mx);
        s += u[k];
    }
    lse = mx + log(s);
    inv = 1.0 / s;
    BCD_MNL_SIMD_SUM2(kl, v)
    for (k = 0; k < K; k++) {
        double qk = u[k] * inv, pk = p[k];
        double dl = t[k] - (z[k] - lse);
        double series = pk * dl * dl * (0.5 - dl * (1.0 / 6.0 - dl * (1.0 / 24.0)));
        double direct = pk * dl - pk + qk;
        kl += fabs(dl) < 1e-3 ? series : direct;
        v += fabs(pk - qk);
        u[k] = qk;
    }
    u[y] -= 1.0;
    *viol = v;
    return kl;
}

static const struct bcd_mnl_ops BCD_MNL_SFX(ops) = {
    BCD_MNL_SFX(visit),
    BCD_MNL_SFX(apply),
    BCD_MNL_SFX(gather),
    BCD_MNL_SFX(scatter),
    BCD_MNL_SFX(check_row),
    BCD_MNL_SFX(solve),
};
