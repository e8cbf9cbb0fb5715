"""Multinomial CoCoA+ against single-process bcd.solve: rounds and objective
agreement for 1, 2 and 3 row partitions (the last with an empty one), with
and without intercepts, on a LocalCluster of two single-threaded worker
processes.

Run ``OPENBLAS_NUM_THREADS=1 python -m experiments.distributed_multinomial``.
The reference without intercepts is the in-memory dual
(``formulation="dual"``, gradient tolerance 1e-11); with intercepts it is
the primal solve of the problem with an unpenalized column of ones
(gradient tolerance 1e-10).  The distributed fits stop at a relative
duality gap of 1e-10.
"""
import sys
import time
import warnings

import numpy as np


def main():
    import dask.array as da
    import distributed

    import bcd
    import bcd.distributed as bd

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    client = distributed.Client(cluster)
    rng = np.random.default_rng(0)
    m, n, K = 60, 15, 4
    A = rng.standard_normal((m, n))
    y = np.argmax(A @ rng.standard_normal((n, K)) + rng.standard_normal((m, K)), axis=1)
    sw = rng.uniform(0.5, 2, m)
    print(f"{m} x {n}, {K} classes, l2 = 3, sample weights in [0.5, 2]; relative gap 1e-10")
    print(f"{'intercept':>9} {'row chunks':>14} {'rounds':>7} {'gap':>10} "
          f"{'(P - P_ref) / P_ref':>20} {'seconds':>8}")
    for intercept in (False, True):
        if intercept:
            l2 = np.full((n + 1, K), 3.0)
            l2[-1] = 0.0
            prob = bcd.Multinomial(np.hstack([A, np.ones((m, 1))]), y, l2=l2.ravel(),
                                   sample_weight=sw)
            ref = bcd.solve(prob, tol=1e-10, max_iter=200000)
        else:
            prob = bcd.Multinomial(A, y, l2=3.0, sample_weight=sw)
            ref = bcd.solve(prob, formulation="dual", tol=1e-11)
        for chunks in [(60,), (25, 35), (10, 0, 50)]:
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                r = bd.solve(da.from_array(A, chunks=(chunks, -1)),
                             da.from_array(y.astype(float), chunks=(chunks,)),
                             loss="multinomial", l2=3.0, sample_weight=sw,
                             fit_intercept=intercept, client=client, tol=1e-10,
                             relative=True, local_epochs=3, max_rounds=3000)
            seconds = time.perf_counter() - t
            x = np.vstack([r.x.reshape(n, K), r.intercept[None]]).ravel() if intercept \
                else r.x
            assert abs(prob.objective(x) - r.objective) <= 1e-12 * abs(r.objective)
            print(f"{str(intercept):>9} {str(chunks):>14} {r.n_rounds:7d} "
                  f"{r.duality_gap:10.2e} {(r.objective - ref.objective) / ref.objective:20.2e} "
                  f"{seconds:8.2f}")
    client.close()
    cluster.close()


if __name__ == "__main__":
    sys.exit(main())
