"""Gaussian process regression on many threads: GBCD against dense Cholesky
at each thread count, and ``bcd.solve`` with no options against the faster
of the two.

Friedman1 with the kernel and hyperparameters of ``experiments/gp_demo.py``
(squared exponential, length-scale 2, unit variance, noise 0.05); GBCD with
blocks of 500 and tol 1e-4; Cholesky forms K with bcd's evaluator, factors it
with bcd's panel-blocked Cholesky (``bcd.core._dense.cholesky``: SciPy's
bundled OpenBLAS ``dpotrf`` crashes at 20,000 points on some CPUs) and
solves with SciPy's ``cho_solve``.  Each measurement runs in a process of
its own with ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
``MKL_NUM_THREADS`` set to the thread count (the first call in a process
pays the calibration probes of the automatic choice, as a user's would).

Usage, from the repository root with bcd installed::

    python -m asv_benches.gp_threads --n 10000 --threads 1 2 4 8 16
    python -m asv_benches.gp_threads --n 2000 5000 10000 20000 40000 --threads 16 \\
        --solvers default gbcd cholesky

Targets (16 cores): GBCD on 8 threads at least 5x and on 16 threads at
least 8x faster than on one; ``default`` at most 1.1x the faster of GBCD and
Cholesky at every n.
"""
import argparse
import json
import os
import subprocess
import sys
import time

SOLVERS = ("gbcd", "cholesky", "default")


def measure(solver, n, threads):
    """One solve in this process: a dict of seconds, iterations and the
    automatic choice's figures (``default``)."""
    import numpy as np
    from bcd import GaussianProcess, datasets, solve
    from bcd.gp import SquaredExponential
    X, y, _, _ = datasets.make_friedman1(n, 10, random_state=0)
    kernel = SquaredExponential(2.0, 1.0)
    out = dict(solver=solver, n=n, threads=threads)
    start = time.perf_counter()
    if solver == "cholesky":
        import scipy.linalg
        from bcd.core._dense import cholesky
        K = np.asfortranarray(kernel(X))
        K[np.diag_indices_from(K)] += 0.05
        info = cholesky(K)
        if info != 0:
            raise RuntimeError(f"the Cholesky factorization failed (info={info})")
        scipy.linalg.cho_solve((K, False), y)
        out["iterations"] = 0
    else:
        problem = GaussianProcess(X, y, kernel, 0.05, n_threads=threads)
        options = {} if solver == "default" else dict(
            rule="gbcd", block_size=min(500, n), update="exact", tol=1e-4, max_iter=10**7,
            random_state=0)
        result = solve(problem, **options)
        out["iterations"] = int(result.n_iter)
        if solver == "default":
            out["choice"] = result.options["auto_prediction"]["choice"]
    out["seconds"] = time.perf_counter() - start
    return out


def run(solver, n, threads):
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    cmd = [sys.executable, "-m", "asv_benches.gp_threads", "--one", solver, str(n), str(threads)]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=root)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10000], help="training points")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                        help="thread counts (OpenMP and BLAS)")
    parser.add_argument("--solvers", nargs="+", default=["gbcd", "cholesky"], choices=SOLVERS)
    parser.add_argument("--one", nargs=3, metavar=("SOLVER", "N", "THREADS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), int(args.one[2]))))
        return
    print(f"{'n':>7} {'threads':>7} {'solver':<9} {'seconds':>8} {'iter':>5}  note")
    for n in args.n:
        for threads in args.threads:
            rows = {}
            for solver in args.solvers:
                r = rows[solver] = run(solver, n, threads)
                note = f"chose {r['choice']}" if solver == "default" else ""
                print(f"{n:>7} {threads:>7} {solver:<9} {r['seconds']:8.3f} "
                      f"{r['iterations']:5d}  {note}", flush=True)
            if "default" in rows and "gbcd" in rows and "cholesky" in rows:
                best = min(rows["gbcd"]["seconds"], rows["cholesky"]["seconds"])
                print(f"{n:>7} {threads:>7} default / faster = "
                      f"{rows['default']['seconds'] / best:.2f}", flush=True)


if __name__ == "__main__":
    main()
