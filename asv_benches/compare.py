"""Compare bcd with reference implementations and print a table of ratios.

Usage, from the repository root with bcd installed::

    python -m asv_benches.compare            # 7 repeats per measurement
    python -m asv_benches.compare --quick    # 3 repeats
    python -m asv_benches.compare --rows def # only rows d, e and f
    python -m asv_benches.compare --rows ijk # the penalized problems

Everything runs in one process; each figure is the median over the
repeats.  bcd's iteration times are ``Result.iteration_time`` (seconds spent in
the iterations proper) divided by the number of iterations, with the stopping test
disabled (``tol=0``, ``check_every=10**9``).

The rows, each defined and documented (what is measured, against what, and
the target) by a function of ``asv_benches/benchmarks/``:

a. cyclic epochs on dataset A against scikit-learn's Lasso coordinate
   descent: ``bench_linear.compare_cyclic_sklearn``.
b. Gauss-Southwell with variable blocks against a NumPy/SciPy loop doing the
   same iterations, and against random selection:
   ``bench_linear.compare_gs_numpy``, ``bench_linear.compare_gs_random``.
c. fixed cost of ``bcd.solve``: ``bench_linear.compare_overhead``.
d. time to ``||grad f||_inf <= 1e-6`` for logistic regression on B against
   scikit-learn: ``bench_linear.compare_logistic_sklearn``.
e. the same for multinomial regression on C:
   ``bench_linear.compare_multinomial_sklearn``.
f. GSD with variable blocks and Newton steps against a NumPy/SciPy loop:
   ``bench_linear.compare_gsd_newton_numpy``.
g. ``bcd.tree_solve`` against ``spsolve``: ``bench_graphs.compare_tree_solve``.
h. label propagation on a 1000 x 1000 lattice against ``spsolve``, CG and
   pyamg: ``bench_graphs.compare_label_propagation``.
i. time to a 1e-10-accurate objective for the Lasso on A (with and without
   x >= 0) against scikit-learn, celer and skglm:
   ``bench_penalties.compare_lasso_a``.
j. the same on a 5000 x 50000 matrix: ``bench_penalties.compare_lasso_large``.
k. non-negative least squares against ``scipy.optimize.nnls``:
   ``bench_penalties.compare_nnls``.
l. L1-logistic regression on 20 Newsgroups text (rec.autos vs
   sci.electronics, tf-idf) against liblinear, celer and skglm:
   ``bench_text.compare_sparse_logistic`` (needs ``pip install --no-deps dmba``).
m. a 100-value Lasso path on the same data against scikit-learn's
   ``lasso_path``, ``celer_path`` and warm-started skglm:
   ``bench_text.compare_lasso_path``.
n, o. the estimators ``bcd.linear_model.Lasso`` and
   ``LogisticRegression(penalty="l1")`` against scikit-learn's on the same
   text data, fit time: ``bench_estimators``.
p. ``bcd.semi_supervised.LabelPropagation`` on 100000 two moons against
   scikit-learn's ``LabelSpreading``, fit time:
   ``bench_semi_supervised.compare_semi_supervised``.
q. the estimator ``bcd.linear_model.Ridge`` against scikit-learn's ``Ridge``
   on a dense 20000 x 200 design and on dataset A, fit time at the same
   objective: ``bench_estimators.compare_ridge_estimator``.
r. ``bcd.linear_model.PoissonRegressor`` against scikit-learn's (lbfgs and
   newton-cholesky) and glum's on a dense 5000 x 200 design and on ISLP's
   Bikeshare counts, fit time at the same objective:
   ``bench_estimators.compare_poisson_estimator``.
s. ``bcd.linear_model.LinearSVC()`` against scikit-learn's ``LinearSVC()``
   (liblinear) on the text data and on a dense 5000 x 200
   ``make_classification``, fit time to the same objective (1e-7 from the
   optimum, relatively): ``bench_estimators.compare_svc_estimator``.

Rows d, e, h and i-m report ``bcd.solve`` with its default (automatic)
configuration, which the targets apply to, and the best explicit
configuration found.

The NumPy/SciPy loops of rows b and f are in ``benchmarks/references.py``.
The same functions are tracked by asv (the ``RowTrack`` classes of each
module), rows h and j at reduced sizes there.

A missed target is reported as MISS; the exit code is 0 regardless.

Every algorithm compared here is single-threaded, so BLAS is limited to
one thread before NumPy is imported: idle OpenBLAS workers spin after each
BLAS call, and on a two-core machine they would steal time from whichever
single-threaded loop is timed next.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402

import bcd  # noqa: E402

from .benchmarks import (bench_estimators, bench_graphs, bench_linear,  # noqa: E402
                         bench_penalties, bench_semi_supervised, bench_text)

#: (progress title, run(repeats) -> Row or list of Rows); the title starts with the row's letter
STEPS = (bench_linear.STEPS + bench_graphs.STEPS + bench_penalties.STEPS + bench_text.STEPS
         + bench_estimators.STEPS + bench_semi_supervised.STEPS)


def _machine_info():
    try:
        import sklearn
        sklearn_version = sklearn.__version__
    except ImportError:
        sklearn_version = "not installed"
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    cpu = platform.processor() or platform.machine()
    return [
        f"bcd {bcd.__version__} ({Path(bcd.__file__).parent})",
        f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn_version}",
        f"{platform.platform()}, {cpu}, {os.cpu_count()} CPUs ({usable} usable)",
    ]


def _print_table(rows):
    header = ("measurement", "bcd", "reference", "ratio/value", "target", "result")
    cells = [header] + [(r.label, r.bcd_value, r.reference, r.value, r.target,
                         "PASS" if r.passed else "MISS") for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    for i, c in enumerate(cells):
        print("  ".join(s.ljust(w) if j == 0 else s.rjust(w)
                        for j, (s, w) in enumerate(zip(c, widths))))
        if i == 0:
            print(line)
    print()
    for r in rows:
        if r.note:
            print(f"  {r.label}: {r.note}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m asv_benches.compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    parser.add_argument("--rows", default="abcdefghijklmnopqrs",
                        help="letters of the rows to run (default: abcdefghijklmnopqrs)")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7

    warnings.simplefilter("ignore", bcd.ConvergenceWarning)
    for line in _machine_info():
        print(line)
    print(f"{repeats} repeats, medians\n", flush=True)

    rows = []
    for title, run in STEPS:
        if title[0] not in args.rows:
            continue
        print(f"running {title} ...", flush=True)
        out = run(repeats)
        rows.extend(out if isinstance(out, list) else [out])
    print()
    _print_table(rows)
    missed = [r.label for r in rows if not r.passed]
    print()
    print(f"{len(rows) - len(missed)}/{len(rows)} targets met" +
          (f"; MISS: {', '.join(missed)}" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
