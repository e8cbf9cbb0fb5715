"""Gaussian process regression by block coordinate descent.

* Kernels: :class:`SquaredExponential` (ARD), :class:`Matern` (3/2, 5/2),
  :class:`Periodic`, :class:`LocallyPeriodic`, combined with ``+`` and ``*``.
* :class:`GaussianProcess`: the linear system (K + noise I) alpha = y as a
  quadratic problem for :func:`bcd.solve`, registered as
  ``"gaussian_process"``; K is evaluated on the fly.
* :class:`GPRegressor`: fit with greedy block coordinate descent (GBCD),
  predictive mean and variance.
"""
from ..problems import register
from .kernels import (Kernel, LocallyPeriodic, Matern, Periodic, Product,
                      SquaredExponential, Sum)
from .problem import GaussianProcess
from .regressor import GPRegressor

__all__ = ["Kernel", "SquaredExponential", "Matern", "Periodic", "LocallyPeriodic", "Sum",
           "Product", "GaussianProcess", "GPRegressor"]

register("gaussian_process", GaussianProcess)
