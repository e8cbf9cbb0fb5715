"""Multinomial (softmax) logistic regression."""
import numpy as np
import scipy.sparse as sp

from .._validation import (check_matrix, check_ridge, check_sample_weight, check_scalar,
                           check_vector, seed_words)
from ._base import Problem
from ._dual_multinomial import multinomial_dual
from ._multinomial import CyMultinomial


class Multinomial(Problem):
    r"""Multinomial logistic regression.

    .. math::
        f(X) = \sum_i s_i \Big[\log \sum_c \exp(a_i^T x_c) - a_i^T x_{y_i}\Big]
               + \tfrac12 \sum_{j,c} l_{2,jc} X_{jc}^2

    with one weight vector :math:`x_c` per class (Appendix B.4 of Nutini,
    Laradji and Schmidt).

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n_samples, n_features)
        Data matrix (rows are samples).
    y : array-like of shape (n_samples,)
        Integer class labels.  Any set of at least two distinct integers is
        accepted; labels are mapped to 0, ..., n_classes - 1 in increasing
        order (``classes`` keeps the original values).
    l2 : float or array-like of shape (n_features * n_classes,), default=0.0
        Ridge penalty (>= 0), or one weight per coordinate, ordered like
        the variable (0 leaves a coordinate, such as an intercept,
        unpenalized).
    penalty : bcd.penalties.Penalty, optional
        Separable non-smooth term g; the problem becomes f + g
        (``bcd.L1``, ``bcd.NonNegative``, ``bcd.Box``).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights s_i of the samples (default all 1).

    Notes
    -----
    The variable is the n_features x n_classes matrix X, flattened row-major:
    coordinate ``j * n_classes + c`` is the weight of feature j for class c,
    so ``n_coordinates = n_features * n_classes`` and :meth:`coef` reshapes a
    solution.  A block may mix features and classes; its curvature bound is
    1/2 (I - 11'/k') (x) A_f'A_f with k' = min(n_classes, classes in the
    block + 1).

    Examples
    --------
    >>> import numpy as np, bcd
    >>> rs = np.random.RandomState(0)
    >>> A = rs.randn(60, 4)
    >>> y = np.argmax(A @ rs.randn(4, 3), axis=1)
    >>> problem = bcd.Multinomial(A, y, l2=1.0)
    >>> result = bcd.solve(problem, rule="gsd", blocks="variable", block_size=3,
    ...                    update="newton", tol=1e-8, max_iter=10000)
    >>> result.converged, problem.coef(result.x).shape
    (True, (4, 3))
    """

    structure = "grouped_linear_model"
    capabilities = frozenset({"lipschitz", "hessian_bound", "bound_products", "sirt_diagonal",
                              "block_hessian", "dual"})
    _dual_unpenalized = 0
    # the rows of A in CSR form, built for the dual solver on first use
    _TRANSIENT = Problem._TRANSIENT + ("_dual_rows",)

    def __init__(self, A, y, l2=0.0, penalty=None, sample_weight=None):
        self.A, dtype = check_matrix(A, "A")
        self.dtype = np.dtype(dtype)
        self.n_samples, self.n_features = self.A.shape
        self.sample_weight = check_sample_weight(sample_weight, self.n_samples)
        y_arr = np.asarray(y)
        if y_arr.dtype.kind in "US" or y_arr.dtype == object:
            raise TypeError("y must hold integer class labels.")
        yv = check_vector(y_arr, "y", self.n_samples)      # shape, NaN, complex
        if y_arr.dtype.kind == "f" and not np.all(yv == np.round(yv)):
            raise ValueError("y must hold integer class labels; got non-integer values.")
        # the labels keep their values and dtype (through float64, integers
        # above 2**53 would merge)
        self.classes, y_idx = np.unique(y_arr.reshape(-1), return_inverse=True)
        if self.classes.size < 2:
            raise ValueError(f"y must contain at least two classes; got only {self.classes.tolist()}.")
        self.n_classes = int(self.classes.size)
        self.y = np.ascontiguousarray(y_idx, dtype=np.int32)
        self._Y = np.eye(self.n_classes)[self.y]
        self.n_coordinates = self.n_features * self.n_classes
        self.l2 = check_ridge(l2, self.n_coordinates)
        # L_(j,c) = sum_i s_i A[i, j]^2 / 4 + l2_(j,c) (the block bound with k' = 2)
        self._set_lipschitz(np.repeat(0.25 * self._weighted_columns(self.sample_weight)
                                      .col_sqnorms(), self.n_classes) + self.l2)
        self._set_penalty(penalty)

    def coef(self, x):
        """The n_features x n_classes weight matrix of a flat solution ``x``."""
        return np.asarray(x).reshape(self.n_features, self.n_classes)

    def compile(self, tracking, max_block):
        return CyMultinomial(self._columns(bool(tracking)), self.y, self.n_classes, self.l2,
                             self.lipschitz, bool(tracking), int(max_block),
                             sample_weight=self.sample_weight)

    def _check_X(self, x):
        x = np.asarray(x)
        if x.ndim == 2:
            if x.shape != (self.n_features, self.n_classes):
                raise ValueError(f"x has shape {x.shape}, expected "
                                 f"({self.n_features}, {self.n_classes}).")
            x = x.ravel()
        return check_vector(x, "x", self.n_coordinates).reshape(self.n_features, self.n_classes)

    def smooth_objective(self, x):
        """Value of the smooth objective f at ``x`` (flat or n_features x n_classes)."""
        X = self._check_X(x)
        S = np.asarray(self.A @ X)
        mx = S.max(axis=1, keepdims=True)
        lse = (mx + np.log(np.exp(S - mx).sum(axis=1, keepdims=True))).ravel()
        loss = lse - S[np.arange(self.n_samples), self.y]
        if self.sample_weight is not None:
            loss *= self.sample_weight
        return float(np.sum(loss)) + 0.5 * float(np.sum(self.l2 * X.ravel() * X.ravel()))

    def gradient(self, x):
        """Gradient at ``x``, flattened like ``x``."""
        X = self._check_X(x)
        S = np.asarray(self.A @ X)
        S -= S.max(axis=1, keepdims=True)
        P = np.exp(S)
        P /= P.sum(axis=1, keepdims=True)
        W = P - self._Y
        if self.sample_weight is not None:
            W *= self.sample_weight[:, None]
        return np.asarray(self.A.T @ W).ravel() + self.l2 * X.ravel()

    def sirt_diagonal(self):
        """D_(j,c) = sum |M_(j,c),.| = (k - 1)/k sum_j' |a_j' S a_j'| + l2_(j,c)."""
        if getattr(self, "_sirt", None) is None:
            k = self.n_classes
            S = self._weighted_columns(self.sample_weight, True).gram_abs_row_sums()
            D = np.repeat((k - 1) / k * S, k) + self.l2
            D.setflags(write=False)
            self._sirt = D
        return self._sirt

    def iteration_costs(self, block_size, tracking, dense=True):
        nnz = self.A.nnz if sp.issparse(self.A) else self.A.size
        m, d = self.A.shape
        k = self.n_classes
        col = nnz / d
        gram = block_size ** 2 * col if dense else 0.0      # a block matrix, when formed
        if tracking:
            step = block_size * col * (k + nnz / m * k) + gram
            return step, float(m * k + d * k)
        return block_size * col * k + gram, float(nnz * k + m * k)

    def _solve_dual(self, tol=1e-6, max_iter=1000, max_time=None, rule="random",
                    random_state=None, p0=None):
        r"""Solve by coordinate ascent on the dual (Yu, Huang and Lin, 2011).

        The dual of f has one probability vector :math:`p_i` per sample,

        .. math::
            D(P) = -\sum_i s_i \sum_k p_{ik} \log p_{ik}
                   - \tfrac12 \sum_{j,k} (A^T U)_{jk}^2 / r_{jk},
            \qquad U_i = s_i (e_{y_i} - p_i),

        with the primal point :math:`W(P) = (A^T U) / r`.  An epoch
        maximizes D exactly over each :math:`p_i` in turn, keeping W up to
        date; samples of zero weight drop out.  The stopping test is the one
        of :func:`bcd.solve`: the inf-norm of the gradient of f at W,
        unscaled, at most ``tol``.  It suits data with many features
        relative to the samples or strong regularization; with many more
        samples than features and weak regularization the dual is
        ill-conditioned and primal methods are faster.

        Parameters
        ----------
        tol : float, default=1e-6
            Tolerance on the gradient's inf-norm.
        max_iter : int, default=1000
            Maximum number of epochs (passes over the samples).
        max_time : float, optional
            Time limit in seconds.
        rule : {"random", "cyclic", "greedy"}, default="random"
            Order of the samples in an epoch: a fresh random permutation,
            the natural order, or decreasing violation
            :math:`s_i \|p_i - \mathrm{softmax}(a_i^T W)\|_1` measured at
            the start of the epoch (an extra pass over the data).
        random_state : None, int, RandomState or Generator
            Seed of the permutations (rule "random").
        p0 : array of shape (n_samples, n_classes), optional
            Starting dual point (rows are normalized onto the simplex),
            tested before the first epoch.  By default
            :math:`p_i = (1 - 10^{-6}) e_{y_i} + 10^{-6} / K`, where W is
            nearly zero.

        Returns
        -------
        x : ndarray of shape (n_coordinates,)
            The primal solution W, flattened like the variable (float64).
        P : ndarray of shape (n_samples, n_classes)
            The dual solution.
        n_epochs : int
        status : {"converged", "max_iter", "max_time", "diverged"}
        optimality : float
            Inf-norm of the gradient of f at ``x``.
        gap : float
            Duality gap f(x) - D(P) >= 0, a bound on f(x) - min f.
        """
        if self.penalty is not None:
            raise ValueError("the dual solver handles the l2 penalty only; got penalty "
                             f"{self.penalty!r}.")
        ridge = np.ascontiguousarray(np.broadcast_to(np.asarray(self.l2, dtype=np.float64),
                                                     (self.n_coordinates,)))
        if not np.all(ridge > 0):
            raise ValueError("the dual needs l2 > 0 on every coordinate; "
                             f"{int(np.sum(ridge <= 0))} of {ridge.size} l2 weights are 0.")
        tol = check_scalar(tol, "tol", low=0.0)
        max_iter = check_scalar(max_iter, "max_iter", low=0, integer=True)
        max_time = check_scalar(max_time, "max_time", low=0.0, low_inclusive=False,
                                allow_none=True)
        if rule not in ("random", "cyclic", "greedy"):
            raise ValueError(f"rule must be 'random', 'cyclic' or 'greedy'; got {rule!r}.")
        rows = self.__dict__.get("_dual_rows")
        if rows is None:
            rows = sp.csr_matrix(self.A)        # dense A: its zeros are dropped
            rows.sum_duplicates()
            rows = (rows.indptr.astype(np.int32), rows.indices.astype(np.int32),
                    np.ascontiguousarray(rows.data, dtype=np.float64))
            self._dual_rows = rows
        out = multinomial_dual(*rows, self.y, self.n_classes, self.sample_weight, ridge, p0,
                               tol, max_iter, max_time or 0.0, rule,
                               seed_words(random_state)[0])
        return (out["W"], out["P"], out["n_epochs"], out["status"], out["optimality"],
                out["duality_gap"])
