"""Command line.

``python -m bcd demo [--plot FILE.png]``: the paper's Figure 4 on datasets A
and B with timings.  ``python -m bcd reproduce FIGURE [--plot FILE.png]``:
one of the paper's figures (4, 5, 8-12 on datasets A, B and C; 6 on
the graph datasets D and E; 7 and 13 on A with an L1 penalty and x >= 0).
``python -m bcd reproduce gpcv [--plot FILE.png] [--draws N] [--quick]``:
Table 1 and the Mauna Loa CO2 experiment of Xu et al. (GP hyperparameters
by cross-validation ADMM against the marginal likelihood).
``python -m bcd reproduce cholqr [--plot FILE.png] [--quick]``: the sparse GP
experiments of Cao et al. (CholQR inducing-point swaps against random and
greedy selection on Friedman1, concrete and hourly Bikeshare).
``python -m bcd gp-demo``: Gaussian process regression on Friedman1 by
GBCD, dense Cholesky and matrix-free conjugate gradients.
``python -m bcd combinations``: the Markdown page of valid combinations of
rules, updates, block strategies, problems and penalties.

The demos and reproductions are not part of the installed library: they
live in the repository's ``experiments`` folder and use only the public
API.  ``demo``, ``gp-demo`` and ``reproduce`` find that folder in the
current directory (run them from the repository root) or next to the source
tree of an editable install.
"""
import argparse
import importlib
import os
import sys
from pathlib import Path

#: the paper's figures that ``reproduce`` knows (experiments/paper_figures.py
#: holds their definitions; this list is checked against it by the tests)
FIGURES = ("4", "5", "6", "7", "8", "9", "10", "11", "12", "13")


def _experiments_home():
    """The folder holding the ``experiments`` package: the current directory
    when it has one, else the repository around an editable install's
    sources (``src/bcd`` two levels below it); None when neither does."""
    candidates = [Path(os.getcwd()), Path(__file__).resolve().parents[2]]
    for root in candidates:
        if (root / "experiments" / "__init__.py").is_file():
            return root
    return None


def load_experiment(name):
    """Import ``experiments.<name>`` from the repository's experiments folder.

    Raises ImportError with what to do when the folder cannot be found
    (an installed ``bcd`` run outside a checkout of the repository)."""
    root = _experiments_home()
    if root is None:
        raise ImportError(
            "the demos and reproductions live in the experiments/ folder of the bcd "
            "repository, not in the installed package; run python -m bcd from the "
            "repository root (a checkout next to which bcd was installed).")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    module = importlib.import_module(f"experiments.{name}")
    home = Path(module.__file__).resolve().parents[1]
    if home != root.resolve():
        raise ImportError(f"experiments.{name} was imported from {home}, not from the "
                          f"repository at {root}; another package named 'experiments' "
                          f"shadows it.")
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bcd",
                                     description="Block coordinate descent experiments.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the paper's Figure 4 on datasets A and B",
                          description="The paper's Figure 4: greedy and non-greedy selection "
                          "rules with gradient updates on fixed and variable blocks, on "
                          "datasets A (least squares) and B (logistic regression), sparse "
                          "1000 x 10000 matrices. Prints each method's suboptimality f(x_k) - "
                          "f* and time per iteration; --plot also writes the curves.")
    demo.add_argument("--plot", metavar="FILE.png", help="write the curves (needs matplotlib)")
    demo.add_argument("--iterations", type=int, default=500,
                      help="iterations of each method (default: %(default)s)")
    demo.add_argument("--block-size", type=int, default=5,
                      help="coordinates per block (default: %(default)s)")
    demo.add_argument("--small", action="store_true",
                      help="use 200 x 2000 versions of the datasets (a quick check)")
    rep = sub.add_parser("reproduce", help="one of the paper's figures: " + ", ".join(FIGURES)
                         + "; or gpcv (Xu et al.'s Table 1 and Mauna Loa CO2); or cholqr, the "
                         "sparse GP experiments of Cao et al.")
    rep.add_argument("figure", choices=list(FIGURES) + ["gpcv", "cholqr"], metavar="FIGURE",
                     help="a figure number of the paper: 4, 5 and 8-12 (datasets A, B, C), "
                          "6 (graph datasets D, E), 7 and 13 (A with an L1 penalty and x >= 0); "
                          "or gpcv or cholqr (choices: %(choices)s)")
    rep.add_argument("--plot", metavar="FILE.png", help="write the panels (needs matplotlib)")
    rep.add_argument("--iterations", type=int, default=500,
                     help="iterations of each method (default: %(default)s)")
    rep.add_argument("--small", action="store_true",
                     help="use small versions of the datasets (A, B: 200 x 2000; C: 200 x "
                          "200; D, E: 400 nodes)")
    rep.add_argument("--draws", type=int, default=10,
                     help="gpcv: Monte Carlo draws per Table 1 cell (the paper used 50; "
                          "default: %(default)s)")
    rep.add_argument("--quick", action="store_true",
                     help="gpcv: 2 draws and n = 500, 1000 only (about 2 minutes); cholqr: "
                          "m in {16, 64}, 2 seeds, smaller datasets (a few minutes at most)")
    gp = sub.add_parser("gp-demo", help="Gaussian process regression on Friedman1: GBCD, "
                                        "Cholesky and conjugate gradients")
    gp.add_argument("--n-train", type=int, default=10000,
                    help="training points (default: %(default)s, a size where GBCD beats "
                         "the dense factorization on 2 cores)")
    gp.add_argument("--n-test", type=int, default=1000,
                    help="test points for the RMSE (default: %(default)s)")
    gp.add_argument("--solvers", default="gbcd,cholesky,cg",
                    help="comma-separated subset of gbcd, cholesky, cg, cg-numpy (CG with "
                         "the kernel computed by SciPy's cdist: slow; default: "
                         "%(default)s)")
    gp.add_argument("--cg-max-time", type=float, default=300.0,
                    help="seconds after which CG is stopped and reported as it stands "
                         "(default: %(default)s)")
    sub.add_parser("combinations", help="print the table of valid combinations (Markdown)")
    args = parser.parse_args(argv)
    if getattr(args, "plot", None):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error("--plot needs matplotlib (pip install matplotlib)")

    if args.command in ("demo", "gp-demo", "reproduce"):
        try:
            load_experiment("_common")
        except ImportError as exc:
            parser.error(str(exc))
    if args.command == "demo":
        run_demo = load_experiment("paper_figures").demo
        size = dict(n_samples=200, n_features=2000) if args.small else {}
        run_demo(plot_file=args.plot, max_iter=args.iterations, block_size=args.block_size,
                 **size)
    elif args.command == "gp-demo":
        gp_module = load_experiment("gp_demo")
        SOLVERS, gp_demo = gp_module.SOLVERS, gp_module.demo
        solvers = [s for s in args.solvers.split(",") if s]
        bad = [s for s in solvers if s not in SOLVERS]
        if bad:
            parser.error(f"--solvers: unknown {bad}; choose from {', '.join(SOLVERS)}")
        if args.n_train < 2 or args.n_test < 1:
            parser.error("--n-train must be at least 2 and --n-test at least 1")
        gp_demo(args.n_train, args.n_test, solvers, args.cg_max_time)
    elif args.command == "combinations":
        from ._reference import reference_markdown
        print(reference_markdown(), end="")
    elif args.command == "reproduce" and args.figure == "gpcv":
        if args.draws < 1:
            parser.error("--draws must be at least 1")
        gpcv = load_experiment("gpcv").reproduce
        gpcv(plot_file=args.plot, draws=args.draws, quick=args.quick)
    elif args.command == "reproduce" and args.figure == "cholqr":
        if args.small:
            parser.error("--small applies to the figures of the block coordinate descent "
                         "paper; use --quick with cholqr")
        reproduce_cholqr = load_experiment("cholqr").reproduce
        reproduce_cholqr(plot_file=args.plot, quick=args.quick)
    elif args.command == "reproduce":
        if args.quick:
            parser.error("--quick applies to gpcv and cholqr; use --small with the figures")
        reproduce = load_experiment("paper_figures").reproduce
        reproduce(args.figure, plot_file=args.plot, max_iter=args.iterations, small=args.small)
    return 0


if __name__ == "__main__":
    sys.exit(main())
