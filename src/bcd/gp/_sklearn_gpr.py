"""A drop-in for scikit-learn's ``GaussianProcessRegressor``.

Same parameters, methods and fitted attributes, on scikit-learn kernel
objects.  The kernel matrices and the derivatives of the log marginal
likelihood come from bcd's compiled kernels wherever the scikit-learn
kernel has an exact equivalent (:mod:`bcd.gp._sklearn_kernels`), and the
dense factorizations from :mod:`bcd.core._dense`.  Imports scikit-learn.
"""
import numbers
import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrs
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Kernel as SkKernel
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._sklearn import validate_data
from ..core._dense import cholesky, inverse_from_cholesky
from ._sklearn_kernels import TranslatedKernel, translate

__all__ = ["GaussianProcessRegressor", "KernelFallbackWarning"]


class KernelFallbackWarning(UserWarning):
    """A scikit-learn kernel has no compiled equivalent in bcd: it is
    evaluated by scikit-learn (correct, slower)."""


def _default_kernel():
    return (ConstantKernel(1.0, constant_value_bounds="fixed")
            * RBF(1.0, length_scale_bounds="fixed"))


class GaussianProcessRegressor(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Gaussian process regression with scikit-learn's interface and
    scikit-learn's kernels, on bcd's compiled kernels.

    A drop-in for :class:`sklearn.gaussian_process.GaussianProcessRegressor`:
    the same parameters, methods and fitted attributes, with the same
    meaning.  The kernel is a scikit-learn kernel object (``RBF``,
    ``Matern``, ``RationalQuadratic``, ``ExpSineSquared``, ``DotProduct``,
    ``WhiteKernel``, ``ConstantKernel``, their sums, products and powers).
    Where bcd has an exact equivalent (entries equal to rounding), it is
    evaluated by bcd's compiled kernels:

    =====================================  =====================================
    scikit-learn                           bcd
    =====================================  =====================================
    ``RBF`` (isotropic or anisotropic)     :class:`~bcd.gp.SquaredExponential`
    ``Matern``, nu = 1.5, 2.5 (inf)        :class:`~bcd.gp.Matern` (squared exp.)
    ``ExpSineSquared``                     :class:`~bcd.gp.Periodic`
    ``ConstantKernel`` factor              the variance of its product term
    ``ConstantKernel`` term                a constant added to every entry
    ``RationalQuadratic``                  ``RationalQuadratic`` (where built)
    ``WhiteKernel``                        noise on the diagonal of k(X) only
    ``k1 + k2``, ``k1 * k2``               sums, products (expanded)
    ``k ** e`` (RBF, ExpSineSquared, C)    length-scale / sqrt(e), variance ** e
    ``RationalQuadratic ** e``             alpha * e, length-scale / sqrt(e)
    =====================================  =====================================

    Other kernels (``Matern`` with other nu, ``DotProduct``, ``PairwiseKernel``, subclasses, kernels on structured
    inputs) are evaluated by scikit-learn itself, with a
    ``KernelFallbackWarning`` once per fit.

    The log marginal likelihood and its gradient are with respect to
    scikit-learn's ``kernel.theta`` (the chain rule from bcd's
    log-parameters), so that the optimizer, its bounds and the fitted
    ``kernel_`` are exactly scikit-learn's.  The gradient is one compiled
    contraction of ``0.5 (alpha alpha^T - K^-1)`` with the kernel's
    derivatives; no n x n x n_params array is formed.

    Parameters
    ----------
    kernel : scikit-learn kernel, default=None
        The prior covariance; None means ``ConstantKernel() * RBF()`` for
        fit and ``ConstantKernel(1.0, "fixed") * RBF(1.0, "fixed")`` for the
        prior before fit, as in scikit-learn.  Its hyperparameters are
        optimized during fit unless ``optimizer`` is None.
    alpha : float or array-like of shape (n_samples,), default=1e-10
        Added to the diagonal of the kernel matrix during fit (noise
        variance of each observation, and a jitter that keeps the matrix
        positive definite).
    optimizer : "fmin_l_bfgs_b", callable or None, default="fmin_l_bfgs_b"
        Maximizes the log marginal likelihood over theta.  A callable is
        called as ``optimizer(obj_func, initial_theta, bounds=bounds)`` and
        returns ``(theta_opt, func_min)``, where
        ``obj_func(theta, eval_gradient=True)`` returns the negative log
        marginal likelihood (and its gradient).  None keeps the kernel's
        parameters.
    n_restarts_optimizer : int, default=0
        Further optimizer runs from starting points drawn log-uniformly
        within the bounds (which must then be finite).
    normalize_y : bool, default=False
        Scale the targets to zero mean and unit variance before fitting.
    copy_X_train : bool, default=True
        Store copies of the training data (otherwise references).
    n_targets : int, default=None
        Number of targets, used by ``predict`` and ``sample_y`` before fit
        (the prior); None means 1.  Fit checks it against y.
    random_state : int, RandomState instance or None, default=None
        Draws the optimizer's restarts; also the default of ``sample_y``'s.

    Attributes
    ----------
    X_train_ : array-like of shape (n_samples, n_features) or list of object
        The training inputs (a copy unless ``copy_X_train=False``).
    y_train_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Targets as fitted (normalized when ``normalize_y``).
    kernel_ : scikit-learn kernel
        The kernel with the fitted hyperparameters.
    L_ : ndarray of shape (n_samples, n_samples)
        Lower-triangular Cholesky factor of ``k(X_train_) + alpha I``.
    alpha_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        ``(k(X_train_) + alpha I)^-1 y_train_``.
    log_marginal_likelihood_value_ : float
        The log marginal likelihood of ``kernel_.theta``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of str
        Defined when X has feature names that are all strings.

    See Also
    --------
    bcd.gp.GPRegressor : bcd's native GP regressor (bcd kernels, block
        coordinate descent for large n).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    >>> from bcd.gp import GaussianProcessRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 5, (40, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.randn(40)
    >>> gpr = GaussianProcessRegressor(RBF() + WhiteKernel(), random_state=0).fit(X, y)
    >>> mean, std = gpr.predict(X[:3], return_std=True)
    >>> mean.shape, std.shape
    ((3,), (3,))
    >>> bool(gpr.score(X, y) > 0.9)
    True
    """

    def __init__(self, kernel=None, *, alpha=1e-10, optimizer="fmin_l_bfgs_b",
                 n_restarts_optimizer=0, normalize_y=False, copy_X_train=True,
                 n_targets=None, random_state=None):
        self.kernel = kernel
        self.alpha = alpha
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.normalize_y = normalize_y
        self.copy_X_train = copy_X_train
        self.n_targets = n_targets
        self.random_state = random_state

    # ------------------------------------------------------------ checks
    def _check_params(self):
        if self.kernel is not None and not isinstance(self.kernel, SkKernel):
            raise TypeError(f"kernel must be None or a scikit-learn kernel "
                            f"(sklearn.gaussian_process.kernels.Kernel), got {self.kernel!r}.")
        alpha = self.alpha
        if isinstance(alpha, np.ndarray):
            if not np.all(np.isfinite(alpha)) or np.any(alpha < 0):
                raise ValueError("alpha must be non-negative and finite.")
        elif isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) \
                or not (alpha >= 0 and np.isfinite(alpha)):
            raise ValueError(f"alpha must be a non-negative float or an array of them, "
                             f"got {alpha!r}.")
        if not (self.optimizer is None or callable(self.optimizer)
                or (isinstance(self.optimizer, str) and self.optimizer == "fmin_l_bfgs_b")):
            raise ValueError(f"optimizer must be 'fmin_l_bfgs_b', a callable or None, got "
                             f"{self.optimizer!r}.")
        r = self.n_restarts_optimizer
        if isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 0:
            raise ValueError(f"n_restarts_optimizer must be a non-negative integer, got {r!r}.")
        for name in ("normalize_y", "copy_X_train"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}.")
        t = self.n_targets
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Integral)
                              or t < 1):
            raise ValueError(f"n_targets must be None or a positive integer, got {t!r}.")

    def _vector_input(self, kernel):
        return kernel is None or kernel.requires_vector_input

    # ------------------------------------------------------------ kernels
    def _translate(self, kernel, X, warn=False):
        """The compiled translation of ``kernel`` for inputs X, or None
        (scikit-learn evaluates it), with a warning when ``warn``."""
        if not isinstance(X, np.ndarray) or X.ndim != 2 or X.dtype != np.float64:
            reason = "inputs that are not a float64 array"
        else:
            t = translate(kernel, X.shape[1])
            if isinstance(t, TranslatedKernel):
                return t
            reason = t
        if warn:
            warnings.warn(f"bcd has no compiled equivalent of {reason} in the kernel {kernel}; "
                          f"scikit-learn evaluates that kernel instead (correct, slower).",
                          KernelFallbackWarning, stacklevel=3)
        return None

    # ------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit the Gaussian process: optimize the kernel's hyperparameters
        (unless ``optimizer`` is None) and factor the kernel matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of object
            Training inputs (objects only for kernels on structured inputs).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self : GaussianProcessRegressor
        """
        self._check_params()
        # as in scikit-learn: None fits C() * RBF() with free parameters (the
        # prior before fit has them fixed)
        self.kernel_ = ConstantKernel() * RBF() if self.kernel is None else clone(self.kernel)
        self._rng = check_random_state(self.random_state)
        if self.kernel_.requires_vector_input:
            X, y = validate_data(self, X, y, multi_output=True, y_numeric=True,
                                 ensure_2d=True, dtype="numeric")
        else:
            X, y = validate_data(self, X, y, multi_output=True, y_numeric=True,
                                 ensure_2d=False, dtype=None)
        if isinstance(X, np.ndarray) and X.dtype.kind in "iubf" and X.dtype != np.float64:
            X = X.astype(np.float64)
        seen = y.shape[1] if y.ndim > 1 else 1
        if self.n_targets is not None and seen != self.n_targets:
            raise ValueError(f"The number of targets seen in `y` is different from the "
                             f"parameter `n_targets`. Got {seen} != {self.n_targets}.")
        y = np.asarray(y, dtype=np.float64)
        if self.normalize_y:
            self._y_train_mean = np.mean(y, axis=0)
            std = np.std(y, axis=0)
            self._y_train_std = np.where(std < 10 * np.finfo(np.float64).eps, 1.0, std)
            y = (y - self._y_train_mean) / self._y_train_std
        else:
            shape = (y.shape[1],) if y.ndim == 2 else 1
            self._y_train_mean = np.zeros(shape)
            self._y_train_std = np.ones(shape)
        alpha = self.alpha
        if np.iterable(alpha):
            alpha = np.asarray(alpha, dtype=np.float64)
            if alpha.shape[0] != y.shape[0]:
                if alpha.shape[0] == 1:
                    alpha = alpha[0]
                else:
                    raise ValueError(f"alpha must be a scalar or an array with same number of "
                                     f"entries as y. ({alpha.shape[0]} != {y.shape[0]})")
        self._alpha_fit = alpha
        self.X_train_ = np.copy(X) if self.copy_X_train else X
        self.y_train_ = np.copy(y) if self.copy_X_train else y
        self._translate(self.kernel_, self.X_train_, warn=True)

        if self.optimizer is not None and self.kernel_.n_dims > 0:
            def obj_func(theta, eval_gradient=True):
                if eval_gradient:
                    lml, grad = self.log_marginal_likelihood(theta, eval_gradient=True,
                                                             clone_kernel=False)
                    return -lml, -grad
                return -self.log_marginal_likelihood(theta, clone_kernel=False)

            optima = [self._constrained_optimization(obj_func, self.kernel_.theta,
                                                     self.kernel_.bounds)]
            if self.n_restarts_optimizer > 0:
                if not np.isfinite(self.kernel_.bounds).all():
                    raise ValueError("Multiple optimizer restarts (n_restarts_optimizer>0) "
                                     "requires that all bounds are finite.")
                bounds = self.kernel_.bounds
                for _ in range(self.n_restarts_optimizer):
                    start = self._rng.uniform(bounds[:, 0], bounds[:, 1])
                    optima.append(self._constrained_optimization(obj_func, start, bounds))
            values = [opt[1] for opt in optima]
            best = int(np.argmin(values))
            self.kernel_.theta = optima[best][0]
            _warn_at_bounds(self.kernel_)
            self.log_marginal_likelihood_value_ = -float(values[best])
        else:
            self.log_marginal_likelihood_value_ = self.log_marginal_likelihood(
                self.kernel_.theta, clone_kernel=False)

        K = self._kernel_matrix(self.kernel_, self.X_train_)
        K[np.diag_indices_from(K)] += self._alpha_fit
        U = np.asfortranarray(K)
        info = cholesky(U)
        if info != 0:
            raise np.linalg.LinAlgError(
                f"The kernel, {self.kernel_}, is not returning a positive definite matrix. "
                f"Try gradually increasing the 'alpha' parameter of your "
                f"GaussianProcessRegressor estimator.",
                f"{info}-th leading minor of the array is not positive definite")
        Y = self.y_train_ if self.y_train_.ndim > 1 else self.y_train_[:, None]
        A, info = dpotrs(U, Y, lower=0)
        self.alpha_ = A if self.y_train_.ndim > 1 else A[:, 0]
        self.L_ = np.triu(U).T
        return self

    def _constrained_optimization(self, obj_func, initial_theta, bounds):
        if self.optimizer == "fmin_l_bfgs_b":
            res = scipy.optimize.minimize(obj_func, initial_theta, method="L-BFGS-B",
                                          jac=True, bounds=bounds)
            if not res.success:
                warnings.warn(f"lbfgs failed to converge (status={res.status}): {res.message}. "
                              f"Increase the number of iterations or rescale the data.",
                              ConvergenceWarning, stacklevel=3)
            return res.x, float(res.fun)
        if callable(self.optimizer):
            return self.optimizer(obj_func, initial_theta, bounds=bounds)
        raise ValueError(f"Unknown optimizer {self.optimizer}.")

    def _kernel_matrix(self, kernel, X, Y=None):
        """k(X) (white noise included) or k(X, Y), as a float64 array."""
        t = self._translate(kernel, X)
        if t is None:
            return np.asarray(kernel(X) if Y is None else kernel(X, Y), dtype=np.float64)
        if Y is not None:
            Y = np.asarray(Y, dtype=np.float64)
            return t.cross(X, Y)
        return t.matrix(X)

    # ------------------------------------------------------------ LML
    def log_marginal_likelihood(self, theta=None, eval_gradient=False, clone_kernel=True):
        """Log marginal likelihood of the training data for the kernel
        hyperparameters ``theta``.

        Parameters
        ----------
        theta : array-like of shape (n_kernel_params,), default=None
            Log-transformed hyperparameters, as ``kernel_.theta``.  None
            returns ``log_marginal_likelihood_value_``.
        eval_gradient : bool, default=False
            Also return the gradient with respect to theta (theta must then
            be given).
        clone_kernel : bool, default=True
            Evaluate a copy of ``kernel_`` with theta; False sets
            ``kernel_.theta`` in place.

        Returns
        -------
        log_likelihood : float
        log_likelihood_gradient : ndarray of shape (n_kernel_params,)
            Only with ``eval_gradient``.
        """
        if theta is None:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated for theta!=None")
            check_is_fitted(self, "log_marginal_likelihood_value_")
            return self.log_marginal_likelihood_value_
        check_is_fitted(self, "X_train_")
        theta = np.asarray(theta, dtype=np.float64)
        if clone_kernel:
            kernel = self.kernel_.clone_with_theta(theta)
        else:
            kernel = self.kernel_
            kernel.theta = theta
        n_theta = theta.shape[0]
        X = self.X_train_
        Y = self.y_train_ if self.y_train_.ndim > 1 else self.y_train_[:, None]
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            t = self._translate(kernel, X)
        if t is None:
            return _lml_sklearn(kernel, X, Y, self._alpha_fit, eval_gradient)
        return _lml_translated(t, X, Y, self._alpha_fit, eval_gradient, n_theta)

    # ------------------------------------------------------------ predict
    def predict(self, X, return_std=False, return_cov=False):
        """Predictive mean, and standard deviation or covariance.

        Before fit, the prior (mean 0, covariance ``kernel(X)``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of object
        return_std : bool, default=False
        return_cov : bool, default=False
            At most one of them.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,) or (n_samples, n_targets)
        y_std : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Only with ``return_std``.
        y_cov : ndarray of shape (n_samples, n_samples) or (n_samples, n_samples, n_targets)
            Only with ``return_cov``.
        """
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        kernel = self.kernel_ if hasattr(self, "X_train_") else self.kernel
        if kernel is None or kernel.requires_vector_input:
            X = validate_data(self, X, ensure_2d=True, dtype="numeric", reset=False)
        else:
            X = validate_data(self, X, ensure_2d=False, dtype=None, reset=False)
        if isinstance(X, np.ndarray) and X.dtype.kind in "iubf" and X.dtype != np.float64:
            X = X.astype(np.float64)
        if not hasattr(self, "X_train_"):
            kernel = _default_kernel() if self.kernel is None else self.kernel
            n_targets = self.n_targets if self.n_targets is not None else 1
            y_mean = np.zeros((_num_samples(X), n_targets)).squeeze()
            if return_cov:
                y_cov = self._kernel_matrix(kernel, X)
                if n_targets > 1:
                    y_cov = np.repeat(y_cov[:, :, None], n_targets, axis=-1)
                return y_mean, y_cov
            if return_std:
                y_var = np.asarray(kernel.diag(X), dtype=np.float64)
                if n_targets > 1:
                    y_var = np.repeat(y_var[:, None], n_targets, axis=-1)
                return y_mean, np.sqrt(y_var)
            return y_mean

        K_trans = self._kernel_matrix(self.kernel_, X, self.X_train_)
        y_mean = K_trans @ self.alpha_
        y_mean = self._y_train_std * y_mean + self._y_train_mean
        if y_mean.ndim > 1 and y_mean.shape[1] == 1:
            y_mean = y_mean[:, 0]
        if not (return_cov or return_std):
            return y_mean
        V = scipy.linalg.solve_triangular(self.L_, K_trans.T, lower=True, check_finite=False)
        std2 = np.atleast_1d(self._y_train_std) ** 2
        if return_cov:
            y_cov = self._kernel_matrix(self.kernel_, X) - V.T @ V
            y_cov = y_cov[:, :, None] * std2
            if y_cov.shape[2] == 1:
                y_cov = y_cov[:, :, 0]
            return y_mean, y_cov
        t = self._translate(self.kernel_, X)
        y_var = (t.diag(X) if t is not None
                 else np.array(self.kernel_.diag(X), dtype=np.float64, copy=True))
        y_var -= np.einsum("ij,ij->j", V, V)
        negative = y_var < 0
        if np.any(negative):
            warnings.warn("Predicted variances smaller than 0. Setting those variances to 0.")
            y_var[negative] = 0.0
        y_var = y_var[:, None] * std2
        if y_var.shape[1] == 1:
            y_var = y_var[:, 0]
        return y_mean, np.sqrt(y_var)

    def sample_y(self, X, n_samples=1, random_state=0):
        """Draw samples from the Gaussian process at X (the posterior
        after fit, the prior before).

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features) or list of object
        n_samples : int, default=1
            Samples per input.
        random_state : int, RandomState instance or None, default=0

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples) or (n_samples_X, n_targets, n_samples)
        """
        rng = check_random_state(random_state)
        y_mean, y_cov = self.predict(X, return_cov=True)
        if y_mean.ndim == 1:
            return rng.multivariate_normal(y_mean, y_cov, n_samples).T
        samples = [rng.multivariate_normal(y_mean[:, t], y_cov[..., t], n_samples).T[:, None]
                   for t in range(y_mean.shape[1])]
        return np.hstack(samples)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags


def _num_samples(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _lml_translated(t, X, Y, alpha, eval_gradient, n_theta):
    """The log marginal likelihood (summed over the columns of Y) and its
    gradient with respect to theta, on the compiled kernel."""
    n, n_t = Y.shape
    K = t.matrix(X)
    K[np.diag_indices(n)] += alpha
    if not np.all(np.isfinite(K.diagonal())):
        return (-np.inf, np.zeros(n_theta)) if eval_gradient else -np.inf
    if cholesky(K) != 0:
        return (-np.inf, np.zeros(n_theta)) if eval_gradient else -np.inf
    A, info = dpotrs(K, Y, lower=0)             # (K + alpha I)^-1 Y, from U (upper)
    diag = K.diagonal()
    lml = (-0.5 * float(np.einsum("ik,ik->", Y, A)) - n_t * float(np.sum(np.log(diag)))
           - n_t * 0.5 * n * np.log(2 * np.pi))
    if not eval_gradient:
        return lml
    sum_W = 0.0
    if t.constants:
        # 1^T C^-1 1 = |U^-T 1|^2
        z = scipy.linalg.solve_triangular(K, np.ones(n), trans="T", lower=False,
                                          check_finite=False)
        col = A.sum(axis=0)
        sum_W = 0.5 * (float(col @ col) - n_t * float(z @ z))
    if inverse_from_cholesky(K) != 0:
        return -np.inf, np.zeros(n_theta)
    trace_W = 0.5 * (float(np.einsum("ik,ik->", A, A)) - n_t * float(np.trace(K)))
    # W = 0.5 (A A^T - n_t C^-1), upper triangle, in place of C^-1
    K *= -0.5 * n_t
    W = dsyrk(0.5, np.asfortranarray(A), beta=1.0, c=K, trans=0, lower=0, overwrite_c=1)
    return lml, t.gradient(X, W, trace_W, sum_W)


def _lml_sklearn(kernel, X, Y, alpha, eval_gradient):
    """The same, with the kernel evaluated by scikit-learn."""
    n, n_t = Y.shape
    if eval_gradient:
        K, K_grad = kernel(X, eval_gradient=True)
    else:
        K = kernel(X)
    K = np.array(K, dtype=np.float64, order="F", copy=True)
    K[np.diag_indices(n)] += alpha
    n_theta = kernel.n_dims
    fail = (-np.inf, np.zeros(n_theta)) if eval_gradient else -np.inf
    if not np.all(np.isfinite(K)) or cholesky(K) != 0:
        return fail
    A, info = dpotrs(K, Y, lower=0)
    lml = (-0.5 * float(np.einsum("ik,ik->", Y, A)) - n_t * float(np.sum(np.log(K.diagonal())))
           - n_t * 0.5 * n * np.log(2 * np.pi))
    if not eval_gradient:
        return lml
    if inverse_from_cholesky(K) != 0:
        return fail
    Kinv = np.triu(K) + np.triu(K, 1).T
    W = 0.5 * (A @ A.T - n_t * Kinv)
    return lml, np.einsum("ij,jik->k", W, K_grad)


def _warn_at_bounds(kernel):
    """A ConvergenceWarning for every optimized value close to a bound
    (the same wording as scikit-learn's)."""
    theta = kernel.theta
    bounds = kernel.bounds
    close = np.isclose(bounds, np.atleast_2d(theta).T)
    k = 0
    for hyp in kernel.hyperparameters:
        if hyp.fixed:
            continue
        hb = np.atleast_2d(hyp.bounds)
        for dim in range(hyp.n_elements):
            row = hb[min(dim, hb.shape[0] - 1)]
            if close[k, 0]:
                warnings.warn(f"The optimal value found for dimension {dim} of parameter "
                              f"{hyp.name} is close to the specified lower bound {row[0]}. "
                              f"Decreasing the bound and calling fit again may find a better "
                              f"value.", ConvergenceWarning, stacklevel=3)
            elif close[k, 1]:
                warnings.warn(f"The optimal value found for dimension {dim} of parameter "
                              f"{hyp.name} is close to the specified upper bound {row[1]}. "
                              f"Increasing the bound and calling fit again may find a better "
                              f"value.", ConvergenceWarning, stacklevel=3)
            k += 1
