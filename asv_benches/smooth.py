"""Smooth L2-regularized models on real data: ``bcd.solve(problem)`` with no
options against the fastest peer, one row per loss (see
``asv_benches/benchmarks/bench_smooth.py``).

Usage, from the repository root with bcd and its benchmark dependencies
installed (``pip install scikit-learn glum`` and ``pip install --no-deps
dmba ISLP`` for the data)::

    python -m asv_benches.smooth                 # every row, 3 repeats
    python -m asv_benches.smooth --rows 0 5 --repeats 1
"""
import argparse

from .benchmarks.bench_smooth import ROWS, available, compare_row
from .benchmarks.common import limit_blas, quiet


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, nargs="*", help="row numbers (default: all)")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: every solver compared runs on one "
                             "core, and the timings do not depend on other load)")
    args = parser.parse_args(argv)
    quiet()
    limit_blas(args.blas_threads)
    chosen = [ROWS[i] for i in args.rows] if args.rows else list(ROWS)
    print(f"{'row':44} {'bcd default':>12} {'fastest peer':>26} {'ratio':>7}  target")
    for name in chosen:
        if not available(name):
            print(f"{name:44} skipped: data or scikit-learn not installed")
            continue
        row = compare_row(name, args.repeats)
        mark = "ok" if row.passed else "MISSED"
        print(f"{row.label:44} {row.bcd_value:>12} {row.reference:>26} {row.value:>7}  "
              f"{row.target} {mark}", flush=True)
        print(f"{'':46}{row.note}", flush=True)


if __name__ == "__main__":
    main()
