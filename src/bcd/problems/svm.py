"""Linear support vector machines."""
import numpy as np

from ._linear import CySquaredHinge
from .linear import _LinearModel, binary_data

#: the losses of :class:`LinearSVM`
SVM_LOSSES = ("squared_hinge", "hinge")


class LinearSVM(_LinearModel):
    r"""Linear support vector machine.

    :math:`f(x) = \sum_i s_i \phi(y_i a_i^T x) + \tfrac12\sum_j l_{2,j} x_j^2`
    with the squared hinge :math:`\phi(u) = \max(0, 1 - u)^2` (the L2-loss
    SVM) or the hinge :math:`\phi(u) = \max(0, 1 - u)` (the L1-loss SVM).

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n_samples, n_features)
        Data matrix (rows are samples).
    y : array-like of shape (n_samples,)
        Labels in {-1, +1} or {0, 1} (0 is read as -1); both classes must
        be present.
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        The loss.  The hinge is not differentiable: its problem is solved
        through the dual only (``formulation="dual"``, which needs
        ``l2 > 0`` on every coordinate), and its optimality measure is the
        duality gap P(x) - D(alpha), which bounds P(x) - P*.
    l2 : float or array-like of shape (n_features,), default=1.0
        Ridge weights (>= 0).
    penalty : bcd.penalties.Penalty, optional
        Separable non-smooth term g (``bcd.L1`` gives the L1-regularized
        L2-loss SVM); squared hinge only.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights s_i of the samples (the per-sample C of
        liblinear).

    Notes
    -----
    scikit-learn's ``LinearSVC(C=C)`` minimizes :math:`\tfrac12\|x\|^2 + C
    \sum_i \phi(y_i a_i^T x)`, which is this objective with
    ``l2 = 1 / C`` divided by ``C``.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> A = np.array([[1.0, 2.0], [2.0, -1.0], [-1.0, 0.5], [-2.0, -1.0]])
    >>> result = bcd.solve(bcd.LinearSVM(A, [1, 1, 0, 0], l2=1.0))
    >>> result.converged, result.options["formulation"]
    (True, 'dual')
    >>> result = bcd.solve(bcd.LinearSVM(A, [1, 1, 0, 0], loss="hinge", l2=1.0))
    >>> result.converged, bool(result.duality_gap < 1e-6)
    (True, True)
    """

    _compiled_class = CySquaredHinge
    _curvature = 2.0

    def __init__(self, A, y, loss="squared_hinge", l2=1.0, penalty=None, sample_weight=None):
        if not isinstance(loss, str) or loss not in SVM_LOSSES:
            raise ValueError(f"loss must be one of {list(SVM_LOSSES)}, got {loss!r}.")
        A, dtype, t, classes = binary_data(self, A, y, sample_weight)
        self.loss = loss
        if loss == "hinge":
            # no gradient: only the dual formulation applies
            self.capabilities = frozenset({"dual"})
            if penalty is not None:
                raise ValueError("penalty needs loss='squared_hinge' (the hinge loss is "
                                 "solved through its dual, which has no penalty).")
        else:
            self.capabilities = _LinearModel.capabilities | {"dual", "quadratic_model"}
        super().__init__(A, dtype, t, l2)
        if loss == "hinge":
            # no unpenalized coordinate either: minimizing an intercept as a
            # block of its own stalls on the hinge's kinks (coordinate descent
            # on a non-smooth, non-separable objective), short of the optimum
            self._dual_unpenalized = 0
            if not np.all(np.asarray(self.l2) > 0.0):
                raise ValueError("loss='hinge' needs l2 > 0 on every coordinate: it is "
                                 "solved through its dual, which exists only with a strictly "
                                 "convex L2 term.")
        self._set_penalty(penalty)
        self.classes = classes
        self.y = t

    def compile(self, tracking, max_block):
        if self.loss == "hinge":
            raise ValueError("the hinge loss is solved through its dual: use "
                             "formulation='dual' (the default with l2 > 0).")
        return super().compile(tracking, max_block)

    def _dual_loss(self):
        weights = self.sample_weight if self.sample_weight is not None else \
            np.ones(self.n_samples)
        return self.loss, self.y, weights

    def _margin_loss(self, z):
        u = np.maximum(0.0, 1.0 - self.y * z)
        return float(np.sum(self._weighted(u * u)))

    def _loss_derivatives(self, z):
        # the generalized second derivative: 2 inside the margin, 0 outside
        u = 1.0 - self.y * z
        inside = u > 0.0
        return self._weighted(np.where(inside, -2.0 * self.y * u, 0.0)), \
            self._weighted(np.where(inside, 2.0, 0.0))

    def _slack(self, x):
        return np.maximum(0.0, 1.0 - self.y * (self.A @ self._check_x(x)))

    def smooth_objective(self, x):
        """The objective without the penalty at ``x`` (for the hinge loss,
        which is not smooth, the whole data term)."""
        x = self._check_x(x)
        u = self._slack(x)
        loss = u * u if self.loss == "squared_hinge" else u
        if self.sample_weight is not None:
            loss = loss * self.sample_weight
        return float(np.sum(loss)) + 0.5 * float(x @ (self.l2 * x))

    def gradient(self, x):
        """Gradient at ``x`` (for the hinge loss a subgradient)."""
        x = self._check_x(x)
        u = self._slack(x)
        w = -2.0 * self.y * u if self.loss == "squared_hinge" else -self.y * (u > 0)
        if self.sample_weight is not None:
            w = w * self.sample_weight
        return np.asarray(self.A.T @ w).ravel() + self.l2 * x
