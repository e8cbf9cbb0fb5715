"""Where the optimizers' tasks run: a local thread pool (the compiled
kernels release the GIL) or a ``dask.distributed.Client``."""
import os
from concurrent.futures import Future, ThreadPoolExecutor, wait

from ..._dask import live_workers
from ..._resources import blas_threads
from .._kernel import max_threads
from .common import Stopped


def wait_all(futures, control=None):
    """The results of ``futures`` (concurrent.futures), waiting in short
    slices so that Ctrl-C reaches this (main) thread: it cancels
    ``control``, whose tasks then stop at their next check, and the wait
    goes on for their partial results (a second Ctrl-C raises)."""
    futures = list(futures)
    pending = set(futures)
    cancelled = False
    while pending:
        try:
            _, pending = wait(pending, timeout=0.1)
        except KeyboardInterrupt:
            if control is None or cancelled:
                raise
            cancelled = True
            control.cancel("interrupted")
    return [f.result() for f in futures]


class LocalExecutor:
    """Tasks on a pool of threads of this process (the compiled kernel code
    releases the GIL).  Futures passed as arguments are waited for.

    While tasks run in parallel, the BLAS library runs with the machine's
    cores shared among them (:func:`bcd._resources.blas_threads`, which
    overlapping fits share safely)."""

    def __init__(self, n_workers, control=None):
        self.n_workers = max(1, int(n_workers))
        self.control = control
        self._pool = ThreadPoolExecutor(self.n_workers)
        self._blas = max(1, (os.cpu_count() or 1) // self.n_workers)

    def scatter(self, data):
        return data

    def submit(self, fn, *args):
        def run():
            args_ = [a.result() if isinstance(a, Future) else a for a in args]
            if self.n_workers == 1:
                return fn(*args_)
            with blas_threads(self._blas):
                return fn(*args_)
        return self._pool.submit(run)

    def gather(self, futures):
        return wait_all(futures, self.control)

    def close(self):
        self._pool.shutdown(wait=True)


class DaskExecutor:
    """Tasks on a Dask cluster: the data are scattered once (a copy on every
    worker, so that losing a worker loses no data), tasks are retried
    ``retries`` times when their worker dies, and a lost task raises a
    RuntimeError that says so."""

    def __init__(self, client, retries=3, control=None):
        self.client = client
        self.control = control
        self.retries = retries
        self.n_workers = max(1, len(live_workers(client)))

    def scatter(self, data):
        return self.client.scatter(data, broadcast=True, hash=False)

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False, retries=self.retries)

    def _wait(self, futures):
        """Wait for ``futures`` in short slices, so that a stop requested
        while this thread waits (Ctrl-C caught by the main thread of a fit
        whose drivers run on threads, or the deadline) cancels them at once:
        :class:`Stopped`."""
        from distributed import wait

        while True:
            try:
                wait(futures, timeout=0.1)
                return
            except Exception as exc:
                if "timeout" not in type(exc).__name__.lower():
                    raise
            reason = self.control.stopped()
            if reason is not None:
                self.client.cancel(futures)
                raise Stopped(reason)

    def gather(self, futures):
        futures = list(futures)
        try:
            if self.control is not None:
                self._wait(futures)
            return self.client.gather(futures)
        except KeyboardInterrupt:
            # the tasks run elsewhere: cancel them and stop here at once
            self.client.cancel(futures)
            if self.control is not None:
                self.control.cancel("interrupted")
            raise Stopped("interrupted") from None
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


def make_executor(client, n_tasks, control=None):
    """A :class:`DaskExecutor` on ``client``, else a :class:`LocalExecutor`
    with a thread per task up to the number of cores."""
    if client is not None:
        return DaskExecutor(client, control=control)
    return LocalExecutor(min(max(1, n_tasks), os.cpu_count() or 1), control)


def local_tasks(executor):
    """Whether the tasks run in this process (their output is the caller's)."""
    return isinstance(executor, LocalExecutor)


def threads_per_task(executor):
    """Kernel threads of a task: the machine's cores shared by the pool."""
    if isinstance(executor, LocalExecutor):
        return max(1, max_threads() // executor.n_workers)
    return None          # a Dask worker decides (OMP_NUM_THREADS of its process)
