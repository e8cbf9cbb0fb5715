"""Cross-validated estimators of bcd against scikit-learn's (same grid, same
folds) and the fixed cost of ``bcd.solve`` (see
``asv_benches/benchmarks/bench_cv.py``).

Usage, from the repository root::

    python -m asv_benches.cv                       # every row, 3 repeats
    python -m asv_benches.cv --datasets "dense 500x200" --repeats 1
"""
import argparse

from .benchmarks.bench_cv import DATASETS, ESTIMATORS, compare, fixed_cost, path_fixed_cost
from .benchmarks.common import limit_blas, quiet


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    parser.add_argument("--estimators", nargs="*", default=ESTIMATORS)
    parser.add_argument("--blas-threads", type=int, default=1)
    args = parser.parse_args(argv)
    quiet()
    limit_blas(args.blas_threads)
    print(f"fixed cost of bcd.solve (50 x 20 Lasso at its solution): "
          f"{fixed_cost() * 1e3:.3f} ms", flush=True)
    for kind in ("lasso", "logistic"):
        print(f"fixed cost of one compiled path solve of the CV estimators ({kind}, 50 x 20, "
              f"at its solution): {path_fixed_cost(kind) * 1e3:.4f} ms", flush=True)
    print(f"{'dataset':22} {'estimator':22} {'bcd s':>8} {'sklearn s':>10} {'ratio':>7} "
          f"{'bcd score':>11} {'sk score':>11}")
    for name in args.datasets:
        for estimator in args.estimators:
            try:
                ours, ref, s_ours, s_ref = compare(name, estimator, args.repeats)
            except (ImportError, NotImplementedError) as error:
                print(f"{name:22} {estimator:22} skipped: {error}")
                continue
            print(f"{name:22} {estimator:22} {ours:8.3f} {ref:10.3f} {ours / ref:7.2f} "
                  f"{s_ours:11.5g} {s_ref:11.5g}", flush=True)


if __name__ == "__main__":
    main()
