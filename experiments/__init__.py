"""Reproductions and demonstrations built on the public API of ``bcd``.

They are not part of the installed library.  ``python -m bcd reproduce ...``,
``python -m bcd demo`` and ``python -m bcd gp-demo`` run them from the
repository root (``bcd.__main__`` finds this folder there, or next to the
source tree of an editable install):

* :mod:`experiments.paper_figures`: the figures of Nutini, Laradji and
  Schmidt, "Let's Make Block Coordinate Descent Converge Faster" (``demo``
  and ``reproduce 4`` ... ``reproduce 13``);
* :mod:`experiments.gpcv`: Table 1 and the Mauna Loa CO2 experiment of Xu
  et al. (``reproduce gpcv``);
* :mod:`experiments.cholqr`: the sparse GP experiments of Cao et al.
  (``reproduce cholqr``);
* :mod:`experiments.gp_demo`: GBCD against dense Cholesky and conjugate
  gradients on Friedman1 (``gp-demo``, and ``asv_benches/gp_scaling.py``
  through ``python -m experiments.gp_demo SOLVER N_TRAIN [MAX_TIME]``).
"""
