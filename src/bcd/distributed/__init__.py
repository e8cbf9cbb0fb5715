"""Distributed block coordinate descent on Dask: CoCoA+ and ProxCoCoA+.

:func:`solve` fits an L2-regularized linear model (least squares,
logistic, hinge and squared hinge losses) by CoCoA+ over row partitions, and
an L1 or elastic-net one by ProxCoCoA+ over column partitions, on an
existing ``dask.distributed.Client``.  Each worker holds only its own
partition and runs bcd's compiled local solver on it; only vectors travel.

This subpackage needs the ``distributed`` extra (``pip install
'bcd[distributed]'``); importing it without Dask works, calling it does not.
"""
from ._driver import (DISTRIBUTED_PROBLEMS, LOSSES, DistributedHistory, DistributedResult,
                      solve)

__all__ = ["solve", "DistributedResult", "DistributedHistory", "DISTRIBUTED_PROBLEMS",
           "LOSSES"]
