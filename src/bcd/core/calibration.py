"""The machine-calibrated choice between a dense solve and GBCD for kernel systems.

:func:`bcd.solve` with no options solves a kernel system (``structure ==
"kernel"``, e.g. :class:`bcd.GaussianProcess`) either as one exact block of
every coordinate (a dense Cholesky solve) or by greedy block coordinate
descent (GBCD).  :func:`kernel_choice` predicts both times from two rates
measured once per process on this machine and cached:

* the dense factorization rate (flop/s), from the panel-blocked Cholesky
  of :mod:`bcd.core._dense` on a ``DENSE_PROBE`` x ``DENSE_PROBE`` SPD
  matrix (:func:`dense_rate`, about 0.05 s);
* the kernel-entry rate of the problem's kernel (entries/s), from one
  evaluator block of at most 1000 x 1000 entries
  (``problem.kernel_entry_rate()``, cached per kernel kind, input
  dimension and thread count, a few milliseconds).

and the cost model of :func:`predict` (constants ``DENSE_PASSES`` and
``GBCD_PASSES`` measured on this project's machine).  The dense solve is
chosen when it is predicted faster *and* its matrices (``DENSE_BYTES`` n^2
bytes: K and its factor) take at most ``MEMORY_FRACTION`` of
:func:`bcd._resources.available_memory`; otherwise GBCD, whose memory is
O(n).  ``Result.options["auto_prediction"]`` records the figures.
"""
import threading
import time

import numpy as np

from .. import _resources

#: the side of the SPD matrix whose Cholesky factorization times the dense rate
DENSE_PROBE = 768

#: bytes per entry of the dense solve: K (8 n^2) and its Cholesky factor (8 n^2)
DENSE_BYTES = 16

#: the dense solve is allowed at most this fraction of the available memory
MEMORY_FRACTION = 0.5

#: kernel entries the dense solve evaluates, in units of n^2 (see :func:`predict`)
DENSE_PASSES = 2.0

#: kernel entries GBCD evaluates, in units of n^2 (see :func:`predict`)
GBCD_PASSES = 31.0

#: GBCD is chosen only when predicted at least this many times faster than
#: the dense solve: below the measured crossover the model overpredicts
#: GBCD's speed by up to 2x (the table of :func:`predict`), and the probes
#: move with the machine's load; at n = 3000 a noisy probe once chose GBCD,
#: 4.2x slower than the dense solve (``python -m asv_benches.defaults``)
GBCD_MARGIN = 2.0

#: the rate of a large dense factorization relative to the probe's (wider
#: panels, fewer calls; see :func:`predict`)
DENSE_SCALE = 1.5

_lock = threading.Lock()
_dense_rate = None


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def dense_rate():
    """Flop/s of the dense Cholesky factorization (n^3 / 3 flops), measured
    once per process (median of 3 factorizations of a ``DENSE_PROBE`` x
    ``DENSE_PROBE`` SPD matrix with the BLAS threads then in effect) and
    cached.

    Examples
    --------
    >>> from bcd.core.calibration import dense_rate
    >>> dense_rate() > 0
    True
    """
    global _dense_rate
    with _lock:
        if _dense_rate is None:
            from ._dense import cholesky
            n = DENSE_PROBE
            rng = np.random.default_rng(0)
            R = rng.uniform(size=(n, n))
            # symmetric with entries in [0, 1) and n on the diagonal: positive
            # definite by Gershgorin's theorem
            A = np.asfortranarray(0.5 * (R + R.T) + n * np.eye(n))
            work = np.empty_like(A, order="F")

            def factor():
                work[...] = A
                cholesky(work)
            factor()                       # warm up (page faults, BLAS threads)
            seconds = _median_time(factor, 3)
            _dense_rate = (n ** 3 / 3.0) / max(seconds, 1e-9)
        return _dense_rate


def entry_rate(evaluate, n_entries, repeats=3):
    """Entries/s of ``evaluate()``, which computes ``n_entries`` kernel
    entries: the median of ``repeats`` timings after one warm-up call."""
    evaluate()
    return n_entries / max(_median_time(evaluate, repeats), 1e-9)


def predict(n, flop_rate, kernel_rate):
    r"""Predicted seconds ``(dense, gbcd)`` for a kernel system of ``n``
    points on a machine with the given dense factorization rate (flop/s)
    and kernel-entry rate (entries/s).

    * dense: ``DENSE_PASSES`` n^2 kernel entries (K of the one block and
      the gradient recomputed by the final certificate) and a Cholesky
      factorization of n^3 / 3 flops at ``DENSE_SCALE`` times the probe's
      rate;
    * GBCD: ``GBCD_PASSES`` n^2 kernel entries, the passes over the kernel
      of its greedy blocks (the gradient update K[:, B] δ and the block
      solves); its time is dominated by kernel evaluation.

    The constants were measured on this project's 2-core machine (shared
    with other builds, load average 12-16; one BLAS thread, two OpenMP
    threads), Friedman1 (10 features), squared exponential kernel of
    length-scale 2 and noise 0.05 (the data of ``experiments/gp_demo.py``),
    the default tol 1e-4, medians of 3, one process::

        OPENBLAS_NUM_THREADS=1 python -m asv_benches.gp_auto --n 2000 4000 6000 8000

    Calibration: 9.14e9 flop/s (Cholesky of 768), 1.51e8 entries/s.

    ====== ======= ======= ======= ======= =====================
    n      dense   pred.   GBCD    pred.   GBCD entries / n^2
    ====== ======= ======= ======= ======= =====================
    2000   0.269   0.248   1.643   0.821   62
    4000   1.682   1.768   6.068   3.285   57
    6000   6.368   5.73    9.839   7.39    41
    8000   11.33   13.30   11.28   13.14   27
    ====== ======= ======= ======= ======= =====================

    (seconds; predictions with the constants below).  The factorization
    ran 1.34-1.78 times the probe's rate at these sizes (median 1.47):
    ``DENSE_SCALE = 1.5``; the dense solve's n^2 term is 2 passes of kernel
    entries (``DENSE_PASSES``).  GBCD's entries per n^2 fall with n (its
    iterations grow more slowly than n), so one constant cannot match every
    n: ``GBCD_PASSES = 31`` puts the predicted crossover where the measured
    one was, at n = 8000 (where the two measured 11.33 s and 11.28 s); it
    overpredicts GBCD's speed below the crossover (where the dense solve
    wins by 1.5-6x, so the choice is unchanged) and underpredicts it above.

    Examples
    --------
    >>> from bcd.core.calibration import predict
    >>> dense, gbcd = predict(1000, flop_rate=1e10, kernel_rate=1e8)
    >>> round(dense, 4), round(gbcd, 4)
    (0.0422, 0.31)
    """
    n = float(n)
    dense = DENSE_PASSES * n * n / kernel_rate + n ** 3 / 3.0 / (DENSE_SCALE * flop_rate)
    gbcd = GBCD_PASSES * n * n / kernel_rate
    return dense, gbcd


def decide(n, flop_rate, kernel_rate, memory):
    """The choice for ``n`` points given the calibration figures and the
    available memory in bytes (None: unknown, no limit): a dict with
    ``choice`` ("dense" unless GBCD is predicted ``GBCD_MARGIN`` times
    faster or the dense matrices do not fit, else "gbcd"), the predicted
    seconds ``dense_s`` and
    ``gbcd_s``, ``dense_bytes``, ``memory_limit`` (bytes allowed for the
    dense solve, or None) and the rates used.  Deterministic: the same
    figures give the same choice.

    Examples
    --------
    >>> from bcd.core.calibration import decide
    >>> decide(1000, 1e10, 1e8, memory=None)["choice"]
    'dense'
    >>> decide(1000, 1e10, 1e8, memory=10**6)["choice"]    # 16 MB do not fit
    'gbcd'
    """
    dense_s, gbcd_s = predict(n, flop_rate, kernel_rate)
    dense_bytes = DENSE_BYTES * float(n) ** 2
    limit = None if memory is None else MEMORY_FRACTION * float(memory)
    fits = limit is None or dense_bytes <= limit
    choice = "dense" if fits and dense_s <= GBCD_MARGIN * gbcd_s else "gbcd"
    return dict(choice=choice, dense_s=dense_s, gbcd_s=gbcd_s, dense_bytes=dense_bytes,
                memory_limit=limit, flop_rate=flop_rate, entry_rate=kernel_rate)


def kernel_choice(problem):
    """:func:`decide` for a kernel-system problem, from this machine's
    calibration: :func:`dense_rate`, ``problem.kernel_entry_rate()`` and
    :func:`bcd._resources.available_memory`."""
    rate = problem.kernel_entry_rate()
    return decide(problem.n_coordinates, dense_rate(), rate, _resources.available_memory())
