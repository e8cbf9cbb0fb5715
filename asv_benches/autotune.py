"""The measurements behind ``bcd.core.auto.AUTO_TABLE``.

Usage, from the repository root with bcd installed::

    python -m asv_benches.autotune                  # every problem class
    python -m asv_benches.autotune --only lasso     # classes whose name contains "lasso"
    python -m asv_benches.autotune --max-time 5

For every problem class the automatic configuration distinguishes, a grid
of explicit configurations is timed in one process (building the problem
and solving it to the stated tolerance; median of ``--repeats`` runs), and
the table prints each one's time, iterations and status, the fastest, and
what ``bcd.solve(problem)`` chose.  A configuration that does not reach
the tolerance within ``--max-time`` is shown as such.  The rows of
``AUTO_TABLE`` quote these figures; rerun this script after changing a rule,
an update or the table.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import bcd  # noqa: E402

from .benchmarks.common import fmt_time, median, paper_dataset  # noqa: E402

CD = dict(rule="cyclic", blocks="fixed", partition="order", block_size=1)
WS = dict(CD, working_set=True)


def _lasso(positive):
    A, b = paper_dataset("A")
    return lambda: bcd.LeastSquares(A, b, penalty=bcd.L1(5e4, positive=positive))


def _nnls():
    rs = np.random.RandomState(0)
    A, b = rs.randn(2000, 500), rs.randn(2000)
    return lambda: bcd.LeastSquares(A, b, penalty=bcd.NonNegative())


def _l1_logistic(fraction):
    A, y = paper_dataset("B")
    lam = fraction * 0.5 * float(np.max(np.abs(A.T @ y)))
    return lambda: bcd.Logistic(A, y, penalty=bcd.L1(lam))


def _logistic():
    A, y = paper_dataset("B")
    return lambda: bcd.Logistic(A, y, l2=1.0)


def _multinomial():
    A, y = paper_dataset("C")
    return lambda: bcd.Multinomial(A, y, l2=1.0)


def _lattice():
    W, labels = bcd.datasets.make_lattice_dataset(size=300, n_labelled=3600, weight=1e4,
                                                  random_state=1)
    return lambda: bcd.LabelPropagation(W, labels)


def _poisson():
    rs = np.random.RandomState(0)
    A = rs.randn(5000, 200) * 0.1
    y = rs.poisson(np.exp(A @ rs.randn(200) * 0.5)).astype(float)
    return lambda: bcd.Poisson(A, y, l2=5.0)


def _gp():
    X, y, _, _ = bcd.datasets.make_friedman1(2000, 10, random_state=0)
    kernel = bcd.gp.SquaredExponential(lengthscale=2.0)
    return lambda: bcd.GaussianProcess(X, y, kernel, noise=0.05)


#: name -> (problem factory, tol, candidate configurations)
CLASSES = {
    "lasso x>=0 (A, lambda=5e4)": (_lasso(True), 1e-3, [
        dict(rule="gs", blocks="variable", block_size=75, update="newton"),
        dict(CD, update="gradient"),
        dict(CD, update="gradient", extrapolation=5),
        dict(WS, update="gradient"),
        dict(WS, update="gradient", extrapolation=5),
        dict(WS, update="newton", extrapolation=5)]),
    "lasso (A, lambda=5e4)": (_lasso(False), 1e-3, [
        dict(rule="gs", blocks="variable", block_size=75, update="newton"),
        dict(CD, update="gradient"),
        dict(WS, update="gradient"),
        dict(WS, update="gradient", extrapolation=5)]),
    "nnls (dense 2000 x 500)": (_nnls(), 1e-6, [
        dict(rule="cyclic", blocks="fixed", partition="order", block_size=10, update="gradient"),
        dict(CD, update="gradient"),
        dict(WS, update="gradient", extrapolation=5)]),
    "l1-logistic (B, lambda_max/20)": (_l1_logistic(1 / 20), 1e-6, [
        dict(CD, update="newton"),
        dict(WS, update="gradient", extrapolation=5),
        dict(WS, update="newton"),
        dict(WS, update="newton", extrapolation=5)]),
    "l1-logistic (B, lambda_max/100)": (_l1_logistic(1 / 100), 1e-6, [
        dict(WS, update="gradient", extrapolation=5),
        dict(WS, update="newton"),
        dict(WS, update="newton", extrapolation=5)]),
    "logistic (B, l2=1)": (_logistic(), 1e-6, [
        dict(rule="cyclic", blocks="variable", block_size=300, update="linesearch"),
        dict(rule="cyclic", blocks="variable", block_size=100, update="linesearch"),
        dict(rule="gs", blocks="variable", block_size=300, update="linesearch"),
        dict(CD, update="gradient", extrapolation=5),
        dict(CD, update="newton", extrapolation=5)]),
    "multinomial (C, l2=1)": (_multinomial(), 1e-6, [
        dict(rule="random", blocks="fixed", block_size=100, update="linesearch"),
        dict(rule="cyclic", blocks="fixed", partition="order", block_size=50,
             update="linesearch", extrapolation=5),
        dict(rule="cyclic", blocks="fixed", partition="order", block_size=50, update="newton",
             extrapolation=5)]),
    "poisson (5000 x 200)": (_poisson(), 1e-6, [
        dict(rule="cyclic", blocks="variable", block_size=200, update="linesearch"),
        dict(rule="gs", blocks="variable", block_size=5, update="gradient"),
        dict(CD, update="newton", extrapolation=5)]),
    "label propagation (300^2 lattice)": (_lattice(), 1e-6, [
        dict(rule="cyclic", blocks="forest_partition", update="exact"),
        dict(rule="cyclic", blocks="forest_partition", update="exact", extrapolation=5),
        dict(rule="cyclic", blocks="coloring", update="exact", extrapolation=5),
        dict(rule="gs", blocks="tree", update="exact")]),
    "gaussian process (Friedman1, n=2000)": (_gp(), 1e-4, [
        dict(rule="gbcd", blocks="variable", update="exact"),
        dict(rule="gs", blocks="variable", block_size=200, update="exact"),
        dict(rule="cyclic", blocks="fixed", partition="order", block_size=200,
             update="exact", extrapolation=5)]),
}


def _run(make, tol, options, max_time, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = bcd.solve(make(), tol=tol, max_time=max_time, max_iter=10**9, **options)
        times.append(time.perf_counter() - start)
    return median(times), result


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m asv_benches.autotune",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run the classes whose name contains this")
    parser.add_argument("--max-time", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", bcd.ConvergenceWarning)
    for name, (make, tol, candidates) in CLASSES.items():
        if args.only not in name:
            continue
        print(f"\n{name}, tol={tol:g}", flush=True)
        best = None
        for options in candidates:
            seconds, result = _run(make, tol, options, args.max_time, args.repeats)
            shown = ", ".join(f"{k}={v!r}" for k, v in options.items())
            print(f"  {fmt_time(seconds):>9}  {result.status:>9}  {result.n_iter:>9} it  {shown}",
                  flush=True)
            if result.converged and (best is None or seconds < best[0]):
                best = (seconds, shown)
        seconds, result = _run(make, tol, {}, args.max_time, args.repeats)
        print(f"  {fmt_time(seconds):>9}  {result.status:>9}  {result.n_iter:>9} it  "
              f"default: row {result.options['auto']!r}")
        if best is not None:
            print(f"  fastest explicit: {fmt_time(best[0])} ({best[1]})")


if __name__ == "__main__":
    main()
