"""Block updates."""
import numpy as np
from libc.math cimport fabs, fmax, fmin, sqrt, isfinite, INFINITY

from bcd.core._linalg cimport (CyBlockWork, chol_append, chol_remove, chol_solve,
                               cholesky_solve_in_place, spd_solve)
from bcd.core._problem cimport CyProblem

# Armijo constant and backtracking limit of the line searches; the Python
# names are for code that reproduces the search (benchmark references)
cdef double ARMIJO_C = 1e-10
cdef int MAX_BACKTRACKS = 60
# the gradient line search starts from this multiple of its last step
cdef double LS_GROWTH = 10.0
LINE_SEARCH_ARMIJO_C = ARMIJO_C
LINE_SEARCH_MAX_BACKTRACKS = MAX_BACKTRACKS


cdef class CyUpdate:

    def __cinit__(self, *args, **kwargs):
        self.deadline = INFINITY

    def __init__(self):
        self.reserve(1)

    def reserve(self, Py_ssize_t max_block):
        """Make the scratch fit blocks of up to ``max_block`` coordinates (grows only)."""
        if max_block <= self.reserved:
            return
        self.reserved = max_block
        self.d = np.zeros(max_block)
        self.H = np.zeros(max_block * max_block)
        self.bw = CyBlockWork(max_block)

    def enable_trace(self, Py_ssize_t capacity):
        """Record (alpha, f change, alpha g.d) of up to ``capacity`` steps."""
        self.tracing = True
        self.n_trace = 0
        self.tr_alpha = np.zeros(capacity)
        self.tr_delta = np.zeros(capacity)
        self.tr_slope = np.zeros(capacity)

    def trace(self):
        n = self.n_trace
        return (np.asarray(self.tr_alpha)[:n].copy(), np.asarray(self.tr_delta)[:n].copy(),
                np.asarray(self.tr_slope)[:n].copy())

    cdef void record(self, double alpha, double delta, double slope) noexcept nogil:
        if self.tracing and self.n_trace < self.tr_alpha.shape[0]:
            self.tr_alpha[self.n_trace] = alpha
            self.tr_delta[self.n_trace] = delta
            self.tr_slope[self.n_trace] = slope
            self.n_trace += 1

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        return 1

    cdef double steepest(self, const double* gb, Py_ssize_t nb) noexcept nogil:
        """d = -g_b; returns g_b . d."""
        cdef Py_ssize_t a
        cdef double gd = 0.0
        for a in range(nb):
            self.d[a] = -gb[a]
            gd -= gb[a] * gb[a]
        return gd

    cdef int armijo(self, CyProblem prob, double gd, double alpha) noexcept nogil:
        """Backtracking along the prepared direction, then commit.

        Accepts the first alpha with f(x + alpha d) - f(x) <= c alpha g.d,
        starting from ``alpha``.  The first backtrack minimizes the quadratic
        interpolating f(x), g.d and the trial value; later ones the cubic
        through the last two trials (Nocedal and Wright, section 3.5).  Each
        new alpha is kept within [alpha/10, alpha/2] of the previous one.
        """
        cdef double fa, a_prev = 0.0, f_prev = 0.0, a_new, c1, c2, d1, A, B, disc
        cdef int k
        if not gd < 0.0:
            return 1
        fa = prob.direction_delta(alpha)
        for k in range(MAX_BACKTRACKS):
            if isfinite(fa) and fa <= ARMIJO_C * alpha * gd:
                prob.direction_commit(alpha)
                self.record(alpha, fa, alpha * gd)
                self.accepted = alpha
                return 0
            if not isfinite(fa):
                a_new = 0.1 * alpha
            elif k == 0:
                a_new = -gd * alpha * alpha / (2.0 * (fa - gd * alpha))
            else:
                c1 = fa - gd * alpha
                c2 = f_prev - gd * a_prev
                d1 = 1.0 / (a_prev * a_prev * alpha * alpha * (alpha - a_prev))
                A = d1 * (a_prev * a_prev * c1 - alpha * alpha * c2)
                B = d1 * (-a_prev * a_prev * a_prev * c1 + alpha * alpha * alpha * c2)
                disc = B * B - 3.0 * A * gd
                if A == 0.0 or disc < 0.0:
                    a_new = 0.5 * alpha
                else:
                    a_new = (-B + sqrt(disc)) / (3.0 * A)
            if not (a_new >= 0.1 * alpha):
                a_new = 0.1 * alpha
            elif a_new > 0.5 * alpha:
                a_new = 0.5 * alpha
            a_prev = alpha
            f_prev = fa
            alpha = a_new
            fa = prob.direction_delta(alpha)
        return 1


cdef class CyGradientUpdate(CyUpdate):
    """d = -grad_b f / L_b (eq. 10); with a penalty g the proximal gradient
    step x_b <- prox_{g_b / L_b}(x_b - grad_b f / L_b) (eq. 30).

    With the global bound, L_b is the largest eigenvalue of the block's
    curvature bound: precomputed per block for a fixed partition, computed
    from the small block matrix for variable blocks.  With ``estimate``,
    L_b is instead a running estimate (Section 4.3): it starts at 1 and is
    doubled until f(x - g_b / L) <= f(x) - ||g_b||^2 / (2 L) holds; it is
    kept per block for fixed blocks and per coordinate (a block uses its
    largest) for variable blocks.
    """
    cdef bint estimate
    cdef double[::1] L_unit
    cdef double[::1] L_coord

    def __init__(self, bint estimate=False, Py_ssize_t n_units=0, Py_ssize_t n=0):
        CyUpdate.__init__(self)
        self.estimate = estimate
        if estimate:
            self.L_unit = np.ones(max(1, n_units))
            self.L_coord = np.ones(max(1, n))

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        cdef Py_ssize_t a
        cdef double L, gg, delta
        cdef int doublings
        if not self.estimate:
            L = block.L
            if L <= 0.0:
                L = prob.block_lipschitz(blk, nb)
            if not L > 0.0:
                return 1
            if prob.has_penalty:
                # proximal gradient (eq. 30): x_b <- prox_{g/L}(x_b - g_b / L)
                for a in range(nb):
                    self.d[a] = prob.penalty.prox(blk[a], prob.x[blk[a]] - gb[a] / L,
                                                  1.0 / L) - prob.x[blk[a]]
            else:
                for a in range(nb):
                    self.d[a] = -gb[a] / L
            prob.apply(blk, nb, &self.d[0])
            return 0
        gg = -self.steepest(gb, nb)
        if gg == 0.0:
            return 0
        if block.unit >= 0:
            L = self.L_unit[block.unit]
        else:
            L = 0.0
            for a in range(nb):
                L = max(L, self.L_coord[blk[a]])
        prob.direction_prepare(blk, nb, &self.d[0])
        delta = prob.direction_delta(1.0 / L)
        doublings = 0
        while not (delta <= -gg / (2.0 * L)) and doublings < 1100:
            L *= 2.0
            doublings += 1
            delta = prob.direction_delta(1.0 / L)
        if doublings == 1100:
            return 1
        prob.direction_commit(1.0 / L)
        self.record(1.0 / L, delta, -gg / L)
        if block.unit >= 0:
            self.L_unit[block.unit] = L
        else:
            for a in range(nb):
                self.L_coord[blk[a]] = L
        return 0


cdef class CyLineSearchUpdate(CyUpdate):
    """The gradient direction d = -grad_b f with an Armijo backtracking line
    search (Section 4.4).

    The first search starts from alpha = 1 / L_b where a curvature bound is
    known (the block's L_b, or for a variable block its largest L_i) and
    from 1 otherwise; each later one from ``LS_GROWTH`` times the step the
    previous one accepted.  The step thus follows the scale of the problem
    (data scaled by 1e-150 or 1e150 need steps of 1e300 or 1e-300), and
    as the first trial is usually too long, the search's quadratic
    interpolation lands on the minimizer along the direction (exactly for
    a quadratic), as a search from 1 does on unit-scale data.
    """
    cdef bint bound
    cdef double start           # the next search's first trial (0: none yet)

    def __init__(self, bint bound=False):
        CyUpdate.__init__(self)
        self.bound = bound
        self.start = 0.0

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size, a
        cdef const double* gb = block.grad
        cdef double gd = self.steepest(gb, nb), alpha = self.start, L
        cdef int status
        if gd == 0.0:
            return STEP_TAKEN
        if alpha == 0.0:
            alpha = 1.0
            if self.bound:
                L = block.L
                if not L > 0.0:
                    for a in range(nb):
                        L = fmax(L, prob.lipschitz[blk[a]])
                if L > 0.0 and isfinite(1.0 / L):
                    alpha = 1.0 / L
        prob.direction_prepare(blk, nb, &self.d[0])
        status = self.armijo(prob, gd, alpha)
        if status == STEP_TAKEN:
            self.start = LS_GROWTH * self.accepted
            if not isfinite(self.start):
                self.start = self.accepted
        return status


#: blocks of at least this many coordinates are factored in place (see
#: CyMatrixUpdate)
cdef Py_ssize_t IN_PLACE_BLOCK = 512


cdef class CyMatrixUpdate(CyUpdate):
    """d = -H_b^+ grad_b f with H_b the block's curvature bound (eq. 14).

    H_b upper-bounds the block Hessian everywhere, so the unit step always
    decreases f; for a quadratic it is the exact block minimizer.

    A block of at least ``IN_PLACE_BLOCK`` coordinates is first factored in
    place, without the copy of H_b that the general solve keeps for its
    eigendecomposition: the copy would double the memory the step touches
    (one block of every point of a kernel system: K, then its copy; the
    first touch of fresh pages cost as much as the factorization on a
    virtual machine).  Where H_b is not numerically positive definite, H_b
    is formed again and solved by the general path, which the later steps
    then take directly.  The result is bitwise the same either way.
    """
    cdef bint general           # an in-place factorization failed: copy first

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        cdef Py_ssize_t a
        cdef int status
        # the solves read one triangle of H_b: a problem may form only that
        if not prob.block_hessian_bound_lower(blk, nb, &self.H[0]):
            return STEP_REJECTED
        for a in range(nb):
            self.d[a] = -gb[a]
        if nb >= IN_PLACE_BLOCK and not self.general:
            # factored by panels, with Ctrl-C and the deadline looked at
            # between them (a block of 20,000 points takes seconds)
            status = cholesky_solve_in_place(&self.H[0], &self.d[0], nb, self.deadline, True)
            if status == 1:
                prob.apply(blk, nb, &self.d[0])
                return STEP_TAKEN
            if status < 0:
                return STEP_TIMED_OUT if status == -2 else STEP_INTERRUPTED
            self.general = True
            if not prob.block_hessian_bound_lower(blk, nb, &self.H[0]):
                return STEP_REJECTED
            for a in range(nb):
                self.d[a] = -gb[a]
        status = spd_solve(self.bw, &self.H[0], &self.d[0], nb)
        if status == -2:
            return STEP_INDEFINITE
        if status < 0:
            return STEP_REJECTED
        prob.apply(blk, nb, &self.d[0])
        return STEP_TAKEN


cdef class CyNewtonUpdate(CyUpdate):
    """d = -(block Hessian)^+ grad_b f with an Armijo line search from alpha = 1
    (Section 4.6).  A singular block Hessian is handled by its
    pseudo-inverse; if that is not a descent direction the step falls back
    to -grad_b f."""

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        cdef Py_ssize_t a
        cdef double gd = 0.0
        cdef bint exact = prob.block_hessian(blk, nb, &self.H[0])
        cdef bint ok = exact or prob.block_hessian_bound(blk, nb, &self.H[0])
        cdef bint solved = False
        for a in range(nb):
            self.d[a] = -gb[a]
        if ok:
            # the Cholesky factor in place (no copy of a large H); where H is
            # not positive definite, H again and the pseudo-inverse
            solved = cholesky_solve_in_place(&self.H[0], &self.d[0], nb, INFINITY, False) == 1
            if not solved:
                if exact:
                    prob.block_hessian(blk, nb, &self.H[0])
                else:
                    prob.block_hessian_bound(blk, nb, &self.H[0])
                solved = spd_solve(self.bw, &self.H[0], &self.d[0], nb) >= 0
        if solved:
            for a in range(nb):
                gd += gb[a] * self.d[a]
        if not gd < 0.0:
            gd = self.steepest(gb, nb)
            if gd == 0.0:
                return 0
        prob.direction_prepare(blk, nb, &self.d[0])
        return self.armijo(prob, gd, 1.0)


#: pairs (s, y) the quasi-Newton update keeps
LBFGS_MEMORY = 10


cdef class CyQuasiNewtonUpdate(CyUpdate):
    """d = -B_b^-1 grad_b f with B_b the limited-memory BFGS model of the
    block Hessian (Nocedal and Wright, algorithm 7.4), and an Armijo line
    search from alpha = 1.

    The model is built from the last ``memory`` steps s and gradient
    changes y of the same block (a different block starts a new model; a
    pair with s.y <= 0 is skipped).  Its initial matrix is gamma I with
    gamma = s.y / y.y for the last pair or, with ``scaled``, gamma diag(L_i)
    with gamma = s.y / (y^T diag(L_i)^-1 y) and L_i the coordinates'
    Lipschitz constants: columns of very different scales then cost no more
    iterations than scaled ones.  Each step costs O(memory |b|) besides the gradient
    and the line search, and no block matrix: for a block of all the
    coordinates of a model with many of them it takes the place of
    Newton's m |b|^2 Hessian.

    With ``newton_after`` > 0, after that many steps on one block the
    update takes Newton steps on it (:class:`CyNewtonUpdate`): on an
    ill-conditioned problem, where the model needs thousands of steps, the
    time lost is then bounded by the budget.
    """
    cdef Py_ssize_t memory, count, head, last_size, newton_after, steps
    cdef bint scaled, has_last
    cdef CyNewtonUpdate newton
    cdef double[:, ::1] S
    cdef double[:, ::1] Y
    cdef double[::1] rho
    cdef double[::1] coef
    cdef double[::1] g_last
    cdef double[::1] s_last
    cdef int[::1] blk_last

    def __init__(self, bint scaled=False, Py_ssize_t memory=LBFGS_MEMORY,
                 Py_ssize_t newton_after=0):
        self.memory = max(1, memory)
        self.scaled = scaled
        self.rho = np.zeros(self.memory)
        self.coef = np.zeros(self.memory)
        self.newton_after = max(0, newton_after)
        if self.newton_after:
            self.newton = CyNewtonUpdate()
        CyUpdate.__init__(self)

    def reserve(self, Py_ssize_t max_block):
        if max_block <= self.reserved:
            return
        CyUpdate.reserve(self, max_block)
        if self.newton is not None:
            self.newton.reserve(max_block)
        self.S = np.zeros((self.memory, max_block))
        self.Y = np.zeros((self.memory, max_block))
        self.g_last = np.zeros(max_block)
        self.s_last = np.zeros(max_block)
        self.blk_last = np.zeros(max_block, dtype=np.int32)
        self.count = self.head = 0
        self.has_last = False

    cdef inline double dinv(self, CyProblem prob, int j) noexcept nogil:
        # the inverse of the initial model's diagonal, before gamma
        cdef double L
        if self.scaled:
            L = prob.lipschitz[j]
            if L > 0.0 and isfinite(1.0 / L):
                return 1.0 / L
        return 1.0

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        cdef Py_ssize_t a, k, slot
        cdef double sy, ss, yy, yhy, gamma = 1.0, c, gd = 0.0
        cdef bint same = self.has_last and nb == self.last_size
        cdef int status
        if same:
            for a in range(nb):
                if blk[a] != self.blk_last[a]:
                    same = False
                    break
        if not same:
            self.count = 0
            self.steps = 0
        elif self.newton_after and self.steps >= self.newton_after:
            # the model has had its budget on this block: Newton steps
            return self.newton.step(prob, block)
        else:
            # the pair of the last step: s (kept) and y = g - g_last
            sy = ss = yy = yhy = 0.0
            for a in range(nb):
                c = gb[a] - self.g_last[a]
                sy += self.s_last[a] * c
                ss += self.s_last[a] * self.s_last[a]
                yy += c * c
                yhy += c * c * self.dinv(prob, blk[a])
            if sy > 1e-12 * sqrt(ss * yy) and yhy > 0.0:
                for a in range(nb):
                    self.Y[self.head, a] = gb[a] - self.g_last[a]
                    self.S[self.head, a] = self.s_last[a]
                self.rho[self.head] = 1.0 / sy
                self.head = (self.head + 1) % self.memory
                if self.count < self.memory:
                    self.count += 1
        if self.count > 0:
            # gamma of the newest pair
            slot = (self.head - 1 + self.memory) % self.memory
            yhy = 0.0
            for a in range(nb):
                yhy += self.Y[slot, a] * self.Y[slot, a] * self.dinv(prob, blk[a])
            gamma = 1.0 / (self.rho[slot] * yhy)
        # the two-loop recursion: d = -H g
        for a in range(nb):
            self.d[a] = gb[a]
        for k in range(self.count):
            slot = (self.head - 1 - k + 2 * self.memory) % self.memory
            c = 0.0
            for a in range(nb):
                c += self.S[slot, a] * self.d[a]
            c *= self.rho[slot]
            self.coef[slot] = c
            for a in range(nb):
                self.d[a] -= c * self.Y[slot, a]
        for a in range(nb):
            self.d[a] *= gamma * self.dinv(prob, blk[a])
        for k in range(self.count - 1, -1, -1):
            slot = (self.head - 1 - k + 2 * self.memory) % self.memory
            c = 0.0
            for a in range(nb):
                c += self.Y[slot, a] * self.d[a]
            c = self.coef[slot] - self.rho[slot] * c
            for a in range(nb):
                self.d[a] += c * self.S[slot, a]
        for a in range(nb):
            self.d[a] = -self.d[a]
            gd += gb[a] * self.d[a]
        if not gd < 0.0:
            # not a descent direction (rounding): start a new model
            self.count = 0
            gd = 0.0
            for a in range(nb):
                self.d[a] = -gb[a] * self.dinv(prob, blk[a])
                gd += gb[a] * self.d[a]
            if not gd < 0.0:
                self.has_last = False
                return STEP_TAKEN
        prob.direction_prepare(blk, nb, &self.d[0])
        status = self.armijo(prob, gd, 1.0)
        if status == STEP_TAKEN:
            for a in range(nb):
                self.s_last[a] = self.accepted * self.d[a]
                self.g_last[a] = gb[a]
                self.blk_last[a] = blk[a]
            self.last_size = nb
            self.has_last = True
            self.steps += 1
        else:
            self.has_last = False
            self.count = 0
        return status


cdef class CyExactUpdate(CyMatrixUpdate):
    """The minimizer of f over the block, for quadratic f: there the block
    Hessian is constant and equal to H_b, so this is the matrix update.  A
    rule that solved the block while choosing it (the greedy
    maximum-improvement rule) hands its solution over instead."""

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        if block.solution != NULL:
            prob.apply(blk, nb, block.solution)
            return 0
        return CyMatrixUpdate.step(self, prob, block)


# ---------------------------------------------------------------- f + g updates

# two-metric projection: a coordinate within this distance of a kink or bound
# that its gradient pushes against is active (the paper's experiments)
cdef double TMP_EPS = 1e-4
# inner coordinate-descent solve of the proximal Newton subproblem
cdef int PN_SWEEPS = 500


cdef class CyPenalizedUpdate(CyUpdate):
    """Updates of f + g with a non-smooth separable g, by a backtracking
    search on alpha over trial steps dx(alpha) of the block.

    A trial is accepted when F(x + dx) - F(x) <= c (g_b . dx + g(x_b + dx) -
    g(x_b)), the decrease predicted by the linearization of f (the
    line search is on alpha, not along a segment, so the active manifold
    can be identified; footnote 22 of the paper).
    """
    cdef double[::1] dx
    cdef double[::1] aux
    cdef int[::1] sigma
    cdef int[::1] widx

    def reserve(self, Py_ssize_t max_block):
        grew = max_block > self.reserved
        CyUpdate.reserve(self, max_block)
        if grew:
            self.dx = np.zeros(max_block)
            self.aux = np.zeros(max_block)
            self.sigma = np.zeros(max_block, dtype=np.int32)
            self.widx = np.zeros(max_block, dtype=np.int32)

    cdef void trial(self, CyProblem prob, const int* blk, Py_ssize_t nb, const double* gb,
                    double alpha) noexcept nogil:
        pass

    cdef int search(self, CyProblem prob, const int* blk, Py_ssize_t nb,
                    const double* gb) noexcept nogil:
        cdef Py_ssize_t a
        cdef int k
        cdef double alpha = 1.0, slope, dpen, df
        cdef bint moved
        for k in range(MAX_BACKTRACKS):
            self.trial(prob, blk, nb, gb, alpha)
            slope = 0.0
            dpen = 0.0
            moved = False
            for a in range(nb):
                if self.dx[a] != 0.0:
                    moved = True
                    slope += gb[a] * self.dx[a]
                    dpen += prob.penalty.delta_value(blk[a], prob.x[blk[a]], self.dx[a])
            if not moved:
                return 0 if k == 0 else 1      # optimal on the block / no progress
            slope += dpen
            if not slope < 0.0:
                return 1
            prob.direction_prepare(blk, nb, &self.dx[0])
            df = prob.direction_delta(1.0) + dpen
            if isfinite(df) and df <= ARMIJO_C * slope:
                prob.direction_commit(1.0)
                self.record(alpha, df, slope)
                return 0
            alpha *= 0.5
        return 1


cdef class CyTwoMetricUpdate(CyPenalizedUpdate):
    """Two-metric projection (Gafni and Bertsekas; Section 6.4).

    Coordinates within TMP_EPS of a bound (or, for L1, of 0) whose gradient
    pushes against it are *active* and take a proximal gradient step
    x_i <- prox(x_i - alpha grad_i f / L_i).  The others form the working
    set W and take a Newton step on the smooth piece they lie on,
    d_W = -(H_WW)^{-1} g~_W with g~ the gradient of f + g there (for L1 the
    sign split of Schmidt 2010), projected back onto that piece.  H is the
    block Hessian (its curvature bound when the problem has none).
    """

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        cdef Py_ssize_t a, b, nw = 0
        cdef double gd = 0.0, p
        cdef double* H = &self.H[0]
        if not prob.block_hessian(blk, nb, H):
            if not prob.block_hessian_bound(blk, nb, H):
                return 1
        for a in range(nb):
            self.sigma[a] = prob.penalty.orthant(blk[a], prob.x[blk[a]], gb[a], TMP_EPS, &p)
            self.aux[a] = p
            if self.sigma[a] != 0:
                self.widx[nw] = <int>a
                nw += 1
        # H_WW, compacted in place (row-major; W is increasing)
        for a in range(nw):
            for b in range(nw):
                H[a * nw + b] = H[self.widx[a] * nb + self.widx[b]]
        for a in range(nw):
            self.d[a] = -self.aux[self.widx[a]]
        if nw > 0 and spd_solve(self.bw, H, &self.d[0], nw) >= 0:
            for a in range(nw):
                gd += self.aux[self.widx[a]] * self.d[a]
        if not gd < 0.0:
            for a in range(nw):
                self.d[a] = -self.aux[self.widx[a]] / prob.lipschitz[blk[self.widx[a]]]
        # spread d_W over the block: aux holds the Newton direction of W, 0 on A
        for a in range(nb):
            self.aux[a] = 0.0
        for a in range(nw):
            self.aux[self.widx[a]] = self.d[a]
        return self.search(prob, blk, nb, gb)

    cdef void trial(self, CyProblem prob, const int* blk, Py_ssize_t nb, const double* gb,
                    double alpha) noexcept nogil:
        cdef Py_ssize_t a
        cdef int i
        cdef double xi, L, y
        for a in range(nb):
            i = blk[a]
            xi = prob.x[i]
            if self.sigma[a] == 0:
                L = prob.lipschitz[i]
                y = prob.penalty.prox(i, xi - alpha * gb[a] / L, alpha / L) if L > 0.0 else xi
            else:
                y = prob.penalty.clip(i, xi + alpha * self.aux[a], self.sigma[a])
            self.dx[a] = y - xi


cdef class CyProxNewtonUpdate(CyPenalizedUpdate):
    """Proximal Newton (eq. 38): minimize over y
    g_b.(y - x_b) + ||y - x_b||^2_H / (2 alpha) + g(y) exactly, with H the
    block Hessian (or its bound), backtracking on alpha.

    The block problem is solved by coordinate descent, which finds the
    smooth piece of g that holds the solution; every few sweeps the
    stationarity equations on that piece are solved directly (Cholesky on
    the free coordinates) and the result is kept if it satisfies the
    block problem's optimality conditions, so the solve is exact rather
    than as accurate as the sweeps happen to get.
    """
    cdef double[::1] trial_x     # polished candidate (nb)
    cdef double[::1] r2          # its H dx
    cdef double[::1] H2          # H_FF (nb^2)
    cdef int[::1] free

    def reserve(self, Py_ssize_t max_block):
        grew = max_block > self.reserved
        CyPenalizedUpdate.reserve(self, max_block)
        if grew:
            self.trial_x = np.zeros(max_block)
            self.r2 = np.zeros(max_block)
            self.H2 = np.zeros(max_block * max_block)
            self.free = np.zeros(max_block, dtype=np.int32)

    cdef double _residual(self, CyProblem prob, const int* blk, Py_ssize_t nb, const double* gb,
                          double alpha, const double* dx, const double* r) noexcept nogil:
        """The block problem's optimality measure at x_b + dx (r = H dx)."""
        cdef Py_ssize_t a
        cdef double m = 0.0
        for a in range(nb):
            m = max(m, prob.penalty.dist(blk[a], prob.x[blk[a]] + dx[a], gb[a] + r[a] / alpha))
        return m

    cdef bint _polish(self, CyProblem prob, const int* blk, Py_ssize_t nb, const double* gb,
                      double alpha, double tol) noexcept nogil:
        """Solve the stationarity equations on the current free set."""
        cdef Py_ssize_t a, b, nf = 0
        cdef double s, v
        cdef double* H = &self.H[0]
        cdef double* H2 = &self.H2[0]
        for a in range(nb):
            if prob.penalty.slope(blk[a], prob.x[blk[a]] + self.dx[a], &s):
                self.free[nf] = <int>a
                self.aux[nf] = s            # slope of g on the piece, kept per free coordinate
                nf += 1
        if nf == 0:
            return False
        # (H_FF / alpha) dx_F = -(g_F + slope_F) - (H_F,rest / alpha) dx_rest
        for a in range(nf):
            v = -(gb[self.free[a]] + self.aux[a])
            for b in range(nb):
                self.trial_x[b] = self.dx[b]
            for b in range(nf):
                self.trial_x[self.free[b]] = 0.0
            for b in range(nb):
                v -= H[self.free[a] * nb + b] * self.trial_x[b] / alpha
            self.r2[a] = v
            for b in range(nf):
                H2[a * nf + b] = H[self.free[a] * nb + self.free[b]] / alpha
        if spd_solve(self.bw, H2, &self.r2[0], nf) < 0:
            return False
        for b in range(nb):
            self.trial_x[b] = self.dx[b]
        for a in range(nf):
            v = self.r2[a]
            # it must stay on the same piece of g
            if not prob.penalty.slope(blk[self.free[a]], prob.x[blk[self.free[a]]] + v, &s) \
                    or s != self.aux[a]:
                return False
            self.trial_x[self.free[a]] = v
        for a in range(nb):
            v = 0.0
            for b in range(nb):
                v += H[a * nb + b] * self.trial_x[b]
            self.r2[a] = v
        if self._residual(prob, blk, nb, gb, alpha, &self.trial_x[0], &self.r2[0]) > tol:
            return False
        for a in range(nb):
            self.dx[a] = self.trial_x[a]
        return True

    cdef void trial(self, CyProblem prob, const int* blk, Py_ssize_t nb, const double* gb,
                    double alpha) noexcept nogil:
        cdef Py_ssize_t a, b
        cdef int i, sweep
        cdef double h, z, y, change, biggest, size, tol = 0.0
        cdef double* H = &self.H[0]
        cdef double* r = &self.aux[0]           # H dx (aux is reused by _polish)
        for a in range(nb):
            self.dx[a] = 0.0
            tol = max(tol, fabs(gb[a]))
        tol *= 1e-13
        for a in range(nb):
            r[a] = 0.0
        for sweep in range(PN_SWEEPS):
            biggest = 0.0
            size = 0.0
            for a in range(nb):
                h = H[a * nb + a] / alpha
                if not h > 0.0:
                    continue
                i = blk[a]
                z = prob.x[i] + self.dx[a] - (gb[a] + r[a] / alpha) / h
                y = prob.penalty.prox(i, z, 1.0 / h)
                change = y - prob.x[i] - self.dx[a]
                if change != 0.0:
                    self.dx[a] += change
                    for b in range(nb):
                        r[b] += H[b * nb + a] * change
                    biggest = max(biggest, fabs(change))
                size = max(size, fabs(prob.x[i] + self.dx[a]))
            if biggest <= 1e-15 * max(size, 1e-300):
                return
            if sweep % 10 == 9:
                # aux is overwritten by the attempt: rebuild r = H dx if it fails
                if self._polish(prob, blk, nb, gb, alpha, tol):
                    return
                for a in range(nb):
                    r[a] = 0.0
                    for b in range(nb):
                        r[a] += H[a * nb + b] * self.dx[b]

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        if not prob.block_hessian(blk, nb, &self.H[0]):
            if not prob.block_hessian_bound(blk, nb, &self.H[0]):
                return 1
        return self.search(prob, blk, nb, gb)


# homotopy: a coordinate whose pivot in the Cholesky factor of H_AA (the
# Schur complement H_jj - H_jA (H_AA)^-1 H_Aj) is below this fraction of
# H_jj is taken as a combination of the active ones and does not join A:
# that pivot is rounding, ~1e-15, for an exact combination (duplicate or
# summed columns), whatever the conditioning of H_AA
cdef double HOMOTOPY_DEPENDENT = 1e-13
# ... and below which the path gives up (a coordinate that must join: one
# without a penalty weight, or a free one of a box)
cdef double HOMOTOPY_SINGULAR = 1e-14


cdef class CyHomotopyUpdate(CyPenalizedUpdate):
    """The exact block minimizer of a quadratic f plus an L1 penalty
    (optionally with x >= 0) or box constraints, by homotopy (Section 6.5).

    With y = x_b + d the block problem is min_y y'Hy/2 + q'y + sum lam_i |y_i|
    (q = grad_b f - H x_b).  Scaling the weights by t, its solution is
    piecewise linear in t and 0 for t >= max |q_i| / lam_i; the path is
    followed down to t = 1 as in LARS (Osborne et al.; Efron et al.):
    between breakpoints y_A(t) = -(H_AA)^{-1} (q_A + t lam_A s_A) on the
    active set A with signs s, and a breakpoint is where a coordinate of A
    reaches 0 (it leaves) or one outside reaches |c_j| = t lam_j with
    c = Hy + q (it enters).  The Cholesky factor of H_AA is updated by
    bordering when a coordinate enters and by Givens rotations when one
    leaves: O(|b|^2) per breakpoint besides the O(|b| |A|) event scan.
    Correlated columns are allowed: breakpoints that coincide are taken one
    after the other, and a coordinate whose column is a combination of the
    active ones (a duplicate, a sum) stays at 0.

    For a box, the path is in the linear term instead:
    q(t) = -H x_b + t grad_b f, so that x_b is the (unconstrained) solution
    at t = 0 and the block problem's at t = 1.  With F the coordinates
    strictly inside and the others held at a bound, y_F(t) is linear
    between breakpoints, where a coordinate of F reaches a bound or the
    multiplier (Hy + q(t))_j of a held coordinate changes sign.
    """
    cdef double[::1] R          # the Cholesky factor of H_AA, leading dimension = reserved
    cdef double[::1] u, v, q, lam, y, w, lo, hi
    cdef int[::1] act, pos
    cdef signed char[::1] sgn
    cdef Py_ssize_t ld

    def reserve(self, Py_ssize_t max_block):
        grew = max_block > self.reserved
        CyPenalizedUpdate.reserve(self, max_block)
        if grew:
            self.ld = max_block
            self.R = np.zeros(max_block * max_block)
            self.u = np.zeros(max_block)
            self.v = np.zeros(max_block)
            self.q = np.zeros(max_block)
            self.lam = np.zeros(max_block)
            self.y = np.zeros(max_block)
            self.w = np.zeros(max_block)
            self.lo = np.zeros(max_block)
            self.hi = np.zeros(max_block)
            self.act = np.zeros(max_block, dtype=np.int32)
            self.pos = np.zeros(max_block, dtype=np.int32)
            self.sgn = np.zeros(max_block, dtype=np.int8)

    cdef bint _enter(self, const double* H, Py_ssize_t nb, Py_ssize_t na, int j,
                     double tiny) noexcept nogil:
        """Border the factor of H_AA with coordinate j (the new last of A);
        False if H_jj - H_jA (H_AA)^-1 H_Aj is not above tiny * H_jj."""
        cdef Py_ssize_t a
        for a in range(na):
            self.w[a] = H[self.act[a] * nb + j]
        if not chol_append(&self.R[0], self.ld, na, &self.w[0], H[j * nb + j], tiny):
            return False
        self.act[na] = j
        self.pos[j] = <int>na
        return True

    cdef void _leave(self, Py_ssize_t na, Py_ssize_t k) noexcept nogil:
        """Remove position k of A from the factor; those after it move up."""
        cdef Py_ssize_t a
        chol_remove(&self.R[0], self.ld, na, k)
        for a in range(k, na - 1):
            self.act[a] = self.act[a + 1]
            self.pos[self.act[a]] = <int>a

    cdef int _path(self, CyProblem prob, const int* blk, Py_ssize_t nb, const double* gb) noexcept nogil:
        cdef Py_ssize_t a, b, na = 0, step, k_leave
        cdef int j, j_enter, last = -1
        cdef double t = INFINITY, t_next, cand, alpha_j, beta_j, s_enter, s_last = 0.0
        cdef double* H = &self.H[0]
        cdef double* R = &self.R[0]
        cdef Py_ssize_t ld = self.ld
        cdef bint positive = False, pos_a
        cdef double lam_a
        for a in range(nb):
            if not prob.penalty.l1_weight(blk[a], &lam_a, &pos_a):
                return -1
            self.lam[a] = lam_a
            positive = pos_a
            self.q[a] = gb[a]
            for b in range(nb):
                self.q[a] -= H[a * nb + b] * prob.x[blk[b]]
            self.pos[a] = -1
            self.sgn[a] = 0
        # unpenalized coordinates are active along the whole path
        for a in range(nb):
            if self.lam[a] == 0.0:
                if not self._enter(H, nb, na, <int>a, HOMOTOPY_SINGULAR):
                    return -1
                na += 1
        # Events are told apart by the direction the path moves in, not by
        # their t: an active y_j leaves only if s_j y_j decreases with t, and
        # an inactive j enters with sign s only if its gap to the kink,
        # t lam_j + s c_j(t), closes as t decreases.  A breakpoint found
        # overdue by rounding is taken at the current t, so coordinates
        # that reach a kink together enter one after the other at that t
        # instead of all but one being skipped.  At the breakpoint after
        # the one that changed coordinate `last`, a `last` that entered
        # does not leave and one that left does not re-enter with the sign
        # it had (it may with the other): in exact arithmetic neither
        # happens before the active set changes again, and near a tangency
        # rounding can flip the sign of its slope.
        for step in range(20 * nb + 50):
            # y_A(t) = u + t v
            for a in range(na):
                self.u[a] = -self.q[self.act[a]]
                self.v[a] = -self.lam[self.act[a]] * self.sgn[self.act[a]]
            chol_solve(R, ld, na, &self.u[0])
            chol_solve(R, ld, na, &self.v[0])
            t_next = 1.0
            k_leave = -1
            j_enter = -1
            s_enter = 0.0
            for a in range(na):
                j = self.act[a]
                if j != last and self.lam[j] > 0.0 and self.sgn[j] * self.v[a] > 0.0:
                    cand = fmin(-self.u[a] / self.v[a], t)
                    if cand > t_next:
                        t_next = cand
                        k_leave = a
            for j in range(<int>nb):
                if self.pos[j] != -1 or not self.lam[j] > 0.0:
                    continue
                alpha_j = self.q[j]
                beta_j = 0.0
                for b in range(na):
                    alpha_j += H[j * nb + self.act[b]] * self.u[b]
                    beta_j += H[j * nb + self.act[b]] * self.v[b]
                # c_j(t) = alpha_j + t beta_j reaches -t lam_j (j enters with s = +1)
                if self.lam[j] + beta_j > 0.0 and not (j == last and s_last > 0.0):
                    cand = fmin(-alpha_j / (self.lam[j] + beta_j), t)
                    if cand > t_next:
                        t_next, j_enter, s_enter, k_leave = cand, j, 1.0, -1
                # ... or +t lam_j (s = -1), not allowed with x >= 0
                if not positive and self.lam[j] - beta_j > 0.0 and \
                        not (j == last and s_last < 0.0):
                    cand = fmin(alpha_j / (self.lam[j] - beta_j), t)
                    if cand > t_next:
                        t_next, j_enter, s_enter, k_leave = cand, j, -1.0, -1
            if k_leave < 0 and j_enter < 0:
                break                              # no breakpoint above t = 1
            t = t_next
            if j_enter >= 0:
                if not self._enter(H, nb, na, j_enter, HOMOTOPY_DEPENDENT):
                    # j's column is (numerically) a combination of the
                    # active ones, which hold c_j at the kink: j stays at
                    # 0 until the active set shrinks
                    self.pos[j_enter] = -2
                    continue
                self.sgn[j_enter] = <signed char>s_enter
                na += 1
                last = j_enter
                s_last = 0.0
            else:
                last = self.act[k_leave]
                s_last = self.sgn[last]
                self.pos[last] = -1
                self.sgn[last] = 0
                self._leave(na, k_leave)
                na -= 1
                for j in range(<int>nb):
                    if self.pos[j] == -2:
                        self.pos[j] = -1
        else:
            return -1                              # did not reach t = 1
        # the solution at t = 1 (a sign that rounding flipped is a 0)
        for a in range(nb):
            self.y[a] = 0.0
        for a in range(na):
            j = self.act[a]
            cand = self.u[a] + self.v[a]
            if self.sgn[j] * cand >= 0.0:
                self.y[j] = cand
        return 0

    cdef int _box_path(self, CyProblem prob, const int* blk, Py_ssize_t nb,
                       const double* gb) noexcept nogil:
        cdef Py_ssize_t a, b, na = 0, step, k_fix
        cdef int j, j_free
        cdef double t = 0.0, t_next, cand, alpha_j, beta_j, lo, up, bound_fix = 0.0
        cdef double t_last = -1.0
        cdef int last = -1
        cdef double* H = &self.H[0]
        cdef double* R = &self.R[0]
        cdef Py_ssize_t ld = self.ld
        # lo, hi: the bounds; q: H x_b = -q0
        for a in range(nb):
            if not prob.penalty.box_bounds(blk[a], &lo, &up):
                return -1
            self.lo[a] = lo
            self.hi[a] = up
            self.y[a] = prob.x[blk[a]]
            self.q[a] = 0.0
            for b in range(nb):
                self.q[a] += H[a * nb + b] * prob.x[blk[b]]
            self.pos[a] = -1
        for a in range(nb):
            if not self._enter(H, nb, na, <int>a, HOMOTOPY_SINGULAR):
                return -1
            na += 1
        for step in range(20 * nb + 50):
            # y_F(t) = u + t v with u = M (H x_b - H_FB y_B)_F, v = -M grad_F
            for b in range(na):
                # (H x_b - H_FB y_B) at the b-th free coordinate, kept in dx
                cand = self.q[self.act[b]]
                for j in range(<int>nb):
                    if self.pos[j] < 0:
                        cand -= H[self.act[b] * nb + j] * self.y[j]
                self.dx[b] = cand
            for a in range(na):
                self.u[a] = self.dx[a]
                self.v[a] = -gb[self.act[a]]
            chol_solve(R, ld, na, &self.u[0])
            chol_solve(R, ld, na, &self.v[0])
            t_next = 1.0
            k_fix = -1
            j_free = -1
            for a in range(na):
                j = self.act[a]
                if j == last and t == t_last:
                    continue                             # just freed at this t
                if self.v[a] < 0.0 and self.lo[j] > -INFINITY:
                    cand = (self.lo[j] - self.u[a]) / self.v[a]
                    if t - 1e-12 <= cand < t_next:
                        t_next, k_fix, bound_fix, j_free = cand, a, self.lo[j], -1
                elif self.v[a] > 0.0 and self.hi[j] < INFINITY:
                    cand = (self.hi[j] - self.u[a]) / self.v[a]
                    if t - 1e-12 <= cand < t_next:
                        t_next, k_fix, bound_fix, j_free = cand, a, self.hi[j], -1
            for j in range(<int>nb):
                if self.pos[j] >= 0:
                    continue
                # multiplier mu_j(t) = alpha_j + t beta_j of a held coordinate
                alpha_j = -self.q[j]
                beta_j = gb[j]
                for b in range(<int>nb):
                    if self.pos[b] < 0:
                        alpha_j += H[j * nb + b] * self.y[b]
                for a in range(na):
                    alpha_j += H[j * nb + self.act[a]] * self.u[a]
                    beta_j += H[j * nb + self.act[a]] * self.v[a]
                # held at its lower bound while mu >= 0, at its upper while mu <= 0
                # (a coordinate just fixed is not freed again at the same t)
                if ((self.y[j] <= self.lo[j] and beta_j < 0.0) or
                        (self.y[j] >= self.hi[j] and beta_j > 0.0)) and \
                        not (j == last and t == t_last):
                    cand = max(-alpha_j / beta_j, t)
                    if cand < t_next or (cand == t and t_next == t and k_fix < 0 and j_free < 0):
                        t_next, j_free, k_fix = cand, j, -1
            if k_fix < 0 and j_free < 0:
                break
            t = t_next
            t_last = t
            if k_fix >= 0:
                j = self.act[k_fix]
                last = j
                self.pos[j] = -1
                self.y[j] = bound_fix
                self._leave(na, k_fix)
                na -= 1
            else:
                last = j_free
                if not self._enter(H, nb, na, j_free, HOMOTOPY_SINGULAR):
                    return -1
                na += 1
        else:
            return -1
        for a in range(na):
            self.y[self.act[a]] = self.u[a] + self.v[a]
        for a in range(nb):
            self.y[a] = fmin(fmax(self.y[a], self.lo[a]), self.hi[a])
        return 0

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        cdef double lam_a, lo, up
        cdef bint pos_a
        if not prob.block_hessian(blk, nb, &self.H[0]):
            return 1
        if prob.penalty.l1_weight(blk[0], &lam_a, &pos_a):
            if self._path(prob, blk, nb, gb) != 0:
                return 1
        elif self._box_path(prob, blk, nb, gb) != 0:
            return 1
        return self.search(prob, blk, nb, gb)

    cdef void trial(self, CyProblem prob, const int* blk, Py_ssize_t nb, const double* gb,
                    double alpha) noexcept nogil:
        cdef Py_ssize_t a
        for a in range(nb):
            self.dx[a] = alpha * (self.y[a] - prob.x[blk[a]])
