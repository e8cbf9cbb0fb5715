"""What bcd's GP regressors share: the estimator interface (parameters,
representation, tags, feature names, ``score``) and the validation of their
inputs, with scikit-learn's messages.

:class:`~bcd.gp.GPRegressor` (:mod:`bcd.gp.regressor`) and
:class:`~bcd.gp.SparseGPRegressor` (:mod:`bcd.gp.sparse`) build on this
module; its names are public within the package.  scikit-learn is not
imported here: its classes are imported when they are asked for (the tags,
and the exception and warning classes of an unfitted estimator or a
column-vector ``y``).
"""
import importlib
import inspect
import warnings

import numpy as np
import scipy.sparse as sp

from .._validation import _reject_masked
from .kernels import _Parameters

__all__ = ["RegressorBase", "check_array", "check_finite", "check_target",
           "feature_names", "not_fitted", "same_value", "sklearn_class"]


class _NotFittedError(ValueError, AttributeError):
    """Raised by a method that needs a fitted estimator, when scikit-learn
    (whose ``NotFittedError`` is raised otherwise) is not installed."""


def sklearn_class(module, name, fallback):
    """``module.name`` from scikit-learn, or ``fallback`` if it is not installed."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        return fallback


def not_fitted(estimator):
    error = sklearn_class("sklearn.exceptions", "NotFittedError", _NotFittedError)
    return error(f"This {type(estimator).__name__} instance is not fitted yet; call fit(X, y) "
                 f"first.")


def feature_names(X):
    """The column names of a data frame when they are all strings, else None."""
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    names = np.asarray(list(columns), dtype=object)
    if names.size == 0 or not all(isinstance(name, str) for name in names):
        return None
    return names


def check_array(X, name, allow_1d, owner="GPRegressor"):
    """``X`` as a 2-D float array (float32 kept, other types as float64), with
    scikit-learn's messages for the cases its estimator checks probe."""
    if sp.issparse(X):
        raise TypeError(f"{name} is a sparse matrix, which {owner} does not support "
                        f"(the kernel works on dense inputs); pass {name}.toarray().")
    _reject_masked(X, name)
    arr = np.asarray(X)
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"Complex data not supported: {name} has dtype {arr.dtype}.")
    if arr.dtype == object:
        arr = arr.astype(np.float64)    # raises TypeError for non-numeric entries
    elif not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}.")
    if arr.ndim == 1 and allow_1d:
        arr = arr[:, None]
    if arr.ndim != 2:
        hint = (" Reshape your data either using X.reshape(-1, 1) if it has a single feature "
                "or X.reshape(1, -1) if it holds a single sample." if arr.ndim == 1 else "")
        raise ValueError(f"Expected a 2-D array for {name}, got {arr.ndim} dimension(s) "
                         f"(shape {arr.shape}).{hint}")
    if arr.shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum "
                         f"of 1 is required ({name}).")
    if arr.shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum "
                         f"of 1 is required ({name}).")
    if arr.dtype != np.float32:
        arr = arr.astype(np.float64, copy=False)
    check_finite(arr, name)
    return arr


def check_target(y, n_samples, owner="GPRegressor"):
    """``y`` as a 1-D float array of length ``n_samples``."""
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None.")
    if sp.issparse(y):
        raise TypeError("y is a sparse matrix; pass a 1-D array.")
    _reject_masked(y, "y")
    arr = np.asarray(y)
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"Complex data not supported: y has dtype {arr.dtype}.")
    if arr.dtype == object:
        arr = arr.astype(np.float64)
    elif not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"y must hold real numbers, got dtype {arr.dtype}.")
    if arr.ndim == 2 and arr.shape[1] == 1:
        warning = sklearn_class("sklearn.exceptions", "DataConversionWarning", UserWarning)
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                      "change the shape of y to (n_samples,), for example using ravel().",
                      warning, stacklevel=3)
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {arr.shape} instead "
                         f"({owner} has a single output).")
    if arr.shape[0] != n_samples:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: X has "
                         f"{n_samples}, y has {arr.shape[0]}.")
    if arr.dtype != np.float32:
        arr = arr.astype(np.float64, copy=False)
    check_finite(arr, "y")
    return arr


def check_finite(arr, name):
    if not np.all(np.isfinite(arr)):
        if np.any(np.isnan(arr)):
            raise ValueError(f"Input {name} contains NaN.")
        raise ValueError(f"Input {name} contains infinity or a value too large for "
                         f"dtype({arr.dtype.name!r}).")


def same_value(value, default):
    if value is default:
        return True
    if isinstance(value, np.ndarray) or type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):
        return False



class RegressorBase(_Parameters):
    """The estimator interface shared by bcd's GP regressors: parameters
    (kernel parameters included), representation, tags, the check of
    feature names and ``score``.  Subclasses define ``__init__``, ``fit``
    and ``predict``."""

    #: for scikit-learn before 1.6, which reads the estimator type from here
    _estimator_type = "regressor"

    # ------------------------------------------------------------ estimator interface

    def set_params(self, **params):
        """Set parameters; ``kernel__name`` sets a parameter of the kernel.

        The values are stored as given (``fit`` validates them); a kernel's
        own parameters are validated by the kernel.

        Parameters
        ----------
        **params
            New values, by parameter name.

        Returns
        -------
        self : estimator
        """
        if not params:
            return self
        own, nested = self._split_params(params)
        for name, value in own.items():
            if name in params:
                setattr(self, name, value)
        for name, sub in nested.items():
            target = getattr(self, name)
            if not hasattr(target, "set_params"):
                raise ValueError(f"Invalid parameter {name}__{next(iter(sub))!r}: {name} "
                                 f"({target!r}) has no parameters to set.")
            target.set_params(**sub)
        return self

    def _invalid_parameter(self, name, names):
        return ValueError(f"Invalid parameter {name!r} for estimator {self!r}. Valid "
                          f"parameters are: {sorted(names)!r}.")

    def __repr__(self):
        signature = inspect.signature(type(self).__init__)
        parts = []
        for name in self._param_names():
            value = getattr(self, name)
            default = signature.parameters[name].default
            if default is inspect.Parameter.empty or not same_value(value, default):
                parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags

        return Tags(estimator_type="regressor", target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags(), input_tags=InputTags())

    def _more_tags(self):
        # scikit-learn before 1.6
        return {"requires_y": True}

    def _check_feature_names(self, X):
        fitted = getattr(self, "feature_names_in_", None)
        names = feature_names(X)
        if fitted is None and names is not None:
            warnings.warn(f"X has feature names, but {type(self).__name__} was fitted without "
                          f"feature names", UserWarning, stacklevel=3)
        elif fitted is not None and names is None:
            warnings.warn(f"X does not have valid feature names, but {type(self).__name__} "
                          f"was fitted with feature names", UserWarning, stacklevel=3)
        elif fitted is not None and (names.shape != fitted.shape or np.any(names != fitted)):
            raise ValueError(f"The feature names should match those that were passed during "
                             f"fit: {list(fitted)}, got {list(names)}.")

    def score(self, X, y, sample_weight=None):
        r"""Coefficient of determination :math:`R^2` of the predictive mean.

        :math:`R^2 = 1 - \sum_i w_i (y_i - \hat y_i)^2 / \sum_i w_i (y_i -
        \bar y)^2` with :math:`\bar y` the weighted mean of y: 1 for perfect
        predictions, 0 for predicting :math:`\bar y`, and negative for
        worse.  When y is constant it is 1 for perfect predictions and 0
        otherwise (scikit-learn's ``r2_score``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True targets.
        sample_weight : array-like of shape (n_samples,), optional
            Weights :math:`w_i` (default 1).

        Returns
        -------
        score : float
        """
        pred = self.predict(X)
        y = check_target(y, pred.shape[0], type(self).__name__).astype(np.float64)
        if sample_weight is None:
            w = np.ones_like(y)
        else:
            w = np.asarray(sample_weight, dtype=np.float64)
            if w.ndim == 0:
                w = np.full_like(y, float(w))
            if w.shape != y.shape:
                raise ValueError(f"sample_weight has shape {w.shape}, expected {y.shape}.")
            check_finite(w, "sample_weight")
        if y.shape[0] < 2:
            warnings.warn("R^2 score is not well-defined with less than two samples.",
                          UserWarning, stacklevel=2)
            return float("nan")
        residual = float(np.sum(w * (y - pred) ** 2))
        total = float(np.sum(w * (y - np.average(y, weights=w)) ** 2))
        if total == 0.0:
            return 1.0 if residual == 0.0 else 0.0
        return 1.0 - residual / total
