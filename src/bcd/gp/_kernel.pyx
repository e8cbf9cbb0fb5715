"""Compiled evaluation of covariance functions.

Every kernel of :mod:`bcd.gp.kernels` is flattened into a sum of terms, each
a product of factors; a factor is one of the kinds of the table in
``kernels/kinds.h`` (squared exponential, Matern 3/2 and 5/2, periodic,
locally periodic, Hamming, histogram intersection, rational quadratic),
where each kind's code, metric, formula and derivatives are written once,
for this module and for the per-instruction-set loops of ``_kloops.h``
alike.  :func:`kinds` lists the table.  A term is multiplied by the product
of its factors' variances.  Each factor reads one "metric" of the pair of
inputs: the squared distance of inputs scaled per dimension, the weighted
number of mismatching features (on integer codes) or the sum of the
coordinatewise minima (on non-negative inputs).

With a gradient map (:meth:`CyKernelEvaluator.set_gradient_map`) the
evaluator also contracts weights with the derivatives of the entries with
respect to the logarithms of the kernel's parameters (:meth:`grad_contract`,
:meth:`grad_diagonal`), without storing the derivative matrices.
"""
import os

import numpy as np
cimport cython

from bcd._resources import resolve_threads, usable_cores
from cython.parallel cimport prange, parallel, threadid
from libc.math cimport sqrt
from libc.stdlib cimport malloc, calloc, free

cdef extern from "_vexp.h" nogil:
    double bcd_exp(double x)
    double bcd_sin2pi(double t)
    double bcd_sin_2pi(double t)
    # the array loops, one copy per instruction set (see _vexp.h)
    cdef struct bcd_kernel_loops:
        void (*sqdist)(const double* G, Py_ssize_t ldg, const double* z, Py_ssize_t dim,
                       double* s, Py_ssize_t w) noexcept nogil
        void (*se)(const double* G, Py_ssize_t ldg, const double* z, Py_ssize_t dim, double a,
                   double p, double* out, Py_ssize_t w) noexcept nogil
        void (*hamming)(const double* G, Py_ssize_t ldg, const double* z, const double* wt,
                        Py_ssize_t dim, double* s, Py_ssize_t w) noexcept nogil
        void (*minsum)(const double* G, Py_ssize_t ldg, const double* z, Py_ssize_t dim,
                       double* s, Py_ssize_t w) noexcept nogil
        void (*factor_mul)(int code, const double* s, double a, double b, double c, double* out,
                           Py_ssize_t w) noexcept nogil
        void (*scaled_exp)(const double* s, double a, double p, double* out,
                           Py_ssize_t w) noexcept nogil
        double (*se_dot)(const double* G, Py_ssize_t ldg, const double* z, Py_ssize_t dim,
                         double a, double p, const double* wv, Py_ssize_t w) noexcept nogil
    const bcd_kernel_loops* bcd_kl
    int bcd_isa_available(int isa)
    int bcd_isa_best()
    int bcd_kernel_loops_select(int isa)

# the table of kinds (kernels/kinds.h, included by _vexp.h)
cdef extern from "_vexp.h" nogil:
    enum:
        BCD_N_KINDS
        BCD_METRIC_SQUARED
        BCD_METRIC_HAMMING
        BCD_METRIC_MIN
        BCD_GRAD_NONE
        BCD_GRAD_RADIAL
        BCD_GRAD_SCALAR
        BCD_GRAD_HAMMING
        BCD_KIND_SQUARED_EXPONENTIAL
    double bcd_kind_value(int code, double s, double a, double b, double c)
    double bcd_kind_dlength(int code, double s, double a, double b, double c)
    double bcd_kind_dshape(int code, double s, double a, double b, double c)
    const char* bcd_kind_name(int code)
    int bcd_kind_metric(int code)
    int bcd_kind_gradient(int code)
    int bcd_kind_has_shape(int code)

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int bcd_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int bcd_max_threads(void) { return 1; }
    #endif
    """
    int bcd_max_threads() nogil

# rows evaluated together by one thread (the inputs of a tile stay in cache)
cdef enum:
    TILE = 256
    # columns evaluated against one tile of rows before the next tile
    COL_BLOCK = 32
    # kernel entries below which a call runs on one thread: waking the
    # others would cost more than it saves
    PARALLEL_MIN = 4096
    # the same for entries evaluated one by one (several times dearer)
    PARALLEL_MIN_ENTRIES = 8192
    # a multiple of the columns every vectorized loop of the kernels takes at
    # once (_vexp.h: BCD_NV * BCD_VL is at most 64, and each loop's smaller
    # steps divide it)
    LANE_CHUNK = 64
    # at most this many blocks of rows in gemv_symmetric (its partial sums
    # take SYM_BLOCKS / 2 doubles per row)
    SYM_BLOCKS = 64
    # and at least this many rows per block
    SYM_ROWS = 64
    # columns from which K[:, cols] w is summed row by row (squared
    # exponential), and the columns a tile of rows meets at a time
    SE_DOT_MIN = 8
    DOT_COLS = 512

# kinds of metrics and forms of the length-scale derivative (kernels/kinds.h)
METRIC_SQUARED = BCD_METRIC_SQUARED
METRIC_HAMMING = BCD_METRIC_HAMMING
METRIC_MIN = BCD_METRIC_MIN
GRAD_NONE = BCD_GRAD_NONE
GRAD_RADIAL = BCD_GRAD_RADIAL
GRAD_SCALAR = BCD_GRAD_SCALAR
GRAD_HAMMING = BCD_GRAD_HAMMING


def kinds():
    """The table of kinds of kernel factors compiled from ``kernels/kinds.h``:
    one ``(name, code, metric, gradient, has_shape)`` per kind, in code
    order (``metric``: METRIC_*, ``gradient``: the form of the length-scale
    derivative, GRAD_*; ``has_shape``: whether it has a shape parameter
    such as a period)."""
    return [(bcd_kind_name(c).decode("ascii"), c, bcd_kind_metric(c), bcd_kind_gradient(c),
             bool(bcd_kind_has_shape(c))) for c in range(BCD_N_KINDS)]


#: kind name -> code, from the table
KIND_CODES = {row[0]: row[1] for row in kinds()}


#: the instruction-set paths of the array loops, in the order of _vexp.h
ISA_NAMES = ("generic", "avx2", "avx512")


def available_isas():
    """The instruction-set paths this CPU and build can run, narrowest first."""
    return tuple(name for code, name in enumerate(ISA_NAMES) if bcd_isa_available(code))


def _select_isa():
    """Choose the loops' instruction-set path once, at import: the widest the
    CPU runs, or the one named by the environment variable BCD_KERNEL_ISA
    (``auto``, ``generic``, ``avx2`` or ``avx512``), e.g. to measure or test
    the AVX2 path on an AVX-512 machine."""
    value = os.environ.get("BCD_KERNEL_ISA", "auto").strip().lower()
    if value in ("", "auto"):
        code = bcd_isa_best()
    elif value not in ISA_NAMES:
        raise ValueError(f"BCD_KERNEL_ISA must be one of 'auto', 'generic', 'avx2' or "
                         f"'avx512', got {value!r}.")
    elif value not in available_isas():
        raise ValueError(f"BCD_KERNEL_ISA={value!r} is not available on this CPU or build; "
                         f"available: {', '.join(available_isas())}.")
    else:
        code = ISA_NAMES.index(value)
    bcd_kernel_loops_select(code)
    return ISA_NAMES[code]


_ISA = _select_isa()


def kernel_isa():
    """The instruction-set path of the compiled kernels' loops in use: one of
    ``"generic"``, ``"avx2"`` (x86-64-v3: AVX2 and FMA), ``"avx512"``
    (x86-64-v4).  Chosen at import as the widest the CPU runs, or set by
    the environment variable ``BCD_KERNEL_ISA``."""
    return _ISA


def max_threads():
    """Threads used by default: the usable cores (``OMP_NUM_THREADS``, the
    cgroup's CPU quota and the affinity mask, ``bcd._resources.usable_cores``)
    capped by OpenMP's limit (which threadpoolctl sets); 1 without OpenMP,
    and in a child forked after parallel loops ran (see :mod:`bcd._resources`)."""
    return resolve_threads(None, min(bcd_max_threads(), usable_cores()))


cdef inline Py_ssize_t _lower_width(Py_ssize_t r, Py_ssize_t n) noexcept nogil:
    """The columns row r of a symmetric n x n block is evaluated over to
    cover its entries up to the diagonal: whole chunks of ``LANE_CHUNK``,
    or all n where the chunks would reach the last partial one, so that
    each entry is computed by the same vector lane as in the whole row."""
    cdef Py_ssize_t width = (r + LANE_CHUNK) // LANE_CHUNK * LANE_CHUNK
    return n if width > n - n % LANE_CHUNK else width


cdef inline double _dot(const double* v, const double* w, Py_ssize_t n) noexcept nogil:
    """sum_{c < n} v[c] w[c] by four partial sums, added in a fixed order."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t c, k4 = n - n % 4
    for c in range(0, k4, 4):
        a0 += v[c] * w[c]
        a1 += v[c + 1] * w[c + 1]
        a2 += v[c + 2] * w[c + 2]
        a3 += v[c + 3] * w[c + 3]
    for c in range(k4, n):
        a0 += v[c] * w[c]
    return (a0 + a1) + (a2 + a3)


@cython.final
cdef class CyKernelEvaluator:

    def __init__(self, spec, X1, X2=None, n_threads=None):
        """``spec`` is ``(terms, scalings)`` or ``(terms, scalings, kinds)``:
        ``terms`` a list of lists of factors ``(code, variance, metric index,
        a, b, c)`` (the kind's code and parameters, see kernels/kinds.h),
        ``scalings`` a list of per-dimension vectors, one per metric, and
        ``kinds`` the metrics' kinds (default all squared distances).  A
        squared-distance metric multiplies the inputs by its vector, a
        Hamming metric weighs the mismatches with it; a min-sum metric does
        not use it."""
        terms, scalings = spec[0], spec[1]
        kinds = spec[2] if len(spec) > 2 else [METRIC_SQUARED] * len(scalings)
        X1 = np.asarray(X1, dtype=np.float64)
        same = X2 is None
        X2 = X1 if same else np.asarray(X2, dtype=np.float64)
        self.n1, self.dim = X1.shape
        self.n2 = X2.shape[0]
        self.n_metrics = len(scalings)
        S = np.asarray(scalings, dtype=np.float64).reshape(self.n_metrics, self.dim)
        K = np.asarray(kinds, dtype=np.int32).reshape(self.n_metrics)
        self.m_kind = K
        self.m_weight = np.ascontiguousarray(S)
        # inputs are scaled for squared-distance metrics only
        S = np.where((K == METRIC_SQUARED)[:, None], S, 1.0)
        # (metric, dim, sample): each metric's scaled inputs, dimension-major
        A1 = np.ascontiguousarray(S[:, :, None] * X1.T[None, :, :])
        A2 = A1 if same else np.ascontiguousarray(S[:, :, None] * X2.T[None, :, :])
        self.X1 = A1
        self.X2 = A2
        B1 = np.ascontiguousarray(A1.transpose(0, 2, 1))
        B2 = B1 if same else np.ascontiguousarray(A2.transpose(0, 2, 1))
        self.R1 = B1
        self.R2 = B2
        ptr, coef, code, metric, pa, pb, pc, grad = [0], [], [], [], [], [], [], []
        for term in terms:
            c = 1.0
            for (kind, variance, m, a, b, cc) in term:
                if not 0 <= kind < BCD_N_KINDS:
                    raise ValueError(f"unknown kernel kind {kind}; the kinds are "
                                     f"{', '.join(KIND_CODES)}.")
                c *= variance
                code.append(kind)
                metric.append(m)
                pa.append(a)
                pb.append(b)
                pc.append(cc)
                grad.append(bcd_kind_gradient(kind))
            coef.append(c)
            ptr.append(len(code))
        self.term_ptr = np.asarray(ptr, dtype=np.int32)
        self.term_coef = np.asarray(coef, dtype=np.float64)
        self.f_code = np.asarray(code, dtype=np.int32)
        self.f_metric = np.asarray(metric, dtype=np.int32)
        self.f_a = np.asarray(pa, dtype=np.float64)
        self.f_b = np.asarray(pb, dtype=np.float64)
        self.f_c = np.asarray(pc, dtype=np.float64)
        self.f_grad = np.asarray(grad, dtype=np.int32)
        self.diag_value = float(np.sum(coef))
        self.single_se = len(code) == 1 and code[0] == BCD_KIND_SQUARED_EXPONENTIAL
        self.symmetric = same
        self.n_threads = resolve_threads(n_threads, min(bcd_max_threads(), usable_cores()))
        self._keep = (A1, A2, B1, B2)
        self.n_params = 0

    cdef void tile(self, Py_ssize_t j, Py_ssize_t i0, Py_ssize_t i1, double* sq,
                   double* out) noexcept nogil:
        """out[0:i1-i0] = k(x1_i, x2_j) for i in [i0, i1); ``sq`` holds
        (n_metrics + 1) * (i1 - i0) doubles of scratch."""
        self.values(&self.X1[0, 0, i0], self.dim * self.n1, self.n1, &self.R2[0, j, 0],
                    self.n2 * self.dim, i1 - i0, sq, out)

    cdef void values(self, const double* G, Py_ssize_t gstride, Py_ssize_t ldg,
                     const double* z, Py_ssize_t zstride, Py_ssize_t w, double* sq,
                     double* out) noexcept nogil:
        """out[0:w] = k(z, g_i) for w inputs g_i stored dimension-major
        (metric m's coordinate k of g_i at ``G[m * gstride + k * ldg + i]``)
        and one input z stored row-wise (metric m's row at ``z + m *
        zstride``); ``sq`` holds (n_metrics + 1) * w doubles of scratch."""
        cdef Py_ssize_t m, i, t, f
        cdef int kind
        cdef double* tv = sq + self.n_metrics * w
        cdef double* dest
        if self.single_se:
            # the common case: distances and exponentials in one pass
            m = self.f_metric[0]
            bcd_kl.se(G + m * gstride, ldg, z + m * zstride, self.dim, -0.5, self.term_coef[0],
                      out, w)
            return
        for m in range(self.n_metrics):
            kind = self.m_kind[m]
            if kind == BCD_METRIC_SQUARED:
                bcd_kl.sqdist(G + m * gstride, ldg, z + m * zstride, self.dim, sq + m * w, w)
            elif kind == BCD_METRIC_HAMMING:
                bcd_kl.hamming(G + m * gstride, ldg, z + m * zstride, &self.m_weight[m, 0],
                               self.dim, sq + m * w, w)
            else:
                bcd_kl.minsum(G + m * gstride, ldg, z + m * zstride, self.dim, sq + m * w, w)
        # each term's product built in place (the first term in out, the
        # others in tv then added), one vectorized loop per factor
        for t in range(self.term_ptr.shape[0] - 1):
            dest = out if t == 0 else tv
            for i in range(w):
                dest[i] = self.term_coef[t]
            for f in range(self.term_ptr[t], self.term_ptr[t + 1]):
                bcd_kl.factor_mul(self.f_code[f], sq + self.f_metric[f] * w, self.f_a[f],
                                  self.f_b[f], self.f_c[f], dest, w)
            if t > 0:
                for i in range(w):
                    out[i] += tv[i]

    cdef void gather(self, const int* cols, Py_ssize_t nc, double* G, Py_ssize_t ldg) noexcept nogil:
        """Copy the inputs of X2 rows ``cols`` to G, laid out (metric, dim, ldg)."""
        cdef Py_ssize_t m, k, c
        for m in range(self.n_metrics):
            for k in range(self.dim):
                for c in range(nc):
                    G[(m * self.dim + k) * ldg + c] = self.X2[m, k, cols[c]]

    cdef void entries_gathered(self, const int* rows, Py_ssize_t nr, const double* G,
                               Py_ssize_t ldg, Py_ssize_t nc, double* out) noexcept nogil:
        """out[r * nc + c] = k(x1_{rows[r]}, g_c) for inputs g_c gathered by
        :meth:`gather`: each row is evaluated vectorized over the columns."""
        cdef Py_ssize_t r
        cdef double* sq
        cdef int nt = self.n_threads if nr * nc >= PARALLEL_MIN else 1
        with parallel(num_threads=nt):
            sq = <double*>malloc((self.n_metrics + 1) * nc * sizeof(double))
            for r in prange(nr, schedule="static"):
                self.rows_gathered(rows + r, 1, G, ldg, nc, sq, out + r * nc)
            free(sq)

    cdef void entries_gathered_lower(self, const int* rows, Py_ssize_t nr, const double* G,
                                     Py_ssize_t ldg, double* out) noexcept nogil:
        """The entries (r, c), c <= r, of :meth:`entries_gathered` for nr
        gathered columns (a symmetric block: row r against the first r + 1
        columns), about half the work.  Each row is evaluated over a prefix
        of whole chunks of ``LANE_CHUNK`` columns (or over all of them), so
        every entry is bitwise the one the whole row gives; entries past
        the diagonal within that prefix are written too."""
        cdef Py_ssize_t r
        cdef double* sq
        cdef int nt = self.n_threads if nr * nr >= 2 * PARALLEL_MIN else 1
        with parallel(num_threads=nt):
            sq = <double*>malloc((self.n_metrics + 1) * nr * sizeof(double))
            # rows of growing length: dealt out one at a time, in turn
            for r in prange(nr, schedule="static", chunksize=1):
                self.rows_gathered(rows + r, 1, G, ldg, _lower_width(r, nr), sq,
                                   out + r * nr)
            free(sq)

    cdef void rows_gathered(self, const int* rows, Py_ssize_t nr, const double* G,
                            Py_ssize_t ldg, Py_ssize_t nc, double* sq,
                            double* out) noexcept nogil:
        """:meth:`entries_gathered` on the calling thread alone, with scratch
        ``sq`` of ``(n_metrics + 1) * nc`` doubles: for callers that share
        the rows among their own threads."""
        cdef Py_ssize_t r
        for r in range(nr):
            self.values(G, self.dim * ldg, ldg, &self.R1[0, rows[r], 0], self.n1 * self.dim,
                        nc, sq, out + r * nc)

    cdef int threads_for(self, Py_ssize_t work) noexcept nogil:
        """Threads for a call evaluating ``work`` kernel entries."""
        return self.n_threads if work >= PARALLEL_MIN else 1

    cdef double metric(self, Py_ssize_t m, const double* a, const double* b) noexcept nogil:
        """Metric ``m`` between two input rows (as stored for that metric)."""
        cdef Py_ssize_t k
        cdef double s = 0.0, diff
        cdef int kind = self.m_kind[m]
        if kind == BCD_METRIC_SQUARED:
            for k in range(self.dim):
                diff = a[k] - b[k]
                s += diff * diff
        elif kind == BCD_METRIC_HAMMING:
            for k in range(self.dim):
                if a[k] != b[k]:
                    s += self.m_weight[m, k]
        else:
            for k in range(self.dim):
                s += a[k] if a[k] < b[k] else b[k]
        return s

    cdef double value(self, const double* sp) noexcept nogil:
        """Kernel value from the metrics ``sp[m]`` of a pair."""
        cdef Py_ssize_t t, f
        cdef double p, total = 0.0
        for t in range(self.term_ptr.shape[0] - 1):
            p = self.term_coef[t]
            for f in range(self.term_ptr[t], self.term_ptr[t + 1]):
                p *= bcd_kind_value(self.f_code[f], sp[self.f_metric[f]], self.f_a[f],
                                    self.f_b[f], self.f_c[f])
            total += p
        return total

    cdef double pair(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """k(x1_i, x2_j)."""
        cdef Py_ssize_t m
        cdef double total
        cdef double sq[16]
        cdef double* sp = sq
        if self.n_metrics > 16:
            sp = <double*>malloc(self.n_metrics * sizeof(double))
        for m in range(self.n_metrics):
            sp[m] = self.metric(m, &self.R1[m, i, 0], &self.R2[m, j, 0])
        total = self.value(sp)
        if sp != sq:
            free(sp)
        return total

    cdef double self_pair(self, Py_ssize_t i) noexcept nogil:
        """k(x1_i, x1_i)."""
        cdef Py_ssize_t m
        cdef double total
        cdef double sq[16]
        cdef double* sp = sq
        if self.n_metrics > 16:
            sp = <double*>malloc(self.n_metrics * sizeof(double))
        for m in range(self.n_metrics):
            sp[m] = self.metric(m, &self.R1[m, i, 0], &self.R1[m, i, 0])
        total = self.value(sp)
        if sp != sq:
            free(sp)
        return total

    cdef void grad_pair(self, const double* a, Py_ssize_t sa, const double* b, Py_ssize_t sb,
                        double weight, double* sp, double* g) noexcept nogil:
        """g[p] += weight * dk(a, b) / dlog(theta_p) for a pair of inputs
        stored row-wise: metric m's row of the first input is ``a + m * sa``,
        of the second ``b + m * sb``; ``sp`` is scratch for the metrics."""
        cdef Py_ssize_t m, t, f, k, mf
        cdef double term, h, u, w, pa, pb, pc, sm
        cdef const double* am
        cdef const double* bm
        cdef int code, form
        for m in range(self.n_metrics):
            sp[m] = self.metric(m, a + m * sa, b + m * sb)
        for t in range(self.term_ptr.shape[0] - 1):
            term = self.term_coef[t]
            for f in range(self.term_ptr[t], self.term_ptr[t + 1]):
                term *= bcd_kind_value(self.f_code[f], sp[self.f_metric[f]], self.f_a[f],
                                       self.f_b[f], self.f_c[f])
            w = weight * term
            if w == 0.0:
                continue
            for f in range(self.term_ptr[t], self.term_ptr[t + 1]):
                if self.g_var[f] >= 0:
                    g[self.g_var[f]] += w
                code = self.f_code[f]
                form = self.f_grad[f]
                mf = self.f_metric[f]
                sm = sp[mf]
                pa, pb, pc = self.f_a[f], self.f_b[f], self.f_c[f]
                am = a + mf * sa
                bm = b + mf * sb
                if form == BCD_GRAD_RADIAL:
                    # d/dlog l_k of a factor of s = sum_k u_k^2: k h(s) u_k^2
                    h = bcd_kind_dlength(code, sm, pa, pb, pc)
                    for k in range(self.dim):
                        if self.g_len[f, k] >= 0:
                            u = am[k] - bm[k]
                            g[self.g_len[f, k]] += w * h * u * u
                elif form == BCD_GRAD_SCALAR:
                    if self.g_len[f, 0] >= 0:
                        g[self.g_len[f, 0]] += w * bcd_kind_dlength(code, sm, pa, pb, pc)
                elif form == BCD_GRAD_HAMMING:
                    for k in range(self.dim):
                        if self.g_len[f, k] >= 0 and am[k] != bm[k]:
                            g[self.g_len[f, k]] -= w * self.m_weight[mf, k]
                if self.g_shape[f] >= 0:
                    g[self.g_shape[f]] += w * bcd_kind_dshape(code, sm, pa, pb, pc)

    cdef void gemv_cols(self, const int* cols, const double* w, Py_ssize_t m,
                        double* out) noexcept nogil:
        """out[i] += sum_a k(x1_i, x2_{cols[a]}) w[a] for every row i of X1
        (NumPy: ``out += K[:, cols] @ w``), in parallel over tiles of rows;
        columns with w[a] = 0 are skipped."""
        cdef Py_ssize_t n_tiles = (self.n1 + TILE - 1) // TILE
        cdef Py_ssize_t t, a, i, i0, i1
        cdef double* sq
        cdef double* kv
        cdef double wa
        cdef int nt = self.threads_for(self.n1 * m)
        if self.single_se and m >= SE_DOT_MIN and self._se_gemv(cols, w, m, out, nt):
            return
        with parallel(num_threads=nt):
            sq = <double*>malloc((self.n_metrics + 1) * TILE * sizeof(double))
            kv = <double*>malloc(TILE * sizeof(double))
            for t in prange(n_tiles, schedule="static"):
                i0 = t * TILE
                i1 = min(i0 + TILE, self.n1)
                for a in range(m):
                    wa = w[a]
                    if wa == 0.0:
                        continue
                    self.tile(cols[a], i0, i1, sq, kv)
                    for i in range(i1 - i0):
                        out[i0 + i] += wa * kv[i]
            free(sq)
            free(kv)

    cdef bint gemv_symmetric(self, const int* cols, const double* w, Py_ssize_t m,
                             const int* others, Py_ssize_t n_others,
                             double* out) noexcept nogil:
        """:meth:`gemv_cols` for the kernel of one set of inputs with itself
        (``symmetric``), where ``cols`` are distinct and ``others`` are the
        remaining rows: out[i] += sum_a k(x_i, x_{cols[a]}) w[a] for i in
        ``cols`` and ``others``.  K[cols, cols] is symmetric: its rows are
        evaluated over one triangle (as in :meth:`entries_gathered_lower`),
        each entry used for its row and, through per-block partial sums, for
        its column; the rows of ``others`` are evaluated whole.  About half
        the entries of :meth:`gemv_cols` where ``cols`` are most rows.

        Rows are taken in blocks of at least ``SYM_ROWS``, at most
        ``SYM_BLOCKS`` blocks; the partial sums of the columns (block I
        holds those of its rows against the columns before its end) are
        added in the order of the blocks, and every sum runs in a fixed
        order, so the result does not depend on the thread count.  False,
        with nothing done, when out of memory."""
        cdef Py_ssize_t rb = max(<Py_ssize_t>SYM_ROWS, (m + SYM_BLOCKS - 1) // SYM_BLOCKS)
        cdef Py_ssize_t n_blocks = (m + rb - 1) // rb
        cdef Py_ssize_t partial_size = 0
        cdef Py_ssize_t I, r, c, i0, i1, b
        cdef int nt = self.threads_for(m * (m // 2 + n_others)), t
        cdef double* G = <double*>malloc(max(1, self.n_metrics * self.dim * m) * sizeof(double))
        cdef double* rowsum = <double*>malloc(m * sizeof(double))
        cdef Py_ssize_t* offset = <Py_ssize_t*>malloc((n_blocks + 1) * sizeof(Py_ssize_t))
        cdef double* partial = NULL
        cdef double* scratch = NULL
        cdef Py_ssize_t per_thread = (self.n_metrics + 2) * m
        cdef double* sq
        cdef double* v
        cdef double* P
        cdef double wr, total
        if G != NULL and offset != NULL and rowsum != NULL:
            for I in range(n_blocks):
                offset[I] = partial_size
                partial_size += min((I + 1) * rb, m)
            offset[n_blocks] = partial_size
            partial = <double*>calloc(max(1, partial_size), sizeof(double))
            scratch = <double*>malloc(nt * per_thread * sizeof(double))
        if G == NULL or offset == NULL or rowsum == NULL or partial == NULL or scratch == NULL:
            free(G)
            free(rowsum)
            free(offset)
            free(partial)
            free(scratch)
            return False
        self.gather(cols, m, G, m)
        with parallel(num_threads=nt):
            t = threadid()
            sq = scratch + t * per_thread
            v = sq + (self.n_metrics + 1) * m
            # the blocks of the longest rows first (dynamic: rows of growing length)
            for b in prange(n_blocks + n_others, schedule="dynamic"):
                if b < n_blocks:
                    I = n_blocks - 1 - b
                    i0 = I * rb
                    i1 = min(i0 + rb, m)
                    P = partial + offset[I]
                    for r in range(i0, i1):
                        self.rows_gathered(cols + r, 1, G, m, _lower_width(r, m), sq, v)
                        wr = w[r]
                        rowsum[r] = _dot(v, w, r) + v[r] * wr
                        for c in range(r):
                            P[c] += v[c] * wr
                else:
                    # a row outside cols, against all of them
                    r = b - n_blocks
                    self.rows_gathered(others + r, 1, G, m, m, sq, v)
                    out[others[r]] += _dot(v, w, m)
        # each row's sum, then its column's partial sums in the blocks' order
        for c in prange(m, schedule="static", num_threads=nt):
            total = rowsum[c]
            for I in range(c // rb, n_blocks):
                total = total + partial[offset[I] + c]
            out[cols[c]] += total
        free(G)
        free(rowsum)
        free(offset)
        free(partial)
        free(scratch)
        return True

    cdef bint _se_gemv(self, const int* cols, const double* w, Py_ssize_t m, double* out,
                       int nt) noexcept nogil:
        """:meth:`gemv_cols` for a squared-exponential kernel, row by row:
        the columns' inputs gathered once, each row's entries summed
        against w as they are evaluated (a row is a dot product, not a
        buffer to write and read back).  Tiles of rows meet the columns
        DOT_COLS at a time, whose inputs stay in cache over the tile.
        False, and nothing done, when out of memory."""
        cdef Py_ssize_t a, c = 0, i, k, t, b0, nb, mt = self.f_metric[0]
        cdef Py_ssize_t n_tiles = (self.n1 + TILE - 1) // TILE
        cdef double* G = <double*>malloc(m * (self.dim + 1) * sizeof(double))
        cdef double* wz
        if G == NULL:
            return False
        wz = G + m * self.dim
        for a in range(m):
            if w[a] != 0.0:
                for k in range(self.dim):
                    G[k * m + c] = self.X2[mt, k, cols[a]]
                wz[c] = w[a]
                c += 1
        for t in prange(n_tiles, schedule="static", num_threads=nt):
            b0 = 0
            while b0 < c:
                nb = min(<Py_ssize_t>DOT_COLS, c - b0)
                for i in range(t * TILE, min((t + 1) * TILE, self.n1)):
                    out[i] += bcd_kl.se_dot(G + b0, m, &self.R1[mt, i, 0], self.dim, -0.5,
                                            self.term_coef[0], wz + b0, nb)
                b0 = b0 + nb
        free(G)
        return True

    cdef void columns(self, const int* cols, Py_ssize_t m, double* out) noexcept nogil:
        """out[a * n1 + i] = k(x1_i, x2_{cols[a]}): whole columns, one after
        the other (column-major ``K[:, cols]``), in parallel over columns."""
        self.columns_to(cols, m, out, NULL)

    cdef void columns_to(self, const int* cols, Py_ssize_t m, double* base,
                         const int* slot) noexcept nogil:
        """Column ``cols[a]`` into ``base + slot[a] * n1`` (``slot`` NULL: a).

        Blocks of columns run in parallel; within a block, each tile of
        rows is evaluated against every column of the block before the
        next tile, so that the tile's inputs are read from L1 (column by
        column over all rows, they would be reloaded from L2 per column)."""
        cdef Py_ssize_t a, b, a1, i0, i1
        cdef Py_ssize_t n_threads = self.threads_for(self.n1 * m)
        # columns per block: at most COL_BLOCK, and enough blocks to balance
        cdef Py_ssize_t cb = max(1, min(<Py_ssize_t>COL_BLOCK, m // (4 * n_threads)))
        cdef Py_ssize_t n_blocks = (m + cb - 1) // cb
        cdef double* sq
        cdef double* out
        with parallel(num_threads=n_threads):
            sq = <double*>malloc((self.n_metrics + 1) * TILE * sizeof(double))
            for b in prange(n_blocks, schedule="dynamic"):
                a1 = min((b + 1) * cb, m)
                i0 = 0
                while i0 < self.n1:
                    i1 = min(i0 + TILE, self.n1)
                    for a in range(b * cb, a1):
                        out = base + (slot[a] if slot != NULL else a) * self.n1
                        self.tile(cols[a], i0, i1, sq, out + i0)
                    i0 = i1
            free(sq)

    cdef void entries(self, const int* rows, Py_ssize_t nr, const int* cols, Py_ssize_t nc,
                      double* out) noexcept nogil:
        """out[r * nc + c] = k(x1_{rows[r]}, x2_{cols[c]}) (row-major)."""
        cdef Py_ssize_t r, c
        cdef int nt = self.n_threads if nr * nc >= PARALLEL_MIN_ENTRIES else 1
        for r in prange(nr, schedule="static", num_threads=nt):
            for c in range(nc):
                out[r * nc + c] = self.pair(rows[r], cols[c])

    # ------------------------------------------------------------ Python
    def matrix(self):
        """The dense n1 x n2 matrix."""
        out = np.empty((self.n2, self.n1))
        cdef double[:, ::1] o = out
        cdef int[::1] cols = np.arange(self.n2, dtype=np.int32)
        if self.n1 and self.n2:
            with nogil:
                self.columns(&cols[0], self.n2, &o[0, 0])
        return out.T

    def matvec(self, w, cols=None, bint symmetric=False):
        """``K[:, cols] @ w`` (all columns when ``cols`` is None), without
        forming K; with ``symmetric`` (a kernel of one set of inputs, distinct
        ``cols``), by :meth:`gemv_symmetric`."""
        cdef int[::1] c = (np.arange(self.n2, dtype=np.int32) if cols is None
                           else np.ascontiguousarray(cols, dtype=np.int32))
        cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
        out = np.zeros(self.n1)
        cdef double[::1] o = out
        cdef int[::1] rest
        cdef bint done = False
        if c.shape[0] != wv.shape[0]:
            raise ValueError("w must have one entry per column.")
        if symmetric:
            if not self.symmetric or np.unique(c).shape[0] != c.shape[0]:
                raise ValueError("symmetric=True needs the kernel of one set of inputs "
                                 "and distinct cols.")
            rest = np.setdiff1d(np.arange(self.n1), c).astype(np.int32)
            rest = np.r_[rest, np.int32(0)]          # one entry past the others
            if c.shape[0]:
                with nogil:
                    done = self.gemv_symmetric(&c[0], &wv[0], c.shape[0], &rest[0],
                                               rest.shape[0] - 1, &o[0])
                if not done:
                    raise MemoryError("no memory for the partial sums of gemv_symmetric.")
            return out
        if c.shape[0] and self.n1:
            with nogil:
                self.gemv_cols(&c[0], &wv[0], c.shape[0], &o[0])
        return out

    def matmat(self, W):
        """``K @ W`` for a dense (n2, k) W, one kernel pass per column of W
        reused across the k right-hand sides (tiles of rows in parallel)."""
        W = np.ascontiguousarray(W, dtype=np.float64)
        if W.ndim != 2 or W.shape[0] != self.n2:
            raise ValueError(f"W must have shape ({self.n2}, k).")
        cdef const double[:, ::1] Wv = W
        cdef Py_ssize_t k = W.shape[1]
        out = np.zeros((self.n1, k))
        cdef double[:, ::1] o = out
        cdef Py_ssize_t n_tiles = (self.n1 + TILE - 1) // TILE
        cdef Py_ssize_t t, j, i, c, i0, i1
        cdef double* sq
        cdef double* kv
        cdef double kij
        if k == 0 or self.n1 == 0:
            return out
        cdef int nt = self.threads_for(self.n1 * self.n2)
        with nogil, parallel(num_threads=nt):
            sq = <double*>malloc((self.n_metrics + 1) * TILE * sizeof(double))
            kv = <double*>malloc(TILE * sizeof(double))
            for t in prange(n_tiles, schedule="static"):
                i0 = t * TILE
                i1 = min(i0 + TILE, self.n1)
                for j in range(self.n2):
                    self.tile(j, i0, i1, sq, kv)
                    for i in range(i1 - i0):
                        kij = kv[i]
                        for c in range(k):
                            o[i0 + i, c] += kij * Wv[j, c]
            free(sq)
            free(kv)
        return out

    def columns_into(self, cols, out):
        """Write ``K[:, cols]`` into ``out``, an F-ordered (n1, len(cols))
        float64 array (e.g. a view of the leading columns of a larger one)."""
        cdef int[::1] c = np.ascontiguousarray(cols, dtype=np.int32)
        if not (isinstance(out, np.ndarray) and out.dtype == np.float64
                and out.flags.f_contiguous and out.ndim == 2
                and out.shape[0] == self.n1 and out.shape[1] == c.shape[0]):
            raise ValueError(f"out must be an F-ordered float64 array of shape "
                             f"({self.n1}, {c.shape[0]}).")
        if np.any(np.asarray(c) < 0) or np.any(np.asarray(c) >= self.n2):
            raise IndexError("column index out of range.")
        cdef double[::1, :] o = out
        if c.shape[0] and self.n1:
            with nogil:
                self.columns(&c[0], c.shape[0], &o[0, 0])
        return out

    def diagonal(self):
        """k(x1_i, x1_i) for every row of X1."""
        out = np.empty(self.n1)
        cdef double[::1] o = out
        cdef Py_ssize_t i
        cdef int nt = self.threads_for(self.n1 * 16)
        for i in prange(self.n1, nogil=True, schedule="static", num_threads=nt):
            o[i] = self.self_pair(i)
        return out

    def set_gradient_map(self, var_idx, len_idx, per_idx, n_params):
        """Where the derivatives go: ``var_idx[f]``, ``len_idx[f, k]`` and
        ``per_idx[f]`` are the indices (or -1) of the log-parameters of factor
        f (in the order of the spec's terms): its variance, its length-scale
        (or Hamming weight) of dimension k (a scalar length-scale: the same
        index for every k, or at k = 0 for the kinds whose length-scale is a
        parameter, GRAD_SCALAR), its shape parameter (period, alpha)."""
        nf = self.f_code.shape[0]
        var_idx = np.ascontiguousarray(var_idx, dtype=np.int32).reshape(nf)
        len_idx = np.ascontiguousarray(len_idx, dtype=np.int32).reshape(nf, self.dim)
        per_idx = np.ascontiguousarray(per_idx, dtype=np.int32).reshape(nf)
        for arr in (var_idx, len_idx, per_idx):
            if arr.size and (arr.max() >= n_params or arr.min() < -1):
                raise ValueError("gradient map index out of range.")
        # the factor's one length-scale (or Hamming weight) index where all
        # dimensions share it: its derivative is contracted with the metric
        # itself rather than dimension by dimension
        one = np.full(nf, -1, dtype=np.int32)
        for f in range(nf):
            if self.dim and (self.f_grad[f] == BCD_GRAD_SCALAR
                             or np.all(len_idx[f] == len_idx[f, 0])):
                one[f] = len_idx[f, 0]
        self.g_var = var_idx
        self.g_len = len_idx
        self.g_len1 = one
        self.g_shape = per_idx
        self.n_params = int(n_params)

    def grad_contract(self, G, Py_ssize_t row0=0, cols=None, symmetric=False):
        """``sum_{r,c} G[r, c] dk(x1_{row0 + r}, x2_{cols[c]}) / dlog(theta_p)``
        for every log-parameter p (a vector of ``n_params``); ``G`` has shape
        (rows, len(cols)) (F-ordered avoids a copy); ``cols`` defaults to all
        of X2.  ``symmetric``: G symmetric, of shape (n1, n1), and the
        evaluator built on one set of inputs (X2 None): each pair is
        evaluated once, from G's lower triangle."""
        if self.g_var is None:
            raise ValueError("set_gradient_map first.")
        cdef int[::1] c = (np.arange(self.n2, dtype=np.int32) if cols is None
                           else np.ascontiguousarray(cols, dtype=np.int32))
        Gf = np.asarray(G, dtype=np.float64)
        if symmetric:
            if Gf.ndim != 2 or Gf.shape != (self.n1, self.n2) or self.n1 != self.n2 \
                    or row0 != 0 or cols is not None:
                raise ValueError("symmetric contractions need a square G over all of X1 and X2.")
            # the lower triangle of G is read (G^T's upper, F-ordered: a view
            # of a C-ordered G)
            Gf = np.ascontiguousarray(Gf).T
        Gf = np.asfortranarray(Gf)
        if Gf.ndim != 2 or Gf.shape[1] != c.shape[0] or row0 < 0 \
                or row0 + Gf.shape[0] > self.n1:
            raise ValueError("G must have shape (rows, len(cols)) within X1.")
        if np.any(np.asarray(c) < 0) or np.any(np.asarray(c) >= self.n2):
            raise IndexError("column index out of range.")
        cdef const double[::1, :] Gv = Gf
        if Gf.shape[0] == 0 or c.shape[0] == 0:
            return np.zeros(self.n_params)
        return self._grad_run(&Gv[0, 0], Gf.shape[0], row0, Gf.shape[0], &c[0], c.shape[0],
                              NULL, NULL, 0, bool(symmetric))

    def grad_low_rank(self, U, V):
        """``sum_ij (U V^T)[i, j] dk(x1_i, x2_j) / dlog(theta_p)`` for U (n1, r)
        and V (n2, r) (1-D arrays are one column), without forming U V^T."""
        if self.g_var is None:
            raise ValueError("set_gradient_map first.")
        U = np.asarray(U, dtype=np.float64)
        V = np.asarray(V, dtype=np.float64)
        if U.ndim == 1:
            U = U[:, None]
        if V.ndim == 1:
            V = V[:, None]
        if U.shape[0] != self.n1 or V.shape[0] != self.n2 or U.shape[1] != V.shape[1]:
            raise ValueError(f"U must have shape ({self.n1}, r) and V ({self.n2}, r).")
        cdef const double[:, ::1] Ut = np.ascontiguousarray(U.T)
        cdef const double[:, ::1] Vc = np.ascontiguousarray(V)
        cdef int[::1] c = np.arange(self.n2, dtype=np.int32)
        if self.n1 == 0 or self.n2 == 0 or U.shape[1] == 0:
            return np.zeros(self.n_params)
        return self._grad_run(NULL, 0, 0, self.n1, &c[0], self.n2, &Ut[0, 0], &Vc[0, 0],
                              U.shape[1], False)

    cdef object _grad_run(self, const double* G, Py_ssize_t ldg, Py_ssize_t row0,
                          Py_ssize_t nr, const int* cols, Py_ssize_t nc, const double* Ut,
                          const double* V, Py_ssize_t rank, bint symmetric):
        """``sum_{r < nr, c < nc} W[r, c] dk(x1_{row0 + r}, x2_{cols[c]}) /
        dlog(theta_p)`` with W's column c at ``G + c * ldg`` or, ``Ut`` not
        NULL, W = U V^T (U^T row-major (rank, nr), V row-major (nc, rank));
        ``symmetric``: W and K symmetric, pairs with c >= r only.

        Tiles of rows run in parallel, each column of a tile vectorized over
        its rows; each tile adds into its own row of partial sums, added in a
        fixed order, so the result does not depend on the number of threads."""
        cdef Py_ssize_t n_tiles = (nr + TILE - 1) // TILE, P = self.n_params
        partial = np.zeros((max(n_tiles, 1), max(P, 1)))
        cdef double[:, ::1] part = partial
        cdef Py_ssize_t t, j, i, q, i0, i1, j0
        cdef double* scratch
        cdef double* wv
        cdef const double* gw
        cdef int nt = self.threads_for(nr * nc * 4)
        if nr == 0 or nc == 0 or P == 0:
            return np.zeros(P)
        with nogil, parallel(num_threads=nt):
            scratch = <double*>malloc((self.n_metrics + 4) * TILE * sizeof(double))
            wv = <double*>malloc(TILE * sizeof(double))
            for t in prange(n_tiles, schedule="dynamic"):
                i0 = t * TILE
                i1 = min(i0 + TILE, nr)
                j0 = i0 if symmetric else 0
                for j in range(j0, nc):
                    if Ut != NULL:
                        for i in range(i1 - i0):
                            wv[i] = 0.0
                        for q in range(rank):
                            for i in range(i1 - i0):
                                wv[i] += Ut[q * nr + i0 + i] * V[j * rank + q]
                        gw = wv
                    elif symmetric:
                        # pairs below the diagonal stand for those above
                        for i in range(i1 - i0):
                            if i0 + i < j:
                                wv[i] = 2.0 * G[j * ldg + i0 + i]
                            elif i0 + i == j:
                                wv[i] = G[j * ldg + i0 + i]
                            else:
                                wv[i] = 0.0
                        gw = wv
                    else:
                        gw = G + j * ldg + i0
                    self.grad_tile(row0 + i0, row0 + i1, cols[j], gw, scratch, &part[t, 0])
            free(scratch)
            free(wv)
        return partial[:, :P].sum(axis=0)

    cdef void grad_dims(self, Py_ssize_t f, Py_ssize_t i0, Py_ssize_t w, Py_ssize_t j,
                        const double* hv, double* g) noexcept nogil:
        """g[len_idx[f, k]] += sum_i hv[i] (x1_{i0 + i, k} - x2_{j, k})^2 for
        every dimension k with a length-scale index (inputs scaled by factor
        f's metric)."""
        cdef Py_ssize_t k, i, mf = self.f_metric[f]
        cdef double acc, zk, u
        cdef const double* xk
        for k in range(self.dim):
            if self.g_len[f, k] < 0:
                continue
            xk = &self.X1[mf, k, i0]
            zk = self.R2[mf, j, k]
            acc = 0.0
            for i in range(w):
                u = xk[i] - zk
                acc += hv[i] * u * u
            g[self.g_len[f, k]] += acc

    cdef void grad_tile(self, Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t j, const double* gw,
                        double* scratch, double* g) noexcept nogil:
        """g[p] += sum_{i0 <= i < i1} gw[i - i0] dk(x1_i, x2_j) / dlog(theta_p);
        ``scratch`` holds (n_metrics + 4) * TILE doubles.

        The derivative of a factor is the term's value times a ratio that
        depends on the metric only (e.g. 3 / (1 + sqrt(3) r) for Matern
        3/2), so each term is evaluated once whatever its number of
        factors."""
        cdef Py_ssize_t w = i1 - i0, m, t, f, k, i, mf, q
        cdef double* sq = scratch
        cdef double* tv = scratch + self.n_metrics * TILE
        cdef double* wv = tv + TILE
        cdef double* hv = wv + TILE
        cdef double* rv = hv + TILE
        cdef double total, acc, zk, pa, pb, pc
        cdef const double* xk
        cdef int code, kind, form
        if self.single_se:
            # one squared exponential (SE, SE-ARD): distances and exponentials
            # in one pass, and d k / d log l_k = k u_k^2 (u: scaled differences)
            m = self.f_metric[0]
            q = self.g_len1[0]
            if q >= 0:
                bcd_kl.sqdist(&self.X1[m, 0, i0], self.n1, &self.R2[m, j, 0], self.dim, sq, w)
                bcd_kl.scaled_exp(sq, -0.5, self.term_coef[0], tv, w)
            else:
                bcd_kl.se(&self.X1[m, 0, i0], self.n1, &self.R2[m, j, 0], self.dim, -0.5,
                          self.term_coef[0], tv, w)
            total = 0.0
            for i in range(w):
                wv[i] = gw[i] * tv[i]
                total += wv[i]
            if self.g_var[0] >= 0:
                g[self.g_var[0]] += total
            if q >= 0:
                acc = 0.0
                for i in range(w):
                    acc += wv[i] * sq[i]
                g[q] += acc
            else:
                self.grad_dims(0, i0, w, j, wv, g)
            return
        for m in range(self.n_metrics):
            kind = self.m_kind[m]
            if kind == BCD_METRIC_SQUARED:
                bcd_kl.sqdist(&self.X1[m, 0, i0], self.n1, &self.R2[m, j, 0], self.dim,
                              sq + m * w, w)
            elif kind == BCD_METRIC_HAMMING:
                bcd_kl.hamming(&self.X1[m, 0, i0], self.n1, &self.R2[m, j, 0],
                               &self.m_weight[m, 0], self.dim, sq + m * w, w)
            else:
                bcd_kl.minsum(&self.X1[m, 0, i0], self.n1, &self.R2[m, j, 0], self.dim,
                              sq + m * w, w)
        for t in range(self.term_ptr.shape[0] - 1):
            for i in range(w):
                tv[i] = self.term_coef[t]
            for f in range(self.term_ptr[t], self.term_ptr[t + 1]):
                bcd_kl.factor_mul(self.f_code[f], sq + self.f_metric[f] * w, self.f_a[f],
                                  self.f_b[f], self.f_c[f], tv, w)
            total = 0.0
            for i in range(w):
                wv[i] = gw[i] * tv[i]
                total += wv[i]
            for f in range(self.term_ptr[t], self.term_ptr[t + 1]):
                if self.g_var[f] >= 0:
                    g[self.g_var[f]] += total
                code = self.f_code[f]
                form = self.f_grad[f]
                mf = self.f_metric[f]
                q = self.g_len1[f]
                pa, pb, pc = self.f_a[f], self.f_b[f], self.f_c[f]
                if form == BCD_GRAD_RADIAL:
                    # d/dlog l_k of a factor of s = sum_k u_k^2: the term
                    # times h(s) u_k^2
                    for i in range(w):
                        hv[i] = wv[i] * bcd_kind_dlength(code, sq[mf * w + i], pa, pb, pc)
                    if q >= 0:
                        acc = 0.0
                        for i in range(w):
                            acc += hv[i] * sq[mf * w + i]
                        g[q] += acc
                    else:
                        self.grad_dims(f, i0, w, j, hv, g)
                elif form == BCD_GRAD_SCALAR:
                    if q >= 0:
                        acc = 0.0
                        for i in range(w):
                            acc += wv[i] * bcd_kind_dlength(code, sq[mf * w + i], pa, pb, pc)
                        g[q] += acc
                elif form == BCD_GRAD_HAMMING:
                    # d exp(-sum_k w_k [x_k != x'_k]) / d log w_k
                    if q >= 0:
                        acc = 0.0
                        for i in range(w):
                            acc += wv[i] * sq[mf * w + i]
                        g[q] -= acc
                    else:
                        for k in range(self.dim):
                            if self.g_len[f, k] < 0:
                                continue
                            xk = &self.X1[mf, k, i0]
                            zk = self.R2[mf, j, k]
                            acc = 0.0
                            for i in range(w):
                                if xk[i] != zk:
                                    acc += wv[i]
                            g[self.g_len[f, k]] -= acc * self.m_weight[mf, k]
                if self.g_shape[f] >= 0:
                    acc = 0.0
                    for i in range(w):
                        acc += wv[i] * bcd_kind_dshape(code, sq[mf * w + i], pa, pb, pc)
                    g[self.g_shape[f]] += acc

    def grad_diagonal(self, w):
        """``sum_i w[i] dk(x1_i, x1_i) / dlog(theta_p)`` for every p."""
        if self.g_var is None:
            raise ValueError("set_gradient_map first.")
        cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
        if wv.shape[0] != self.n1:
            raise ValueError("w must have one entry per row of X1.")
        cdef Py_ssize_t P = self.n_params, i, j, tid
        cdef int nt = self.threads_for(self.n1 * 16)
        acc = np.zeros((nt, max(P, 1)))
        cdef double[:, ::1] av = acc
        cdef double* sp
        cdef double* loc
        cdef Py_ssize_t sa = self.n1 * self.dim
        if self.n1 == 0 or P == 0:
            return np.zeros(P)
        with nogil, parallel(num_threads=nt):
            sp = <double*>malloc(self.n_metrics * sizeof(double))
            loc = <double*>calloc(P, sizeof(double))
            for i in prange(self.n1, schedule="static"):
                if wv[i] != 0.0:
                    self.grad_pair(&self.R1[0, i, 0], sa, &self.R1[0, i, 0], sa, wv[i], sp, loc)
            tid = threadid()
            for j in range(P):
                av[tid, j] += loc[j]
            free(sp)
            free(loc)
        return acc.sum(axis=0)


# ------------------------------------------------------------------ gradients
@cython.final
cdef class CyKernelGradient:
    """Contractions of the kernel's derivatives with respect to its
    log-parameters: ``g[p] = sum_ij W_ij dK_ij / dtheta_p`` for every p at
    once, the entries and their derivatives evaluated on the fly by the
    evaluator's gradient contractions (:meth:`CyKernelEvaluator.grad_contract`).

    W is dense (:meth:`dense`) or of low rank, ``U V^T`` (:meth:`low_rank`).
    Work is O(n1 n2 (d + p)); the result does not depend on the number of
    threads.

    Parameters (per factor of the evaluator's flattened kernel, in order):
    index in theta of the factor's variance, of its (first) length-scale and
    of its shape parameter (period, alpha), -1 where the parameter is fixed
    or absent; ``ls_ard`` is 1
    where the factor has one length-scale per input dimension.  The
    evaluator's gradient map is set from them.
    """
    cdef CyKernelEvaluator ev
    cdef readonly Py_ssize_t n_params

    def __init__(self, CyKernelEvaluator ev, var_idx, ls_idx, ls_ard, per_idx, n_params):
        cdef Py_ssize_t nf = ev.f_code.shape[0], f
        self.ev = ev
        self.n_params = int(n_params)
        arrays = [np.ascontiguousarray(a, dtype=np.int32).ravel()
                  for a in (var_idx, ls_idx, ls_ard, per_idx)]
        for arr in arrays:
            if arr.shape[0] != nf or (arr.size and arr.max() >= max(self.n_params, 1)
                                      and arr is not arrays[2]):
                raise ValueError("one parameter index (below n_params) per kernel factor "
                                 "is needed.")
        var, ls, ard, per = arrays
        for f in range(nf):
            if ev.f_grad[f] not in (BCD_GRAD_RADIAL, BCD_GRAD_SCALAR):
                names = [row[0].lower().replace("_", " ") for row in kinds()
                         if row[3] in (BCD_GRAD_RADIAL, BCD_GRAD_SCALAR)]
                raise NotImplementedError(f"gradients are implemented for the "
                                          f"{', '.join(names)} factors only.")
        # the evaluator's map: one index per factor and dimension
        len_idx = np.full((nf, ev.dim), -1, dtype=np.int32)
        for f in range(nf):
            if ls[f] < 0 or ev.dim == 0:
                continue
            if ard[f]:
                len_idx[f] = ls[f] + np.arange(ev.dim)
            elif ev.f_grad[f] == BCD_GRAD_SCALAR:
                len_idx[f, 0] = ls[f]
            else:
                len_idx[f] = ls[f]
        ev.set_gradient_map(var, len_idx, per, self.n_params)

    def dense(self, W, symmetric=False):
        """``g[p] = sum_ij W[i, j] dK[i, j]/dtheta_p`` for a dense (n1, n2) W.

        ``symmetric=True`` (W symmetric and the evaluator built on one set
        of inputs) evaluates each pair once."""
        W = np.asarray(W, dtype=np.float64)
        if W.shape != (self.ev.n1, self.ev.n2):
            raise ValueError(f"W must have shape ({self.ev.n1}, {self.ev.n2}).")
        if symmetric and self.ev.n1 != self.ev.n2:
            raise ValueError("symmetric contractions need a square W.")
        return self.ev.grad_contract(W, symmetric=bool(symmetric))

    def low_rank(self, U, V):
        """``g[p] = sum_ij (U V^T)[i, j] dK[i, j]/dtheta_p`` for U (n1, r) and
        V (n2, r) (1-D arrays are one column), without forming U V^T."""
        return self.ev.grad_low_rank(U, V)
