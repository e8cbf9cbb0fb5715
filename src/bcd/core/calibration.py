"""The machine-calibrated choice between a dense solve and GBCD for kernel systems.

:func:`bcd.solve` with no options solves a kernel system (``structure ==
"kernel"``, e.g. :class:`bcd.GaussianProcess`) either as one exact block of
every coordinate (a dense Cholesky solve) or by greedy block coordinate
descent (GBCD).  :func:`kernel_choice` predicts both times (:func:`predict`)
from figures measured once per process on this machine and cached:

* the dense factorization rate (flop/s) of one thread, from a
  ``DENSE_PROBE`` x ``DENSE_PROBE`` matrix product with one BLAS thread
  (:func:`dense_rate`, a few milliseconds) times ``DENSE_EFFICIENCY``, scaled to
  the BLAS threads in effect by Amdahl's law with a serial fraction that
  falls as 1 / n (:func:`dense_serial`; a small probe on many threads
  would time the threads' start-up, not the factorization);
* the kernel-entry rate of the problem's kernel (entries/s) on its
  threads, from one evaluator block of at most 1000 x 1000 entries
  (``problem.kernel_entry_rate()``, a few milliseconds);
* the seconds GBCD takes to choose one block on the problem's threads
  (``problem.block_seconds(...)``: one block of up to 500 coordinates
  chosen on up to 2000 of the points, 10-70 ms; the choice's time does not
  grow with n).

The dense solve is chosen when it is predicted faster, unless GBCD is
predicted ``GBCD_MARGIN`` times faster, *and* its matrices (``DENSE_BYTES``
n^2 bytes: K, and a copy where its factorization fails) take at most
``MEMORY_FRACTION`` of
:func:`bcd._resources.available_memory`; otherwise GBCD, whose memory is
O(n).  ``Result.options["auto_prediction"]`` records the figures.
"""
import threading
import time

import numpy as np

from .. import _resources

#: the side of the square matrices whose product times the dense rate: on
#: one thread of the 2-core EPYC, products of 256 (0.8 ms) ran at 44
#: GFLOP/s, of 512 (6.2 ms) at 43 and of 640 at 45
DENSE_PROBE = 256

#: timed products of the probe, after one warm-up product
DENSE_PROBE_REPEATS = 5

#: the rate of a large Cholesky factorization relative to that of the
#: probe's matrix product, on one thread: on the 2-core EPYC the library's
#: factorization of n = 2,000-6,000 ran at 40-44 GFLOP/s and the product at
#: 51-52.  A small factorization as the probe predicted the large ones
#: badly: on a 16-core Xeon a 768 factorization ran at a third of the rate
#: of n = 10,000, on the EPYC at 0.7 of it
DENSE_EFFICIENCY = 0.83

#: bytes per entry the dense solve may take: K (8 n^2), factored in place,
#: and the copy that the eigendecomposition fallback makes of it where the
#: factorization fails (8 n^2; see bcd.core._update.CyMatrixUpdate)
DENSE_BYTES = 16

#: the dense solve is allowed at most this fraction of the available memory
MEMORY_FRACTION = 0.5

#: the time of the dense solve's kernel evaluations, in units of n^2 kernel
#: entries at the probe's rate (see :func:`predict`): one triangle of K and
#: the certificate's gradient through K's symmetry took 0.79 of that at
#: 5,000 points on the 2-core EPYC (33 and 22 ms against 70)
DENSE_PASSES = 1.0

#: kernel entries GBCD evaluates, in units of n^2, where no block time is
#: measured (see :func:`predict`)
GBCD_PASSES = 31.0

#: points per GBCD block of 500 that the solve takes, on average, to reach
#: tol 1e-4 (n / blocks; see :func:`predict`)
BLOCK_YIELD = 50.0

#: the serial fraction of a dense Cholesky factorization of n points in
#: Amdahl's law is DENSE_SERIAL_POINTS / n: the panel factorizations, whose
#: share of the work falls as 1 / n.  On 16 threads of a 16-core Xeon,
#: OpenBLAS factored n = 10,000 4.8 times as fast as on one (serial
#: fraction 0.144), and its rate kept growing with n: 44, 130, 264, 415
#: and 463 GFLOP/s at n = 2,000, 5,000, 10,000, 20,000 and 40,000
DENSE_SERIAL_POINTS = 1440.0

#: GBCD is chosen only when predicted at least this many times faster than
#: the dense solve.  The model errs on GBCD's side where the dense solve
#: wins (small n: fewer blocks than n / BLOCK_YIELD, see :func:`predict`),
#: so no margin is needed: on the 2-core EPYC a margin of 1.2 chose the
#: dense solve at n = 10,000, 1.4x slower than GBCD there
GBCD_MARGIN = 1.0

_lock = threading.Lock()
_dense_rate = None


def seconds_of(fn, repeats, best=False):
    """The median (``best``: the smallest) seconds of ``repeats`` calls of
    ``fn()``, after one warm-up call (page faults, thread start-up)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(min(times) if best else np.median(times))


def parallel_speedup(threads, serial):
    """Amdahl's law: the speed-up of ``threads`` threads on work whose
    fraction ``serial`` does not run in parallel.

    Examples
    --------
    >>> from bcd.core.calibration import parallel_speedup
    >>> parallel_speedup(1, 0.1), round(parallel_speedup(16, 0.1), 2)
    (1.0, 6.4)
    """
    threads = max(1, int(threads))
    return threads / (1.0 + serial * (threads - 1))


def dense_serial(n):
    """The serial fraction of a dense Cholesky factorization of ``n``
    points in Amdahl's law: ``DENSE_SERIAL_POINTS / n``, at most 1.

    Examples
    --------
    >>> from bcd.core.calibration import dense_serial
    >>> dense_serial(14400), dense_serial(100)
    (0.1, 1.0)
    """
    return min(1.0, DENSE_SERIAL_POINTS / max(float(n), 1.0))


def dense_rate(threads=1, n=10000):
    """Flop/s of a dense Cholesky factorization (n^3 / 3 flops) of ``n``
    points on ``threads`` BLAS threads: the rate of one thread, measured
    once per process (the fastest of ``DENSE_PROBE_REPEATS`` products of two
    ``DENSE_PROBE`` x ``DENSE_PROBE`` matrices with one BLAS thread, times
    ``DENSE_EFFICIENCY``) and cached, times :func:`parallel_speedup` with
    the serial fraction :func:`dense_serial`.

    Examples
    --------
    >>> from bcd.core.calibration import dense_rate
    >>> dense_rate() > 0
    True
    >>> dense_rate(16, n=40000) > dense_rate(16, n=10000) > dense_rate(1)
    True
    """
    global _dense_rate
    with _lock:
        if _dense_rate is None:
            m = DENSE_PROBE
            rng = np.random.default_rng(0)
            A = rng.uniform(size=(m, m))
            B = rng.uniform(size=(m, m))
            C = np.empty_like(A)
            with _resources.blas_threads(1):
                seconds = seconds_of(lambda: np.matmul(A, B, out=C), DENSE_PROBE_REPEATS,
                                     best=True)
            _dense_rate = DENSE_EFFICIENCY * (2.0 * m ** 3) / max(seconds, 1e-9)
        rate = _dense_rate
    return rate * parallel_speedup(threads, dense_serial(n))


def entry_rate(evaluate, n_entries, repeats=5):
    """Entries/s of ``evaluate()``, which computes ``n_entries`` kernel
    entries: the fastest of ``repeats`` timings after one warm-up call (the
    probe takes milliseconds, and an interruption of one of them, by
    another process or the threads' start-up, only slows it)."""
    return n_entries / max(seconds_of(evaluate, repeats, best=True), 1e-9)


def predict(n, flop_rate, kernel_rate, block_seconds=None, block_size=500):
    r"""Predicted seconds ``(dense, gbcd)`` for a kernel system of ``n``
    points on a machine with the given dense factorization rate (flop/s,
    on the threads the solve will use), kernel-entry rate (entries/s) and
    seconds GBCD takes to choose a block of ``block_size`` coordinates.

    * dense: ``DENSE_PASSES`` n^2 kernel entries (one triangle of K for
      the one block, and the gradient from alpha, which the final
      certificate takes, through the symmetry of K) and a Cholesky
      factorization of n^3 / 3 flops at ``flop_rate``;
    * GBCD: n / ``BLOCK_YIELD`` blocks, each chosen in ``block_seconds``
      and then updating the gradient by n x ``block_size`` kernel entries
      (K[:, B] delta).  Without a block time, ``GBCD_PASSES`` n^2 kernel
      entries (the model of a machine where kernel evaluation dominates).

    The choice of a block does not grow with n, the update does: the
    choice dominates small systems and the update large ones.  Measured
    on Friedman1 (10 features, squared exponential kernel of length-scale
    2, noise 0.05, the data of ``experiments/gp_demo.py``, tol 1e-4), GBCD
    took 24, 83, 190, 423 and 908 blocks at n = 2000, 5000, 10,000, 20,000
    and 40,000 (n / blocks from 83 to 44; 2416 at 100,000):
    ``BLOCK_YIELD = 50``.  Harder systems (smaller noise, longer
    length-scales) take more blocks.

    Examples
    --------
    >>> from bcd.core.calibration import predict
    >>> dense, gbcd = predict(1000, flop_rate=1e10, kernel_rate=1e8)
    >>> round(dense, 4), round(gbcd, 4)
    (0.0433, 0.31)
    >>> dense, gbcd = predict(10000, 3e11, 3e9, block_seconds=0.01)
    >>> round(dense, 3), round(gbcd, 3)
    (1.144, 2.333)
    """
    n = float(n)
    dense = DENSE_PASSES * n * n / kernel_rate + n ** 3 / 3.0 / flop_rate
    if block_seconds is None:
        gbcd = GBCD_PASSES * n * n / kernel_rate
    else:
        gbcd = n / BLOCK_YIELD * (block_seconds + n * min(block_size, n) / kernel_rate)
    return dense, gbcd


def decide(n, flop_rate, kernel_rate, memory, block_seconds=None, block_size=500):
    """The choice for ``n`` points given the calibration figures and the
    available memory in bytes (None: unknown, no limit): a dict with
    ``choice`` ("dense" unless GBCD is predicted ``GBCD_MARGIN`` times
    faster or the dense matrices do not fit, else "gbcd"), the predicted
    seconds ``dense_s`` and ``gbcd_s``, ``dense_bytes``, ``memory_limit``
    (bytes allowed for the dense solve, or None) and the figures used.
    Deterministic: the same figures give the same choice.

    Examples
    --------
    >>> from bcd.core.calibration import decide
    >>> decide(1000, 1e10, 1e8, memory=None)["choice"]
    'dense'
    >>> decide(1000, 1e10, 1e8, memory=10**6)["choice"]    # 16 MB do not fit
    'gbcd'
    """
    dense_s, gbcd_s = predict(n, flop_rate, kernel_rate, block_seconds, block_size)
    dense_bytes = DENSE_BYTES * float(n) ** 2
    limit = None if memory is None else MEMORY_FRACTION * float(memory)
    fits = limit is None or dense_bytes <= limit
    choice = "dense" if fits and dense_s <= GBCD_MARGIN * gbcd_s else "gbcd"
    return dict(choice=choice, dense_s=dense_s, gbcd_s=gbcd_s, dense_bytes=dense_bytes,
                memory_limit=limit, flop_rate=flop_rate, entry_rate=kernel_rate,
                block_seconds=block_seconds)


def blas_thread_count():
    """The threads of the BLAS library in effect (threadpoolctl), else the
    usable cores.  The libraries are looked up once per process
    (:func:`bcd._resources.blas_controller`) and their thread counts read
    at each call."""
    controller = _resources.blas_controller()
    if controller is None:
        return _resources.usable_cores()
    counts = [int(lib.num_threads or 1) for lib in _resources.blas_libraries(controller)]
    return max(counts) if counts else 1


def selection_floor(block_size, candidates, kernel_rate):
    """A lower bound on :meth:`block_seconds <bcd.GaussianProcess.block_seconds>`:
    choosing a block of ``block_size`` coordinates scores ``candidates``
    candidates against each of its partial blocks, ``candidates *
    block_size^2 / 2`` kernel entries, as if at the full ``kernel_rate``
    and with nothing else to do.

    Examples
    --------
    >>> from bcd.core.calibration import selection_floor
    >>> selection_floor(500, 60, 1e9)
    0.0075
    """
    return candidates * block_size * block_size / 2.0 / kernel_rate


def kernel_choice(problem):
    """:func:`decide` for a kernel-system problem, from this machine's
    calibration: :func:`dense_rate` on the BLAS threads in effect,
    ``problem.kernel_entry_rate()``, ``problem.block_seconds(...)`` for
    the default block of rule "gbcd", and
    :func:`bcd._resources.available_memory`.

    The block-choice probe (tens of milliseconds, the dearest of the three)
    is skipped when the dense solve fits and is predicted faster than GBCD
    even with blocks chosen in :func:`selection_floor`: the prediction then
    records that floor as ``block_seconds``, and ``block_probe`` is False.
    """
    from .rules import RULES
    spec = RULES["gbcd"]
    n = problem.n_coordinates
    k = spec.default_block_size(n)
    candidates = next(o.default for o in spec.options if o.name == "mi_candidates")
    flops = dense_rate(blas_thread_count(), n)
    entries = problem.kernel_entry_rate()
    memory = _resources.available_memory()
    floor = decide(n, flops, entries, memory, selection_floor(k, candidates, entries), k)
    if floor["choice"] == "dense":
        return dict(floor, block_probe=False)
    return dict(decide(n, flops, entries, memory, problem.block_seconds(k, candidates), k),
                block_probe=True)
