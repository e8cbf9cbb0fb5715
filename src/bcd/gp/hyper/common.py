"""What the hyperparameter optimizers share: the space of learnable
log-parameters, the starting points, L-BFGS-B with its history, the folds,
the exact GBCD solve and the convergence warning."""
import copy
import math
import time

import numpy as np
import scipy.optimize

from ..kernels import check_bounds

CV_SCHEMES = ("naive", "consensus")


def convergence_warning():
    """scikit-learn's ConvergenceWarning when installed, else bcd's."""
    try:
        from sklearn.exceptions import ConvergenceWarning
    except ImportError:          # pragma: no cover - scikit-learn is optional
        from ..._result import ConvergenceWarning
    return ConvergenceWarning


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
        from ..kernels import _hyper_terms

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


class Stopped(Exception):
    """Raised inside a task when its fit's :class:`Control` says stop; the
    task ends with the best state it reached."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class Control:
    """The deadline and the cancel flag of one hyperparameter fit, shared by
    its tasks.

    ``flag`` is a float64 array of length 1 that compiled loops read
    between panels (:mod:`bcd.core._dense`); the driver sets it on Ctrl-C,
    which only the main thread receives.  A copy sent to another process (a
    Dask task) carries the time that remains and a flag of its own."""

    def __init__(self, max_time=None):
        self.max_time = None if max_time is None else float(max_time)
        self.deadline = math.inf if max_time is None else time.monotonic() + float(max_time)
        self.flag = np.zeros(1)
        self.reason = None

    def cancel(self, reason="interrupted"):
        if self.reason is None:
            self.reason = reason
        self.flag[0] = 1.0

    def stopped(self):
        """None while the fit may go on, else why it stops ("interrupted" or
        "max_time")."""
        if self.flag[0] != 0.0:
            return self.reason or "interrupted"
        if time.monotonic() > self.deadline:
            self.cancel("max_time")
            return "max_time"
        return None

    def check(self):
        """Raise :class:`Stopped` when the fit must stop."""
        reason = self.stopped()
        if reason is not None:
            raise Stopped(reason)

    def remaining(self):
        """Seconds left (None without a deadline)."""
        if self.deadline == math.inf:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def solve_callback(self, info):
        """A :func:`bcd.solve` callback that stops the solve when the fit
        must stop."""
        return self.stopped() is not None or None

    def __getstate__(self):
        return dict(remaining=self.remaining(), reason=self.reason,
                    cancelled=bool(self.flag[0] != 0.0))

    def __setstate__(self, state):
        self.__init__(state["remaining"])
        self.max_time = state["remaining"]
        if state["cancelled"]:
            self.cancel(state["reason"] or "interrupted")


def describe_theta(space, theta):
    """``name=value`` of the hyperparameters at log-parameters theta."""
    return "  ".join(f"{name}={math.exp(t):.4g}" for name, t in zip(space.names, theta))


def lbfgs(fun, theta0, bounds, max_iter, control=None, report=None):
    """L-BFGS-B on ``fun`` (value and gradient; a non-finite value or
    gradient counts as a huge value): (result, objective per iteration).

    When ``fun`` raises :class:`Stopped` (its fit is interrupted or out of
    time) the result is the best point evaluated so far, with
    ``success=False`` and ``stopped`` set to the reason; ``fun`` may return
    a third item, kept for the best point as ``result.extra``.
    ``report(iteration, value, theta)`` is called after each iteration."""
    history, last = [], {}
    best = dict(value=math.inf, x=np.asarray(theta0, dtype=np.float64), extra=None, nfev=0)

    def wrapped(theta):
        if control is not None:
            control.check()
        value, grad, *extra = fun(theta)
        best["nfev"] += 1
        if not np.isfinite(value) or not np.all(np.isfinite(grad)):
            # a failed point (not positive definite, or overflow): a huge value
            return 1e25, np.zeros_like(theta)
        last[theta.tobytes()] = value
        if value < best["value"]:
            best.update(value=value, x=np.array(theta), extra=extra[0] if extra else None)
        return value, grad

    def callback(xk):
        history.append(last.get(np.asarray(xk).tobytes(), np.nan))
        if report is not None:
            report(len(history), history[-1], xk)

    try:
        res = scipy.optimize.minimize(wrapped, np.asarray(theta0, dtype=np.float64), jac=True,
                                      method="L-BFGS-B", bounds=bounds, callback=callback,
                                      options=dict(maxiter=int(max_iter)))
    except Stopped as stop:
        res = scipy.optimize.OptimizeResult(
            x=best["x"], fun=best["value"], success=False, nit=len(history),
            nfev=best["nfev"], message=f"stopped ({stop.reason})", stopped=stop.reason)
    else:
        res["stopped"] = None
    # the extra item of the point returned (when it was the best evaluated)
    res["extra"] = best["extra"] if np.array_equal(best["x"], res.x) else None
    return res, history


def start_points(space, rng, n_restarts, candidates):
    """The starting points: the kernel's theta, the candidates given, then
    ``n_restarts`` log-uniform draws."""
    candidates = [] if candidates is None else [np.asarray(c, dtype=np.float64)
                                                for c in candidates]
    return [space.theta0()] + candidates + list(space.random(rng, n_restarts))


def exact_solve(space, theta, X, y, tol, x0=None, n_threads=None, control=None):
    """(K + noise I)^-1 y by bcd.solve (GBCD, exact block updates),
    warm-started from x0.  With a ``control`` the solve stops when the fit
    is interrupted or out of time, raising :class:`Stopped`."""
    from ..._solve import solve
    from ..problem import GaussianProcess, admissible_noise

    kernel, noise = space.unpack(theta)
    problem = GaussianProcess(X, y, kernel, admissible_noise(kernel, noise),
                              n_threads=n_threads)
    n = X.shape[0]
    if control is not None:
        control.check()
    # (no warnings.catch_warnings here: it is not thread-safe, and tasks run
    # on threads)
    result = solve(problem, rule="gbcd", blocks="variable", block_size=min(500, n),
                   update="exact", tol=tol, max_iter=100000, x0=x0, random_state=0,
                   callback=None if control is None else control.solve_callback)
    if result.status == "callback":
        control.check()
    return result.x


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
