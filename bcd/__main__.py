"""Command line: ``python -m bcd demo [--plot FILE.png]``."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bcd",
                                     description="Block coordinate descent experiments.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the paper's Figure 4 on datasets A and B")
    demo.add_argument("--plot", metavar="FILE.png", help="write the curves (needs matplotlib)")
    demo.add_argument("--iterations", type=int, default=500)
    demo.add_argument("--block-size", type=int, default=5)
    demo.add_argument("--small", action="store_true",
                      help="use 200 x 2000 versions of the datasets (a quick check)")
    args = parser.parse_args(argv)

    if args.command == "demo":
        from ._experiments import demo as run_demo
        if args.plot:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                parser.error("--plot needs matplotlib (pip install matplotlib)")
        size = dict(n_samples=200, n_features=2000) if args.small else {}
        run_demo(plot_file=args.plot, max_iter=args.iterations, block_size=args.block_size,
                 **size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
