"""``optimizer="ml"``: the log marginal likelihood maximised by L-BFGS-B on
the log-parameters, with its analytic gradient, by a dense Cholesky
factorization (O(n^3) time, O(n^2) memory)."""
import math
import warnings

import numpy as np
import scipy.linalg

from .common import convergence_warning, lbfgs, start_points
from .executors import threads_per_task


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

    res, history = lbfgs(fun, theta0, space.bounds, maxiter)
    return (res.x, float(res.fun), history, bool(res.success), str(res.message), int(res.nit),
            int(res.nfev))


def fit_ml(space, X, y, n_restarts, rng, executor, progress=None, maxiter=15000,
           candidates=None):
    """L-BFGS-B from the kernel's theta, the ``candidates`` and ``n_restarts``
    log-uniform draws (one task each); the best run by the marginal
    likelihood."""
    starts = start_points(space, rng, n_restarts, candidates)
    Xf, yf = executor.scatter(X), executor.scatter(y)
    nt = threads_per_task(executor)
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
