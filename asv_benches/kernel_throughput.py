"""Throughput of the compiled GP kernels, in kernel entries per second, and
its fraction of the machine's measured peak, in one process.

Usage, from the repository root with bcd installed::

    python -m asv_benches.kernel_throughput                 # d = 2, 10, 50
    BCD_KERNEL_ISA=avx2 python -m asv_benches.kernel_throughput --d 10

Each kernel is evaluated as a whole n x n block through the public call
``kernel(X, X)`` (output allocation included) and as the rows of a GBCD
block (``hessian_entries`` of 500 columns, the inputs gathered once).  The
peak is that of a large float64 ``numpy`` matmul (BLAS) in the same run,
in flop/s; "flop/entry" is a nominal count of floating-point operations per
kernel entry (3 d for the distance: subtract, multiply, add, counted
by the multiply-add as 2; about 25 for an exponential), so that the
fraction of peak reads as how close a kernel is to the arithmetic limit.
The figures are medians of ``--repeat`` runs; the load average is printed
with them, since other jobs distort timings on a shared machine.
"""
import argparse
import os
import time

import numpy as np

from bcd.gp._kernel import kernel_isa
from bcd.gp.problem import GaussianProcess

from .benchmarks.bench_gp_kernels import kernels

def measure_peak(n=2000, repeat=3):
    """float64 flop/s of a large numpy matmul (median of ``repeat``)."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    A @ B
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        A @ B
        times.append(time.perf_counter() - t)
    return 2.0 * n ** 3 / float(np.median(times))


def block_rate(kernel, X, repeat):
    """Entries/s of the public call kernel(X, X) (median of ``repeat``)."""
    kernel(X[:100], X[:100])
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        kernel(X, X)
        times.append(time.perf_counter() - t)
    return X.shape[0] ** 2 / float(np.median(times))


def gbcd_rows_rate(kernel, X, repeat, block=500):
    """Entries/s of GBCD's candidate rows: all n rows against a block of
    ``block`` columns, as the greedy rule asks for them."""
    n = X.shape[0]
    problem = GaussianProcess(X, np.zeros(n), kernel, 0.05).compile(True, block)
    rows = np.arange(n)
    cols = np.random.default_rng(1).choice(n, block, replace=False)
    problem.get_hessian_entries(rows[:8], cols)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        problem.get_hessian_entries(rows, cols)
        times.append(time.perf_counter() - t)
    return n * block / float(np.median(times))


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or the platform's processor)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or "unknown"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--d", type=int, nargs="+", default=[2, 10, 50])
    parser.add_argument("--n", type=int, default=4000, help="rows of the n x n block")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kernels", nargs="+", default=None)
    args = parser.parse_args(argv)
    peak = measure_peak()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs; kernel loops: {kernel_isa()}; "
          f"numpy matmul peak {peak / 1e9:.1f} GFLOP/s; load {os.getloadavg()}")
    print(f"{'kernel':<13} {'d':>3} {'flop/entry':>10} {'block M/s':>10} {'of peak':>8} "
          f"{'GBCD rows M/s':>14} {'of peak':>8}")
    rng = np.random.default_rng(0)
    for d in args.d:
        for name, (kernel, make, flops) in kernels(d).items():
            if args.kernels and name not in args.kernels:
                continue
            X = make(rng, args.n)
            full = block_rate(kernel, X, args.repeat)
            rows = gbcd_rows_rate(kernel, X, args.repeat)
            print(f"{name:<13} {d:>3} {flops:>10} {full / 1e6:>10.0f} "
                  f"{full * flops / peak:>8.1%} {rows / 1e6:>14.0f} {rows * flops / peak:>8.1%}",
                  flush=True)
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
