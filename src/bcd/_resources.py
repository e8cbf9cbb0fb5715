"""What this process may use: threads and memory.

* :func:`resolve_threads` turns a user's ``n_threads`` into the number of
  OpenMP threads a compiled loop runs with.  In a child process forked after
  this process ran parallel OpenMP regions it is 1: GNU OpenMP's thread pool
  does not survive ``fork()`` (the child would wait forever for the parent's
  workers), so such a child runs the same loops on one thread and says so
  once.  Processes started with the ``spawn`` or ``forkserver`` method are
  not affected.
* :func:`blas_threads` lowers the BLAS library's thread count while a fit
  runs tasks in threads; overlapping fits share it instead of restoring it
  under each other.
* :func:`available_memory` is the memory this process can still allocate:
  the smaller of the system's available memory and what is left of the
  cgroup's limit.
* :func:`usable_cores` is the number of cores this process may run on: the
  smallest of ``OMP_NUM_THREADS``, the cgroup's CPU quota (v2 ``cpu.max``,
  v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``), the CPU affinity mask
  (``os.sched_getaffinity``) and the machine's CPU count.  It is the
  default thread count of the Gaussian-process classes (capped again by
  OpenMP's own limit, which threadpoolctl's ``threadpool_limits`` sets).
"""
import math
import os
import threading
import warnings
from contextlib import contextmanager

# True once a compiled loop was given more than one thread in this process
_parallel_used = False
# True in a child forked after that
_forked_after_parallel = False


def _after_fork_in_child():
    global _forked_after_parallel
    if _parallel_used:
        _forked_after_parallel = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def resolve_threads(n_threads, default):
    """The threads a compiled loop uses when ``n_threads`` is asked for
    (None or 0: ``default``, OpenMP's limit)."""
    global _parallel_used
    threads = max(1, int(n_threads) if n_threads else int(default))
    if threads > 1 and _forked_after_parallel:
        _warn_forked()
        return 1
    if threads > 1:
        _parallel_used = True
    return threads


_warned = False


def _warn_forked():
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("This process was forked after its parent ran parallel OpenMP loops, "
                      "whose threads do not survive fork(); bcd's compiled loops run on one "
                      "thread here.  Start worker processes with the 'spawn' or 'forkserver' "
                      "method (multiprocessing.get_context('spawn'), or "
                      "ProcessPoolExecutor(mp_context=...)) to use several threads in each.",
                      RuntimeWarning, stacklevel=4)


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def available_memory():
    """Bytes this process can still allocate, or None when unknown: the
    smaller of the system's ``MemAvailable`` and the cgroup limit (v2
    ``memory.max`` or v1 ``memory.limit_in_bytes``) less its usage."""
    candidates = []
    meminfo = _read("/proc/meminfo")
    if meminfo:
        for line in meminfo.splitlines():
            if line.startswith("MemAvailable:"):
                candidates.append(int(line.split()[1]) * 1024)
                break
    for limit_path, usage_path in (("/sys/fs/cgroup/memory.max",
                                    "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read(limit_path), _read(usage_path)
        if limit and limit.isdigit() and int(limit) < 1 << 60:
            used = int(usage) if usage and usage.isdigit() else 0
            candidates.append(max(0, int(limit) - used))
            break
    if not candidates:
        try:
            candidates.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            return None
    return min(candidates)


def _omp_num_threads():
    """The first entry of ``OMP_NUM_THREADS`` as a positive int, or None."""
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    try:
        threads = int(value)
    except ValueError:
        return None
    return threads if threads > 0 else None


def _cgroup_cpus():
    """The cgroup's CPU quota in whole cores (rounded up), or None when
    there is none: v2 ``cpu.max`` ("max 100000" or "200000 100000"), else v1
    ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (quota -1: none)."""
    line = _read("/sys/fs/cgroup/cpu.max")
    if line:
        parts = line.split()
        if len(parts) >= 1 and parts[0] != "max":
            try:
                quota = int(parts[0])
                period = int(parts[1]) if len(parts) > 1 else 100000
            except ValueError:
                return None
            if quota > 0 and period > 0:
                return max(1, math.ceil(quota / period))
        return None
    for base in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"):
        quota, period = _read(base + "/cpu.cfs_quota_us"), _read(base + "/cpu.cfs_period_us")
        if quota is None or period is None:
            continue
        try:
            quota, period = int(quota), int(period)
        except ValueError:
            return None
        if quota > 0 and period > 0:
            return max(1, math.ceil(quota / period))
        return None
    return None


def _affinity_cpus():
    """The CPUs in this process's affinity mask, or None where unknown."""
    try:
        return len(os.sched_getaffinity(0)) or None
    except (AttributeError, OSError):
        return None


def usable_cores():
    """The number of cores this process may use (at least 1): the smallest
    of ``OMP_NUM_THREADS`` (its first entry), the cgroup's CPU quota rounded
    up to whole cores, the size of the CPU affinity mask and
    ``os.cpu_count()``, leaving out those that are not set or not known.

    Examples
    --------
    >>> import os
    >>> from bcd._resources import usable_cores
    >>> 1 <= usable_cores() <= (os.cpu_count() or 1)
    True
    """
    limits = [_omp_num_threads(), _cgroup_cpus(), _affinity_cpus(), os.cpu_count()]
    limits = [int(v) for v in limits if v]
    return max(1, min(limits)) if limits else 1


# ------------------------------------------------------------------ BLAS threads
# The BLAS library's thread count is one setting for the whole process.
# Fits that run concurrently (in threads) and each lower it must not restore
# it under each other: the first one in saves the setting, the last one out
# restores it, and while any is active the lowest limit asked for holds.


_blas_lock = threading.Lock()
_blas_active = []          # the limits asked for by the contexts now open
_blas_saved = None         # threadpoolctl's handle on the original setting
_controller_lock = threading.Lock()
_controller = None         # threadpoolctl's view of the loaded libraries


def blas_controller():
    """threadpoolctl's controller of the libraries loaded in this process,
    or None without threadpoolctl or where it finds no BLAS library.  The
    libraries are looked up once (several milliseconds: threadpoolctl reads
    every loaded shared object) and again only while no BLAS library is
    found."""
    global _controller
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:          # pragma: no cover - threadpoolctl is optional
        return None
    with _controller_lock:
        if _controller is None or not blas_libraries(_controller):
            _controller = ThreadpoolController()
        return _controller if blas_libraries(_controller) else None


def blas_libraries(controller):
    """The BLAS libraries among ``controller``'s."""
    return [lib for lib in controller.lib_controllers if lib.user_api == "blas"]


def _limit_blas(limit):
    """Set the BLAS libraries' threads to ``limit``: threadpoolctl's handle
    on the previous setting (None where no BLAS library is loaded)."""
    controller = blas_controller()
    return None if controller is None else controller.limit(limits=limit, user_api="blas")


@contextmanager
def blas_threads(limit):
    """Limit the BLAS library to ``limit`` threads while the context is open,
    safely when several such contexts overlap in threads of one process.
    Without threadpoolctl it does nothing."""
    global _blas_saved
    limit = max(1, int(limit))
    with _blas_lock:
        _blas_active.append(limit)
        if len(_blas_active) == 1:
            _blas_saved = _limit_blas(limit)
        else:
            _limit_blas(min(_blas_active))
    try:
        yield
    finally:
        with _blas_lock:
            _blas_active.remove(limit)
            if _blas_active:
                _limit_blas(min(_blas_active))
            elif _blas_saved is not None:
                _blas_saved.restore_original_limits()
                _blas_saved = None
