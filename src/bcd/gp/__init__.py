"""Gaussian process regression by block coordinate descent.

* Kernels: :class:`SquaredExponential` (ARD), :class:`Matern` (3/2, 5/2),
  :class:`Periodic`, :class:`LocallyPeriodic`, :class:`RationalQuadratic`
  (ARD), and on discrete inputs
  :class:`Hamming` (alias :class:`Overlap`) and :class:`HistogramIntersection`,
  combined with ``+`` and ``*``.
* :class:`GaussianProcess`: the linear system (K + noise I) alpha = y as a
  quadratic problem for :func:`bcd.solve`, registered as
  ``"gaussian_process"``; K is evaluated on the fly.
* :class:`GPRegressor`: fit with greedy block coordinate descent (GBCD),
  predictive mean and variance.
* :class:`SparseGPRegressor`: sparse GP regression with inducing points
  chosen among the training inputs by swaps (CholQR) and hyperparameters
  learned on the same objective (variational free energy or projected
  process likelihood).
* :class:`GaussianProcessRegressor`: a drop-in for scikit-learn's class of
  that name, on scikit-learn kernel objects translated to the compiled
  kernels (imported on first use; needs scikit-learn).
"""
from ..problems import register
from .base import FitInterrupted
from .kernels import (Hamming, HistogramIntersection, Kernel, LocallyPeriodic, Matern, Overlap,
                      Periodic, Product, RationalQuadratic, SquaredExponential, Sum)
from .problem import GaussianProcess
from .regressor import GPRegressor
from .sparse import SparseGPRegressor

__all__ = ["Kernel", "SquaredExponential", "Matern", "Periodic", "LocallyPeriodic",
           "RationalQuadratic", "Hamming", "Overlap", "HistogramIntersection", "Sum", "Product",
           "GaussianProcess", "GPRegressor", "SparseGPRegressor", "FitInterrupted"]

register("gaussian_process", GaussianProcess)


def __getattr__(name):
    # scikit-learn is needed by the drop-in only: import it on first use (and
    # keep it out of __all__, so that a star import does not need it)
    if name in ("GaussianProcessRegressor", "KernelFallbackWarning"):
        from .._optional import import_optional
        import_optional("sklearn", "sklearn")
        from . import _sklearn_gpr
        return getattr(_sklearn_gpr, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
