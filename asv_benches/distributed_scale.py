"""Scale: a synthetic sparse least-squares problem larger than any worker's
memory limit, generated chunk by chunk on the workers and fitted by
bcd.distributed (CoCoA+, ridge) to a relative duality gap of 1e-4.

Run ``python -m asv_benches.distributed_scale [--rows 4000000]
[--features 1000000] [--density 5e-5] [--workers 16] [--partitions 32]
[--memory-limit 500MiB] [--verbose]``; it prints the matrix's size against the workers'
memory limit, the fit's time and rounds, and the peak resident memory of
every worker (sampled each round).  The defaults are 4e6 x 1e6 at 0.005%
density (50 non-zeros a row, 2e8 in all, 2.25 GiB in CSR) on 16 workers of
500 MiB, 4.6 times smaller than the data (each worker holds two of the 32
partitions, 150 MB, beside the ~170 MB of a worker process with bcd and
dask imported, and a partition takes about twice its size while it is
generated).  ``--rows 20000000 --features 100000 --density 1e-4`` is a
taller problem with as many non-zeros: 200 rows a feature make the ridge's
dual ill-conditioned, and CoCoA+ needs many more rounds there (see the
distributed guide).

Each worker's memory limit is enforced (a worker past 95% of it is killed;
spilling and pausing are off, so a partition never leaves its worker).
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np


def _chunk(seed, rows, n, density):
    """One row partition: CSR with ~density * n non-zeros per row, values
    N(0, 1), and targets from a fixed sparse signal plus noise."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    per_row = rng.binomial(n, density, size=rows)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(per_row, out=indptr[1:])
    indices = rng.integers(0, n, size=indptr[-1]).astype(np.int32)
    data = rng.standard_normal(indptr[-1])
    X = sp.csr_matrix((data, indices, indptr), shape=(rows, n))
    X.sum_duplicates()
    signal = np.random.default_rng(0).standard_normal(n) * (np.arange(n) % 100 == 0)
    y = X @ signal + 0.1 * rng.standard_normal(rows)
    return X, y


def _peak_rss():
    import psutil
    return psutil.Process(os.getpid()).memory_info().rss


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--features", type=int, default=1_000_000)
    parser.add_argument("--density", type=float, default=5e-5)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--memory-limit", default="500MiB")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--verbose", action="store_true", help="print each round")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import dask
    from dask import delayed
    from dask.utils import parse_bytes
    from distributed import Client, LocalCluster

    import bcd.distributed as bd

    limit = parse_bytes(args.memory_limit)
    K, m, n = args.partitions, args.rows, args.features
    sizes = [len(p) for p in np.array_split(np.arange(m), K)]
    config = {"distributed.worker.memory.target": False,
              "distributed.worker.memory.spill": False,
              "distributed.worker.memory.pause": False,
              "distributed.worker.memory.terminate": 0.95}
    with dask.config.set(config):
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               memory_limit=limit, dashboard_address=":0", silence_logs=50)
        client = Client(cluster)
        chunks = [delayed(_chunk)(k + 1, r, n, args.density) for k, r in enumerate(sizes)]
        X = [delayed(lambda c: c[0])(c) for c in chunks]
        y = [delayed(lambda c: c[1])(c) for c in chunks]
        peaks = {}

        def spy(rnd, w):
            for worker, rss in client.run(_peak_rss).items():
                peaks[worker] = max(peaks.get(worker, 0), rss)

        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = bd.solve(X, y, loss="squared", l2=args.l2, client=client, tol=args.tol,
                         relative=True, max_rounds=500, callback=spy, verbose=args.verbose)
        elapsed = time.perf_counter() - t
        print(f"matrix: {m} x {n}, density {args.density:g}: {r.data_bytes / 2**30:.2f} GiB "
              f"in CSR, {r.data_bytes / limit:.1f} x the memory limit of a worker "
              f"({limit / 2**30:.2f} GiB); {args.workers} workers, {K} partitions")
        print(f"fit (generation on the workers included): {elapsed:.1f} s, "
              f"{r.n_rounds - 1} rounds, relative gap {r.duality_gap / abs(r.objective):.2e}, "
              f"converged {r.converged}, restarts {r.n_restarts}")
        for w in caught:
            if issubclass(w.category, RuntimeWarning):
                print(f"  warning: {w.message}")
        for worker, peak in sorted(peaks.items()):
            print(f"  peak resident memory of {worker}: {peak / 2**30:.2f} GiB")
        client.close()
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
