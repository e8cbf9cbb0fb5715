"""Wall time of bcd.distributed against single-process bcd.solve on a
problem large enough for the comparison to mean something: a synthetic
sparse matrix of ``--rows`` x ``--features`` with ``--nnz`` non-zeros a row
(default 400,000 x 100,000, 10 a row: 4 million), L2-logistic and ridge
(l2 = 1) to a relative duality gap of 1e-6, on a LocalCluster of
``--workers`` single-threaded worker processes.

Run ``OPENBLAS_NUM_THREADS=1 python -m asv_benches.distributed_wall``.  It
prints, for each problem, the in-memory time (median of ``--repeats``), the
distributed time with and without placing the partitions on the workers,
the rounds, and the time per round split into the workers' longest local
computation and the rest (communication, waiting, the driver's work).  The
partitions are handed over as a list of scipy.sparse row blocks, each sent
to its worker only.
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

RTOL = 1e-6


def data(rows, features, nnz, seed=0):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, features, size=rows * nnz).astype(np.int32)
    indptr = np.arange(0, rows * nnz + 1, nnz, dtype=np.int64)
    A = sp.csr_matrix((rng.standard_normal(rows * nnz) / np.sqrt(nnz), indices, indptr),
                      shape=(rows, features))
    A.sum_duplicates()
    w = rng.standard_normal(features) * (rng.random(features) < 0.1)
    b = A @ w + 0.1 * rng.standard_normal(rows)
    return A, b, (b > np.median(b)).astype(np.float64)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--features", type=int, default=100_000)
    parser.add_argument("--nnz", type=int, default=10)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from distributed import Client, LocalCluster

    import bcd
    import bcd.distributed as bd

    A, b, labels = data(args.rows, args.features, args.nnz)
    K = args.workers
    print(f"data: synthetic sparse {A.shape[0]} x {A.shape[1]}, {A.nnz} non-zeros "
          f"({A.data.nbytes + A.indices.nbytes + A.indptr.nbytes:,} bytes); {K} "
          f"single-threaded worker processes; relative gap {RTOL:g}; medians of "
          f"{args.repeats}")
    cluster = LocalCluster(n_workers=K, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=50)
    client = Client(cluster)
    edges = np.linspace(0, A.shape[0], K + 1).astype(int)
    blocks = [A[a:c] for a, c in zip(edges[:-1], edges[1:])]
    print(f"{'problem':22} {'in memory':>10} {'dist. fit':>10} {'rounds only':>12} "
          f"{'ratio':>6} {'rounds':>7} {'s/round':>8} {'worker s':>9} {'other s':>8}")
    for name, loss, problem, y in (
            ("L2-logistic (l2=1)", "logistic", bcd.Logistic(A, labels, l2=1.0), labels),
            ("ridge (l2=1)", "squared", bcd.LeastSquares(A, b, l2=1.0), b)):
        mem = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            ref = bcd.solve(problem, formulation="dual", tol=RTOL, tol_mode="relative",
                            warn=False)
            mem.append(time.perf_counter() - t)
        ys = [y[a:c] for a, c in zip(edges[:-1], edges[1:])]
        fits, rounds_time, results = [], [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = bd.solve(blocks, ys, loss=loss, l2=1.0, client=client, tol=RTOL,
                             relative=True, max_rounds=1000)
            fits.append(time.perf_counter() - t)
            rounds_time.append(r.time)
            results.append(r)
        r = results[int(np.argsort(fits)[len(fits) // 2])]
        h = r.history
        per_round = np.diff(h.time)
        worker = h.worker_time[1:]
        err = abs(r.objective - ref.objective) / abs(ref.objective)
        t_mem, t_fit, t_rounds = (statistics.median(v) for v in (mem, fits, rounds_time))
        print(f"{name:22} {t_mem:10.2f} {t_fit:10.2f} {t_rounds:12.2f} "
              f"{t_fit / t_mem:6.1f} {r.n_rounds - 1:7d} {np.median(per_round):8.3f} "
              f"{np.median(worker):9.3f} {np.median(per_round - worker):8.3f}"
              f"   (converged {r.converged}, objective within {err:.0e} of in-memory)",
              flush=True)
    client.close()
    cluster.close()


if __name__ == "__main__":
    sys.exit(main())
