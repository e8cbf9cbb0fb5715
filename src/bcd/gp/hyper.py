"""Hyperparameter learning for Gaussian process regression.

Two optimizers, used by :class:`bcd.gp.GPRegressor`:

* ``"ml"``: the log marginal likelihood maximised by L-BFGS-B on the
  log-parameters, with its analytic gradient; exact, by a dense Cholesky
  factorization (O(n^3) time, O(n^2) memory: the reference, for n up to about
  10,000).
* ``"cv"``: the cross-validation error minimized by L-BFGS-B with its exact
  gradient: per fold and evaluation, z = C_T^-1 y_T and the adjoint
  w = C_T^-1 K_TV (K_VT z - y_V) by GBCD solves warm-started at the previous
  evaluation's, and one gradient contraction (O(n n_t) time per GBCD pass,
  O(n) memory per fold).
* ``"cv_admm"``: cross-validation by the non-linearly constrained ADMM of
  Xu, Yin, Zhang, Luo and Cui (hold-out, and K-fold in the naive and the
  consensus form).  Every step uses kernel products evaluated on the fly and
  gradient contractions (:meth:`bcd.gp.kernels.Kernel.gradient`): O(n n_t)
  time per iteration and O(n) memory per fold.

The folds, the restarts and the candidates run as tasks on an executor: a
local thread pool (the compiled kernels release the GIL) or a
``dask.distributed.Client``.  Everything sent to a task pickles.
"""
import copy
import math
import os
import warnings
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import scipy.linalg
import scipy.optimize

from .._progress import make_progress
from ._kernel import max_threads
from .kernels import check_bounds

OPTIMIZERS = (None, "ml", "cv", "cv_admm")
CV_SCHEMES = ("naive", "consensus")

#: the paper's constants: augmented Lagrangian parameter, initial multipliers,
#: tolerance on ||theta_{k+1} - theta_k||_2, iteration limit
ADMM_DEFAULTS = dict(rho=5.0, lambda0=1.0, epsilon=1e-2, max_iter=100,
                     # at most this many projected gradient steps (Armijo
                     # backtracking, Barzilai-Borwein first trial) per
                     # theta-step: the theta-subproblem (11a) is solved
                     # approximately, as the paper's convergence argument
                     # assumes, not by a single step
                     theta_steps=10,
                     # the theta-step ends early when its projected gradient
                     # falls below this fraction of the first one
                     theta_tol=1e-2,
                     # at most this many conjugate-gradient steps per z-step,
                     # which ends early when the gradient of the quadratic
                     # falls below z_tol times its first value
                     z_steps=20, z_tol=1e-3,
                     # stop only when, besides ||delta theta|| < epsilon, the
                     # tracked validation error changed by less than
                     # merit_tol (relative) and the constraint residual
                     # ||C z - y_T|| / ||y_T|| is below feasibility_tol
                     merit_tol=1e-3, feasibility_tol=1e-2,
                     # standard deviation of the perturbation of log theta0
                     # from which z0 = C(theta0 + e)^-1 y_T is computed
                     perturbation=0.1,
                     # tolerance of the exact solves (z0, the final CV error),
                     # relative to max |y|
                     solve_tol=1e-3,
                     # Armijo's sufficient-decrease constant
                     armijo=1e-4,
                     # residual balancing of rho (Boyd et al. 2011, 3.4.1):
                     # after each iteration rho *= rho_tau when the primal
                     # residual exceeds rho_mu times the dual one, rho /=
                     # rho_tau in the opposite case; False keeps the paper's
                     # fixed rho
                     rho_update=True, rho_mu=10.0, rho_tau=2.0)

#: balanced rho stays within [rho / RHO_RANGE, rho * RHO_RANGE] of its start
RHO_RANGE = 1e4


def balance_rho(rho, primal, dual, opts, rho0):
    """Residual balancing (Boyd et al. 2011, section 3.4.1): rho times
    ``rho_tau`` when the primal residual exceeds ``rho_mu`` times the dual
    residual, divided by it in the opposite case, else unchanged; kept
    within a factor RHO_RANGE of the starting rho0."""
    mu, tau = float(opts["rho_mu"]), float(opts["rho_tau"])
    if primal > mu * dual:
        rho = rho * tau
    elif dual > mu * primal:
        rho = rho / tau
    return float(min(max(rho, rho0 / RHO_RANGE), rho0 * RHO_RANGE))


def convergence_warning():
    """scikit-learn's ConvergenceWarning when installed, else bcd's."""
    try:
        from sklearn.exceptions import ConvergenceWarning
    except ImportError:          # pragma: no cover - scikit-learn is optional
        from .._result import ConvergenceWarning
    return ConvergenceWarning


# ------------------------------------------------------------------ parameters

class Space:
    """The learnable parameters of a kernel and a noise variance, as one
    vector theta of logarithms: the kernel's :attr:`~Kernel.theta`, then
    log(noise) unless the noise is fixed."""

    def __init__(self, kernel, noise, noise_bounds):
        self.kernel = copy.deepcopy(kernel)
        self.noise = float(noise)
        self.noise_bounds = check_bounds(noise_bounds, "noise_bounds", "GPRegressor")
        self.learn_noise = not isinstance(noise_bounds, str)
        self.n_kernel = self.kernel.theta.shape[0]
        bounds = [self.kernel.bounds]
        if self.learn_noise:
            bounds.append(np.log(np.asarray(noise_bounds, dtype=np.float64))[None, :])
        self.bounds = np.vstack(bounds) if bounds else np.zeros((0, 2))
        self.names = []
        for h in self.kernel.hyperparameters:
            if not h.fixed:
                self.names += ([h.name] if h.n_elements == 1 else
                               [f"{h.name}[{i}]" for i in range(h.n_elements)])
        if self.learn_noise:
            self.names.append("noise")

    @property
    def size(self):
        return self.bounds.shape[0]

    def theta0(self):
        theta = self.kernel.theta
        if self.learn_noise:
            theta = np.append(theta, math.log(self.noise))
        return theta

    def clip(self, theta):
        return np.clip(theta, self.bounds[:, 0], self.bounds[:, 1])

    def unpack(self, theta):
        """(kernel, noise) at theta (the kernel is a copy)."""
        kernel = copy.deepcopy(self.kernel)
        kernel.theta = theta[:self.n_kernel]
        noise = math.exp(theta[self.n_kernel]) if self.learn_noise else self.noise
        return kernel, noise

    def random(self, rng, n):
        """``n`` draws, log-uniform within the bounds."""
        return rng.uniform(self.bounds[:, 0], self.bounds[:, 1], size=(n, self.size))

    def scale_direction(self):
        """The direction v in theta along which K + noise I only scales:
        C(theta + t v) = e^t C(theta), or None.

        It exists when the noise is learned and every term of the kernel
        (a sum of products of base kernels) has a learned variance: v is 1
        for the noise and the least-norm split of 1 over each term's
        variances.  The predictive mean, hence the cross-validation error,
        is constant along v."""
        from .kernels import _hyper_terms

        if not self.learn_noise:
            return None
        index, pos = {}, 0
        for h in self.kernel.hyperparameters:
            if not h.fixed:
                index[h.name] = pos
                pos += h.n_elements
        terms = _hyper_terms(self.kernel)
        A = np.zeros((len(terms), self.size))
        for row, term in enumerate(terms):
            for prefix, _ in term:
                col = index.get(prefix + "variance")
                if col is not None:
                    A[row, col] += 1.0
        v, *_ = np.linalg.lstsq(A, np.ones(len(terms)), rcond=None)
        if not np.allclose(A @ v, 1.0, rtol=0.0, atol=1e-10):
            return None
        v[-1] = 1.0
        return v


# ------------------------------------------------------------------ executors

class LocalExecutor:
    """Tasks on a pool of threads of this process (the compiled kernel code
    releases the GIL).  Futures passed as arguments are waited for."""

    def __init__(self, n_workers):
        self.n_workers = max(1, int(n_workers))
        self._pool = ThreadPoolExecutor(self.n_workers)
        # BLAS threads of concurrent tasks would oversubscribe the cores (and
        # spin-wait for each other): share them out while the pool lives
        self._limits = None
        if self.n_workers > 1:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                pass
            else:
                self._limits = threadpool_limits(
                    limits=max(1, (os.cpu_count() or 1) // self.n_workers), user_api="blas")

    def scatter(self, data):
        return data

    def submit(self, fn, *args):
        def run():
            return fn(*[a.result() if isinstance(a, Future) else a for a in args])
        return self._pool.submit(run)

    def gather(self, futures):
        return [f.result() for f in futures]

    def close(self):
        self._pool.shutdown(wait=True)
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None


class DaskExecutor:
    """Tasks on a Dask cluster: the data are scattered once (a copy on every
    worker, so that losing a worker loses no data), tasks are retried
    ``retries`` times when their worker dies, and a lost task raises a
    RuntimeError that says so."""

    def __init__(self, client, retries=3):
        self.client = client
        self.retries = retries
        self.n_workers = max(1, len(client.scheduler_info().get("workers", {})) or 1)

    def scatter(self, data):
        return self.client.scatter(data, broadcast=True, hash=False)

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False, retries=self.retries)

    def gather(self, futures):
        try:
            return self.client.gather(list(futures))
        except Exception as exc:
            # KilledWorker (a task's worker died too often), FutureCancelledError
            # (a result and the data to recompute it were lost), closed comms
            module = type(exc).__module__ or ""
            if module.startswith("distributed") or isinstance(exc, (OSError, TimeoutError)) \
                    or "cancel" in type(exc).__name__.lower():
                raise RuntimeError(f"A Dask worker died or was lost during the GP "
                                   f"hyperparameter fit and a task could not be completed on "
                                   f"another worker ({type(exc).__name__}: {exc}); run the "
                                   f"fit again.") from exc
            raise

    def close(self):
        pass


def check_client(client):
    """``client`` must be None or a ``dask.distributed.Client``."""
    if client is None:
        return None
    cls = None
    try:
        from distributed import Client as cls
    except ImportError:
        pass
    if cls is None or not isinstance(client, cls):
        raise TypeError(f"client must be a dask.distributed.Client or None, got "
                        f"{type(client).__name__}.")
    return client


def make_executor(client, n_tasks):
    if client is not None:
        return DaskExecutor(client)
    return LocalExecutor(min(max(1, n_tasks), os.cpu_count() or 1))


def _threads_per_task(executor):
    """Kernel threads of a task: the machine's cores shared by the pool."""
    if isinstance(executor, LocalExecutor):
        return max(1, max_threads() // executor.n_workers)
    return None          # a Dask worker decides (OMP_NUM_THREADS of its process)


# ------------------------------------------------------------------ marginal likelihood

def log_marginal_likelihood(space, theta, X, y, eval_gradient=True, n_threads=None):
    """log p(y | X, theta) and its gradient with respect to theta, by a dense
    Cholesky factorization of C = K + noise I.

    The gradient is ``0.5 tr((alpha alpha^T - C^-1) dC/dtheta_p)``: the
    compiled contraction of W = 0.5 (alpha alpha^T - C^-1) with the kernel's
    derivatives (each pair once), and ``0.5 noise (alpha^T alpha - tr C^-1)``
    for the noise.  Returns (-inf, zeros) when C is not positive definite."""
    kernel, noise = space.unpack(theta)
    n = X.shape[0]
    # evaluator.matrix() is Fortran-ordered: LAPACK works on it in place
    C = kernel.evaluator(X, n_threads=n_threads).matrix()
    C[np.diag_indices(n)] += noise
    lapack = scipy.linalg.lapack
    U, info = lapack.dpotrf(C, lower=0, overwrite_a=1, clean=0)
    if info != 0:
        return -np.inf, np.zeros(space.size)
    alpha, info = lapack.dpotrs(U, y, lower=0)
    logdet = 2.0 * np.sum(np.log(np.diag(U)))
    lml = -0.5 * float(y @ alpha) - 0.5 * logdet - 0.5 * n * math.log(2 * math.pi)
    if not eval_gradient:
        return lml, None
    Cinv, info = lapack.dpotri(U, lower=0, overwrite_c=1)
    if info != 0:
        return -np.inf, np.zeros(space.size)
    trace = float(np.trace(Cinv))
    # W = 0.5 alpha alpha^T - 0.5 C^-1; upper triangle (Fortran) = lower (C order)
    Cinv *= -0.5
    W = scipy.linalg.blas.dger(0.5, alpha, alpha, a=Cinv, overwrite_a=1)
    grad = np.empty(space.size)
    if space.n_kernel:
        grad[:space.n_kernel] = kernel.gradient(X, n_threads=n_threads).dense(W.T, symmetric=True)
    if space.learn_noise:
        grad[-1] = 0.5 * noise * (float(alpha @ alpha) - trace)
    return lml, grad


def ml_task(X, y, space, theta0, n_threads=None, maxiter=15000):
    """One L-BFGS-B run from theta0: (theta, -lml, history, converged, message,
    iterations, evaluations)."""
    def fun(theta):
        lml, grad = log_marginal_likelihood(space, theta, X, y, n_threads=n_threads)
        return -lml, -grad

    res, history = _lbfgs(fun, theta0, space.bounds, maxiter)
    return (res.x, float(res.fun), history, bool(res.success), str(res.message), int(res.nit),
            int(res.nfev))


def _lbfgs(fun, theta0, bounds, max_iter):
    """L-BFGS-B on ``fun`` (value and gradient; a non-finite value counts as
    a huge one): (result, objective per iteration)."""
    history, last = [], {}

    def wrapped(theta):
        value, grad = fun(theta)
        if not np.isfinite(value):
            return 1e25, np.zeros_like(theta)
        last[theta.tobytes()] = value
        return value, grad

    def callback(xk):
        history.append(last.get(np.asarray(xk).tobytes(), np.nan))

    res = scipy.optimize.minimize(wrapped, np.asarray(theta0, dtype=np.float64), jac=True,
                                  method="L-BFGS-B", bounds=bounds, callback=callback,
                                  options=dict(maxiter=int(max_iter)))
    return res, history


def _starts(space, rng, n_restarts, candidates):
    """The starting points: the kernel's theta, the candidates given, then
    ``n_restarts`` log-uniform draws."""
    candidates = [] if candidates is None else [np.asarray(c, dtype=np.float64)
                                                for c in candidates]
    return [space.theta0()] + candidates + list(space.random(rng, n_restarts))


def fit_ml(space, X, y, n_restarts, rng, executor, progress=None, maxiter=15000,
           candidates=None):
    """L-BFGS-B from the kernel's theta, the ``candidates`` and ``n_restarts``
    log-uniform draws (one task each); the best run by the marginal
    likelihood."""
    starts = _starts(space, rng, n_restarts, candidates)
    Xf, yf = executor.scatter(X), executor.scatter(y)
    nt = _threads_per_task(executor)
    futures = [executor.submit(ml_task, Xf, yf, space, t0, nt, maxiter) for t0 in starts]
    runs = executor.gather(futures)
    best = min(range(len(runs)), key=lambda i: runs[i][1])
    theta, obj, history, ok, message, nit, nfev = runs[best]
    if progress is not None:
        progress.end(f"ml: log marginal likelihood {-obj:.8g} after {nit} iterations "
                     f"(best of {len(runs)} starts)  time {progress.elapsed():.1f}s")
    if not ok:
        warnings.warn(f"The L-BFGS-B fit of the hyperparameters stopped before converging "
                      f"({message}); the best hyperparameters found are kept.",
                      convergence_warning(), stacklevel=4)
    return dict(theta=theta, lml=-obj, history=np.asarray(history), runs=runs,
                n_iter=nit, n_evaluations=nfev,
                starts=[dict(start=s, theta=r[0], lml=-r[1]) for s, r in zip(starts, runs)])


# ------------------------------------------------------------------ CV-ADMM

def exact_solve(space, theta, X, y, tol, x0=None, n_threads=None):
    """(K + noise I)^-1 y by bcd.solve (GBCD, exact block updates),
    warm-started from x0."""
    from .._solve import solve
    from .problem import GaussianProcess, admissible_noise

    kernel, noise = space.unpack(theta)
    problem = GaussianProcess(X, y, kernel, admissible_noise(kernel, noise),
                              n_threads=n_threads)
    n = X.shape[0]
    # (no warnings.catch_warnings here: it is not thread-safe, and tasks run
    # on threads)
    result = solve(problem, rule="gbcd", blocks="variable", block_size=min(500, n),
                   update="exact", tol=tol, max_iter=100000, x0=x0, random_state=0)
    return result.x


class HoldOut:
    """One hold-out split and the state of its ADMM (Algorithm 1 of the
    paper): theta, z (the auxiliary variable standing for C_T^-1 y_T) and the
    multipliers lambda of the constraint C(theta) z = y_T.

    The inputs are stored validation rows first: XA = [X_V; X_T].  One
    kernel evaluator k(XA, X_T) gives K_VT z and K_TT z in one pass, one
    k(X_T, XA) the transposed products.  The Lagrangian is divided by n_v
    (a mean squared error), which changes none of its minimizers.
    """

    def __init__(self, X, y, val, train, space, theta0, options, seed, n_threads=None):
        self.space = space
        self.opts = dict(options)
        self.n_threads = n_threads
        self.val, self.train = np.asarray(val), np.asarray(train)
        self.XA = np.ascontiguousarray(np.vstack([X[self.val], X[self.train]]))
        self.XT = self.XA[len(self.val):]
        self.yV = np.ascontiguousarray(y[self.val])
        self.yT = np.ascontiguousarray(y[self.train])
        self.nv, self.nt = len(self.val), len(self.train)
        self.scale = 1.0 / self.nv
        # the penalty parameter of this fold's constraint C(theta) z = y_T:
        # the paper's fixed rho, or balanced after each iteration
        self.rho = float(self.opts["rho"])
        self.rhos = []
        self.theta = space.clip(np.asarray(theta0, dtype=np.float64))
        self.lam = np.full(self.nt, float(self.opts["lambda0"]))
        rng = np.random.default_rng(seed)
        perturbed = space.clip(self.theta + self.opts["perturbation"]
                               * rng.standard_normal(space.size))
        tol = self.opts["solve_tol"] * max(1e-300, float(np.max(np.abs(self.yT))))
        self.z = exact_solve(space, perturbed, self.XT, self.yT, tol, n_threads=n_threads)
        self.kz, self.noise = self._products(self.theta, self.z)
        self.step = None
        self.merit = None
        self.merit_change = np.inf
        self.feasibility = np.inf
        self.history = []
        self.n_iter = 0
        self.converged = False
        self.best = (np.inf, self.theta.copy())

    def copy(self):
        new = copy.copy(self)
        new.theta, new.z, new.lam, new.kz = (self.theta.copy(), self.z.copy(),
                                             self.lam.copy(), self.kz.copy())
        new.history = list(self.history)
        new.rhos = list(self.rhos)
        return new

    # -- products
    def _products(self, theta, z):
        """(k(XA, X_T) z, noise) at theta."""
        kernel, noise = self.space.unpack(theta)
        return kernel.evaluator(self.XA, self.XT, self.n_threads).matvec(z), noise

    def _parts(self, kz, noise, z):
        a = kz[:self.nv] - self.yV
        r = kz[self.nv:] + noise * z - self.yT
        return a, r

    def lagrangian(self, kz, noise, z=None, lam=None):
        z = self.z if z is None else z
        lam = self.lam if lam is None else lam
        a, r = self._parts(kz, noise, z)
        rho = self.rho
        return self.scale * (float(a @ a) + float(lam @ r) + 0.5 * rho * float(r @ r))

    def _gradient(self, theta, kz, noise):
        """d lagrangian / d theta at (theta, z, lambda), one contraction pass."""
        a, r = self._parts(kz, noise, self.z)
        w = self.lam + self.rho * r
        kernel, _ = self.space.unpack(theta)
        g = np.empty(self.space.size)
        if self.space.n_kernel:
            g[:self.space.n_kernel] = kernel.gradient(self.XA, self.XT, self.n_threads) \
                .low_rank(np.concatenate([2.0 * a, w]), self.z)
        if self.space.learn_noise:
            g[-1] = noise * float(w @ self.z)
        return self.scale * g

    # -- the three steps
    def theta_step(self, center=None, mu=None, rho_c=0.0):
        """Approximate minimization of
        L(theta) + mu^T (theta - center) + rho_c / 2 ||theta - center||^2
        at fixed z and lambda: at most ``theta_steps`` projected gradient
        steps, each with Armijo backtracking.

        The first trial step is scale-invariant: the Barzilai-Borwein step
        s^T s / s^T d (s, d: the last accepted change of theta and of the
        gradient), else the previous accepted step, else the step that moves
        the largest log-parameter by 1; never one that moves a log-parameter
        by more than 1.  The theta-step ends when the projected gradient falls
        below ``theta_tol`` times its first value or a step is not accepted.
        """
        space = self.space

        def extra(theta):
            if center is None:
                return 0.0, 0.0
            d = theta - center
            return float(mu @ d) + 0.5 * rho_c * float(d @ d), mu + rho_c * d

        def projected(theta, g):
            return float(np.linalg.norm(space.clip(theta - g) - theta))

        theta, kz, noise = self.theta, self.kz, self.noise
        f = self.lagrangian(kz, noise) + extra(theta)[0]
        sigma = self.opts["armijo"]
        g = self._gradient(theta, kz, noise) + extra(theta)[1]
        pg0 = projected(theta, g)
        bb = None
        for _ in range(int(self.opts["theta_steps"])):
            gmax = float(np.max(np.abs(g))) if g.size else 0.0
            if gmax == 0.0 or projected(theta, g) <= self.opts["theta_tol"] * pg0:
                break
            t = bb if bb is not None else (self.step if self.step is not None else np.inf)
            t = min(t, 1.0 / gmax)
            for _ in range(60):
                trial = space.clip(theta - t * g)
                d = trial - theta
                if not np.any(d):
                    t = 0.0
                    break
                kz_t, noise_t = self._products(trial, self.z)
                f_t = self.lagrangian(kz_t, noise_t) + extra(trial)[0]
                if np.isfinite(f_t) and f_t <= f + sigma * float(g @ d):
                    break
                t *= 0.5
            else:
                t = 0.0
            if t == 0.0:
                break
            g_t = self._gradient(trial, kz_t, noise_t) + extra(trial)[1]
            dg = g_t - g
            sd = float(d @ dg)
            bb = float(d @ d) / sd if sd > 0 else None
            self.step = t
            theta, kz, noise, f, g = trial, kz_t, noise_t, f_t, g_t
        self.theta, self.kz, self.noise = theta, kz, noise
        return f

    def z_step(self):
        """Conjugate-gradient steps on the quadratic in z, warm-started at z:
        (2 K_TV K_VT + rho C^2) z = 2 K_TV y_V - C lambda + rho C y_T; at
        most ``z_steps``, until the gradient falls below ``z_tol`` times its
        first value."""
        kernel, noise = self.space.unpack(self.theta)
        ev = kernel.evaluator(self.XA, self.XT, self.n_threads)       # k(XA, X_T)
        evt = kernel.evaluator(self.XT, self.XA, self.n_threads)      # its transpose
        rho = self.rho
        z, kz = self.z, self.kz
        a, r = self._parts(kz, noise, z)
        w = self.lam + rho * r
        g = evt.matvec(np.concatenate([2.0 * a, w])) + noise * w
        d = -g
        gg = float(g @ g)
        stop = (self.opts["z_tol"] ** 2) * gg
        for _ in range(int(self.opts["z_steps"])):
            if gg == 0.0 or gg <= stop:
                break
            kd = ev.matvec(d)
            cd = kd[self.nv:] + noise * d
            hd = evt.matvec(np.concatenate([2.0 * kd[:self.nv], rho * cd])) + noise * rho * cd
            dhd = float(d @ hd)
            if not dhd > 0:
                break
            step = gg / dhd
            z = z + step * d
            kz = kz + step * kd
            g = g + step * hd
            gg_new = float(g @ g)
            d = -g + (gg_new / gg) * d
            gg = gg_new
        self.z, self.kz, self.noise = z, kz, noise

    def dual_step(self):
        _, r = self._parts(self.kz, self.noise, self.z)
        self.lam = self.lam + self.rho * r
        return r

    def iterate(self, center=None, mu=None, rho_c=0.0):
        """One ADMM iteration; returns ||theta_new - theta_old||_2."""
        old = self.theta.copy()
        value = self.theta_step(center, mu, rho_c)
        z_old, kz_old = self.z, self.kz          # z_k, with products at theta_{k+1}
        self.z_step()
        r = self.dual_step()
        # dual residual of the z-update: rho C(theta_{k+1}) (z_{k+1} - z_k),
        # the change of lambda that is not the primal residual's
        c_dz = (self.kz[self.nv:] - kz_old[self.nv:]) + self.noise * (self.z - z_old)
        self.primal_residual = float(np.linalg.norm(r))
        self.dual_residual = self.rho * float(np.linalg.norm(c_dz))
        self.rhos.append(self.rho)
        if self.opts["rho_update"]:
            self.rho = balance_rho(self.rho, self.primal_residual, self.dual_residual,
                                   self.opts, float(self.opts["rho"]))
        a = self.kz[:self.nv] - self.yV
        # the validation error the ADMM tracks (z standing for C_T^-1 y_T)
        merit = self.scale * float(a @ a)
        self.merit_change = (abs(merit - self.merit) / max(merit, 1e-300)
                             if self.merit is not None else np.inf)
        self.merit = merit
        self.feasibility = self.primal_residual / max(1e-300, float(np.linalg.norm(self.yT)))
        if merit < self.best[0] and self.feasibility <= self.opts["feasibility_tol"]:
            self.best = (merit, self.theta.copy())
        self.history.append(value)
        self.n_iter += 1
        return float(np.linalg.norm(self.theta - old))

    def stalled(self, change):
        """The stopping test: ||delta theta|| < epsilon, the validation error
        stalled and the constraint (nearly) satisfied."""
        return (change < self.opts["epsilon"] and self.merit_change <= self.opts["merit_tol"]
                and self.feasibility <= self.opts["feasibility_tol"])

    def run(self):
        """Algorithm 1: iterate until the stopping test or the limit."""
        for _ in range(int(self.opts["max_iter"])):
            if self.stalled(self.iterate()):
                self.converged = True
                break
        if not self.converged and np.isfinite(self.best[0]):
            self.theta = self.best[1]
        return self

    def validation_mse(self, theta, tol):
        """Mean squared validation error at theta with z = C_T^-1 y_T solved by
        bcd.solve, warm-started at the ADMM's z."""
        z = exact_solve(self.space, theta, self.XT, self.yT, tol, x0=self.z,
                        n_threads=self.n_threads)
        kernel, _ = self.space.unpack(theta)
        pred = kernel.evaluator(self.XA[:self.nv], self.XT, self.n_threads).matvec(z)
        return float(np.mean((self.yV - pred) ** 2))


# Task functions (module level so that they pickle by reference)

def holdout_run(X, y, val, train, space, theta0, options, seed, n_threads):
    """A whole hold-out ADMM run: the fold's final state."""
    return HoldOut(X, y, val, train, space, theta0, options, seed, n_threads).run()


def holdout_init(X, y, val, train, space, theta0, options, seed, n_threads):
    return HoldOut(X, y, val, train, space, theta0, options, seed, n_threads)


def consensus_step(state, center, mu, rho_c):
    """One ADMM iteration of a fold with the consensus terms (a new state)."""
    new = state.copy()
    new.iterate(center, mu, rho_c)
    return new


def state_theta(state):
    """The theta-sized message a consensus step sends back: theta_k, the
    fold's Lagrangian, its validation error and its constraint residual."""
    return state.theta, state.history[-1], state.merit, state.feasibility


def state_validation(state, theta, tol):
    return state.validation_mse(theta, tol)


def state_summary(state):
    return dict(theta=state.theta, history=np.asarray(state.history), n_iter=state.n_iter,
                converged=state.converged, rhos=np.asarray(state.rhos))


def make_folds(n, cv, rng):
    """(validation, training) index pairs: a fraction held out, or K folds."""
    perm = rng.permutation(n)
    if isinstance(cv, float):
        nv = min(n - 1, max(1, int(round(cv * n))))
        parts = [(np.sort(perm[:nv]), np.sort(perm[nv:]))]
    else:
        chunks = np.array_split(perm, cv)
        parts = [(np.sort(c), np.sort(np.setdiff1d(perm, c))) for c in chunks]
    return parts


def fit_cv_admm(space, X, y, cv, scheme, n_restarts, rng, executor, options, tol,
                progress=None, candidates=None):
    """Cross-validation ADMM from theta0, the ``candidates`` and
    ``n_restarts`` log-uniform draws: the start with the lowest
    cross-validation error."""
    opts = dict(ADMM_DEFAULTS)
    opts.update(options or {})
    folds = make_folds(X.shape[0], cv, rng)
    # the perturbations of z0, the same for every start: a start's result does
    # not depend on the other starts
    seeds = rng.integers(0, 2**31 - 1, size=len(folds))
    starts = _starts(space, rng, n_restarts, candidates)
    Xf, yf = executor.scatter(X), executor.scatter(y)
    nt = _threads_per_task(executor)
    solve_tol = tol
    if scheme == "naive" or len(folds) == 1:
        states = [[executor.submit(holdout_run, Xf, yf, v, t, space, t0, opts, int(s), nt)
                   for (v, t), s in zip(folds, seeds)] for c, t0 in enumerate(starts)]
        summaries = [executor.gather([executor.submit(state_summary, st) for st in row])
                     for row in states]
        thetas = [space.clip(np.mean([s["theta"] for s in row], axis=0)) for row in summaries]
        histories = []
        for row in summaries:
            length = max(len(s["history"]) for s in row)
            padded = [np.concatenate([s["history"], np.full(length - len(s["history"]),
                                                            s["history"][-1] if len(s["history"]) else np.nan)])
                      for s in row]
            histories.append(np.mean(padded, axis=0) if length else np.zeros(0))
        converged = [all(s["converged"] for s in row) for row in summaries]
        n_iter = [max(s["n_iter"] for s in row) for row in summaries]
        if progress is not None:
            progress.show(f"cv_admm ({scheme}, {len(folds)} folds): {max(n_iter)} "
                          f"iterations  time {progress.elapsed():.1f}s", force=True)
    else:
        thetas, histories, converged, n_iter, states, consensus_rhos = _consensus(
            space, Xf, yf, folds, starts, seeds, opts, executor, nt, progress)
    # the cross-validation error of each candidate, with exact solves
    scores = []
    for c, theta in enumerate(thetas):
        futs = [executor.submit(state_validation, st, theta, solve_tol) for st in states[c]]
        scores.append(float(np.mean(executor.gather(futs))))
    best = int(np.argmin(scores))
    # the penalty parameters of the best start: per fold (and, for the
    # consensus scheme, of the consensus constraint), one per iteration
    fold_rhos = [s["rhos"] for s in executor.gather(
        [executor.submit(state_summary, st) for st in states[best]])]
    rho = dict(folds=fold_rhos)
    if scheme == "consensus" and len(folds) > 1:
        rho["consensus"] = consensus_rhos[best]
    if not converged[best]:
        warnings.warn(f"The cross-validation ADMM reached its iteration limit "
                      f"({opts['max_iter']}) before its stopping test (||delta theta|| < "
                      f"{opts['epsilon']:g} with a stalled validation error and a feasible z) "
                      f"held; the "
                      f"best hyperparameters found are kept.", convergence_warning(),
                      stacklevel=4)
    if progress is not None:
        progress.end(f"cv_admm: cross-validation MSE {scores[best]:.6g} (best of "
                     f"{len(thetas)} starts)  time {progress.elapsed():.1f}s")
    return dict(theta=thetas[best], cv_mse=scores[best], history=histories[best],
                n_iter=n_iter[best], scores=scores, thetas=thetas, folds=folds, rho=rho,
                starts=[dict(start=s, theta=t, cv_mse=c) for s, t, c in
                        zip(starts, thetas, scores)])


def _consensus(space, Xf, yf, folds, starts, seeds, opts, executor, nt, progress):
    """Consensus ADMM (problem (16) of the paper): each fold k keeps its own
    theta_k, tied to the consensus z by multipliers mu_k; per iteration the
    folds take one ADMM step of their own (a task each, the fold's state
    staying where it is), send theta_k back, and the driver updates z and
    mu_k.  Only theta-sized vectors move."""
    rho0 = float(opts["rho"])
    n_c, K = len(starts), len(folds)
    # the consensus penalty of theta_k = z, per start: fixed, or balanced by
    # the consensus residuals (each fold balances its own rho likewise)
    rhos = [rho0] * n_c
    rho_history = [[] for _ in range(n_c)]
    states = [[executor.submit(holdout_init, Xf, yf, v, t, space, t0, opts, int(s), nt)
               for (v, t), s in zip(folds, seeds)] for c, t0 in enumerate(starts)]
    centers = [space.clip(np.asarray(t0, dtype=np.float64)) for t0 in starts]
    mus = [[np.zeros(space.size) for _ in range(K)] for _ in range(n_c)]
    active = [True] * n_c
    converged = [False] * n_c
    n_iter = [0] * n_c
    histories = [[] for _ in range(n_c)]
    best = [(np.inf, c.copy()) for c in centers]
    merits = [None] * n_c
    for it in range(int(opts["max_iter"])):
        cand = [c for c in range(n_c) if active[c]]
        if not cand:
            break
        for c in cand:
            states[c] = [executor.submit(consensus_step, states[c][k], centers[c], mus[c][k],
                                         rhos[c]) for k in range(K)]
        flat = executor.gather([executor.submit(state_theta, states[c][k])
                                for c in cand for k in range(K)])
        for i, c in enumerate(cand):
            thetas = [m[0] for m in flat[i * K:(i + 1) * K]]
            value = float(np.sum([m[1] for m in flat[i * K:(i + 1) * K]]))
            merit = float(np.mean([m[2] for m in flat[i * K:(i + 1) * K]]))
            feasible = max(m[3] for m in flat[i * K:(i + 1) * K]) <= opts["feasibility_tol"]
            merit_change = (abs(merit - merits[c]) / max(merit, 1e-300)
                            if merits[c] is not None else np.inf)
            merits[c] = merit
            if merit < best[c][0] and feasible:
                best[c] = (merit, centers[c].copy())
            rho = rhos[c]
            new_center = space.clip(np.mean([t + m / rho for t, m in zip(thetas, mus[c])],
                                            axis=0))
            for k in range(K):
                mus[c][k] = mus[c][k] + rho * (thetas[k] - new_center)
            change = float(np.linalg.norm(new_center - centers[c]))
            rho_history[c].append(rho)
            if opts["rho_update"]:
                # consensus residuals (Boyd et al. 2011, 7.1): primal
                # (sum_k ||theta_k - z||^2)^1/2, dual rho K^1/2 ||z_new - z_old||
                primal = math.sqrt(sum(float(np.sum((t - new_center) ** 2)) for t in thetas))
                rhos[c] = balance_rho(rho, primal, rho * math.sqrt(K) * change, opts, rho0)
            histories[c].append(value)
            centers[c] = new_center
            n_iter[c] = it + 1
            if change < opts["epsilon"] and merit_change <= opts["merit_tol"] and feasible:
                active[c] = False
                converged[c] = True
        if progress is not None and progress.due():
            progress.show(f"cv_admm (consensus, {K} folds): iteration {it + 1}  "
                          f"time {progress.elapsed():.1f}s")
    thetas = [centers[c] if converged[c] or not np.isfinite(best[c][0]) else best[c][1]
              for c in range(n_c)]
    return (thetas, [np.asarray(h) for h in histories], converged, n_iter, states,
            [np.asarray(r) for r in rho_history])


# ------------------------------------------------------------------ CV, exact gradient

#: constants of optimizer="cv": tolerance of the GBCD solves, relative to the
#: largest right-hand side entry, and the L-BFGS-B iteration limit
CV_DEFAULTS = dict(solve_tol=1e-6, max_iter=200)


class CVFold:
    """One (validation, training) split of ``optimizer="cv"``: the validation
    error e(theta) = ||K_VT z - y_V||^2 / n_v with z = C_T^-1 y_T, and its
    gradient

        de/dtheta_p = (2 a^T dK_VT/dtheta_p z - 2 w^T dC_T/dtheta_p z) / n_v,

    a = K_VT z - y_V, w = C_T^-1 K_TV a (the adjoint).  z and w are GBCD
    solves warm-started at the previous evaluation's; the two derivative
    terms are one contraction of dk([X_V; X_T], X_T) with the rank-one
    weights [2a; -2w] z^T.  This is the Lagrangian of the CV-ADMM with the
    constraint C z = y_T and the stationarity of the multipliers solved
    exactly (lambda = -2w) instead of approximately."""

    def __init__(self, X, y, val, train, space, options, n_threads=None):
        self.space = space
        self.solve_tol = float(options["solve_tol"])
        self.n_threads = n_threads
        self.nv = len(val)
        self.XA = np.ascontiguousarray(np.vstack([X[val], X[train]]))
        self.XV, self.XT = self.XA[:self.nv], self.XA[self.nv:]
        self.yV = np.ascontiguousarray(y[val])
        self.yT = np.ascontiguousarray(y[train])
        self.z = self.w = None
        self.value, self.grad = np.inf, None

    def _solve(self, theta, rhs, x0):
        tol = self.solve_tol * max(1e-300, float(np.max(np.abs(rhs))))
        return exact_solve(self.space, theta, self.XT, rhs, tol, x0=x0,
                           n_threads=self.n_threads)

    def evaluate(self, theta, gradient=True):
        """A new state holding e(theta) (``value``) and its gradient."""
        new = copy.copy(self)
        space, nt = self.space, self.n_threads
        kernel, noise = space.unpack(theta)
        new.z = self._solve(theta, self.yT, self.z)
        a = kernel.evaluator(self.XV, self.XT, nt).matvec(new.z) - self.yV
        new.value = float(a @ a) / self.nv
        new.grad = None
        if gradient:
            rhs = kernel.evaluator(self.XT, self.XV, nt).matvec(a)
            new.w = self._solve(theta, rhs, self.w)
            g = np.empty(space.size)
            if space.n_kernel:
                g[:space.n_kernel] = kernel.gradient(self.XA, self.XT, nt).low_rank(
                    np.concatenate([2.0 * a, -2.0 * new.w]), new.z)
            if space.learn_noise:
                g[-1] = -2.0 * noise * float(new.w @ new.z)
            new.grad = g / self.nv
        return new


# Task functions (module level so that they pickle by reference)

def cv_fold_init(X, y, val, train, space, options, n_threads):
    return CVFold(X, y, val, train, space, options, n_threads)


def cv_fold_evaluate(state, theta, gradient=True):
    return state.evaluate(theta, gradient)


def cv_fold_message(state):
    """The theta-sized message of an evaluation: (value, gradient)."""
    return state.value, state.grad


def _cv_bounds(space, theta0):
    """L-BFGS-B bounds: the space's, with the noise held at its start when
    the CV error is constant along :meth:`Space.scale_direction` (the
    kernel's variances still reach every ratio of signal to noise)."""
    bounds = space.bounds.copy()
    if space.scale_direction() is not None:
        bounds[-1] = theta0[-1]
    return bounds


def cv_fold_run(X, y, val, train, space, theta0, options, n_threads):
    """The naive scheme's task: one fold's validation error minimized on its
    own; (theta, value, history, success, message, iterations, evaluations)."""
    state = [CVFold(X, y, val, train, space, options, n_threads)]

    def fun(theta):
        state[0] = state[0].evaluate(theta)
        return state[0].value, state[0].grad

    theta0 = space.clip(np.asarray(theta0, dtype=np.float64))
    res, history = _lbfgs(fun, theta0, _cv_bounds(space, theta0), options["max_iter"])
    return (res.x, float(res.fun), history, bool(res.success), str(res.message),
            int(res.nit), int(res.nfev))


def fit_cv(space, X, y, cv, scheme, n_restarts, rng, executor, options=None, progress=None,
           candidates=None):
    """``optimizer="cv"``: the cross-validation error (the mean over the folds
    of the validation MSE) minimized by L-BFGS-B with its exact gradient,
    from theta0, the ``candidates`` and ``n_restarts`` log-uniform draws;
    the start with the lowest error is kept.

    Hold-out and ``"consensus"``: one theta shared by the folds; each
    evaluation is one task per fold (the fold's state, with its warm
    starts, stays where it is), and only values and gradients come back.
    ``"naive"``: each fold minimizes its own error in one task, the
    log-parameters are averaged, and the error is evaluated there."""
    opts = dict(CV_DEFAULTS)
    opts.update(options or {})
    folds = make_folds(X.shape[0], cv, rng)
    starts = [space.clip(np.asarray(t, dtype=np.float64))
              for t in _starts(space, rng, n_restarts, candidates)]
    Xf, yf = executor.scatter(X), executor.scatter(y)
    nt = _threads_per_task(executor)
    K = len(folds)

    def init():
        return [executor.submit(cv_fold_init, Xf, yf, v, t, space, opts, nt) for v, t in folds]

    def evaluate(states, theta, gradient=True):
        """Submit one evaluation per fold; (new states, mean value, mean grad)."""
        states[:] = [executor.submit(cv_fold_evaluate, st, theta, gradient) for st in states]
        msgs = executor.gather([executor.submit(cv_fold_message, st) for st in states])
        value = float(np.mean([m[0] for m in msgs]))
        grad = np.mean([m[1] for m in msgs], axis=0) if gradient else None
        return value, grad

    def shared(theta0):
        states = init()
        count = [0]

        def fun(theta):
            value, grad = evaluate(states, theta)
            count[0] += 1
            if progress is not None and progress.due():
                progress.show(f"cv ({K} folds): evaluation {count[0]}, CV MSE {value:.6g}  "
                              f"time {progress.elapsed():.1f}s")
            return value, grad

        res, history = _lbfgs(fun, theta0, _cv_bounds(space, theta0), opts["max_iter"])
        return dict(theta=res.x, cv_mse=float(res.fun), history=np.asarray(history),
                    converged=bool(res.success), message=str(res.message),
                    n_iter=int(res.nit), n_evaluations=int(res.nfev))

    def naive(theta0):
        runs = executor.gather([executor.submit(cv_fold_run, Xf, yf, v, t, space, theta0,
                                                opts, nt) for v, t in folds])
        theta = space.clip(np.mean([r[0] for r in runs], axis=0))
        value, _ = evaluate(init(), theta, gradient=False)
        length = max(len(r[2]) for r in runs)
        history = np.mean([np.concatenate([r[2], np.full(length - len(r[2]),
                                                         r[2][-1] if r[2] else np.nan)])
                           for r in runs], axis=0) if length else np.zeros(0)
        failed = [r[4] for r in runs if not r[3]]
        return dict(theta=theta, cv_mse=value, history=history, converged=not failed,
                    message=failed[0] if failed else "", n_iter=max(r[5] for r in runs),
                    n_evaluations=sum(r[6] for r in runs))

    run = naive if scheme == "naive" and K > 1 else shared
    # one driver thread per start: its tasks run on the executor
    with ThreadPoolExecutor(max(1, len(starts))) as drivers:
        results = list(drivers.map(run, starts))
    best = int(np.argmin([r["cv_mse"] for r in results]))
    out = results[best]
    if not out["converged"]:
        warnings.warn(f"The L-BFGS-B fit of the cross-validation error stopped before "
                      f"converging ({out['message']}); the best hyperparameters found are "
                      f"kept.", convergence_warning(), stacklevel=4)
    if progress is not None:
        progress.end(f"cv: cross-validation MSE {out['cv_mse']:.6g} after {out['n_iter']} "
                     f"iterations (best of {len(starts)} starts)  time "
                     f"{progress.elapsed():.1f}s")
    out.update(scores=[r["cv_mse"] for r in results], thetas=[r["theta"] for r in results],
               folds=folds,
               starts=[dict(start=s, theta=r["theta"], cv_mse=r["cv_mse"])
                       for s, r in zip(starts, results)])
    return out
