# The wall clock and the signal check of the compiled loops (the engine and
# the dual solvers), usable without the GIL.
from cpython.exc cimport PyErr_CheckSignals
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC


cdef inline double now() noexcept nogil:
    """Seconds of a monotonic clock."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline int interrupted() except -1 nogil:
    """1 if a KeyboardInterrupt is pending (it is then consumed) or a Ctrl-C
    was recorded whose exception was swallowed elsewhere (bcd._interrupt),
    else 0; another exception raised by a signal handler propagates."""
    with gil:
        try:
            PyErr_CheckSignals()
        except KeyboardInterrupt:
            _take_recorded()
            return 1
        if _take_recorded():
            return 1
    return 0


cdef inline bint _take_recorded() except -1:
    from bcd import _interrupt
    return _interrupt.take()
