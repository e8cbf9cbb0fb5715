"""Distributed fitting (bcd.distributed: CoCoA+ and ProxCoCoA+) on a
LocalCluster of single-threaded worker processes.

Run ``python -m asv_benches.distributed [--workers 4] [--quick]``; it prints

* communication rounds to a relative duality gap of 1e-6 for 1, 2, 4, 8 and
  16 partitions: L2-logistic and ridge (l2 = 1) by CoCoA+, and the Lasso at
  lambda_max / 20 by ProxCoCoA+, on the 20 Newsgroups autos/electronics
  tf-idf matrix (2000 x 29363, the dmba data of ``bench_text``; without it a
  synthetic sparse stand-in of the same shape and density, said so);
* wall time of the distributed fit at 4 partitions (through actors, and
  with one scheduler task per partition and round) against single-process
  ``bcd.solve`` and against every solver of dask-ml's
  ``LogisticRegression`` / ``LinearRegression`` on the same cluster, each
  with the relative objective error it reached (medians of ``REPEATS``).

Each timed fit includes partitioning the data on the workers.  Timings on
a shared machine are noisy; the ratios are taken in one process.

``python -m asv_benches.distributed --wall [options]`` runs the wall-time
comparison of :mod:`asv_benches.distributed_wall` instead (a synthetic
sparse problem large enough for an in-memory solve to take seconds, and
with ``--dask-ml`` the dense comparison with dask-ml); its options follow
``--wall``, e.g. ``--wall --rows 300000 --nnz 50 --workers 2 --dask-ml``.
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

REPEATS = 3
PARTITIONS = (1, 2, 4, 8, 16)
RTOL = 1e-6
#: the round limit of the rounds table ("*": not converged within it)
MAX_ROUNDS = 300
#: dask-ml's solvers fail on scipy.sparse chunks (dask-glm indexes them as
#: dense): the time comparison runs on the dense matrix of the DENSE_TERMS
#: most frequent terms
DENSE_TERMS = 2000


def data():
    """``(A, y, description)``: 20 Newsgroups tf-idf, or a stand-in."""
    try:
        from .benchmarks.bench_text import text_dataset
        A, y = text_dataset()
        return sp.csr_matrix(A), y, f"20 Newsgroups tf-idf {A.shape[0]} x {A.shape[1]}"
    except Exception as exc:  # noqa: BLE001 - the stand-in is reported
        rng = np.random.default_rng(0)
        A = sp.random(2000, 29363, density=0.00587, random_state=0, format="csr")
        y = np.where(A @ rng.standard_normal(29363) > 0, 1.0, -1.0)
        return A, y, f"synthetic sparse stand-in 2000 x 29363 (20 Newsgroups unavailable: {exc})"


def _median_time(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def _fit(X, y, client, max_rounds=5000, **kw):
    """``bcd.distributed.solve`` to the benchmark's relative gap, its
    warnings (e.g. of an unconverged fit) silenced."""
    import bcd.distributed as bd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bd.solve(X, y, client=client, tol=RTOL, relative=True, max_rounds=max_rounds,
                        **kw)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--wall" in argv:
        from .distributed_wall import main as wall
        return wall([a for a in argv if a != "--wall"])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="fewer partitions and repeats")
    parser.add_argument("--max-rounds", type=int, default=MAX_ROUNDS)
    parser.add_argument("--rounds-only", action="store_true", help="only the rounds table")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import dask.array as da
    from distributed import Client, LocalCluster

    import bcd

    A, y, what = data()
    y01 = (y > 0).astype(float)
    m, n = A.shape
    partitions = (1, 4) if args.quick else PARTITIONS
    max_rounds = args.max_rounds
    repeats = 1 if args.quick else REPEATS
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=50)
    client = Client(cluster)
    print(f"data: {what}; cluster: {args.workers} single-threaded worker processes")
    lam = float(np.max(np.abs(A.T @ y))) / 20.0
    problems = {
        "L2-logistic (l2=1)": (bcd.Logistic(A, y01, l2=1.0), dict(loss="logistic", l2=1.0)),
        "ridge (l2=1)": (bcd.LeastSquares(A, y, l2=1.0), dict(loss="squared", l2=1.0)),
        "Lasso (lambda_max/20)": (bcd.LeastSquares(A, y, penalty=bcd.L1(lam)),
                                  dict(loss="squared", l1=lam)),
    }
    refs = {}
    print(f"\nrounds to a relative duality gap of {RTOL:g}")
    print(f"{'problem':26}" + "".join(f"{f'K={k}':>10}" for k in partitions))
    for name, (problem, kw) in problems.items():
        ref = bcd.solve(problem, tol=1e-10, tol_mode="relative", max_iter=10**8,
                        warn=False) if "Lasso" in name else \
            bcd.solve(problem, formulation="dual", tol=1e-10, tol_mode="relative", warn=False)
        refs[name] = ref
        row = []
        for k in partitions:
            axis = 1 if "Lasso" in name else 0
            X = da.from_array(A if axis == 0 else A.tocsc(),
                              chunks=((-1, tuple(np.diff(np.linspace(0, n, k + 1).astype(int))))
                                      if axis else (tuple(np.diff(np.linspace(0, m, k + 1)
                                                                  .astype(int))), -1)),
                              asarray=False)
            yy = y01 if kw["loss"] == "logistic" else y
            r = _fit(X, yy if axis else da.from_array(yy, chunks=(X.chunks[0],)), client,
                     max_rounds, **kw)
            row.append(f"{r.n_rounds - 1}" + ("" if r.converged else "*"))
        print(f"{name:26}" + "".join(f"{v:>10}" for v in row), flush=True)
    print(f"(* = not converged in {max_rounds} rounds; rounds counted after the first, which "
          f"only measures the start)")
    if args.rounds_only:
        client.close()
        cluster.close()
        return
    # wall time on the sparse matrix itself, against single-process bcd.solve
    print(f"\nwall time on the sparse matrix, K=4, to a relative gap of {RTOL:g} "
          f"(median of {repeats})")
    print(f"{'fit':52} {'seconds':>9} {'rounds':>7} {'ratio to in-memory':>19}")
    for name in ("L2-logistic (l2=1)", "ridge (l2=1)"):
        problem, kw = problems[name]
        yy = y01 if kw["loss"] == "logistic" else y
        Xs = da.from_array(A, chunks=(tuple(np.diff(np.linspace(0, m, 5).astype(int))), -1),
                           asarray=False)
        ys = da.from_array(yy, chunks=(Xs.chunks[0],))
        t_mem, _ = _median_time(lambda: bcd.solve(problem, formulation="dual", tol=RTOL,
                                                  tol_mode="relative", warn=False), repeats)
        for label, actors in (("actors", True), ("one task per partition", False)):
            t, r = _median_time(lambda: _fit(Xs, ys, client, actors=actors, **kw), repeats)
            print(f"{name + ': bcd.distributed, ' + label:52} {t:9.3f} {r.n_rounds - 1:7d} "
                  f"{t / t_mem:19.1f}", flush=True)
        print(f"{name + ': bcd.solve in memory':52} {t_mem:9.3f} {'':>7} {1.0:19.1f}",
              flush=True)
    # the time comparison: dense columns of the most frequent terms
    top = np.argsort(-np.diff(sp.csc_matrix(A).indptr))[:DENSE_TERMS]
    A = np.ascontiguousarray(sp.csc_matrix(A)[:, np.sort(top)].toarray())
    m, n = A.shape
    print(f"\ntime comparison on the dense {m} x {n} matrix of the {n} most frequent terms")
    problems = {
        "L2-logistic (l2=1)": (bcd.Logistic(A, y01, l2=1.0), dict(loss="logistic", l2=1.0)),
        "ridge (l2=1)": (bcd.LeastSquares(A, y, l2=1.0), dict(loss="squared", l2=1.0)),
    }
    for name, (problem, kw) in problems.items():
        refs[name] = bcd.solve(problem, formulation="dual", tol=1e-10, tol_mode="relative",
                               warn=False)

    print(f"\nwall time to a relative gap of {RTOL:g} (median of {repeats}); "
          f"objective error relative to the optimum")
    print(f"{'fit':52} {'seconds':>9} {'rel. error':>11} {'ratio to bcd.dist':>18}")
    K = 4
    for name in ("L2-logistic (l2=1)", "ridge (l2=1)"):
        problem, kw = problems[name]
        opt = refs[name].objective
        yy = y01 if kw["loss"] == "logistic" else y
        Xd = da.from_array(A, chunks=(m // K, -1), asarray=False)
        yd = da.from_array(yy, chunks=(m // K,))

        t_dist, r = _median_time(lambda: _fit(Xd, yd, client, **kw), repeats)
        rows = [(f"{name}: bcd.distributed K={K} ({r.n_rounds - 1} rounds)", t_dist,
                 r.objective)]

        t_tasks, rt = _median_time(lambda: _fit(Xd, yd, client, actors=False, **kw),
                                   repeats)
        rows.append((f"{name}: bcd.distributed K={K}, one task per partition", t_tasks,
                     rt.objective))
        t_mem, rm = _median_time(lambda: bcd.solve(problem, formulation="dual", tol=RTOL,
                                                   tol_mode="relative", warn=False), repeats)
        rows.append((f"{name}: bcd.solve in memory", t_mem, rm.objective))
        for solver, t, obj in _dask_ml(name, Xd, yd, yy, problem, repeats, client):
            rows.append((f"{name}: dask-ml {solver}", t, obj))
        for label, t, obj in rows:
            err = "-" if obj is None else f"{abs(obj - opt) / abs(opt):.1e}"
            print(f"{label:52} {t:9.3f} {err:>11} {t / t_dist:18.2f}", flush=True)
    client.close()
    cluster.close()


#: seconds a dask-ml fit may run before it is stopped (its workers restarted)
DASK_ML_LIMIT = 60.0


def _dask_ml(name, Xd, yd, yy, problem, repeats, client=None, C=1.0):
    """Every solver of dask-ml's LogisticRegression / LinearRegression with the
    same objective (sum of losses + 1/(2 C) ||w||^2, no intercept), each
    fit stopped after ``DASK_ML_LIMIT`` seconds (the cluster is restarted to
    stop it, and the row says so)."""
    import concurrent.futures
    try:
        from dask_ml.linear_model import LinearRegression, LogisticRegression
    except ImportError:
        return [("(dask-ml not installed)", float("nan"), None)]
    out = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    for solver in ("admm", "lbfgs", "newton", "proximal_grad", "gradient_descent"):
        cls = LogisticRegression if "logistic" in name else LinearRegression
        params = dict(penalty="l2", C=C, fit_intercept=False, solver=solver, tol=1e-8,
                      max_iter=500)

        def fit():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cls(**params).fit(Xd, yd)

        times, fitted = [], None
        try:
            for _ in range(repeats):
                t = time.perf_counter()
                fitted = pool.submit(fit).result(timeout=DASK_ML_LIMIT)
                times.append(time.perf_counter() - t)
            obj = problem.objective(np.asarray(fitted.coef_).ravel())
            out.append((solver, statistics.median(times), obj))
        except concurrent.futures.TimeoutError:
            out.append((f"{solver} (stopped after {DASK_ML_LIMIT:.0f} s)", DASK_ML_LIMIT,
                        None))
            if client is not None:
                client.restart()
                pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        except Exception as exc:  # noqa: BLE001 - reported in the table
            out.append((f"{solver} failed: {type(exc).__name__}: {str(exc)[:40]}",
                        float("nan"), None))
    return out


if __name__ == "__main__":
    sys.exit(main())
