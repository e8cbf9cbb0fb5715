"""``python -m bcd reproduce gpcv``: Table 1 and the Mauna Loa CO2
experiment of Xu, Yin, Zhang, Luo and Cui, "A general O(n^2)
hyper-parameter optimization for Gaussian process regression with
cross-validation and non-linearly constrained ADMM".

* Table 1: data drawn from a GP with the SE (l = 0.5), LP (l = 0.5, p = 1)
  and SE + LP ((l1, l2, p) = (3, 1, 2)) kernels, n = 500 inputs uniform on
  [0, 10] and n = 1000, 2000 on [0, 20], noise variance 0.1 and 20 test
  points.  ML (L-BFGS-B on the marginal likelihood of all n points) against
  GPCV-ADMM (the paper's naive two-fold scheme and constants) and against
  the same two-fold CV error minimized by L-BFGS-B with its exact gradient
  (``optimizer="cv"``, "GPCV-exact"); all learn the
  length-scales and periods (signal variances 1 and the noise fixed at
  their true values, as the paper reports only those) and start from the
  same values, 1.35 times the true ones.  Mean and standard deviation over
  ``draws`` Monte Carlo draws of the estimates and of the test MSE.
* Mauna Loa: statsmodels' weekly CO2 series (1958-2001) averaged to months,
  standardized with the training mean and deviation; train on all but the
  last 7 years, predict those.  Kernel SE + SE x periodic (period 1 year,
  fixed), with signal variances, length-scales and noise learned by ML, by
  GPCV-ADMM and by GPCV-exact (two-fold, naive) from the same start and 9
  random restarts
  within the bounds ``CO2_BOUNDS`` (the best by each method's criterion).  Standardized test
  MSE (mean squared error over the variance of the test targets).
"""
import time
import warnings

import numpy as np

from bcd.gp import GPRegressor, LocallyPeriodic, Periodic, SquaredExponential

from ._common import Status, import_optional

NOISE = 0.1
N_TEST = 20
#: the methods compared: key, GPRegressor optimizer, label, plot colour
METHODS = (("cv", "cv_admm", "GPCV-ADMM", "tab:red"), ("exact", "cv", "GPCV-exact", "tab:green"),
           ("ml", "ml", "ML", "tab:blue"))
#: the CV methods' scheme: the paper's naive two-fold CV
CV_OPTIONS = dict(cv=2, cv_scheme="naive")
START_FACTOR = 1.35

#: the paper's Table 1 (50 draws): (estimates, test MSE) of GPCV-ADMM and GPML
PAPER = {
    ("SE", 500): ("0.46", "0.52", 0.12, 0.13),
    ("SE", 1000): ("0.50", "0.50", 0.12, 0.14),
    ("SE", 2000): ("0.50", "0.53", 0.12, 0.14),
    ("LP", 500): ("0.34, 1.13", "0.55, 1.06", 0.13, 0.36),
    ("LP", 1000): ("0.39, 1.06", "0.52, 1.16", 0.17, 0.44),
    ("LP", 2000): ("0.44, 1.19", "0.53, 1.02", 0.26, 0.28),
    ("SE+LP", 500): ("3.73, 0.94, 2.38", "3.62, 1.08, 2.38", 0.18, 0.21),
    ("SE+LP", 1000): ("3.74, 0.95, 2.14", "3.61, 1.05, 2.27", 0.13, 0.15),
    ("SE+LP", 2000): ("3.94, 0.99, 2.10", "3.69, 1.09, 2.13", 0.34, 0.37),
}


def _kernel(name, factor=1.0):
    """The kernel with its learnable parameters (variances fixed at 1)."""
    fixed = dict(variance_bounds="fixed")
    if name == "SE":
        return SquaredExponential(0.5 * factor, **fixed)
    if name == "LP":
        return LocallyPeriodic(1.0 * factor, 0.5 * factor, **fixed)
    return (SquaredExponential(3.0 * factor, **fixed)
            + LocallyPeriodic(2.0 * factor, 1.0 * factor, **fixed))


def _estimates(name, kernel):
    """(l) / (l, p) / (l1, l2, p) as in the paper."""
    if name == "SE":
        return [float(kernel.lengthscale)]
    if name == "LP":
        return [kernel.lengthscale, kernel.period]
    return [float(kernel.k1.lengthscale), kernel.k2.lengthscale, kernel.k2.period]


def _draw(name, n, rng):
    high = 10.0 if n == 500 else 20.0
    X = rng.uniform(0.0, high, size=(n + N_TEST, 1))
    K = _kernel(name)(X)
    K[np.diag_indices_from(K)] += NOISE + 1e-10
    y = np.linalg.cholesky(K) @ rng.standard_normal(n + N_TEST)
    return X[:n], y[:n], X[n:], y[n:]


def table1(sizes=(500, 1000, 2000), draws=10, kernels=("SE", "LP", "SE+LP"), seed=0,
           out=print, progress=None):
    """Run Table 1; returns {(kernel, n): {"cv": (estimates, mse, seconds,
    iterations), "exact": ..., "ml": ...}} with arrays over the draws."""
    results = {}
    for name in kernels:
        for n in sizes:
            rows = {key: [] for key, *_ in METHODS}
            for draw in range(draws):
                rng = np.random.default_rng([seed, n, draw, len(name)])
                X, y, Xs, ys = _draw(name, n, rng)
                for method, optimizer, *_ in METHODS:
                    gp = GPRegressor(_kernel(name, START_FACTOR), NOISE, noise_bounds="fixed",
                                     optimizer=optimizer, random_state=draw, tol=1e-6,
                                     **CV_OPTIONS)
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        gp.fit(X, y)
                    seconds = time.perf_counter() - t0
                    mse = float(np.mean((ys - gp.predict(Xs)) ** 2))
                    rows[method].append((_estimates(name, gp.kernel_), mse, seconds,
                                         len(gp.history_)))
                    if progress is not None:
                        progress.show(f"Table 1: {name} n={n} draw {draw + 1}/{draws} {method}"
                                      f"  time {progress.elapsed():.0f}s")
            results[(name, n)] = {m: (np.array([r[0] for r in v]), np.array([r[1] for r in v]),
                                      np.array([r[2] for r in v]), np.array([r[3] for r in v]))
                                  for m, v in rows.items()}
    if progress is not None:
        progress.clear()
    out(format_table1(results, draws))
    return results


def _fmt_est(est):
    mean, std = est.mean(axis=0), est.std(axis=0, ddof=1) if len(est) > 1 else 0 * est[0]
    return "[" + ", ".join(f"{m:.2f}({s:.3f})" for m, s in zip(mean, std)) + "]"


def format_table1(results, draws):
    labels = [label for _, _, label, _ in METHODS]
    lines = [f"Table 1 (ours: mean(std) over {draws} draws; paper: means over 50 draws; "
             f"columns: {', '.join(labels)})",
             f"{'kernel':<6} {'n':>5}  " + " ".join(f"{lab + ' estimates':<34}" for lab in labels)
             + "  " + " ".join(f"{'MSE ' + lab:>14}" for lab in labels)
             + "  " + " ".join(f"{'sec ' + lab[5:] if lab != 'ML' else 'sec ML':>9}"
                               for lab in labels)
             + "  " + " ".join(f"{'it ' + (lab[5:] if lab != 'ML' else 'ML'):>8}"
                               for lab in labels)]
    for (name, n), res in results.items():
        sd = (lambda a: a.std(ddof=1)) if draws > 1 else (lambda a: 0.0)
        cols = [res[key] for key, *_ in METHODS]
        lines.append(f"{name:<6} {n:>5}  " + " ".join(f"{_fmt_est(c[0]):<34}" for c in cols)
                     + "  " + " ".join(f"{c[1].mean():>7.3f}({sd(c[1]):.3f})" for c in cols)
                     + "  " + " ".join(f"{c[2].mean():>9.2f}" for c in cols)
                     + "  " + " ".join(f"{c[3].mean():>8.1f}" for c in cols))
        paper = PAPER.get((name, n))
        if paper:
            lines.append(f"{'':<6} {'paper':>5}  [{paper[0]}]{'':<{32 - len(paper[0])}} "
                         f"{'':<34} [{paper[1]}]{'':<{32 - len(paper[1])}}  "
                         f"{paper[2]:>14.2f} {'':>14} {paper[3]:>14.2f}")
    truth = {"SE": "l = 0.5", "LP": "l = 0.5, p = 1", "SE+LP": "l1 = 3, l2 = 1, p = 2"}
    lines.append("True values: " + "; ".join(f"{k}: {v}" for k, v in truth.items())
                 + f"; noise variance {NOISE} (test MSE floor).")
    return "\n".join(lines)


# ------------------------------------------------------------------ Mauna Loa

def co2_monthly():
    """(decimal years, monthly mean CO2 in ppm) from statsmodels' weekly
    series; months without data are dropped."""

    co2 = import_optional("statsmodels.datasets.co2", "repro")
    series = co2.load_pandas().data["co2"].resample("MS").mean().dropna()
    index = series.index
    years = index.year + (index.month - 1) / 12.0 + 1.0 / 24.0
    return np.asarray(years, dtype=np.float64), series.to_numpy(dtype=np.float64)


#: bounds of the CO2 kernel's parameters (years, standardized ppm squared)
CO2_BOUNDS = dict(lengthscale=(1.0, 1e3), variance=(1e-3, 1e2), periodic=(0.5, 10.0),
                  noise=(1e-5, 1.0))


def _co2_kernel():
    b = CO2_BOUNDS
    return (SquaredExponential(50.0, 1.0, lengthscale_bounds=b["lengthscale"],
                               variance_bounds=b["variance"])
            + SquaredExponential(100.0, 0.1, lengthscale_bounds=b["lengthscale"],
                                 variance_bounds=b["variance"])
            * Periodic(1.0, 1.0, period_bounds="fixed", variance_bounds="fixed",
                       lengthscale_bounds=b["periodic"]))


def mauna_loa(test_years=7, out=print, progress=None, n_restarts=9):
    t, ppm = co2_monthly()
    split = t < (np.floor(t.max()) + 1 - test_years)
    mean, std = ppm[split].mean(), ppm[split].std()
    z = (ppm - mean) / std
    X, y, Xs, ys = t[split, None], z[split], t[~split, None], z[~split]
    fits = {}
    for _, optimizer, method, _ in METHODS:
        gp = GPRegressor(_co2_kernel(), 0.01, n_restarts=n_restarts, random_state=0, tol=1e-6,
                         noise_bounds=CO2_BOUNDS["noise"], optimizer=optimizer,
                         **CV_OPTIONS)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gp.fit(X, y)
        seconds = time.perf_counter() - t0
        pred = gp.predict(Xs)
        smse = float(np.mean((ys - pred) ** 2) / np.var(ys))
        fits[method] = dict(model=gp, smse=smse, seconds=seconds)
        if progress is not None:
            progress.show(f"Mauna Loa: {method} done  time {progress.elapsed():.0f}s",
                          force=True)
    if progress is not None:
        progress.clear()
    out(f"\nMauna Loa CO2 (statsmodels, monthly means {t[0]:.0f}-{t[-1]:.0f}; train "
        f"{X[0, 0]:.0f}-{X[-1, 0]:.0f}, {len(y)} months; predict the last {test_years} years, "
        f"{len(ys)} months)")
    out(f"{'method':<11} {'SMSE':>7} {'seconds':>8}  learned kernel (standardized ppm, years)")
    for method, fit in fits.items():
        gp = fit["model"]
        out(f"{method:<11} {fit['smse']:>7.3f} {fit['seconds']:>8.2f}  {gp.kernel_!r}, "
            f"noise {gp.noise_:.3g}")
    out("paper (1958-2008 / 2009-2015): ML 1.408, GPCV-ADMM 1.307")
    return dict(t=t, ppm=ppm, split=split, mean=mean, std=std, fits=fits)


def plot(co2, filename, results=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, ppm, split = co2["t"], co2["ppm"], co2["split"]
    grid = np.linspace(t[0], t[-1] + 0.5, 8000)[:, None]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw=dict(width_ratios=[2, 1]))
    colors = {label: color for _, _, label, color in METHODS}
    for ax, zoom in zip(axes, (False, True)):
        ax.plot(t, ppm, ".", color="0.55", ms=3, label="monthly means (data)")
        for method, fit in co2["fits"].items():
            gp = fit["model"]
            mean, sd = gp.predict(grid, return_std=True)
            mean = mean * co2["std"] + co2["mean"]
            sd = np.sqrt(sd ** 2 + gp.noise_) * co2["std"]
            ax.plot(grid[:, 0], mean, color=colors[method], lw=1.1,
                    label=f"{method} (test SMSE {fit['smse']:.3f})")
            if zoom:
                # +- 2 predictive standard deviations (noise included) as lines:
                # shaded bands of two fits hide each other and the data
                for sign in (-2, 2):
                    ax.plot(grid[:, 0], mean + sign * sd, color=colors[method], lw=0.6,
                            ls="--", alpha=0.8)
        ax.axvline(t[~split][0], color="k", ls=":", lw=1)
        ax.set_xlabel("year")
        ax.set_ylabel("CO2 (ppm)")
        if zoom:
            lo = t[~split][0] - 3
            ax.set_xlim(lo, t[-1] + 0.5)
            sel = t >= lo
            ax.set_ylim(ppm[sel].min() - 3, ppm[sel].max() + 3)
            ax.set_title("last years: predictive mean, dashed +- 2 sd")
        else:
            ax.set_title("Mauna Loa CO2 (dotted line: start of the 7 predicted years)")
            ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(filename, dpi=120)
    plt.close(fig)


def reproduce(plot_file=None, draws=10, quick=False, out=print):
    progress = Status()
    sizes = (500, 1000, 2000)
    if quick:
        draws = min(draws, 2)
        sizes = (500, 1000)
    out(f"Xu et al., GPCV-ADMM and GPCV-exact against ML ({'quick: ' if quick else ''}"
        f"{draws} draws, "
        f"n = {', '.join(map(str, sizes))})")
    t0 = time.perf_counter()
    results = table1(sizes=sizes, draws=draws, out=out, progress=progress)
    co2 = mauna_loa(out=out, progress=progress)
    if plot_file:
        plot(co2, plot_file, results)
        out(f"\nWrote {plot_file}")
    out(f"({time.perf_counter() - t0:.0f}s)")
    return results, co2
