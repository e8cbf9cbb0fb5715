"""Anderson extrapolation of the iterates of block coordinate descent.

Every pass over the coordinates of a scope (the working set, or all
coordinates), :meth:`CyAnderson.after_pass` stores the iterate restricted to
the scope.  Once K + 1 iterates x_0, ..., x_K are stored, it forms their
differences u_k = x_{k+1} - x_k and the weights c (summing to one) that
minimize ||sum_k c_k u_k||, i.e. c = z / sum(z) with (U U^T) z = 1, and
proposes x_e = sum_k c_k x_{k+1}, projected onto the domain of the penalty.
The proposal is taken only when it lowers the objective F = f + g; either
way the store starts again.  The test costs one product with the scope's
columns (``direction_prepare``), so about one pass.
"""
import numpy as np
from libc.math cimport fabs, isfinite

from bcd.core._problem cimport CyProblem


cdef class CyAnderson:
    """Anderson extrapolation with ``depth`` (K) differences per proposal.

    Attributes
    ----------
    attempts, accepted : int
        Proposals tested and taken.
    """

    def __init__(self, Py_ssize_t depth=5):
        if depth < 1:
            raise ValueError(f"extrapolation depth must be >= 1, got {depth}.")
        self.depth = depth
        self.gram = np.zeros(depth * depth)
        self.coef = np.zeros(depth)
        self.ns = 0
        self.count = 0

    def start(self, CyProblem prob, scope):
        """Extrapolate over ``scope`` (int32 coordinates) from now on; the
        store is emptied.  The problem's scratch is grown to fit a step on
        the whole scope."""
        self.scope = np.ascontiguousarray(scope, dtype=np.int32)
        self.ns = self.scope.shape[0]
        self.xs = np.zeros((self.depth + 1) * max(self.ns, 1))
        self.d = np.zeros(max(self.ns, 1))
        prob.reserve(self.ns, prob.reserved_dense)
        self.count = 0

    cdef bint after_pass(self, CyProblem prob) noexcept nogil:
        """Store the iterate; with K + 1 stored, try the extrapolated point.
        Returns True when it was taken (the iterate changed)."""
        cdef Py_ssize_t K = self.depth, ns = self.ns, a, k, l, j
        cdef double* X = &self.xs[0]
        cdef double* G = &self.gram[0]
        cdef double* c = &self.coef[0]
        cdef double s, piv, total, df, dpen
        cdef bint moved = False
        if ns == 0:
            return False
        for a in range(ns):
            X[self.count * ns + a] = prob.x[self.scope[a]]
        self.count += 1
        if self.count <= K:
            return False
        self.count = 0
        self.attempts += 1
        # differences in place: row k becomes x_{k+1} - x_k for k < K
        for k in range(K):
            for a in range(ns):
                X[k * ns + a] = X[(k + 1) * ns + a] - X[k * ns + a]
        for k in range(K):
            for l in range(k + 1):
                s = 0.0
                for a in range(ns):
                    s += X[k * ns + a] * X[l * ns + a]
                G[k * K + l] = s
                G[l * K + k] = s
        # (G + eps I) z = 1 by Cholesky; a singular system means the
        # iterates already stopped moving
        s = 0.0
        for k in range(K):
            s += G[k * K + k]
        if not s > 0.0 or not isfinite(s):
            return False
        for k in range(K):
            G[k * K + k] += 1e-10 * s
        for k in range(K):
            for l in range(k + 1):
                piv = G[k * K + l]
                for j in range(l):
                    piv -= G[k * K + j] * G[l * K + j]
                if l == k:
                    if not piv > 0.0:
                        return False
                    G[k * K + k] = piv ** 0.5
                else:
                    G[k * K + l] = piv / G[l * K + l]
        for k in range(K):
            s = 1.0
            for j in range(k):
                s -= G[k * K + j] * c[j]
            c[k] = s / G[k * K + k]
        for k in range(K - 1, -1, -1):
            s = c[k]
            for j in range(k + 1, K):
                s -= G[j * K + k] * c[j]
            c[k] = s / G[k * K + k]
        total = 0.0
        for k in range(K):
            total += c[k]
        if not (total != 0.0 and isfinite(total)):
            return False
        # the differences are gone; rebuild x_{k+1} from x_K backwards:
        # x_k = x_{k+1} - u_k, so sum_k c_k x_{k+1} = x_K sum c - sum_k c_k (x_K - x_{k+1})
        # with x_K - x_{k+1} = sum_{l > k} u_l
        for a in range(ns):
            j = self.scope[a]
            s = 0.0          # sum_{l > k} u_l, accumulated from the top
            piv = 0.0
            for k in range(K - 1, -1, -1):
                piv += c[k] / total * s
                s += X[k * ns + a]
            # x_e = x_K - sum_k (c_k / total) (x_K - x_{k+1})
            self.d[a] = -piv
            if prob.has_penalty:
                self.d[a] = prob.penalty.project(j, prob.x[j] + self.d[a]) - prob.x[j]
            if self.d[a] != 0.0:
                moved = True
        if not moved:
            return False
        prob.direction_prepare(&self.scope[0], ns, &self.d[0])
        df = prob.direction_delta(1.0)
        if prob.has_penalty:
            dpen = 0.0
            for a in range(ns):
                j = self.scope[a]
                dpen += prob.penalty.delta_value(j, prob.x[j], self.d[a])
            df += dpen
        if not (isfinite(df) and df < 0.0):
            return False
        prob.direction_commit(1.0)
        if prob.has_penalty:
            prob.project_block(&self.scope[0], ns)
        self.accepted += 1
        return True
