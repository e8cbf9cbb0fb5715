"""Reproduction of the paper's experiments: datasets, optimal values, runs,
tables and plots.  Run by ``python -m bcd demo`` and ``python -m bcd reproduce
FIGURE`` from the repository root."""
import time
import warnings

import numpy as np
import scipy.optimize
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from bcd import (L1, ConvergenceWarning, LabelPropagation, LeastSquares, Logistic, Multinomial,
                 datasets, solve)

from ._common import Status


class Experiment:
    """A dataset, its problem and its optimal value f* with how it was found."""

    def __init__(self, name, problem, f_star, how, support=None):
        self.name = name
        self.problem = problem
        self.f_star = f_star
        self.how = how
        self.support = support        # the solution's support, where it is sparse

    def describe(self):
        A = self.problem.A
        nnz = A.nnz if sp.issparse(A) else np.count_nonzero(A)
        kind = type(self.problem).__name__
        if isinstance(self.problem, LabelPropagation):
            return (f"Dataset {self.name}: {kind}, {A.shape[0]} unknown of "
                    f"{self.problem.W.shape[0]} nodes, {nnz} non-zeros in Q.\n"
                    f"  f* = {self.f_star:.17g}  ({self.how})")
        extra = (f", {self.problem.n_classes} classes" if hasattr(self.problem, "n_classes")
                 else "")
        if self.problem.penalty is not None:
            extra += f", penalty {self.problem.penalty!r}"
        return (f"Dataset {self.name}: {kind}, {A.shape[0]} x {A.shape[1]}{extra}, {nnz} "
                f"non-zeros.\n"
                f"  f* = {self.f_star:.10g}  ({self.how})")


def least_squares_optimum(problem):
    """f* of a least-squares problem by a tight LSQR solve."""
    A, b = problem.A, problem.b
    damp = np.sqrt(problem.l2)
    x = spla.lsqr(A, b, damp=damp, atol=1e-15, btol=1e-15, conlim=1e16,
                  iter_lim=50 * sum(A.shape))[0]
    f = problem.objective(x)
    grad = np.max(np.abs(problem.gradient(x)))
    return f, f"tight LSQR solve: f = {f:.3e}, ||grad f||_inf = {grad:.1e}"


def _lbfgs(problem, **options):
    return scipy.optimize.minimize(problem.objective, np.zeros(problem.n_coordinates),
                                   jac=problem.gradient, method="L-BFGS-B", options=options)


def _logistic_margins(problem, x):
    return problem.y * (problem.A @ x)


def _multinomial_margins(problem, x):
    S = np.asarray(problem.A @ problem.coef(x))
    rows = np.arange(S.shape[0])
    own = S[rows, problem.y].copy()
    S[rows, problem.y] = -np.inf
    return own - S.max(axis=1)


def classification_optimum(problem):
    """f* of an unregularized (binary or multinomial) logistic problem.

    If some x classifies every sample with a positive margin, f(t x) -> 0 as
    t -> infinity, so the infimum is exactly 0; a short L-BFGS-B run looks
    for such an x.  Otherwise (or with l2 > 0) f* comes from a tight
    L-BFGS-B solve, stated with its gradient norm.
    """
    margins = _multinomial_margins if hasattr(problem, "n_classes") else _logistic_margins
    if problem.l2 == 0.0:
        res = _lbfgs(problem, maxiter=500)
        least = float(np.min(margins(problem, res.x)))
        if least > 0:
            return 0.0, (f"the data are separable: an x found by L-BFGS-B classifies every "
                         f"sample with margin >= {least:.3g} > 0, so inf f = lim f(t x) = 0")
    res = _lbfgs(problem, gtol=1e-12, ftol=1e-16, maxiter=100000)
    return float(res.fun), f"tight L-BFGS-B solve, ||grad f||_inf = {np.max(np.abs(res.jac)):.1e}"


def quadratic_optimum(problem):
    """f* of a sparse quadratic by a direct sparse solve."""
    x = spla.spsolve(sp.csc_matrix(problem.Q), problem.c)
    f = problem.objective(x)
    res = np.max(np.abs(problem.gradient(x)))
    return f, f"direct sparse solve: ||Qx - c||_inf = {res:.1e}"


#: Figure 7's lambda on the full dataset A, and its ratio to lambda_max there
FIGURE7_LAMBDA = 5e4
FIGURE7_FRACTION = 0.2554


def l1_nonnegative_optimum(problem):
    """F* of the L1 + non-negativity problem by two-metric projection with
    greedy blocks larger than the support (it stops on the exact KKT
    residual), stated with its duality gap."""
    tol = 1e-12 * max(1.0, float(np.max(problem.lipschitz)))
    result = solve(problem, rule="gsd", blocks="variable", block_size=min(100, problem.n_coordinates),
                   update="two_metric", max_iter=100000, tol=tol)
    support = result.x != 0
    return (result.objective,
            f"two-metric projection, GSD-q, blocks of 100: KKT residual "
            f"{result.optimality:.1e}, duality gap {result.duality_gap:.1e}; support of "
            f"{int(support.sum())} coordinates", support)


_EXPERIMENTS = {}


def paper_experiment(name, n_samples=None, n_features=None, random_state=1):
    """Dataset ``name`` of the paper as an :class:`Experiment` (cached)."""
    key = (name, n_samples, n_features, random_state)
    if key in _EXPERIMENTS:
        return _EXPERIMENTS[key]
    A, t = datasets.make_paper_dataset(name.split("+")[0], random_state=random_state,
                                       n_samples=n_samples, n_features=n_features)
    if name == "A+L1":
        # Figure 7: lambda = 5e4 on the full dataset (0.2554 lambda_max), the
        # same fraction of lambda_max on other sizes
        lam = FIGURE7_LAMBDA if n_samples is None and n_features is None else \
            FIGURE7_FRACTION * float(np.max(A.T @ t))
        problem = LeastSquares(A, t, penalty=L1(lam, positive=True))
        f_star, how, support = l1_nonnegative_optimum(problem)
        exp = _EXPERIMENTS[key] = Experiment(name, problem, f_star, how, support)
        return exp
    if name in ("D", "E"):
        problem = LabelPropagation(A, t)
        f_star, how = quadratic_optimum(problem)
    elif name == "A":
        problem = LeastSquares(A, t)
        f_star, how = least_squares_optimum(problem)
    else:
        problem = Logistic(A, t) if name == "B" else Multinomial(A, t)
        f_star, how = classification_optimum(problem)
    exp = _EXPERIMENTS[key] = Experiment(name, problem, f_star, how)
    return exp


def run_grid(experiment, configs, max_iter, random_state=0, timed=True, progress=None):
    """Run every configuration; return {label: (iterations, gap, seconds/iter,
    support iteration)}.  ``progress`` (a :class:`experiments._common.Status`)
    is told which configuration runs.

    Each configuration runs with a test at every iteration to record
    f(x_k) - f*; with ``timed`` it runs again testing only at the end, to
    time the iterations (seconds/iter is NaN otherwise).  When the
    experiment knows its solution's support, the first iteration that has
    it is recorded (None if none does, or without a support).
    """
    out = {}
    for i, (label, options) in enumerate(configs):
        if progress is not None:
            progress.show(f"  running {label} ({i + 1}/{len(configs)}), "
                          f"{progress.elapsed():.0f}s")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            traced = solve(experiment.problem, max_iter=max_iter, tol=0.0, check_every=1,
                           random_state=random_state, target_support=experiment.support,
                           **options)
            spi = float("nan")
            if timed:
                run = solve(experiment.problem, max_iter=max_iter, tol=0.0,
                            check_every=10**9, random_state=random_state, **options)
                spi = run.iteration_time / max(run.n_iter, 1)
        gap = traced.history.objective - experiment.f_star
        out[label] = (traced.history.iteration, gap, spi, traced.support_iteration)
    if progress is not None:
        progress.clear()
    return out


FIGURE4_RULES = ("cyclic", "random", "lipschitz", "gs", "gsl", "gsd")
MATRIX_RULES = ("gs", "gsl", "gsd", "gsq")


def _fixed_and_variable(variants):
    """Each ``(tag, options)`` variant on fixed blocks (``tag-FB``, sorted by
    L_i) and on variable blocks (``tag-VB``)."""
    def configs(block_size, n=None):
        return [(f"{tag}-{btag}", dict(options, blocks=blocks, block_size=block_size, **extra))
                for tag, options in variants
                for blocks, btag, extra in (("fixed", "FB", {"partition": "sort"}),
                                            ("variable", "VB", {}))]
    return configs


def fixed_and_variable(rules, update):
    """Configurations ``rule-FB`` (fixed blocks, sorted by L_i) and ``rule-VB``."""
    return _fixed_and_variable([(rule, dict(rule=rule, update=update)) for rule in rules])


def lipschitz_estimates(block_size, n=None):
    """Fixed-block rules with L_b from the bound (Lb) or estimated (LA)."""
    return [(f"{rule}-{tag}", dict(rule=rule, blocks="fixed", block_size=block_size,
                                   partition="sort", update="gradient", lipschitz=lip))
            for rule in ("cyclic", "random", "gs", "gsl")
            for lip, tag in (("bound", "Lb"), ("estimate", "LA"))]


def partitions(block_size, n=None):
    """Greedy fixed-block rules over the three partitions."""
    return [(f"{rule}-{part}", dict(rule=rule, blocks="fixed", block_size=block_size,
                                    partition=part, update="gradient"))
            for rule in ("gs", "gsl") for part in ("order", "sort", "avg")]


def forest_blocks(block_size, n):
    """Figure 6: forest-structured blocks with exact updates, and "General"
    (GS variable blocks of floor(n^(1/3)) coordinates, dense exact solve)."""
    out = [("greedy tree-GS", dict(rule="gs", blocks="tree", update="exact")),
           ("random tree-rand", dict(rule="random", blocks="tree", update="exact"))]
    for label, blocks in (("red-black", "coloring"), ("tree partition", "forest_partition")):
        for order in ("natural", "random", "lipschitz"):
            out.append((f"{label}-{order}", dict(rule="cyclic", blocks=blocks, vertex_order=order,
                                                 update="exact")))
    tau = max(1, int(np.floor(n ** (1.0 / 3.0) + 1e-9)))
    out.append((f"General-tau={tau}", dict(rule="gs", blocks="variable", block_size=tau,
                                           update="exact")))
    return out


def penalized_updates(rule):
    """Figures 7 and 13: proximal gradient (PG), proximal Newton (PN) and
    two-metric projection (TMP) with ``rule`` on fixed and variable blocks."""
    return _fixed_and_variable([(tag, dict(rule=rule, update=update)) for update, tag in
                                (("gradient", "PG"), ("newton", "PN"), ("two_metric", "TMP"))])


class Figure:
    """One of the paper's figures: datasets x block sizes x configurations."""

    def __init__(self, title, names, sizes, configs):
        self.title = title
        self.names = names
        self.sizes = sizes
        self.configs = configs


FIGURES = {
    "4": Figure("Figure 4: greedy and non-greedy rules, gradient updates", ("A", "B", "C"),
                (5,), fixed_and_variable(FIGURE4_RULES, "gradient")),
    "5": Figure("Figure 5: greedy rules, matrix updates", ("A", "B", "C"), (5,),
                fixed_and_variable(MATRIX_RULES, "matrix")),
    "6": Figure("Figure 6: forest-structured blocks, exact updates", ("D", "E"), (None,),
                forest_blocks),
    "7": Figure("Figure 7: L1 + non-negativity on A, GSD-q rule (* = support identified)",
                ("A+L1",), (5, 50, 100), penalized_updates("gsd")),
    "8": Figure("Figure 8: rules and block sizes, gradient updates", ("A", "B", "C"),
                (5, 50, 100), fixed_and_variable(FIGURE4_RULES, "gradient")),
    "9": Figure("Figure 9: bound (Lb) versus estimated (LA) Lipschitz constants, fixed blocks",
                ("A", "B", "C"), (5, 50, 100), lipschitz_estimates),
    "10": Figure("Figure 10: partitions of fixed blocks (order, sort, avg), gradient updates",
                 ("A", "B", "C"), (5, 50, 100), partitions),
    "11": Figure("Figure 11: greedy rules and block sizes, matrix updates", ("A", "B", "C"),
                 (5, 50, 100), fixed_and_variable(MATRIX_RULES, "matrix")),
    "12": Figure("Figure 12: greedy rules, Newton updates with a line search", ("B", "C"),
                 (5, 50, 100), fixed_and_variable(MATRIX_RULES, "newton")),
    "13": Figure("Figure 13: L1 + non-negativity on A, random selection (* = support "
                 "identified)", ("A+L1",), (5, 50, 100), penalized_updates("random")),
}


def format_table(results, checkpoints, timing=True):
    """f(x_k) - f* at the checkpoints (and seconds per iteration) per method."""
    head = "  ".join(f"{f'k={k}':>12s}" for k in checkpoints)
    width = max([14] + [len(label) + 2 for label in results])
    lines = [f"  {'method':<{width}s}{head}" + (f"  {'time/iter':>11s}" if timing else "")]
    support = any(r[3] is not None for r in results.values())
    if support:
        lines[0] += f"  {'support at':>11s}"
    for label, (its, gap, spi, found) in results.items():
        vals = []
        for k in checkpoints:
            idx = np.searchsorted(its, k)
            if idx < len(its) and its[idx] == k:
                vals.append(f"{gap[idx]:12.4e}")
            else:
                # the run stopped before k: its optimality measure reached tol (0)
                vals.append(f"{'stopped':>12s}" if idx >= len(its) else f"{'-':>12s}")
        lines.append(f"  {label:<{width}s}" + "  ".join(vals)
                     + (f"  {spi * 1e6:9.1f}us" if timing else "")
                     + (f"  {'-' if found is None else found:>11}" if support else ""))
    return "\n".join(lines)


def plot(panels, filename, title, ncols=None):
    """Write log-scale f(x_k) - f* curves, one panel per (name, results[, floor]).

    Curves of one rule share a colour; the variants of a rule (FB/VB,
    Lb/LA, partitions) differ in line style.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ncols = ncols or len(panels)
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, 4.2 * nrows), squeeze=False)
    cmap = plt.get_cmap("tab10")
    styles = ["--", "-", ":", "-."]
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    for ax, (name, results, *rest) in zip(axes.ravel(), panels):
        # gaps below the rounding error of f* are drawn at that level
        floor = rest[0] if rest else 1e-16
        labels = list(results)
        rules = list(dict.fromkeys(lab.rsplit("-", 1)[0] for lab in labels))
        variants = list(dict.fromkeys(lab.rsplit("-", 1)[1] for lab in labels))
        for label in labels:
            its, gap, _, found = results[label]
            rule, variant = label.rsplit("-", 1)
            color = cmap(rules.index(rule) % 10)
            ax.semilogy(its, np.maximum(gap, floor), styles[variants.index(variant) % 4],
                        color=color, label=label, lw=1.5)
            if found is not None:
                k = min(np.searchsorted(its, found), len(its) - 1)
                ax.semilogy([its[k]], [max(gap[k], floor)], "*", color=color, ms=12,
                            markeredgecolor="k")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("iteration k")
        ax.set_ylabel("f(x_k) - f*")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(filename, dpi=100)
    plt.close(fig)


SMALL = {"A": dict(n_samples=200, n_features=2000), "B": dict(n_samples=200, n_features=2000),
         "A+L1": dict(n_samples=200, n_features=2000),
         "C": dict(n_samples=200, n_features=200), "D": dict(n_samples=400),
         "E": dict(n_samples=400)}


def reproduce(number, plot_file=None, max_iter=500, small=False, out=print):
    """Run one of the paper's figures (see ``FIGURES``); print tables, plot."""
    fig = FIGURES[number]
    progress = Status()
    checkpoints = [k for k in (10, 100, max_iter) if k <= max_iter]
    out(f"{fig.title}; {max_iter} iterations from x0 = 0.")
    panels = []
    for name in fig.names:
        t0 = time.perf_counter()
        exp = paper_experiment(name, **(SMALL[name] if small else {}))
        out("")
        out(exp.describe())
        for tau in fig.sizes:
            results = run_grid(exp, fig.configs(tau, exp.problem.n_coordinates), max_iter,
                               timed=False, progress=progress)
            out(f"  block size {tau}: f(x_k) - f*" if tau else "  f(x_k) - f*")
            out(format_table(results, checkpoints, timing=False))
            panels.append((f"{name}, block size {tau}" if tau else f"Dataset {name}", results,
                           max(1e-16, 1e-15 * abs(exp.f_star))))
        out(f"  ({time.perf_counter() - t0:.1f}s for this dataset)")
    if plot_file:
        plot(panels, plot_file, fig.title,
             ncols=len(fig.sizes) if len(fig.sizes) > 1 else len(panels))
        out(f"\nWrote {plot_file}")
    return panels


def demo(plot_file=None, max_iter=500, block_size=5, n_samples=None, n_features=None,
         out=print):
    """Figure 4 of the paper on datasets A and B."""
    checkpoints = [k for k in (10, 100, max_iter) if k <= max_iter]
    configs = fixed_and_variable(FIGURE4_RULES, "gradient")(block_size)
    progress = Status()
    panels = []
    out(f"Figure 4: gradient updates (x_b -= grad_b f / L_b), block size {block_size}, "
        f"{max_iter} iterations, x0 = 0.")
    out("FB = fixed blocks (coordinates sorted by L_i, largest together); VB = variable blocks.")
    for name, label in (("A", "least squares"), ("B", "logistic regression")):
        t0 = time.perf_counter()
        exp = paper_experiment(name, n_samples=n_samples, n_features=n_features)
        out("")
        out(exp.describe())
        results = run_grid(exp, configs, max_iter, progress=progress)
        out(format_table(results, checkpoints))
        out(f"  ({time.perf_counter() - t0:.1f}s for this dataset)")
        panels.append((f"Dataset {name} ({label})", results))
    if plot_file:
        plot(panels, plot_file, f"Gradient updates, block size {block_size}")
        out(f"\nWrote {plot_file}")
    return panels
