"""Problems and their registry.

>>> import bcd
>>> sorted(bcd.problems.available())
['gaussian_process', 'label_propagation', 'least_squares', 'linear_svm', 'logistic', 'multinomial', 'poisson', 'quadratic']
>>> problem = bcd.problems.make("least_squares", A=[[1.0, 0.0], [0.0, 1.0]], b=[1.0, 2.0])
>>> type(problem).__name__
'LeastSquares'
"""
from . import dual  # noqa: F401 (registers the dual formulation with the core)
from ._base import Problem
from .linear import LeastSquares, Logistic
from .multinomial import Multinomial
from .poisson import Poisson
from .quadratic import LabelPropagation, Quadratic
from .svm import LinearSVM

#: the problem classes, also exported by the top-level package
__all__ = ["Problem", "LeastSquares", "Logistic", "Multinomial", "Poisson", "Quadratic",
           "LabelPropagation", "LinearSVM"]

_REGISTRY = {}


def register(name, cls):
    """Register a problem class under ``name``.

    ``cls`` must be a subclass of :class:`bcd.problems.Problem`.  Registering
    a name twice replaces the earlier class; one class may be registered
    under several names.

    Parameters
    ----------
    name : str
        Non-empty name, the key of :func:`get` and :func:`make`.
    cls : type
        A subclass of :class:`bcd.problems.Problem`.

    Returns
    -------
    type
        ``cls`` itself, so that ``register`` can be used in an assignment.

    Raises
    ------
    TypeError
        If ``name`` is not a non-empty string or ``cls`` is not a subclass
        of :class:`bcd.problems.Problem`.

    Examples
    --------
    The built-in problems are registered this way (``docs/extending.md``
    adds a new one):

    >>> import bcd
    >>> bcd.problems.register("least_squares", bcd.LeastSquares) is bcd.LeastSquares
    True
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}.")
    if not (isinstance(cls, type) and issubclass(cls, Problem)):
        raise TypeError(f"cls must be a subclass of bcd.problems.Problem, got {cls!r}.")
    _REGISTRY[name] = cls
    return cls


def available():
    """Names of the registered problems, in the order they were registered.

    Returns
    -------
    list of str
    """
    return list(_REGISTRY)


def get(name):
    """The problem class registered under ``name``.

    Parameters
    ----------
    name : str
        A name of :func:`available`.

    Returns
    -------
    type
        The registered subclass of :class:`bcd.problems.Problem`.

    Raises
    ------
    ValueError
        If no problem is registered under ``name`` (the message lists the
        registered names).

    Examples
    --------
    >>> import bcd
    >>> bcd.problems.get("logistic") is bcd.Logistic
    True
    """
    if name not in _REGISTRY:
        valid = ", ".join(repr(k) for k in _REGISTRY)
        raise ValueError(f"Unknown problem {name!r}; registered problems are {valid}.")
    return _REGISTRY[name]


def make(name, **kwargs):
    """Build the registered problem ``name`` from keyword arguments.

    Parameters
    ----------
    name : str
        A name of :func:`available`.
    **kwargs
        The arguments of the registered class (for ``"least_squares"``:
        ``A``, ``b``, ``l2``, ``penalty``, ...).

    Returns
    -------
    bcd.problems.Problem
        ``get(name)(**kwargs)``.

    Examples
    --------
    >>> import bcd
    >>> problem = bcd.problems.make("logistic", A=[[1.0, 2.0], [3.0, 4.0]], y=[1, -1], l2=1.0)
    >>> type(problem).__name__, problem.n_coordinates
    ('Logistic', 2)
    """
    return get(name)(**kwargs)


register("least_squares", LeastSquares)
register("logistic", Logistic)
register("multinomial", Multinomial)
register("poisson", Poisson)
register("quadratic", Quadratic)
register("label_propagation", LabelPropagation)
register("linear_svm", LinearSVM)
