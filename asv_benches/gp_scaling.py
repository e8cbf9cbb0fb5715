"""Gaussian process regression on Friedman1 at 10,000, 40,000 and 100,000
training points: GBCD against dense Cholesky and matrix-free conjugate
gradients, with the kernel and hyperparameters of ``experiments/gp_demo.py``
(squared exponential, length-scale 2, unit variance, noise 0.05; stop at
``||(K + noise I) alpha - y||_inf <= 1e-4``).

Usage, from the repository root with bcd installed::

    python -m asv_benches.gp_scaling                  # n = 10000, all solvers
    python -m asv_benches.gp_scaling --n 40000 100000 --solvers gbcd cholesky

Each (solver, n) runs in a process of its own so that its peak resident
memory is its own; "extra memory" is the peak minus the resident size
after the data were generated.  Cholesky is skipped where its kernel
matrix would not fit in memory, CG after ``--cg-max-time`` seconds.

Targets: n = 10000: GBCD >= 20x faster than CG, no slower than Cholesky,
extra memory <= 25% of the dense kernel (8 n^2 bytes); n = 40000: faster
than Cholesky, <= 2 GB; n = 100000: <= 15 minutes, peak RSS <= 4 GB.
"""
import argparse
import json
import os
import signal
import subprocess
import sys


def run(solver, n, max_time=None):
    cmd = [sys.executable, "-m", "experiments.gp_demo", solver, str(n)]
    if max_time is not None:
        cmd.append(str(max_time))
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "2")
    # experiments/ is a folder of the repository, not of the installed package
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _describe_exit(code):
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10000])
    parser.add_argument("--solvers", nargs="+", default=["gbcd", "cholesky", "cg"],
                        help="of gbcd, cholesky, cg (compiled kernel), cg-numpy (kernel by "
                             "SciPy's cdist)")
    parser.add_argument("--cg-max-time", type=float, default=1200.0)
    parser.add_argument("--memory-gb", type=float, default=20.0,
                        help="skip Cholesky when 8 n^2 bytes exceed this")
    args = parser.parse_args(argv)
    print(f"{'n':>7} {'solver':<9} {'seconds':>9} {'iter':>6} {'||g||_inf':>9} {'RMSE':>7} "
          f"{'extra MB':>9} {'peak MB':>8}")
    for n in args.n:
        rows = {}
        for solver in args.solvers:
            if solver == "cholesky" and 8e-9 * n * n > args.memory_gb:
                print(f"{n:>7} {solver:<9} skipped: the kernel needs {8e-9 * n * n:.0f} GB")
                continue
            try:
                r = run(solver, n, args.cg_max_time if solver.startswith("cg") else None)
            except subprocess.CalledProcessError as exc:
                # e.g. LAPACK's potrf crashing on a very large dense matrix
                print(f"{n:>7} {solver:<9} failed: {_describe_exit(exc.returncode)}; "
                      f"{exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else ''}",
                      flush=True)
                continue
            rows[solver] = r
            extra = r["rss_peak_mb"] - r["rss_before_mb"]
            print(f"{n:>7} {solver:<9} {r['seconds']:9.2f} {r['iterations']:6d} "
                  f"{r['grad_inf']:9.1e} {r['rmse']:7.4f} {extra:9.0f} {r['rss_peak_mb']:8.0f}",
                  flush=True)
        g = rows.get("gbcd")
        if g is None:
            continue
        dense_mb = 8e-6 * n * n
        extra = g["rss_peak_mb"] - g["rss_before_mb"]
        checks = [f"GBCD extra memory / dense kernel = {extra / dense_mb:.3f}"]
        for other in ("cholesky", "cg", "cg-numpy"):
            if other in rows:
                checks.append(f"{other} / GBCD time = {rows[other]['seconds'] / g['seconds']:.2f}")
        print(f"{n:>7} " + "; ".join(checks))


if __name__ == "__main__":
    main()
