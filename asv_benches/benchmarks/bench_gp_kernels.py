"""Throughput of every compiled GP kernel (entries per second) for a whole
2000 x 2000 block through the public call, at d = 2, 10 and 50.  The
instruction-set path is the machine's (or BCD_KERNEL_ISA's): see
``python -m asv_benches.kernel_throughput`` for a one-process report with
the fraction of the measured peak."""
import time

import numpy as np

from bcd.gp import (Hamming, HistogramIntersection, LocallyPeriodic, Matern, Periodic,
                    RationalQuadratic, SquaredExponential)

#: flops of one exponential (degree-11 polynomial and scaling), nominal
EXP_FLOPS = 21


def kernels(d):
    """name -> (kernel, input generator, nominal flops per entry)."""
    se = SquaredExponential(np.full(d, 2.0))
    m32, m52 = Matern(1.5, 2.0), Matern(2.5, 2.0)
    per, lp = Periodic(1.0, 2.0), LocallyPeriodic(1.0, 2.0)
    dist = 3 * d
    normal = (lambda rng, n: rng.standard_normal((n, d)))
    codes = (lambda rng, n: rng.integers(0, 4, size=(n, d)).astype(float))
    hist = (lambda rng, n: rng.gamma(1.0, size=(n, d)))
    return {
        "SE-ARD": (se, normal, dist + EXP_FLOPS),
        "Matern32": (m32, normal, dist + EXP_FLOPS + 5),
        "Matern52": (m52, normal, dist + EXP_FLOPS + 7),
        "Periodic": (per, normal, dist + EXP_FLOPS + 25),
        # one exponential of the sum of both exponents
        "LocPeriodic": (lp, normal, dist + EXP_FLOPS + 27),
        # the same length-scales: one squared distance for both terms
        "SE+Matern52": (se + m52, normal, dist + 2 * EXP_FLOPS + 8),
        "SE*Periodic": (se * per, normal, 2 * dist + 2 * EXP_FLOPS + 26),
        "Hamming": (Hamming(np.full(d, 0.5)), codes, 2 * d + EXP_FLOPS),
        "Intersection": (HistogramIntersection(), hist, 2 * d + 1),
        # pow(1 + s / (2 alpha), -alpha): the C library's pow, not vectorized
        "RatQuadratic": (RationalQuadratic(2.0, alpha=1.5), normal, dist + 2 * EXP_FLOPS + 3),
    }


N = 2000
NAMES = list(kernels(2))


class KernelThroughput:
    params = [NAMES, [2, 10, 50]]
    param_names = ["kernel", "d"]

    def setup(self, name, d):
        kernel, make, _ = kernels(d)[name]
        self.kernel = kernel
        self.X = make(np.random.default_rng(0), N)
        kernel(self.X[:50], self.X[:50])

    def time_block(self, name, d):
        self.kernel(self.X, self.X)

    def track_entries_per_second(self, name, d):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            self.kernel(self.X, self.X)
            times.append(time.perf_counter() - t)
        return N * N / float(np.median(times))
    track_entries_per_second.unit = "entries/s"
