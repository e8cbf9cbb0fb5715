"""Small seeded problems shared by the tests."""
import numpy as np
import scipy.optimize
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


def lbfgs_reference(problem):
    """A tight L-BFGS-B solve of a problem's objective: (x, f)."""
    res = scipy.optimize.minimize(problem.objective, np.zeros(problem.n_coordinates),
                                  jac=problem.gradient, method="L-BFGS-B",
                                  options=dict(gtol=1e-13, ftol=1e-16, maxiter=50000,
                                               maxcor=30))
    return res.x, res.fun
