"""Separable non-smooth penalties g(x) = sum_i g_i(x_i) (Section 6 of the paper).

A problem given ``penalty=`` is minimized as F(x) = f(x) + g(x).  The
solver then measures optimality by the distance of -grad f(x) to the
subdifferential of g at x (the KKT residual, see
:meth:`Penalty.optimality`), greedy rules use their proximal "-q" forms and
the gradient update becomes a proximal gradient step.

>>> import numpy as np, bcd
>>> A, b = bcd.datasets.make_paper_dataset("A", n_samples=60, n_features=200)
>>> lam = 0.2 * np.max(np.abs(A.T @ b))
>>> problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam))
>>> result = bcd.solve(problem, rule="gsd", block_size=50, update="newton", tol=1e-6)
>>> result.converged, result.duality_gap < 1e-9 * result.objective
(True, True)
"""
import numbers

import numpy as np

from ._penalty import CyBox, CyL1, CyPenalty

__all__ = ["Penalty", "L1", "NonNegative", "Box"]

_REGISTRY = {}


def _per_coordinate(value, name, n, allow_inf=False):
    """A scalar or a length-n array of floats, as a float64 array of length n."""
    arr = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else None
    if arr is None or arr.ndim > 1:
        raise TypeError(f"{name} must be a number or a 1-d array of numbers, got {value!r}.")
    if arr.ndim == 1 and arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]}, expected {n} (one per "
                         f"coordinate) or a scalar.")
    if np.any(np.isnan(arr)) or (not allow_inf and not np.all(np.isfinite(arr))):
        raise ValueError(f"{name} contains NaN{'' if allow_inf else ' or infinity'}.")
    return np.ascontiguousarray(np.broadcast_to(arr, (n,)), dtype=np.float64)


class Penalty:
    """Base class of separable penalties g(x) = sum_i g_i(x_i).

    A subclass declares its ``capabilities`` (see ``bcd.core.specs``:
    "prox" and "distance" always, optionally "slope", "orthant" and "path")
    and implements :meth:`build`, which returns its compiled form, a
    ``bcd.penalties._penalty.CyPenalty`` subclass.  :meth:`compile` checks
    that the compiled form implements every required method and those of the
    declared capabilities.  The NumPy methods below evaluate it for checks.
    """

    #: what the penalty provides (see bcd.core.specs.PENALTY_CAPABILITIES)
    capabilities = frozenset({"prox", "distance"})

    def build(self, n):
        """The compiled penalty for ``n`` coordinates (a CyPenalty)."""
        raise NotImplementedError(f"{type(self).__name__} must implement build(n).")

    def compile(self, n):
        """:meth:`build`, checked: raises TypeError if the compiled penalty
        lacks a required method or one of a declared capability."""
        cy = self.build(n)
        if not isinstance(cy, CyPenalty):
            raise TypeError(f"{type(self).__name__}.build must return a CyPenalty, got "
                            f"{type(cy).__name__}.")
        cy.verify(self.capabilities)
        return cy

    def value(self, x):
        """g(x) (``inf`` outside the domain)."""
        x = np.asarray(x, dtype=np.float64)
        return float(np.sum(self.compile(x.shape[0]).values(x)))

    def prox(self, z, step=1.0):
        """argmin_y ||y - z||^2 / (2 step) + g(y), coordinate-wise."""
        z = np.asarray(z, dtype=np.float64)
        if not np.all(np.isfinite(z)):
            raise ValueError("z contains NaN or infinity.")
        if not step > 0:
            raise ValueError(f"step must be positive, got {step!r}.")
        return self.compile(z.shape[0]).prox_vector(z, float(step))

    def optimality(self, x, grad):
        """max_i dist(-grad_i, subdifferential of g_i at x_i): zero exactly at
        the minimizers of f + g (for convex f)."""
        x = np.asarray(x, dtype=np.float64)
        return float(np.max(self.compile(x.shape[0]).distances(x, grad), initial=0.0))


class L1(Penalty):
    r"""``lam * ||x||_1``, or ``sum_i lam_i |x_i|`` with per-coordinate weights.

    Parameters
    ----------
    lam : float or array-like of shape (n_coordinates,)
        Non-negative weights.
    positive : bool, default=False
        Also constrain x >= 0 (the problem of the paper's Figure 7).

    Examples
    --------
    >>> import bcd
    >>> bcd.L1(2.0).prox([3.0, -1.0, 0.5], step=1.0)
    array([1., 0., 0.])
    >>> bcd.L1(2.0, positive=True).prox([3.0, -5.0], step=0.5)
    array([2., 0.])
    """

    def __init__(self, lam, positive=False):
        if isinstance(lam, bool) or not (isinstance(lam, numbers.Real)
                                         or np.ndim(lam) == 1):
            raise TypeError(f"lam must be a non-negative number or a 1-d array, got {lam!r}.")
        arr = np.asarray(lam, dtype=np.float64)
        if np.any(np.isnan(arr)) or np.any(arr < 0) or not np.all(np.isfinite(arr)):
            raise ValueError(f"lam must be finite and non-negative, got {lam!r}.")
        if not isinstance(positive, (bool, np.bool_)):
            raise TypeError(f"positive must be True or False, got {positive!r}.")
        self.lam = arr
        self.positive = bool(positive)

    capabilities = frozenset({"prox", "distance", "slope", "orthant", "path"})

    def build(self, n):
        return CyL1(_per_coordinate(self.lam, "lam", n), self.positive)

    def __repr__(self):
        lam = float(self.lam) if self.lam.ndim == 0 else f"array of {self.lam.size}"
        return f"L1(lam={lam}, positive={self.positive})"


class Box(Penalty):
    """The constraint ``lower <= x <= upper`` (bounds may be infinite).

    Parameters
    ----------
    lower, upper : float or array-like of shape (n_coordinates,)
        ``-inf`` / ``inf`` leave a side free; ``lower <= upper`` is required.

    Examples
    --------
    >>> import bcd
    >>> bcd.Box(0.0, 1.0).prox([-2.0, 0.5, 3.0])
    array([0. , 0.5, 1. ])
    """

    def __init__(self, lower=-np.inf, upper=np.inf):
        lo = np.asarray(lower, dtype=np.float64)
        up = np.asarray(upper, dtype=np.float64)
        for name, v in (("lower", lo), ("upper", up)):
            if v.ndim > 1 or np.any(np.isnan(v)):
                raise ValueError(f"{name} must be a number or a 1-d array without NaN.")
        if np.any(lo == np.inf) or np.any(up == -np.inf):
            raise ValueError("lower must be < inf and upper > -inf (the box would be empty).")
        if lo.ndim == 1 and up.ndim == 1 and lo.shape != up.shape:
            raise ValueError(f"lower and upper have different lengths ({lo.size}, {up.size}).")
        if np.any(np.broadcast_to(lo, np.broadcast(lo, up).shape)
                  > np.broadcast_to(up, np.broadcast(lo, up).shape)):
            raise ValueError("lower must be <= upper for every coordinate.")
        self.lower = lo
        self.upper = up

    capabilities = frozenset({"prox", "distance", "slope", "orthant", "path"})

    def build(self, n):
        return CyBox(_per_coordinate(self.lower, "lower", n, allow_inf=True),
                         _per_coordinate(self.upper, "upper", n, allow_inf=True))

    def __repr__(self):
        return f"{type(self).__name__}(lower={self.lower!r}, upper={self.upper!r})"


class NonNegative(Box):
    """The constraint ``x >= 0``.

    Examples
    --------
    >>> import bcd
    >>> bcd.NonNegative().prox([-1.0, 2.0])
    array([0., 2.])
    """

    def __init__(self):
        super().__init__(0.0, np.inf)

    def __repr__(self):
        return "NonNegative()"


def register(name, cls):
    """Register a penalty class under ``name``.

    Registering a name twice replaces the earlier class.  The documentation's
    table of capabilities lists the registered penalties, in order.

    Parameters
    ----------
    name : str
        The penalty's name in the registry.
    cls : type
        A subclass of :class:`bcd.penalties.Penalty`.

    Examples
    --------
    >>> import bcd
    >>> bcd.penalties.available()
    ['l1', 'nonnegative', 'box']
    >>> bcd.penalties.get("box") is bcd.Box
    True
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}.")
    if not (isinstance(cls, type) and issubclass(cls, Penalty)):
        raise TypeError(f"cls must be a subclass of bcd.penalties.Penalty, got {cls!r}.")
    _REGISTRY[name] = cls
    return cls


def available():
    """Names of the registered penalties."""
    return list(_REGISTRY)


def get(name):
    """The penalty class registered under ``name``.

    Parameters
    ----------
    name : str
        A name of ``available()``.

    Returns
    -------
    type
        The class; a ValueError lists the registered names for an unknown
        one.
    """
    if name not in _REGISTRY:
        valid = ", ".join(repr(k) for k in _REGISTRY)
        raise ValueError(f"Unknown penalty {name!r}; registered penalties are {valid}.")
    return _REGISTRY[name]


register("l1", L1)
register("nonnegative", NonNegative)
register("box", Box)
