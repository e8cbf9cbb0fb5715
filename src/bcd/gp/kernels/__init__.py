"""Covariance functions for Gaussian process regression.

The continuous kernels are stationary: they depend on the inputs through
their distance only.  :class:`Hamming` (alias :class:`Overlap`) compares
integer-coded categorical features and :class:`HistogramIntersection`
non-negative feature vectors; neither needs a derivative with respect to the
inputs.  Kernels combine with ``+`` and ``*``, and ``kernel(X1, X2)``
returns the dense matrix for small inputs.  Solvers never call that: they
evaluate the entries they need on the fly in compiled code.

>>> import numpy as np
>>> from bcd.gp import SquaredExponential, Periodic
>>> k = SquaredExponential(lengthscale=[1.0, 2.0], variance=2.0) + Periodic(1.0, 0.5)
>>> K = k(np.zeros((1, 2)), np.array([[0.0, 0.0], [1.0, 0.0]]))
>>> np.round(K, 4)
array([[3.    , 2.2131]])

Kernels have scikit-learn's parameter interface: ``get_params`` lists the
constructor's arguments (with ``deep=True`` also those of the parts of a sum
or product, as ``k1__lengthscale``) and ``set_params`` changes them with the
constructor's validation, so that ``sklearn.base.clone`` copies them and
grid searches reach them through an estimator (``kernel__lengthscale``).

>>> k.get_params()["k1__lengthscale"]
array([1., 2.])
>>> k.set_params(k2__period=2.0).k2
Periodic(period=2, lengthscale=0.5, variance=1)
"""
import inspect
import numbers

import numpy as np

from collections import namedtuple

from ..._validation import _reject_masked
from .._kernel import (GRAD_NONE, GRAD_SCALAR, METRIC_MIN, CyKernelEvaluator, CyKernelGradient,
                       kinds)

__all__ = ["Kernel", "SquaredExponential", "Matern", "Periodic", "LocallyPeriodic",
           "RationalQuadratic", "Hamming", "Overlap", "HistogramIntersection", "Sum", "Product",
           "Hyperparameter", "KINDS"]

#: A row of :data:`KINDS`: the kind's name and code, the metric it reads
#: (``METRIC_*`` of :mod:`bcd.gp._kernel`), the form of its length-scale
#: derivative (``GRAD_*``) and whether it has a shape parameter.
Kind = namedtuple("Kind", ["name", "code", "metric", "gradient", "has_shape"])

#: The table of kinds of kernel factors, by name: compiled from
#: ``bcd/gp/kernels/kinds.h``, where each kind's formula and derivatives are
#: written once.  A base kernel class names its row (``_kind``).
KINDS = {row[0]: Kind(*row) for row in kinds()}

#: default bounds of every learnable parameter (scikit-learn's)
DEFAULT_BOUNDS = (1e-5, 1e5)


def _positive(value, name, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {name} must be a positive real number, got {value!r}.")
    value = float(value)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{owner}: {name} must be positive and finite, got {value!r}.")
    return value


def _lengthscales(value, owner, name="lengthscale"):
    raw = np.asarray(value)
    if isinstance(value, bool) or raw.dtype == object or raw.dtype.kind not in "iuf":
        raise TypeError(f"{owner}: {name} must be a positive real number or an array of "
                        f"them (one per input dimension), got {value!r}.")
    arr = np.asarray(value, dtype=np.float64) if not isinstance(value, numbers.Real) \
        else np.asarray(float(value))
    if arr.ndim > 1 or arr.size == 0:
        raise ValueError(f"{owner}: {name} must be a positive scalar or one value per "
                         f"input dimension, got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or not np.all(arr > 0):
        raise ValueError(f"{owner}: {name} must be positive and finite, got {value!r}.")
    return arr


def _check_inputs(X, name="X"):
    _reject_masked(X, name)
    X = np.asarray(X)
    if X.dtype == object or not np.issubdtype(X.dtype, np.number) \
            or np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}.")
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (n_samples, n_features), "
                         f"got shape {X.shape}.")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return X


class _Parameters:
    """scikit-learn's parameter listing from the constructor's signature,
    shared by the kernels and the GP regressors."""

    @classmethod
    def _param_names(cls):
        """Names of the constructor's arguments, in order."""
        signature = inspect.signature(cls.__init__)
        return [p.name for p in signature.parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep=True):
        """The constructor's arguments, as stored.

        Parameters
        ----------
        deep : bool, default=True
            Also list the parameters of the parameters that have their own
            (a regressor's kernel, the parts of a sum or product of kernels),
            as ``kernel__lengthscale`` or ``k1__lengthscale``.

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        params = {}
        for name in self._param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                params.update((f"{name}__{key}", item)
                              for key, item in value.get_params(deep=True).items())
            params[name] = value
        return params

    def _split_params(self, params):
        """The parameters of ``set_params`` split into this object's own
        (every constructor argument, with the new values) and the nested
        ones (``name__param``, by name); an unknown name raises the
        subclass's ``_invalid_parameter`` error."""
        names = self._param_names()
        own = {name: getattr(self, name) for name in names}
        nested = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if name not in own:
                raise self._invalid_parameter(name, names)
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                own[name] = value
        return own, nested

    def _invalid_parameter(self, name, names):
        return ValueError(f"Invalid parameter {name!r} for {self!r}; valid parameters are "
                          f"{', '.join(names)}.")


class Kernel(_Parameters):
    """Base class of the covariance functions.

    Subclasses describe themselves as a sum of products of base factors
    (:meth:`_terms`); the compiled evaluator works from that description.
    """

    def __add__(self, other):
        if not isinstance(other, Kernel):
            return NotImplemented
        return Sum(self, other)

    def __mul__(self, other):
        if not isinstance(other, Kernel):
            return NotImplemented
        return Product(self, other)

    def set_params(self, **params):
        """Change parameters; they are validated as by the constructor.

        ``name__param`` sets the parameter ``param`` of the part ``name``
        (``k1`` or ``k2``) of a sum or product, in place.  A rejected value
        raises the constructor's error and leaves the kernel it was meant for
        unchanged.

        Parameters
        ----------
        **params
            New values, by parameter name.

        Returns
        -------
        self : Kernel
        """
        if not params:
            return self
        own, nested = self._split_params(params)
        for name in nested:
            if not isinstance(own[name], Kernel):
                raise ValueError(f"Parameter {name!r} of {type(self).__name__} is not a kernel; "
                                 f"{name}__... parameters do not apply.")
        new = type(self)(**own)           # the constructor's validation
        for name, sub in nested.items():
            getattr(new, name).set_params(**sub)
        self.__dict__.update(new.__dict__)
        return self

    def _invalid_parameter(self, name, names):
        return ValueError(f"Invalid parameter {name!r} for kernel {self!r}; valid "
                          f"parameters are {', '.join(names)}.")

    def _terms(self):
        """List of terms; a term is a list of factors
        ``(code, variance, scaling, params, owner)`` where ``scaling``
        multiplies the inputs (1 / lengthscale per dimension, or 1) or, for
        a Hamming factor, weighs the mismatches, ``params`` are the kind's
        own parameters (a, b, c) (see ``kinds.h``) and ``owner`` is the base
        kernel the factor comes from."""
        raise NotImplementedError

    def _bases(self):
        """The base kernels this kernel is made of, each once, in the order
        of the tree (``k1`` before ``k2``)."""
        return [base for _, base in self._named_bases()]

    def _check_dim(self, dim):
        for term in self._terms():
            for factor in term:
                scale = np.asarray(factor[2])
                if scale.size not in (1, dim):
                    what = "weights" if factor[4]._length_name == "weights" else "length-scales"
                    raise ValueError(f"{self!r} has {scale.size} {what} but the inputs "
                                     f"have {dim} dimensions.")

    def _spec(self, dim, gradient=False):
        """``(terms, scalings, kinds)`` for
        :class:`bcd.gp._kernel.CyKernelEvaluator`: distinct metrics (kind and
        vector) are stored once.  With ``gradient``, also the map of the
        factors' log-parameters to positions in :meth:`_get_theta`:
        ``(var_idx, len_idx, per_idx, n_params)``."""
        self._check_dim(dim)
        scalings, kinds, terms = [], [], []
        offsets, total = [], 0
        for base in self._bases():
            offsets.append((base, total))
            total += sum(size for _, size in base._hyper_sizes())
        var_idx, len_idx, per_idx = [], [], []
        for term in self._terms():
            out = []
            for code, variance, scale, params, owner in term:
                kind = owner._metric_kind
                s = np.broadcast_to(np.asarray(scale, dtype=np.float64), (dim,)).copy()
                for k, known in enumerate(scalings):
                    if kinds[k] == kind and np.array_equal(known, s):
                        break
                else:
                    scalings.append(s)
                    kinds.append(kind)
                    k = len(scalings) - 1
                out.append((code, variance, k) + tuple(params))
                if gradient:
                    start = next(off for base, off in offsets if base is owner)
                    positions = {}
                    for name, size in owner._hyper_sizes():
                        positions[name] = (start, size)
                        start += size
                    v = positions.get("variance")
                    var_idx.append(v[0] if v else -1)
                    row = np.full(dim, -1)
                    name = owner._length_name
                    form = KINDS[owner._kind].gradient
                    if name in positions and form != GRAD_NONE:
                        first, size = positions[name]
                        if form == GRAD_SCALAR:
                            row[0] = first
                        else:
                            row[:] = first if size == 1 else first + np.arange(dim)
                    len_idx.append(row)
                    p = positions.get(owner._shape_name)
                    per_idx.append(p[0] if p else -1)
            terms.append(out)
        if not gradient:
            return terms, scalings, kinds
        return (terms, scalings, kinds), (np.asarray(var_idx), np.asarray(len_idx).reshape(-1, dim),
                                          np.asarray(per_idx), total)

    # -- hyperparameters in log space (used by the sparse GP's optimizer)
    def _theta_names(self, prefix=""):
        """Names of the log-parameters, in the order of :meth:`_get_theta`."""
        names = []
        for path, base in self._named_bases(prefix):
            for name, size in base._hyper_sizes():
                full = f"{path}{name}"
                names += [full] if size == 1 else [f"{full}[{k}]" for k in range(size)]
        return names

    def _named_bases(self, prefix=""):
        """``(path, base)`` of every distinct base kernel (``k1__k2__``...)."""
        if not hasattr(self, "k1"):
            return [(prefix, self)]
        out = []
        for name in ("k1", "k2"):
            for path, base in getattr(self, name)._named_bases(f"{prefix}{name}__"):
                if not any(base is known for _, known in out):
                    out.append((path, base))
        return out

    def _get_theta(self):
        """The logarithms of the kernel's parameters (length-scales, Hamming
        weights, periods, variances), one vector."""
        parts = [np.log(np.atleast_1d(np.asarray(getattr(base, name), dtype=np.float64)))
                 for base in self._bases() for name, _ in base._hyper_sizes()]
        return np.concatenate(parts) if parts else np.zeros(0)

    def _set_theta(self, theta):
        """Set the parameters from their logarithms (the order of
        :meth:`_get_theta`), validated as by the constructors."""
        theta = np.asarray(theta, dtype=np.float64)
        pos = 0
        for base in self._bases():
            values = {}
            for name, size in base._hyper_sizes():
                chunk = np.exp(theta[pos:pos + size])
                pos += size
                old = np.asarray(getattr(base, name))
                values[name] = float(chunk[0]) if old.ndim == 0 else chunk
            base.set_params(**values)
        if pos != theta.shape[0]:
            raise ValueError(f"theta has {theta.shape[0]} entries, the kernel {pos} parameters.")
        return self

    def _validate_inputs(self, X, name="X"):
        """Check that the inputs suit the kernel (integer codes for Hamming,
        non-negative entries for histogram intersection)."""
        for base in self._bases():
            base._check_values(X, name)

    def evaluator(self, X1, X2=None, n_threads=None):
        """Compiled evaluator of the entries k(X1[i], X2[j]) (inputs validated)."""
        X1 = _check_inputs(X1, "X1")
        self._validate_inputs(X1, "X1")
        if X2 is not None:
            X2 = _check_inputs(X2, "X2")
            if X2.shape[1] != X1.shape[1]:
                raise ValueError(f"X2 has {X2.shape[1]} features, X1 has {X1.shape[1]}.")
            self._validate_inputs(X2, "X2")
        return CyKernelEvaluator(self._spec(X1.shape[1]), X1, X2, n_threads)

    def __call__(self, X1, X2=None):
        """The dense matrix ``K[i, j] = k(X1[i], X2[j])`` (``X2`` defaults to ``X1``)."""
        return self.evaluator(X1, X2).matrix()

    @property
    def stationary(self):
        """Whether k(x, x) is the same for every x (not so with a histogram
        intersection factor)."""
        return all(base._metric_kind != METRIC_MIN for base in self._bases())

    def diag_value(self):
        """k(x, x), the same for every x (stationary kernels only; see :meth:`diag`)."""
        if not self.stationary:
            raise TypeError(f"{self!r} is not stationary: k(x, x) depends on x; use "
                            f"kernel.diag(X).")
        return float(sum(np.prod([f[1] for f in term]) for term in self._terms()))

    def diag(self, X):
        """k(x, x) for every row x of X."""
        X = _check_inputs(X, "X")
        if self.stationary:
            self._validate_inputs(X, "X")
            return np.full(X.shape[0], self.diag_value())
        return self.evaluator(X).diagonal()

    # -- the hyperparameters of GPRegressor's optimizers (scikit-learn's names)
    @property
    def hyperparameters(self):
        """The learnable parameters (fixed ones included, flagged), in the
        order of :attr:`theta`: a list of :class:`Hyperparameter`."""
        out = []
        for prefix, leaf in _leaves(self):
            for name in leaf._hyperparameter_names:
                bounds = getattr(leaf, name + "_bounds")
                value = np.atleast_1d(np.asarray(getattr(leaf, name), dtype=np.float64)).copy()
                out.append(Hyperparameter(prefix + name, value, bounds,
                                          isinstance(bounds, str)))
        return out

    @property
    def theta(self):
        """Logarithms of the free parameters, concatenated (a copy); setting
        it sets the parameters."""
        parts = [np.log(h.value) for h in self.hyperparameters if not h.fixed]
        return np.concatenate(parts) if parts else np.zeros(0)

    @theta.setter
    def theta(self, theta):
        theta = np.asarray(theta, dtype=np.float64).ravel()
        k = 0
        for prefix, leaf in _leaves(self):
            for name in leaf._hyperparameter_names:
                if isinstance(getattr(leaf, name + "_bounds"), str):
                    continue
                old = getattr(leaf, name)
                size = int(np.size(old))
                if k + size > theta.shape[0]:
                    raise ValueError(f"theta has {theta.shape[0]} entries, the kernel has more "
                                     f"free parameters.")
                value = np.exp(theta[k:k + size])
                if not np.all(np.isfinite(value)) or not np.all(value > 0):
                    raise ValueError(f"theta gives {prefix + name} = {value}, not positive and "
                                     f"finite.")
                if isinstance(old, np.ndarray):
                    setattr(leaf, name, value.reshape(old.shape))
                else:
                    setattr(leaf, name, float(value[0]))
                k += size
        if k != theta.shape[0]:
            raise ValueError(f"theta has {theta.shape[0]} entries, the kernel {k} free "
                             f"parameters.")

    @property
    def bounds(self):
        """Log-bounds of the free parameters, shape (len(theta), 2)."""
        rows = []
        for h in self.hyperparameters:
            if not h.fixed:
                lo, hi = np.log(np.asarray(h.bounds, dtype=np.float64))
                rows.extend([(lo, hi)] * h.n_elements)
        return np.array(rows, dtype=np.float64).reshape(-1, 2)

    def gradient(self, X1, X2=None, n_threads=None):
        """Compiled contractions with the derivatives of the kernel matrix
        ``k(X1, X2)`` with respect to :attr:`theta`
        (:class:`bcd.gp._kernel.CyKernelGradient`): ``.dense(W)`` and
        ``.low_rank(U, V)`` return ``sum_ij W_ij dK_ij/dtheta_p`` for every p."""
        ev = self.evaluator(X1, X2, n_threads)
        var, ls, ard, per, n_params = self._gradient_spec(ev.dim)
        return CyKernelGradient(ev, var, ls, ard, per, n_params)

    def _gradient_spec(self, dim):
        """Per factor of ``_spec(dim)``: indices in theta of its variance, first
        length-scale and shape parameter (-1: fixed or absent), and whether
        its length-scale has one value per dimension."""
        index, k = {}, 0
        for h in self.hyperparameters:
            if not h.fixed:
                index[h.name] = k
                k += h.n_elements
        var, ls, ard, per = [], [], [], []
        for term in _hyper_terms(self):
            for prefix, leaf in term:
                var.append(index.get(prefix + "variance", -1))
                ls.append(index.get(prefix + "lengthscale", -1))
                ard.append(int(np.size(leaf.lengthscale) > 1))
                shape = leaf._shape_name
                per.append(index.get(prefix + shape, -1) if shape else -1)
        return var, ls, ard, per, k



class _Base(Kernel):
    """A base kernel: one factor of a kind of :data:`KINDS`.

    A subclass names its row (``_kind``) and describes its parameters:
    ``_kind_params`` (the kind's own parameters a, b, c), ``_scale`` (what
    multiplies the inputs, or weighs the mismatches), ``_hyper_sizes`` (its
    continuous parameters, as the sparse GP learns them) and, for
    :class:`~bcd.gp.GPRegressor`'s optimizers, ``_hyperparameter_names``
    (in the order of theta) and ``_shape_name``."""
    #: the row of KINDS
    _kind = None
    #: the parameter whose logarithm the length-scale derivative is for
    _length_name = "lengthscale"
    #: the shape parameter (period, alpha), if the kind has one
    _shape_name = None
    #: the learnable parameters, in the order of theta (variance first, like
    #: scikit-learn's ``ConstantKernel * RBF``); None: not declared
    _hyperparameter_names = ("variance", "lengthscale")

    @property
    def _code(self):
        return KINDS[self._kind].code

    @property
    def _metric_kind(self):
        return KINDS[self._kind].metric

    def _terms(self):
        return [[(self._code, self.variance, self._scale(), self._kind_params(), self)]]

    def _scale(self):
        return 1.0 / self.lengthscale

    def _kind_params(self):
        """The kind's own parameters (a, b, c) (see ``kinds.h``)."""
        return (0.0, 0.0, 0.0)

    def _hyper_sizes(self):
        """``(name, size)`` of the continuous parameters."""
        return [("lengthscale", np.asarray(self.lengthscale).size), ("variance", 1)]

    def _check_values(self, X, name):
        pass


class SquaredExponential(_Base):
    r"""Squared exponential kernel with automatic relevance determination.

    :math:`k(x, x') = \sigma_f^2 \exp(-\tfrac12 \sum_d (x_d - x'_d)^2 / \ell_d^2)`.

    Parameters
    ----------
    lengthscale : float or array-like of shape (n_features,)
        One length-scale, or one per input dimension (ARD).
    variance : float, default=1.0
        Signal variance :math:`\sigma_f^2`.
    """
    _kind = "SQUARED_EXPONENTIAL"

    def __init__(self, lengthscale, variance=1.0, lengthscale_bounds=DEFAULT_BOUNDS,
                 variance_bounds=DEFAULT_BOUNDS):
        self.lengthscale = _lengthscales(lengthscale, "SquaredExponential")
        self.variance = _positive(variance, "variance", "SquaredExponential")
        self.lengthscale_bounds = check_bounds(lengthscale_bounds, "lengthscale_bounds",
                                               "SquaredExponential")
        self.variance_bounds = check_bounds(variance_bounds, "variance_bounds",
                                            "SquaredExponential")

    def __repr__(self):
        return f"SquaredExponential(lengthscale={_fmt(self.lengthscale)}, variance={self.variance:g})"


class Matern(_Base):
    r"""Matern kernel with smoothness 3/2 or 5/2.

    With :math:`r^2 = \sum_d (x_d - x'_d)^2 / \ell_d^2`:
    :math:`\sigma_f^2 (1 + \sqrt3 r) e^{-\sqrt3 r}` for ``nu=1.5`` and
    :math:`\sigma_f^2 (1 + \sqrt5 r + 5r^2/3) e^{-\sqrt5 r}` for ``nu=2.5``.

    Parameters
    ----------
    nu : {1.5, 2.5}
    lengthscale : float or array-like of shape (n_features,)
    variance : float, default=1.0
    """

    def __init__(self, nu, lengthscale, variance=1.0, lengthscale_bounds=DEFAULT_BOUNDS,
                 variance_bounds=DEFAULT_BOUNDS):
        if nu not in (1.5, 2.5) or isinstance(nu, bool):
            raise ValueError(f"Matern: nu must be 1.5 or 2.5, got {nu!r}.")
        self.nu = float(nu)
        self.lengthscale = _lengthscales(lengthscale, "Matern")
        self.variance = _positive(variance, "variance", "Matern")
        self.lengthscale_bounds = check_bounds(lengthscale_bounds, "lengthscale_bounds", "Matern")
        self.variance_bounds = check_bounds(variance_bounds, "variance_bounds", "Matern")

    @property
    def _kind(self):
        return "MATERN32" if self.nu == 1.5 else "MATERN52"

    def __repr__(self):
        return (f"Matern(nu={self.nu:g}, lengthscale={_fmt(self.lengthscale)}, "
                f"variance={self.variance:g})")


class Periodic(_Base):
    r"""Periodic (exponentiated sine squared) kernel.

    :math:`k(x, x') = \sigma_f^2 \exp(-2 \sin^2(\pi \|x - x'\| / p) / \ell^2)`.

    A function of the Euclidean distance, it is positive definite for
    one-dimensional inputs (a time, an angle) only: on inputs of two or more
    dimensions its kernel matrices can have negative eigenvalues (so can
    those of :class:`LocallyPeriodic`), and the solvers then fail to
    converge or report a matrix that is not positive definite.

    Parameters
    ----------
    period : float
        Period p.
    lengthscale : float
        Length-scale :math:`\ell` (a scalar).
    variance : float, default=1.0
    """
    _kind = "PERIODIC"
    _shape_name = "period"
    _hyperparameter_names = ("variance", "lengthscale", "period")

    def __init__(self, period, lengthscale, variance=1.0, period_bounds=DEFAULT_BOUNDS,
                 lengthscale_bounds=DEFAULT_BOUNDS, variance_bounds=DEFAULT_BOUNDS):
        name = type(self).__name__
        self.period = _positive(period, "period", name)
        self.lengthscale = _positive(lengthscale, "lengthscale", name)
        self.variance = _positive(variance, "variance", name)
        self.period_bounds = check_bounds(period_bounds, "period_bounds", name)
        self.lengthscale_bounds = check_bounds(lengthscale_bounds, "lengthscale_bounds", name)
        self.variance_bounds = check_bounds(variance_bounds, "variance_bounds", name)

    def _scale(self):
        return 1.0

    def _kind_params(self):
        # 1 / lengthscale^2, 1 / period, pi / period
        return (1.0 / self.lengthscale ** 2, 1.0 / self.period, np.pi / self.period)

    def _hyper_sizes(self):
        return [("period", 1), ("lengthscale", 1), ("variance", 1)]

    def __repr__(self):
        return (f"{type(self).__name__}(period={self.period:g}, "
                f"lengthscale={self.lengthscale:g}, variance={self.variance:g})")


class LocallyPeriodic(Periodic):
    r"""Locally periodic kernel: a squared exponential times a periodic
    kernel with a shared length-scale.

    :math:`k(x, x') = \sigma_f^2 \exp(-\|x - x'\|^2 / (2\ell^2))
    \exp(-2 \sin^2(\pi \|x - x'\| / p) / \ell^2)`.

    Positive definite for one-dimensional inputs only, like :class:`Periodic`.
    """
    _kind = "LOCALLY_PERIODIC"


class RationalQuadratic(_Base):
    r"""Rational quadratic kernel with automatic relevance determination: a
    scale mixture of squared exponentials of different length-scales.

    :math:`k(x, x') = \sigma_f^2 (1 + r^2 / (2 \alpha))^{-\alpha}` with
    :math:`r^2 = \sum_d (x_d - x'_d)^2 / \ell_d^2`; the squared exponential
    is its limit as :math:`\alpha \to \infty`.  scikit-learn's
    ``RationalQuadratic(length_scale, alpha)`` for a scalar length-scale.

    Parameters
    ----------
    lengthscale : float or array-like of shape (n_features,)
        One length-scale, or one per input dimension (ARD).
    alpha : float, default=1.0
        Scale-mixture parameter :math:`\alpha > 0`.
    variance : float, default=1.0
        Signal variance :math:`\sigma_f^2`.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.gp import RationalQuadratic
    >>> k = RationalQuadratic(lengthscale=2.0, alpha=0.5)
    >>> np.round(k(np.zeros((1, 1)), np.array([[0.0], [2.0]])), 4)
    array([[1.    , 0.7071]])
    """
    _kind = "RATIONAL_QUADRATIC"
    _shape_name = "alpha"
    _hyperparameter_names = ("variance", "lengthscale", "alpha")

    def __init__(self, lengthscale, alpha=1.0, variance=1.0, lengthscale_bounds=DEFAULT_BOUNDS,
                 alpha_bounds=DEFAULT_BOUNDS, variance_bounds=DEFAULT_BOUNDS):
        name = type(self).__name__
        self.lengthscale = _lengthscales(lengthscale, name)
        self.alpha = _positive(alpha, "alpha", name)
        self.variance = _positive(variance, "variance", name)
        self.lengthscale_bounds = check_bounds(lengthscale_bounds, "lengthscale_bounds", name)
        self.alpha_bounds = check_bounds(alpha_bounds, "alpha_bounds", name)
        self.variance_bounds = check_bounds(variance_bounds, "variance_bounds", name)

    def _kind_params(self):
        # alpha, 1 / (2 alpha)
        return (self.alpha, 0.5 / self.alpha, 0.0)

    def _hyper_sizes(self):
        return [("lengthscale", np.asarray(self.lengthscale).size), ("alpha", 1),
                ("variance", 1)]

    def __repr__(self):
        return (f"RationalQuadratic(lengthscale={_fmt(self.lengthscale)}, "
                f"alpha={self.alpha:g}, variance={self.variance:g})")


class Hamming(_Base):
    r"""Kernel on integer-coded categorical features: an exponentiated
    weighted Hamming distance.

    :math:`k(x, x') = \sigma_f^2 \exp(-\sum_d w_d [x_d \ne x'_d])`, the
    product over features of :math:`\exp(-w_d [x_d \ne x'_d])`, each a
    valid kernel (a constant plus a multiple of the indicator of equal
    codes), so k is positive semi-definite.  A large weight makes a feature
    decisive, a small one nearly irrelevant; for small weights
    :math:`k \approx \sigma_f^2 (1 - \sum_d w_d + \sum_d w_d [x_d = x'_d])`,
    a weighted overlap kernel plus a constant.  The inputs are codes
    (integers stored in any numeric type); their values carry no order.

    Parameters
    ----------
    weights : float or array-like of shape (n_features,), default=1.0
        One weight per feature, or one for all.
    variance : float, default=1.0
        Signal variance :math:`\sigma_f^2` (= k(x, x)).

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.gp import Hamming
    >>> k = Hamming(weights=[1.0, 0.5], variance=2.0)
    >>> np.round(k(np.array([[0, 1]]), np.array([[0, 1], [0, 2], [3, 2]])), 4)
    array([[2.    , 1.2131, 0.4463]])
    """
    _kind = "HAMMING"
    _length_name = "weights"
    _hyperparameter_names = None

    def __init__(self, weights=1.0, variance=1.0):
        name = type(self).__name__
        self.weights = _lengthscales(weights, name, "weights")
        self.variance = _positive(variance, "variance", name)

    def _scale(self):
        return self.weights

    def _hyper_sizes(self):
        return [("weights", np.asarray(self.weights).size), ("variance", 1)]

    def _check_values(self, X, name):
        bad = X != np.round(X)
        if np.any(bad):
            row, col = np.argwhere(bad)[0]
            raise ValueError(f"{type(self).__name__} kernel: categorical codes must be "
                             f"integers, but {name}[{row}, {col}] = {X[row, col]!r}.")

    def __repr__(self):
        return f"{type(self).__name__}(weights={_fmt(self.weights)}, variance={self.variance:g})"


#: The Hamming kernel under the name of the overlap (matching features) kernel.
Overlap = Hamming


class HistogramIntersection(_Base):
    r"""Histogram intersection kernel on non-negative feature vectors.

    :math:`k(x, x') = \sigma_f^2 \sum_d \min(x_d, x'_d)` (positive
    semi-definite for non-negative inputs).  It is not stationary:
    :math:`k(x, x) = \sigma_f^2 \sum_d x_d`; an all-zero row has zero
    variance.

    Parameters
    ----------
    variance : float, default=1.0
        Scale :math:`\sigma_f^2`.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.gp import HistogramIntersection
    >>> k = HistogramIntersection(variance=2.0)
    >>> k(np.array([[0.2, 0.8]]), np.array([[0.5, 0.5], [0.2, 0.8]]))
    array([[1.4, 2. ]])
    """
    _kind = "INTERSECTION"
    _hyperparameter_names = None

    def __init__(self, variance=1.0):
        self.variance = _positive(variance, "variance", type(self).__name__)

    def _scale(self):
        return 1.0

    def _hyper_sizes(self):
        return [("variance", 1)]

    def _check_values(self, X, name):
        if np.any(X < 0):
            row, col = np.argwhere(X < 0)[0]
            raise ValueError(f"HistogramIntersection kernel: histograms must be non-negative, "
                             f"but {name}[{row}, {col}] = {X[row, col]!r}.")

    def __repr__(self):
        return f"HistogramIntersection(variance={self.variance:g})"


class Sum(Kernel):
    """``k1 + k2``."""

    def __init__(self, k1, k2):
        self.k1, self.k2 = _check_parts(k1, k2, "Sum")

    def _terms(self):
        return self.k1._terms() + self.k2._terms()

    def __repr__(self):
        return f"({self.k1!r} + {self.k2!r})"


class Product(Kernel):
    """``k1 * k2`` (products of sums are expanded)."""

    def __init__(self, k1, k2):
        self.k1, self.k2 = _check_parts(k1, k2, "Product")

    def _terms(self):
        return [a + b for a in self.k1._terms() for b in self.k2._terms()]

    def __repr__(self):
        return f"({self.k1!r} * {self.k2!r})"


def _check_parts(k1, k2, owner):
    for name, part in (("k1", k1), ("k2", k2)):
        if not isinstance(part, Kernel):
            raise TypeError(f"{owner}: {name} must be a kernel, got {part!r}.")
    return k1, k2


def _fmt(arr):
    return f"{float(arr):g}" if arr.ndim == 0 else "[" + ", ".join(f"{v:g}" for v in arr) + "]"


# ------------------------------------------------------------ hyperparameters

class Hyperparameter:
    """A learnable parameter of a kernel: its name as in ``get_params``
    (``k1__lengthscale``), its current value (an array of one or more
    elements), its bounds (lower, upper) and whether it is fixed."""

    __slots__ = ("name", "value", "bounds", "fixed")

    def __init__(self, name, value, bounds, fixed):
        self.name = name
        self.value = value
        self.bounds = bounds
        self.fixed = fixed

    @property
    def n_elements(self):
        return int(np.size(self.value))

    def __repr__(self):
        return (f"Hyperparameter(name={self.name!r}, value={self.value!r}, "
                f"bounds={self.bounds!r}, fixed={self.fixed})")


def check_bounds(bounds, name, owner):
    """Validate ``bounds``: "fixed" or a pair (lower, upper) with
    0 < lower < upper < inf.  Returns ``bounds`` unchanged (scikit-learn's
    ``clone`` requires the stored object to be the one given)."""
    if isinstance(bounds, str):
        if bounds != "fixed":
            raise ValueError(f"{owner}: {name} must be a pair (lower, upper) or 'fixed', got "
                             f"{bounds!r}.")
        return bounds
    try:
        arr = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be a pair (lower, upper) of positive numbers or "
                        f"'fixed', got {bounds!r}.") from None
    if arr.shape != (2,):
        raise ValueError(f"{owner}: {name} must be a pair (lower, upper), got {bounds!r}.")
    lo, hi = arr
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= 0 or hi <= 0:
        raise ValueError(f"{owner}: {name} must be positive and finite (the parameters are "
                         f"learned on a log scale), got {bounds!r}.")
    if lo >= hi:
        raise ValueError(f"{owner}: {name} needs lower < upper, got {bounds!r}.")
    return bounds


def _leaves(kernel, prefix=""):
    """(prefix, base kernel) for every base kernel, left to right."""
    if isinstance(kernel, (Sum, Product)):
        return _leaves(kernel.k1, prefix + "k1__") + _leaves(kernel.k2, prefix + "k2__")
    if not isinstance(kernel, _Base) or kernel._hyperparameter_names is None:
        raise NotImplementedError(
            f"{type(kernel).__name__} does not declare learnable hyperparameters for "
            f"GPRegressor's optimizers (SquaredExponential, Matern, Periodic, "
            f"LocallyPeriodic and RationalQuadratic do); fit it with optimizer=None, or learn "
            f"its parameters with SparseGPRegressor.")
    return [(prefix, kernel)]


def _hyper_terms(kernel, prefix=""):
    """Mirror of ``Kernel._terms``: (prefix, base kernel) per factor."""
    if isinstance(kernel, Sum):
        return _hyper_terms(kernel.k1, prefix + "k1__") + _hyper_terms(kernel.k2, prefix + "k2__")
    if isinstance(kernel, Product):
        return [a + b for a in _hyper_terms(kernel.k1, prefix + "k1__")
                for b in _hyper_terms(kernel.k2, prefix + "k2__")]
    return [[(prefix, kernel)]]
