"""bcd.gp.GaussianProcessRegressor against scikit-learn's, same kernel.

Usage, from the repository root with bcd installed::

    python -m asv_benches.gpr_dropin                  # n = 2000, 3 repeats
    python -m asv_benches.gpr_dropin --n 1000 --repeats 5

Both fit ``RBF(1.0) + WhiteKernel(1.0)`` (scikit-learn kernel objects,
bounds (1e-5, 1e5), ``alpha=1e-10``, no restarts, ``normalize_y=False``) on
Friedman1 (``bcd.datasets.make_friedman1(n, 10)``: ten inputs, inputs and
outputs standardized, noise 1), in this one process, alternating, and the
median time over the repeats is reported for each.  Both run L-BFGS-B from
the same theta on the same objective with the same bounds, so they follow
the same path up to rounding; the fitted log marginal likelihoods are
compared.

Target: bcd's time <= 0.5x scikit-learn's, with the two log marginal
likelihoods equal to 1e-8 relative.  Set ``OPENBLAS_NUM_THREADS`` and
``OMP_NUM_THREADS`` to compare on equal threads (the command line does not
change them).

Measured on 2 shared cores, ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
python -m asv_benches.gpr_dropin`` (3 repeats, medians): bcd 14.4 s,
scikit-learn 39.9 s, ratio 0.36; both fit RBF(length_scale=3.23) +
WhiteKernel(noise_level=0.0431) with log marginal likelihoods equal to
4e-14 relative.  One evaluation of the log marginal likelihood and its
gradient costs a Cholesky factorization and the inverse from it (n^3 flops)
against scikit-learn's factorization and cho_solve of the identity
(7/3 n^3), and no n x n x n_params gradient array.

The asv class :class:`GPRDropinFit` times the two fits at n = 1,000 (a
smaller size, so that asv's repeats stay short) and tracks their ratio.
"""
import argparse
import statistics
import time
import warnings


def _data(n):
    import bcd
    X, y, _, _ = bcd.datasets.make_friedman1(n, 10, random_state=0)
    return X, y


def _kernel():
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    return RBF(1.0) + WhiteKernel(1.0)


def fit_bcd(X, y):
    from bcd.gp import GaussianProcessRegressor
    return GaussianProcessRegressor(kernel=_kernel()).fit(X, y)


def fit_sklearn(X, y):
    from sklearn.gaussian_process import GaussianProcessRegressor
    return GaussianProcessRegressor(kernel=_kernel()).fit(X, y)


def compare(n=2000, repeats=3):
    """Median fit times of bcd and scikit-learn, their ratio and the fitted
    log marginal likelihoods."""
    X, y = _data(n)
    times = {"bcd": [], "sklearn": []}
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # ConvergenceWarnings at bounds, if any
        for fit in (fit_bcd, fit_sklearn):       # imports and first calls, untimed
            fit(X[:50], y[:50])
        for _ in range(repeats):
            for name, fit in (("bcd", fit_bcd), ("sklearn", fit_sklearn)):
                t0 = time.perf_counter()
                fits[name] = fit(X, y)
                times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    lml = {k: f.log_marginal_likelihood_value_ for k, f in fits.items()}
    return dict(n=n, repeats=repeats, bcd_s=med["bcd"], sklearn_s=med["sklearn"],
                ratio=med["bcd"] / med["sklearn"], lml_bcd=lml["bcd"],
                lml_sklearn=lml["sklearn"],
                lml_rel_diff=abs(lml["bcd"] - lml["sklearn"]) / abs(lml["sklearn"]),
                kernel_bcd=str(fits["bcd"].kernel_), kernel_sklearn=str(fits["sklearn"].kernel_),
                times=times)


class GPRDropinFit:
    """asv: the two fits at n = 1,000 and their ratio."""
    timeout = 600
    number = 1
    repeat = 3

    def setup(self):
        self.X, self.y = _data(1000)
        warnings.simplefilter("ignore")

    def time_fit_bcd(self):
        fit_bcd(self.X, self.y)

    def time_fit_sklearn(self):
        fit_sklearn(self.X, self.y)

    def track_ratio(self):
        return compare(1000, 1)["ratio"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    r = compare(args.n, args.repeats)
    print(f"n = {r['n']}, {r['repeats']} repeats (median)")
    print(f"  bcd      {r['bcd_s']:8.3f} s   LML {r['lml_bcd']:.12g}   {r['kernel_bcd']}")
    print(f"  sklearn  {r['sklearn_s']:8.3f} s   LML {r['lml_sklearn']:.12g}   "
          f"{r['kernel_sklearn']}")
    print(f"  ratio bcd / sklearn = {r['ratio']:.3f}  (target <= 0.5)")
    print(f"  LML relative difference = {r['lml_rel_diff']:.2e}  (target <= 1e-8)")
    print(f"  all times: {r['times']}")


if __name__ == "__main__":
    main()
