"""``optimizer="ml"``: the log marginal likelihood maximised by L-BFGS-B on
the log-parameters, with its analytic gradient.

Up to :data:`EXACT_MAX_SAMPLES` samples it is computed exactly, by a dense
Cholesky factorization (O(n^3) time, O(n^2) memory).  Above, it is
estimated without factorizing (:mod:`.ml_iterative`: preconditioned
conjugate gradients, stochastic Lanczos quadrature and Hutchinson's trace
estimator), with the kernel matrix kept while it fits the memory available
(a matrix product per iteration), and evaluated on the fly beyond (O(n)
memory).  :func:`ml_plan` makes the choice."""
import math
import warnings

import numpy as np
import scipy.linalg

from .common import Stopped, convergence_warning, describe_theta, lbfgs, start_points
from .executors import local_tasks, threads_per_task


#: the dense matrices of the tasks running at once may take at most this
#: fraction of the memory available when the fit starts
DENSE_MEMORY_FRACTION = 0.8
#: the largest number of samples whose marginal likelihood is computed
#: exactly; above, an evaluation by estimates is faster by a factor that
#: grows like n (4.2 s against 10.4 s at n = 4,000 on two cores), but its
#: log-determinant is an estimate
EXACT_MAX_SAMPLES = 5000
#: the methods of :func:`ml_plan`
ML_METHODS = ("exact", "stored", "streamed")


def dense_bytes(n):
    """Memory of one marginal-likelihood evaluation: the n x n matrix, its
    factor and its inverse all take its place."""
    return 8.0 * n * n


def _raise_if_stopped(info, control):
    """Raise :class:`Stopped` when a panel factorization returned a stop
    code (Ctrl-C or the flag: "interrupted"; the deadline: "max_time")."""
    from ...core._dense import INTERRUPTED

    if info < 0:
        raise Stopped("interrupted" if info == INTERRUPTED and (
            control is None or control.reason != "max_time") else "max_time")


def log_marginal_likelihood(space, theta, X, y, eval_gradient=True, n_threads=None,
                            control=None, return_alpha=False):
    """log p(y | X, theta) and its gradient with respect to theta, by a dense
    Cholesky factorization of C = K + noise I.

    The gradient is ``0.5 tr((alpha alpha^T - C^-1) dC/dtheta_p)``: the
    compiled contraction of W = 0.5 (alpha alpha^T - C^-1) with the kernel's
    derivatives (each pair once), and ``0.5 noise (alpha^T alpha - tr C^-1)``
    for the noise.  Returns (-inf, zeros) when C is not positive definite.

    The factorization and the inverse run by panels
    (:mod:`bcd.core._dense`), in the place of C, and stop between panels
    when ``control`` (a :class:`~.common.Control`) says so, raising
    :class:`~.common.Stopped`.  With ``return_alpha`` a third item is
    alpha = C^-1 y."""
    from ...core._dense import cholesky, inverse_from_cholesky

    kernel, noise = space.unpack(theta)
    n = X.shape[0]
    deadline, flag = (math.inf, None) if control is None else (control.deadline, control.flag)
    # evaluator.matrix() is Fortran-ordered: the factorization works on it in place
    C = kernel.evaluator(X, n_threads=n_threads).matrix()
    C[np.diag_indices(n)] += noise
    failed = (-np.inf, np.zeros(space.size)) + ((None,) if return_alpha else ())
    info = cholesky(C, deadline=deadline, cancel=flag)
    _raise_if_stopped(info, control)
    if info > 0:
        return failed
    U = C
    alpha, info = scipy.linalg.lapack.dpotrs(U, y, lower=0)
    logdet = 2.0 * np.sum(np.log(np.diag(U)))
    lml = -0.5 * float(y @ alpha) - 0.5 * logdet - 0.5 * n * math.log(2 * math.pi)
    if not eval_gradient:
        return (lml, None, alpha) if return_alpha else (lml, None)
    info = inverse_from_cholesky(U, deadline=deadline, cancel=flag)
    _raise_if_stopped(info, control)
    if info > 0:
        return failed
    Cinv = U
    trace = float(np.trace(Cinv))
    # W = 0.5 alpha alpha^T - 0.5 C^-1; upper triangle (Fortran) = lower (C order)
    Cinv *= -0.5
    W = scipy.linalg.blas.dger(0.5, alpha, alpha, a=Cinv, overwrite_a=1)
    grad = np.empty(space.size)
    if space.n_kernel:
        grad[:space.n_kernel] = kernel.gradient(X, n_threads=n_threads).dense(W.T, symmetric=True)
    if space.learn_noise:
        grad[-1] = 0.5 * noise * (float(alpha @ alpha) - trace)
    return (lml, grad, alpha) if return_alpha else (lml, grad)


def evaluate(method, space, theta, X, y, n_threads=None, control=None, return_alpha=False):
    """The log marginal likelihood and its gradient by ``method`` (one of
    :data:`ML_METHODS`)."""
    if method == "exact":
        return log_marginal_likelihood(space, theta, X, y, n_threads=n_threads,
                                       control=control, return_alpha=return_alpha)
    from .ml_iterative import log_marginal_likelihood_iterative
    return log_marginal_likelihood_iterative(space, theta, X, y, n_threads=n_threads,
                                             control=control, return_alpha=return_alpha,
                                             store=method == "stored")


def ml_task(X, y, space, theta0, n_threads=None, maxiter=15000, control=None, progress=None,
            label="", method="exact"):
    """One L-BFGS-B run from theta0: (theta, -lml, history, converged, message,
    iterations, evaluations, alpha at theta (None if unknown), why it stopped
    early (None, "interrupted" or "max_time"))."""
    def fun(theta):
        lml, grad, alpha = evaluate(method, space, theta, X, y, n_threads=n_threads,
                                    control=control, return_alpha=True)
        return -lml, -grad, alpha

    def report(k, value, theta):
        progress.show(f"ml{label}: iteration {k}  log marginal likelihood {-value:.8g}  "
                      f"{describe_theta(space, theta)}  time {progress.elapsed():.1f}s")

    if method == "exact":
        res, history = lbfgs(fun, theta0, space.bounds, maxiter, control,
                             None if progress is None else report)
    else:
        from .ml_iterative import gradient_lbfgs
        res, history = gradient_lbfgs(fun, theta0, space.bounds, control=control,
                                      report=None if progress is None else report)
    return (res.x, float(res.fun), history, bool(res.success), str(res.message), int(res.nit),
            int(res.nfev), res.extra, res.stopped)


def ml_plan(n, n_tasks, available=None):
    """(method, tasks): how the marginal likelihood of n samples is
    evaluated, one of :data:`ML_METHODS`, and how many of ``n_tasks``
    starts may run at once within the memory available (``available``
    bytes; default: what the system reports).

    ``"exact"`` (dense Cholesky) up to :data:`EXACT_MAX_SAMPLES` samples
    while the matrix fits; ``"stored"`` (estimates, the kernel matrix kept as
    its lower block triangle, about 4 n^2 bytes) while it fits;
    ``"streamed"`` (estimates, the kernel evaluated on the fly) beyond, one
    task per core's share as for any other start."""
    from ..._resources import available_memory
    from .ml_iterative import stored_bytes

    if available is None:
        available = available_memory()
    method = "exact" if n <= EXACT_MAX_SAMPLES else "stored"
    need = dense_bytes(n) if method == "exact" else stored_bytes(n)
    if available is None:
        fits = n_tasks
    else:
        fits = int(DENSE_MEMORY_FRACTION * available // need)
    if fits < 1:
        return "streamed", n_tasks
    return method, max(1, min(n_tasks, fits))


def fit_ml(space, X, y, n_restarts, rng, executor, progress=None, maxiter=15000,
           candidates=None, control=None):
    """L-BFGS-B from the kernel's theta, the ``candidates`` and ``n_restarts``
    log-uniform draws (one task each); the best run by the marginal
    likelihood."""
    starts = start_points(space, rng, n_restarts, candidates)
    method = ml_plan(X.shape[0], 1)[0]
    Xf, yf = executor.scatter(X), executor.scatter(y)
    nt = threads_per_task(executor)
    # progress lines come from the tasks of a local pool (a Dask worker's
    # output is not the caller's)
    local = progress if local_tasks(executor) else None
    futures = [executor.submit(ml_task, Xf, yf, space, t0, nt, maxiter, control, local,
                               f" (start {i + 1} of {len(starts)})" if len(starts) > 1 else "",
                               method)
               for i, t0 in enumerate(starts)]
    runs = executor.gather(futures)
    best = min(range(len(runs)), key=lambda i: runs[i][1])
    theta, obj, history, ok, message, nit, nfev, alpha, stopped = runs[best]
    stopped = next((r[8] for r in runs if r[8] is not None), None)
    if not np.isfinite(obj):
        raise Stopped(stopped or "interrupted")
    if progress is not None:
        progress.end(f"ml: log marginal likelihood {-obj:.8g} after {nit} iterations "
                     f"(best of {len(runs)} starts)  time {progress.elapsed():.1f}s")
    if not ok and stopped is None:
        warnings.warn(f"The L-BFGS-B fit of the hyperparameters stopped before converging "
                      f"({message}); the best hyperparameters found are kept.",
                      convergence_warning(), stacklevel=4)
    return dict(theta=theta, lml=-obj, history=np.asarray(history), runs=runs, method=method,
                n_iter=nit, n_evaluations=nfev, alpha=alpha, stopped=stopped,
                starts=[dict(start=s, theta=r[0], lml=-r[1]) for s, r in zip(starts, runs)])
