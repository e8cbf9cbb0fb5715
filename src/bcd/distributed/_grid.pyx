# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The line search of CoCoA+ rounds, compiled: a partition's conjugate part
of the dual objective at every point of a grid of combined moves.

A round's driver picks the best combined move q + gamma d + b e over a grid
of (gamma, b) pairs; each worker returns, for its rows, the conjugate part
of the dual at every grid point.  One pass over the rows computes all the
grid points (``_grid.h``), with no temporary arrays.
"""
import numpy as np

cdef extern from "_grid.h" nogil:
    void bcd_conj_grid(int loss, Py_ssize_t m, Py_ssize_t G, const double* q,
                       const double* d, const double* e, const double* t, const double* s,
                       const double* gam, const double* mom, double* total, double* bad)
    void bcd_entropy_grid(Py_ssize_t m, Py_ssize_t K, Py_ssize_t G, const double* P,
                          const double* D, const double* E, const double* s,
                          const double* gam, const double* mom, double* total, double* bad,
                          double* acc)
    int bcd_grid_select(int isa)
    int bcd_grid_path()

#: the instruction-set paths, in the order of ``_vexp.h``
ISA_NAMES = ("generic", "avx2", "avx512")


def use_isa(str name=None):
    """Run the loops on instruction-set path ``name`` (one of ``ISA_NAMES``;
    None: the widest this CPU runs), e.g. to test each path; returns the
    path in use.  A path this CPU or build cannot run is a ValueError."""
    if name is not None:
        if name not in ISA_NAMES:
            raise ValueError(f"name must be one of {ISA_NAMES} or None, got {name!r}.")
        if bcd_grid_select(ISA_NAMES.index(name)) != 0:
            raise ValueError(f"the {name!r} path is not available on this CPU or build.")
    return ISA_NAMES[bcd_grid_path()]

#: loss codes of ``_grid.h``
LOSSES = {"squared": 0, "logistic": 1, "hinge": 2, "squared_hinge": 3}


def conj_grid(str loss, const double[::1] q, const double[::1] d, const double[::1] e,
              const double[::1] t, const double[::1] s, const double[::1] gam,
              const double[::1] mom):
    """sum_i -s_i phi*(-beta_i / s_i) at q + gamma_j d + b_j e for every
    grid point j (rows with s_i = 0 left out); -inf where the point leaves
    the dual's domain (the logistic loss's open interval (0, 1), the hinge
    losses' lower bound 0 and the hinge's upper bound s_i)."""
    cdef int code = LOSSES[loss]
    cdef Py_ssize_t m = q.shape[0], G = gam.shape[0]
    for name, v in (("d", d), ("e", e), ("t", t), ("s", s)):
        if v.shape[0] != m:
            raise ValueError(f"{name} must have {m} entries, got {v.shape[0]}.")
    if mom.shape[0] != G:
        raise ValueError(f"mom must have {G} entries, got {mom.shape[0]}.")
    total = np.zeros(G)
    bad = np.zeros(G)
    cdef double[::1] tv = total, bv = bad
    if m and G:
        with nogil:
            bcd_conj_grid(code, m, G, &q[0], &d[0], &e[0], &t[0], &s[0], &gam[0], &mom[0],
                          &tv[0], &bv[0])
    total[bad > 0] = -np.inf
    return total


def entropy_grid(const double[:, ::1] P, const double[:, ::1] D, const double[:, ::1] E,
                 const double[::1] s, const double[::1] gam, const double[::1] mom):
    """-sum_i s_i sum_k p_ik log p_ik at P + gamma_j D + b_j E for every grid
    point j (rows with s_i = 0 left out; 0 log 0 = 0); -inf where a
    probability turns negative."""
    cdef Py_ssize_t m = P.shape[0], K = P.shape[1], G = gam.shape[0]
    if D.shape[0] != m or D.shape[1] != K or E.shape[0] != m or E.shape[1] != K:
        raise ValueError(f"D and E must have P's shape ({m}, {K}).")
    if s.shape[0] != m or mom.shape[0] != G:
        raise ValueError("s must have one entry per row of P, and mom one per gamma.")
    total = np.zeros(G)
    bad = np.zeros(G)
    acc = np.empty(max(G, 1))
    cdef double[::1] tv = total, bv = bad, av = acc
    if m and K and G:
        with nogil:
            bcd_entropy_grid(m, K, G, &P[0, 0], &D[0, 0], &E[0, 0], &s[0], &gam[0], &mom[0],
                             &tv[0], &bv[0], &av[0])
    total[bad > 0] = -np.inf
    return total
