"""Elastic-net paths in compiled calls: the data of :class:`CyEnetPath`
prepared once for every penalty value of a path.

A cross-validated elastic net solves about a hundred warm-started problems
per fold, each in a fraction of a millisecond; the set-up of a general
:func:`bcd.solve` (validation, assembly, working sets, the result) would
cost more than the iterations.  :class:`EnetPath` keeps what every value of
the path shares (the weighted, centred design or its Gram matrix, the
column norms, ``A^T b``) and the iterate, and solves each value in one call
of cyclic coordinate descent that stops on the duality gap, with gap safe
screening (``bcd.core._enet``).
"""
import numpy as np
import scipy.sparse as sp

from ._enet import CyEnetPath


class EnetPath:
    r"""The elastic net ``1/2 sum_i s_i (b_i - (X w)_i + m^T w)^2 + l1 ||w||_1
    + l2/2 ||w||^2`` (``w >= 0`` with ``positive``) along a path of penalties.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The design.  Dense ``X`` must already be centred where it should be
        (``x_mean`` is then None); a sparse one is centred implicitly by
        ``x_mean`` (never densified).
    b : ndarray of shape (n_samples,)
        The targets (centred with the intercept).
    sample_weight : ndarray of shape (n_samples,), optional
        Non-negative weights ``s``.
    x_mean : ndarray of shape (n_features,), optional
        Column offsets ``m`` of a sparse ``X``.
    positive : bool, default=False
    precompute : bool or "auto", default="auto"
        Work on the Gram matrix ``X^T S X`` (dense ``X`` only); "auto":
        when there are more samples than features.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.core.enetpath import EnetPath
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((30, 5)); b = X @ [1.0, 0, 0, -2.0, 0]
    >>> enet = EnetPath(X, b)
    >>> gap, passes, converged = enet.solve(1.0, 0.0, gap_tol=1e-10, dw_tol=1e-6,
    ...                                     max_passes=1000)
    >>> converged, np.flatnonzero(enet.coef).tolist()
    (True, [0, 3])
    """

    def __init__(self, X, b, *, sample_weight=None, x_mean=None, positive=False,
                 precompute="auto"):
        n, d = X.shape
        b = np.asarray(b, dtype=np.float64)
        u = None if sample_weight is None else np.sqrt(np.asarray(sample_weight,
                                                                  dtype=np.float64))
        if u is not None:
            b = u * b
        if sp.issparse(X):
            Xs = sp.csc_matrix(X if u is None else sp.diags(u) @ X, dtype=np.float64)
            Xs.sort_indices()
            u_vec = np.ones(n) if u is None else u
            m = np.zeros(d) if x_mean is None else np.asarray(x_mean, dtype=np.float64)
            c = np.asarray(Xs.T @ u_vec, dtype=np.float64).ravel()
            sq = np.asarray(Xs.multiply(Xs).sum(axis=0), dtype=np.float64).ravel()
            norm = np.maximum(sq - 2.0 * m * c + m * m * float(u_vec @ u_vec), 0.0)
            self._state = CyEnetPath("sparse", n, d, b, norm, bool(positive),
                                     data=Xs.data, indices=Xs.indices, indptr=Xs.indptr,
                                     u=u_vec, m=m, c=c)
            self.mode = "sparse"
            return
        if x_mean is not None:
            raise ValueError("x_mean is for sparse X; centre a dense X itself.")
        A = np.asarray(X, dtype=np.float64)
        if u is not None:
            A = A * u[:, None]
        gram = (n > d) if (isinstance(precompute, str) and precompute == "auto") \
            else bool(precompute)
        if gram:
            A = np.asfortranarray(A)
            G = np.ascontiguousarray(A.T @ A)
            q = A.T @ b
            self._state = CyEnetPath("gram", n, d, b, np.diag(G).copy(), bool(positive),
                                     G=G, q=q)
            self.mode = "gram"
        else:
            A = np.asfortranarray(A)
            norm = np.einsum("ij,ij->j", A, A)
            self._state = CyEnetPath("dense", n, d, b, norm, bool(positive), A=A)
            self.mode = "dense"

    @property
    def coef(self):
        """A copy of the current iterate ``w``."""
        return self._state.coef

    def set_coef(self, w):
        """Start the next solve from ``w``."""
        self._state.set_w(w)

    def solve(self, l1, l2, gap_tol, dw_tol, max_passes, screening=True):
        """Minimize at the summed weights ``l1 > 0`` and ``l2 >= 0`` from the
        current iterate: passes of cyclic coordinate descent until the
        duality gap is at most ``gap_tol`` (tested when a pass changes no
        coefficient by more than ``dw_tol`` times the largest, and after
        the last of ``max_passes``).

        Returns
        -------
        gap : float
            The duality gap at the iterate (an upper bound of its
            suboptimality).
        passes : int
        converged : bool
            Whether ``gap <= gap_tol``.
        """
        if not l1 > 0:
            raise ValueError(f"l1 must be positive (the gap needs it), got {l1!r}.")
        return self._state.solve(float(l1), float(l2), float(gap_tol), float(dw_tol),
                                 int(max_passes), bool(screening))


class LogisticPath:
    r"""Binary logistic regression ``sum_i s_i (log(1 + exp(z_i)) - y_i z_i) +
    sum_j p_j (l1 |w_j| + l2/2 w_j^2)``, ``z = A w``, along a path of
    penalties: proximal Newton steps with inner cyclic coordinate descent,
    one compiled call per value (``bcd.core._logpath``).

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n_samples, n_coordinates)
        The design, with its intercept column if any.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    sample_weight : ndarray of shape (n_samples,), optional
    penalized : ndarray of shape (n_coordinates,), optional
        The penalty factor of each coordinate (0: unpenalized, as an
        intercept); default 1.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.core.enetpath import LogisticPath
    >>> rng = np.random.default_rng(0)
    >>> A = np.c_[rng.standard_normal((40, 3)), np.ones(40)]
    >>> y = (A[:, 0] + 0.5 * rng.standard_normal(40) > 0).astype(float)
    >>> logistic = LogisticPath(A, y, penalized=[1, 1, 1, 0])
    >>> opt, steps, status = logistic.solve(0.0, 1.0, tol=1e-8, max_iter=100)
    >>> status, bool(opt <= 1e-8)
    ('converged', True)
    """

    def __init__(self, A, y, *, sample_weight=None, penalized=None):
        from ._logpath import CyLogisticPath

        n, d = A.shape
        s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
        pen = np.ones(d) if penalized is None else np.asarray(penalized, np.float64)
        if A.dtype != np.float64 and not sp.issparse(A):
            A = np.asarray(A, dtype=np.float64)
        self._state = CyLogisticPath(A, np.asarray(y, dtype=np.float64), s, pen)

    @property
    def coef(self):
        """A copy of the current iterate ``w``."""
        return self._state.coef

    def set_coef(self, w):
        """Start the next solve from ``w``."""
        self._state.set_w(w)

    def solve(self, l1, l2, tol, max_iter):
        """Minimize at ``l1, l2 >= 0`` from the current iterate until the
        optimality measure (the distance of ``-grad f`` to the penalty's
        subdifferential) is at most ``tol``, in at most ``max_iter`` Newton
        steps.

        Returns
        -------
        optimality : float
        steps : int
            Newton steps taken.
        status : {"converged", "max_iter", "stalled"}
            "stalled": no step along the Newton direction decreased the
            objective (the measure is at its rounding floor).
        """
        return self._state.solve(float(l1), float(l2), float(tol), int(max_iter))
