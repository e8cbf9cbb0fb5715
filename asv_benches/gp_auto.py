"""The calibrated automatic choice for Gaussian processes: predicted against
measured times of the dense solve and of GBCD, and what ``bcd.solve``
chooses with no options.

Usage, from the repository root with bcd installed::

    python -m asv_benches.gp_auto --n 2000 4000 6000 8000

Friedman1 (10 features), squared exponential kernel of length-scale 2,
noise 0.05 (the data of ``experiments/gp_demo.py``), the default tol.  For
each n it prints the calibration figures, the predicted and measured
seconds (median of ``--repeats``) of ``bcd.solve`` configured as one exact
block of every coordinate (dense) and as GBCD, the blocks GBCD took (the
model assumes n / ``BLOCK_YIELD``), and the choice and time of ``bcd.solve`` with no options against the faster of
the two (target: at most 1.1x).
"""
import argparse
import os
import time

import numpy as np

import bcd
from bcd.core import calibration


def _median(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[2000, 4000, 6000, 8000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"cores {os.cpu_count()}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(f"{'n':>6} {'threads':>7} {'flop/s':>9} {'entries/s':>9} {'block s':>8} "
          f"{'dense pred':>10} {'dense':>7} {'gbcd pred':>9} {'gbcd':>7} {'blocks':>6} "
          f"{'auto':>5} {'auto s':>7} {'/best':>5}")
    for n in args.n:
        X, y, _, _ = bcd.datasets.make_friedman1(n, 10, random_state=0)
        problem = bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(2.0), noise=0.05)
        figures = calibration.kernel_choice(problem)
        dense_s, rd = _median(lambda: bcd.solve(problem, rule="cyclic", blocks="variable",
                                                block_size=n, update="exact"), args.repeats)
        gbcd_s, rg = _median(lambda: bcd.solve(problem, rule="gbcd", blocks="variable",
                                               update="exact"), args.repeats)
        auto_s, ra = _median(lambda: bcd.solve(problem), args.repeats)
        assert rd.converged and rg.converged and ra.converged
        choice = ra.options["auto_prediction"]["choice"]
        print(f"{n:>6} {problem.n_threads:>7} {figures['flop_rate']:>9.3g} "
              f"{figures['entry_rate']:>9.3g} {figures['block_seconds']:>8.4f} "
              f"{figures['dense_s']:>10.3f} {dense_s:>7.3f} {figures['gbcd_s']:>9.3f} "
              f"{gbcd_s:>7.3f} {rg.n_iter:>6d} {choice:>5} {auto_s:>7.3f} "
              f"{auto_s / min(dense_s, gbcd_s):>5.2f}", flush=True)


if __name__ == "__main__":
    main()
