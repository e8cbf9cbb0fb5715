from bcd.core._linalg cimport CyBlockWork
from bcd.core._problem cimport CyProblem


cdef struct Block:
    # the block the engine hands to an update
    const int* coords           # its coordinates, sorted
    Py_ssize_t size
    const double* grad          # grad_b f at the current iterate
    double L                    # L_b when the rule knows it (a unit of a fixed partition), else 0
    Py_ssize_t unit             # the unit of the partition when the block is one, else -1
    const double* solution      # the block minimizer when the rule computed it, else NULL


# what CyUpdate.step returns
cdef enum:
    STEP_TAKEN = 0          # moved, or nothing to do on a zero gradient
    STEP_REJECTED = 1       # the block cannot make progress
    STEP_INDEFINITE = 2     # the block's Hessian is not positive definite:
                            # its exact solve does not exist
    STEP_INTERRUPTED = 3    # stopped by Ctrl-C before moving (a long solve)
    STEP_TIMED_OUT = 4      # stopped at ``deadline`` before moving


cdef class CyUpdate:
    """Moves the selected block: computes a direction and takes the step.

    ``step`` returns one of STEP_TAKEN, STEP_REJECTED, STEP_INDEFINITE,
    and, from a solve long enough to look at the clock and for Ctrl-C
    (a block factored by panels), STEP_INTERRUPTED or STEP_TIMED_OUT.
    """
    cdef double[::1] d
    cdef double[::1] H
    cdef CyBlockWork bw
    cdef Py_ssize_t reserved
    # optional record of accepted steps: alpha, f change, alpha * g.d
    cdef bint tracing
    cdef Py_ssize_t n_trace
    cdef double[::1] tr_alpha
    cdef double[::1] tr_delta
    cdef double[::1] tr_slope
    cdef double accepted        # the step the last successful line search took
    cdef public double deadline # a time of bcd.core._clock.now() (the engine's max_time)

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil
    cdef void record(self, double alpha, double delta, double slope) noexcept nogil
    cdef int armijo(self, CyProblem prob, double gd, double alpha) noexcept nogil
    cdef double steepest(self, const double* gb, Py_ssize_t nb) noexcept nogil
