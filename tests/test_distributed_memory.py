"""bcd.distributed with the workers' memory limit below the matrix's size,
on a LocalCluster of its own, in a child process (the cluster's memory
limits and the killed workers they may cause stay out of the other tests'
process; the child is bounded by a timeout)."""
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.array")


def test_a_matrix_larger_than_any_workers_memory_limit():
    """See :func:`check` (run in a child process)."""
    done = subprocess.run([sys.executable, __file__], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "checked" in done.stdout


ROWS, N, K = 10000, 1000, 4                   # 76 MiB a partition, 305 MiB in all
#: a worker process takes about 170 MB with bcd and dask imported, plus its
#: partition; its memory limit is below the matrix's size
LIMIT = 300 * 2**20


def chunk(k):
    """Partition ``k`` of the matrix and of the targets (generated in place,
    without a second copy)."""
    rng = np.random.default_rng(k)
    X = rng.standard_normal((ROWS, N))
    return X, X[:, :5].sum(axis=1) + rng.standard_normal(ROWS)


def check():
    """The workers' memory limit (enforced: a worker past 95% of it is
    killed by its nanny) is below the size of the matrix, whose partitions
    are generated on the workers (a list of delayed partitions); every
    worker only ever holds its own partition (the keys the scheduler lists
    for it, at every round), no partition is restarted, and the fit reaches
    its certificate, checked here by the gradient of the objective,
    accumulated partition by partition."""
    import warnings

    import dask
    import distributed

    import bcd.distributed as bd
    part = ROWS * N * 8
    full = part * K
    assert full > LIMIT
    config = {"distributed.worker.memory.target": False,
              "distributed.worker.memory.spill": False,
              "distributed.worker.memory.pause": False,
              "distributed.worker.memory.terminate": 0.95}
    with dask.config.set(config):
        cluster = distributed.LocalCluster(n_workers=K, threads_per_worker=1,
                                           processes=True, memory_limit=LIMIT,
                                           dashboard_address=":0", silence_logs=50)
        client = distributed.Client(cluster)
        try:
            pairs = [dask.delayed(chunk, nout=2)(k) for k in range(K)]
            held = []

            def spy(rnd, w):
                held.append((client.has_what(), client.nbytes(summary=False)))

            l2 = 1e5
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)   # no partition lost
                result = bd.solve([p[0] for p in pairs], [p[1] for p in pairs],
                                  loss="squared", l2=l2, client=client, tol=1e-8,
                                  relative=True, callback=spy, max_rounds=200,
                                  local_epochs=2)
            assert result.converged and result.duality_gap <= 1e-8 * result.objective
            assert result.data_bytes == full and result.n_restarts == 0
            assert held
            for has_what, nbytes in held:
                assert len(has_what) == K
                for worker, keys in has_what.items():
                    big = [key for key in keys if nbytes.get(key, 0) > 2**20]
                    assert len(big) == 1, (worker, big)
                    stored = sum(nbytes.get(key, 0) for key in keys)
                    # the rows' matrix, targets and weights, and small vectors
                    assert part <= stored <= part + 16 * ROWS + 2**20 < LIMIT
        finally:
            client.close()
            cluster.close()
    # the certificate checked independently: P(w) and its gradient,
    # accumulated here one partition at a time; P is l2-strongly convex, so
    # P(w) - P* <= |grad P(w)|^2 / (2 l2)
    w = result.x
    objective = 0.5 * l2 * (w @ w)
    grad = l2 * w
    for k in range(K):
        Xk, yk = chunk(k)
        r = Xk @ w - yk
        objective += 0.5 * (r @ r)
        grad += Xk.T @ r
    assert abs(result.objective - objective) <= 1e-10 * objective
    assert (grad @ grad) / (2 * l2) <= 1e-7 * objective
    print("checked", result.n_rounds, "rounds", result.time, "s")


if __name__ == "__main__":
    check()
