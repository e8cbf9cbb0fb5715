/*
 * The loops of _grid.h, compiled once per instruction-set path: included
 * with BCD_GRID_SFX (the name suffix) and BCD_GRID_TARGET (the target
 * attribute) defined.
 */
/* total[j] += sum_i -s_i phi*(-beta_i / s_i) at v = q_i + gam[j] d_i + mom[j] e_i
   (rows with s_i <= 0 left out); bad[j] counts the rows whose v leaves the
   domain: the logistic loss's open interval (0, 1), the hinge losses'
   v >= 0 and the hinge's v <= s_i. */
BCD_GRID_TARGET static void
BCD_GRID_SFX(bcd_conj_grid)(int loss, ptrdiff_t m, ptrdiff_t G, const double *q,
                            const double *d, const double *e, const double *t,
                            const double *s, const double *gam, const double *mom,
                            double *total, double *bad)
{
    ptrdiff_t i, j;
    for (i = 0; i < m; i++) {
        const double si = s[i], qi = q[i], di = d[i], ei = e[i], ti = t[i];
        if (!(si > 0.0))
            continue;
        if (loss == BCD_GRID_LOGISTIC) {
            BCD_GRID_SIMD
            for (j = 0; j < G; j++) {
                double v = qi + gam[j] * di + mom[j] * ei;
                /* ok = 1 inside (0, 1), else 0 (arithmetic masks: GCC 12
                   does not vectorize this loop with an int mask) */
                double ok = (v > 0.0 ? 1.0 : 0.0) * (v < 1.0 ? 1.0 : 0.0);
                double u = ok > 0.0 ? v : 0.5;
                double h = u * bcd_log(u) + (1.0 - u) * bcd_log(1.0 - u);
                total[j] -= ok * (si * h);
                bad[j] += 1.0 - ok;
            }
        } else if (loss == BCD_GRID_SQUARED) {
            BCD_GRID_SIMD
            for (j = 0; j < G; j++) {
                double v = qi + gam[j] * di + mom[j] * ei;
                total[j] += v * ti - 0.5 * v * v / si;
            }
        } else if (loss == BCD_GRID_HINGE) {
            BCD_GRID_SIMD
            for (j = 0; j < G; j++) {
                double v = qi + gam[j] * di + mom[j] * ei;
                total[j] += v;
                bad[j] += ((v < 0.0) | (v > si)) ? 1.0 : 0.0;
            }
        } else {
            BCD_GRID_SIMD
            for (j = 0; j < G; j++) {
                double v = qi + gam[j] * di + mom[j] * ei;
                total[j] += v - 0.25 * v * v / si;
                bad[j] += v < 0.0 ? 1.0 : 0.0;
            }
        }
    }
}

/* total[j] -= sum_i s_i sum_k v_ik log v_ik at v = P + gam[j] D + mom[j] E
   (m x K, row-major; rows with s_i <= 0 left out; 0 log 0 = 0); bad[j]
   counts the entries v_ik < 0.  acc: scratch of G doubles. */
BCD_GRID_TARGET static void
BCD_GRID_SFX(bcd_entropy_grid)(ptrdiff_t m, ptrdiff_t K, ptrdiff_t G, const double *P,
                               const double *D, const double *E, const double *s,
                               const double *gam, const double *mom, double *total,
                               double *bad, double *acc)
{
    ptrdiff_t i, j, k;
    for (i = 0; i < m; i++) {
        const double si = s[i];
        if (!(si > 0.0))
            continue;
        for (j = 0; j < G; j++)
            acc[j] = 0.0;
        for (k = 0; k < K; k++) {
            const double p = P[i * K + k], dk = D[i * K + k], ek = E[i * K + k];
            BCD_GRID_SIMD
            for (j = 0; j < G; j++) {
                double v = p + gam[j] * dk + mom[j] * ek;
                double pos = v > 0.0 ? 1.0 : 0.0;
                double u = pos > 0.0 ? v : 1.0;
                acc[j] += pos * (u * bcd_log(u));
                bad[j] += v < 0.0 ? 1.0 : 0.0;
            }
        }
        for (j = 0; j < G; j++)
            total[j] -= si * acc[j];
    }
}
