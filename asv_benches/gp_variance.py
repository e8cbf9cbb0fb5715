"""Predictive variances of GPRegressor beyond the dense Cholesky: the
``"lowrank"`` method's time, memory, rank and error against exact (dense
Cholesky) variances where those are affordable, and the certified bounds.

Friedman1 (``bcd.datasets.make_friedman1(n, n_test, random_state=0)``) with
the README's kernel (squared exponential, length-scale 2, unit variance,
noise 0.05), or with the hyperparameters that ``optimizer="ml"`` learns on
the first 5,000 training points (``--learned``).  The variances do not
depend on the weights alpha, so the model is fitted with ``--fit-max-iter``
block updates only (default 1: a ConvergenceWarning, ignored here).

Printed per run: seconds of ``predict(X_test, return_std=True)`` and how
they split (the pivoted Cholesky and the estimate; when the factorization
gives up, the kernel blocks k(X, X*), the low-rank products, the
neighbours' systems and the diagonal bound of the certified upper bound
returned instead), the rank, the largest residual diagonal over the noise,
why the factorization stopped, what was returned, whether predict warned,
the peak resident memory of the process (``resource.getrusage``); with
``--bounds``, the seconds and peak memory of ``variance_bounds`` and the
certified error (upper minus lower bound: absolute, relative to the upper
bound); with ``--exact``, the median and largest relative error of the
returned variances against the exact ones (and of both bounds).

Usage, from the repository root with bcd installed::

    python -m asv_benches.gp_variance --n 100000 --n-test 10000 --learned
    python -m asv_benches.gp_variance --n 20000 30000 --n-test 1000 --exact --bounds --learned
    python -m asv_benches.gp_variance --n 20000 --n-test 1000 --exact --bounds

``--rank 256 --residual 0 --bounds`` measures the former defaults (256
pivots; their certified upper bound is what ``variance_bounds`` returns).

Target: 10,000 test points at 100,000 training points in at most 60 s
(2 cores, ``OPENBLAS_NUM_THREADS`` unset).
"""
import argparse
import json
import resource
import time
import warnings


def learned_hyperparameters(seed=0, n=5000):
    """The kernel and noise that ``optimizer="ml"`` learns on Friedman1's
    first ``n`` training points, starting from the README's."""
    from bcd import datasets
    from bcd.gp import GPRegressor, SquaredExponential
    X, y, _, _ = datasets.make_friedman1(n, 1, random_state=seed)
    gp = GPRegressor(SquaredExponential(2.0), noise=0.05, optimizer="ml").fit(X, y)
    return gp.kernel_, gp.noise_


def exact_variance(kernel, noise, X, Xt):
    """k(x, x) - k^T (K + noise I)^-1 k by bcd's panel-blocked Cholesky."""
    import numpy as np
    import scipy.linalg
    from bcd.core._dense import cholesky
    U = np.asfortranarray(kernel(X))
    U[np.diag_indices_from(U)] += noise
    info = cholesky(U)
    if info != 0:
        raise RuntimeError(f"the Cholesky factorization failed (info={info})")
    out = np.empty(Xt.shape[0])
    for start in range(0, Xt.shape[0], 1024):
        Xb = Xt[start:start + 1024]
        W = scipy.linalg.solve_triangular(U, kernel(X, Xb), trans="T", lower=False,
                                          check_finite=False)
        out[start:start + 1024] = kernel.diag(Xb) - np.einsum("ij,ij->j", W, W)
    return out


def measure(n, n_test, rank, neighbors, residual, kernel, noise, exact, bounds, fit_max_iter):
    import numpy as np
    from bcd import datasets
    from bcd.gp import GPRegressor
    X, y, Xt, _ = datasets.make_friedman1(n, n_test, random_state=0)
    gp = GPRegressor(kernel, noise=noise, variance="lowrank", variance_rank=rank,
                     variance_neighbors=neighbors, variance_residual=residual,
                     max_iter=fit_max_iter, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        _, std = gp.predict(Xt, return_std=True)
        seconds = time.perf_counter() - start
    returned = std ** 2
    factor = gp._lowrank
    info = dict(gp.variance_info_)
    prior = gp.kernel_.diag(Xt)
    out = dict(n=n, n_test=n_test, seconds=round(seconds, 2),
               split={k: round(v, 2) for k, v in factor.seconds.items()},
               rank=factor.rank, residual=round(info["residual"], 5),
               stopped=info["stopped"], estimate=info["estimate"],
               warned=any(w.category.__name__ == "ConvergenceWarning" for w in caught),
               peak_rss_gb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
               factors_gb=round(factor.nbytes / 2**30, 3),
               returned_median=float(np.median(returned)))
    if bounds:
        start = time.perf_counter()
        lower, upper = gp.variance_bounds(Xt)
        info = gp.variance_info_
        out.update(bounds_seconds=round(time.perf_counter() - start, 2),
                   bounds_peak_rss_gb=round(
                       resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
                   bound_rank=info["bound_rank"], neighbors=info["neighbors"],
                   certified_max=float(np.max(upper - lower)),
                   certified_max_rel=info["max_relative_error"],
                   certified_median_rel=info["median_relative_error"],
                   within_bounds=float(np.mean((returned >= lower * (1 - 1e-12))
                                               & (returned <= upper * (1 + 1e-12)))))
    if exact:
        var = exact_variance(gp.kernel_, gp.noise_, X, Xt)
        rel = (returned - var) / np.maximum(var, 1e-12 * prior)
        out.update(exact_median=float(np.median(var)),
                   err_median_rel=float(np.median(np.abs(rel))),
                   err_max_rel=float(np.max(np.abs(rel))),
                   err_bias_rel=float(np.median(rel)))
        if bounds:
            err_u, err_l = upper - var, var - lower
            floor = 1e-12 * prior
            out.update(upper_err_median_rel=float(np.median(err_u / np.maximum(var, floor))),
                       lower_err_median_rel=float(np.median(err_l / np.maximum(var, floor))),
                       bounds_hold=bool(np.all(err_u >= -1e-9 * prior)
                                        and np.all(err_l >= -1e-9 * prior)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100000])
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--rank", type=int, default=4096)
    parser.add_argument("--residual", type=float, default=0.002)
    parser.add_argument("--neighbors", type=int, default=1536)
    parser.add_argument("--exact", action="store_true",
                        help="also compute exact variances (dense; n up to ~20,000)")
    parser.add_argument("--bounds", action="store_true",
                        help="also time variance_bounds (the certified bounds)")
    parser.add_argument("--learned", action="store_true",
                        help="hyperparameters learned by optimizer='ml' on 5,000 points")
    parser.add_argument("--fit-max-iter", type=int, default=1)
    args = parser.parse_args(argv)
    from bcd.gp import SquaredExponential
    if args.learned:
        kernel, noise = learned_hyperparameters()
        print(json.dumps(dict(kernel=repr(kernel), noise=noise)), flush=True)
    else:
        kernel, noise = SquaredExponential(2.0), 0.05
    for n in args.n:
        print(json.dumps(measure(n, args.n_test, args.rank, args.neighbors, args.residual,
                                 kernel, noise, args.exact, args.bounds, args.fit_max_iter)),
              flush=True)


if __name__ == "__main__":
    main()
