"""Wall time of bcd.distributed against single-process bcd.solve on a
problem large enough for the comparison to mean something: a synthetic
sparse matrix of ``--rows`` x ``--features`` with ``--nnz`` non-zeros a row
(default 400,000 x 100,000, 10 a row: 4 million), L2-logistic and ridge
(l2 = 1) to a relative duality gap of 1e-6, on a LocalCluster of
``--workers`` single-threaded worker processes.

Run ``OPENBLAS_NUM_THREADS=1 python -m asv_benches.distributed_wall`` (or
``python -m asv_benches.distributed --wall ...`` with the same options).  It
prints, for each problem, the in-memory time (median of ``--repeats``), the
distributed time from the driver's memory ("handed over": a list of
scipy.sparse row blocks, each sent to its worker only, the transfer
timed) and from blocks already held by the workers ("on workers", the
case of data loaded on the cluster; the ratio is of this one), the
rounds, and the time per round split into the workers' longest local
computation and the rest (communication, waiting, the driver's work).  ``--multinomial N`` adds the softmax loss with N
classes (labels the argmax of a planted model's scores).

``--dask-ml`` adds the comparison with dask-ml's ``LogisticRegression``
and ``LinearRegression`` (``--dask-ml-losses``; every solver; dask-glm
handles dense dask arrays only, so this part runs on a dense synthetic
matrix of ``--dense-rows`` x ``--dense-features``, with targets and
labels from a planted model), each fit stopped after
``--dask-ml-limit`` seconds; it prints the times of in-memory bcd (no
options), bcd.distributed and dask-ml with their objective errors and
ratios.  The distributed fits start from data persisted on the workers
(not timed), and each method's timed fits follow an untimed warm-up on the
same data (bcd.distributed: one fit; dask-ml: a fit of two iterations in
the same child process), so that neither pays for the workers' first touch
of fresh memory: on a virtual machine that costs up to ten times a copy of
the same size (180 ms for the first 20 MB copy in a worker, 7-15 ms after).
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

RTOL = 1e-6


def data(rows, features, nnz, seed=0):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, features, size=rows * nnz).astype(np.int32)
    indptr = np.arange(0, rows * nnz + 1, nnz, dtype=np.int64)
    A = sp.csr_matrix((rng.standard_normal(rows * nnz) / np.sqrt(nnz), indices, indptr),
                      shape=(rows, features))
    A.sum_duplicates()
    w = rng.standard_normal(features) * (rng.random(features) < 0.1)
    b = A @ w + 0.1 * rng.standard_normal(rows)
    return A, b, (b > np.median(b)).astype(np.float64)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--features", type=int, default=100_000)
    parser.add_argument("--nnz", type=int, default=10)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--multinomial", type=int, default=0, metavar="N",
                        help="also the multinomial loss with N classes")
    parser.add_argument("--only", choices=("logistic", "ridge", "multinomial", "none"),
                        default=None, help="only this problem of the sparse data")
    parser.add_argument("--malloc-trim", choices=("dask", "off"), default="dask",
                        help="the workers' MALLOC_TRIM_THRESHOLD_: dask's default (65536), "
                             "or glibc's own (off)")
    parser.add_argument("--dask-ml", action="store_true",
                        help="also the dense comparison with dask-ml's LogisticRegression")
    parser.add_argument("--dense-rows", type=int, default=100_000)
    parser.add_argument("--dense-features", type=int, default=100)
    parser.add_argument("--dense-l2", type=float, nargs="+", default=[1.0],
                        help="ridge weights of the dense comparison (one table each)")
    parser.add_argument("--dask-ml-limit", type=float, default=120.0)
    parser.add_argument("--dask-ml-losses", nargs="+", choices=("logistic", "squared"),
                        default=["logistic", "squared"],
                        help="the dense comparison's losses: LogisticRegression (L2-logistic) "
                             "and LinearRegression (ridge)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from distributed import Client, LocalCluster

    import bcd
    import bcd.distributed as bd

    A, b, labels = data(args.rows, args.features, args.nnz)
    K = args.workers
    print(f"data: synthetic sparse {A.shape[0]} x {A.shape[1]}, {A.nnz} non-zeros "
          f"({A.data.nbytes + A.indices.nbytes + A.indptr.nbytes:,} bytes); {K} "
          f"single-threaded worker processes; relative gap {RTOL:g}; medians of "
          f"{args.repeats}")
    if args.malloc_trim == "off":
        # worker processes without dask's MALLOC_TRIM_THRESHOLD_ (the nanny
        # sets it in its own environment too, which the workers inherit)
        import dask
        os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
        environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
        environ.pop("MALLOC_TRIM_THRESHOLD_", None)
        dask.config.set({"distributed.nanny.pre-spawn-environ": environ})
    print(f"worker processes: malloc trim threshold "
          f"{'of dask (65536)' if args.malloc_trim == 'dask' else 'glibc default'}")
    cluster = LocalCluster(n_workers=K, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=50)
    client = Client(cluster)
    edges = np.linspace(0, A.shape[0], K + 1).astype(int)
    blocks = [A[a:c] for a, c in zip(edges[:-1], edges[1:])]
    # the same blocks already on the workers, one each, round-robin over
    # the sorted workers as bcd.distributed places them (the case of data
    # loaded on the cluster: nothing travels but the round's vectors)
    workers = sorted(client.scheduler_info()["workers"])
    held = [client.scatter(blk, workers=[workers[k % len(workers)]])
            for k, blk in enumerate(blocks)]
    print(f"{'problem':32} {'in memory':>10} {'handed over':>12} {'on workers':>11} "
          f"{'ratio':>6} {'rounds':>7} {'s/round':>8} {'worker s':>9} {'other s':>8}")
    problems = [("L2-logistic (l2=1)", "logistic", bcd.Logistic(A, labels, l2=1.0), labels),
                ("ridge (l2=1)", "squared", bcd.LeastSquares(A, b, l2=1.0), b)]
    if args.multinomial:
        classes = multinomial_labels(A, args.multinomial)
        problems.append((f"multinomial, {args.multinomial} classes (l2=1)", "multinomial",
                         bcd.Multinomial(A, classes, l2=1.0), classes.astype(np.float64)))
    if args.only is not None:
        problems = [p for p in problems if p[1] == {"ridge": "squared"}.get(args.only,
                                                                            args.only)]
    for name, loss, problem, y in problems:
        # the in-memory solve to the same certified relative gap (the
        # multinomial dual tests the gradient: its tol is lowered until the
        # gap it reports is within RTOL)
        mem_tol = RTOL
        for _ in range(6):
            ref = bcd.solve(problem, formulation="dual", tol=mem_tol, tol_mode="relative",
                            warn=False)
            if ref.duality_gap is not None and ref.duality_gap <= RTOL * abs(ref.objective):
                break
            mem_tol /= 10.0
        mem = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            ref = bcd.solve(problem, formulation="dual", tol=mem_tol, tol_mode="relative",
                            warn=False)
            mem.append(time.perf_counter() - t)
        ys = [y[a:c] for a, c in zip(edges[:-1], edges[1:])]
        fits, on_workers, results = [], [], []
        for _ in range(args.repeats):
            for source, times in ((blocks, fits), (held, on_workers)):
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = bd.solve(source, ys, loss=loss, l2=1.0, client=client, tol=RTOL,
                                 relative=True, max_rounds=1000)
                times.append(time.perf_counter() - t)
            results.append(r)
        r = results[int(np.argsort(on_workers)[len(on_workers) // 2])]
        h = r.history
        per_round = np.diff(h.time)
        worker = h.worker_time[1:]
        err = abs(r.objective - ref.objective) / abs(ref.objective)
        t_mem, t_fit, t_held = (statistics.median(v) for v in (mem, fits, on_workers))
        print(f"{name:32} {t_mem:10.2f} {t_fit:12.2f} {t_held:11.2f} "
              f"{t_held / t_mem:6.1f} {r.n_rounds - 1:7d} {np.median(per_round):8.3f} "
              f"{np.median(worker):9.3f} {np.median(per_round - worker):8.3f}"
              f"   (converged {r.converged}, objective within {err:.0e} of in-memory"
              + (f", in-memory tol {mem_tol:g}" if mem_tol != RTOL else "") + ")",
              flush=True)
    if args.dask_ml:
        for l2 in args.dense_l2:
            for loss in args.dask_ml_losses:
                dense_comparison(client, args, l2, loss)
    client.close()
    cluster.close()


#: the solvers of dask-ml's LogisticRegression
DASK_ML_SOLVERS = ("admm", "lbfgs", "newton", "proximal_grad", "gradient_descent")


def _dask_ml_fit(address, A, y, chunk, solver, C, pipe, loss="logistic"):
    """One dask-ml fit (LogisticRegression, or LinearRegression for
    ``loss="squared"``) in a child process, on the cluster at ``address``;
    sends back (seconds of the fit, coef_) or the error."""
    import warnings

    import dask.array as da
    from dask_ml.linear_model import LinearRegression, LogisticRegression
    from distributed import Client
    try:
        with Client(address) as client, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Xd = da.from_array(A, chunks=(chunk, -1))
            yd = da.from_array(y, chunks=(chunk,))
            Xd, yd = client.persist([Xd, yd])
            estimator = LinearRegression if loss == "squared" else LogisticRegression
            try:
                # the warm-up: two iterations, not timed
                estimator(penalty="l2", C=C, fit_intercept=False, solver=solver, tol=1e-8,
                          max_iter=2).fit(Xd, yd)
            except Exception:  # noqa: BLE001 - the timed fit reports failures
                pass
            t = time.perf_counter()
            model = estimator(penalty="l2", C=C, fit_intercept=False, solver=solver, tol=1e-8,
                              max_iter=500).fit(Xd, yd)
            pipe.send((time.perf_counter() - t, np.asarray(model.coef_)))
    except Exception as exc:  # noqa: BLE001 - reported in the table
        pipe.send((float("nan"), f"failed: {type(exc).__name__}: {str(exc)[:40]}"))


def _dask_ml_isolated(client, A, y, chunk, solver, C, limit, loss="logistic"):
    """``(seconds, coef, failure)`` of a dask-ml fit run in a child process
    (its data persisted on the cluster first, not timed), which is killed,
    and the cluster restarted, when it runs past ``limit`` seconds: a fit
    stopped in a thread would go on submitting work to the cluster and slow
    every later measurement."""
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_dask_ml_fit,
                        args=(client.scheduler.address, A, y, chunk, solver, C, there, loss))
    child.start()
    start = time.perf_counter()
    # the child's start and the persist are not in the limit's way: the fit's
    # own clock is measured in the child; the limit here covers both generously
    if here.poll(limit + 30.0):
        seconds, coef = here.recv()
        child.join()
        if isinstance(coef, str):
            return seconds, None, coef
        if seconds > limit:
            return seconds, None, f"past the limit: {seconds:.0f} s"
        return seconds, coef, None
    child.kill()
    child.join()
    client.restart()
    return float(limit), None, (f"stopped: no result after {time.perf_counter() - start:.0f} s, "
                                f"{limit:.0f} s + 30 s to start")


def multinomial_labels(A, n_classes, seed=1):
    """Labels of ``n_classes`` classes: the argmax of a planted model's
    scores plus noise."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((A.shape[1], n_classes)) * (rng.random((A.shape[1], 1)) < 0.1)
    S = np.asarray(A @ W) + 0.3 * rng.standard_normal((A.shape[0], n_classes))
    return np.argmax(S, axis=1)


def dense_comparison(client, args, l2=1.0, loss="logistic"):
    """L2-logistic (or ridge, ``loss="squared"``) on a dense matrix:
    in-memory bcd, bcd.distributed and every solver of dask-ml's
    LogisticRegression (LinearRegression), on the same objective: the sum
    of the log-losses (half the squared residuals) plus l2/2 ||w||^2, no
    intercept.  dask-glm's objectives are the sum of the log-losses, or of
    the squared residuals (no half), plus ||w||^2 / (2 C): dask-ml's
    C = 1 / l2 (logistic), 1 / (2 l2) (ridge)."""
    import dask.array as da
    import distributed

    import bcd
    from . import distributed as bench

    rng = np.random.default_rng(2)
    m, n = args.dense_rows, args.dense_features
    A = rng.standard_normal((m, n))
    w = rng.standard_normal(n) / np.sqrt(n)
    y = A @ w + 0.5 * rng.standard_normal(m)
    if loss == "logistic":
        y = (y > 0).astype(np.float64)
        problem, C = bcd.Logistic(A, y, l2=l2), 1.0 / l2
    else:
        problem, C = bcd.LeastSquares(A, y, l2=l2), 0.5 / l2
    opt = bcd.solve(problem, formulation="dual", tol=1e-10, tol_mode="relative",
                    warn=False).objective
    K = args.workers
    Xd = da.from_array(A, chunks=(-(-m // K), -1))
    yd = da.from_array(y, chunks=(Xd.chunks[0],))
    print(f"\ndense comparison with dask-ml: {m} x {n} float64 ({A.nbytes:,} bytes), "
          f"{'L2-logistic' if loss == 'logistic' else 'ridge'} (l2 = {l2:g}, no intercept), "
          f"relative gap {RTOL:g}; medians of "
          f"{args.repeats}; dask-ml fits stopped after {args.dask_ml_limit:.0f} s")
    # in memory: bcd.solve with no options, as a user calls it
    t_mem, _ = bench._median_time(lambda: bcd.solve(problem, warn=False), args.repeats)
    # the data persisted on the workers first (not timed), as for dask-ml
    Xp, yp = client.persist([Xd, yd])
    distributed.wait([Xp, yp])
    bench._fit(Xp, yp, client, loss=loss, l2=l2, max_time=args.dask_ml_limit)   # warm-up
    t_dist, r = bench._median_time(
        lambda: bench._fit(Xp, yp, client, loss=loss, l2=l2,
                           max_time=args.dask_ml_limit), args.repeats)
    rows = [("bcd.solve in memory (no options)", t_mem, None),
            (f"bcd.distributed K={K} ({r.n_rounds - 1} rounds"
             + (")" if r.converged else f", {r.status}: stopped)"), t_dist, r.objective)]
    for solver in DASK_ML_SOLVERS:
        times, coef, failure = [], None, None
        for _ in range(args.repeats):
            t, coef, failure = _dask_ml_isolated(client, A, y, Xd.chunks[0][0], solver,
                                                 C, args.dask_ml_limit, loss)
            if failure is not None:
                break
            times.append(t)
        if failure is not None:
            rows.append((f"dask-ml {solver} ({failure})", t, None))
        else:
            rows.append((f"dask-ml {solver}", statistics.median(times),
                         problem.objective(np.asarray(coef).ravel())))
    print(f"{'fit':52} {'seconds':>9} {'rel. error':>11} {'/ in-memory':>12} "
          f"{'/ bcd.dist':>11}")
    for label, t, obj in rows:
        err = "-" if obj is None else f"{abs(obj - opt) / abs(opt):.1e}"
        print(f"{label:52} {t:9.2f} {err:>11} {t / t_mem:12.1f} {t / t_dist:11.2f}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
