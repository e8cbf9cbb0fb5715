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
    """1 if a KeyboardInterrupt is pending (it is then consumed), else 0;
    another exception raised by a signal handler propagates."""
    with gil:
        try:
            PyErr_CheckSignals()
        except KeyboardInterrupt:
            return 1
    return 0
