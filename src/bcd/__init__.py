"""Greedy block coordinate descent.

``bcd`` minimizes smooth objectives by block coordinate descent with the
selection rules, block strategies and updates of Nutini, Laradji and
Schmidt, "Let's Make Block Coordinate Descent Converge Faster".  The
iteration loop, selection and updates are compiled.

>>> import bcd
>>> A, b = bcd.datasets.make_paper_dataset("A", n_samples=50, n_features=200)
>>> result = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(1e3)))
>>> result.converged
True
"""
import os

# OpenMP threads that spin while waiting compete for the cores with
# OpenBLAS's threads and with other processes: on a busy 2-core machine
# GBCD ran 10-20x slower with libgomp's default waiting.  Waiting threads
# sleep instead unless the user chose otherwise; this must be set before
# the OpenMP runtime is loaded by the compiled modules below.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from . import datasets, forest, gp, penalties, problems
from ._path import PathResult, lambda_max, path
from ._result import ConvergenceWarning, History, Result
from ._solve import IterationInfo, solve
from .forest import tree_solve
from .gp import GaussianProcess
from .penalties import L1, Box, NonNegative
from .problems import *  # noqa: F401,F403 (the problem classes, see problems.__all__)

__version__ = "0.1.0"

__all__ = [
    "solve", "path", "lambda_max", "PathResult", "Result", "History", "IterationInfo", "ConvergenceWarning",
    "problems", "datasets", "forest", "tree_solve", "penalties", "L1", "NonNegative", "Box", "gp",
    "GaussianProcess",
] + [name for name in problems.__all__ if name != "Problem"]
