"""Where the optimizers' tasks run: a local thread pool (the compiled
kernels release the GIL) or a ``dask.distributed.Client``."""
import os
from concurrent.futures import Future, ThreadPoolExecutor

from .._kernel import max_threads


class LocalExecutor:
    """Tasks on a pool of threads of this process (the compiled kernel code
    releases the GIL).  Futures passed as arguments are waited for."""

    def __init__(self, n_workers):
        self.n_workers = max(1, int(n_workers))
        self._pool = ThreadPoolExecutor(self.n_workers)
        # BLAS threads of concurrent tasks would oversubscribe the cores (and
        # spin-wait for each other): share them out while the pool lives
        self._limits = None
        if self.n_workers > 1:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                pass
            else:
                self._limits = threadpool_limits(
                    limits=max(1, (os.cpu_count() or 1) // self.n_workers), user_api="blas")

    def scatter(self, data):
        return data

    def submit(self, fn, *args):
        def run():
            return fn(*[a.result() if isinstance(a, Future) else a for a in args])
        return self._pool.submit(run)

    def gather(self, futures):
        return [f.result() for f in futures]

    def close(self):
        self._pool.shutdown(wait=True)
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None


class DaskExecutor:
    """Tasks on a Dask cluster: the data are scattered once (a copy on every
    worker, so that losing a worker loses no data), tasks are retried
    ``retries`` times when their worker dies, and a lost task raises a
    RuntimeError that says so."""

    def __init__(self, client, retries=3):
        self.client = client
        self.retries = retries
        self.n_workers = max(1, len(client.scheduler_info().get("workers", {})) or 1)

    def scatter(self, data):
        return self.client.scatter(data, broadcast=True, hash=False)

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False, retries=self.retries)

    def gather(self, futures):
        try:
            return self.client.gather(list(futures))
        except Exception as exc:
            # KilledWorker (a task's worker died too often), FutureCancelledError
            # (a result and the data to recompute it were lost), closed comms
            module = type(exc).__module__ or ""
            if module.startswith("distributed") or isinstance(exc, (OSError, TimeoutError)) \
                    or "cancel" in type(exc).__name__.lower():
                raise RuntimeError(f"A Dask worker died or was lost during the GP "
                                   f"hyperparameter fit and a task could not be completed on "
                                   f"another worker ({type(exc).__name__}: {exc}); run the "
                                   f"fit again.") from exc
            raise

    def close(self):
        pass


def check_client(client):
    """``client`` must be None or a ``dask.distributed.Client``."""
    if client is None:
        return None
    cls = None
    try:
        from distributed import Client as cls
    except ImportError:
        pass
    if cls is None or not isinstance(client, cls):
        raise TypeError(f"client must be a dask.distributed.Client or None, got "
                        f"{type(client).__name__}.")
    return client


def make_executor(client, n_tasks):
    if client is not None:
        return DaskExecutor(client)
    return LocalExecutor(min(max(1, n_tasks), os.cpu_count() or 1))


def threads_per_task(executor):
    """Kernel threads of a task: the machine's cores shared by the pool."""
    if isinstance(executor, LocalExecutor):
        return max(1, max_threads() // executor.n_workers)
    return None          # a Dask worker decides (OMP_NUM_THREADS of its process)
