"""The log marginal likelihood without the n x n matrix: preconditioned
conjugate gradients, stochastic Lanczos quadrature and Hutchinson estimates.

For C = K + noise I,

    log p(y) = -1/2 y^T C^-1 y - 1/2 log det C - n/2 log(2 pi),
    d log p / d theta_p = 1/2 alpha^T dC_p alpha - 1/2 tr(C^-1 dC_p).

Everything comes from one block of conjugate-gradient systems C V = [y, Z]
whose kernel products are computed on the fly (one pass over the kernel per
iteration serves every column):

* the preconditioner is P = L L^T + noise I, L the rank-r partial pivoted
  Cholesky factor of K (r kernel columns); P^-1 and log det P follow from
  the Woodbury identity and det(I + L^T L / noise);
* the probes are z = L e + sqrt(noise) f for standard normal e, f, so that
  z ~ N(0, P), and E[z^T P^-1 A z] = tr(A);
* log det C = log det P + tr log(P^-1/2 C P^-1/2).  Conjugate gradients
  preconditioned by P on C v = z run the Lanczos process of P^-1/2 C P^-1/2
  from P^-1/2 z; the tridiagonal matrix T built from the CG coefficients
  gives z^T P^-1 z e_1^T log(T) e_1, whose mean over the probes estimates
  the trace (stochastic Lanczos quadrature; Ubaru, Chen and Saad 2017);
* tr(C^-1 dC_p) = E[(P^-1 z)^T dC_p (C^-1 z)] (Hutchinson's estimator, with
  the solves of the same block), contracted with the kernel's derivatives
  in one pass (:meth:`bcd.gp.kernels.Kernel.gradient`).

The probes are drawn from a fixed seed, so the estimate is a deterministic,
smooth function of theta that L-BFGS-B can follow; the better the
preconditioner, the closer P^-1/2 C P^-1/2 is to the identity and the
smaller the estimates' spread.  O(n (r + probes)) memory and, per
evaluation, one kernel pass per CG iteration.
"""
import math

import numpy as np
import scipy.linalg

from .._variance import pivoted_cholesky

#: rank of the pivoted Cholesky preconditioner (at most n).  On Friedman1
#: at n = 10,000 (squared exponential, 10 features), rank 1,000 against 200
#: cut the conjugate-gradient iterations of one evaluation from 64 to 6 at
#: the learned hyperparameters (from 78 to 51 at the initial ones), and an
#: evaluation's time from 5.5 s to 2.5 s (9.2 s to 7.9 s); the estimate
#: moved by 20 towards the value of a full-rank preconditioner
RANK = 1000
#: number of probe vectors of the trace estimates.  The gradient's
#: Hutchinson estimate keeps its spread however good the preconditioner
#: (the value's does not), and on a flat ridge of the likelihood that spread
#: moves the optimum: on three 300-point problems the learned
#: hyperparameters lost 4e-4 to 1.1e-3 of the exact optimum's log
#: likelihood with 16 probes, 2e-5 to 3.5e-4 with 32.  32 probes cost 1.33
#: times 16's per kernel product (n = 16,384)
PROBES = 32
#: relative residual ||C v - b||_2 / ||b||_2 at which a column stops: the
#: data term's solve, and the probes' (their error is far below the
#: estimates' spread at this accuracy)
Y_RTOL = 1e-7
PROBE_RTOL = 1e-3
#: largest number of conjugate-gradient iterations per evaluation
MAX_CG = 1000
#: the probes' seed: the same probes at every evaluation of one fit
PROBE_SEED = 20170413


class Preconditioner:
    """P = L L^T + noise I: ``solve`` (P^-1 B), ``logdet`` and ``sample``
    (columns distributed as N(0, P))."""

    def __init__(self, L, noise):
        self.L, self.noise = L, float(noise)
        r = L.shape[1]
        inner = np.eye(r) + (L.T @ L) / self.noise
        self.chol = scipy.linalg.cho_factor(inner, lower=True, check_finite=False)
        self.logdet = (2.0 * float(np.sum(np.log(np.diag(self.chol[0]))))
                       + L.shape[0] * math.log(self.noise))

    def solve(self, B):
        # (L L^T + s I)^-1 = (I - L (s I + L^T L)^-1 L^T) / s
        LtB = self.L.T @ B
        inner = scipy.linalg.cho_solve(self.chol, LtB, check_finite=False) / self.noise
        return (B - self.L @ inner) / self.noise

    def sample(self, rng, k):
        n, r = self.L.shape
        e = rng.standard_normal((r, k))
        f = rng.standard_normal((n, k))
        return self.L @ e + math.sqrt(self.noise) * f


#: rows of one panel of :class:`LowerKernel`
PANEL = 1024


def stored_bytes(n, panel=PANEL):
    """Memory of :class:`LowerKernel` for n samples."""
    return 8.0 * sum(min(panel, n - s) * min(s + panel, n) for s in range(0, n, panel))


class LowerKernel:
    """The kernel matrix of X kept as its lower block triangle: panel i holds
    the rows s_i:e_i and the columns 0:e_i (the block diagonal included), so
    that half of K's 8 n^2 bytes suffice.  ``matmul(V)`` = K @ V, each stored
    block used twice while it is in cache (for its rows, and transposed for
    the mirror block).  ``control`` is checked before each panel."""

    def __init__(self, kernel, X, n_threads=None, panel=PANEL, control=None):
        n = X.shape[0]
        self.n = n
        self.bounds = [(s, min(s + panel, n)) for s in range(0, n, panel)]
        # F-ordered (rows, e): block j of panel i is a contiguous column range
        self.panels = []
        for s, e in self.bounds:
            if control is not None:
                control.check()
            self.panels.append(kernel.evaluator(X[s:e], X[:e], n_threads=n_threads).matrix())

    @property
    def nbytes(self):
        return sum(P.nbytes for P in self.panels)

    def matmul(self, V):
        out = np.zeros((self.n, V.shape[1]))
        for (s, e), P in zip(self.bounds, self.panels):
            out[s:e] += P[:, s:e] @ V[s:e]
            for s2, e2 in self.bounds:
                if s2 >= s:
                    break
                block = P[:, s2:e2]
                out[s:e] += block @ V[s2:e2]
                out[s2:e2] += block.T @ V[s:e]
        return out


def block_pcg(matmul, precond, B, rtol, max_iter, control=None):
    """Preconditioned conjugate gradients on the columns of B together
    (``matmul(P)`` = C @ P for a block; ``precond(R)`` = P^-1 R).  Column j
    stops when ||r_j||_2 <= rtol[j] ||b_j||_2.

    Returns (X, rz0, coefficients, iterations): rz0[j] = b_j^T P^-1 b_j and,
    per column, the lists of CG step lengths a_k and ratios b_k from which
    the Lanczos tridiagonal matrix is built."""
    n, k = B.shape
    X = np.zeros_like(B)
    R = B.copy()
    Z = precond(R)
    P = Z.copy()
    rz = np.einsum("ij,ij->j", R, Z)
    rz0 = rz.copy()
    stop = rtol * np.linalg.norm(B, axis=0)
    steps = [[] for _ in range(k)]
    ratios = [[] for _ in range(k)]
    active = np.linalg.norm(R, axis=0) > stop
    it = 0
    while active.any() and it < max_iter:
        if control is not None:
            control.check()
        idx = np.flatnonzero(active)
        Pa = P[:, idx]
        AP = matmul(Pa)
        a = rz[idx] / np.einsum("ij,ij->j", Pa, AP)
        X[:, idx] += a * Pa
        R[:, idx] -= a * AP
        Za = precond(R[:, idx])
        rz_new = np.einsum("ij,ij->j", R[:, idx], Za)
        b = rz_new / rz[idx]
        P[:, idx] = Za + b * Pa
        rz[idx] = rz_new
        for c, j in enumerate(idx):
            steps[j].append(a[c])
            ratios[j].append(b[c])
        active[idx] = np.linalg.norm(R[:, idx], axis=0) > stop[idx]
        it += 1
    return X, rz0, (steps, ratios), it, ~active


def lanczos_log_quadrature(steps, ratios):
    """e_1^T log(T) e_1 for the Lanczos tridiagonal T of a CG run with step
    lengths a_k and ratios b_k:
    T_kk = 1/a_k + b_{k-1}/a_{k-1}, T_{k,k+1} = sqrt(b_k)/a_k."""
    a = np.asarray(steps, dtype=np.float64)
    b = np.asarray(ratios, dtype=np.float64)
    m = a.shape[0]
    if m == 0:
        return 0.0
    d = 1.0 / a
    d[1:] += b[:-1] / a[:-1]
    e = np.sqrt(b[:-1]) / a[:-1]
    w, V = scipy.linalg.eigh_tridiagonal(d, e)
    return float(np.sum(V[0] ** 2 * np.log(np.maximum(w, 1e-300))))


def log_marginal_likelihood_iterative(space, theta, X, y, eval_gradient=True, n_threads=None,
                                      control=None, return_alpha=False, rank=None,
                                      probes=PROBES, y_rtol=Y_RTOL, max_iter=MAX_CG,
                                      seed=PROBE_SEED, store=False):
    """Estimate of log p(y | X, theta) and of its gradient (see the module's
    text), in O(n (rank + probes)) memory.  Same returns as
    :func:`bcd.gp.hyper.ml.log_marginal_likelihood`; with ``return_alpha``
    the third item is alpha = C^-1 y (to ``y_rtol``).  Raises
    :class:`~.common.Stopped` when ``control`` says stop.

    With ``store`` the kernel matrix is computed once and kept as its lower
    block triangle (:class:`LowerKernel`, about 4 n^2 bytes), so that each
    iteration is a matrix product rather than a pass that evaluates the
    kernel again."""
    kernel, noise = space.unpack(theta)
    n = X.shape[0]
    ev = kernel.evaluator(X, n_threads=n_threads)
    L = pivoted_cholesky(kernel, X, ev.diagonal(), RANK if rank is None else rank,
                         n_threads=n_threads, tol=1e-6 * noise * n, control=control)[0]
    pre = Preconditioner(L, noise)
    rng = np.random.default_rng(seed)
    Z = pre.sample(rng, probes)
    B = np.empty((n, probes + 1))
    B[:, 0] = y
    B[:, 1:] = Z
    rtol = np.full(probes + 1, PROBE_RTOL)
    rtol[0] = y_rtol

    if store:
        K = LowerKernel(kernel, X, n_threads, control=control)

        def matmul(V):
            return K.matmul(V) + noise * V
    else:
        def matmul(V):
            return ev.matmat(np.ascontiguousarray(V)) + noise * V

    V, rz0, (steps, ratios), _, converged = block_pcg(matmul, pre.solve, B, rtol, max_iter,
                                                      control)
    failed = (-np.inf, np.zeros(space.size)) + ((None,) if return_alpha else ())
    if not np.all(np.isfinite(V)) or not converged[0]:
        return failed
    alpha = V[:, 0]
    quad = [rz0[j + 1] * lanczos_log_quadrature(steps[j + 1], ratios[j + 1])
            for j in range(probes)]
    logdet = pre.logdet + float(np.mean(quad))
    lml = -0.5 * float(y @ alpha) - 0.5 * logdet - 0.5 * n * math.log(2 * math.pi)
    if not np.isfinite(lml):
        return failed
    if not eval_gradient:
        return (lml, None, alpha) if return_alpha else (lml, None)
    # 1/2 alpha^T dC alpha - 1/2 mean_j (P^-1 z_j)^T dC (C^-1 z_j)
    W = pre.solve(Z)
    U = np.empty((n, probes + 1))
    U[:, 0] = 0.5 * alpha
    U[:, 1:] = (-0.5 / probes) * W
    grad = np.empty(space.size)
    if space.n_kernel:
        grad[:space.n_kernel] = kernel.gradient(X, n_threads=n_threads).low_rank(U, V)
    if space.learn_noise:
        # dC / dlog(noise) = noise I
        grad[-1] = noise * float(np.einsum("ij,ij->", U, V))
    return (lml, grad, alpha) if return_alpha else (lml, grad)


#: the estimates' optimizer stops when an iteration lowers the objective by
#: less than this fraction of its size, or after this many iterations
FTOL = 1e-6
MAX_ITER = 100


def gradient_lbfgs(fun, theta0, bounds, max_iter=MAX_ITER, control=None, report=None,
                   ftol=FTOL, memory=10):
    """Minimize with L-BFGS within box bounds, trusting the gradients only.

    The estimated objective and its estimated gradient need not agree
    exactly (the gradient is not the derivative of the estimate), and a
    line search that compares values then fails.  Here the objective along
    a step is the integral of the directional derivative (the trapezoidal
    rule of its two ends), which agrees with the gradients by construction;
    steps satisfy the Armijo and the weak Wolfe conditions of that
    integral.  Stops when an iteration lowers it by less than ``ftol``
    times the estimated objective's size (converged), or after ``max_iter``
    iterations.  ``fun(theta)`` returns (value, gradient[, extra]); same
    results as :func:`.common.lbfgs`."""
    from .common import Stopped

    low, high = bounds[:, 0], bounds[:, 1]
    history = []
    state = dict(nfev=0)

    def call(x):
        if control is not None:
            control.check()
        value, grad, *extra = fun(x)
        state["nfev"] += 1
        ok = np.isfinite(value) and np.all(np.isfinite(grad))
        return ok, value, np.asarray(grad, dtype=np.float64), (extra[0] if extra else None)

    def free(x, g):
        # components held at a bound by a gradient pushing outward
        return ~(((x <= low) & (g > 0)) | ((x >= high) & (g < 0)))

    x = np.clip(np.asarray(theta0, dtype=np.float64), low, high)
    best = dict(x=x, value=np.inf, extra=None)
    S, Y = [], []
    message, success, stopped, nit = "the iteration limit was reached", False, None, 0
    try:
        ok, value, g, extra = call(x)
        if not ok:
            raise FloatingPointError
        best.update(value=value, extra=extra)
        level = 0.0         # the integrated objective, relative to the start
        for nit in range(1, max_iter + 1):
            mask = free(x, g)
            pg = np.where(mask, g, 0.0)
            if not np.any(pg):
                message, success = "the projected gradient is zero", True
                break
            # two-loop recursion on the free components
            q = pg.copy()
            coeffs = []
            for s, y in zip(reversed(S), reversed(Y)):
                rho = 1.0 / float(y @ s)
                a = rho * float(s @ q)
                q -= a * y
                coeffs.append((rho, a))
            if S:
                q *= float(S[-1] @ Y[-1]) / float(Y[-1] @ Y[-1])
            else:
                q /= max(1.0, float(np.max(np.abs(pg))))
            for (s, y), (rho, a) in zip(zip(S, Y), reversed(coeffs)):
                q += (a - rho * float(y @ q)) * s
            d = np.where(mask, -q, 0.0)
            slope0 = float(g @ d)
            if slope0 >= 0.0:
                S, Y = [], []
                d = -pg / max(1.0, float(np.max(np.abs(pg))))
                slope0 = float(g @ d)
            # the longest step within the bounds
            with np.errstate(divide="ignore", invalid="ignore"):
                reach = np.where(d > 0, (high - x) / d, np.where(d < 0, (low - x) / d, np.inf))
            step_max = float(np.min(reach))
            step, lo, hi = min(1.0, step_max), 0.0, math.inf
            accepted = None
            for _ in range(20):
                xs = np.clip(x + step * d, low, high)
                ok, vs, gs, es = call(xs)
                if not ok:
                    hi = step
                    step = 0.5 * (lo + step)
                    continue
                slope = float(gs @ d)
                change = 0.5 * step * (slope0 + slope)
                if change > 1e-4 * step * slope0:           # too long: the slope turned
                    hi = step
                elif slope < 0.9 * slope0 and step < step_max:  # too short: still steep
                    lo = step
                    accepted = (xs, vs, gs, es, change)
                else:
                    accepted = (xs, vs, gs, es, change)
                    break
                if hi < math.inf:
                    # the zero of the slope's secant, kept inside (lo, hi)
                    guess = step * slope0 / (slope0 - slope) if slope != slope0 else 0.5 * step
                    step = min(max(guess, lo + 0.1 * (hi - lo)), hi - 0.1 * (hi - lo))
                else:
                    step = min(2.0 * step, step_max)
            if accepted is None:
                message, success = "no step lowers the objective", True
                break
            xs, vs, gs, es, change = accepted
            s_vec, y_vec = xs - x, gs - g
            if float(s_vec @ y_vec) > 1e-12 * float(s_vec @ s_vec):
                S.append(s_vec)
                Y.append(y_vec)
                if len(S) > memory:
                    S.pop(0)
                    Y.pop(0)
            x, value, g = xs, vs, gs
            level += change
            best.update(x=x, value=value, extra=es)
            history.append(value)
            if report is not None:
                report(nit, value, x)
            if -change <= ftol * max(1.0, abs(value)):
                message, success = "the objective changes less than ftol", True
                break
    except Stopped as stop:
        message, success, stopped = f"stopped ({stop.reason})", False, stop.reason
    except FloatingPointError:
        message, success = "the objective is not finite at the start", False
    import scipy.optimize
    res = scipy.optimize.OptimizeResult(x=best["x"], fun=best["value"], success=success,
                                        nit=len(history), nfev=state["nfev"], message=message,
                                        stopped=stopped, extra=best["extra"])
    return res, history
