"""The compiled graph of a symmetric matrix, read by the forest-structured
blocks and the linear-time forest solve (``_forest.pyx``).

It lives in the core, next to the compiled code it builds, so that both
the problems with a sparse Hessian graph (:class:`bcd.Quadratic`) and the
public forest functions (:mod:`bcd.forest`) import it from below.
"""
import numpy as np
import scipy.sparse as sp

from . import _forest


def symmetric_graph(Q):
    """``(Graph, csr)`` of a checked symmetric matrix: the compiled graph of its
    off-diagonal non-zeros (explicit zeros are not edges) and the CSR copy it
    reads.  The copy is (Q + Q')/2, so that an entry stored on one side of
    the diagonal only (symmetric up to rounding) is an edge seen from both
    ends."""
    M = sp.csr_matrix(Q, dtype=np.float64, copy=True)
    M = sp.csr_matrix((M + M.T) * 0.5)
    M.sum_duplicates()
    M.eliminate_zeros()
    M.sort_indices()
    M.indptr = M.indptr.astype(np.int32, copy=False)
    M.indices = M.indices.astype(np.int32, copy=False)
    return _forest.CyGraph(M.indptr, M.indices, M.data, M.diagonal()), M
