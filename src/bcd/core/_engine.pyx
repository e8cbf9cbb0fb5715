"""The iteration loop shared by every rule, block strategy and update."""
import numpy as np
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from bcd.core._problem cimport Problem
from bcd.core._select cimport Selector
from bcd.core._update cimport Update


# Stopping reasons.  The Python layer reads ``STATUS_NAMES`` and
# ``STATUS_MESSAGES``; there is no other copy of the codes.
cdef enum Status:
    CONVERGED = 0
    MAX_ITER = 1
    MAX_TIME = 2
    CALLBACK = 3
    STALLED = 4

STATUS_NAMES = {
    CONVERGED: "converged",
    MAX_ITER: "max_iter",
    MAX_TIME: "max_time",
    CALLBACK: "callback",
    STALLED: "stalled",
}

STATUS_MESSAGES = {
    CONVERGED: "Converged: the optimality measure reached tol.",
    MAX_ITER: "Stopped: reached max_iter before the optimality measure reached tol.",
    MAX_TIME: "Stopped: reached max_time before the optimality measure reached tol.",
    CALLBACK: "Stopped: the callback asked to stop.",
    STALLED: "Stopped: the selected block could not make progress (the step was rejected).",
}


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef struct History:
    Py_ssize_t size
    Py_ssize_t cap
    double* it
    double* obj
    double* opt
    double* time


cdef int _hist_push(History* h, double it, double obj, double opt, double t) noexcept nogil:
    cdef Py_ssize_t cap
    cdef double* p
    if h.size == h.cap:
        cap = 2 * h.cap if h.cap > 0 else 64
        p = <double*>realloc(h.it, cap * sizeof(double))
        if p == NULL:
            return -1
        h.it = p
        p = <double*>realloc(h.obj, cap * sizeof(double))
        if p == NULL:
            return -1
        h.obj = p
        p = <double*>realloc(h.opt, cap * sizeof(double))
        if p == NULL:
            return -1
        h.opt = p
        p = <double*>realloc(h.time, cap * sizeof(double))
        if p == NULL:
            return -1
        h.time = p
        h.cap = cap
    h.it[h.size] = it
    h.obj[h.size] = obj
    h.opt[h.size] = opt
    h.time[h.size] = t
    h.size += 1
    return 0


cdef object _hist_to_numpy(History* h):
    cols = []
    for src in range(4):
        arr = np.empty(h.size)
        cols.append(arr)
    cdef double[::1] a0 = cols[0], a1 = cols[1], a2 = cols[2], a3 = cols[3]
    if h.size:
        memcpy(&a0[0], h.it, h.size * sizeof(double))
        memcpy(&a1[0], h.obj, h.size * sizeof(double))
        memcpy(&a2[0], h.opt, h.size * sizeof(double))
        memcpy(&a3[0], h.time, h.size * sizeof(double))
    return cols


def run(Problem prob, Selector sel, Update upd, Py_ssize_t max_iter, double tol,
        double max_time, Py_ssize_t check_every, object callback,
        Py_ssize_t callback_every, Py_ssize_t max_block, bint verbose=False,
        target_faces=None, bint target_unsigned=False):
    """Run block coordinate descent from the problem's current iterate.

    The stopping test ``||grad f||_inf <= tol`` runs every ``check_every``
    iterations; each test is a history row.  A passing test on a tracked
    gradient is confirmed on a gradient recomputed from scratch, so
    ``converged`` never rests on accumulated rounding.

    With a penalty, the face of every coordinate (its sign for L1, the
    bound it sits on for a box) is followed through the block updates: the
    last iteration that changed one is reported, and with ``target_faces``
    (int8, one per coordinate) the first iteration at which all faces
    equal the target (-1 if never); with ``target_unsigned`` only whether a
    face is 0 or not is compared (a support without signs).

    Returns ``(n_iter, status, optimality, objective, history_columns,
    loop_seconds, faces_changed_at, target_reached_at)`` with ``status`` a
    key of ``STATUS_NAMES`` and ``loop_seconds`` the time of the iterations
    proper (without the initial and final exact evaluations).
    """
    cdef int[::1] block = np.zeros(max(1, max_block), dtype=np.int32)
    cdef double[::1] gb = np.zeros(max(1, max_block))
    cdef History h
    cdef Py_ssize_t it = 0, nb, stalls = 0, k
    cdef Py_ssize_t to_check, to_callback, to_clock
    cdef double t0, t, opt, obj
    cdef int status = MAX_ITER
    cdef bint has_cb = callback is not None
    cdef bint stop_cb = False
    cdef bint tracking = prob.tracking
    cdef double t_loop = 0.0, t_start
    # faces of the coordinates (penalized problems only)
    cdef bint faces_on = prob.has_penalty
    cdef bint has_target = faces_on and target_faces is not None
    cdef signed char[::1] face = np.zeros(prob.n if faces_on else 1, dtype=np.int8)
    cdef const signed char[::1] target = (target_faces if has_target
                                          else np.zeros(1, dtype=np.int8))
    cdef Py_ssize_t mismatched = 0, faces_changed_at = 0, target_reached_at = -1
    cdef signed char fnew
    cdef int fold
    if faces_on:
        face = prob.penalty.faces(prob.get_x())
        if has_target:
            ref = np.abs(np.asarray(face)) if target_unsigned else np.asarray(face)
            mismatched = int(np.count_nonzero(ref != np.asarray(target)))
            if mismatched == 0:
                target_reached_at = 0
    h.size = 0
    h.cap = 0
    h.it = NULL
    h.obj = NULL
    h.opt = NULL
    h.time = NULL
    if check_every < 1:
        check_every = 1
    if callback_every < 1:
        callback_every = 1

    try:
        with nogil:
            t0 = _now()
            opt = prob.optimality(True)
            sel.notify(prob)
            prob.clear_dirty()
            obj = prob.full_objective()
            _hist_push(&h, 0, obj, opt, 0.0)
            if opt <= tol:
                status = CONVERGED
            to_check = check_every
            to_callback = callback_every
            to_clock = 256
            t_start = _now()
            while status != CONVERGED and it < max_iter:
                nb = sel.select(prob, &block[0])
                prob.grad_block(&block[0], nb, &gb[0])
                if upd.step(prob, sel, &block[0], nb, &gb[0]) == 0:
                    if faces_on:
                        for k in range(nb):
                            # x + (y - x) can miss a bound of the domain by rounding
                            prob.x[block[k]] = prob.penalty.project(block[k], prob.x[block[k]])
                            fnew = <signed char>prob.penalty.face(block[k], prob.x[block[k]])
                            fold = face[block[k]]
                            if fnew != fold:
                                faces_changed_at = it + 1
                                face[block[k]] = fnew
                                if has_target:
                                    if target_unsigned:
                                        mismatched += (((fnew != 0) != target[block[k]])
                                                       - ((fold != 0) != target[block[k]]))
                                    else:
                                        mismatched += ((fnew != target[block[k]])
                                                       - (fold != target[block[k]]))
                        if has_target and mismatched == 0 and target_reached_at < 0:
                            target_reached_at = it + 1
                    if tracking and prob.has_penalty:
                        # the -q scores of the block depend on x_b as well
                        for k in range(nb):
                            prob.mark_dirty(block[k])
                    if tracking:
                        sel.notify(prob)
                        prob.clear_dirty()
                    stalls = 0
                else:
                    # the state did not change: a greedy rule would pick the
                    # same block again; a random one may find another
                    stalls += 1
                    if sel.needs_gradient or stalls > 10 * sel.n_units:
                        status = STALLED
                        break
                it += 1
                to_check -= 1
                to_clock -= 1
                if to_check == 0 and it < max_iter:
                    to_check = check_every
                    to_clock = 256
                    opt = prob.optimality(False)
                    if opt <= tol and prob.tracking:
                        # confirm on state recomputed from x, not on the
                        # incrementally updated gradient
                        prob.reset()
                        opt = prob.optimality(True)
                        sel.notify(prob)
                        prob.clear_dirty()
                    obj = prob.full_objective()
                    t = _now() - t0
                    _hist_push(&h, it, obj, opt, t)
                    if verbose:
                        with gil:
                            print(f"iter {it:>8d}  objective {obj:.10e}  optimality {opt:.3e}  time {t:.3f}s")
                    if opt <= tol:
                        status = CONVERGED
                        break
                    if max_time > 0 and t >= max_time:
                        status = MAX_TIME
                        break
                elif to_clock == 0:
                    to_clock = 256
                    if max_time > 0 and _now() - t0 >= max_time:
                        status = MAX_TIME
                        break
                if has_cb:
                    to_callback -= 1
                if has_cb and to_callback == 0:
                    to_callback = callback_every
                    with gil:
                        stop_cb = bool(callback(it, prob))
                    if stop_cb:
                        status = CALLBACK
                        break
            t_loop = _now() - t_start
            # the reported solution is always certified on exact state
            if it > 0 and h.it[h.size - 1] != it:
                prob.reset()
                opt = prob.optimality(True)
                obj = prob.full_objective()
                _hist_push(&h, it, obj, opt, _now() - t0)
                if opt <= tol and status != CALLBACK:
                    status = CONVERGED
        cols = _hist_to_numpy(&h)
    finally:
        free(h.it)
        free(h.obj)
        free(h.opt)
        free(h.time)
    return it, status, opt, obj, cols, t_loop, faces_changed_at, target_reached_at
