"""``optimizer="cv_admm"``: cross-validation by the non-linearly
constrained ADMM of Xu, Yin, Zhang, Luo and Cui (hold-out, and K-fold in the
naive and the consensus form)."""
import copy
import math
import warnings

import numpy as np

from .common import convergence_warning, describe_theta, exact_solve, make_folds, start_points
from .executors import local_tasks, threads_per_task

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
        self.control = self.opts.pop("control", None)
        self.progress = self.opts.pop("progress", None)
        self.stopped = None
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
        self.z = exact_solve(space, perturbed, self.XT, self.yT, tol, n_threads=n_threads,
                             control=self.control)
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
            if self.control is not None:
                self.stopped = self.control.stopped()
                if self.stopped is not None:
                    break
            change = self.iterate()
            if self.progress is not None:
                self.progress.show(f"cv_admm (hold-out of {self.nv} points): iteration "
                                   f"{self.n_iter}  validation MSE {self.merit:.6g}  "
                                   f"{describe_theta(self.space, self.theta)}  time "
                                   f"{self.progress.elapsed():.1f}s")
            if self.stalled(change):
                self.converged = True
                break
        if not self.converged and np.isfinite(self.best[0]):
            self.theta = self.best[1]
        return self

    def validation_mse(self, theta, tol):
        """Mean squared validation error at theta with z = C_T^-1 y_T solved by
        bcd.solve, warm-started at the ADMM's z."""
        z = exact_solve(self.space, theta, self.XT, self.yT, tol, x0=self.z,
                        n_threads=self.n_threads, control=self.control)
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
                converged=state.converged, rhos=np.asarray(state.rhos), stopped=state.stopped)


def fit_cv_admm(space, X, y, cv, scheme, n_restarts, rng, executor, options, tol,
                progress=None, candidates=None, control=None):
    """Cross-validation ADMM from theta0, the ``candidates`` and
    ``n_restarts`` log-uniform draws: the start with the lowest
    cross-validation error."""
    opts = dict(ADMM_DEFAULTS)
    opts.update(options or {})
    opts["control"] = control
    opts["progress"] = progress if local_tasks(executor) else None
    folds = make_folds(X.shape[0], cv, rng)
    # the perturbations of z0, the same for every start: a start's result does
    # not depend on the other starts
    seeds = rng.integers(0, 2**31 - 1, size=len(folds))
    starts = start_points(space, rng, n_restarts, candidates)
    Xf, yf = executor.scatter(X), executor.scatter(y)
    nt = threads_per_task(executor)
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
        stopped = next((s["stopped"] for row in summaries for s in row
                        if s["stopped"] is not None), None)
        if progress is not None:
            progress.show(f"cv_admm ({scheme}, {len(folds)} folds): {max(n_iter)} "
                          f"iterations  time {progress.elapsed():.1f}s", force=True)
    else:
        thetas, histories, converged, n_iter, states, consensus_rhos, stopped = _consensus(
            space, Xf, yf, folds, starts, seeds, opts, executor, nt, progress, control)
    if stopped is not None:
        # no time for the exact validation errors: the first start's result
        return dict(theta=thetas[0], cv_mse=np.nan, history=histories[0], n_iter=n_iter[0],
                    thetas=thetas, folds=folds, stopped=stopped,
                    starts=[dict(start=s, theta=t, cv_mse=np.nan)
                            for s, t in zip(starts, thetas)])
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
                stopped=None,
                starts=[dict(start=s, theta=t, cv_mse=c) for s, t, c in
                        zip(starts, thetas, scores)])


def _consensus(space, Xf, yf, folds, starts, seeds, opts, executor, nt, progress,
               control=None):
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
    stopped = None
    for it in range(int(opts["max_iter"])):
        cand = [c for c in range(n_c) if active[c]]
        stopped = None if control is None else control.stopped()
        if not cand or stopped is not None:
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
                          f"{describe_theta(space, centers[cand[0]])}  "
                          f"time {progress.elapsed():.1f}s")
    thetas = [centers[c] if converged[c] or not np.isfinite(best[c][0]) else best[c][1]
              for c in range(n_c)]
    return (thetas, [np.asarray(h) for h in histories], converged, n_iter, states,
            [np.asarray(r) for r in rho_history], stopped)
