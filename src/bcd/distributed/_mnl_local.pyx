# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The local solver of multinomial CoCoA+: passes of the multinomial dual's
coordinate ascent over one row partition, around a given W.

The per-sample work is that of :mod:`bcd.problems._dual_multinomial` (the
exact maximization over one probability vector p_i, in ``_mnl_dual.h``);
what differs is the point the passes start from.  The in-memory solver
starts with W = W(P), the primal point of its own dual variables.  In a
CoCoA+ round the partition maximizes its local subproblem

    sum_i s_i H(p_i) - <w, A_k' dU> - sigma'/2 ||A_k' dU||^2_{R^-1},
    dU_i = s_i (p_old_i - p_i),

(H the entropy, w the shared primal point), whose coordinate ascent is the
in-memory one with the ridge divided by sigma' and W starting at w.  The
caller passes that W, the inverse ridge sigma' / r and q_ik = sum_j a_ij^2
sigma' / r_jk; the intercept, when there is one, is a last column of ones
with inverse ridge 0 (its row of W holds the intercept and never moves).
"""
import numpy as np
from libc.stdint cimport uint64_t

from bcd.core._random cimport RNG, rng_seed, rng_below
from bcd.problems._mnl_dual cimport (
    BCD_MNL_WORK, bcd_mnl_data, bcd_mnl_ops, bcd_mnl, bcd_isa_best, bcd_mnl_select)


bcd_mnl_select(bcd_isa_best())


cdef int _fallback(bcd_mnl_data* s, Py_ssize_t i, double si) except -1:
    """A visit whose Newton method failed: the sub-problem by the in-memory
    solver's nested fallback (from z and b in the scratch), then applied."""
    from bcd.problems._dual_multinomial import _subproblem
    cdef Py_ssize_t K = s.K, k
    z = np.array([s.work[k] for k in range(K)])
    b = np.array([s.work[K + k] for k in range(K)])
    pold = np.array([s.P[i * K + k] for k in range(K)])
    p, t, _ = _subproblem(z, b, pold, "nested")
    for k in range(K):
        s.work[2 * K + k] = p[k]
        s.work[3 * K + k] = t[k]
    bcd_mnl.apply(s, i, si)
    return 0


def local_passes(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                 const double[::1] sw, double[:, ::1] P, double[:, ::1] T,
                 const double[:, ::1] Q, const double[::1] inv_r, bint per_feature,
                 double[::1] W, Py_ssize_t epochs, bint random_order, seed):
    """``epochs`` passes of dual coordinate ascent over the rows with
    ``sw > 0``, updating P, T = log P and W (row-major, (n_columns x K)) in
    place.

    Parameters
    ----------
    indptr, indices, data : canonical CSR rows (int32, int32, float64).
    sw : sample weights (>= 0).
    P, T : the probabilities and their logs, (n_rows x K).
    Q : q_ik = sum_j a_ij^2 inv_r_jk, (n_rows x K).
    inv_r : inverse ridge weights, per column (``per_feature``) or per
        column and class.
    W : the primal point the passes move, flat (n_columns * K).
    epochs : passes.
    random_order : a fresh permutation each pass, else the natural order.
    seed : int seed of the permutations.

    Returns
    -------
    int
        The visits solved by the fallback.
    """
    cdef Py_ssize_t n = P.shape[0], K = P.shape[1], a, j, e, tmp, m_act
    cdef int fallbacks = 0, it
    cdef double change = 0.0
    if n == 0 or epochs <= 0:
        return 0
    if indptr.shape[0] != n + 1 or sw.shape[0] != n or T.shape[0] != n or Q.shape[0] != n:
        raise ValueError("the rows, weights, P, T and Q must agree in their rows")
    if T.shape[1] != K or Q.shape[1] != K or W.shape[0] % K:
        raise ValueError("P, T, Q and W must agree in their classes")
    act_arr = np.flatnonzero(np.asarray(sw) > 0).astype(np.int32)
    cdef int[::1] perm = act_arr
    m_act = act_arr.shape[0]
    work_arr = np.zeros(BCD_MNL_WORK(K))
    cdef double[::1] work = work_arr
    cdef bcd_mnl_data s
    s.K = K
    s.indptr = &indptr[0]
    s.indices = &indices[0] if indices.shape[0] else NULL
    s.data = &data[0] if data.shape[0] else NULL
    s.W = &W[0]
    s.P = &P[0, 0]
    s.T = &T[0, 0]
    s.Q = &Q[0, 0]
    s.inv_r = &inv_r[0]
    s.per_feature = per_feature
    s.work = &work[0]
    cdef RNG rng
    rng_seed(&rng, <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF), <uint64_t>0x5DEECE66D)
    for e in range(epochs):
        with nogil:
            if random_order:
                for a in range(m_act - 1, 0, -1):
                    j = rng_below(&rng, a + 1)
                    tmp = perm[a]
                    perm[a] = perm[j]
                    perm[j] = <int>tmp
            a = 0
            while a < m_act:
                it = bcd_mnl.visit(&s, perm[a], sw[perm[a]], &change)
                if it < 0:
                    with gil:
                        _fallback(&s, perm[a], sw[perm[a]])
                        fallbacks += 1
                a += 1
    return fallbacks
