"""Poisson regression for count data."""
import numpy as np

from .._validation import check_matrix, check_sample_weight, check_vector
from ._base import Problem
from ._poisson import CyPoisson
from .linear import _LinearModel


class Poisson(_LinearModel):
    r"""Poisson regression with the log link.

    :math:`f(x) = \sum_i s_i \left(\exp(a_i^T x) - y_i a_i^T x\right) +
    \tfrac12 \sum_j l_{2,j} x_j^2`, the negative log-likelihood of counts
    :math:`y_i \sim \mathrm{Poisson}(\exp(a_i^T x))` up to a constant,
    with sample weights :math:`s_i` (1 by default).

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n_samples, n_features)
        Data matrix (rows are samples).
    y : array-like of shape (n_samples,)
        Non-negative targets (counts, or any non-negative values).
    l2 : float or array-like of shape (n_features,), default=0.0
        Ridge penalty (>= 0), or one weight per coordinate.
    penalty : bcd.penalties.Penalty, optional
        Separable non-smooth term g; the problem becomes f + g.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights s_i of the samples (default all 1).

    Notes
    -----
    The curvature exp(a_i^T x) is unbounded, so f has no global Lipschitz
    constants and no curvature bound.  The problem provides block Hessians
    only (capability ``"block_hessian"``): the line-search, Newton and
    ``lipschitz="estimate"`` gradient updates apply (the last is the
    default), and with a penalty proximal Newton.  ``problem.lipschitz`` holds the scales
    ``sum_i s_i A[i, j]^2 + l2`` (zero for a column that cannot move).

    scikit-learn's ``PoissonRegressor(alpha, fit_intercept=False)``
    minimizes f / sum(s) with ``l2 = sum(s) * alpha``, up to a constant
    (``bcd.linear_model.PoissonRegressor`` builds this problem).

    Examples
    --------
    >>> import numpy as np, bcd
    >>> A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> problem = bcd.Poisson(A, [2.0, 3.0, 6.0])
    >>> result = bcd.solve(problem, rule="gs", blocks="variable", block_size=2,
    ...                    update="newton", tol=1e-10)
    >>> np.round(np.exp(result.x), 4)
    array([2., 3.])
    """

    capabilities = frozenset({"block_hessian", "quadratic_model"})
    _compiled_class = CyPoisson
    _curvature = 1.0        # the scales ||A[:, j]||^2 + l2, not a bound
    sirt_diagonal = Problem.sirt_diagonal      # no curvature bound to sum

    def __init__(self, A, y, l2=0.0, penalty=None, sample_weight=None):
        A, dtype = check_matrix(A, "A")
        y = check_vector(y, "y", A.shape[0])
        if np.any(y < 0):
            raise ValueError(f"y must be non-negative (counts); its smallest value is "
                             f"{y.min()!r}.")
        self.sample_weight = self._loss_weights = check_sample_weight(sample_weight, A.shape[0])
        super().__init__(A, dtype, y, l2)
        self.y = y
        self._set_penalty(penalty)

    def smooth_objective(self, x):
        """Value of the smooth objective f at ``x`` (``objective`` adds the penalty)."""
        x = self._check_x(x)
        z = self.A @ x
        loss = np.exp(z) - self.y * z
        if self.sample_weight is not None:
            loss *= self.sample_weight
        return float(np.sum(loss)) + 0.5 * float(x @ (self.l2 * x))

    def _margin_loss(self, z):
        return float(np.sum(self._weighted(np.exp(z) - self.y * z)))

    def _loss_derivatives(self, z):
        e = np.exp(z)
        return self._weighted(e - self.y), self._weighted(e)

    def gradient(self, x):
        """Gradient of the objective at ``x``."""
        x = self._check_x(x)
        w = np.exp(self.A @ x) - self.y
        if self.sample_weight is not None:
            w *= self.sample_weight
        return np.asarray(self.A.T @ w).ravel() + self.l2 * x
