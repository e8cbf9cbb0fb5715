"""Small seeded problems shared by the tests."""
import numpy as np
import scipy.sparse as sp


def random_problem(m, n, density=0.3, seed=0, sparse=True):
    """A seeded random least-squares system with varied column scales."""
    rs = np.random.RandomState(seed)
    A = sp.random(m, n, density=density, random_state=rs, format="csc")
    A.data = rs.randn(A.nnz)
    A = A @ sp.diags(rs.uniform(0.2, 5.0, n))
    A = sp.csc_matrix(A)
    b = rs.randn(m)
    return (A if sparse else A.toarray()), b
