"""Stress tests: concurrency, interruption, pickling, time limits and a soak run.

* Threads: one problem object solved from four threads at once (started
  together by a barrier) gives, in every thread, the result of a sequential
  solve with the same ``random_state`` bit for bit, for every block strategy
  and a selection of rules, updates and penalties on every problem class.
  The shared problem is fresh (never solved) in the first round, so the lazy
  caches of the problem (column access, row view, SIRT diagonal, Hessian
  graph, dense kernel) are built concurrently.
* SIGINT: a long solve in a subprocess, interrupted by SIGINT, returns
  within one second with the current iterate and ``status="interrupted"``.
* Pickle: problems, penalties, kernels, results and fitted regressors
  survive pickle, deepcopy and copy before and after a solve, and a problem
  sent to a spawned process solves there to the local result bit for bit.
* ``max_time`` is overshot by at most max(10 %, one iteration).
* Soak (``-m soak``; the full 10,000 solves with ``BCD_SOAK=1``): many small
  solves of random problem classes on four threads raise nothing, report an
  honest status and do not grow the resident memory.
"""
import concurrent.futures
import copy
import gc
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import bcd
from _data import interrupt_child

STATUSES = {"converged", "max_iter", "max_time", "callback", "stalled", "interrupted",
            "diverged"}


# ------------------------------------------------------------------ problems

def _ls(sparse=False, penalty=None, m=60, n=40, seed=0, l2=0.0):
    rs = np.random.RandomState(seed)
    if sparse:
        A = sp.random(m, n, density=0.3, random_state=rs, format="csr")
        A.data = rs.randn(A.nnz)
        A = sp.csr_matrix(A + sp.eye(m, n, format="csr"))
    else:
        A = rs.randn(m, n)
    return bcd.LeastSquares(A, rs.randn(m), l2=l2, penalty=penalty)


def _logistic(sparse=False, penalty=None, m=80, n=30, seed=1, l2=0.5):
    rs = np.random.RandomState(seed)
    if sparse:
        A = sp.random(m, n, density=0.3, random_state=rs, format="csc")
        A.data = rs.randn(A.nnz)
    else:
        A = rs.randn(m, n)
    y = np.where(rs.rand(m) < 0.5, -1.0, 1.0)
    y[:2] = [-1.0, 1.0]
    return bcd.Logistic(A, y, l2=l2, penalty=penalty)


def _multinomial(sparse=False, penalty=None, seed=2):
    rs = np.random.RandomState(seed)
    A = rs.randn(60, 8)
    if sparse:
        A[rs.rand(*A.shape) < 0.5] = 0.0
        A = sp.csr_matrix(A)
    y = rs.randint(0, 3, 60)
    y[:3] = [0, 1, 2]
    return bcd.Multinomial(A, y, l2=0.5, penalty=penalty)


def _poisson(sparse=False, penalty=None, seed=3):
    rs = np.random.RandomState(seed)
    A = rs.randn(60, 15) / 4.0
    if sparse:
        A[rs.rand(*A.shape) < 0.5] = 0.0
        A = sp.csc_matrix(A)
    return bcd.Poisson(A, rs.poisson(1.5, 60).astype(float), l2=0.5, penalty=penalty)


def _quadratic(penalty=None, rows=8, cols=8, seed=4):
    rs = np.random.RandomState(seed)
    W = bcd.datasets.make_lattice_graph(rows, cols).tocsr()
    W.data = rs.uniform(0.5, 1.0, W.nnz)
    W = sp.csr_matrix(0.5 * (W + W.T))
    n = rows * cols
    Q = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel() + rs.uniform(0.1, 1.0, n))
                      - W)
    return bcd.Quadratic(Q, rs.randn(n), penalty=penalty)


def _label_propagation(penalty=None, rows=10, cols=10, seed=5):
    rs = np.random.RandomState(seed)
    W = bcd.datasets.make_lattice_graph(rows, cols)
    n = rows * cols
    labels = np.full(n, np.nan)
    known = rs.choice(n, 6, replace=False)
    labels[known] = rs.randn(6)
    return bcd.LabelPropagation(W, labels, penalty=penalty)


def _gp(n=200, seed=6, **options):
    rs = np.random.RandomState(seed)
    X = rs.rand(n, 3)
    y = np.sin(4 * X[:, 0]) + 0.1 * rs.randn(n)
    return bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(lengthscale=0.4), noise=0.05,
                               **options)


def _solve(problem, **options):
    # ConvergenceWarning is ignored by the autouse fixture of conftest.py; no
    # catch_warnings here: it swaps process-wide state and is not thread-safe
    return bcd.solve(problem, **options)


# ------------------------------------------------------------------ threads

FOREST = ("tree", "forest_partition", "coloring")
EXACT = dict(update="exact")

#: (id, factory of a fresh problem, solve options); every solve has a fixed
#: random_state and stops on max_iter or tol, never on time
THREAD_CASES = []


def _case(name, factory, **options):
    options.setdefault("random_state", 7)
    options.setdefault("tol", 0.0)
    THREAD_CASES.append(pytest.param(factory, options, id=name))


def _big_quadratic(penalty=None):
    return _quadratic(penalty, rows=16, cols=16)


def _big_label_propagation(penalty=None):
    return _label_propagation(penalty, rows=16, cols=16)


# sizes and iteration counts make every solve last a few milliseconds, so
# that the four threads' solves overlap
for _name, _factory in (("quadratic", _big_quadratic), ("labelprop", _big_label_propagation)):
    _case(f"{_name}-tree-gs", _factory, rule="gs", blocks="tree", max_iter=40, **EXACT)
    _case(f"{_name}-tree-random", _factory, rule="random", blocks="tree", max_iter=200, **EXACT)
    _case(f"{_name}-forest_partition-random-vrandom", _factory, rule="random",
          blocks="forest_partition", vertex_order="random", max_iter=2000, **EXACT)
    _case(f"{_name}-forest_partition-gsd", _factory, rule="gsd", blocks="forest_partition",
          max_iter=2000, **EXACT)
    _case(f"{_name}-coloring-cyclic", _factory, rule="cyclic", blocks="coloring",
          max_iter=2000, **EXACT)
    _case(f"{_name}-coloring-lipschitz", _factory, rule="lipschitz", blocks="coloring",
          vertex_order="lipschitz", max_iter=2000, **EXACT)
    _case(f"{_name}-fixed-gsq", _factory, rule="gsq", blocks="fixed", block_size=4,
          partition="random", max_iter=3000, **EXACT)
    _case(f"{_name}-variable-gbcd", _factory, rule="gbcd", blocks="variable", block_size=10,
          max_iter=200, **EXACT)
    _case(f"{_name}-variable-gsl-l1", lambda f=_factory: f(penalty=bcd.L1(0.05)), rule="gsl",
          blocks="variable", block_size=3, update="homotopy", max_iter=3000)
for _sparse in (False, True):
    _kind = "sparse" if _sparse else "dense"
    _case(f"ls-{_kind}-gs-variable-gradient", lambda s=_sparse: _ls(s), rule="gs",
          blocks="variable", block_size=3, update="gradient", max_iter=4000)
    _case(f"ls-{_kind}-gsl-variable-linesearch", lambda s=_sparse: _ls(s), rule="gsl",
          blocks="variable", block_size=4, update="linesearch", max_iter=4000)
    _case(f"ls-{_kind}-gsq-variable-matrix-omp", lambda s=_sparse: _ls(s), rule="gsq",
          blocks="variable", block_size=3, update="matrix", gsq_method="omp", max_iter=1000)
    _case(f"ls-{_kind}-random-fixed-exact", lambda s=_sparse: _ls(s), rule="random",
          blocks="fixed", partition="random", block_size=5, update="exact", max_iter=4000)
    _case(f"ls-{_kind}-cyclic-variable-newton-extrapolation", lambda s=_sparse: _ls(s),
          rule="cyclic", blocks="variable", block_size=4, update="newton", extrapolation=3,
          max_iter=4000)
    _case(f"ls-{_kind}-l1-auto", lambda s=_sparse: _ls(s, penalty=bcd.L1(2.0)), tol=1e-12,
          max_iter=20000)
    _case(f"ls-{_kind}-box-gsd-two_metric", lambda s=_sparse: _ls(s, penalty=bcd.Box(-0.1, 0.2)),
          rule="gsd", blocks="variable", block_size=4, update="two_metric", max_iter=4000)
    _case(f"logistic-{_kind}-gs-fixed-newton", lambda s=_sparse: _logistic(s), rule="gs",
          blocks="fixed", block_size=4, update="newton", max_iter=2000)
    _case(f"logistic-{_kind}-lipschitz-variable-gradient-estimate",
          lambda s=_sparse: _logistic(s), rule="lipschitz", blocks="variable", block_size=3,
          update="gradient", lipschitz="estimate", max_iter=4000)
    _case(f"logistic-{_kind}-gsl-variable-gradient", lambda s=_sparse: _logistic(s),
          rule="gsl", blocks="variable", block_size=3, update="gradient", max_iter=4000)
    _case(f"logistic-{_kind}-l1-gs-workingset",
          lambda s=_sparse: _logistic(s, penalty=bcd.L1(1.0)), rule="gs", blocks="variable",
          block_size=2, update="newton", working_set=True, tol=1e-12, max_iter=3000)
    _case(f"multinomial-{_kind}-gsd-variable-newton", lambda s=_sparse: _multinomial(s),
          rule="gsd", blocks="variable", block_size=3, update="newton", max_iter=2000)
    _case(f"poisson-{_kind}-random-fixed-gradient", lambda s=_sparse: _poisson(s),
          rule="random", blocks="fixed", block_size=3, update="gradient", max_iter=4000)
_case("gp-gbcd", _gp, rule="gbcd", blocks="variable", block_size=20, max_iter=15, **EXACT)
_case("gp-gbcd-cache", lambda: _gp(cache_size=200 * 8 * 40), rule="gbcd", blocks="variable",
      block_size=20, mi_candidates=10, max_iter=15, **EXACT)
_case("gp-precomputed-gs-fixed", lambda: _gp(precomputed=True), rule="gs", blocks="fixed",
      block_size=10, max_iter=100, **EXACT)
_case("gp-gsl-variable-linesearch", _gp, rule="gsl", blocks="variable", block_size=5,
      update="linesearch", max_iter=60)
_case("gp-cyclic-variable-exact", _gp, rule="cyclic", blocks="variable", block_size=10,
      max_iter=60, **EXACT)


def _concurrent(problem, options, n_threads=4, repeats=2):
    """Solve ``problem`` ``repeats`` times in a row from each of ``n_threads``
    threads started together; the results in the order of the threads."""
    barrier = threading.Barrier(n_threads)
    results, errors = [[] for _ in range(n_threads)], []

    def work(i):
        try:
            barrier.wait(timeout=30)
            for _ in range(repeats):
                results[i].append(_solve(problem, **options))
        except BaseException as exc:        # reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a solving thread hangs"
    if errors:
        raise errors[0]
    return [r for thread in results for r in thread]


def _assert_same(result, ref, what):
    assert result.status == ref.status, (what, result.status, ref.status)
    assert result.n_iter == ref.n_iter, (what, result.n_iter, ref.n_iter)
    assert result.x.dtype == ref.x.dtype, what
    assert np.array_equal(result.x, ref.x), (what, np.max(np.abs(result.x - ref.x)))
    assert result.objective == ref.objective or (np.isnan(result.objective)
                                                 and np.isnan(ref.objective)), what


@pytest.mark.parametrize("factory, options", THREAD_CASES)
def test_threads_solving_one_problem_match_a_sequential_solve(factory, options):
    ref = _solve(factory(), **options)
    assert ref.n_iter > 0
    assert np.all(np.isfinite(ref.x))
    shared = factory()                       # fresh: its lazy caches are built concurrently
    for round_ in range(3):
        for i, result in enumerate(_concurrent(shared, options)):
            _assert_same(result, ref, f"round {round_}, thread {i // 2}, solve {i % 2}")
    # the problem is still usable sequentially afterwards
    _assert_same(_solve(shared, **options), ref, "after the threads")


def test_threads_with_different_configurations_on_one_problem():
    configs = [
        dict(rule="gs", blocks="tree", update="exact", max_iter=60),
        dict(rule="random", blocks="forest_partition", update="exact", max_iter=2000),
        dict(rule="gsl", blocks="variable", block_size=4, update="gradient", max_iter=3000),
        dict(rule="gsq", blocks="fixed", block_size=3, update="matrix", max_iter=3000),
    ]
    for config in configs:
        config.update(random_state=3, tol=0.0)
    refs = [_solve(_big_label_propagation(), **c) for c in configs]
    for round_ in range(3):
        shared = _big_label_propagation()
        barrier = threading.Barrier(len(configs))
        out, errors = [None] * len(configs), []

        def work(i):
            try:
                barrier.wait(timeout=30)
                out[i] = _solve(shared, **configs[i])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(configs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        for i, (result, ref) in enumerate(zip(out, refs)):
            _assert_same(result, ref, f"round {round_}, config {configs[i]}")


# ------------------------------------------------------------------ SIGINT

_SIGINT_SCRIPT = """
import json, signal, sys, time, warnings
# Python's own handler, as in an interactive session (a parent started in the
# background may have left SIGINT ignored)
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import bcd

case = sys.argv[1]
rs = np.random.RandomState(0)
options = dict(tol=0.0, max_iter=10**9, random_state=0)
if case == "ls-cyclic":
    problem = bcd.LeastSquares(rs.randn(2000, 2000), rs.randn(2000))
    options.update(rule="cyclic", blocks="fixed", update="gradient")
elif case == "ls-callback":
    problem = bcd.LeastSquares(rs.randn(2000, 2000), rs.randn(2000))
    options.update(rule="gs", blocks="variable", update="gradient",
                   callback=lambda info: sum(range(200)) < 0, callback_every=1)
elif case.startswith("lasso-workingset"):
    # a small penalty: most of the time in the compiled inner runs; a large
    # one: most of it in the outer loop, in Python, between them
    A = rs.randn(1000, 4000)
    b = rs.randn(1000)
    frac = 0.01 if case == "lasso-workingset-inner" else 0.2
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(frac * np.abs(A.T @ b).max()))
    options.update(rule="cyclic", blocks="variable", block_size=1, update="gradient",
                   working_set=True, extrapolation=5)
elif case == "gp-gbcd":
    # one kernel thread: on a loaded machine, OpenMP threads spin-waiting for
    # a descheduled peer can stretch one GBCD iteration to seconds, and the
    # engine can only stop between iterations
    X = rs.rand(6000, 4)
    problem = bcd.GaussianProcess(X, np.sin(3 * X[:, 0]) + 0.1 * rs.randn(6000),
                                  bcd.gp.SquaredExponential(lengthscale=0.3), noise=1e-4,
                                  n_threads=1)
    options.update(rule="gbcd", blocks="variable", block_size=200, update="exact")
elif case == "dual-logistic":
    A = rs.randn(2000, 4000)
    problem = bcd.Logistic(A, np.sign(A @ rs.randn(4000)), l2=1e-4)
    options.update(formulation="dual")
    # the row copy the dual loops read, made now (it is cached on the
    # problem): on a loaded machine the signal could land in it otherwise
    from bcd.problems.dual import dual_rows
    dual_rows(problem)
elif case == "dual-multinomial":
    problem = bcd.Multinomial(rs.randn(500, 2000), rs.randint(0, 5, 500), l2=1e-4)
    options.update(formulation="dual")
elif case == "newton-poisson":
    import scipy.sparse as sp
    A = sp.random(20000, 5000, density=0.01, random_state=0, format="csc")
    problem = bcd.Poisson(A, rs.poisson(1.0, 20000).astype(float), l2=1e-3)
    options.update(formulation="newton")
else:
    raise SystemExit("unknown case " + case)
print("started", flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    result = bcd.solve(problem, **options)
returned = time.time()
print(json.dumps(dict(
    status=result.status, converged=bool(result.converged), n_iter=int(result.n_iter),
    finite=bool(np.all(np.isfinite(result.x))), shape=list(result.x.shape),
    objective_finite=bool(np.isfinite(result.objective)),
    warned=any(issubclass(w.category, bcd.ConvergenceWarning) for w in caught),
    returned=returned)), flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX signals")
@pytest.mark.parametrize("case", ["ls-cyclic", "ls-callback", "lasso-workingset-inner",
                                  "lasso-workingset-outer", "gp-gbcd", "dual-logistic",
                                  "dual-multinomial", "newton-poisson"])
def test_sigint_returns_the_current_iterate(case):
    out, sent, exited = interrupt_child(_SIGINT_SCRIPT, case, 0.5, timeout=60)
    report = json.loads(out.strip().splitlines()[-1])
    assert report["status"] == "interrupted", report
    assert report["converged"] is False
    assert report["warned"], "no ConvergenceWarning for an interrupted solve"
    assert report["n_iter"] > 0, report
    assert report["finite"] and report["objective_finite"], report
    assert report["returned"] - sent < 1.0, f"solve returned {report['returned'] - sent:.2f} s " \
                                            f"after SIGINT"
    assert exited - sent < 1.0, f"process exited {exited - sent:.2f} s after SIGINT"


_SIGINT_FIT_SCRIPT = """
import signal, sys, time, warnings
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
from bcd.linear_model import LinearSVC
rs = np.random.RandomState(0)
# wide data (the dual) and a hinge loss with little regularization: each
# class takes minutes, so the signal lands in the first of six
X = rs.randn(2000, 3000)
y = np.arange(2000) % 6
model = LinearSVC(C=1e4, loss="hinge", tol=1e-14, max_iter=10**7)
print("started", flush=True)
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    print("returned", time.time(), flush=True)
except KeyboardInterrupt:
    print("interrupted", time.time(), hasattr(model, "coef_"), flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX signals")
def test_sigint_ends_a_fit_of_several_solves():
    """Ctrl-C in the first one-vs-rest solve of a LinearSVC fit: the fit does
    not go on to the other classes, it raises KeyboardInterrupt at once and
    leaves the estimator unfitted."""
    proc = subprocess.Popen([sys.executable, "-c", _SIGINT_FIT_SCRIPT],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        if line.strip() != "started":
            proc.wait(timeout=60)
            pytest.fail(f"the child did not start: {line!r}\n{proc.stderr.read()[-3000:]}")
        time.sleep(0.5)
        assert proc.poll() is None, "the fit ended before SIGINT: make it longer"
        proc.send_signal(signal.SIGINT)
        sent = time.time()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    words = out.strip().splitlines()[-1].split()
    assert words[0] == "interrupted", (out, err[-2000:])
    assert float(words[1]) - sent < 1.0
    assert words[2] == "False"


# ------------------------------------------------------------------ pickle

def _roundtrips():
    return {
        "pickle": lambda o: pickle.loads(pickle.dumps(o)),
        "pickle-highest": lambda o: pickle.loads(pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL)),
        "deepcopy": copy.deepcopy,
        "copy": copy.copy,
    }


PICKLE_PROBLEMS = {
    "ls-dense": (lambda: _ls(False), dict(rule="gs", block_size=3, update="gradient")),
    "ls-sparse-l1": (lambda: _ls(True, penalty=bcd.L1(1.0)),
                     dict(rule="gsd", block_size=3, update="gradient")),
    "ls-dense-float32-box": (
        lambda: bcd.LeastSquares(np.random.RandomState(0).randn(50, 20).astype(np.float32),
                                 np.random.RandomState(1).randn(50).astype(np.float32),
                                 penalty=bcd.Box(-0.1, np.full(20, 0.2))),
        dict(rule="gs", block_size=3, update="gradient")),
    "logistic-dense": (lambda: _logistic(False), dict(rule="gsl", blocks="variable",
                                                      block_size=3, update="gradient")),
    "logistic-sparse-l1": (lambda: _logistic(True, penalty=bcd.L1(1.0, positive=True)),
                           dict(rule="gs", block_size=2, update="newton")),
    "multinomial-dense": (lambda: _multinomial(False), dict(rule="gs", update="newton")),
    "multinomial-sparse-nonneg": (lambda: _multinomial(True, penalty=bcd.NonNegative()),
                                  dict(rule="random", update="gradient")),
    "poisson-dense": (lambda: _poisson(False), dict(rule="cyclic", update="newton")),
    "poisson-sparse-l1": (lambda: _poisson(True, penalty=bcd.L1(0.5)),
                          dict(rule="gs", update="newton")),
    "quadratic": (lambda: _quadratic(), dict(rule="gs", blocks="tree", update="exact")),
    "quadratic-l1": (lambda: _quadratic(penalty=bcd.L1(0.1)),
                     dict(rule="gs", update="homotopy")),
    "labelprop": (lambda: _label_propagation(), dict(rule="random", blocks="coloring",
                                                     update="exact")),
    "labelprop-box": (lambda: _label_propagation(penalty=bcd.Box(-0.5, 0.5)),
                      dict(rule="gsd", update="two_metric")),
    "gp": (lambda: _gp(n=60), dict(rule="gbcd", block_size=10, update="exact")),
    "gp-precomputed": (lambda: _gp(n=60, precomputed=True),
                       dict(rule="gs", blocks="fixed", block_size=5, update="exact")),
}


def _pickle_options(options):
    return dict(options, tol=0.0, max_iter=200, random_state=11)


@pytest.mark.parametrize("name", list(PICKLE_PROBLEMS))
def test_problems_survive_pickle_and_copy(name):
    factory, options = PICKLE_PROBLEMS[name]
    options = _pickle_options(options)
    ref = _solve(factory(), **options)
    assert ref.n_iter > 0
    rs = np.random.RandomState(0)
    for stage in ("before", "after"):
        problem = factory()
        x = rs.randn(problem.n_coordinates) * 0.1
        f, g = problem.objective(x), problem.gradient(x)
        if stage == "after":
            _assert_same(_solve(problem, **options), ref, "the original")
        for how, roundtrip in _roundtrips().items():
            what = f"{name} {how} {stage} a solve"
            clone = roundtrip(problem)
            assert type(clone) is type(problem), what
            assert clone.n_coordinates == problem.n_coordinates, what
            assert clone.dtype == problem.dtype, what
            assert type(clone.penalty) is type(problem.penalty), what
            assert np.array_equal(clone.lipschitz, problem.lipschitz), what
            assert clone.objective(x) == f, what
            assert np.array_equal(clone.gradient(x), g), what
            _assert_same(_solve(clone, **options), ref, what)
            # and the original is untouched by the clone's solve
            _assert_same(_solve(problem, **options), ref, what + " (original)")


PENALTIES = {
    "l1": lambda: bcd.L1(0.5),
    "l1-weights-positive": lambda: bcd.L1(np.linspace(0.0, 1.0, 6), positive=True),
    "box": lambda: bcd.Box(-1.0, 2.0),
    "box-arrays-inf": lambda: bcd.Box(np.array([-np.inf, 0, -1, -2, 0, -np.inf]),
                                      np.array([np.inf, 1, 1, np.inf, 0.5, 0.0])),
    "nonnegative": lambda: bcd.NonNegative(),
}


@pytest.mark.parametrize("name", list(PENALTIES))
def test_penalties_survive_pickle_and_copy(name):
    penalty = PENALTIES[name]()
    z = np.array([-3.0, -0.5, 0.0, 0.25, 1.5, 4.0])
    for stage in ("before", "after"):
        if stage == "after":
            problem = bcd.LeastSquares(np.random.RandomState(0).randn(12, 6),
                                       np.ones(12), penalty=penalty)
            _solve(problem, rule="gs", max_iter=50, tol=0.0)
        for how, roundtrip in _roundtrips().items():
            clone = roundtrip(penalty)
            what = f"{name} {how} {stage}"
            assert type(clone) is type(penalty), what
            assert repr(clone) == repr(penalty), what
            assert np.array_equal(clone.prox(z, 0.7), penalty.prox(z, 0.7)), what
            assert clone.value(np.clip(z, -0.5, 0.0)) == penalty.value(np.clip(z, -0.5, 0.0))
            assert clone.optimality(z, z[::-1]) == penalty.optimality(z, z[::-1]), what
            assert clone.capabilities == penalty.capabilities, what


KERNELS = {
    "se": lambda: bcd.gp.SquaredExponential(lengthscale=0.7, variance=1.3),
    "se-ard": lambda: bcd.gp.SquaredExponential(lengthscale=[0.5, 2.0]),
    "matern32": lambda: bcd.gp.Matern(1.5, lengthscale=0.8),
    "matern52": lambda: bcd.gp.Matern(2.5, lengthscale=0.8, variance=2.0),
    "periodic": lambda: bcd.gp.Periodic(1.0, 0.5),
    "locally-periodic": lambda: bcd.gp.LocallyPeriodic(1.0, 0.5),
    "sum-product": lambda: (bcd.gp.SquaredExponential(0.5) + bcd.gp.Periodic(2.0, 1.0))
    * bcd.gp.Matern(1.5, 1.0),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernels_survive_pickle_and_copy(name):
    kernel = KERNELS[name]()
    rs = np.random.RandomState(0)
    X1, X2 = rs.rand(7, 2), rs.rand(5, 2)
    K = kernel(X1, X2)
    for stage in ("before", "after"):
        if stage == "after":
            _solve(bcd.GaussianProcess(X1, rs.randn(7), kernel, noise=0.1),
                   rule="gbcd", block_size=3, update="exact", max_iter=5)
        for how, roundtrip in _roundtrips().items():
            clone = roundtrip(kernel)
            assert type(clone) is type(kernel), (name, how)
            assert repr(clone) == repr(kernel), (name, how)
            assert np.array_equal(clone(X1, X2), K), (name, how, stage)
            assert clone.diag_value() == kernel.diag_value()


def _result_equal(a, b, what):
    for attr in ("x", "objective", "optimality", "n_iter", "converged", "status", "message",
                 "time", "iteration_time", "duality_gap", "active_set_iteration",
                 "support_iteration"):
        va, vb = getattr(a, attr), getattr(b, attr)
        if isinstance(va, np.ndarray):
            assert va.dtype == vb.dtype and np.array_equal(va, vb), (what, attr)
        else:
            assert va == vb or (va != va and vb != vb), (what, attr, va, vb)
    for attr in ("iteration", "objective", "optimality", "time"):
        assert np.array_equal(getattr(a.history, attr), getattr(b.history, attr)), (what, attr)
    assert len(a.history) == len(b.history)
    assert a.options.keys() == b.options.keys(), what
    for key in a.options:
        assert np.array_equal(np.asarray(a.options[key], dtype=object),
                              np.asarray(b.options[key], dtype=object)), (what, key)


def test_results_survive_pickle_and_copy():
    results = [
        _solve(_ls(True, penalty=bcd.L1(1.0)), tol=1e-8, target_support=np.zeros(40, bool)),
        _solve(_logistic(False), rule="gs", block_size=3, max_iter=50, tol=0.0),
        _solve(_label_propagation(), rule="gs", blocks="tree", update="exact", tol=1e-8),
        _solve(_gp(n=50), rule="gbcd", block_size=10, update="exact", tol=1e-6),
    ]
    for result in results:
        for how, roundtrip in _roundtrips().items():
            clone = roundtrip(result)
            assert type(clone) is type(result)
            _result_equal(clone, result, f"{result!r} {how}")
            assert repr(clone) == repr(result)


def test_fitted_gp_regressor_survives_pickle_and_copy():
    rs = np.random.RandomState(0)
    X, X_test = rs.rand(80, 2), rs.rand(10, 2)
    y = np.sin(5 * X[:, 0]) + X[:, 1]
    kernel = bcd.gp.SquaredExponential(lengthscale=0.4) + bcd.gp.Matern(2.5, 1.0, 0.1)
    for variance in ("cholesky", "cg"):
        unfitted = bcd.gp.GPRegressor(kernel, noise=0.1, tol=1e-6, random_state=0,
                                      variance=variance)
        for roundtrip in _roundtrips().values():
            roundtrip(unfitted)             # unfitted estimators copy too
        gp = copy.deepcopy(unfitted).fit(X, y)
        # (the matrix-free variances are slow: fewer round trips there)
        ways = _roundtrips() if variance == "cholesky" else {
            "pickle": _roundtrips()["pickle"], "deepcopy": copy.deepcopy}
        fitted = {how: roundtrip(gp) for how, roundtrip in ways.items()}
        mean, std = gp.predict(X_test, return_std=True)
        predicted = {how: roundtrip(gp) for how, roundtrip in ways.items()}
        for stage, clones in (("fitted", fitted), ("after predict", predicted)):
            for how, clone in clones.items():
                m2, s2 = clone.predict(X_test, return_std=True)
                assert np.array_equal(m2, mean), (variance, how, stage)
                assert np.array_equal(s2, std), (variance, how, stage)
                assert np.array_equal(clone.alpha_, gp.alpha_)
                _result_equal(clone.result_, gp.result_, how)
        # predicting again (with the cached factor) gives the same answer
        m3, s3 = gp.predict(X_test, return_std=True)
        assert np.array_equal(m3, mean) and np.array_equal(s3, std)


SPAWN_CASES = ["ls-dense", "ls-sparse-l1", "logistic-sparse-l1", "multinomial-dense",
               "poisson-sparse-l1", "quadratic", "labelprop-box", "gp"]


def test_a_problem_solves_the_same_in_a_spawned_process():
    cases = []
    for name in SPAWN_CASES:
        factory, options = PICKLE_PROBLEMS[name]
        options = dict(_pickle_options(options), random_state=0)
        problem = factory()
        local = _solve(problem, **options)
        # the problem after a solve, and a fresh one
        cases += [(name + " (solved)", problem, options, local),
                  (name + " (fresh)", factory(), options, local)]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as executor:
        futures = [executor.submit(bcd.solve, problem, **options)
                   for _, problem, options, _ in cases]
        remote = [f.result(timeout=300) for f in futures]
    for (name, _, _, local), result in zip(cases, remote):
        assert isinstance(result, bcd.Result), name
        _assert_same(result, local, name)


# ------------------------------------------------------------------ max_time

def _long_ls():
    rs = np.random.RandomState(0)
    return bcd.LeastSquares(rs.randn(1500, 1500), rs.randn(1500))


def _long_gp():
    rs = np.random.RandomState(0)
    X = rs.rand(4000, 4)
    # one kernel thread (see the SIGINT script): iterations of even cost
    return bcd.GaussianProcess(X, np.sin(3 * X[:, 0]), bcd.gp.SquaredExponential(0.3),
                               noise=1e-4, n_threads=1)


def _long_lasso():
    rs = np.random.RandomState(0)
    A, b = rs.randn(800, 3000), rs.randn(800)
    return bcd.LeastSquares(A, b, penalty=bcd.L1(0.005 * np.abs(A.T @ b).max()))


MAX_TIME_CASES = {
    "ls-cyclic-fixed": (_long_ls, dict(rule="cyclic", blocks="fixed", update="gradient")),
    "ls-gs-variable-huge-check_every": (_long_ls, dict(rule="gs", update="gradient",
                                                       check_every=10**7)),
    "gp-gbcd": (_long_gp, dict(rule="gbcd", blocks="variable", block_size=300,
                               update="exact")),
    "lasso-workingset": (_long_lasso, dict(rule="cyclic", blocks="variable", block_size=1,
                                           update="gradient", working_set=True)),
}


@pytest.mark.parametrize("name", list(MAX_TIME_CASES))
def test_max_time_is_overshot_by_at_most_one_iteration_or_ten_percent(name):
    factory, options = MAX_TIME_CASES[name]
    problem = factory()
    max_time = 0.6
    with pytest.warns(bcd.ConvergenceWarning):
        result = bcd.solve(problem, tol=0.0, max_iter=10**9, max_time=max_time,
                           random_state=0, **options)
    assert result.status == "max_time", result
    assert not result.converged
    assert result.n_iter > 0
    per_iteration = result.iteration_time / result.n_iter
    allowed = max_time + max(0.1 * max_time, per_iteration)
    assert result.iteration_time <= allowed, (result.iteration_time, allowed, per_iteration)
    # the whole loop, with the two exact evaluations of the optimality, as well
    assert result.time <= allowed + 0.1, (result.time, allowed)


# ------------------------------------------------------------------ soak

def _rss_bytes():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _random_solve(seed):
    """One small solve of a random problem class and configuration."""
    rs = np.random.RandomState(seed)
    kind = seed % 8
    sparse = bool(rs.rand() < 0.5)
    m, n = 20 + rs.randint(20), 5 + rs.randint(15)
    if kind == 0:
        problem = _ls(sparse, m=m, n=n, seed=seed)
        options = dict(rule=rs.choice(["gs", "gsl", "cyclic", "random"]), block_size=3,
                       update=rs.choice(["gradient", "matrix", "newton", "linesearch"]))
    elif kind == 1:
        problem = _ls(sparse, penalty=bcd.L1(rs.uniform(0.1, 2.0)), m=m, n=n, seed=seed)
        options = {}                                 # the automatic configuration
    elif kind == 2:
        problem = _logistic(sparse, m=m + 20, n=n, seed=seed)
        options = dict(rule=rs.choice(["gs", "gsd", "lipschitz"]), block_size=2,
                       update=rs.choice(["gradient", "newton"]))
    elif kind == 3:
        problem = _multinomial(sparse, seed=seed)
        options = dict(rule="gs", block_size=3, update="newton")
    elif kind == 4:
        problem = _poisson(sparse, penalty=bcd.L1(0.3) if rs.rand() < 0.5 else None, seed=seed)
        options = dict(rule="gs", block_size=2, update="newton")
    elif kind == 5:
        problem = _quadratic(rows=4, cols=5, seed=seed)
        options = dict(rule=rs.choice(["gs", "random"]),
                       blocks=rs.choice(["tree", "forest_partition", "coloring"]),
                       update="exact")
    elif kind == 6:
        problem = _label_propagation(rows=5, cols=5, seed=seed,
                                     penalty=bcd.Box(-0.3, 0.3) if rs.rand() < 0.5 else None)
        options = {}
    else:
        problem = _gp(n=40, seed=seed)
        options = dict(rule="gbcd", block_size=8, update="exact")
    result = bcd.solve(problem, max_iter=2000, tol=1e-7, random_state=seed, **options)
    return (result.status, bool(result.converged), bool(np.all(np.isfinite(result.x))),
            float(result.optimality), float(result.options["tol"]))


def _check_soak_result(out):
    status, converged, finite, optimality, tol = out
    assert status in STATUSES, out
    assert converged == (status == "converged"), out
    if converged:
        assert finite and optimality <= tol, out
    elif status != "diverged":
        assert finite, out


@pytest.mark.soak
def test_soak_many_small_solves_on_threads():
    full = os.environ.get("BCD_SOAK") == "1"
    n_total = 10000 if full else 2000
    n_warmup = 1000 if full else 400
    budget = None if full else 20.0
    start = time.perf_counter()
    not_converged = 0
    # warnings are recorded once for all threads (catch_warnings swaps
    # process-wide state, so it cannot be entered per thread); the records
    # are dropped after each chunk so that they do not count as memory growth
    with warnings.catch_warnings(record=True) as caught, \
            concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        warnings.simplefilter("always", bcd.ConvergenceWarning)
        warned = 0

        def run(seeds):
            nonlocal not_converged, warned
            for out in pool.map(_random_solve, seeds):
                _check_soak_result(out)
                not_converged += out[0] not in ("converged", "callback")
            warned += sum(issubclass(w.category, bcd.ConvergenceWarning) for w in caught)
            del caught[:]

        run(range(n_warmup))
        gc.collect()
        rss0 = _rss_bytes()
        done = n_warmup
        for chunk in range(n_warmup, n_total, 200):
            run(range(chunk, min(chunk + 200, n_total)))
            done = min(chunk + 200, n_total)
            if budget is not None and time.perf_counter() - start > budget:
                break                         # the short run is bounded in time
        gc.collect()
        rss1 = _rss_bytes()
    assert done >= min(n_total, n_warmup + 200), done
    # every status but "converged" and "callback" comes with a ConvergenceWarning
    assert warned == not_converged, (warned, not_converged)
    growth = (rss1 - rss0) / 2**20
    assert growth <= 5.0, f"RSS grew by {growth:.1f} MB over {done - n_warmup} solves"
