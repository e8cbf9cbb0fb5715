"""Reproduction of the paper's experiments: datasets, optimal values, runs,
tables and plots.  Used by ``python -m bcd``."""
import time
import warnings

import numpy as np
import scipy.optimize
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import datasets
from ._result import ConvergenceWarning
from ._solve import solve
from .core.rules import RULES
from .problems import LeastSquares, Logistic


class Experiment:
    """A dataset, its problem and its optimal value f* with how it was found."""

    def __init__(self, name, problem, f_star, how):
        self.name = name
        self.problem = problem
        self.f_star = f_star
        self.how = how

    def describe(self):
        A = self.problem.A
        nnz = A.nnz if sp.issparse(A) else np.count_nonzero(A)
        kind = type(self.problem).__name__
        return (f"Dataset {self.name}: {kind}, {A.shape[0]} x {A.shape[1]}, {nnz} non-zeros.\n"
                f"  f* = {self.f_star:.6g}  ({self.how})")


def least_squares_optimum(problem):
    """f* of a least-squares problem by a tight LSQR solve."""
    A, b = problem.A, problem.b
    damp = np.sqrt(problem.l2)
    x = spla.lsqr(A, b, damp=damp, atol=1e-15, btol=1e-15, conlim=1e16,
                  iter_lim=50 * sum(A.shape))[0]
    f = problem.objective(x)
    grad = np.max(np.abs(problem.gradient(x)))
    return f, f"tight LSQR solve: f = {f:.3e}, ||grad f||_inf = {grad:.1e}"


def logistic_optimum(problem):
    """f* of a logistic problem.

    Without regularization, f* = 0 exactly when the data are linearly
    separable; this is certified by a linear program finding w with
    y_i a_i^T w >= 1 for all i.  Otherwise (or with l2 > 0) f* comes from a
    tight L-BFGS-B solve.
    """
    A, y = problem.A, problem.y
    if problem.l2 == 0.0:
        M = -(sp.diags(y) @ sp.csr_matrix(A))
        lp = scipy.optimize.linprog(np.zeros(A.shape[1]), A_ub=M, b_ub=-np.ones(A.shape[0]),
                                    bounds=(None, None), method="highs")
        if lp.status == 0:
            margin = float(np.min(y * (A @ lp.x)))
            return 0.0, (f"data linearly separable (an LP finds w with min_i y_i a_i^T w = "
                         f"{margin:.3f} > 0), so the infimum is 0")
    res = scipy.optimize.minimize(problem.objective, np.zeros(problem.n_coordinates),
                                  jac=problem.gradient, method="L-BFGS-B",
                                  options=dict(gtol=1e-12, ftol=1e-16, maxiter=100000))
    return float(res.fun), f"tight L-BFGS-B solve, ||grad f||_inf = {np.max(np.abs(res.jac)):.1e}"


def paper_experiment(name, n_samples=None, n_features=None, random_state=1):
    """Dataset ``name`` of the paper as an :class:`Experiment`."""
    A, t = datasets.make_paper_dataset(name, random_state=random_state, n_samples=n_samples,
                                       n_features=n_features)
    if name == "A":
        problem = LeastSquares(A, t)
        f_star, how = least_squares_optimum(problem)
    else:
        problem = Logistic(A, t)
        f_star, how = logistic_optimum(problem)
    return Experiment(name, problem, f_star, how)


def run_grid(experiment, configs, max_iter, random_state=0):
    """Run every configuration; return {label: (iterations, gap, seconds/iter)}.

    Each configuration runs twice: once testing every iteration to record
    f(x_k) - f*, once testing only at the end to time the iterations.
    """
    out = {}
    for label, options in configs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            traced = solve(experiment.problem, max_iter=max_iter, tol=0.0, check_every=1,
                           random_state=random_state, **options)
            timed = solve(experiment.problem, max_iter=max_iter, tol=0.0, check_every=10**9,
                          random_state=random_state, **options)
        gap = traced.history.objective - experiment.f_star
        out[label] = (traced.history.iteration, gap, timed.time / max(timed.n_iter, 1))
    return out


def figure4_configs(block_size=5):
    """Every rule with fixed sorted blocks (FB) and variable blocks (VB)."""
    configs = []
    for rule in RULES:
        for blocks, tag in (("fixed", "FB"), ("variable", "VB")):
            configs.append((f"{rule}-{tag}", dict(rule=rule, blocks=blocks,
                                                  block_size=block_size, partition="sort",
                                                  update="gradient")))
    return configs


def format_table(results, checkpoints):
    head = "  ".join(f"{f'k={k}':>12s}" for k in checkpoints)
    lines = [f"  {'method':<14s}{head}  {'time/iter':>11s}"]
    for label, (its, gap, spi) in results.items():
        vals = []
        for k in checkpoints:
            idx = np.searchsorted(its, k)
            vals.append(f"{gap[idx]:12.4e}" if idx < len(its) and its[idx] == k else f"{'-':>12s}")
        lines.append(f"  {label:<14s}" + "  ".join(vals) + f"  {spi * 1e6:9.1f}us")
    return "\n".join(lines)


def plot(panels, filename, title):
    """Write log-scale f(x_k) - f* curves, one panel per (name, results)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 4.6), squeeze=False)
    for ax, (name, results) in zip(axes[0], panels):
        labels = list(results)
        cmap = plt.get_cmap("tab10")
        rules = list(dict.fromkeys(lab.rsplit("-", 1)[0] for lab in labels))
        for label in labels:
            its, gap, _ = results[label]
            rule, tag = label.rsplit("-", 1)
            color = cmap(rules.index(rule) % 10)
            style = "-" if tag == "VB" else "--"
            ax.semilogy(its, np.maximum(gap, 1e-16), style, color=color, label=label, lw=1.6)
        ax.set_title(name)
        ax.set_xlabel("iteration k")
        ax.set_ylabel("f(x_k) - f*")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(filename, dpi=110)
    plt.close(fig)


def demo(plot_file=None, max_iter=500, block_size=5, n_samples=None, n_features=None,
         out=print):
    """Figure 4 of the paper on datasets A and B."""
    checkpoints = [k for k in (10, 100, max_iter) if k <= max_iter]
    configs = figure4_configs(block_size)
    panels = []
    out(f"Figure 4: gradient updates (x_b -= grad_b f / L_b), block size {block_size}, "
        f"{max_iter} iterations, x0 = 0.")
    out("FB = fixed blocks (coordinates sorted by L_i, largest together); VB = variable blocks.")
    for name, label in (("A", "least squares"), ("B", "logistic regression")):
        t0 = time.perf_counter()
        exp = paper_experiment(name, n_samples=n_samples, n_features=n_features)
        out("")
        out(exp.describe())
        results = run_grid(exp, configs, max_iter)
        out(format_table(results, checkpoints))
        out(f"  ({time.perf_counter() - t0:.1f}s for this dataset)")
        panels.append((f"Dataset {name} ({label})", results))
    if plot_file:
        plot(panels, plot_file, f"Gradient updates, block size {block_size}")
        out(f"\nWrote {plot_file}")
    return panels
