"""The calibrated automatic choice for Gaussian processes: predicted against
measured times of the dense solve and of GBCD, and what ``bcd.solve``
chooses with no options.

Usage, from the repository root with bcd installed (one BLAS thread, as
the calibration of :mod:`bcd.core.calibration` was measured)::

    OPENBLAS_NUM_THREADS=1 python -m asv_benches.gp_auto --n 2000 4000 6000 8000

Friedman1 (10 features), squared exponential kernel of length-scale 2,
noise 0.05 (the data of ``experiments/gp_demo.py``), the default tol.  For
each n it prints the calibration figures, the predicted and measured
seconds (median of ``--repeats``) of ``bcd.solve`` configured as one exact
block of every coordinate (dense) and as GBCD, the kernel entries per n^2
each run implies (the constants ``DENSE_PASSES`` and ``GBCD_PASSES``), and
the choice and time of ``bcd.solve`` with no options against the faster of
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
    flops = calibration.dense_rate()
    print(f"cores {os.cpu_count()}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}, dense rate {flops:.3g} flop/s")
    print(f"{'n':>6} {'threads':>7} {'entries/s':>9} {'dense pred':>10} {'dense':>7} "
          f"{'d passes':>8} {'gbcd pred':>9} {'gbcd':>7} {'g passes':>8} {'auto':>5} "
          f"{'auto s':>7} {'/best':>5}")
    for n in args.n:
        X, y, _, _ = bcd.datasets.make_friedman1(n, 10, random_state=0)
        problem = bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(2.0), noise=0.05)
        rate = problem.kernel_entry_rate()
        dense_pred, gbcd_pred = calibration.predict(n, flops, rate)
        dense_s, rd = _median(lambda: bcd.solve(problem, rule="cyclic", blocks="variable",
                                                block_size=n, update="exact"), args.repeats)
        gbcd_s, rg = _median(lambda: bcd.solve(problem, rule="gbcd", blocks="variable",
                                               update="exact"), args.repeats)
        auto_s, ra = _median(lambda: bcd.solve(problem), args.repeats)
        assert rd.converged and rg.converged and ra.converged
        # entries per n^2 the measured times imply, at the calibrated rates
        d_passes = max(0.0, dense_s - n ** 3 / 3.0 / flops) * rate / n ** 2
        g_passes = gbcd_s * rate / n ** 2
        choice = ra.options["auto_prediction"]["choice"]
        print(f"{n:>6} {problem.n_threads:>7} {rate:>9.3g} {dense_pred:>10.3f} {dense_s:>7.3f} "
              f"{d_passes:>8.2f} {gbcd_pred:>9.3f} {gbcd_s:>7.3f} {g_passes:>8.2f} "
              f"{choice:>5} {auto_s:>7.3f} {auto_s / min(dense_s, gbcd_s):>5.2f}", flush=True)


if __name__ == "__main__":
    main()
