"""The iteration loop shared by every rule, block strategy and update."""
import numpy as np
from libc.math cimport INFINITY, isfinite, fmin
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from bcd.core._clock cimport interrupted as _interrupted, now as _now

from bcd.core._extrapolate cimport CyAnderson
from bcd.core._monitor cimport CyMonitor
from bcd.core._problem cimport CyProblem
from bcd.core._select cimport CySelector
from bcd.core._update cimport (Block, CyUpdate, STEP_TAKEN, STEP_INDEFINITE, STEP_INTERRUPTED,
                               STEP_TIMED_OUT)


# Stopping reasons.  The Python layer reads ``STATUS_NAMES`` and
# ``STATUS_MESSAGES``; there is no other copy of the codes.
cdef enum Status:
    CONVERGED = 0
    MAX_ITER = 1
    MAX_TIME = 2
    CALLBACK = 3
    STALLED = 4
    INTERRUPTED = 5
    DIVERGED = 6
    INDEFINITE = 7

STATUS_NAMES = {
    CONVERGED: "converged",
    MAX_ITER: "max_iter",
    MAX_TIME: "max_time",
    CALLBACK: "callback",
    STALLED: "stalled",
    INTERRUPTED: "interrupted",
    DIVERGED: "diverged",
    INDEFINITE: "indefinite",
}

#: the code of each status name
STATUS_CODES = {name: code for code, name in STATUS_NAMES.items()}
STATUS_MESSAGES = {
    CONVERGED: "Converged: the optimality measure reached tol.",
    MAX_ITER: "Stopped: reached max_iter before the optimality measure reached tol.",
    MAX_TIME: "Stopped: reached max_time before the optimality measure reached tol.",
    CALLBACK: "Stopped: the callback asked to stop.",
    STALLED: "Stopped: the selected block could not make progress (the step was rejected).",
    INTERRUPTED: "Interrupted (KeyboardInterrupt): stopped at the current iterate.",
    DIVERGED: "Diverged: the objective or the optimality measure is not finite.",
    INDEFINITE: "Stopped: a block's Hessian is not positive definite.",
}

#: seconds between checks for signals (Ctrl-C) during a run
SIGNAL_INTERVAL = 0.1
#: seconds between clock readings, at most (and at most 5 % of max_time)
CLOCK_INTERVAL = 0.01


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


cdef class Settings:
    """How a run stops and reports.

    Attributes
    ----------
    max_iter : int
        Block updates at most.
    tol : float
        The optimality measure at which the run has converged.
    max_time : float
        Wall-clock limit of the loop in seconds (0: none).
    check_every : int
        Iterations between stopping tests (each test is one history row).
    callback : callable or None
        ``callback(iteration, problem_state)``, called every
        ``callback_every`` iterations with the GIL; a true return stops.
    max_block : int
        The largest block the selector can return.
    greedy : bool
        The rule reads the gradient: a rejected step means the same block
        would be selected again, so the run stops as stalled at once.
    progress : callable or None
        ``progress(iteration, objective, optimality, time)``, called with the
        GIL at a stopping test when ``progress_interval`` seconds have passed
        since the last call (a :class:`bcd._progress.Progress`).
    progress_interval : float
    scope : int32 array or None
        Coordinates the run is restricted to (a working set): the stopping
        test measures optimality on them only, at a cost proportional to
        them.  None: all coordinates.
    extrapolation : CyAnderson or None
        Anderson extrapolation, tried every ``pass_length`` accepted steps
        (one pass over the scope), on the scope.
    pass_length : int
        Iterations per pass.
    first_iteration : int
        The iteration count the run starts from (a run that continues
        another): history rows, callbacks and the monitor see the total.
    """
    cdef public Py_ssize_t max_iter
    cdef public double tol
    cdef public double max_time
    cdef public Py_ssize_t check_every
    cdef public object callback
    cdef public Py_ssize_t callback_every
    cdef public Py_ssize_t max_block
    cdef public bint greedy
    cdef public object progress
    cdef public double progress_interval
    cdef public object scope
    cdef public CyAnderson extrapolation
    cdef public Py_ssize_t pass_length
    cdef public Py_ssize_t first_iteration

    def __init__(self, max_iter=1000, tol=0.0, max_time=0.0, check_every=1, callback=None,
                 callback_every=1, max_block=1, greedy=False, progress=None,
                 progress_interval=1.0, scope=None, extrapolation=None, pass_length=1,
                 first_iteration=0):
        self.max_iter = max_iter
        self.tol = tol
        self.max_time = max_time
        self.check_every = max(1, check_every)
        self.callback = callback
        self.callback_every = max(1, callback_every)
        self.max_block = max(1, max_block)
        self.greedy = greedy
        self.progress = progress
        self.progress_interval = progress_interval
        self.scope = None if scope is None else np.ascontiguousarray(scope, dtype=np.int32)
        self.extrapolation = extrapolation
        self.pass_length = max(1, pass_length)
        self.first_iteration = first_iteration


class Outcome:
    """What a run returns.

    ``status`` is a key of ``STATUS_NAMES``; ``history`` the columns
    (iteration, objective, optimality, time) of the stopping tests;
    ``loop_time`` the seconds of the iterations proper (without the initial
    and final exact evaluations); ``block`` the coordinates of the block
    whose Hessian was found indefinite (status "indefinite"), else None.
    """
    __slots__ = ("n_iter", "status", "optimality", "objective", "history", "loop_time",
                 "block")

    def __init__(self, n_iter, status, optimality, objective, history, loop_time, block=None):
        self.n_iter = n_iter
        self.status = status
        self.optimality = optimality
        self.objective = objective
        self.history = history
        self.loop_time = loop_time
        self.block = block

    @property
    def status_name(self):
        return STATUS_NAMES[self.status]


cdef inline double _measure(CyProblem prob, const int* scope, Py_ssize_t ns,
                           bint exact) noexcept nogil:
    # the optimality measure, over the scope when the run has one
    if scope == NULL:
        return prob.optimality(exact)
    return prob.optimality_on(scope, ns)


def run(CyProblem prob, CySelector sel, CyUpdate upd, Settings settings,
        CyMonitor monitor=None):
    """Run block coordinate descent from the problem's current iterate.

    The stopping test (``prob.optimality``: ``||grad f||_inf``, or the KKT
    residual with a penalty; over ``settings.scope`` when given) runs every
    ``settings.check_every`` iterations.  A passing test on a tracked
    gradient is confirmed on a gradient recomputed from scratch, so
    convergence never rests on accumulated rounding.  A non-finite
    objective or optimality measure at a test stops the run as diverged.
    ``monitor`` sees every accepted step, and the extrapolation's accepted
    steps as one step on the scope.

    The clock is read on a time basis, about every ``CLOCK_INTERVAL``
    seconds (every iteration when iterations are slower), so ``max_time``
    is overshot by at most max(5 % of it, one iteration).  About every
    ``SIGNAL_INTERVAL`` seconds the loop takes the GIL to check for
    signals: Ctrl-C stops the run at the current iterate with status
    "interrupted" instead of raising.

    Returns an :class:`Outcome`.
    """
    cdef Py_ssize_t max_block = settings.max_block
    cdef int[::1] block = np.zeros(max_block, dtype=np.int32)
    cdef double[::1] gb = np.zeros(max_block)
    cdef double[::1] sol = np.zeros(max_block)
    cdef Block info
    cdef History h
    cdef Py_ssize_t it = 0, nb, stalls = 0, k, bad_nb = 0
    cdef Py_ssize_t to_check, to_callback, to_clock, to_pass, clock_every = 1
    cdef Py_ssize_t max_iter = settings.max_iter, check_every = settings.check_every
    cdef Py_ssize_t callback_every = settings.callback_every
    cdef Py_ssize_t it0 = settings.first_iteration, pass_length = settings.pass_length
    cdef double tol = settings.tol, max_time = settings.max_time
    cdef double t0, t, opt, obj, t_clock, t_signal, spacing = CLOCK_INTERVAL, ratio
    cdef double t_progress = 0.0, progress_interval = settings.progress_interval
    cdef double signal_interval = SIGNAL_INTERVAL
    cdef int status = MAX_ITER, step_status
    cdef object callback = settings.callback
    cdef bint has_cb = callback is not None
    cdef object progress = settings.progress
    cdef bint reporting = progress is not None, greedy = settings.greedy
    cdef bint stop_cb = False
    cdef bint tracking = prob.tracking
    cdef bint penalized = prob.has_penalty
    cdef bint monitored = monitor is not None
    cdef CyAnderson extrap = settings.extrapolation
    cdef bint extrapolating = extrap is not None
    cdef int[::1] scope_arr
    cdef const int* scope = NULL
    cdef Py_ssize_t ns = prob.n
    cdef double t_loop = 0.0, t_start
    if settings.scope is not None:
        scope_arr = settings.scope
        ns = scope_arr.shape[0]
        scope = &scope_arr[0] if ns > 0 else NULL
    else:
        scope_arr = np.arange(prob.n, dtype=np.int32)
    if max_time > 0:
        spacing = fmin(spacing, 0.05 * max_time)
    if extrapolating:
        extrap.start(prob, scope_arr)
    if monitored and it0 == 0:
        monitor.start(prob)
    h.size = 0
    h.cap = 0
    h.it = NULL
    h.obj = NULL
    h.opt = NULL
    h.time = NULL

    try:
        with nogil:
            t0 = _now()
            # a step long enough to look at the clock stops there too
            upd.deadline = t0 + max_time if max_time > 0 else INFINITY
            opt = _measure(prob, scope, ns, True)
            sel.notify(prob)
            prob.clear_dirty()
            obj = prob.full_objective()
            _hist_push(&h, it0, obj, opt, 0.0)
            if not (isfinite(obj) and isfinite(opt)):
                status = DIVERGED
            elif opt <= tol:
                status = CONVERGED
            to_check = check_every
            # callbacks fall on multiples of callback_every of the total count
            to_callback = callback_every - it0 % callback_every
            to_clock = 1
            to_pass = pass_length
            t_start = _now()
            t_clock = t_start
            t_signal = t_start
            while status == MAX_ITER and it < max_iter:
                nb = sel.select(prob, &block[0])
                if nb < 0:
                    # the rule met an indefinite Hessian while building the block
                    bad_nb = -nb
                    status = INDEFINITE
                    break
                prob.grad_block(&block[0], nb, &gb[0])
                info.coords = &block[0]
                info.size = nb
                info.grad = &gb[0]
                info.L = sel.last_L
                info.unit = sel.last_unit
                info.solution = &sol[0] if sel.solved_block(&block[0], nb, &sol[0]) else NULL
                step_status = upd.step(prob, &info)
                if step_status == STEP_TAKEN:
                    if penalized:
                        # x + (y - x) can miss a bound of the domain by rounding
                        prob.project_block(&block[0], nb)
                    if monitored:
                        monitor.after_step(prob, &block[0], nb, it0 + it + 1)
                    if tracking and penalized:
                        # the -q scores of the block depend on x_b as well
                        for k in range(nb):
                            prob.mark_dirty(block[k])
                    if tracking:
                        sel.notify(prob)
                        prob.clear_dirty()
                    stalls = 0
                elif step_status == STEP_INDEFINITE:
                    bad_nb = nb
                    status = INDEFINITE
                    break
                elif step_status == STEP_INTERRUPTED:
                    status = INTERRUPTED
                    break
                elif step_status == STEP_TIMED_OUT:
                    status = MAX_TIME
                    break
                else:
                    # the state did not change: a greedy rule would pick the
                    # same block again; a random one may find another
                    stalls += 1
                    if greedy or stalls > 10 * sel.n_units:
                        status = STALLED
                        break
                it += 1
                if extrapolating:
                    to_pass -= 1
                    if to_pass == 0:
                        to_pass = pass_length
                        if extrap.after_pass(prob):
                            if monitored:
                                monitor.after_step(prob, &scope_arr[0], ns, it0 + it)
                            if tracking:
                                if penalized:
                                    for k in range(ns):
                                        prob.mark_dirty(scope_arr[k])
                                sel.notify(prob)
                                prob.clear_dirty()
                to_check -= 1
                if to_check == 0 and it < max_iter:
                    to_check = check_every
                    opt = _measure(prob, scope, ns, False)
                    if opt <= tol and prob.tracking:
                        # confirm on state recomputed from x, not on the
                        # incrementally updated gradient
                        if not prob.state_exact():
                            prob.reset()
                        opt = _measure(prob, scope, ns, True)
                        sel.notify(prob)
                        prob.clear_dirty()
                    obj = prob.full_objective()
                    t = _now() - t0
                    _hist_push(&h, it0 + it, obj, opt, t)
                    if reporting and t - t_progress >= progress_interval:
                        t_progress = t
                        with gil:
                            try:
                                progress(it0 + it, obj, opt, t)
                            except KeyboardInterrupt:
                                status = INTERRUPTED
                        if status == INTERRUPTED:
                            break
                    if not (isfinite(obj) and isfinite(opt)):
                        status = DIVERGED
                        break
                    if opt <= tol:
                        status = CONVERGED
                        break
                to_clock -= 1
                if to_clock == 0:
                    # read the clock about every `spacing` seconds: the count
                    # of iterations between readings follows their cost
                    t = _now()
                    ratio = spacing / (t - t_clock) if t > t_clock else 2.0
                    # grow at most twofold, shrink at once
                    clock_every = max(1, <Py_ssize_t>(clock_every * fmin(ratio, 2.0)))
                    to_clock = clock_every
                    t_clock = t
                    if max_time > 0 and t - t0 >= max_time:
                        status = MAX_TIME
                        break
                    if t - t_signal >= signal_interval:
                        t_signal = t
                        if _interrupted():
                            status = INTERRUPTED
                            break
                if has_cb:
                    to_callback -= 1
                if has_cb and to_callback == 0:
                    to_callback = callback_every
                    with gil:
                        try:
                            stop_cb = bool(callback(it0 + it, prob))
                        except KeyboardInterrupt:
                            status = INTERRUPTED
                    if status == INTERRUPTED:
                        break
                    if stop_cb:
                        status = CALLBACK
                        break
            t_loop = _now() - t_start
            # the reported solution is always certified on exact state (an
            # interrupted run returns at once, with the values it tracks)
            if it > 0 and h.it[h.size - 1] != it0 + it and status != INTERRUPTED:
                if not prob.state_exact():
                    prob.reset()
                opt = _measure(prob, scope, ns, True)
                obj = prob.full_objective()
                _hist_push(&h, it0 + it, obj, opt, _now() - t0)
                if status == MAX_ITER or status == MAX_TIME or status == STALLED:
                    if not (isfinite(obj) and isfinite(opt)):
                        status = DIVERGED
                    elif opt <= tol:
                        status = CONVERGED
            elif status == INTERRUPTED:
                obj = prob.full_objective()
        cols = _hist_to_numpy(&h)
    finally:
        free(h.it)
        free(h.obj)
        free(h.opt)
        free(h.time)
    bad = np.asarray(block[:bad_nb]).copy() if status == INDEFINITE else None
    return Outcome(it, status, opt, obj, cols, t_loop, bad)
