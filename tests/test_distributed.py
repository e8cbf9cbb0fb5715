"""bcd.distributed on a real LocalCluster (two worker processes, one thread
each): CoCoA+, ProxCoCoA+ and Newton against single-process bcd.solve, the gap
certificate, partition locality, a worker killed mid-fit, the estimators on
dask arrays and the bad inputs."""
import os
import signal
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import bcd

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
import bcd.distributed as bd  # noqa: E402

#: uneven row (or column) chunks for 1 to 4 partitions; the 4th has an empty one
CHUNKS = {1: (40,), 2: (13, 27), 3: (5, 20, 15), 4: (10, 0, 18, 12)}
M, N = 40, 60
#: the ridge weight of the CoCoA+ comparisons
L2 = 20.0


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _data(seed=0, sparse=False, m=M, n=N):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    if sparse:
        A = sp.csr_matrix(A * (rng.random((m, n)) < 0.3))
    b = np.asarray(A @ rng.standard_normal(n)).ravel() + 0.1 * rng.standard_normal(m)
    return A, b, (b > np.median(b)).astype(float)


def _dask(A, chunks, axis=0):
    c = (chunks, -1) if axis == 0 else (-1, chunks)
    return da.from_array(A, chunks=c, asarray=False)


def _problem(loss, A, b, labels, l2=5.0, l1=0.0, sw=None):
    pen = bcd.L1(l1) if l1 else None
    if loss == "squared":
        return bcd.LeastSquares(A, b, l2=l2, penalty=pen, sample_weight=sw)
    if loss == "logistic":
        return bcd.Logistic(A, labels, l2=l2, penalty=pen, sample_weight=sw)
    return bcd.problems.LinearSVM(A, labels, loss=loss, l2=l2, penalty=pen, sample_weight=sw)


def _agree(result, reference_objective, strong, tol_gap):
    """The distributed optimum matches: objective within 1e-7 relative, and
    its gap certificate is at most the tolerance."""
    assert result.converged and result.duality_gap <= tol_gap
    assert abs(result.objective - reference_objective) <= 1e-7 * abs(reference_objective)


@pytest.mark.parametrize("K", [1, 2, 3, 4])
@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge", "squared_hinge"])
def test_cocoa_equals_single_process_solve(client, loss, K):
    sparse = K % 2 == 0
    A, b, labels = _data(K, sparse)
    sw = np.random.default_rng(5).uniform(0.5, 2.0, M)
    problem = _problem(loss, A, b, labels, l2=L2, sw=sw)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    assert ref.converged
    y = b if loss == "squared" else labels
    tol = 1e-9
    result = bd.solve(_dask(A, CHUNKS[K]), da.from_array(y, chunks=CHUNKS[K]), loss=loss,
                      l2=L2, sample_weight=sw, client=client, tol=tol, relative=True,
                      local_epochs=3, max_rounds=2000, method="cocoa+")
    assert result.method == "cocoa+" and result.n_partitions == K
    _agree(result, ref.objective, L2, tol * abs(result.objective))
    # strong convexity (l2): |x - x*|^2 <= 2 (gap + gap_ref) / l2
    bound = np.sqrt(2 * (result.duality_gap + ref.duality_gap) / L2)
    assert np.linalg.norm(result.x - ref.x) <= bound + 1e-9
    # the certificate is the problem's own objective at the returned point
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)
    h = result.history
    assert len(h) == result.n_rounds and np.all(np.diff(h.time) >= 0)
    # the workers' local work is a part of each round's time
    assert np.all(h.worker_time > 0) and np.all(h.worker_time[1:] <= np.diff(h.time))
    # w to each worker once (two workers here), one vector back per partition
    assert np.all(h.bytes_sent >= 8 * N * (K + 1)) and np.all(h.bytes_sent <= 2 * 8 * N * K)


def test_cocoa_from_a_problem_and_a_list_of_partitions(client):
    A, b, _ = _data(7)
    problem = bcd.LeastSquares(A, b, l2=L2)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    r1 = bd.solve(problem, client=client, n_partitions=3, tol=1e-9, relative=True,
                  local_epochs=3)
    _agree(r1, ref.objective, L2, 1e-9 * r1.objective)
    futures = client.scatter([A[:15], A[15:]])
    r2 = bd.solve(futures, [b[:15], b[15:]], loss="squared", l2=L2, client=client,
                  tol=1e-9, relative=True, local_epochs=3)
    _agree(r2, ref.objective, L2, 1e-9 * r2.objective)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_cocoa_with_an_intercept(client, loss):
    A, b, labels = _data(3, m=40, n=30)
    An = np.hstack([A, np.ones((40, 1))])
    ridge = np.r_[np.full(30, 5.0), 0.0]
    y = b if loss == "squared" else labels
    problem = bcd.LeastSquares(An, y, l2=ridge) if loss == "squared" else \
        bcd.Logistic(An, y, l2=ridge)
    ref = bcd.solve(problem, tol=1e-10)
    result = bd.solve(_dask(A, (25, 15)), da.from_array(y, chunks=(25, 15)), loss=loss,
                      l2=5.0, fit_intercept=True, client=client, tol=1e-9, relative=True,
                      local_epochs=3, max_rounds=3000)
    assert result.converged
    x = np.r_[result.x, result.intercept]
    assert problem.objective(x) == pytest.approx(ref.objective, rel=1e-7)


@pytest.mark.parametrize("loss,l2,K", [("squared", 0.0, 1), ("squared", 0.0, 3),
                                       ("squared", 2.0, 2), ("logistic", 0.0, 1)])
def test_proxcocoa_equals_single_process_solve(client, loss, l2, K):
    rng = np.random.default_rng(K)
    m, n = 80, 24
    A = rng.standard_normal((m, n)) * (rng.random((m, n)) < 0.1)
    A = sp.csc_matrix(A) if K == 2 else A
    b = np.asarray(A @ rng.standard_normal(n)).ravel() + 0.1 * rng.standard_normal(m)
    labels = (b > 0).astype(float)
    y = b if loss == "squared" else labels
    probe = _problem(loss, A, b, labels, l2=0.0)
    lam = 0.1 * np.max(np.abs(probe.gradient(np.zeros(n))))
    problem = _problem(loss, A, b, labels, l2=l2, l1=lam)
    ref = bcd.solve(problem, tol=1e-12, max_iter=10**6)
    chunks = {1: (24,), 2: (7, 17), 3: (10, 0, 14)}[K]
    result = bd.solve(_dask(A, chunks, axis=1), y, loss=loss, l1=lam, l2=l2, client=client,
                      tol=1e-9, relative=True, local_epochs=3, max_rounds=3000)
    assert result.method == "proxcocoa+"
    _agree(result, ref.objective, l2, 1e-9 * result.objective)
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)
    # only vectors of n_samples travel: one or two to each worker, one to
    # three back from each partition; besides them, the working set of the
    # certificate (16 bytes per column and round) and its columns, once each
    sent = result.history.bytes_sent
    assert np.all(sent >= 8 * m * (K + 1))
    over = np.maximum(sent - 5 * 8 * m * K - 16 * n, 0)
    assert over.sum() <= 20 * sp.csc_matrix(A).nnz


def test_partitions_stay_on_their_workers(client):
    """Each worker holds only its own partitions (and the fit's small
    vectors): the bytes stored on every worker stay below the matrix's."""
    A, b, _ = _data(11, m=400, n=60)
    X = _dask(A, (100, 100, 100, 100))
    seen = []

    def spy(rnd, x):
        stored = client.run(lambda dask_worker: dask_worker.state.nbytes)
        seen.append(stored)

    result = bd.solve(X, da.from_array(b, chunks=100), loss="squared", l2=100.0,
                      client=client, tol=1e-6, relative=True, callback=spy, local_epochs=2)
    assert result.converged
    assert result.data_bytes == A.nbytes
    for stored in seen:
        assert len(stored) == 2
        for nbytes in stored.values():
            # two partitions of 100 rows each (placed round-robin), not the 400 rows
            assert A.nbytes // 4 < nbytes <= A.nbytes // 2 + 64 * 1024


@pytest.mark.parametrize("method", ["cocoa+", "newton"])
def test_stored_chunks_are_placed_in_one_message(client, method, monkeypatch):
    # chunks persisted on the cluster have nothing to compute before them:
    # their partitions go to the scheduler in one message, each task still
    # pinned to the worker that holds its chunk; chunks still to compute go
    # one message per partition, with every task of their graph pinned
    A, b, _ = _data(13, m=400, n=30)
    X, y = _dask(A, (100, 100, 100, 100)), da.from_array(b, chunks=100)
    Xp, yp = client.persist([X, y])
    distributed.wait([Xp, yp])
    holders = client.who_has(Xp)
    computes, compute = [], client.compute

    def counted(*args, **kwargs):
        computes.append(kwargs.get("workers"))
        return compute(*args, **kwargs)

    monkeypatch.setattr(client, "compute", counted)
    ref = bcd.solve(bcd.LeastSquares(A, b, l2=L2), tol=1e-12)
    for data, messages in (((Xp, yp), 1), ((X, y), 4)):
        computes.clear()
        with distributed.get_task_stream(client) as stream:
            r = bd.solve(*data, loss="squared", l2=L2, client=client, tol=1e-10,
                         relative=True, method=method)
        assert len(computes) == messages
        _agree(r, ref.objective, L2, 1e-10 * r.objective)
        ran = {}
        for t in stream.data:
            name = str(t["key"]).split("-")[0]
            if name in ("pack", "measure", "array", "getitem"):
                ran.setdefault(t["worker"], []).append(name)
        assert sorted(len([n for n in v if n == "pack"]) for v in ran.values()) == [2, 2]
        if messages == 1:
            # (a chunk may have been copied to another worker by then: every
            # worker that packed holds chunks)
            chunk_workers = {w for k in holders for w in holders[k]}
            packed = [t["worker"] for t in stream.data if str(t["key"]).startswith("pack-")]
            assert len(packed) == 4 and set(packed) <= chunk_workers
    # the annotation pins a task in one message even away from its chunk:
    # chunks persisted on one worker only (left to the scheduler, a chunk
    # was once held by both workers under load), placed on the other
    from bcd.distributed import _driver
    workers = sorted(client.scheduler_info()["workers"])
    Xq, yq = client.persist([_dask(A + 1.0, (100, 100, 100, 100)), da.from_array(b, chunks=100)],
                            workers=[workers[0]], allow_other_workers=False)
    distributed.wait([Xq, yq])
    blocks, ys = Xq.to_delayed().ravel().tolist(), yq.to_delayed().ravel().tolist()
    assert all(set(ws) == {workers[0]} for ws in client.who_has(Xq).values())
    sources = [(k, blocks[k], ys[k], None, 0, False, True) for k in range(4)]
    assert _driver._stored(sources) and not _driver._stored([(0, X, None)])
    away = [workers[1]] * 4
    computes.clear()
    placed = _driver._place(client, sources, away)
    distributed.wait(placed)
    assert len(computes) == 1
    assert [list(client.who_has([f])[f.key]) for f in placed] == [[w] for w in away]


@pytest.mark.parametrize("method", ["cocoa+", "newton"])
def test_a_worker_killed_mid_fit_reaches_the_optimum(client, method):
    A, b, labels = _data(12, m=60, n=60)
    problem = bcd.Logistic(A, labels, l2=5.0)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    pids = list(client.run(os.getpid).values())
    killed = []

    def kill(rnd, x):
        if rnd == 2 and not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(rnd)

    with pytest.warns(RuntimeWarning, match="lost"):
        result = bd.solve(_dask(A, (20, 20, 20)), da.from_array(labels, chunks=20),
                          loss="logistic", l2=5.0, client=client, tol=1e-10, relative=True,
                          callback=kill, local_epochs=3, max_rounds=2000, method=method)
    assert killed and result.n_restarts >= 1 and result.method == method
    _agree(result, ref.objective, 5.0, 1e-10 * result.objective)
    client.wait_for_workers(2, timeout=60)


def test_live_workers_are_asked_of_the_scheduler(client):
    # the client's cached scheduler_info() is replaced by its periodic
    # refresh with a view that lists no workers: a fit that read it took
    # live workers for dead (partitions restarted, or placed again).  With
    # the refresh every millisecond, every answer must list both workers
    import dask
    from bcd._dask import live_workers
    expected = sorted(client.scheduler_info(n_workers=-1)["workers"])
    assert len(expected) == 2
    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}):
        hurried = distributed.Client(client.scheduler.address, set_as_default=False)
    try:
        answers = [live_workers(hurried) for _ in range(1000)]
    finally:
        hurried.close()
    assert all(a == expected for a in answers)


@pytest.mark.parametrize("method", ["cocoa+", "newton"])
def test_a_lost_reply_from_a_live_worker_is_asked_again(client, method, monkeypatch):
    # a communication error on a round's call to a worker that is still in
    # the cluster (the call ran, its reply was lost) repeats the call: the
    # actor answers from its cache, and no partition restarts
    from bcd.distributed import _driver
    A, b, labels = _data(13, m=60, n=40)
    problem = bcd.Logistic(A, labels, l2=5.0)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    original = _driver._Rounds._wait
    waits, failed = [], []

    def lossy(self, call, where, deadline):
        reply = original(self, call, where, deadline)
        waits.append(where)
        if len(waits) == 5 and not failed:
            failed.append(where)
            raise OSError("Unable to contact Actor's worker")
        return reply

    monkeypatch.setattr(_driver._Rounds, "_wait", lossy)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = bd.solve(_dask(A, (20, 20, 20)), da.from_array(labels, chunks=20),
                          loss="logistic", l2=5.0, client=client, tol=1e-10, relative=True,
                          local_epochs=3, max_rounds=2000, method=method)
    assert failed and result.n_restarts == 0 and result.method == method
    _agree(result, ref.objective, 5.0, 1e-10 * result.objective)


@pytest.mark.parametrize("name", ["LogisticRegression", "Ridge", "Lasso", "ElasticNet",
                                  "LinearSVC-squared_hinge", "LinearSVC-hinge"])
def test_estimators_on_dask_arrays_equal_in_memory(client, name):
    from bcd import linear_model as lm
    rng = np.random.default_rng(2)
    X = rng.standard_normal((60, 8))
    y = X @ rng.standard_normal(8) + 0.3 + 0.1 * rng.standard_normal(60)
    if name == "LogisticRegression":
        y = np.where(y > 0.3, "b", "a")
        est = lm.LogisticRegression(C=0.05, tol=1e-8)
    elif name == "Ridge":
        est = lm.Ridge(alpha=30.0, tol=1e-8)
    elif name == "Lasso":
        est = lm.Lasso(alpha=0.05, tol=1e-8, max_iter=5000)
    elif name == "ElasticNet":
        est = lm.ElasticNet(alpha=0.05, l1_ratio=0.5, tol=1e-8, max_iter=5000)
    else:
        y = np.where(y > 0.3, "b", "a")
        est = lm.LinearSVC(loss=name.split("-")[1], C=0.05, tol=1e-8, max_iter=5000)
    mem = type(est)(**est.get_params()).fit(X, y)
    Xd = da.from_array(X, chunks=(25, 8))
    yd = da.from_array(y, chunks=25)
    dist = est.fit(Xd, yd)
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=1e-5, atol=1e-6)
    pred = dist.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), mem.predict(X)) if name in \
        ("LogisticRegression", "LinearSVC-squared_hinge", "LinearSVC-hinge") else np.testing.assert_allclose(pred.compute(), mem.predict(X),
                                                             rtol=1e-5, atol=1e-5)


def test_bad_inputs(client):
    A, b, labels = _data(0)
    X = _dask(A, (20, 20))
    bad = A.copy()
    bad[25, 3] = np.nan
    with pytest.raises(ValueError, match="partition 1"):
        bd.solve(_dask(bad, (20, 20)), da.from_array(b, chunks=20), loss="squared", l2=1.0,
                 client=client)
    with pytest.raises(ValueError, match="y has 39 entries"):
        bd.solve(X, b[:39], loss="squared", l2=1.0, client=client)
    # a y chunked otherwise is rechunked to the rows of X
    r = bd.solve(X, da.from_array(b, chunks=7), loss="squared", l2=5.0, client=client,
                 tol=1e-8, relative=True)
    assert r.converged
    with pytest.raises(ValueError, match="LeastSquares, Logistic, Multinomial, LinearSVM"):
        bd.solve(bcd.Poisson(A, np.abs(np.round(b)), l2=1.0), client=client)
    with pytest.raises(ValueError, match="l2 > 0"):
        bd.solve(X, da.from_array(b, chunks=20), loss="squared", client=client)
    with pytest.raises(ValueError, match="loss must be one of"):
        bd.solve(X, da.from_array(b, chunks=20), loss="poisson", l2=1.0, client=client)
    with pytest.raises(ValueError, match="hinge"):
        bd.solve(X, da.from_array(labels, chunks=20), loss="hinge", l1=1.0, client=client)
    with pytest.raises(ValueError, match="two classes"):
        bd.solve(X, da.from_array(b, chunks=20), loss="logistic", l2=1.0, client=client)
    with pytest.raises(ValueError, match="local_tol"):
        bd.solve(X, da.from_array(b, chunks=20), loss="squared", l2=1.0, client=client,
                 local_tol=1.5)
    with pytest.raises(ValueError, match="sigma"):
        bd.solve(X, da.from_array(b, chunks=20), loss="squared", l2=1.0, client=client,
                 sigma=0.0)
    with pytest.raises(ValueError, match="local_epochs"):
        bd.solve(X, da.from_array(b, chunks=20), loss="squared", l2=1.0, client=client,
                 local_epochs=0)
    with pytest.raises(ValueError, match="or 'auto'"):
        bd.solve(X, da.from_array(b, chunks=20), loss="squared", l2=1.0, client=client,
                 local_epochs="fast")


def _counting_solve(gaps, cfg, seconds=0.0):
    """_worker._local_solve on a stand-in solver whose passes take
    ``seconds`` each and whose local gap after p passes is gaps[p - 1];
    returns (passes made, batches, passes after which the gap was measured)."""
    from bcd.distributed import _worker
    batches, measured = [], []

    def passes(batch, done):
        assert done == sum(batches)
        batches.append(batch)
        time.sleep(seconds * batch)

    def gap():
        measured.append(sum(batches))
        return gaps[sum(batches) - 1]

    epochs, spent = _worker._local_solve(passes, gap, 1.0, cfg)
    assert epochs == sum(batches) and spent >= seconds * epochs
    return epochs, batches, measured


def test_local_solve_stops_at_the_local_gap_the_cap_or_the_time_budget():
    # the gap reaches the target (1) after 3 passes: batches 1 and 2
    assert _counting_solve([5, 3, 1, 1], dict(epochs=50)) == (3, [1, 2], [1, 3])
    # the cap: batches 1, 2, 4, 8 cut to what is left; no gap measured after
    # the last pass, which no pass may follow
    assert _counting_solve([9] * 20, dict(epochs=10)) == (10, [1, 2, 4, 3], [1, 3, 7])
    assert _counting_solve([9], dict(epochs=1)) == (1, [1], [])
    # a budget of 1.5 passes: one pass, since a second would end past it
    assert _counting_solve([9] * 9, dict(epochs=50, budget=0.15), seconds=0.1)[:2] == (1, [1])
    # no budget left: still one pass (a round always proposes)
    assert _counting_solve([9] * 9, dict(epochs=50, budget=0.0))[:2] == (1, [1])
    # a budget of about 3.5 passes: batches of 1 and 2 at most, never a
    # pass started that the time left cannot hold
    epochs, batches, _ = _counting_solve([9] * 9, dict(epochs=50, budget=0.35), seconds=0.1)
    assert 1 <= epochs <= 3 and batches[0] == 1


def test_max_rounds_warns_and_returns_the_certified_point(client):
    A, b, _ = _data(4)
    with pytest.warns(bcd.ConvergenceWarning, match="max_iter"):
        r = bd.solve(_dask(A, (20, 20)), da.from_array(b, chunks=20), loss="squared",
                     l2=0.01, client=client, tol=1e-14, max_rounds=3, method="cocoa+")
    assert not r.converged and r.status == "max_iter" and r.n_rounds == 4
    problem = bcd.LeastSquares(A, b, l2=0.01)
    assert r.objective == pytest.approx(problem.objective(r.x), rel=1e-12)


def test_verbose_prints_each_round(client, capsys):
    A, b, _ = _data(5)
    r = bd.solve(_dask(A, (20, 20)), da.from_array(b, chunks=20), loss="squared", l2=5.0,
                 client=client, tol=1e-6, relative=True, verbose=True)
    out = capsys.readouterr().out
    assert out.count("round") == r.n_rounds and "gap" in out


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_line_search_takes_fewer_rounds_to_the_same_optimum(client, loss):
    """The line search over the combined move (and a smaller sigma') reaches
    the single-process optimum in fewer rounds than the plain adding step."""
    A, b, labels = _data(9, m=80, n=40)
    y = b if loss == "squared" else labels
    problem = _problem(loss, A, b, labels, l2=10.0)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    X, yd = _dask(A, (20, 20, 20, 20)), da.from_array(y, chunks=20)
    rounds = {}
    for name, kw in (("plain", dict(line_search=False)), ("search", {}),
                     ("sigma=1", dict(sigma=1.0))):
        r = bd.solve(X, yd, loss=loss, l2=10.0, client=client, tol=1e-8, relative=True,
                     max_rounds=3000, method="cocoa+", **kw)
        _agree(r, ref.objective, 10.0, 1e-8 * r.objective)
        rounds[name] = r.n_rounds
    assert rounds["search"] < rounds["plain"] and rounds["sigma=1"] < rounds["plain"]



@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_working_set_certificate_needs_fewer_rounds(client, loss):
    """The dual point of the restricted problem on the working set certifies
    the Lasso (and L1-logistic) in fewer rounds than the rescaled residual,
    at the same optimum, and its gap bounds the true suboptimality."""
    rng = np.random.default_rng(21)
    m, n = 120, 90
    A = sp.csc_matrix(rng.standard_normal((m, n)) * (rng.random((m, n)) < 0.2))
    b = np.asarray(A @ (rng.standard_normal(n) * (rng.random(n) < 0.2))).ravel() \
        + 0.1 * rng.standard_normal(m)
    labels = (b > 0).astype(float)
    y = b if loss == "squared" else labels
    probe = _problem(loss, A, b, labels, l2=0.0)
    lam = 0.05 * np.max(np.abs(probe.gradient(np.zeros(n))))
    problem = _problem(loss, A, b, labels, l2=0.0, l1=lam)
    ref = bcd.solve(problem, tol=1e-13, max_iter=10**6)
    rounds = {}
    for ws in (True, False):
        r = bd.solve(_dask(A, (30, 30, 30), axis=1), y, loss=loss, l1=lam, client=client,
                     tol=1e-9, relative=True, max_rounds=3000, working_set=ws)
        _agree(r, ref.objective, 0.0, 1e-9 * r.objective)
        assert r.objective - ref.objective <= r.duality_gap + 1e-11 * abs(ref.objective)
        rounds[ws] = r.n_rounds
    assert rounds[True] < rounds[False]


def test_estimators_on_dask_arrays_keep_max_time(client, monkeypatch):
    # the estimator's max_time bounds the distributed solve (placing
    # included): a CoCoA+ fit (601 coefficients) to a tolerance it cannot
    # reach stops after the round that passes it, with a ConvergenceWarning
    from bcd import linear_model as lm
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3000, 600))
    labels = (A[:, 0] + rng.standard_normal(3000) > 0).astype(int)
    X, y = _dask(A, (1500, 1500)), da.from_array(labels, chunks=1500)
    asked, solve = [], bd.solve

    def spy(*args, **kwargs):
        asked.append(kwargs.get("max_time"))
        return solve(*args, **kwargs)

    monkeypatch.setattr(bd, "solve", spy)
    start = time.perf_counter()
    with pytest.warns(bcd.ConvergenceWarning, match="max_time"):
        est = lm.LogisticRegression(C=100.0, tol=1e-12, max_iter=100000, max_time=0.5)
        est.fit(X, y)
    assert asked == [0.5] and time.perf_counter() - start < 0.5 + 10.0
    assert est.coef_.shape == (1, 600) and np.all(np.isfinite(est.coef_))


def test_estimators_fit_on_the_current_client(client):
    """An estimator fits a dask array on the client made current with
    ``as_current`` (here a second, in-process cluster), not the default."""
    from bcd import linear_model as lm
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 5))
    y = X @ rng.standard_normal(5)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0", silence_logs=50) as other:
        with distributed.Client(other, set_as_default=False) as c2:
            before = other.scheduler.transition_counter
            with c2.as_current():
                est = lm.Ridge(alpha=10.0, tol=1e-8).fit(da.from_array(X, chunks=(20, 5)),
                                                         da.from_array(y, chunks=20))
            assert other.scheduler.transition_counter > before
    mem = lm.Ridge(alpha=10.0, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(est.coef_, mem.coef_, rtol=1e-5, atol=1e-6)


def test_a_fit_waits_for_a_first_worker(monkeypatch):
    """A cluster without workers: the fit waits for one to join (a cluster
    just scaled up, or whose only worker restarts), and names the problem
    when none comes."""
    from bcd.distributed import _driver
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 4))
    y = X @ rng.standard_normal(4)
    ref = bcd.solve(bcd.LeastSquares(X, y, l2=2.0), tol=1e-12)
    monkeypatch.setattr(_driver, "WORKER_WAIT", 1.0)
    with distributed.LocalCluster(n_workers=0, threads_per_worker=1, processes=False,
                                  dashboard_address=":0", silence_logs=50) as empty:
        with distributed.Client(empty, set_as_default=False) as c:
            with pytest.raises(ValueError, match="no workers.*within 1 s"):
                bd.solve(X, y, loss="squared", l2=2.0, client=c)
            monkeypatch.setattr(_driver, "WORKER_WAIT", 60.0)
            empty.scale(1)
            result = bd.solve(X, y, loss="squared", l2=2.0, client=c, tol=1e-10)
    np.testing.assert_allclose(result.x, ref.x, rtol=1e-6, atol=1e-8)


# -- the multinomial model ---------------------------------------------------------

#: row chunks of the multinomial comparisons: 1, 2 and 3 partitions (one empty)
MNL_CHUNKS = {1: (45,), 2: (17, 28), 3: (12, 0, 33)}


def _multinomial_data(seed=0, sparse=False, m=45, n=12, classes=4):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    if sparse:
        A = sp.csr_matrix(A * (rng.random((m, n)) < 0.4))
    scores = np.asarray(A @ rng.standard_normal((n, classes))) + rng.standard_normal((m, classes))
    # labels of any numeric values: the classes are sorted, as in bcd.Multinomial
    y = np.array([-3, 2, 5, 11])[np.argmax(scores, axis=1)]
    return A, y.astype(float), rng.uniform(0.5, 2.0, m)


@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_cocoa_equals_single_process_solve(client, K, sparse):
    A, y, sw = _multinomial_data(K, sparse)
    problem = bcd.Multinomial(A, y, l2=3.0, sample_weight=sw)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    assert ref.converged
    tol = 1e-10
    result = bd.solve(_dask(A, MNL_CHUNKS[K]), da.from_array(y, chunks=MNL_CHUNKS[K]),
                      loss="multinomial", l2=3.0, sample_weight=sw, client=client, tol=tol,
                      relative=True, local_epochs=3, max_rounds=2000)
    assert result.method == "cocoa+" and result.n_partitions == K
    np.testing.assert_array_equal(result.classes, problem.classes)
    assert result.x.shape == (problem.n_coordinates,)
    _agree(result, ref.objective, None, tol * abs(result.objective))
    # the certificate's objective is the problem's at the returned point,
    # and the model predicts the same classes
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)
    W, W_ref = problem.coef(result.x), problem.coef(ref.x)
    # strong convexity (l2 = 3): ||W - W*||^2 <= 2 gap / 3
    assert np.linalg.norm(W - W_ref) <= np.sqrt(2.0 * result.duality_gap / 3.0) + 1e-9
    np.testing.assert_array_equal(np.argmax(A @ W, axis=1), np.argmax(A @ W_ref, axis=1))


def test_multinomial_cocoa_with_an_intercept_and_from_a_problem(client):
    A, y, sw = _multinomial_data(7, m=50)
    n = A.shape[1]
    # the reference: the intercept as an unpenalized column of ones
    l2 = np.full((n + 1, 4), 2.0)
    l2[-1] = 0.0
    augmented = bcd.Multinomial(np.hstack([A, np.ones((50, 1))]), y, l2=l2.ravel(),
                                sample_weight=sw)
    ref = bcd.solve(augmented, tol=1e-10, max_iter=100000)
    assert ref.converged
    tol = 1e-11
    result = bd.solve(_dask(A, (20, 30)), da.from_array(y, chunks=(20, 30)),
                      loss="multinomial", l2=2.0, sample_weight=sw, fit_intercept=True,
                      client=client, tol=tol, relative=True, local_epochs=3, max_rounds=3000)
    assert result.converged and result.intercept.shape == (4,)
    x = np.vstack([result.x.reshape(n, 4), result.intercept[None]]).ravel()
    assert augmented.objective(x) == pytest.approx(result.objective, rel=1e-12)
    assert abs(result.objective - ref.objective) <= 1e-7 * abs(ref.objective)
    # a Multinomial problem gives the data, the loss, the ridge and the weights
    problem = bcd.Multinomial(A, y, l2=2.0, sample_weight=sw)
    direct = bd.solve(problem, client=client, n_partitions=2, tol=tol, relative=True,
                      local_epochs=3)
    expected = bcd.solve(problem, formulation="dual", tol=1e-11).objective
    assert abs(direct.objective - expected) <= 1e-7 * abs(expected)
    with pytest.raises(ValueError, match="l2 only|l1 must be 0"):
        bd.solve(A, y, loss="multinomial", l2=1.0, l1=0.5, client=client)
    with pytest.raises(ValueError, match="at least two classes"):
        bd.solve(A, np.ones(50), loss="multinomial", l2=1.0, client=client, n_partitions=2)


@pytest.mark.parametrize("per", ["feature", "coordinate"])
def test_multinomial_cocoa_with_ridge_weights_per_feature_or_coordinate(client, per):
    A, y, sw = _multinomial_data(9, sparse=per == "feature", m=40, n=8)
    l2 = np.linspace(0.5, 4.0, 8) if per == "feature" else np.linspace(0.5, 4.0, 32)
    problem = bcd.Multinomial(A, y, l2=np.repeat(l2, 4) if per == "feature" else l2,
                              sample_weight=sw)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    tol = 1e-10
    result = bd.solve(A, y, loss="multinomial", l2=l2, sample_weight=sw, client=client,
                      n_partitions=2, tol=tol, relative=True, local_epochs=3)
    _agree(result, ref.objective, None, tol * abs(result.objective))
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)
    with pytest.raises(ValueError, match="l2 must be one number or an array of 8"):
        bd.solve(A, y, loss="multinomial", l2=np.ones(5), client=client, n_partitions=2)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_multinomial_logistic_regression_on_dask_arrays_equals_in_memory(client,
                                                                         fit_intercept):
    from bcd import linear_model as lm
    rng = np.random.default_rng(4)
    X = rng.standard_normal((90, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X @ rng.standard_normal((6, 3))
                                            + 0.5 * rng.standard_normal((90, 3)), axis=1)]
    est = lm.LogisticRegression(C=0.5, tol=1e-8, fit_intercept=fit_intercept)
    mem = type(est)(**est.get_params()).fit(X, y)
    Xd = da.from_array(X, chunks=(40, 6))
    dist = est.fit(Xd, da.from_array(y, chunks=40))
    np.testing.assert_array_equal(dist.classes_, mem.classes_)
    assert dist.coef_.shape == mem.coef_.shape == (3, 6)
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=1e-5, atol=1e-6)
    pred = dist.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), mem.predict(X))
    np.testing.assert_allclose(dist.predict_proba(Xd).compute(), mem.predict_proba(X),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="L2 penalty only"):
        lm.LogisticRegression(l1_ratio=0.5, C=0.5).fit(Xd, da.from_array(y, chunks=40))


# -- the client parameter -----------------------------------------------------------

def _tasks_run_since(dask_scheduler, since):
    """The tasks that a scheduler sent to a worker after time ``since``."""
    return [t.key for t in dask_scheduler.transition_log
            if t.timestamp >= since and t.finish == "processing"]


@pytest.mark.parametrize("name", ["LogisticRegression", "Ridge", "Lasso", "ElasticNet",
                                  "LinearSVC"])
def test_estimators_fit_on_an_explicit_client(client, name):
    """``client=`` a client that is neither the default nor current: the fit
    runs on its cluster, and gives the in-memory model."""
    from bcd import linear_model as lm
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 5))
    y = X @ rng.standard_normal(5) + 0.2 * rng.standard_normal(40)
    if name in ("LogisticRegression", "LinearSVC"):
        y = np.array([0, 1, 2])[np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))] \
            if name == "LogisticRegression" else (y > 0).astype(int)
    params = {"LogisticRegression": dict(C=0.5), "Ridge": dict(alpha=10.0),
              "Lasso": dict(alpha=0.05, max_iter=5000),
              "ElasticNet": dict(alpha=0.05, max_iter=5000), "LinearSVC": dict(C=0.05)}[name]
    est_type = getattr(lm, name)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0", silence_logs=50) as other:
        with distributed.Client(other, set_as_default=False) as c2:
            assert distributed.get_client() is not c2
            before = other.scheduler.transition_counter
            started = time.time()
            est = est_type(tol=1e-8, client=c2, **params)
            est.fit(da.from_array(X, chunks=(20, 5)), da.from_array(y, chunks=20))
            assert other.scheduler.transition_counter > before
            # no task of the fit ran on the default client's cluster
            ran = client.run_on_scheduler(_tasks_run_since, since=started)
            assert ran == [], ran
            assert est.client is c2
    mem = est_type(tol=1e-8, **params).fit(X, y)
    np.testing.assert_allclose(est.coef_, mem.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, mem.intercept_, rtol=1e-5, atol=1e-6)


def test_client_parameter_clones_and_pickles(client):
    import pickle

    from sklearn.base import clone

    from bcd import linear_model as lm
    rng = np.random.default_rng(8)
    X = rng.standard_normal((30, 4))
    y = X @ rng.standard_normal(4)
    est = lm.Ridge(alpha=5.0, tol=1e-8, client=client)
    assert est.get_params()["client"] is client
    twin = clone(est)
    assert twin.client is client and twin is not est and not hasattr(twin, "coef_")
    est.fit(da.from_array(X, chunks=(15, 4)), da.from_array(y, chunks=15))
    assert est.client is client
    back = pickle.loads(pickle.dumps(est))
    # the fitted model travels, the connection does not
    assert back.client is None
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_allclose(back.predict(X), est.predict(X))
    assert clone(lm.Ridge()).client is None


def test_client_parameter_errors(client, monkeypatch):
    from bcd import linear_model as lm
    Xd = da.ones((10, 2), chunks=(5, 2))
    yd = da.arange(10, chunks=5).astype(float)
    with pytest.raises(TypeError, match="client must be None or a distributed.Client"):
        lm.Ridge(client="tcp://nowhere:8786").fit(Xd, yd)

    def no_client():
        raise ValueError("No clients found")
    monkeypatch.setattr(distributed, "get_client", no_client)
    for est in (lm.Ridge(), lm.LogisticRegression(), lm.Lasso()):
        with pytest.raises(ValueError, match="needs a Dask client: pass client="):
            est.fit(Xd, (yd > 4).astype(int) if isinstance(est, lm.LogisticRegression)
                    else yd)


@pytest.mark.parametrize("name", ["LogisticRegression", "LogisticRegression-3", "LinearSVC"])
@pytest.mark.parametrize("class_weight", ["balanced", {"a": 3.0, "c": 0.5}])
def test_class_weight_on_dask_arrays_equals_in_memory(client, name, class_weight):
    # class_weight (with sample weights, which "balanced" counts) folded into
    # the distributed fit's sample weights as in memory
    from bcd import linear_model as lm
    rng = np.random.default_rng(6)
    X = rng.standard_normal((80, 5))
    n_classes = 3 if name.endswith("-3") else 2
    scores = X @ rng.standard_normal((5, n_classes)) + 0.5 * rng.standard_normal((80, n_classes))
    labels = np.array(["a", "b", "c"])[:n_classes]
    y = labels[np.argmax(scores, axis=1)] if n_classes == 3 else \
        np.where(scores[:, 0] > 0.4, "c", "a")
    sw = rng.uniform(0.5, 2.0, 80)
    if name == "LinearSVC":
        est = lm.LinearSVC(C=0.05, tol=1e-8, max_iter=5000, class_weight=class_weight)
    else:
        est = lm.LogisticRegression(C=0.5, tol=1e-8, class_weight=class_weight)
    mem = type(est)(**est.get_params()).fit(X, y, sample_weight=sw)
    plain = type(est)(**dict(est.get_params(), class_weight=None)).fit(X, y, sample_weight=sw)
    # the weights matter: the weighted model is not the plain one
    assert np.abs(mem.coef_ - plain.coef_).max() > 1e-2
    dist = est.fit(da.from_array(X, chunks=(30, 5)), da.from_array(y, chunks=30),
                   sample_weight=da.from_array(sw, chunks=30))
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="not classes of y"):
        type(est)(**dict(est.get_params(), class_weight={"z": 2.0})).fit(
            da.from_array(X, chunks=(30, 5)), da.from_array(y, chunks=30))


# -- Newton's method for few coefficients ---------------------------------------------

@pytest.mark.parametrize("K", [1, 2, 3, 4])
@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
def test_newton_equals_single_process_solve(client, loss, K):
    # with 60 coefficients the automatic choice is Newton's method: the same
    # optimum as bcd.solve (uneven chunks, one empty; dense and sparse;
    # sample weights; an intercept for odd K) in a handful of rounds
    sparse = K % 2 == 0
    intercept = K % 2 == 1
    A, b, labels = _data(20 + K, sparse)
    sw = np.random.default_rng(6).uniform(0.5, 2.0, M)
    y = b if loss == "squared" else labels
    tol = 1e-10
    result = bd.solve(_dask(A, CHUNKS[K]), da.from_array(y, chunks=CHUNKS[K]), loss=loss,
                      l2=L2, sample_weight=sw, fit_intercept=intercept, client=client,
                      tol=tol, relative=True)
    assert result.method == "newton" and result.n_partitions == K
    assert result.n_rounds <= (3 if loss == "squared" else 15)
    problem = _problem(loss, A, b, labels, l2=L2, sw=sw)
    if intercept:
        Ai = np.hstack([A.toarray() if sparse else A, np.ones((M, 1))])
        ridge = np.r_[np.full(A.shape[1], L2), 0.0]
        reference = bcd.solve(_problem(loss, Ai, b, labels, l2=ridge, sw=sw),
                              tol=1e-12).objective
        x = np.r_[result.x, result.intercept]
        assert result.objective == pytest.approx(
            _problem(loss, Ai, b, labels, l2=ridge, sw=sw).objective(x), rel=1e-12)
    else:
        reference = bcd.solve(problem, formulation="dual", tol=1e-11).objective
        assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-12)
        assert result.intercept == 0.0
    _agree(result, reference, L2, tol * abs(result.objective))
    h = result.history
    assert len(h) == result.n_rounds and np.all(np.diff(h.objective) <= 1e-12 * h.objective[0])
    # the point to each worker, a gradient and a Hessian back from each
    # partition; the squared loss's Hessian (constant) in the first round
    # only; the logistic loss's until the last step (near the optimum the
    # last Hessian serves; the squared hinge's generalized Newton steps may
    # end with a long one)
    n = A.shape[1] + int(intercept)
    hessian = h.bytes_sent >= 8 * K * n * (n + 1)
    assert hessian[0] and np.all(h.bytes_sent[~hessian] < 8 * K * n * n)
    if loss == "squared":
        assert not np.any(hessian[1:])
    elif loss == "logistic":
        assert not hessian[-1]


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_newton_reuses_the_hessian_near_the_optimum_only(client, loss, monkeypatch):
    # a fresh Hessian every round against one reused once the Newton
    # decrement is small: the same optimum, no more rounds, fewer Hessians
    from bcd.distributed import _driver
    A, _, labels = _data(40)
    Ad, yd = _dask(A, CHUNKS[2]), da.from_array(labels, chunks=CHUNKS[2])
    n = A.shape[1]

    def fit():
        return bd.solve(Ad, yd, loss=loss, l2=L2, client=client, tol=1e-10, relative=True)

    lazy = fit()
    monkeypatch.setattr(_driver, "LAZY_HESSIAN", 0.0)
    fresh = fit()
    assert lazy.converged and fresh.converged
    assert lazy.objective == pytest.approx(fresh.objective, rel=1e-9)
    assert lazy.n_rounds <= fresh.n_rounds
    sent = [np.sum(r.history.bytes_sent >= 8 * 2 * n * n) for r in (lazy, fresh)]
    assert sent[1] == fresh.n_rounds and sent[0] < sent[1]


def test_newton_is_chosen_for_few_coefficients_only(client, monkeypatch):
    from bcd.distributed import _driver
    A, b, labels = _data(30)
    X, yd = _dask(A, (20, 20)), da.from_array(labels, chunks=20)
    r = bd.solve(X, yd, loss="logistic", l2=5.0, client=client, tol=1e-8, relative=True)
    assert r.method == "newton"
    # more coefficients than NEWTON_MAX (the intercept counts), or the
    # hinge loss: CoCoA+, to the same optimum
    monkeypatch.setattr(_driver, "NEWTON_MAX", A.shape[1])
    r2 = bd.solve(X, yd, loss="logistic", l2=5.0, client=client, tol=1e-8, relative=True,
                  fit_intercept=True)
    assert r2.method == "cocoa+"
    r3 = bd.solve(X, yd, loss="logistic", l2=5.0, client=client, tol=1e-8, relative=True)
    assert r3.method == "newton"
    np.testing.assert_allclose(r3.x, r.x, rtol=1e-12)
    assert bd.solve(X, yd, loss="hinge", l2=5.0, client=client, tol=1e-6,
                    relative=True).method == "cocoa+"
    for kw, match in ((dict(method="newton", loss="hinge"), "method='newton' takes"),
                      (dict(method="newton", loss="logistic", l1=0.1), "without l1"),
                      (dict(method="cocoa+", loss="logistic", l1=0.1), "without l1"),
                      (dict(method="proxcocoa+", loss="logistic"), "l1 > 0"),
                      (dict(method="lbfgs", loss="logistic"), "method must be one of")):
        with pytest.raises(ValueError, match=match):
            bd.solve(X, yd, l2=5.0, client=client, **kw)


def _lose_first_round():
    """In a worker: the first CoCoA+ round of partition 0 reports its state
    lost (as after a restart), once."""
    from bcd.distributed import _worker
    original = _worker.cocoa_round

    def lossy(part, fit, k, rnd, *args):
        if k == 0 and rnd == 0 and not getattr(_worker, "_lost_once", False):
            _worker._lost_once = True
            return {"lost": True}
        return original(part, fit, k, rnd, *args)

    _worker._original_round = original
    _worker.cocoa_round = lossy


def _restore_rounds():
    from bcd.distributed import _worker
    if hasattr(_worker, "_original_round"):
        _worker.cocoa_round = _worker._original_round
        del _worker._original_round
    _worker._lost_once = False


def test_a_partition_lost_in_the_first_round_restarts(client):
    # no round measured yet when the loss is noticed: the fit goes on
    A, b, _ = _data(13)
    problem = bcd.LeastSquares(A, b, l2=L2)
    ref = bcd.solve(problem, formulation="dual", tol=1e-11)
    client.run(_lose_first_round)
    try:
        with pytest.warns(RuntimeWarning, match="lost"):
            r = bd.solve(_dask(A, (20, 20)), da.from_array(b, chunks=20), loss="squared",
                         l2=L2, client=client, tol=1e-9, relative=True, method="cocoa+")
    finally:
        client.run(_restore_rounds)
    assert r.n_restarts >= 1
    _agree(r, ref.objective, L2, 1e-9 * r.objective)


def test_max_time_counts_the_placement(client, monkeypatch):
    # a placement that outlasts max_time leaves time for one measured round
    # only (the deadline is the whole call's)
    from bcd.distributed import _driver
    placement = _driver._partition

    def slow(*args, **kwargs):
        time.sleep(1.5)
        return placement(*args, **kwargs)

    monkeypatch.setattr(_driver, "_partition", slow)
    A, b, _ = _data(14)
    with pytest.warns(bcd.ConvergenceWarning, match="max_time"):
        r = bd.solve(_dask(A, (20, 20)), da.from_array(b, chunks=20), loss="squared", l2=0.01,
                     client=client, tol=1e-300, max_rounds=10**6, max_time=1.0,
                     method="cocoa+")
    assert r.status == "max_time" and r.n_rounds == 1


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_liblinear_logistic_regression_on_dask_arrays_penalizes_its_intercept(client, penalty):
    # solver="liblinear" penalizes the intercept (a column of
    # intercept_scaling), on dask arrays as in memory; the default solver
    # leaves it free, and the two models differ
    from bcd import linear_model as lm
    rng = np.random.default_rng(15)
    X = rng.standard_normal((300, 6))
    y = np.where(X @ rng.standard_normal(6) + 1.0 > 0, "b", "a")
    Xd, yd = da.from_array(X, chunks=(100, 6)), da.from_array(y, chunks=100)
    est = lm.LogisticRegression(solver="liblinear", penalty=penalty, C=0.1, tol=1e-8,
                                intercept_scaling=2.0, max_iter=10000)
    mem = type(est)(**est.get_params()).fit(X, y)
    free = lm.LogisticRegression(penalty=penalty, C=0.1, tol=1e-8, max_iter=10000,
                                 solver="saga" if penalty == "l1" else "lbfgs").fit(X, y)
    assert abs(mem.intercept_[0] - free.intercept_[0]) > 1e-2
    dist = est.fit(Xd, yd)
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=1e-5, atol=1e-6)
    assert dist.n_features_in_ == 6


def test_partitions_are_placed_where_their_blocks_are_held(client):
    # chunks persisted on the cluster, each pinned to a chosen worker: every
    # partition goes to the worker that holds its block (no transfer), at
    # most its share per worker; blocks held nowhere go round-robin
    from bcd.distributed import _driver
    workers = _driver._workers(client)
    A = np.random.default_rng(0).standard_normal((80, 5))
    X = da.from_array(A, chunks=(20, -1))
    blocks = X.to_delayed(optimize_graph=False).ravel().tolist()
    pinned = [workers[1], workers[0], workers[1], workers[0]]
    blocks = [client.persist(b, workers=[w], allow_other_workers=False)
              for b, w in zip(blocks, pinned)]
    distributed.wait(blocks)

    def near(blocks):
        live, holders = _driver._holders(client, blocks)
        assert live == workers
        return _driver._near(blocks, live, holders)

    assert near(blocks) == pinned
    # a worker holding more than its share gives the rest away
    crowded = [blocks[0], blocks[2], blocks[0], blocks[2]]
    assert sorted(near(crowded)) == sorted(workers * 2)
    assert near([object()] * 3) == [workers[0], workers[1], workers[0]]
    # the fit places its partitions so, and gives the in-memory answer
    Xp = client.persist(X)
    distributed.wait(Xp)
    y = A @ np.arange(1.0, 6.0)
    r = bd.solve(Xp, da.from_array(y, chunks=20), loss="squared", l2=1.0, client=client,
                 tol=1e-10, relative=True)
    ref = bcd.solve(bcd.LeastSquares(A, y, l2=1.0), tol=1e-12)
    np.testing.assert_allclose(r.x, ref.x, rtol=1e-8)


def _unaligned(a):
    """A copy of ``a`` one byte past an aligned address (as a chunk may lie
    in a message received over the network)."""
    raw = bytearray(a.nbytes + 1)
    out = np.frombuffer(raw, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned or a.size == 0
    return out


@pytest.mark.parametrize("sparse", [False, True])
def test_partitions_are_packed_aligned(sparse):
    # a chunk received over the network lies at any byte offset of its
    # message: the packed partition is an aligned copy (NumPy's products
    # run without BLAS on unaligned arrays), equal to the chunk.  For
    # Newton's rounds (align=False) a dense matrix stays where it is
    from bcd.distributed import _worker
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 7)) * (rng.random((30, 7)) < (0.4 if sparse else 2))
    y, s = _unaligned(rng.standard_normal(30)), _unaligned(rng.uniform(1, 2, 30))
    if sparse:
        S = sp.csr_matrix(A)
        X = sp.csr_matrix((_unaligned(S.data), _unaligned(S.indices), _unaligned(S.indptr)),
                          shape=S.shape)
    else:
        X = _unaligned(A)
    for align in (True, False):
        Xp, t, w = _worker.pack(0, X, y, s, 0, align=align)
        arrays = (Xp.data, Xp.indices, Xp.indptr) if sparse else (Xp,)
        kept = not align and not sparse
        assert all(a.flags.c_contiguous and a.flags.aligned != kept for a in arrays)
        assert all(a.flags.aligned and a.flags.c_contiguous for a in (t, w))
        assert np.shares_memory(Xp, X) == kept
        np.testing.assert_array_equal(Xp.toarray() if sparse else Xp, A)
        np.testing.assert_array_equal(t, y)
        np.testing.assert_array_equal(w, s)


@pytest.mark.parametrize("intercept", [False, True])
def test_newton_certifies_the_squared_loss_without_a_second_round(client, intercept,
                                                                  monkeypatch):
    # the squared loss's objective is quadratic: the first round's gradient
    # and Hessian give the gradient at the Newton point, whose duality gap
    # (grown by a bound on the rounding) certifies it with no second round
    from bcd.distributed import _driver
    A, b, _ = _data(3)
    sw = np.random.default_rng(4).uniform(0.5, 2.0, M)
    X, y = _dask(A, CHUNKS[3]), da.from_array(b, chunks=CHUNKS[3])

    def fit(**kw):
        return bd.solve(X, y, loss="squared", l2=L2, sample_weight=sw, client=client,
                        fit_intercept=intercept, **kw)

    r = fit(tol=1e-10, relative=True)
    assert r.converged and r.n_rounds == 2 and r.history.bytes_sent[1] == 0
    assert r.history.bytes_sent[0] > 0 and r.duality_gap <= 1e-10 * r.objective
    # the certificate bounds the gap evaluated in extended precision from
    # the data at the returned point
    Ai = np.hstack([A, np.ones((M, 1))]) if intercept else A
    x = np.r_[r.x, r.intercept] if intercept else r.x
    Al, bl, sl, xl = (np.asarray(v, dtype=np.longdouble) for v in (Ai, b, sw, x))
    g = Al.T @ (sl * (Al @ xl - bl))
    g[:N] += L2 * xl[:N]
    exact = 0.5 * np.sum(g[:N] ** 2) / L2 + (0.5 * g[N] ** 2 / np.sum(sl) if intercept else 0)
    assert r.duality_gap >= exact
    ridge = np.r_[np.full(N, L2), 0.0] if intercept else L2
    reference = bcd.solve(bcd.LeastSquares(Ai, b, l2=ridge, sample_weight=sw), tol=1e-12)
    assert r.objective == pytest.approx(reference.objective, rel=1e-12)
    np.testing.assert_allclose(x, reference.x, rtol=1e-8, atol=1e-10)
    # without the prediction a second round measures the same point
    monkeypatch.setattr(_driver._Newton, "_predict", lambda self, step: None)
    r0 = fit(tol=1e-10, relative=True)
    assert r0.n_rounds == 2 and r0.history.bytes_sent[1] > 0
    np.testing.assert_allclose(r0.x, r.x, rtol=1e-13)
    assert r0.objective == pytest.approx(r.objective, rel=1e-13)
    assert r0.duality_gap <= 1e-10 * r.objective


def test_the_actors_are_made_once_while_placing(client, monkeypatch):
    # one actor per worker holding partitions, asked for together with the
    # partitions and taken up at the first round (not made again)
    from bcd.distributed import _driver
    A, _, labels = _data(5)
    ready, hosts = [], _driver._Rounds._hosts

    def counted(self):
        ready.append(len(self.made))
        hosts(self)

    monkeypatch.setattr(_driver._Rounds, "_hosts", counted)
    with distributed.get_task_stream(client) as stream:
        r = bd.solve(_dask(A, CHUNKS[4]), da.from_array(labels, chunks=CHUNKS[4]),
                     loss="logistic", l2=L2, client=client, tol=1e-10, relative=True)
    assert r.converged and r.n_rounds > 2
    made = [t for t in stream.data if str(t["key"]).startswith("Host-")]
    assert len(made) == len(client.scheduler_info()["workers"]) and ready == [len(made)]


@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
@pytest.mark.parametrize("intercept", [False, True])
def test_dense_newton_round_equals_the_sparse_path(loss, intercept):
    # the compiled pass over a dense partition's rows (panels of rows, a
    # few panels here) against the sparse path's NumPy expressions: the
    # loss, gradient, Hessian, curvature and dual pieces; zero weights, an
    # unaligned partition (read through aligned panel copies) and an empty
    # partition included
    from bcd.distributed import _newton_local, _worker
    rng = np.random.default_rng(7)
    m, d = 700, 9
    X = rng.standard_normal((m, d))
    y = rng.standard_normal(m) if loss == "squared" else (rng.random(m) < 0.4).astype(float)
    s = rng.uniform(0.0, 2.0, m)
    s[:20] = 0.0
    w, c = 0.4 * rng.standard_normal(d), 0.3
    old = _newton_local.PANEL
    try:
        _newton_local.PANEL = 100 * d            # panels of 100 rows
        for rows in (X, _unaligned(X), X[:0]):
            part = _worker.pack(0, rows, y[:len(rows)], s[:len(rows)], 0,
                                classify=loss != "squared", align=False)
            assert np.shares_memory(part[0], rows) or not len(rows)   # not copied
            for hessian in (True, False):
                cfg = dict(loss=loss, fit_intercept=intercept, hessian=hessian)
                dense = _worker.newton_round(part, "f", 0, 0, w, c, cfg)
                sparse = _worker.newton_round((sp.csr_matrix(part[0]),) + part[1:], "f", 0,
                                              0, w, c, cfg)
                for key in ("primal", "curv_c", "conj", "sum_beta"):
                    assert dense[key] == pytest.approx(sparse[key], rel=1e-12, abs=1e-12)
                np.testing.assert_allclose(dense["grad"], sparse["grad"], rtol=1e-12,
                                           atol=1e-12)
                if hessian:
                    np.testing.assert_allclose(dense["hess"], sparse["hess"], rtol=1e-12,
                                               atol=1e-12)
                    assert np.array_equal(dense["hess"], dense["hess"].T)
                else:
                    assert dense["hess"] is None
    finally:
        _newton_local.PANEL = old
    with pytest.raises(ValueError, match="loss must be one of"):
        _newton_local.newton_terms("hinge", X, y, s, w, c, True, False)


def test_newtons_first_round_comes_with_the_shapes(client, monkeypatch):
    # the columns of a dask array are known before placing: Newton's first
    # round (at w = 0) is computed by the task that reports each
    # partition's shape, not in a round of its own; a ridge fit then needs
    # no round of the actors at all, and makes none (nor any task dropping
    # states: Newton's rounds keep none).  Where the first round does not
    # certify the point, the actors are made for the next round.  A list of
    # partitions (columns unknown until placed) runs its first round as
    # usual; all reach the same optimum
    from bcd.distributed import _driver
    A, b, _ = _data(8)
    calls, run = [], _driver._Rounds._run

    def counted(self, *args):
        calls.append(args[0].__name__)
        return run(self, *args)

    monkeypatch.setattr(_driver._Rounds, "_run", counted)
    X = _dask(A, CHUNKS[3])
    with distributed.get_task_stream(client) as stream:
        r = bd.solve(X, da.from_array(b, chunks=CHUNKS[3]), loss="squared", l2=L2,
                     client=client, tol=1e-10, relative=True)
    assert r.method == "newton" and r.converged and calls == []
    assert r.history.bytes_sent[0] > 0 and r.history.worker_time[0] > 0
    names = {str(t["key"]).split("-")[0] for t in stream.data}
    assert {"pack", "measure"} <= names and not names & {"Host", "forget"}
    with monkeypatch.context() as m:
        m.setattr(_driver._Newton, "_predict", lambda self, step: None)
        with distributed.get_task_stream(client) as stream:
            r1 = bd.solve(X, da.from_array(b, chunks=CHUNKS[3]), loss="squared", l2=L2,
                          client=client, tol=1e-10, relative=True)
    assert r1.converged and calls == ["newton_round"]
    assert sum(str(t["key"]).startswith("Host-") for t in stream.data) > 0
    np.testing.assert_allclose(r1.x, r.x, rtol=1e-12)
    blocks = X.to_delayed().ravel().tolist()
    ys = [b[:5], b[5:25], b[25:]]
    r2 = bd.solve(blocks, ys, loss="squared", l2=L2, client=client, tol=1e-10, relative=True)
    assert r2.method == "newton" and calls == ["newton_round"] * 2
    np.testing.assert_allclose(r2.x, r.x, rtol=1e-12)


def test_a_fit_drops_its_partition_states(client):
    # CoCoA+ keeps each partition's dual variables on its worker during the
    # fit; they are dropped once it returns
    def held():
        from bcd.distributed import _worker
        return len(_worker.STATE)

    A, b, _ = _data(9)
    during = []
    r = bd.solve(_dask(A, CHUNKS[2]), da.from_array(b, chunks=CHUNKS[2]), loss="squared",
                 l2=L2, client=client, tol=1e-8, relative=True, method="cocoa+",
                 callback=lambda rnd, x: during.append(sum(client.run(held).values())))
    assert r.converged and r.n_rounds > 1 and during[0] == 2
    deadline = time.time() + 10
    while sum(client.run(held).values()) and time.time() < deadline:
        time.sleep(0.05)
    assert sum(client.run(held).values()) == 0


@pytest.mark.parametrize("sparse", [False, True])
def test_packing_tells_overflowing_sums_from_nan_and_inf(sparse):
    # the check sums the partition first: finite entries whose sum
    # overflows are accepted (entry by entry), NaN and inf are refused
    from bcd.distributed import _worker
    A = np.full((50, 4), 1e308)
    A[::3] = -1e308
    y = np.ones(50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Xp = _worker.pack(2, sp.csr_matrix(A) if sparse else A, y, None, 0)[0]
    np.testing.assert_array_equal(Xp.toarray() if sparse else Xp, A)
    for bad in (np.nan, np.inf):
        B = A.copy()
        B[37, 1] = bad
        with pytest.raises(ValueError, match="partition 2 .* holds NaN or inf"):
            _worker.pack(2, sp.csr_matrix(B) if sparse else B, y, None, 0)
