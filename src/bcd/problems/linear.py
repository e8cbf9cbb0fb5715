"""Least squares and binary logistic regression."""
import numpy as np
import scipy.sparse as sp

from ..penalties import L1
from .._validation import check_matrix, check_ridge, check_sample_weight, check_vector
from ._base import Problem, scale_rows
from ._linear import CyLeastSquares, CyLogistic

#: relative rounding error allowed for in a computed duality gap (safe screening)
GAP_ROUNDING = 1e-10


class _LinearModel(Problem):
    """f(x) = sum_i s_i phi(a_i^T x; t_i) + 1/2 sum_j l2_j x_j^2 over the rows a_i
    of A, with sample weights s_i (``_loss_weights``; 1 when None)."""

    _compiled_class = None
    _curvature = 1.0
    structure = "linear_model"
    capabilities = frozenset({"lipschitz", "hessian_bound", "bound_products", "sirt_diagonal",
                              "block_hessian"})

    _loss_weights = None

    def __init__(self, A, dtype, target, l2):
        # A is already validated by check_matrix
        self.A = A
        self.dtype = np.dtype(dtype)
        self.n_samples, self.n_features = self.A.shape
        self.n_coordinates = self.n_features
        self.l2 = check_ridge(l2, self.n_coordinates)
        self._target = target
        # L_i = c sum_k s_k A[k, i]^2 + l2_i with c = sup phi''
        self._set_lipschitz(self._curvature * self._weighted_columns(self._loss_weights)
                            .col_sqnorms() + self.l2)

    def compile(self, tracking, max_block):
        args = (self._columns(self._row_view_pays(tracking, max_block)), self._target, self.l2,
                self.lipschitz, bool(tracking), int(max_block))
        if self._loss_weights is not None:
            return self._compiled_class(*args, sample_weight=self._loss_weights)
        return self._compiled_class(*args)

    def _row_view_pays(self, tracking, max_block):
        """Whether gradient tracking should read A by rows.  A step on a
        block updates the gradient through the rows it touches: with the CSR
        view of A that costs those rows' entries, without it every column.
        When a block of ``max_block`` columns is expected to touch nearly
        every row (entries spread at random), both cost about nnz(A) and the
        view, a copy of A, is not built."""
        if not tracking or not sp.issparse(self.A):
            return bool(tracking)
        if self._has_row_view():
            return True                     # already built: free to use
        m, n = self.A.shape
        density = self.A.nnz / max(1.0, float(m) * n)
        touched = 1.0 - (1.0 - density) ** max_block
        return touched < 0.9

    def sirt_diagonal(self):
        """D_i = sum_j |M_ij| for M = c A.T S A + diag(l2) (eq. 23), cached."""
        if getattr(self, "_sirt", None) is None:
            D = self._curvature * self._weighted_columns(self._loss_weights, True) \
                .gram_abs_row_sums() + self.l2
            D.setflags(write=False)
            self._sirt = D
        return self._sirt

    def iteration_costs(self, block_size, tracking, dense=True):
        nnz = self.A.nnz if sp.issparse(self.A) else self.A.size
        m, n = self.A.shape
        col = nnz / n
        gram = block_size ** 2 * col if dense else 0.0      # a block matrix, when formed
        if tracking:
            row = nnz / m
            step = block_size * col * (1.0 + row) + gram
            if not sp.issparse(self.A):
                step = block_size * m + m * n
            return step, float(m + n)
        return block_size * col + gram, float(nnz + m + n)

    def _check_x(self, x):
        return check_vector(x, "x", self.n_coordinates)

    def _margins(self, x):
        return self.A @ self._check_x(x)

    def _weighted(self, values):
        return values if self._loss_weights is None else values * self._loss_weights

    def _margin_loss(self, z):
        """sum_i s_i phi(z_i; t_i) at the margins z (formulation="newton")."""
        raise NotImplementedError

    def _loss_derivatives(self, z):
        """``(s phi'(z), s phi''(z))`` per sample at the margins z
        (capability "quadratic_model", formulation="newton")."""
        raise NotImplementedError


def binary_data(problem, A, y, sample_weight):
    """``(A, dtype, t, classes)`` of a binary classification problem: ``A``
    validated, labels in {-1, +1} or {0, 1} (both present) as t in {-1, +1};
    sets the problem's ``sample_weight``."""
    A, dtype = check_matrix(A, "A")
    y = check_vector(y, "y", A.shape[0])
    problem.sample_weight = problem._loss_weights = check_sample_weight(sample_weight,
                                                                       A.shape[0])
    classes = np.unique(y)
    if classes.size != 2 or not (np.array_equal(classes, [-1.0, 1.0])
                                 or np.array_equal(classes, [0.0, 1.0])):
        raise ValueError(
            "y must contain exactly two classes labelled {-1, +1} or {0, 1}; "
            f"got the label set {classes.tolist()[:10]}.")
    return A, dtype, np.where(y > 0, 1.0, -1.0), classes


class LeastSquares(_LinearModel):
    r"""Least squares, :math:`f(x) = \tfrac12\sum_i s_i (a_i^T x - b_i)^2 + \tfrac12\sum_j l_{2,j} x_j^2`.

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n_samples, n_features)
        Data matrix.  Dense arrays and every SciPy sparse format are
        accepted; the data are used as float64 without modifying ``A``.
    b : array-like of shape (n_samples,)
        Targets.
    l2 : float or array-like of shape (n_features,), default=0.0
        Ridge penalty (>= 0), or one weight per coordinate (0 leaves a
        coordinate, such as an intercept column, unpenalized).
    penalty : bcd.penalties.Penalty, optional
        Separable non-smooth term g; the problem becomes f + g
        (``bcd.L1``, ``bcd.NonNegative``, ``bcd.Box``).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights s_i of the samples (default all 1).

    Notes
    -----
    The objective is the plain sum over samples (no 1/n factor), so the
    optimality measure ``||grad f||_inf`` scales with the data.  With
    ``sample_weight``, ``A`` and ``b`` hold the rows scaled by
    :math:`\sqrt{s_i}`, which turns the weighted sum into a plain one
    (the input arrays are not modified).

    Examples
    --------
    >>> import numpy as np, bcd
    >>> A = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> problem = bcd.LeastSquares(A, [1.0, 2.0, 2.0])
    >>> result = bcd.solve(problem, rule="gs", blocks="variable", block_size=1,
    ...                    max_iter=1000, tol=1e-10)
    >>> np.round(result.x, 6)
    array([1., 1.])
    """

    capabilities = _LinearModel.capabilities | {"quadratic", "duality_gap", "dual",
                                                 "quadratic_model"}
    _compiled_class = CyLeastSquares
    _curvature = 1.0

    def __init__(self, A, b, l2=0.0, penalty=None, sample_weight=None):
        A, dtype = check_matrix(A, "A")
        b = check_vector(b, "b", A.shape[0])
        self.sample_weight = check_sample_weight(sample_weight, A.shape[0])
        if self.sample_weight is not None:
            root = np.sqrt(self.sample_weight)
            A, b = scale_rows(A, root), b * root
        super().__init__(A, dtype, b, l2)
        self.b = b
        self._set_penalty(penalty)

    def _dual_loss(self):
        # the rows and targets already carry sqrt(s_i)
        return "squared", self.b, np.ones(self.n_samples)

    def _margin_loss(self, z):
        r = z - self.b
        return 0.5 * float(r @ r)

    def _loss_derivatives(self, z):
        return z - self.b, np.ones_like(z)

    def duality_gap(self, x, state=None):
        """P(x) - D(theta) for 1/2 ||Ax - b||^2 + sum_i lam_i |x_i| (x >= 0 with
        ``positive``), theta = (b - Ax) / max(1, max_i c_i / lam_i) with c_i =
        |a_i^T r| (a_i^T r with ``positive``), and D(theta) = ||b||^2 / 2 -
        ||b - theta||^2 / 2, the Lasso dual."""
        lam = self._gap_weights()
        if lam is None:
            return None
        w, g = state.exact_state() if state is not None else (None, None)
        if g is None:
            r = self.b - self.A @ x
            corr = np.asarray(self.A.T @ r).ravel()
        else:
            r, corr = -w, -g             # w = Ax - b and g = A.T w (l2 = 0)
        return self._gap(np.asarray(x), r, corr, lam)[0]

    def safe_zeros(self, state, gradient):
        """``(gap, zeros)`` at the compiled state's iterate (its state exact,
        ``gradient`` = grad f there): the duality gap (see
        :meth:`duality_gap`) and the coordinates that the gap safe sphere test
        proves zero at every solution, ``|a_i^T theta| + ||a_i|| sqrt(2 gap)
        < lam_i`` (``a_i^T theta`` with ``positive``); ``(None, None)``
        where :meth:`duality_gap` is None."""
        lam = self._gap_weights()
        if lam is None:
            return None, None
        w, _ = state.exact_state()
        gap, scale, primal = self._gap(state.get_x(), -w, -gradient, lam)
        corr = -gradient / scale
        if not self.penalty.positive:
            corr = np.abs(corr)
        # the gap is computed with rounding errors of the order of eps * P(x):
        # at a solution it can be 0 while |a_i^T theta| = lam_i only up to
        # rounding, so the sphere is widened by that error
        radius = np.sqrt(2.0 * (max(gap, 0.0) + GAP_ROUNDING * abs(primal)))
        # L_i = ||a_i||^2 for least squares without l2
        return gap, corr + np.sqrt(self.lipschitz) * radius < lam

    def _gap_weights(self):
        """The L1 weights as an array when the gap is defined, else None."""
        pen = self.penalty
        if not isinstance(pen, L1) or np.any(self.l2 != 0.0):
            return None
        lam = np.broadcast_to(pen.lam, (self.n_coordinates,))
        return lam if np.all(lam > 0) else None

    def _gap(self, x, r, corr, lam):
        """(gap, scale, primal) from the residual r = b - Ax and corr = A^T r."""
        pen = self.penalty
        scale = max(1.0, float(np.max((corr if pen.positive else np.abs(corr)) / lam)))
        theta = r / scale
        primal = 0.5 * float(r @ r) + float(lam @ np.abs(x))
        dual = 0.5 * float(self.b @ self.b) - 0.5 * float((self.b - theta) @ (self.b - theta))
        return primal - dual, scale, primal

    def smooth_objective(self, x):
        """Value of the smooth objective f at ``x`` (``objective`` adds the penalty)."""
        x = self._check_x(x)
        r = self.A @ x - self.b
        return 0.5 * float(r @ r) + 0.5 * float(x @ (self.l2 * x))

    def gradient(self, x):
        """Gradient of the objective at ``x``."""
        x = self._check_x(x)
        return np.asarray(self.A.T @ (self.A @ x - self.b)).ravel() + self.l2 * x


class Logistic(_LinearModel):
    r"""Binary logistic regression.

    :math:`f(x) = \sum_i s_i \log(1 + \exp(-y_i a_i^T x)) + \tfrac12\sum_j l_{2,j} x_j^2`.

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n_samples, n_features)
        Data matrix (rows are samples).
    y : array-like of shape (n_samples,)
        Labels, either in {-1, +1} or in {0, 1} (0 is read as -1).  Both
        classes must be present.
    l2 : float or array-like of shape (n_features,), default=0.0
        Ridge penalty (>= 0), or one weight per coordinate (0 leaves a
        coordinate, such as an intercept column, unpenalized).  Without it
        the minimum may not be attained on separable data.
    penalty : bcd.penalties.Penalty, optional
        Separable non-smooth term g; the problem becomes f + g
        (``bcd.L1``, ``bcd.NonNegative``, ``bcd.Box``).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights s_i of the samples (default all 1).

    Notes
    -----
    The loss is summed, not averaged, over samples; ``tol`` applies to
    ``||grad f||_inf`` of this sum.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> A = np.array([[1.0, 2.0], [2.0, -1.0], [-1.0, 0.5], [-2.0, -1.0]])
    >>> problem = bcd.Logistic(A, [1, 1, 0, 0], l2=1.0)
    >>> result = bcd.solve(problem, rule="gs", blocks="variable", block_size=2, tol=1e-8,
    ...                    max_iter=10000)
    >>> result.converged
    True
    """

    _compiled_class = CyLogistic
    _curvature = 0.25
    capabilities = _LinearModel.capabilities | {"dual", "quadratic_model"}

    def __init__(self, A, y, l2=0.0, penalty=None, sample_weight=None):
        A, dtype, t, classes = binary_data(self, A, y, sample_weight)
        super().__init__(A, dtype, t, l2)
        self._set_penalty(penalty)
        self.classes = classes
        self.y = t

    def _dual_loss(self):
        weights = self.sample_weight if self.sample_weight is not None else \
            np.ones(self.n_samples)
        return "logistic", self.y, weights

    def _margin_loss(self, z):
        return float(np.sum(self._weighted(np.logaddexp(0.0, -self.y * z))))

    def _loss_derivatives(self, z):
        p = np.exp(-np.logaddexp(0.0, self.y * z))          # sigmoid(-y z)
        return self._weighted(-self.y * p), self._weighted(p * (1.0 - p))

    def smooth_objective(self, x):
        """Value of the smooth objective f at ``x`` (``objective`` adds the penalty)."""
        x = self._check_x(x)
        loss = np.logaddexp(0.0, -self.y * (self.A @ x))
        if self.sample_weight is not None:
            loss *= self.sample_weight
        return float(np.sum(loss)) + 0.5 * float(x @ (self.l2 * x))

    def gradient(self, x):
        """Gradient of the objective at ``x``."""
        x = self._check_x(x)
        u = self.y * (self.A @ x)
        w = -self.y * np.exp(-np.logaddexp(0.0, u))
        if self.sample_weight is not None:
            w *= self.sample_weight
        return np.asarray(self.A.T @ w).ravel() + self.l2 * x

