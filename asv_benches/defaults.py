"""Speed as a user gets it: ``bcd.solve(problem)`` with no options against
the fastest peer, in one process.

Usage, from the repository root with bcd installed::

    python -m asv_benches.defaults              # every row, 3 repeats
    python -m asv_benches.defaults --max-time 20

Every bcd row calls ``bcd.solve(problem, max_time=...)`` and nothing else:
the default rule, blocks, update and tolerance (``||grad f||_inf <= 1e-6``,
or the KKT residual with a penalty).  A run that stops on ``max_time`` is
reported as such, with the optimality it reached, and gets no ratio (so
does a run that stops on the default ``max_iter``).  Each peer is fitted with
a tight tolerance and its solution's optimality on bcd's objective is shown
next to it; the ratio compares wall times (median of the repeats, problem
construction included for bcd).  BLAS runs on one thread unless
``--blas-threads`` says otherwise: on a 2-core machine with other load, a
multi-threaded OpenBLAS took 8 ms for a dot product of 29,000 entries that
takes 6 us on one thread, which decides rows that take milliseconds.
"""
import argparse
import time
import warnings

import numpy as np

import bcd

from .benchmarks.common import fmt_time, limit_blas, median, paper_dataset


def _timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return median(times), out


def _bcd(make, max_time, repeats):
    def run():
        problem = make()
        return problem, bcd.solve(problem, max_time=max_time)
    seconds, (problem, result) = _timed(run, repeats)
    return seconds, problem, result


def _optimality(problem, x):
    g = problem.gradient(x)
    if problem.penalty is None:
        return float(np.abs(g).max())
    return problem.penalty.optimality(x, g)


def _logistic(label, A, y, solver, max_time, repeats):
    """L2-logistic (l2 = 1, no intercept) against scikit-learn's ``solver``."""
    from sklearn.linear_model import LogisticRegression
    seconds, problem, result = _bcd(lambda: bcd.Logistic(A, y, l2=1.0), max_time, repeats)
    peer_s, model = _timed(lambda: LogisticRegression(
        C=1.0, solver=solver, fit_intercept=False, tol=1e-8, max_iter=10000).fit(A, y),
        repeats)
    return (label, seconds, result, solver if solver == "liblinear" else f"sklearn {solver}",
            peer_s, _optimality(problem, model.coef_.ravel()))


def logistic_b(max_time, repeats):
    A, y = paper_dataset("B")
    return _logistic("logistic B (l2=1)", A, y, "liblinear", max_time, repeats)


def multinomial_c(max_time, repeats):
    from sklearn.linear_model import LogisticRegression
    A, y = paper_dataset("C")
    seconds, problem, result = _bcd(lambda: bcd.Multinomial(A, y, l2=1.0), max_time, repeats)
    peer_s, model = _timed(lambda: LogisticRegression(
        C=1.0, solver="lbfgs", fit_intercept=False, tol=1e-10, max_iter=10000).fit(A, y),
        repeats)
    return ("multinomial C (l2=1)", seconds, result, "sklearn lbfgs", peer_s,
            _optimality(problem, model.coef_.T.ravel()))


def lasso_a(max_time, repeats):
    from sklearn.linear_model import Lasso
    A, b = paper_dataset("A")
    lam = 5e4
    seconds, problem, result = _bcd(lambda: bcd.LeastSquares(A, b, penalty=bcd.L1(lam)),
                                    max_time, repeats)
    m = A.shape[0]
    peer_s, model = _timed(lambda: Lasso(alpha=lam / m, fit_intercept=False, tol=1e-10,
                                         max_iter=100000).fit(A, b), repeats)
    return ("Lasso A (lambda=5e4)", seconds, result, "sklearn Lasso", peer_s,
            _optimality(problem, model.coef_))


def ridge_a(max_time, repeats):
    from scipy.sparse.linalg import lsqr
    A, b = paper_dataset("A")
    seconds, problem, result = _bcd(lambda: bcd.LeastSquares(A, b, l2=1.0), max_time, repeats)
    peer_s, out = _timed(lambda: lsqr(A, b, damp=1.0, atol=1e-14, btol=1e-14,
                                      iter_lim=100000), repeats)
    return ("ridge A (l2=1)", seconds, result, "scipy lsqr", peer_s,
            _optimality(problem, out[0]))


def poisson(max_time, repeats):
    from sklearn.linear_model import PoissonRegressor
    rs = np.random.RandomState(0)
    A = rs.randn(5000, 200) * 0.1
    y = rs.poisson(np.exp(A @ rs.randn(200) * 0.5)).astype(float)
    alpha = 1e-3
    seconds, problem, result = _bcd(lambda: bcd.Poisson(A, y, l2=A.shape[0] * alpha),
                                    max_time, repeats)
    peer_s, model = _timed(lambda: PoissonRegressor(
        alpha=alpha, fit_intercept=False, solver="newton-cholesky", tol=1e-12,
        max_iter=1000).fit(A, y), repeats)
    return ("Poisson 5000 x 200", seconds, result, "sklearn newton-cholesky", peer_s,
            _optimality(problem, model.coef_))


def logistic_dense(max_time, repeats):
    from sklearn.datasets import make_classification
    A, y = make_classification(20000, 500, random_state=0)
    return _logistic("logistic dense 20000 x 500 (l2=1)", A, y, "lbfgs", max_time, repeats)


def label_propagation(max_time, repeats):
    from scipy.sparse.linalg import spsolve
    W, labels = bcd.datasets.make_lattice_dataset(size=300, n_labelled=3600, weight=1e4,
                                                  random_state=1)
    seconds, problem, result = _bcd(lambda: bcd.LabelPropagation(W, labels), max_time,
                                    repeats)
    peer_s, x = _timed(lambda: spsolve(problem.Q.tocsc(), problem.c), repeats)
    return ("label propagation, 300 x 300 lattice", seconds, result, "spsolve", peer_s,
            _optimality(problem, x))


def _gaussian_process(n, max_time, repeats):
    import scipy.linalg
    X, y, _, _ = bcd.datasets.make_friedman1(n, 10, random_state=0)
    kernel = bcd.gp.SquaredExponential(lengthscale=2.0)
    seconds, problem, result = _bcd(lambda: bcd.GaussianProcess(X, y, kernel, noise=0.05),
                                    max_time, repeats)

    def cholesky():
        K = kernel(X)
        K[np.diag_indices_from(K)] += 0.05
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(K, overwrite_a=True), y)
    peer_s, alpha = _timed(cholesky, repeats)
    return (f"GP Friedman1 n={n}", seconds, result, "dense Cholesky", peer_s,
            _optimality(problem, alpha))


def gaussian_process(max_time, repeats):
    """n = 3000: the dense row of the automatic choice."""
    return _gaussian_process(3000, max_time, repeats)


def gaussian_process_large(max_time, repeats):
    """n = 10000: greedy blocks (GBCD)."""
    return _gaussian_process(10000, max_time, repeats)


ROWS = [logistic_b, multinomial_c, lasso_a, ridge_a, poisson, logistic_dense, label_propagation,
        gaussian_process, gaussian_process_large]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-time", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: every solver compared runs on one "
                             "core, and the timings do not depend on other load)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", bcd.ConvergenceWarning)
    limit_blas(args.blas_threads)
    print(f"{'problem':38} {'bcd default':>12} {'status':>9} {'optimality':>10} "
          f"{'peer':>24} {'peer time':>10} {'peer opt.':>10} {'ratio':>8}")
    for row in ROWS:
        name, seconds, result, peer, peer_s, peer_opt = row(args.max_time, args.repeats)
        # a ratio means something only when bcd reached its tolerance
        ratio = f"{seconds / peer_s:7.1f}x" if result.converged else "     n/a"
        print(f"{name:38} {fmt_time(seconds):>12} {result.status:>9} "
              f"{result.optimality:10.2e} {peer:>24} {fmt_time(peer_s):>10} "
              f"{peer_opt:10.2e} {ratio}", flush=True)
        chosen = bcd.core.auto.configuration(result.options)
        print(f"{'':38}   options: {chosen}")


if __name__ == "__main__":
    main()
