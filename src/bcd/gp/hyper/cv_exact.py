"""``optimizer="cv"``: the cross-validation error minimized by L-BFGS-B with
its exact gradient, by GBCD solves warm-started at the previous
evaluation's."""
import copy
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .common import Stopped, convergence_warning, describe_theta, exact_solve, lbfgs, make_folds, start_points
from .executors import local_tasks, threads_per_task, wait_all


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
        self.control = options.get("control")
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
                           n_threads=self.n_threads, control=self.control)

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
    progress = options.get("progress")

    def report(k, value, theta):
        progress.show(f"cv (fold with {len(val)} validation points): iteration {k}  "
                      f"validation MSE {value:.6g}  {describe_theta(space, theta)}  "
                      f"time {progress.elapsed():.1f}s")

    res, history = lbfgs(fun, theta0, _cv_bounds(space, theta0), options["max_iter"],
                         options.get("control"), None if progress is None else report)
    return (res.x, float(res.fun), history, bool(res.success), str(res.message),
            int(res.nit), int(res.nfev), res.stopped)


def fit_cv(space, X, y, cv, scheme, n_restarts, rng, executor, options=None, progress=None,
           candidates=None, control=None):
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
    opts["control"] = control
    opts["progress"] = progress if local_tasks(executor) else None
    folds = make_folds(X.shape[0], cv, rng)
    starts = [space.clip(np.asarray(t, dtype=np.float64))
              for t in start_points(space, rng, n_restarts, candidates)]
    Xf, yf = executor.scatter(X), executor.scatter(y)
    nt = threads_per_task(executor)
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
                              f"{describe_theta(space, theta)}  time {progress.elapsed():.1f}s")
            return value, grad

        res, history = lbfgs(fun, theta0, _cv_bounds(space, theta0), opts["max_iter"],
                             control)
        return dict(theta=res.x, cv_mse=float(res.fun), history=np.asarray(history),
                    converged=bool(res.success), message=str(res.message),
                    n_iter=int(res.nit), n_evaluations=int(res.nfev), stopped=res.stopped)

    def naive(theta0):
        runs = executor.gather([executor.submit(cv_fold_run, Xf, yf, v, t, space, theta0,
                                                opts, nt) for v, t in folds])
        theta = space.clip(np.mean([r[0] for r in runs], axis=0))
        stopped = next((r[7] for r in runs if r[7] is not None), None)
        if stopped is not None:
            # no time for the error at the average: the best fold's value stands in
            return dict(theta=theta, cv_mse=float(np.mean([r[1] for r in runs])),
                        history=np.zeros(0), converged=False, message=f"stopped ({stopped})",
                        n_iter=max(r[5] for r in runs), n_evaluations=sum(r[6] for r in runs),
                        stopped=stopped)
        value, _ = evaluate(init(), theta, gradient=False)
        length = max(len(r[2]) for r in runs)
        history = np.mean([np.concatenate([r[2], np.full(length - len(r[2]),
                                                         r[2][-1] if r[2] else np.nan)])
                           for r in runs], axis=0) if length else np.zeros(0)
        failed = [r[4] for r in runs if not r[3]]
        return dict(theta=theta, cv_mse=value, history=history, converged=not failed,
                    message=failed[0] if failed else "", n_iter=max(r[5] for r in runs),
                    n_evaluations=sum(r[6] for r in runs), stopped=None)

    run = naive if scheme == "naive" and K > 1 else shared
    # one driver thread per start: its tasks run on the executor
    with ThreadPoolExecutor(max(1, len(starts))) as drivers:
        results = wait_all([drivers.submit(run, t0) for t0 in starts], control)
    best = int(np.argmin([r["cv_mse"] for r in results]))
    out = results[best]
    out["stopped"] = next((r["stopped"] for r in results if r["stopped"] is not None), None)
    if not np.isfinite(out["cv_mse"]):
        raise Stopped(out["stopped"] or "interrupted")
    if not out["converged"] and out["stopped"] is None:
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
