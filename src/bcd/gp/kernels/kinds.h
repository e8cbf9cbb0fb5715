/*
 * The kinds of kernel factors: one table row each, with its formula and its
 * derivatives written once.  Both the compiled evaluator (_kernel.pyx, one
 * entry at a time) and the vectorized array loops (_kloops.h, one copy per
 * instruction set) expand this table, so a kind has one code, one formula
 * and one derivative everywhere.  Python reads the rows through
 * bcd.gp._kernel.kinds() (bcd.gp.kernels.KINDS).
 *
 * A factor reads one metric s of a pair of inputs (x, x'):
 *   METRIC_SQUARED  s = sum_k u_k^2, u_k = (x_k - x'_k) / l_k (the inputs are
 *                   scaled by the length-scales before; the periodic kinds
 *                   take l_k = 1 and their length-scale as a parameter);
 *   METRIC_HAMMING  s = sum_k w_k [x_k != x'_k];
 *   METRIC_MIN      s = sum_k min(x_k, x'_k);
 * and up to three parameters a, b, c of its own (see each row).
 *
 * Its derivatives with respect to the logarithms of its parameters are
 * the factor's value times a ratio (so a term is evaluated once whatever
 * its number of factors):
 *   GRAD_RADIAL   d k / d log l_k = k * dlength(s) * u_k^2 (one length-scale
 *                 per dimension, or one for all);
 *   GRAD_SCALAR   d k / d log l = k * dlength(s) (one length-scale, a
 *                 parameter of the factor);
 *   GRAD_HAMMING  d k / d log w_k = -k * w_k [x_k != x'_k];
 *   GRAD_NONE     no length-scale;
 * and, for a kind with a shape parameter (period, alpha),
 *   d k / d log shape = k * dshape(s).
 *
 * Adding a kind: a row in BCD_KERNEL_KINDS (its code is its position),
 * its value, dlength and dshape below, and a Python class in
 * bcd/gp/kernels/__init__.py naming the row.  Nothing else changes.
 */
#ifndef BCD_KINDS_H
#define BCD_KINDS_H

#include <math.h>

/* kinds of metrics */
enum { BCD_METRIC_SQUARED = 0, BCD_METRIC_HAMMING = 1, BCD_METRIC_MIN = 2 };
/* forms of the length-scale derivative */
enum { BCD_GRAD_NONE = 0, BCD_GRAD_RADIAL = 1, BCD_GRAD_SCALAR = 2, BCD_GRAD_HAMMING = 3 };

#define BCD_SQRT3 1.7320508075688772935
#define BCD_SQRT5 2.2360679774997896964

/* X(NAME, metric, gradient, has a shape parameter, value, dlength, dshape) */
#define BCD_KERNEL_KINDS(X)                                                              \
    X(SQUARED_EXPONENTIAL, BCD_METRIC_SQUARED, BCD_GRAD_RADIAL, 0,                      \
      bcd_se_value, bcd_se_dlength, bcd_no_dshape)                                       \
    X(MATERN32, BCD_METRIC_SQUARED, BCD_GRAD_RADIAL, 0,                                 \
      bcd_matern32_value, bcd_matern32_dlength, bcd_no_dshape)                           \
    X(MATERN52, BCD_METRIC_SQUARED, BCD_GRAD_RADIAL, 0,                                 \
      bcd_matern52_value, bcd_matern52_dlength, bcd_no_dshape)                           \
    X(PERIODIC, BCD_METRIC_SQUARED, BCD_GRAD_SCALAR, 1,                                 \
      bcd_periodic_value, bcd_periodic_dlength, bcd_periodic_dshape)                     \
    X(LOCALLY_PERIODIC, BCD_METRIC_SQUARED, BCD_GRAD_SCALAR, 1,                         \
      bcd_locally_periodic_value, bcd_locally_periodic_dlength, bcd_periodic_dshape)     \
    X(HAMMING, BCD_METRIC_HAMMING, BCD_GRAD_HAMMING, 0,                                 \
      bcd_hamming_value, bcd_no_dlength, bcd_no_dshape)                                  \
    X(INTERSECTION, BCD_METRIC_MIN, BCD_GRAD_NONE, 0,                                   \
      bcd_intersection_value, bcd_no_dlength, bcd_no_dshape)                             \
    X(RATIONAL_QUADRATIC, BCD_METRIC_SQUARED, BCD_GRAD_RADIAL, 1,                       \
      bcd_rq_value, bcd_rq_dlength, bcd_rq_dshape)

/* the named codes: BCD_KIND_SQUARED_EXPONENTIAL = 0, ... in table order */
#define BCD_KIND_ENUM(NAME, ...) BCD_KIND_##NAME,
enum { BCD_KERNEL_KINDS(BCD_KIND_ENUM) BCD_N_KINDS };
#undef BCD_KIND_ENUM

#define BCD_KIND_INLINE static inline __attribute__((always_inline))

/* ---- formulas and derivatives: (s, a, b, c) -> double ---------------- */

BCD_KIND_INLINE double bcd_no_dlength(double s, double a, double b, double c) { return 0.0; }
BCD_KIND_INLINE double bcd_no_dshape(double s, double a, double b, double c) { return 0.0; }

/* squared exponential: exp(-s / 2) */
BCD_KIND_INLINE double bcd_se_value(double s, double a, double b, double c)
{
    return bcd_exp(-0.5 * s);
}
BCD_KIND_INLINE double bcd_se_dlength(double s, double a, double b, double c) { return 1.0; }

/* Matern 3/2: (1 + t) exp(-t), t = sqrt(3 s) */
BCD_KIND_INLINE double bcd_matern32_value(double s, double a, double b, double c)
{
    double t = BCD_SQRT3 * sqrt(s);
    return (1.0 + t) * bcd_exp(-t);
}
BCD_KIND_INLINE double bcd_matern32_dlength(double s, double a, double b, double c)
{
    return 3.0 / (1.0 + BCD_SQRT3 * sqrt(s));
}

/* Matern 5/2: (1 + t + t^2 / 3) exp(-t), t = sqrt(5 s) */
BCD_KIND_INLINE double bcd_matern52_value(double s, double a, double b, double c)
{
    double t = BCD_SQRT5 * sqrt(s);
    return (1.0 + t + t * t / 3.0) * bcd_exp(-t);
}
BCD_KIND_INLINE double bcd_matern52_dlength(double s, double a, double b, double c)
{
    double t = BCD_SQRT5 * sqrt(s);
    return (5.0 / 3.0) * (1.0 + t) / (1.0 + t + t * t / 3.0);
}

/* periodic: exp(-2 sin^2(pi r / p) / l^2), r = sqrt(s); a = 1 / l^2,
   b = 1 / p, c = pi / p */
BCD_KIND_INLINE double bcd_periodic_value(double s, double a, double b, double c)
{
    return bcd_exp(-2.0 * bcd_sin2pi(sqrt(s) * b) * a);
}
BCD_KIND_INLINE double bcd_periodic_dlength(double s, double a, double b, double c)
{
    return 4.0 * bcd_sin2pi(sqrt(s) * b) * a;
}
/* d sin^2(pi r / p) / d log p = -(pi r / p) sin(2 pi r / p) */
BCD_KIND_INLINE double bcd_periodic_dshape(double s, double a, double b, double c)
{
    double r = sqrt(s);
    return 2.0 * c * r * a * bcd_sin_2pi(r * b);
}

/* locally periodic: exp(-(s / 2 + 2 sin^2(pi r / p)) / l^2), the same
   parameters as the periodic kind */
BCD_KIND_INLINE double bcd_locally_periodic_value(double s, double a, double b, double c)
{
    return bcd_exp(-(0.5 * s + 2.0 * bcd_sin2pi(sqrt(s) * b)) * a);
}
BCD_KIND_INLINE double bcd_locally_periodic_dlength(double s, double a, double b, double c)
{
    return (s + 4.0 * bcd_sin2pi(sqrt(s) * b)) * a;
}

/* Hamming: exp(-s) */
BCD_KIND_INLINE double bcd_hamming_value(double s, double a, double b, double c)
{
    return bcd_exp(-s);
}

/* histogram intersection: s */
BCD_KIND_INLINE double bcd_intersection_value(double s, double a, double b, double c)
{
    return s;
}

/* rational quadratic: (1 + s / (2 alpha))^-alpha; a = alpha,
   b = 1 / (2 alpha).  With q = 1 + s b: d k / d log l_k = k u_k^2 / q and
   d k / d log alpha = k (s / (2 q) - alpha log q). */
BCD_KIND_INLINE double bcd_rq_value(double s, double a, double b, double c)
{
    return pow(1.0 + s * b, -a);
}
BCD_KIND_INLINE double bcd_rq_dlength(double s, double a, double b, double c)
{
    return 1.0 / (1.0 + s * b);
}
BCD_KIND_INLINE double bcd_rq_dshape(double s, double a, double b, double c)
{
    return 0.5 * s / (1.0 + s * b) - a * log1p(s * b);
}

/* ---- dispatch by code, expanded from the table ----------------------- */

#define BCD_KIND_VALUE_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE) \
    case BCD_KIND_##NAME: return VALUE(s, a, b, c);
#define BCD_KIND_DLENGTH_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE) \
    case BCD_KIND_##NAME: return DLEN(s, a, b, c);
#define BCD_KIND_DSHAPE_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE) \
    case BCD_KIND_##NAME: return DSHAPE(s, a, b, c);
#define BCD_KIND_NAME_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE) \
    case BCD_KIND_##NAME: return #NAME;
#define BCD_KIND_METRIC_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE) \
    case BCD_KIND_##NAME: return M;
#define BCD_KIND_GRADIENT_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE) \
    case BCD_KIND_##NAME: return G;
#define BCD_KIND_SHAPE_CASE(NAME, M, G, S, VALUE, DLEN, DSHAPE) \
    case BCD_KIND_##NAME: return S;

/* value of a factor of kind `code` at metric s */
static inline double bcd_kind_value(int code, double s, double a, double b, double c)
{
    switch (code) { BCD_KERNEL_KINDS(BCD_KIND_VALUE_CASE) }
    return NAN;
}
/* its length-scale ratio (see GRAD_RADIAL, GRAD_SCALAR) */
static inline double bcd_kind_dlength(int code, double s, double a, double b, double c)
{
    switch (code) { BCD_KERNEL_KINDS(BCD_KIND_DLENGTH_CASE) }
    return NAN;
}
/* its shape-parameter ratio */
static inline double bcd_kind_dshape(int code, double s, double a, double b, double c)
{
    switch (code) { BCD_KERNEL_KINDS(BCD_KIND_DSHAPE_CASE) }
    return NAN;
}
static inline const char *bcd_kind_name(int code)
{
    switch (code) { BCD_KERNEL_KINDS(BCD_KIND_NAME_CASE) }
    return "";
}
static inline int bcd_kind_metric(int code)
{
    switch (code) { BCD_KERNEL_KINDS(BCD_KIND_METRIC_CASE) }
    return -1;
}
static inline int bcd_kind_gradient(int code)
{
    switch (code) { BCD_KERNEL_KINDS(BCD_KIND_GRADIENT_CASE) }
    return -1;
}
static inline int bcd_kind_has_shape(int code)
{
    switch (code) { BCD_KERNEL_KINDS(BCD_KIND_SHAPE_CASE) }
    return 0;
}

#endif
