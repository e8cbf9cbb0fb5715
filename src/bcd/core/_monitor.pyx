"""Monitors: what a solve records about its iterates besides the objective."""
import numpy as np

from bcd.core._problem cimport CyProblem


cdef class CyMonitor:

    cdef void start(self, CyProblem prob) except *:
        pass

    def begin(self, CyProblem prob):
        """Start watching from the current iterate (the engine does this when
        a run starts at iteration 0)."""
        self.start(prob)

    def observe(self, CyProblem prob, coords, Py_ssize_t it):
        """Take note of coordinates changed outside the engine (at iteration ``it``)."""
        cdef int[::1] c = np.ascontiguousarray(coords, dtype=np.int32)
        if c.shape[0]:
            self.after_step(prob, &c[0], c.shape[0], it)

    cdef void after_step(self, CyProblem prob, const int* blk, Py_ssize_t nb,
                         Py_ssize_t it) noexcept nogil:
        pass


cdef class CyFaceMonitor(CyMonitor):
    """Follows the face of every coordinate of a penalized problem (its sign
    for L1, the bound it sits on for a box: the manifold of Section 6).

    ``changed_at`` is the last iteration that changed a face.  With
    ``target`` (int8, one per coordinate), ``target_reached_at`` is the first
    iteration at which every face equals it (-1 if never); with
    ``unsigned`` only whether a face is 0 or not is compared (a support
    without signs).
    """

    def __init__(self, target=None, bint unsigned=False):
        self.has_target = target is not None
        self.target = target if self.has_target else np.zeros(1, dtype=np.int8)
        self.unsigned = unsigned
        self.changed_at = 0
        self.target_reached_at = -1

    cdef void start(self, CyProblem prob) except *:
        self.face = prob.penalty.faces(prob.get_x())
        self.changed_at = 0
        self.target_reached_at = -1
        if self.has_target:
            ref = np.abs(np.asarray(self.face)) if self.unsigned else np.asarray(self.face)
            self.mismatched = int(np.count_nonzero(ref != np.asarray(self.target)))
            if self.mismatched == 0:
                self.target_reached_at = 0

    cdef void after_step(self, CyProblem prob, const int* blk, Py_ssize_t nb,
                         Py_ssize_t it) noexcept nogil:
        cdef Py_ssize_t k
        cdef signed char fnew, t
        cdef int fold
        for k in range(nb):
            fnew = <signed char>prob.penalty.face(blk[k], prob.x[blk[k]])
            fold = self.face[blk[k]]
            if fnew != fold:
                self.changed_at = it
                self.face[blk[k]] = fnew
                if self.has_target:
                    t = self.target[blk[k]]
                    if self.unsigned:
                        self.mismatched += ((fnew != 0) != t) - ((fold != 0) != t)
                    else:
                        self.mismatched += (fnew != t) - (fold != t)
        if self.has_target and self.mismatched == 0 and self.target_reached_at < 0:
            self.target_reached_at = it
