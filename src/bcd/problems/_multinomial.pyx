"""Compiled state of multinomial (softmax) logistic regression."""
import numpy as np
from libc.math cimport exp, expm1, log, log1p
from scipy.linalg.cython_blas cimport dgemv

from bcd.core._problem cimport CyProblem
from bcd.core._matrix cimport CyMatrix


cdef class CyMultinomial(CyProblem):
    """f(X) = sum_i s_i [logsumexp(S_i) - S_{i, y_i}] + 1/2 sum r X^2, S = A X,
    with sample weights s (all 1 unless ``weighted``) and ridge weights r.

    X is d x k, flattened row-major: coordinate j * k + c is feature j of
    class c.  State kept up to date: the scores S, their log-sum-exp and
    W = diag(s) (P - Y) with P the probabilities (m x k), so that
    grad_{j,c} = A[:, j] . W[:, c] + r_{j,c} X_{j,c}.  A step on a block changes
    S on the rows of the block's features and the columns of its classes;
    refreshing those rows costs O(k) each (Appendix A.2 of the paper).
    """
    cdef CyMatrix A
    cdef readonly Py_ssize_t n_classes
    cdef const double[::1] sw          # sample weights, when weighted
    cdef readonly bint weighted
    cdef const int[::1] y
    cdef double[::1] S
    cdef double[::1] lse
    cdef double[::1] W                # P - Y, row-major m x k
    # the prepared direction
    cdef Py_ssize_t dir_nt, dir_ncls
    cdef double[::1] dS               # m x k, nonzero only on touched rows x block classes
    cdef int[::1] touched
    cdef int[::1] bcls                # distinct classes of the block
    cdef unsigned char[::1] cls_mark
    cdef unsigned char[::1] row_mark
    cdef double[::1] dW               # m x k
    cdef double[::1] colbuf
    cdef int[::1] feat

    def __init__(self, CyMatrix A, y, Py_ssize_t n_classes, l2, lipschitz, bint tracking,
                 Py_ssize_t max_block=1, sample_weight=None):
        if tracking and not A.has_rows:
            raise ValueError("gradient tracking needs the row view of A")
        self.A = A
        self.n_classes = n_classes
        CyProblem.__init__(self, A.n_cols * n_classes, lipschitz, tracking)
        cdef Py_ssize_t m = A.n_rows
        self.set_ridge(l2)
        self.weighted = sample_weight is not None
        if self.weighted:
            self.sw = np.ascontiguousarray(sample_weight, dtype=np.float64)
        self.y = y
        self.S = np.zeros(m * n_classes)
        self.lse = np.zeros(m)
        self.W = np.zeros(m * n_classes)
        self.dS = np.zeros(m * n_classes)
        self.dW = np.zeros(m * n_classes)
        self.touched = np.zeros(m, dtype=np.int32)
        self.row_mark = np.zeros(m, dtype=np.uint8)
        self.bcls = np.zeros(n_classes, dtype=np.int32)
        self.cls_mark = np.zeros(n_classes, dtype=np.uint8)
        self.colbuf = np.zeros(m)
        self.reserve(max_block)
        with nogil:
            self.reset()

    def reserve(self, Py_ssize_t max_block, Py_ssize_t max_dense=-1):
        grew = CyProblem.reserve(self, max_block, max_dense)
        # the base reserves one coordinate at construction: feat may not
        # exist yet even when the vectors did not grow
        if self.feat is None or self.feat.shape[0] < max(1, max_block):
            self.feat = np.zeros(max(1, max_block), dtype=np.int32)
        return grew

    # ---------------------------------------------------------------- rows
    cdef void _refresh_row(self, Py_ssize_t r, double* dw_out) noexcept nogil:
        """Recompute lse, s_r (P - Y) of row r from S; dw_out (k) gets the change."""
        cdef Py_ssize_t c, k = self.n_classes
        cdef double* S = &self.S[r * k]
        cdef double* W = &self.W[r * k]
        cdef double mx = S[0], s = 0.0, p, inv
        for c in range(1, k):
            if S[c] > mx:
                mx = S[c]
        # one exp per class: e_c = exp(S_c - max) is kept in W until normalized
        if dw_out != NULL:
            for c in range(k):
                dw_out[c] = -W[c]
        for c in range(k):
            W[c] = exp(S[c] - mx)
            s += W[c]
        self.lse[r] = mx + log(s)
        inv = 1.0 / s
        for c in range(k):
            W[c] *= inv
        W[self.y[r]] -= 1.0
        if self.weighted:
            for c in range(k):
                W[c] *= self.sw[r]
        if dw_out != NULL:
            for c in range(k):
                dw_out[c] += W[c]

    cdef void reset(self) noexcept nogil:
        cdef Py_ssize_t j, c, p, start, end, r, m = self.A.n_rows, k = self.n_classes
        cdef double a
        for r in range(m * k):
            self.S[r] = 0.0
        for j in range(self.A.n_cols):
            self.A.col_range(j, &start, &end)
            for p in range(start, end):
                r = self.A.row(p, start)
                a = self.A.values[p]
                for c in range(k):
                    self.S[r * k + c] += a * self.x[j * k + c]
        for r in range(m):
            self._refresh_row(r, NULL)
        if self.tracking:
            self.full_gradient(&self.g[0])
            self.all_dirty = True

    # -------------------------------------------------------------- oracles
    cdef double grad_coord(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t k = self.n_classes, j = i // k, c = i - j * k, p, start, end
        cdef double s = 0.0
        self.A.col_range(j, &start, &end)
        for p in range(start, end):
            s += self.A.values[p] * self.W[self.A.row(p, start) * k + c]
        return s + self.ridge_at(i) * self.x[i]

    cdef void full_gradient(self, double* out) noexcept nogil:
        cdef Py_ssize_t j, c, p, start, end, r, k = self.n_classes, m = self.A.n_rows
        cdef int k_, m_, inc = 1
        cdef double one = 1.0, zero = 0.0, a
        cdef char trans = b'N'
        for j in range(self.A.n_cols):
            if self.A.dense:
                k_ = <int>k
                m_ = <int>m
                # out[j] = W.T @ A[:, j]   (W is m x k row-major = k x m column-major)
                dgemv(&trans, &k_, &m_, &one, &self.W[0], &k_,
                      <double*>&self.A.values[j * m], &inc, &zero, &out[j * k], &inc)
            else:
                for c in range(k):
                    out[j * k + c] = 0.0
                for p in range(self.A.indptr[j], self.A.indptr[j + 1]):
                    r = self.A.indices[p]
                    a = self.A.values[p]
                    for c in range(k):
                        out[j * k + c] += a * self.W[r * k + c]
            if self.has_ridge:
                for c in range(k):
                    out[j * k + c] += self.ridge[j * k + c] * self.x[j * k + c]

    cdef double objective(self) noexcept nogil:
        cdef Py_ssize_t r, k = self.n_classes
        cdef double s = 0.0
        for r in range(self.A.n_rows):
            if self.weighted:
                s += self.sw[r] * (self.lse[r] - self.S[r * k + self.y[r]])
            else:
                s += self.lse[r] - self.S[r * k + self.y[r]]
        return s + self.ridge_value()

    cdef Py_ssize_t _split(self, const int* blk, Py_ssize_t nb) noexcept nogil:
        """Features of the block's coordinates into self.feat; returns the
        number of distinct classes in the block."""
        cdef Py_ssize_t a, c, ncls = 0, k = self.n_classes
        for a in range(nb):
            self.feat[a] = <int>(blk[a] // k)
            c = blk[a] - self.feat[a] * k
            if not self.cls_mark[c]:
                self.cls_mark[c] = 1
                ncls += 1
        for a in range(nb):
            self.cls_mark[blk[a] - self.feat[a] * k] = 0
        return ncls

    cdef bint block_hessian_bound(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        """H_b = 1/2 (I - 11'/k') (x) A_f' A_f on the block, k' = min(k, classes + 1)
        (Boehning's bound, Appendix B.4; A_f' S A_f with sample weights), plus diag(r_b)."""
        cdef Py_ssize_t a, b, k = self.n_classes
        cdef Py_ssize_t kp = min(k, self._split(blk, nb) + 1)
        cdef double inv_kp = 1.0 / kp
        self.A.gram(&self.feat[0], nb, &self.sw[0] if self.weighted else NULL, H,
                    &self.colbuf[0])
        for a in range(nb):
            for b in range(nb):
                H[a * nb + b] *= 0.5 * ((1.0 if (blk[a] - self.feat[a] * k)
                                         == (blk[b] - self.feat[b] * k) else 0.0) - inv_kp)
            H[a * nb + a] += self.ridge_at(blk[a])
        return True

    cdef bint block_hessian(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        """sum_i s_i a_ij a_ij' p_ic (delta_cc' - p_ic') on the block, plus diag(r_b)."""
        cdef Py_ssize_t a, b, p, r, start, end, k = self.n_classes, ca, cb
        cdef double s, pa, pb, si = 1.0
        cdef double* work = &self.colbuf[0]
        self._split(blk, nb)
        for a in range(nb):
            ca = blk[a] - self.feat[a] * k
            self.A.col_range(self.feat[a], &start, &end)
            for p in range(start, end):
                work[self.A.row(p, start)] = self.A.values[p]
            for b in range(a, nb):
                cb = blk[b] - self.feat[b] * k
                self.A.col_range(self.feat[b], &start, &end)
                s = 0.0
                for p in range(start, end):
                    r = self.A.row(p, start)
                    if work[r] == 0.0:
                        continue
                    if self.weighted:
                        si = self.sw[r]
                        if si == 0.0:
                            continue
                    # W = s (P - Y): p_c = W_c / s + [c = y]
                    pa = self.W[r * k + ca] / si + (1.0 if ca == self.y[r] else 0.0)
                    pb = self.W[r * k + cb] / si + (1.0 if cb == self.y[r] else 0.0)
                    s += si * work[r] * self.A.values[p] * pa * ((1.0 if ca == cb else 0.0) - pb)
                H[a * nb + b] = s
                H[b * nb + a] = s
            self.A.col_range(self.feat[a], &start, &end)
            for p in range(start, end):
                work[self.A.row(p, start)] = 0.0
            H[a * nb + a] += self.ridge_at(blk[a])
        return True

    cdef bint bound_matvec(self, const int* support, const double* v, Py_ssize_t ns,
                           double* out) noexcept nogil:
        """out = (1/2 (I - 11'/k) (x) A'SA + diag(r)) v for v supported on ``support``."""
        cdef Py_ssize_t a, c, nt, kk, r, k = self.n_classes
        cdef double mean
        if not self.A.has_rows:
            return False
        self._clear_scatter(self.dir_nt)      # a direction left prepared is dropped
        self.dir_nt = 0
        nt = self._scatter(support, ns, v)
        for kk in range(nt):
            r = self.touched[kk] if not self.A.dense else kk
            mean = 0.0
            for c in range(k):
                mean += self.dS[r * k + c]
            mean /= k
            for c in range(k):
                self.dW[r * k + c] = 0.5 * (self.dS[r * k + c] - mean)
                if self.weighted:
                    self.dW[r * k + c] *= self.sw[r]
        for a in range(self.n):
            out[a] = 0.0
        self._push(out, nt, False)
        self._clear_scatter(nt)
        for a in range(ns):
            out[support[a]] += self.ridge_at(support[a]) * v[a]
        return True

    # ----------------------------------------------------------------- steps
    cdef Py_ssize_t _scatter(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        """dS = A U_b d on the touched rows; returns their count (dense: m)."""
        cdef Py_ssize_t a, p, r, start, end, nt = 0, k = self.n_classes, j, c
        self.dir_ncls = 0
        for a in range(nb):
            j = blk[a] // k
            c = blk[a] - j * k
            if not self.cls_mark[c]:
                self.cls_mark[c] = 1
                self.bcls[self.dir_ncls] = <int>c
                self.dir_ncls += 1
            if d[a] == 0.0:
                continue
            self.A.col_range(j, &start, &end)
            for p in range(start, end):
                r = self.A.row(p, start)
                if not self.A.dense and not self.row_mark[r]:
                    self.row_mark[r] = 1
                    self.touched[nt] = <int>r
                    nt += 1
                self.dS[r * k + c] += d[a] * self.A.values[p]
        for a in range(self.dir_ncls):
            self.cls_mark[self.bcls[a]] = 0
        if self.A.dense:
            return self.A.n_rows
        for a in range(nt):
            self.row_mark[self.touched[a]] = 0
        return nt

    cdef void _clear_scatter(self, Py_ssize_t nt) noexcept nogil:
        cdef Py_ssize_t kk, a, r, k = self.n_classes
        for kk in range(nt):
            r = self.touched[kk] if not self.A.dense else kk
            for a in range(self.dir_ncls):
                self.dS[r * k + self.bcls[a]] = 0.0

    cdef void _push(self, double* out, Py_ssize_t nt, bint mark) noexcept nogil:
        """out += A[touched].T dW[touched] (all classes), marking if asked."""
        cdef Py_ssize_t kk, p, r, j, c, k = self.n_classes, reach = 0, m = self.A.n_rows
        cdef int k_, m_, inc = 1
        cdef double one = 1.0, a
        cdef char trans = b'N'
        cdef double* dw
        cdef double* o
        if self.A.dense:
            k_ = <int>k
            m_ = <int>m
            for j in range(self.A.n_cols):
                # out[j] += dW.T @ A[:, j]
                dgemv(&trans, &k_, &m_, &one, &self.dW[0], &k_,
                      <double*>&self.A.values[j * m], &inc, &one, &out[j * k], &inc)
            if mark:
                self.all_dirty = True
            return
        if mark:
            for kk in range(nt):
                r = self.touched[kk]
                reach += self.A.r_indptr[r + 1] - self.A.r_indptr[r]
            if reach * k > self.n:
                self.all_dirty = True
                mark = False
        for kk in range(nt):
            r = self.touched[kk]
            dw = &self.dW[r * k]
            for p in range(self.A.r_indptr[r], self.A.r_indptr[r + 1]):
                j = self.A.r_indices[p]
                a = self.A.r_values[p]
                o = &out[j * k]
                for c in range(k):          # contiguous, vectorized
                    o[c] += a * dw[c]
                if mark:
                    for c in range(k):
                        self.mark_dirty(j * k + c)

    cdef void direction_prepare(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        self._clear_scatter(self.dir_nt)
        self.record_direction(blk, nb, d)
        self.dir_nt = self._scatter(blk, nb, d)

    cdef double direction_delta(self, double alpha) noexcept nogil:
        # lse(S + a dS) - lse(S) = log1p(sum_c p_c expm1(a dS_c)) over the
        # block's classes: accurate near the optimum and O(classes) per row
        cdef Py_ssize_t kk, a, r, c, k = self.n_classes
        cdef double s = 0.0, t, p, si = 1.0
        for kk in range(self.dir_nt):
            r = self.touched[kk] if not self.A.dense else kk
            if self.weighted:
                si = self.sw[r]
                if si == 0.0:
                    continue
            t = 0.0
            for a in range(self.dir_ncls):
                c = self.bcls[a]
                # W = s (P - Y): p_c = W_c / s + [c = y]
                p = self.W[r * k + c] / si + (1.0 if c == self.y[r] else 0.0)
                t += p * expm1(alpha * self.dS[r * k + c])
            s += si * (log1p(t) - alpha * self.dS[r * k + self.y[r]])
        return s + self.ridge_delta(alpha)

    cdef void direction_commit(self, double alpha) noexcept nogil:
        cdef Py_ssize_t kk, a, r, k = self.n_classes
        for a in range(self.dir_nb):
            self.x[self.dir_blk[a]] += alpha * self.dir_d[a]
        for kk in range(self.dir_nt):
            r = self.touched[kk] if not self.A.dense else kk
            for a in range(self.dir_ncls):
                self.S[r * k + self.bcls[a]] += alpha * self.dS[r * k + self.bcls[a]]
            self._refresh_row(r, &self.dW[r * k])
        if self.tracking:
            self._push(&self.g[0], self.dir_nt, True)
            for a in range(self.dir_nb):
                self.g[self.dir_blk[a]] += self.ridge_at(self.dir_blk[a]) * alpha * self.dir_d[a]
                self.mark_dirty(self.dir_blk[a])
        self._clear_scatter(self.dir_nt)
        self.dir_nt = 0
