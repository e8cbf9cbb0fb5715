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
