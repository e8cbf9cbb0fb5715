cimport cython
from bcd.core._problem cimport CyProblem
from bcd.core._random cimport RNG


cdef class CySelector:
    """Chooses which coordinates to update.

    The coordinates are grouped into *units*: the blocks of a fixed
    partition, or single coordinates for variable blocks.  Each iteration a
    selector picks ``k`` units (1 for a fixed partition, tau for variable
    blocks) and returns the union of their coordinates, sorted.
    """
    cdef readonly Py_ssize_t n_units
    cdef readonly Py_ssize_t k
    cdef const int[::1] unit_ptr
    cdef const int[::1] unit_coords
    cdef const double[::1] unit_L
    cdef int[::1] chosen
    cdef RNG rng
    cdef public double last_L       # L_b of the last block when known, else 0
    cdef public Py_ssize_t last_unit  # the unit picked when it was one, else -1

    cdef Py_ssize_t pick(self, CyProblem prob) noexcept nogil
    cdef Py_ssize_t select(self, CyProblem prob, int* block) noexcept nogil
    cdef void notify(self, CyProblem prob) noexcept nogil
    cdef bint solved_block(self, const int* blk, Py_ssize_t nb, double* d) noexcept nogil


cdef class CyGreedySelector(CySelector):
    cdef const double[::1] coord_weight
    cdef const double[::1] unit_scale
    cdef const int[::1] unit_of
    cdef double[::1] key
    cdef int[::1] cand
    cdef unsigned char[::1] in_cand
    cdef Py_ssize_t n_cand
    cdef Py_ssize_t cap
    cdef int[::1] scan_heap
    cdef double theta_key
    cdef int theta_unit
    cdef bint keys_stale
    cdef bint cand_valid
    cdef bint simple_score             # singleton units scored by the GS/GSD formula
    cdef readonly Py_ssize_t n_rebuilds

    cdef double _score(self, CyProblem prob, int u) noexcept nogil
    @cython.final
    cdef void _rescore_all(self, CyProblem prob) noexcept nogil
    @cython.final
    cdef Py_ssize_t _insert_best(self, int* c, Py_ssize_t nc, int u) noexcept nogil
    @cython.final
    cdef Py_ssize_t _scan_top(self) noexcept nogil
    @cython.final
    cdef void _rebuild_candidates(self) noexcept nogil
    @cython.final
    cdef void _heap_up(self, int* h, Py_ssize_t i) noexcept nogil
    @cython.final
    cdef void _heap_down(self, int* h, Py_ssize_t n) noexcept nogil


cdef struct MIFactor:
    # the factor of H_BB grown by the maximum-improvement rule, in the
    # buffers of its selector, with the coordinate waiting to join B
    double* winv            # W = L^{-1} for the lower Cholesky factor L of H_BB,
                            # in panels of columns (_mi.h)
    double* z               # L^{-1} g_B
    double* delta           # -H_BB^{-1} g_B = -W^T z
    double* h               # H_Bj of the pending coordinate j
    double* lrow            # W H_Bj: the row of L that j would add
    int* order              # B in the order the coordinates were chosen
    Py_ssize_t k
    Py_ssize_t size         # |B|
    int pending             # coordinate waiting to join B (its row H_Bj in h), or -1;
                            # still set after joining it was found to make H_BB indefinite
    double g_pending        # its g_j and H_jj
    double h_pending


cdef extern from "_team.h" nogil:
    ctypedef struct bcd_team:
        long stalls
    long bcd_team_flag_words(long n)
    void bcd_team_init(bcd_team* t, long n, long* flags)
    void bcd_team_post(bcd_team* t, long step)
    void bcd_team_stop(bcd_team* t)
    long bcd_team_wait(bcd_team* t, long seen)
    void bcd_team_barrier(bcd_team* t, long me, long* epoch)
    void bcd_team_publish(bcd_team* t, long value)
    void bcd_team_await(bcd_team* t, long value)


cdef class CyMaxImprovementSelector(CySelector):
    cdef Py_ssize_t kappa          # candidates per step (slots of the pool)
    cdef Py_ssize_t refresh        # candidates drawn afresh per step
    cdef MIFactor fac
    cdef double[::1] winv          # W = L^{-1}, in panels of columns (_mi.h)
    cdef double[::1] z             # L^{-1} g_B
    cdef double[::1] delta         # block minimizer of the quadratic over B
    cdef double[::1] h             # H_Bj of the pending coordinate
    cdef double[::1] lrow          # W H_Bj
    cdef double[::1] rows          # H[candidate of each slot, B], leading dimension ld
    cdef double[::1] part          # part[q * kappa + i]: column chunk q of H_cB delta, i-th active slot
    cdef double[::1] e             # g + H delta at each active slot's candidate
    cdef double[::1] score         # e^2 / H_cc at each slot's candidate
    cdef double[::1] sol           # delta in the order of the returned block
    cdef int[::1] order            # B in the order the coordinates were chosen
    cdef int[::1] cand             # coordinate of each slot
    cdef int[::1] cand_unit        # and its unit
    cdef unsigned char[::1] kind   # slot: 0 empty, 1 drawn this step, 2 kept
    cdef int[::1] active           # the occupied slots
    cdef int[::1] seg_ptr          # first segment item of each active slot (n_active + 1)
    cdef int[::1] drawn_units
    cdef double[::1] tmp           # rows evaluated together, before going to their slots
    cdef int[::1] tmp_rows
    cdef unsigned char[::1] taken  # unit: 1 in B or left out, 2 in the pool
    cdef Py_ssize_t sol_nb
    cdef bint has_sol
    # the step in progress, set by the leader before it is posted
    cdef Py_ssize_t ncols          # columns of the candidate rows: B and the pending one
    cdef Py_ssize_t col0           # first column missing from kept rows
    cdef Py_ssize_t n_active       # occupied slots
    cdef Py_ssize_t n_wchunks      # ranges of rows of W h (0 with nothing pending)
    cdef bint together             # rows only by hessian_entries, all at once
    cdef bint small                # a small team: the leader updates the factor alone
    cdef long step                 # the step in progress
    cdef Py_ssize_t n_lead         # candidate rows of the leader in a small team
    cdef Py_ssize_t n_scratch      # doubles of a thread's scratch for hessian_row
    cdef Py_ssize_t ld             # leading dimension of ``rows``: k in whole chunks
    # its outcome, from thread 0
    cdef int outcome               # 0 nothing pending, 1 joined, 2 left out, 3 indefinite
    cdef double z_new              # z of the joined coordinate
    cdef Py_ssize_t grown          # the block size _grow returned
    # blocks still to grow alone after a team could not run at once
    cdef Py_ssize_t solo_left
    cdef Py_ssize_t solo_period    # blocks alone after the next stalled team
    cdef public Py_ssize_t n_solo_blocks   # blocks grown alone for that reason

    cdef Py_ssize_t _grow(self, CyProblem prob, int* block, bcd_team* team, long nt,
                          double* scratch, long* epoch) noexcept nogil
    cdef void _step(self, CyProblem prob, bcd_team* team, long me, long nt,
                    double* scratch, long* epoch) noexcept nogil
    cdef void _step_small(self, CyProblem prob, bcd_team* team, long me, long nt,
                          double* scratch, long* epoch) noexcept nogil
    cdef void _evaluate(self, CyProblem prob, long me, long nt, double* scratch) noexcept nogil
    cdef void _extend(self, long me, long nt, double* scratch) noexcept nogil
    cdef int _decide(self, double* d, double* zs) noexcept nogil
    cdef void _factor_chunk(self, Py_ssize_t q, Py_ssize_t nb, int outcome, double d, double zs,
                            double* u) noexcept nogil
    cdef void _row(self, CyProblem prob, Py_ssize_t i, double* scratch) noexcept nogil
    cdef void _segment(self, CyProblem prob, Py_ssize_t i, Py_ssize_t j,
                       double* scratch) noexcept nogil
    cdef void _rows_of_kind(self, CyProblem prob, Py_ssize_t n_active, unsigned char kind,
                            Py_ssize_t c0) noexcept nogil
    cdef Py_ssize_t _fill(self, Py_ssize_t n_taken, Py_ssize_t n_pool) noexcept nogil
    cdef Py_ssize_t _draw(self, Py_ssize_t remaining, Py_ssize_t want, int* out) noexcept nogil
