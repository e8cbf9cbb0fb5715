"""The driver of CoCoA+ and ProxCoCoA+: partitions the data on the workers,
runs the rounds, combines the workers' vectors and certifies the result."""
import itertools
import numbers
import time
import uuid

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .. import _interrupt
from .._dask import live_workers
from .._result import ConvergenceWarning, warn_user
from . import _worker

#: the problems with a distributed form, and their loss names
DISTRIBUTED_PROBLEMS = ("LeastSquares", "Logistic", "Multinomial", "LinearSVM")
#: the losses accepted by :func:`solve`
LOSSES = ("squared", "logistic", "multinomial", "hinge", "squared_hinge")
#: the sample orders of the local dual coordinate ascent (CoCoA+)
ORDERS = ("cyclic", "random")
#: the values of solve's ``method``
METHODS = ("auto", "cocoa+", "proxcocoa+", "newton")
#: the Armijo fraction of Newton's line search
ARMIJO = 1e-4
#: Newton's method reuses the last Hessian once the Newton decrement is at
#: most this fraction of the objective (about the relative suboptimality)...
LAZY_HESSIAN = 1e-3
#: ...while each step's decrement falls below this fraction of the last
LAZY_RATE = 0.1
#: method="auto" runs Newton's method (instead of CoCoA+) for models with at
#: most this many coefficients (features, plus the intercept): its Hessian,
#: NEWTON_MAX^2 doubles, travels from every partition each round
NEWTON_MAX = 500
#: how many times a round's call to a live worker is repeated after a
#: communication error before its partitions count as lost
CALL_RETRIES = 3
#: the most passes of a local solve per round with ``local_epochs="auto"``
LOCAL_EPOCHS = 50
#: the losses of Newton's method (twice differentiable, or with a
#: generalized second derivative)
NEWTON_LOSSES = ("squared", "logistic", "squared_hinge")
#: seconds between the driver's checks that a worker it waits on is alive
POLL = 2.0
#: seconds between two looks at a recorded Ctrl-C while a round runs
SLICE = 0.2
#: seconds the driver tries to place lost partitions again before it gives up
REPLACE_TIME = 120.0
#: seconds a fit waits for a first worker to join a cluster that has none
WORKER_WAIT = 30.0


class _WorkerGone(Exception):
    """The worker of an actor left the cluster during a call."""


#: a fit id counter (with a random prefix: several drivers may share workers)
_FITS = itertools.count()


def _dask():
    try:
        import dask
        import dask.array as da
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("bcd.distributed needs dask and distributed: install them with "
                          "pip install 'bcd[distributed]'.") from exc
    return dask, da, distributed


class DistributedHistory:
    """Round-by-round record of a distributed solve.

    Attributes
    ----------
    round : ndarray of int
        Round index (0: the starting point).
    duality_gap : ndarray
        The stopping measure of the combined iterate of that round (see
        :class:`DistributedResult`).
    objective : ndarray
        The primal objective at that iterate.
    time : ndarray
        Seconds since the start of the first round.
    bytes_sent : ndarray of int
        Bytes of vectors sent to and from the workers during that round.
    worker_time : ndarray
        Seconds of the longest local computation of a partition in that
        round (the rest of a round's time is communication, waiting and the
        driver's work).
    """

    __slots__ = ("round", "duality_gap", "objective", "time", "bytes_sent", "worker_time")

    def __init__(self, rounds, gaps, objectives, times, sent, worker_time):
        self.round = np.asarray(rounds, dtype=np.int64)
        self.duality_gap = np.asarray(gaps, dtype=np.float64)
        self.objective = np.asarray(objectives, dtype=np.float64)
        self.time = np.asarray(times, dtype=np.float64)
        self.bytes_sent = np.asarray(sent, dtype=np.int64)
        self.worker_time = np.asarray(worker_time, dtype=np.float64)

    def __len__(self):
        return self.round.shape[0]

    def __repr__(self):
        return f"DistributedHistory({len(self)} rounds)"


class DistributedResult:
    """Outcome of :func:`bcd.distributed.solve`.

    Attributes
    ----------
    x : ndarray of shape (n_features,) or (n_features * n_classes,)
        The coefficients w; for ``loss="multinomial"`` the n_features x
        n_classes matrix W flattened row-major, like the variable of
        :class:`bcd.Multinomial` (``x.reshape(n_features, -1)``).
    intercept : float or ndarray of shape (n_classes,)
        The unpenalized intercept (0.0 without ``fit_intercept``; one per
        class for ``loss="multinomial"``, determined up to a common shift).
    classes : ndarray or None
        The sorted class labels (``loss="multinomial"``), else None.
    objective : float
        P(x) at the returned point.
    duality_gap : float
        The certificate of the returned point: P(x) - D, assembled from the
        partitions' pieces; it bounds P(x) - P*.  With ``fit_intercept`` it
        is the gap with the intercept fixed plus the decrease that a Newton
        step on the intercept promises (as in ``formulation="dual"``).
    optimality : float
        ``duality_gap`` (CoCoA+), or for ProxCoCoA+ the largest distance of
        -grad_j f to the subdifferential of the penalty (the KKT residual).
    converged : bool
        Whether ``duality_gap <= tol`` (times ``|objective|`` with
        ``relative=True``).
    status : str
        ``"converged"``, ``"max_iter"`` (``max_rounds`` reached),
        ``"max_time"``, ``"interrupted"`` (Ctrl-C) or ``"diverged"``.
    method : str
        ``"cocoa+"`` (rows) or ``"proxcocoa+"`` (columns).
    n_rounds : int
        Communication rounds run.
    n_partitions : int
    n_restarts : int
        Partitions restarted after their worker was lost.
    history : DistributedHistory
    time : float
        Seconds of the rounds.
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return (f"DistributedResult(method={self.method!r}, converged={self.converged}, "
                f"n_rounds={self.n_rounds}, objective={self.objective:.10g}, "
                f"duality_gap={self.duality_gap:.3e}, status={self.status!r})")


# -- inputs ---------------------------------------------------------------------------

def _from_problem(problem):
    """``(A, y, loss, l2, l1, sample_weight)`` of an in-memory bcd problem."""
    name = type(problem).__name__
    if name not in DISTRIBUTED_PROBLEMS:
        raise ValueError(f"{name} has no distributed form; the problems with one are "
                         f"{', '.join(DISTRIBUTED_PROBLEMS)}.")
    loss = {"LeastSquares": "squared", "Logistic": "logistic",
            "Multinomial": "multinomial"}.get(name)
    if loss is None:
        loss = problem.loss
    target = problem.b if loss == "squared" else problem.y
    width = problem.n_features
    if loss == "multinomial":
        # the labels as given (Multinomial keeps their indices in y), and
        # one ridge weight per feature and class
        target = np.asarray(problem.classes)[problem.y]
        width = problem.n_coordinates
    l2 = np.broadcast_to(np.asarray(problem.l2, dtype=np.float64), (width,))
    l2 = float(l2[0]) if np.all(l2 == l2[0]) else np.array(l2)
    l1 = 0.0
    pen = problem.penalty
    if pen is not None:
        if type(pen).__name__ != "L1" or pen.positive or np.ndim(pen.lam) != 0 and \
                not np.all(pen.lam == np.ravel(pen.lam)[0]):
            raise ValueError(f"the distributed solvers take penalty=None or bcd.L1 with one "
                             f"weight; got {pen!r}.")
        l1 = float(np.ravel(pen.lam)[0])
    return problem.A, target, loss, l2, l1, getattr(problem, "sample_weight", None)


def _is_dask_array(X):
    return type(X).__module__.startswith("dask.array") and hasattr(X, "chunks")


def _is_lazy(X):
    return isinstance(X, (list, tuple))


def _split(n, k):
    """``k`` near-equal sizes summing to ``n``."""
    return [len(p) for p in np.array_split(np.arange(n), k)]


def _sizes_from_chunks(chunks):
    return [int(c) for c in chunks]


def _wait(client, futures, timeout):
    """``distributed.wait`` on ``client`` (the module's function uses the
    default client, which a client made with ``set_as_default=False`` is
    not)."""
    _, _, distributed = _dask()
    with client.as_current():
        distributed.wait(futures, timeout=timeout)


def _workers(client):
    """The addresses of the cluster's workers, sorted; waits up to
    :data:`WORKER_WAIT` seconds for a first one (a cluster just started,
    or whose only worker is restarting)."""
    workers = live_workers(client)
    if not workers:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT)
        except TimeoutError:
            raise ValueError(f"the Dask cluster has no workers (none joined within "
                             f"{WORKER_WAIT:g} s).") from None
        workers = live_workers(client)
    return workers


class _Partitions:
    """The data of a fit on the cluster (:func:`_partition`): ``futures``
    (the packed partitions), ``workers`` (each one's worker, as a one-item
    list), ``shapes``, ``nbytes``, ``sources`` (what each is computed from),
    ``labels`` (the distinct targets of every partition for a
    classification loss on rows, else None), ``y`` and ``weights`` (in
    memory, for column partitions only), ``hosts`` (the actors made
    while the partitions were placed, not yet waited for; see
    :func:`_submit_hosts`) and ``first`` (each partition's first round of
    Newton's method, or None)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def _partition(client, X, y, sample_weight, axis, n_partitions, loss, actors=False,
               first=None):
    """The packed partitions, one per chunk along ``axis`` (rows: 0,
    columns: 1), with y and the weights split alike (rows), as a
    :class:`_Partitions`.  Each partition's shape is asked for, and with
    ``actors`` (rows only) the actors that will hold them are made, as soon
    as the partitions are placed, so that the three overlap.  With
    ``first`` (the configuration of a Newton round) each partition's first
    round of Newton's method comes with its shape (``_Partitions.first``),
    and a dense partition is not copied to align it (Newton's rounds read
    it by aligned panels; see :func:`_worker.pack`)."""
    dask, da, distributed = _dask()
    classify = "multinomial" if loss == "multinomial" else axis == 0 and loss != "squared"
    align = first is None
    if _is_lazy(X):
        parts = list(X)
        if not parts:
            raise ValueError("X is an empty list of partitions.")
        if axis == 0:
            ys = _lazy_split(y, "y", len(parts), client, parts)
            ws = _lazy_split(sample_weight, "sample_weight", len(parts), client, parts) \
                if sample_weight is not None else [None] * len(parts)
        else:
            ys = ws = [None] * len(parts)
        sources = [(k, p, ys[k], ws[k], axis, classify, align) for k, p in enumerate(parts)]
    else:
        if not _is_dask_array(X):
            if not (sp.issparse(X) or isinstance(X, np.ndarray)):
                X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be 2-d, got shape {X.shape}.")
            k = n_partitions or len(_workers(client))
            sizes = _split(X.shape[axis], k)
            X = da.from_array(X if not sp.issparse(X) else X.tocsr(),
                              chunks=(tuple(sizes), -1) if axis == 0 else (-1, tuple(sizes)),
                              asarray=False)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {X.shape}.")
        other = 1 - axis
        if len(X.chunks[other]) != 1:
            X = X.rechunk({other: -1})
        if n_partitions is not None and len(X.chunks[axis]) != n_partitions:
            X = X.rechunk({axis: tuple(_split(X.shape[axis], n_partitions))})
        blocks = X.to_delayed(optimize_graph=False).ravel().tolist()
        if axis == 0:
            ys = _aligned(y, "y", X.chunks[0])
            ws = _aligned(sample_weight, "sample_weight", X.chunks[0]) \
                if sample_weight is not None else [None] * len(blocks)
        else:
            ys = ws = [None] * len(blocks)
        sources = [(k, b, ys[k], ws[k], axis, classify, align)
                   for k, b in enumerate(blocks)]
    # each partition computed from its source on the worker that keeps it,
    # and pinned there: a worker already holding the block (data loaded on
    # the cluster), else round-robin
    blocks = [src[1] for src in sources]
    workers, holders = _holders(client, blocks)
    chosen = _near(blocks, workers, holders)
    where = [[w] for w in chosen]

    def shape(k):
        return client.submit(_worker.shape_of, futures[k], k, first, pure=False,
                             workers=where[k])

    if first is None:
        futures = _place(client, sources, chosen)
        asked = [shape(k) for k in range(len(futures))]
    else:
        # Newton's first round from the source itself, beside the packing
        futures, asked = map(list, zip(*_place(client, sources, chosen, measure=first)))
    placed = list(futures)
    hosts = _submit_hosts(client, futures, where, {}) if actors and axis == 0 else []
    # (a worker that dies meanwhile has its partitions placed again; their
    # shapes are asked again, and the actors made again at the first round)
    _settle(client, futures, where, sources, list(range(len(sources))), live=workers)
    moved = [k for k in range(len(futures)) if futures[k] is not placed[k]]
    for k in moved:
        asked[k].cancel()
        asked[k] = shape(k)
    if moved:
        for _, f, _ in hosts:
            f.cancel()
        hosts = []
    infos = _gather(client, asked)
    shapes = [i[0] for i in infos]
    nbytes = sum(i[1] for i in infos)
    labels = np.unique(np.concatenate([i[2] for i in infos])) if classify else None
    other = 1 - axis
    widths = {s[other] for s in shapes if s[axis] > 0} | {shapes[0][other]}
    if len({s[other] for s in shapes}) != 1:
        raise ValueError(f"the partitions of X must all have the same number of "
                         f"{'columns' if axis == 0 else 'rows'}; got {sorted(widths)}.")
    if axis == 1:
        m = shapes[0][0]
        y = _in_memory(y, "y", m, client)
        sample_weight = None if sample_weight is None else \
            _in_memory(sample_weight, "sample_weight", m, client)
    return _Partitions(futures=futures, workers=where, shapes=shapes, nbytes=nbytes,
                       sources=sources, labels=labels, y=y, weights=sample_weight,
                       hosts=hosts, first=None if first is None else [i[3] for i in infos])


def _submit_hosts(client, parts, workers, held):
    """One :class:`_worker.Host` actor per worker holding partitions, made
    on that worker: ``[(partition indices, actor future, worker)]``."""
    groups = {}
    for k in range(len(parts)):
        groups.setdefault(workers[k][0] if workers[k] else None, []).append(k)
    return [(ks, client.submit(_worker.Host, ks, held, *[parts[k] for k in ks], actor=True,
                               pure=False, **({} if w is None else dict(workers=[w]))), w)
            for w, ks in groups.items()]


def _holders(client, blocks):
    """The live workers (as :func:`_workers`) and the workers holding each
    block that is data on the cluster (a persisted chunk): ``(workers,
    {key: [worker, ...]})``, asked of the scheduler in one exchange.
    Without locality information the holders are empty (round-robin)."""
    import asyncio

    keys = []
    try:
        keyed = [b for b in blocks if hasattr(b, "key")]
        keys = list({f.key for f in client.futures_of(keyed)}) if keyed else []
    except Exception:  # noqa: BLE001 - no locality information: round-robin
        keys = []

    async def ask():
        who = client.scheduler.who_has(keys=keys) if keys else asyncio.sleep(0, {})
        return await asyncio.gather(client.scheduler.identity(n_workers=-1), who,
                                    return_exceptions=True)

    identity, holders = client.sync(ask)
    if isinstance(identity, BaseException):
        raise identity
    workers = sorted(identity["workers"])
    if not workers:
        workers = _workers(client)
    return workers, ({} if isinstance(holders, BaseException) else holders)


def _near(blocks, workers, holders):
    """A worker for each block: one that holds it already (``holders``,
    from :func:`_holders`) where that worker has no more than its share of
    the partitions, else the next in round-robin order."""
    share = -(-len(blocks) // len(workers))
    load = {w: 0 for w in workers}
    chosen = [None] * len(blocks)
    for k, b in enumerate(blocks):
        for w in holders.get(getattr(b, "key", None), ()):
            if w in load and load[w] < share:
                chosen[k] = w
                load[w] += 1
                break
    for k in range(len(blocks)):
        if chosen[k] is None:
            w = workers[k % len(workers)]
            if load[w] >= share:
                w = min(workers, key=lambda v: load[v])
            chosen[k] = w
            load[w] += 1
    return chosen


def _place(client, sources, workers, fresh=False, measure=None):
    """The partitions of ``sources`` (each the arguments of
    :func:`_worker.pack`), each computed with every task of its graph on
    its worker (``workers``) and kept there: a list of futures, or with
    ``measure`` (Newton's first round) of pairs of futures, the partition's
    and its :func:`_worker.measure`'s.  The placement is strict (no other
    worker may run it or steal it, so no worker ever holds another's
    partition, even for a moment); a partition whose worker died is placed
    again by the driver (:meth:`_Rounds._lost`), under a new key.

    Sources that are data on the cluster already (persisted chunks, futures:
    nothing to compute before them) go to the scheduler in one message,
    each task pinned by its annotation; others in one message each, with
    every task of the source's graph pinned.

    With ``fresh`` (a partition placed again) the source's graph is cloned
    under new keys: its tasks may share keys with tasks that the scheduler
    still knows pinned to the dead worker (for example the original array
    of a ``da.from_array``, a dependency of every chunk), which would then
    wait for that worker forever."""
    dask, _, _ = _dask()
    if fresh:
        from dask.graph_manipulation import clone

        sources = [tuple(clone(a, seed=uuid.uuid4().hex) if dask.is_dask_collection(a) else a
                         for a in source) for source in sources]
    tasks = []
    for source, worker in zip(sources, workers):
        with dask.annotate(workers=[worker], allow_other_workers=False):
            ts = [dask.delayed(_worker.pack, pure=False)(*source)]
            if measure is not None:
                ts.append(dask.delayed(_worker.measure, pure=False)(measure, *source))
        tasks.append(ts)
    if not fresh and _stored(sources):
        flat = client.compute([t for ts in tasks for t in ts], optimize_graph=False)
        width = len(tasks[0]) if tasks else 1
        out = [flat[i:i + width] for i in range(0, len(flat), width)]
    else:
        out = [client.compute(ts, workers=[worker], allow_other_workers=False,
                              optimize_graph=False) for ts, worker in zip(tasks, workers)]
    return [tuple(o) if measure is not None else o[0] for o in out]


def _stored(sources):
    """Whether every dask object among the ``sources`` is data on the
    cluster already, nothing to compute: a delayed block whose key its
    graph maps to a future (a block of a persisted collection, taken apart
    without optimization: one lookup), or a collection whose graph holds
    futures only."""
    dask, _, distributed = _dask()
    # id(graph) -> (graph, verdict): a graph shared by several blocks is
    # checked once (the graph is kept so that its id is not reused)
    seen = {}
    for source in sources:
        for a in source:
            if not dask.is_dask_collection(a):
                continue
            graph = a.__dask_graph__()
            key = getattr(a, "key", None)
            if key is not None and isinstance(graph.get(key), distributed.Future):
                continue
            if id(graph) not in seen:
                seen[id(graph)] = (graph, all(isinstance(v, distributed.Future)
                                              for v in dict(graph).values()))
            if not seen[id(graph)][1]:
                return False
    return True


def _settle(client, parts, workers, sources, pending, live=None):
    """Wait until the partitions ``pending`` (indices into ``parts``, the
    futures, and ``workers``, their workers) are computed on their workers.
    A partition that is None, or whose worker died, is placed again (under a
    new key) on the live worker with the fewest partitions; ``parts`` and
    ``workers`` are updated in place.  After ``REPLACE_TIME`` seconds without
    success it raises RuntimeError (a worker that keeps dying, e.g. killed
    for exceeding its memory limit), never hangs.  ``live``: the live
    workers, where the caller has just asked."""
    distributed = _dask()[2]
    start = time.perf_counter()
    pending = list(pending)
    while pending:
        if time.perf_counter() - start > REPLACE_TIME:
            raise RuntimeError(f"bcd.distributed: partitions {pending} could not be placed on "
                               f"a live worker within {REPLACE_TIME:.0f} s (do their workers "
                               f"keep dying, e.g. past their memory limit?).")
        live = live or live_workers(client)
        if not live:
            time.sleep(POLL)
            continue
        load = {w: 0 for w in live}
        for k, w in enumerate(workers):
            if k not in pending and w and w[0] in load:
                load[w[0]] += 1
        for k in pending:
            if parts[k] is None or workers[k] is None or workers[k][0] not in load:
                if parts[k] is not None:
                    parts[k].cancel()
                w = min(live, key=lambda a: (load[a], a))
                load[w] += 1
                parts[k] = _place(client, [sources[k]], [w], fresh=True)[0]
                workers[k] = [w]
        try:
            _wait(client, [parts[k] for k in pending], POLL)
        except distributed.TimeoutError:
            pass
        _check_ctrl_c()
        errors = [parts[k] for k in pending if parts[k].status == "error"]
        if errors:
            _gather(client, errors)
        still = [k for k in pending if parts[k].status != "finished"]
        live = live_workers(client) if still else live
        for k in still:
            if workers[k][0] not in live:
                workers[k] = None        # placed again at the next pass
        pending = still


def _in_memory(v, name, m, client):
    if v is None:
        raise ValueError(f"{name} is required.")
    if _is_dask_array(v):
        v = client.compute(v).result()       # on the fit's client, not the default one
    if _is_lazy(v):
        raise TypeError(f"{name} must be an array for column partitions (an L1 penalty).")
    v = np.asarray(v, dtype=np.float64).ravel()
    if v.shape[0] != m:
        raise ValueError(f"{name} has {v.shape[0]} entries for {m} rows of X.")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} holds NaN or inf values.")
    return v


def _aligned(v, name, row_chunks):
    """``v`` split like the row chunks of X (a dask array is rechunked)."""
    _, da, _ = _dask()
    if v is None:
        raise ValueError(f"{name} is required.")
    n = int(sum(row_chunks))
    if _is_dask_array(v):
        if v.ndim != 1 or v.shape[0] != n:
            raise ValueError(f"{name} must be 1-d with {n} entries (the rows of X), got "
                             f"shape {v.shape}.")
        if tuple(v.chunks[0]) != tuple(row_chunks):
            v = v.rechunk((tuple(row_chunks),))
        return v.to_delayed(optimize_graph=False).ravel().tolist()
    if _is_lazy(v):
        raise TypeError(f"{name} must be an array (or a dask array) when X is a dask array.")
    v = np.asarray(v).ravel()
    if v.shape[0] != n:
        raise ValueError(f"{name} has {v.shape[0]} entries for {n} rows of X.")
    edges = np.cumsum([0] + list(row_chunks))
    return [v[a:b] for a, b in zip(edges[:-1], edges[1:])]


def _lazy_split(v, name, k, client, parts):
    """``v`` for a list of ``k`` partitions: a list of the same length, or
    an array split by the partitions' row counts."""
    if v is None:
        raise ValueError(f"{name} is required.")
    if _is_lazy(v):
        if len(v) != k:
            raise ValueError(f"{name} is a list of {len(v)} partitions for {k} partitions "
                             f"of X.")
        return list(v)
    dask, _, _ = _dask()
    rows = client.gather(client.compute([dask.delayed(lambda p: p.shape[0])(p)
                                         for p in parts]))
    return _aligned(v, name, rows)


def _gather(client, futures):
    """client.gather, with the workers' failure to import bcd made clear."""
    try:
        return client.gather(futures)
    except ModuleNotFoundError as exc:
        if not str(getattr(exc, "name", "") or "").startswith("bcd"):
            raise
        raise ImportError(f"a Dask worker cannot import bcd ({exc}); install bcd with its "
                          f"'distributed' extra (pip install 'bcd[distributed]') in the "
                          f"workers' environment.") from exc


# -- the solver -------------------------------------------------------------------------

def _check_ctrl_c():
    """Raise KeyboardInterrupt when a Ctrl-C was recorded during this fit
    (``bcd._interrupt``: one whose exception was swallowed where it arose,
    in a garbage-collection callback that Dask installs, for one)."""
    if _interrupt.take():
        raise KeyboardInterrupt


@_interrupt.records
def solve(X, y=None, *, loss=None, l2=None, l1=0.0, sample_weight=None, fit_intercept=False,
          client=None, n_partitions=None, tol=1e-6, relative=False, max_rounds=500,
          local_epochs="auto", local_tol=0.05, line_search=True, sigma=None,
          actors=True, order="random", working_set=True, max_time=None, random_state=0,
          verbose=False, callback=None, method="auto"):
    r"""Minimize an L2- or L1-regularized linear model on a Dask cluster.

    The objective is

    .. math:: P(w, c) = \sum_i s_i \phi(a_i^T w + c;\ y_i)
              + \tfrac12 \sum_j l_{2,j} w_j^2 + l_1 \|w\|_1

    (``c`` only with ``fit_intercept``), the objective of
    :class:`bcd.LeastSquares`, :class:`bcd.Logistic` and
    :class:`bcd.LinearSVM`, or the softmax loss of :class:`bcd.Multinomial`
    (``loss="multinomial"``: one weight vector per class, L2 only).
    Without ``l1`` it runs CoCoA+ (Ma et
    al., 2015): the rows are partitioned over the workers, each round every
    worker solves the local subproblem of its rows with sigma' = K (adding)
    by bcd's compiled dual coordinate ascent, to ``local_tol`` of its share
    of the gap, and sends back one vector of n_features; the driver moves
    by the best of a grid of combined steps (``line_search``).  With
    ``l1 > 0`` it runs ProxCoCoA+ (Smith et al., 2015): the columns are
    partitioned, each worker runs bcd's coordinate descent on its columns
    against the shared margins, and sends back one vector of n_samples.
    Data stay on the workers; only vectors travel.  A model with few
    coefficients (at most ``NEWTON_MAX`` = 500, the intercept included; the
    squared, logistic and squared-hinge losses) runs Newton's method on the
    row partitions instead: each round every worker sends the gradient and
    Hessian of its rows' loss, and the driver takes the Newton step with a
    backtracking line search.  On tall data it needs a handful of rounds
    where the dual method needs many.

    Parameters
    ----------
    X : dask array, list of partitions, array, sparse matrix or bcd problem
        The data.  A dask array (dense, or with scipy.sparse chunks) is
        partitioned along its chunks (rows for CoCoA+, columns for
        ProxCoCoA+), rechunked along the other axis when needed.  A list of
        futures, delayed objects or arrays gives the partitions directly.
        An in-memory array is split into ``n_partitions`` parts.  A problem
        (:class:`bcd.LeastSquares`, :class:`bcd.Logistic`,
        :class:`bcd.Multinomial`, :class:`bcd.LinearSVM`) gives the data,
        loss, ``l2``,
        ``l1`` (its ``bcd.L1`` penalty) and sample weights.
    y : array-like, dask array or list, optional
        Targets (least squares), labels in {-1, +1} or {0, 1}, or for
        ``loss="multinomial"`` numeric class labels (two or more distinct
        values, sorted into ``classes``), aligned with the row chunks of X
        (a dask array is rechunked to them).
    loss : {"squared", "logistic", "multinomial", "hinge", "squared_hinge"}
        Required unless X is a problem.
    l2 : float or array of shape (n_features,) or (n_features * n_classes,)
        Ridge weights; > 0 everywhere for CoCoA+ (default 0 with ``l1``).
        With ``loss="multinomial"``, one weight per feature, or per feature
        and class ordered like the flat W.
    l1 : float, default=0.0
        L1 weight; > 0 selects ProxCoCoA+ (not with the hinge loss).
    sample_weight : array-like, dask array or list, optional
        Non-negative weights s_i, aligned like ``y``.
    fit_intercept : bool, default=False
        Add an unpenalized intercept c (not with the hinge loss).
    client : distributed.Client, optional
        The client (default: the current one).
    n_partitions : int, optional
        The number of partitions (default: the chunks of a dask array, or
        one per worker); a dask array is rechunked to it.
    tol : float, default=1e-6
        Stop when the duality gap is at most ``tol`` (``tol * |P|`` with
        ``relative=True``).
    relative : bool, default=False
        Compare the gap with ``tol`` times the primal objective.
    max_rounds : int, default=500
    local_epochs : int or "auto", default="auto"
        The most passes of the local solver over its partition per round.
        ``"auto"``: at most ``LOCAL_EPOCHS`` = 50 passes, and for CoCoA+
        one pass in the first round, then no more than fit in the time the
        rest of the last round took (sending and waiting, the driver's work
        and the workers' measurements), so that local work and
        communication stay balanced: on a fast network with large
        partitions a round makes one pass, on small partitions it solves to
        ``local_tol``.  The passes then depend on timing; an integer makes
        the fit repeatable.
    local_tol : float, default=0.05
        The local solver stops when its subproblem is solved to this
        fraction of the partition's share of the global measure: the local
        subproblem's duality gap against the partition's share of the
        global gap (CoCoA+), or the block's KKT residual against its value
        at the round's start (ProxCoCoA+).  0 runs ``local_epochs`` passes.
    line_search : bool, default=True
        Move the combined iterate by the best of a grid of steps
        ``gamma * d + b * e`` (d the round's summed local proposals, e the
        previous round's move; gamma from the safe step up to 4 K, b in
        [-0.5, 1.1]), chosen by the exact dual objective (CoCoA+: the
        workers send the conjugate part of their rows along the grid, the
        driver adds the quadratic part) or the exact primal objective
        (ProxCoCoA+: the workers send the penalty of their columns, the
        driver adds the loss at the margins).  The safe step is one of the
        grid's, so the dual (primal) never gets worse than with the plain
        adding step; False takes the plain step.
    sigma : float, optional
        The aggregation parameter sigma' of the local subproblems (default
        K, the safe value of "adding"); with a smaller one the safe step is
        gamma = sigma' / K (needs ``line_search`` to step further).
    actors : bool, default=True
        Run the rounds through one Dask actor per worker, which holds that
        worker's partitions: each round is one direct message to each worker
        and back.  False submits one task per partition and round through
        the scheduler (several times the overhead per round).
    order : {"random", "cyclic"}, default="random"
        Sample order of the local dual coordinate ascent.
    working_set : bool, default=True
        ProxCoCoA+ only (squared and logistic losses): the certificate's
        dual point comes from the problem restricted to a small working set
        of columns (the non-zero coefficients and the columns whose gradient
        is within 2% of ``l1``), solved exactly on the driver.  The workers
        send each column of the working set once (the columns of the
        support: a small fraction of the data, at most 10% of its bytes plus
        1 MB, and only while the working set has at most 1000 columns);
        the dual point is checked for feasibility on
        every column by the workers in the next round.  Once the working
        set holds the solution's support this dual point is the dual
        optimum, and the duality gap falls with the objective's error
        instead of its square root (as with the residual-scaled dual
        point).  False keeps to the rescaled residual and its
        extrapolation.
    max_time : float, optional
        Seconds for the whole call, placing the partitions included; the
        solve stops after the round that exceeds it.
    random_state : int, default=0
    verbose : bool, default=False
        Print each round's gap, objective and time.
    callback : callable, optional
        ``callback(round, x)`` after every round; returning True stops.
    method : {"auto", "cocoa+", "proxcocoa+", "newton"}, default="auto"
        ``"auto"``: ProxCoCoA+ with ``l1 > 0``; otherwise Newton's method for
        at most 500 coefficients and the squared, logistic or squared-hinge
        loss, CoCoA+ for the others.  ``local_epochs``, ``local_tol``,
        ``line_search``, ``sigma`` and ``order`` concern CoCoA+ and
        ProxCoCoA+ only.

    Returns
    -------
    DistributedResult

    Examples
    --------
    >>> import numpy as np, dask.array as da, bcd.distributed
    >>> from distributed import Client, LocalCluster
    >>> cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False)
    >>> client = Client(cluster)
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((100, 20)); y = A @ np.arange(20.0)
    >>> X = da.from_array(A, chunks=(50, 20))
    >>> result = bcd.distributed.solve(X, da.from_array(y, chunks=50), loss="squared",
    ...                                l2=20.0, client=client, tol=1e-8, relative=True)
    >>> result.converged, result.method            # 20 coefficients: Newton's method
    (True, 'newton')
    >>> client.close(); cluster.close()
    """
    # max_time counts from here: placing the partitions is part of the call
    started = time.perf_counter()
    _, _, distributed = _dask()
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError as exc:
            raise ValueError("no Dask client: pass client= or create a distributed.Client "
                             "first.") from exc
    if hasattr(X, "capabilities") and hasattr(X, "n_coordinates"):
        if y is not None or loss is not None:
            raise TypeError("y and loss come from the problem when X is a bcd problem.")
        X, y, loss, l2_p, l1_p, sw = _from_problem(X)
        if isinstance(l2_p, np.ndarray) and np.any(l2_p == 0):
            raise ValueError("the distributed solvers take l2 > 0 on every coordinate of a "
                             "problem; use fit_intercept=True for an unpenalized intercept.")
        l2 = l2_p if l2 is None else l2
        l1 = l1_p if not l1 else l1
        sample_weight = sw if sample_weight is None else sample_weight
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {list(LOSSES)}, got {loss!r}.")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}, got {order!r}.")
    if isinstance(l1, bool) or not isinstance(l1, numbers.Real) or not np.isfinite(l1) or l1 < 0:
        raise ValueError(f"l1 must be a finite number >= 0, got {l1!r}.")
    balance = isinstance(local_epochs, str) and local_epochs == "auto"
    if balance:
        local_epochs = LOCAL_EPOCHS
    for name, v, lo in (("max_rounds", max_rounds, 1), ("local_epochs", local_epochs, 1)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}"
                             + (" or 'auto'" if name == "local_epochs" else "")
                             + f", got {v!r}.")
    if isinstance(local_tol, bool) or not isinstance(local_tol, numbers.Real) or \
            not 0 <= local_tol < 1:
        raise ValueError(f"local_tol must be a number in [0, 1), got {local_tol!r}.")
    if sigma is not None and (isinstance(sigma, bool) or not isinstance(sigma, numbers.Real)
                              or not sigma > 0):
        raise ValueError(f"sigma must be None or a number > 0, got {sigma!r}.")
    if not isinstance(line_search, (bool, np.bool_)):
        raise TypeError(f"line_search must be True or False, got {line_search!r}.")
    if n_partitions is not None and (isinstance(n_partitions, bool) or not isinstance(
            n_partitions, numbers.Integral) or n_partitions < 1):
        raise ValueError(f"n_partitions must be None or an integer >= 1, got {n_partitions!r}.")
    if not isinstance(tol, numbers.Real) or not tol >= 0:
        raise ValueError(f"tol must be a number >= 0, got {tol!r}.")
    if max_time is not None and not (isinstance(max_time, numbers.Real) and max_time > 0):
        raise ValueError(f"max_time must be None or a number > 0, got {max_time!r}.")
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}.")
    if loss == "multinomial" and l1 > 0:
        raise ValueError("loss='multinomial' has a distributed form with an L2 penalty only "
                         "(CoCoA+); l1 must be 0.")
    if loss == "hinge" and (l1 > 0 or fit_intercept):
        raise ValueError("loss='hinge' takes neither l1 nor fit_intercept (its dual has no "
                         "penalty and its intercept stalls on the kinks); use "
                         "loss='squared_hinge'.")
    if l2 is None:
        l2 = 0.0
    l2 = np.asarray(l2, dtype=np.float64)
    if l2.ndim > 1 or np.any(~np.isfinite(l2)) or np.any(l2 < 0):
        raise ValueError("l2 must be a number >= 0 or a 1-d array of them.")
    opts = dict(loss=loss, l2=l2, l1=float(l1), fit_intercept=bool(fit_intercept),
                tol=float(tol), relative=bool(relative), max_rounds=int(max_rounds),
                epochs=int(local_epochs), balance=balance, local_tol=float(local_tol),
                line_search=bool(line_search), sigma=sigma, actors=bool(actors),
                order=order, max_time=max_time, working_set=bool(working_set),
                seed=int(np.random.RandomState(random_state).randint(0, 2**20)),
                verbose=bool(verbose), callback=callback, started=started)
    if method == "proxcocoa+" and not l1 > 0:
        raise ValueError("method='proxcocoa+' solves problems with l1 > 0.")
    if method in ("cocoa+", "newton") and l1 > 0:
        raise ValueError(f"method={method!r} solves problems without l1; with l1 > 0 use "
                         f"method='proxcocoa+' or 'auto'.")
    if method == "newton" and loss not in NEWTON_LOSSES:
        raise ValueError(f"method='newton' takes the losses {list(NEWTON_LOSSES)}; got "
                         f"loss={loss!r}.")
    if l1 > 0:
        if l2.ndim == 1 and not np.all(l2 == l2[0]):
            raise ValueError("with l1 > 0, l2 must be one number (the elastic net).")
        opts["l2"] = float(l2) if l2.ndim == 0 else float(l2[0])
        data = _partition(client, X, y, sample_weight, 1, n_partitions, loss)
        return _Prox(client, data, opts).run()
    if np.any(l2 <= 0):
        raise ValueError("CoCoA+ (no l1) needs l2 > 0 on every coordinate: the dual exists "
                         "only with a strictly convex L2 term.")

    def choose(d):
        small = d + int(bool(fit_intercept)) <= NEWTON_MAX
        return "newton" if small and loss in NEWTON_LOSSES else "cocoa+"

    shape = () if _is_lazy(X) else np.shape(X)
    if method == "auto" and len(shape) == 2 and isinstance(shape[1], numbers.Integral):
        method = choose(shape[1])               # the columns known before placing
    # Newton's first round (at w = 0) comes with the shapes; for the squared
    # loss it is usually the last (the Newton point is certified from it),
    # and its actors are made only if a round follows
    first = _Newton.first_round(opts) if method == "newton" else None
    data = _partition(client, X, y, sample_weight, 0, n_partitions, loss,
                      actors=opts["actors"] and not (first is not None and loss == "squared"),
                      first=first)
    if method == "auto":
        method = choose(data.shapes[0][1])
    solver = _Newton if method == "newton" else _CoCoA
    return solver(client, data, opts).run()


class _Rounds:
    """What CoCoA+ and ProxCoCoA+ share: the round loop, faults, history."""

    method = None
    #: whether the workers keep partition states in their ``STATE`` (dropped
    #: at the end of the fit by :meth:`_forget`)
    keeps_state = True

    def __init__(self, client, data, opts):
        self.client = client
        self.parts = data.futures
        self.shapes = data.shapes
        self.nbytes = data.nbytes
        self.o = dict(opts, sources=data.sources, labels=data.labels)
        self.K = len(self.parts)
        self.fit = f"{uuid.uuid4().hex[:8]}-{next(_FITS)}"
        self.rounds = [0] * self.K          # each partition's state round
        self.restarts = 0
        self.why = []                       # what lost partitions this round
        self.calls = 0                      # the rounds' calls to the workers
        self.hist = ([], [], [], [], [], [])
        self.worker_seconds = 0.0
        self.hosts = []
        self.held = {}
        # the actors made while placing the partitions, if those stay put
        self.made = data.hosts
        self.workers = [list(w) for w in data.workers]
        self.checked = False                # whether those workers were found alive

    def _drop_made(self):
        for _, f, _ in self.made:
            f.cancel()
        self.made = []

    def _where(self):
        """The worker of each partition (tasks are pinned there); a partition
        held nowhere (its worker died) is placed again on the live worker
        with the fewest partitions."""
        who = self.client.who_has(self.parts)
        self.workers = []
        for f in self.parts:
            holders = list(who.get(f.key, ()))
            self.workers.append(holders[:1] or None)
        self._replace_dead()

    def _replace_dead(self):
        """Place again the partitions whose worker is not alive (or not
        known); the actors made while placing go with them."""
        live = live_workers(self.client)
        gone = [k for k in range(self.K) if self.workers[k] is None
                or self.workers[k][0] not in live]
        if gone:
            self._drop_made()
            self._replace(gone)

    def _replace(self, gone):
        """Place the partitions ``gone`` again (their worker died).  Their
        old futures are cancelled first: their tasks, pinned to a dead
        worker, would otherwise keep the pinning of the source tasks they
        share with the new ones."""
        for k in gone:
            self.parts[k].cancel()
            self.parts[k] = None
            self.rounds[k] = 0
        _settle(self.client, self.parts, self.workers, self.o["sources"], gone)

    def _hosts(self):
        """One :class:`_worker.Host` actor per worker holding partitions:
        those made while placing the partitions where no partition moved
        since and the fit sends no vectors once (``held``), else new ones."""
        self.hosts = []
        if self.held:
            self._drop_made()
        made, self.made = self.made, []
        if not self.o["actors"]:
            return
        made = made or _submit_hosts(self.client, self.parts, self.workers, self.held)
        actors = self.client.gather([f for _, f, _ in made])
        self.hosts = [(ks, a, f, w) for (ks, f, w), a in zip(made, actors)]

    def _wait(self, call, where, deadline):
        """The result of an actor call, polled so that a worker that died
        without closing its connection is noticed (``_WorkerGone``), and a
        round past ``max_time`` (plus a minute) raises TimeoutError."""
        checked = time.perf_counter()
        while True:
            try:
                return call.result(timeout=SLICE)
            except TimeoutError:
                pass
            _check_ctrl_c()
            if time.perf_counter() - checked < POLL:
                continue
            checked = time.perf_counter()
            if deadline is not None and time.perf_counter() > deadline + 60.0:
                raise TimeoutError(f"a round of {self.method} did not finish within 60 s "
                                   f"of max_time; are the workers alive?") from None
            if where is not None and not self._alive(where):
                raise _WorkerGone(where)

    def _run(self, fn, shared, extra, deadline):
        """One round of ``fn`` on every partition: ``fn(part_k, fit, k,
        rounds[k], *shared, *extra[k])``; the results in partition order,
        None for a partition whose worker was lost."""
        _, _, distributed = _dask()
        if not self.checked:
            # a worker lost since the partitions were placed
            self.checked = True
            self._replace_dead()
        if not self.o["actors"]:
            futures = [self._submit(fn, k, *shared, *extra[k]) for k in range(self.K)]
            out = self._collect(futures, deadline)
            self._worker_seconds(out)
            return out
        if not self.hosts:
            self._hosts()
        shared = tuple({key: v for key, v in a.items() if key not in self.held}
                       if isinstance(a, dict) else a for a in shared)

        self.calls += 1

        def call(ks, host):
            return host.run(fn, self.fit, [(k, self.rounds[k], extra[k]) for k in ks], shared,
                            self.calls)

        calls = [call(ks, host) for ks, host, _, _ in self.hosts]
        out = [None] * self.K
        broken = False
        for pending, (ks, host, _, where) in zip(calls, self.hosts):
            for attempt in range(CALL_RETRIES + 1):
                try:
                    results = self._wait(pending, where, deadline)
                except _WorkerGone:
                    self.why.append(f"worker {where} left the cluster")
                except ModuleNotFoundError as exc:
                    raise ImportError(f"a Dask worker cannot import bcd ({exc}); install bcd "
                                      f"with its 'distributed' extra in the workers' "
                                      f"environment.") from exc
                except (OSError, distributed.client.FutureCancelledError) as exc:
                    if isinstance(exc, OSError) and attempt < CALL_RETRIES and \
                            self._alive(where):
                        # the worker is alive: the call did not reach it, or its
                        # reply was lost.  The same call again (a round the
                        # actor has run is answered from its cache)
                        pending = call(ks, host)
                        continue
                    self.why.append(f"worker {where}: {type(exc).__name__}: {exc}")
                except Exception as exc:  # noqa: BLE001 - a lost worker, or the task's error
                    if type(exc).__name__ not in ("KilledWorker", "CommClosedError",
                                                  "StreamClosedError"):
                        raise
                    self.why.append(f"worker {where}: {type(exc).__name__}: {exc}")
                else:
                    for k, r in zip(ks, results):
                        out[k] = r
                    break
                broken = True
                break
        if broken:
            # a worker died: its actor is gone; new ones are made for the next
            # round, where the partitions are (recomputed) now
            self.hosts = []
        self._worker_seconds(out)
        return out

    def _forget(self):
        """Drop the fit's partition states on the workers that hold them,
        without waiting (a worker that died meanwhile held none)."""
        distributed = _dask()[2]
        for w in sorted({w[0] for w in self.workers if w}):
            distributed.fire_and_forget(self.client.submit(
                _worker.forget, self.fit, workers=[w], allow_other_workers=False, pure=False))

    def _alive(self, where):
        """Whether the worker ``where`` is in the cluster (True when the
        scheduler cannot be asked: the call on the worker then decides)."""
        try:
            return where in live_workers(self.client)
        except OSError:
            return True

    def _check_binary_labels(self):
        """The labels of every partition together: exactly two classes,
        {-1, +1} or {0, 1}."""
        labels = self.o["labels"]
        if labels.size != 2 or not (np.array_equal(labels, [-1.0, 1.0])
                                    or np.array_equal(labels, [0.0, 1.0])):
            raise ValueError(f"y must contain exactly two classes labelled {{-1, +1}} or "
                             f"{{0, 1}}; got {labels.tolist()[:10]}.")

    def _worker_seconds(self, out):
        self.worker_seconds = max((r.get("seconds", 0.0) for r in out
                                   if r is not None and not r.get("lost")), default=0.0)

    def _messages(self):
        """The messages of a round to the workers: one per actor, or one per
        partition with tasks."""
        return len(self.hosts) if self.hosts else self.K

    def _submit(self, fn, k, *args):
        where = {} if not self.workers[k] else dict(workers=self.workers[k])
        return self.client.submit(fn, self.parts[k], self.fit, k, self.rounds[k], *args,
                                  pure=False, **where)

    def _collect(self, futures, deadline):
        """The round's results, in partition order (None for a partition
        whose task failed because its worker died, which the scheduler
        retries elsewhere)."""
        _, _, distributed = _dask()
        timeout = None if deadline is None else max(deadline - time.perf_counter(), 1.0) + 60.0
        try:
            _wait(self.client, futures, timeout)
        except distributed.TimeoutError:
            raise TimeoutError(f"a round of {self.method} did not finish within "
                               f"{timeout:.0f} s of max_time; are the workers alive?") from None
        out = []
        for f in futures:
            if f.status == "error":
                exc = f.exception()
                if isinstance(exc, ModuleNotFoundError):
                    _gather(self.client, [f])
                if isinstance(exc, distributed.client.FutureCancelledError) or \
                        type(exc).__name__ in ("KilledWorker", "CommClosedError"):
                    out.append(None)
                    continue
                raise exc
            out.append(f.result())
        return out

    def _lost(self, lost):
        if not lost:
            return
        self.hosts = []
        self.restarts += len(lost)
        why = "; ".join(self.why) or "their workers no longer hold it"
        self.why = []
        warn_user(f"bcd.distributed: the state of partition(s) {lost} was lost ({why}); "
                  f"they restart from the last combined state and the fit continues.",
                  RuntimeWarning)
        self._where()

    def _record(self, rnd, gap, objective, t, sent):
        for lst, v in zip(self.hist, (rnd, gap, objective, t, sent, self.worker_seconds)):
            lst.append(v)
        if self.o["verbose"]:
            print(f"round {rnd:5d}  gap {gap:.3e}  objective {objective:.10g}  "
                  f"time {t:.3f} s  sent {sent / 1e6:.3f} MB")

    def _done(self, gap, objective):
        wanted = self.o["tol"] * abs(objective) if self.o["relative"] else self.o["tol"]
        return gap <= max(wanted, 1e-13 * abs(objective))

    def run(self):
        t0 = self.o["started"]
        deadline = None if self.o["max_time"] is None else t0 + self.o["max_time"]
        status = "max_iter"
        best = None
        try:
            for rnd in range(self.o["max_rounds"] + 1):
                measured = self.round(rnd, deadline)
                if measured is not None:
                    gap, objective = measured[:2]
                    self._record(rnd, gap, objective, time.perf_counter() - t0,
                                 self.sent)
                    best = measured
                    if not np.isfinite(gap) or not np.isfinite(objective):
                        status = "diverged"
                        break
                    if self._done(gap, objective):
                        status = "converged"
                        break
                if rnd == self.o["max_rounds"]:
                    break
                if deadline is not None and time.perf_counter() >= deadline:
                    status = "max_time"
                    break
                _check_ctrl_c()
                self.advance()
                cb = self.o["callback"]
                if cb is not None and cb(rnd, self.current()):
                    status = "callback"
                    break
        except KeyboardInterrupt:
            status = "interrupted"
        elapsed = time.perf_counter() - t0
        try:
            if best is None:
                if status == "interrupted":
                    raise KeyboardInterrupt
                raise RuntimeError(f"{self.method} stopped ({status}) before measuring any "
                                   f"point.")
            x, c = self.final(best)
        finally:
            self.hosts = []
            if self.keeps_state:
                self._forget()
        gap, objective, opt = best
        if status not in ("converged",) and self.o["callback"] is None:
            warn_user(f"bcd.distributed: {self.method} stopped ({status}) with duality gap "
                      f"{gap:.3e} after {len(self.hist[0])} rounds.", ConvergenceWarning)
        return DistributedResult(
            x=x, intercept=np.array(c, dtype=np.float64) if np.ndim(c) else float(c),
            classes=getattr(self, "classes", None),
            objective=float(objective), duality_gap=float(gap),
            optimality=float(opt), converged=status == "converged", status=status,
            method=self.method, n_rounds=len(self.hist[0]), n_partitions=self.K,
            n_restarts=self.restarts, history=DistributedHistory(*self.hist), time=elapsed,
            data_bytes=self.nbytes)


#: the line search of the combined move: step lengths gamma along the
#: round's summed proposals, from 1 (the adding step of CoCoA+ and
#: ProxCoCoA+, never worse than the current point) up to GAMMA_TOP times the
#: number of partitions, by factors of GAMMA_RATIO ...
GAMMA_RATIO, GAMMA_TOP = 1.25, 4.0
#: ... and weights b of the previous round's move (momentum)
MOMENTA = (0.0, -0.5, -0.25, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1)


#: the number of past differences of the dual extrapolation (ProxCoCoA+)
EXTRAPOLATION = 5
#: the most working-set columns (all partitions together) sent to the
#: driver for the certificate's dual point (ProxCoCoA+) ...
WS_MAX = 1000
#: ... and the most bytes of them over a fit: this fraction of the data's, plus 1 MB
WS_BUDGET = 0.1
#: the relative tolerance and the most passes of the restricted solve
WS_TOL, WS_ITER = 1e-12, 2000


def _grid(K, safe=1.0):
    """The (gamma, b) pairs of the line search with K partitions; the safe
    step (safe, 0) first."""
    top = GAMMA_TOP * max(K, 1)
    count = int(np.floor(np.log(top / safe) / np.log(GAMMA_RATIO) + 1e-9)) + 1
    gammas = safe * GAMMA_RATIO ** np.arange(count)
    return [(float(g), b) for b in MOMENTA for g in gammas]


class _CoCoA(_Rounds):
    """CoCoA+ on row partitions.

    The driver keeps each partition's contribution v_k = R^{-1} A_k^T beta_k
    and w = sum_k v_k.  Each round every worker proposes a local move (an
    approximate solution of its sigma' = K subproblem) and returns its
    change dv_k of w together with the dual's conjugate part of its rows
    along a grid of combined moves gamma d + b e (d the proposals, e the
    previous round's move).  The quadratic part of the dual depends only on
    w, so the driver evaluates the dual exactly at every grid point and
    takes the best; gamma = 1, b = 0 is the plain CoCoA+ step, so the dual
    never decreases."""

    method = "cocoa+"

    def __init__(self, client, data, opts):
        super().__init__(client, data, opts)
        d = self.shapes[0][1]
        self.multinomial = opts["loss"] == "multinomial"
        self.classes = None
        n_classes = 1
        if self.multinomial:
            # the classes of every partition; W is d x n_classes, flat
            self.classes = self.o["labels"]
            if self.classes.size < 2:
                raise ValueError(f"loss='multinomial' needs y with at least two classes; got "
                                 f"{self.classes.tolist()}.")
            n_classes = int(self.classes.size)
        self.n_classes = n_classes
        n = d * n_classes
        self.d = d
        self.n = n
        ridge = opts["l2"]
        if self.multinomial and ridge.ndim == 1 and ridge.size == d and d != n:
            ridge = np.repeat(ridge, n_classes)        # one weight per feature
        if ridge.ndim == 1 and ridge.size != n:
            raise ValueError(f"l2 must be one number or an array of {d} (one per feature)"
                             + (f" or {n} (one per feature and class)" if n != d else "")
                             + f" weights; got {ridge.size}.")
        self.ridge = np.broadcast_to(ridge, (n,)).astype(np.float64)
        # the intercept is one more block of the adding scheme
        self.sigma = float(self.K + int(opts["fit_intercept"]))
        if opts["sigma"] is not None:
            self.sigma = float(opts["sigma"])
        safe = min(1.0, self.sigma / (self.K + int(opts["fit_intercept"])))
        self.grid = _grid(self.K, safe) if opts["line_search"] else [(safe, 0.0)]
        self.cfg = dict(loss=opts["loss"], ridge=ridge if ridge.ndim else np.array([ridge]),
                        sigma=self.sigma, epochs=opts["epochs"], order=opts["order"],
                        seed=opts["seed"], local_tol=opts["local_tol"], grid=self.grid,
                        # balanced (local_epochs="auto"): one pass in the first
                        # round, which measures what a round costs
                        budget=0.0 if opts["balance"] else None)
        self.fn = _worker.cocoa_round
        if self.multinomial:
            self.fn = _worker.mnl_round
            # one ridge weight travels when they are all equal
            one = bool(np.all(self.ridge == self.ridge[0]))
            self.cfg.update(ridge=self.ridge[:1].copy() if one else self.ridge.copy(),
                            classes=self.classes, n_classes=n_classes)
        elif opts["loss"] != "squared":
            self._check_binary_labels()
        self.v = [np.zeros(n) for _ in range(self.K)]
        self.e = [np.zeros(n) for _ in range(self.K)]
        self.w = np.zeros(n)
        self.steps = [(1.0, 0.0)] * self.K
        self.c = np.zeros(n_classes) if self.multinomial else 0.0
        self.sent = 0
        self.last = None
        # whether the last round's proposals are dropped (set by each round
        # that measures; a round that lost partitions measures nothing)
        self.discard = False

    def round(self, rnd, deadline):
        started = time.perf_counter()
        out = self._run(self.fn, (self.w, self.c, self.cfg),
                        [(self.steps[k],) for k in range(self.K)], deadline)
        if self.o["balance"]:
            # the next round's local solves take at most about what the
            # rest of this round took (sending, waiting, the driver's and the
            # workers' other work): local work and communication balance.  A
            # worker runs its partitions one after the other: the rest is
            # what the round took beyond the busiest worker's local solves,
            # shared by its partitions
            busy = {}
            for k, r in enumerate(out):
                if r is not None and not r.get("lost"):
                    where = self.workers[k][0] if self.workers[k] else k
                    count, local = busy.get(where, (0, 0.0))
                    busy[where] = (count + 1, local + r.get("local_seconds", 0.0))
            count, local = max(busy.values(), key=lambda v: v[1], default=(1, 0.0))
            self.cfg["budget"] = max(time.perf_counter() - started - local, 0.0) / count
        # w to every worker (once for all its partitions), dv back from
        # every partition
        self.sent = 8 * self.n * (self._messages() + self.K)
        lost = [k for k, r in enumerate(out) if r is None or r["lost"]]
        self.pending = out
        if lost:
            self._lost(lost)
            return None
        w_sent = self.w
        fresh = [k for k, r in enumerate(out) if "v0" in r]
        for k in fresh:
            # a partition that started (again) at its starting dual point
            self.v[k] = out[k]["v0"]
            self.e[k] = np.zeros(self.n)
        # a fresh partition's starting dual point adds to w (the logistic
        # loss's does): the round's proposals were made around a w without
        # it, which is not the w of the dual variables, so none is taken
        self.discard = any(np.any(out[k]["v0"]) for k in fresh)
        if fresh:
            self.w = np.sum(self.v, axis=0)
        self.measured_at = (w_sent.copy(), np.copy(self.c) if self.multinomial else self.c)
        primal = sum(r["primal"] for r in out) + 0.5 * float(w_sent @ (self.ridge * w_sent))
        dual = sum(r["dual"] for r in out) - 0.5 * float(self.w @ (self.ridge * self.w))
        gap = primal - dual
        if self.o["fit_intercept"] and self.multinomial:
            # the Newton step on the intercepts (the Hessian is singular
            # along the all-ones vector, where the model does not change:
            # its pseudo-inverse) and the decrease it promises
            slope = np.sum([r["slope"] for r in out], axis=0)
            curv = np.sum([r["curv"] for r in out], axis=0)
            newton = -np.linalg.pinv(curv, rcond=1e-12, hermitian=True) @ slope
            self.step = newton / self.sigma
            gap += max(-0.5 * float(slope @ newton), 0.0)
        elif self.o["fit_intercept"]:
            slope = sum(r["slope"] for r in out)
            curv = sum(r["curv"] for r in out)
            self.step = -slope / (self.sigma * curv) if curv > 0 else 0.0
            gap += slope * slope / (2.0 * curv) if curv > 0 else (0.0 if slope == 0 else np.inf)
        self.local_epochs = [r["epochs"] for r in out]
        return gap, primal, gap

    def advance(self):
        out = self.pending
        if self.discard:
            for k in range(self.K):
                self.rounds[k] += 1
                self.e[k] = np.zeros(self.n)
            self.steps = [(0.0, 0.0)] * self.K
            return
        if any(r is None or r["lost"] for r in out):
            for k, r in enumerate(out):
                if r is None or r["lost"]:
                    # restart the partition at its starting point (its
                    # contribution leaves w until it reports it again)
                    self.v[k] = np.zeros(self.n)
                    self.rounds[k] = 0
                else:
                    self.rounds[k] += 1
                self.e[k] = np.zeros(self.n)
            # the others keep their dual variables (no move this round)
            self.steps = [(0.0, 0.0)] * self.K
            self.w = np.sum(self.v, axis=0)
            return
        dw = np.sum([r["dv"] for r in out], axis=0)
        ew = np.sum(self.e, axis=0)
        conj = np.sum([r["values"] for r in out], axis=0)
        # -1/2 ||w + gamma dw + b ew||_R^2 at every grid point
        Rw, Rd, Re = self.ridge * self.w, self.ridge * dw, self.ridge * ew
        ww, wd, we = float(self.w @ Rw), float(self.w @ Rd), float(self.w @ Re)
        dd, de, ee = float(dw @ Rd), float(dw @ Re), float(ew @ Re)
        best, best_value = 0, -np.inf
        for j, (g, b) in enumerate(self.grid):
            quad = ww + g * g * dd + b * b * ee + 2 * g * wd + 2 * b * we + 2 * g * b * de
            value = conj[j] - 0.5 * quad
            if value > best_value:
                best, best_value = j, value
        g, b = self.grid[best]
        for k, r in enumerate(out):
            self.e[k] = g * r["dv"] + b * self.e[k]
            self.v[k] = self.v[k] + self.e[k]
            self.rounds[k] += 1
        self.steps = [(g, b)] * self.K
        self.chosen = (g, b)
        self.w = np.sum(self.v, axis=0)
        if self.o["fit_intercept"]:
            self.c = self.c + self.step

    def current(self):
        return self.w

    def final(self, best):
        w, c = self.measured_at
        return w, c


class _Newton(_Rounds):
    """Newton's method on row partitions, for models with few coefficients.

    Each round every worker returns, at the shared point x = (w, c), its
    rows' loss, gradient and Hessian (n x n, n the number of coefficients)
    and its pieces of the dual at beta_i = -s_i phi'(z_i); the driver sums
    them, measures the objective and the duality gap, and takes the Newton
    step, halved while the objective does not fall by the Armijo fraction of
    its slope (each trial point is the next round's shared point).  Rounds
    are stateless: a lost partition is recomputed and the round repeated."""

    method = "newton"
    keeps_state = False

    def __init__(self, client, data, opts):
        super().__init__(client, data, opts)
        d = self.shapes[0][1]
        ridge = opts["l2"]
        if ridge.ndim == 1 and ridge.size != d:
            raise ValueError(f"l2 must be one number or an array of {d} (one per feature) "
                             f"weights; got {ridge.size}.")
        if opts["loss"] != "squared":
            self._check_binary_labels()
        self.d = d
        self.ridge = np.broadcast_to(ridge, (d,)).astype(np.float64)
        self.intercept = bool(opts["fit_intercept"])
        self.n = d + int(self.intercept)
        self.cfg = self.first_round(opts)
        self.first = data.first             # the first round, measured with the shapes
        self.loss_hessian = None            # the loss's Hessian of the last round sending it
        self.decrement = None               # the Newton decrement of the last step
        self.x = np.zeros(self.n)           # the accepted point
        self.trial = np.zeros(self.n)       # the point of the next round
        self.step = None                    # the Newton step from x
        self.length = 1.0
        self.slope = 0.0                    # the objective's slope along the step
        self.value = None                   # the objective at x
        self.measured = None
        self.accepted = False
        self.predicted = None               # the certified next point (squared loss)
        self.sent = 0

    @staticmethod
    def first_round(opts):
        """The configuration of the workers' first Newton round."""
        return dict(loss=opts["loss"], fit_intercept=bool(opts["fit_intercept"]), hessian=True)

    def _split(self, x):
        return x[:self.d], (float(x[self.d]) if self.intercept else 0.0)

    def round(self, rnd, deadline):
        if self.predicted is not None:
            # the squared loss: the Newton point is certified without a round
            self.measured, self.predicted = self.predicted, None
            self.x = self.trial.copy()
            self.value = self.measured[1]
            self.accepted = False
            self.sent = 0
            self.worker_seconds = 0.0
            return self.measured
        w, c = self._split(self.trial)
        if self.first is not None:
            # the start point's round, computed with the partitions' shapes
            out, self.first = self.first, None
            self._worker_seconds(out)
        else:
            out = self._run(_worker.newton_round, (w, c, self.cfg), [()] * self.K, deadline)
        # the point to every worker, a gradient and a Hessian back from every
        # partition
        self.sent = 8 * self.d * self._messages() + \
            8 * self.K * self.n * ((self.n if self.cfg["hessian"] else 0) + 1)
        lost = [k for k, r in enumerate(out) if r is None or r["lost"]]
        self.accepted = False
        if lost:
            self._lost(lost)
            return None
        primal = sum(r["primal"] for r in out) + 0.5 * float(w @ (self.ridge * w))
        if self.value is not None and not \
                primal <= self.value + ARMIJO * self.length * self.slope:
            # not enough decrease: a shorter step from x next round, and a
            # fresh Hessian with it where the step came from an old one
            self.length *= 0.5
            self._want_hessian(True)
            return self.measured
        grad = np.sum([r["grad"] for r in out], axis=0)
        if self.cfg["hessian"]:
            hess = np.sum([r["hess"] for r in out], axis=0)
            self.loss_hessian = hess.copy()
        else:
            hess = self.loss_hessian.copy()
        if self.intercept:
            # the intercept's curvature at this point (every round sends it)
            hess[self.d, self.d] = sum(r["curv_c"] for r in out)
        # the dual at beta: its w is R^{-1} A^T beta = -R^{-1} (loss gradient)
        v = -grad[:self.d] / self.ridge
        dual = sum(r["conj"] for r in out) - c * sum(r["sum_beta"] for r in out) \
            - 0.5 * float(v @ (self.ridge * v))
        gap = primal - dual
        if self.intercept:
            slope, curv = grad[self.d], hess[self.d, self.d]
            gap += slope * slope / (2.0 * curv) if curv > 0 else (0.0 if slope == 0 else np.inf)
        grad[:self.d] += self.ridge * w
        hess[np.arange(self.d), np.arange(self.d)] += self.ridge
        self.x = self.trial.copy()
        self.value = primal
        self.grad, self.hess = grad, hess
        self.accepted = True
        self.measured = (gap, primal, gap)
        return self.measured

    def advance(self):
        if self.accepted:
            try:
                step = -scipy.linalg.solve(self.hess, self.grad, assume_a="pos",
                                           check_finite=False)
            except (np.linalg.LinAlgError, ValueError):
                # a singular Hessian (an intercept no row's curvature
                # reaches): the least-squares step
                step = -np.linalg.lstsq(self.hess, self.grad, rcond=None)[0]
            self.step = step
            self.slope = float(self.grad @ step)
            self.length = 1.0
            # the workers' Hessians are the costliest part of a round.  The
            # squared loss's does not depend on the point: sent once.  Near
            # the optimum (a Newton decrement below LAZY_HESSIAN of the
            # objective) the next points lie close to this one, and the last
            # Hessian serves while the decrement keeps falling fast
            decrement, last = -self.slope, self.decrement
            self._want_hessian(
                not decrement <= LAZY_HESSIAN * abs(self.value)
                or (not self.cfg["hessian"] and last is not None
                    and not decrement <= LAZY_RATE * last))
            self.decrement = decrement
            if self.o["loss"] == "squared":
                self.predicted = self._predict(step)
        if self.step is not None:
            self.trial = self.x + self.length * self.step

    def _predict(self, step):
        """The squared loss's measurement at x + step without a round, where
        it certifies the point: ``(gap, objective, gap)`` or None.

        Its objective is quadratic, so the round's gradient g and Hessian A
        (ridge included) give the gradient g + A step and the objective at
        the new point exactly, and its duality gap (at the dual point
        beta = -s phi'(z)) is a function of the gradient alone:
        sum_j (grad_j P)^2 / (2 l2_j), plus (grad_c P)^2 / (2 sum_i s_i) for
        the intercept.  The gap is bounded with every gradient entry grown
        by the rounding of the expansion: that of the Hessian's entries,
        sums over a partition's rows, at most gamma sqrt(H_jj H_kk)
        (Cauchy-Schwarz bounds |X|^T S |X| by H's diagonal), and that of
        the products."""
        d = self.d
        A = self.hess
        g = self.grad + A @ step
        value = self.value + float(self.grad @ step) + 0.5 * float(step @ (A @ step))
        rows = max(sh[0] for sh in self.shapes)
        gamma = (rows + self.K + self.n + 4) * np.finfo(np.float64).eps
        h = np.sqrt(np.maximum(np.diag(self.loss_hessian), 0.0))
        err = gamma * (h * float(h @ np.abs(step)) + np.abs(self.grad)
                       + np.abs(A) @ np.abs(step))
        g = np.abs(g) + err
        gap = 0.5 * float(g[:d] @ (g[:d] / self.ridge))
        if self.intercept:
            curv = A[d, d]
            gap += 0.5 * g[d] * g[d] / curv if curv > 0 else (0.0 if g[d] == 0 else np.inf)
        return (gap, value, gap) if self._done(gap, value) else None

    def _want_hessian(self, fresh):
        """Ask the next rounds for the workers' Hessians, or not."""
        fresh = bool(fresh) and self.o["loss"] != "squared"
        if fresh != self.cfg["hessian"]:
            self.cfg = dict(self.cfg, hessian=fresh)

    def current(self):
        return self._split(self.x)[0]

    def final(self, best):
        return self._split(self.x)


class _Prox(_Rounds):
    """ProxCoCoA+ on column partitions: the driver keeps the margins
    z = A x + c and the targets; the workers keep their coefficients."""

    method = "proxcocoa+"

    def __init__(self, client, data, opts):
        super().__init__(client, data, opts)
        y, sw, shapes, nbytes = data.y, data.weights, self.shapes, self.nbytes
        loss = opts["loss"]
        m = shapes[0][0]
        self.m = m
        self.loss = loss
        s = np.ones(m) if sw is None else np.asarray(sw, dtype=np.float64)
        if np.any(s < 0):
            raise ValueError("sample_weight must be non-negative.")
        if loss != "squared":
            labels = np.unique(y)
            if labels.size != 2 or not (np.array_equal(labels, [-1.0, 1.0])
                                        or np.array_equal(labels, [0.0, 1.0])):
                raise ValueError(f"y must contain exactly two classes labelled {{-1, +1}} or "
                                 f"{{0, 1}}; got {labels.tolist()[:10]}.")
            y = np.where(y > 0, 1.0, -1.0)
        self.t = y
        self.s = s
        self.sigma = float(self.K) if opts["sigma"] is None else float(opts["sigma"])
        safe = min(1.0, self.sigma / self.K)
        [s_future] = client.scatter([s], broadcast=True)
        self.held = {"weights": s_future}
        self.grid = _grid(self.K, safe) if opts["line_search"] else [(safe, 0.0)]
        self.cfg = dict(weights=s_future, l1=opts["l1"], l2=opts["l2"], sigma=self.sigma,
                        curvature=_worker.CURVATURE[loss], epochs=opts["epochs"],
                        local_tol=opts["local_tol"], grid=self.grid,
                        polish=opts["working_set"] and loss in ("squared", "logistic")
                        and opts["l1"] > 0, ws_send=False)
        # the working set's columns received so far (global index -> CSC column)
        self.columns = {}
        self.ws_bytes = 0
        self.ws_budget = WS_BUDGET * nbytes + 2**20
        self.offsets = np.concatenate([[0], np.cumsum([sh[1] for sh in shapes])])
        self.steps = [(1.0, 0.0)] * self.K
        self.ez = [np.zeros(m) for _ in range(self.K)]
        self.extra = self.extra_sent = None
        self.history_rho = []
        self.best_dual = -np.inf
        self.z = np.zeros(m)
        self.c = 0.0
        self.sent = 0
        if opts["fit_intercept"]:
            self._intercept()

    def _intercept(self):
        """Minimize over c with the coefficients fixed (Newton steps kept in a
        bracket, on the driver's margins)."""
        zr = self.z - self.c
        t, s, loss = self.t, self.s, self.loss
        c = self.c
        for _ in range(100):
            _, h, hh = _worker._loss_terms(loss, zr + c, t, s)
            if hh <= 0 or abs(h) <= 1e-15 * (1.0 + abs(c)) * max(np.sum(s), 1.0):
                break
            step = h / hh
            c -= step
            if abs(step) <= 1e-15 * (1.0 + abs(c)):
                break
        self.c = c
        self.z = zr + c

    def _rho(self, z=None):
        """phi'(z) (unweighted), at the shared margins by default."""
        t = self.t
        z = self.z if z is None else z
        if self.loss == "squared":
            return z - t
        if self.loss == "logistic":
            return -t * np.exp(-np.logaddexp(0.0, t * z))
        u = 1.0 - t * z
        return np.where(u > 0.0, -2.0 * t * u, 0.0)

    def round(self, rnd, deadline):
        rho = self._rho()
        self.extra_sent = self.extra
        out = self._run(_worker.prox_round, (rho, self.cfg, self.extra_sent),
                        [(self.steps[k],) for k in range(self.K)], deadline)
        # to the workers: rho (and the extrapolated point); back: the change
        # of the margins (and the corrections of the line search's move)
        self.sent = (1 + int(self.extra_sent is not None)) * 8 * self.m * self._messages() + sum(
            8 * self.m * (1 + int(r.get("ez") is not None) + int(r.get("fz") is not None))
            for r in out if r is not None and not r["lost"])
        self.pending = out
        lost = [k for k, r in enumerate(out) if r is None or r["lost"]]
        if lost:
            self._lost(lost)
            return None
        self.measured_rounds = list(self.rounds)
        self.measured_c = self.c
        return self._measure(out, rho)

    def _measure(self, out, rho):
        t, s, loss, z = self.t, self.s, self.loss, self.z
        primal_loss, slope, curv = _worker._loss_terms(loss, z, t, s)
        primal = primal_loss + sum(r["penalty"] for r in out)
        dual = self._dual(rho, max(r["corr"] for r in out),
                          sum(r.get("conj", 0.0) for r in out))
        if self.extra_sent is not None:
            # the extrapolated dual point sent with this round (measured now)
            dual = max(dual, self._dual(self.extra_sent, max(r["corr2"] for r in out),
                                        sum(r.get("conj2", 0.0) for r in out)))
        if not self.o["fit_intercept"]:
            # a dual point of an earlier round is as good a lower bound
            self.best_dual = dual = max(dual, self.best_dual)
        gap = primal - dual
        if self.o["fit_intercept"]:
            gap += slope * slope / (2.0 * curv) if curv > 0 else (0.0 if slope == 0 else np.inf)
        kkt = max(r["kkt"] for r in out)
        self._extrapolate(rho)
        self._polish(out)
        return gap, primal, kkt

    def _polish(self, out):
        """The next round's dual point from the working set: the problem
        restricted to the working set's columns (gathered once each on the
        driver), solved exactly here, gives margins whose phi' is the dual
        point (the dual optimum once the working set holds the support);
        the workers check its feasibility on all columns next round."""
        if not self.cfg["polish"]:
            return
        from .. import L1, LeastSquares, Logistic
        from .. import solve as bcd_solve
        sets = [r["ws"] for r in out]
        sending = all("cols" in ws for ws in sets)
        for k, ws in enumerate(sets):
            if "cols" not in ws:
                continue
            cols = ws["cols"]
            self.sent += 16 * ws["live"].size + 12 * cols.nnz + 8 * ws["new"].size
            self.ws_bytes += 12 * cols.nnz + 8 * ws["new"].size
            for i, j in enumerate(ws["new"]):
                self.columns[int(self.offsets[k] + j)] = cols[:, i]
        if self.ws_bytes > self.ws_budget:
            # the working set outgrew its budget: the residual's dual point
            self.cfg["polish"] = self.cfg["ws_send"] = False
            self.columns = {}
            return
        # the columns come next round when the working set is small now
        self.cfg["ws_send"] = sum(ws["count"] for ws in sets) <= WS_MAX
        if not sending:
            return
        index = np.concatenate([self.offsets[k] + ws["live"] for k, ws in enumerate(sets)])
        x0 = np.concatenate([ws["x"] for ws in sets])
        if index.size == 0:
            return
        A = sp.hstack([self.columns[int(j)] for j in index], format="csc")
        l1 = np.full(index.size, self.o["l1"])
        l2 = np.full(index.size, self.o["l2"])
        if self.o["fit_intercept"]:
            A = sp.hstack([A, np.ones((self.m, 1))], format="csc")
            l1, l2, x0 = np.r_[l1, 0.0], np.r_[l2, 0.0], np.r_[x0, self.c]
        if self.loss == "squared":
            problem = LeastSquares(A, self.t, l2=l2, penalty=L1(l1), sample_weight=self.s)
        else:
            problem = Logistic(A, (self.t > 0).astype(np.float64), l2=l2, penalty=L1(l1),
                               sample_weight=self.s)
        try:
            result = bcd_solve(problem, x0=x0, tol=WS_TOL, tol_mode="relative",
                               max_iter=WS_ITER * index.size, warn=False)
        except (ValueError, np.linalg.LinAlgError):  # pragma: no cover - a degenerate set
            return
        z = np.asarray(A @ result.x).ravel()
        self.extra = self._rho(z)

    def _dual(self, rho, corr, conj):
        """D at the dual point theta = s rho (phi' at some margins), scaled
        into the dual's domain; ``corr`` = ||A^T theta||_inf and ``conj`` the
        penalty's conjugate part at theta (elastic net), from the workers."""
        t, s, loss = self.t, self.s, self.loss
        l1, l2 = self.o["l1"], self.o["l2"]
        theta = s * rho
        if l2 > 0:
            scale = 1.0
            gconj = conj
        else:
            scale = min(1.0, l1 / corr) if corr > 0 else 1.0
            gconj = 0.0
        theta = theta * scale
        live = s > 0
        if loss == "squared":
            fconj = float(theta[live] @ t[live] + 0.5 * np.sum(theta[live] ** 2 / s[live]))
        elif loss == "logistic":
            p = -t * theta / np.where(live, s, 1.0)
            if np.any(p[live] < 0.0) or np.any(p[live] > 1.0):
                return -np.inf
            p = p[live]
            sl = s[live]
            with np.errstate(divide="ignore", invalid="ignore"):
                ent = np.where(p > 0, p * np.log(p), 0.0) + \
                    np.where(p < 1, (1 - p) * np.log1p(-p), 0.0)
            fconj = float(sl @ ent)
        else:
            a = -t * theta
            if np.any(a[live] < 0.0):
                return -np.inf
            fconj = float(np.sum(-a[live] + 0.25 * a[live] ** 2 / s[live]))
        return -fconj + self.c * float(np.sum(theta)) - gconj

    def _extrapolate(self, rho):
        """Dual extrapolation (Massias et al., 2018, as in celer): from the
        last EXTRAPOLATION + 1 dual points, the affine combination that
        cancels their differences best; it is measured, with the workers'
        help, in the next round (the residual-scaled dual point alone lags
        the primal: its gap falls only like the square root of the primal's
        suboptimality)."""
        self.extra = None
        if self.o["fit_intercept"] or self.loss != "squared":
            return
        self.history_rho.append(rho.copy())
        del self.history_rho[:-(EXTRAPOLATION + 1)]
        if len(self.history_rho) <= EXTRAPOLATION:
            return
        R = np.array(self.history_rho)
        U = np.diff(R, axis=0)
        try:
            c = np.linalg.solve(U @ U.T, np.ones(EXTRAPOLATION))
        except np.linalg.LinAlgError:
            return
        if not np.all(np.isfinite(c)) or c.sum() == 0:
            return
        c /= c.sum()
        self.extra = c @ R[1:]

    def advance(self):
        out = self.pending
        if any(r is None or r["lost"] for r in out):
            for k, r in enumerate(out):
                self.rounds[k] = 0 if (r is None or r["lost"]) else self.rounds[k] + 1
                self.ez[k] = np.zeros(self.m)
            # a partition's coefficients restart at 0, the others stay where
            # they were measured: the margins are recomputed from them
            self.steps = [(0.0, 0.0)] * self.K
            self._rebuild()
        else:
            # the line search: the loss at z + gamma dz + b ez on the driver,
            # the penalties from the workers
            for k, r in enumerate(out):
                # the previous move on the coordinates that stay free
                if r["ez"] is not None:
                    self.ez[k] = r["ez"]
            dz = np.sum([r["dz"] for r in out], axis=0)
            ez = np.sum(self.ez, axis=0)
            fz = np.sum([r["fz"] for r in out if r["fz"] is not None] or [np.zeros(self.m)],
                        axis=0)
            pen = np.sum([r["values"] for r in out], axis=0)
            best, best_value = 0, np.inf
            for j, (g, b) in enumerate(self.grid):
                value = _worker._loss_terms(self.loss, self.z + fz + g * dz + b * ez, self.t,
                                            self.s)[0] + pen[j]
                if value < best_value:
                    best, best_value = j, value
            g, b = self.grid[best]
            moved = np.zeros(self.m)
            for k, r in enumerate(out):
                self.ez[k] = g * r["dz"] + b * self.ez[k]
                moved += self.ez[k]
                if r["fz"] is not None:
                    moved += r["fz"]
                    self.ez[k] = self.ez[k] + r["fz"]
                self.rounds[k] += 1
            self.z = self.z + moved
            self.steps = [(g, b)] * self.K
        if self.o["fit_intercept"]:
            self._intercept()

    def _rebuild(self):
        z = np.zeros(self.m)
        futures = {k: self._submit(_worker.margins, k) for k in range(self.K)
                   if self.rounds[k] > 0}
        for k, f in futures.items():
            dz = f.result()
            if dz is None:
                self.rounds[k] = 0
            else:
                z += dz
        self.z = z + self.c

    def current(self):
        return None

    def final(self, best):
        xs = self.client.gather([self.client.submit(_worker.coefficients, self.fit, k,
                                                    self.measured_rounds[k] + 1,
                                                    workers=self.workers[k] or None,
                                                    pure=False)
                                 for k in range(self.K)])
        if any(x is None for x in xs):
            raise RuntimeError("a worker was lost at the last round; the coefficients of its "
                               "partition are gone: run the fit again.")
        return np.concatenate(xs) if xs else np.zeros(0), self.measured_c


def _times(part, x):
    return np.asarray(part[0] @ x).ravel()
