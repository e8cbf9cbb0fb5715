"""GBCD against dense Cholesky and matrix-free conjugate gradients on
Friedman1 (``python -m bcd gp-demo`` and the scaling benchmark)."""
import json
import resource
import sys
import time

import numpy as np

from bcd import GaussianProcess, datasets, solve
from bcd.gp import SquaredExponential

from ._common import Status

#: fixed hyperparameters of the comparison
LENGTHSCALE = 2.0
VARIANCE = 1.0
NOISE = 0.05
TOL = 1e-4
SOLVERS = ("gbcd", "cholesky", "cg", "cg-numpy")
#: the solvers of the demo by default (cg-numpy is a slow reference)
DEFAULT_SOLVERS = ("gbcd", "cholesky", "cg")


def _rss_mb():
    """Peak resident set size of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rmse(y, m):
    """Normalized test RMSE (Bo and Sminchisescu, eq. 16)."""
    return float(np.sqrt(np.mean((y - m) ** 2) / np.var(y)))


def run_solver(name, n_train, n_test=1000, max_time=None, random_state=0, block_size=500,
               progress=False):
    """Train one solver on Friedman1 and return its figures as a dict:
    seconds, iterations, ``||(K + noise I) alpha - y||_inf``, test RMSE and
    the peak RSS before and after training (MB).  ``progress`` shows the
    iterative solvers' progress on one self-updating line."""
    X, y, Xt, yt = datasets.make_friedman1(n_train, n_test, random_state=random_state)
    kernel = SquaredExponential(LENGTHSCALE, VARIANCE)
    problem = GaussianProcess(X, y, kernel, NOISE)
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    if name == "gbcd":
        res = solve(problem, rule="gbcd", block_size=min(block_size, n_train), update="exact",
                    tol=TOL, max_iter=10**7, max_time=max_time, random_state=random_state,
                    verbose=2 if progress else False)
        alpha, iters = res.x, res.n_iter
    elif name == "cholesky":
        import scipy.linalg
        K = kernel(X)
        K[np.diag_indices_from(K)] += NOISE
        alpha = scipy.linalg.cho_solve(scipy.linalg.cho_factor(K, overwrite_a=True), y)
        iters = 0
        del K
    elif name == "cg":
        alpha, iters = _conjugate_gradient(problem.matvec, problem.y, max_time, progress)
    elif name == "cg-numpy":
        alpha, iters = _conjugate_gradient(_numpy_kernel_matvec(X), problem.y, max_time,
                                           progress)
    else:
        raise ValueError(f"solver must be one of {SOLVERS}, got {name!r}.")
    seconds = time.perf_counter() - t0
    peak = _rss_mb()
    grad = float(np.abs(problem.gradient(alpha)).max())
    mean = kernel.evaluator(Xt, X).matvec(alpha)
    return dict(solver=name, n=n_train, seconds=seconds, iterations=int(iters), grad_inf=grad,
                rmse=_rmse(yt, mean), rss_before_mb=rss0, rss_peak_mb=peak)


def _numpy_kernel_matvec(X, chunk=1000):
    """v -> (K + noise I) v with K recomputed by SciPy/NumPy (``cdist`` and
    ``exp`` over blocks of rows) for every product: the textbook matrix-free
    reference, without the compiled kernel."""
    from scipy.spatial.distance import cdist

    Z = X / LENGTHSCALE

    def matvec(v):
        out = NOISE * v
        for start in range(0, Z.shape[0], chunk):
            block = cdist(Z[start:start + chunk], Z, "sqeuclidean")
            np.exp(-0.5 * block, out=block)
            out[start:start + chunk] += VARIANCE * (block @ v)
        return out
    return matvec


def _conjugate_gradient(matvec, y, max_time, progress=False):
    """CG on (K + noise I) alpha = y, ``matvec`` recomputing K for every product."""
    shown = Status() if progress else None
    x = np.zeros_like(y)
    r = y.copy()
    p = r.copy()
    rr = r @ r
    t0 = time.perf_counter()
    it = 0
    while np.abs(r).max() > TOL:
        if max_time is not None and time.perf_counter() - t0 > max_time:
            break
        Ap = matvec(p)
        step = rr / (p @ Ap)
        x += step * p
        r -= step * Ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
        it += 1
        if shown is not None and shown.due():
            shown.show(f"CG iteration {it}, residual {np.abs(r).max():.3e}, "
                       f"{shown.elapsed():.0f}s")
    if shown is not None:
        shown.clear()
    return x, it


#: the demo's default size: where GBCD is meant to be used (on two cores it
#: overtakes the dense factorization between 5,000 and 10,000 points)
N_TRAIN = 10000


def demo(n_train=N_TRAIN, n_test=1000, solvers=DEFAULT_SOLVERS, cg_max_time=300.0,
         out=sys.stdout):
    """Print the comparison table for one training size (the iterative
    solvers' progress on one self-updating line when ``out`` is a
    terminal), then where GBCD pays off."""
    print(f"Friedman1: {n_train} training and {n_test} test points, 10 inputs, unit-variance "
          f"noise, inputs and outputs standardized.", file=out)
    print(f"Kernel: SquaredExponential(lengthscale={LENGTHSCALE:g}, variance={VARIANCE:g}); "
          f"noise variance {NOISE:g}; stop at ||(K + noise I) alpha - y||_inf <= {TOL:g}.",
          file=out)
    print(f"{'solver':<10} {'seconds':>9} {'iterations':>10} {'||g||_inf':>10} "
          f"{'test RMSE':>9}", file=out)
    rows = []
    isatty = getattr(out, "isatty", None)
    progress = bool(isatty and isatty())
    for name in solvers:
        if name == "cholesky" and 8.0 * n_train ** 2 > 8e9:
            print(f"{name:<10} skipped: the dense kernel needs {8e-9 * n_train ** 2:.0f} GB",
                  file=out)
            continue
        row = run_solver(name, n_train, n_test, max_time=cg_max_time if name == "cg" else None,
                         progress=progress)
        rows.append(row)
        note = "" if row["grad_inf"] <= TOL * 1.0001 or name == "cholesky" else \
            "  (stopped by the time limit)"
        print(f"{name:<10} {row['seconds']:9.2f} {row['iterations']:10d} "
              f"{row['grad_inf']:10.2e} {row['rmse']:9.4f}{note}", file=out)
    print("Dense Cholesky takes O(n^3) time and O(n^2) memory, GBCD O(n) memory: GBCD is for "
          "the sizes where the factorization is slow or does not fit. It overtakes Cholesky "
          "between 5,000 and 10,000 points on 2 cores, and near 20,000 on 16 (the README's "
          "tables); bcd.solve(problem) with no options picks the faster by a measured cost "
          "model.", file=out)
    return rows


if __name__ == "__main__":
    # one solver in a process of its own, for peak-memory figures:
    # python -m experiments.gp_demo SOLVER N_TRAIN [MAX_TIME]
    max_time = float(sys.argv[3]) if len(sys.argv) > 3 else None
    print(json.dumps(run_solver(sys.argv[1], int(sys.argv[2]), max_time=max_time)))
