"""Calls that run many solves, and the edges of the stopping test: the
working-set loop always ends within ``max_iter``; Ctrl-C and ``max_time``
hold for whole paths and cross-validated fits; certificates describe the
returned ``x``; clear errors at the edges of the inputs.
"""
import json
import pickle
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bcd
from _data import interrupt_child


class _Hung(Exception):
    """Raised by the watchdog alarm of the property test."""


def _alarm(signum, frame):
    raise _Hung("the solve ran past its watchdog")


# ------------------------------------------------------------ working sets

def test_working_set_target_below_the_rounding_floor_ends_the_solve():
    # the outer residual stays above tol; the inner run measured it below its
    # target at the same x and made no update: the loop used to repeat for
    # ever without counting anything toward max_iter
    y = np.r_[np.ones(16), -np.ones(14)]
    problem = bcd.Logistic(np.ones((30, 1)), y, penalty=bcd.L1(0.0))
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        result = bcd.solve(problem, tol=1e-15, max_iter=50)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)
    assert result.n_iter <= 50
    assert result.converged and result.status == "converged"
    assert "attainable accuracy" in result.message
    # the solution: the intercept of the class frequencies
    assert abs(result.x[0] - np.log(16 / 14)) < 1e-12
    assert result.optimality < 1e-13


def test_logistic_l1_on_data_scaled_to_1e_300_returns_promptly():
    from bcd.linear_model import LogisticRegression
    rs = np.random.RandomState(0)
    X = rs.randn(100, 5)
    y = (X[:, 0] > 0).astype(int)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LogisticRegression(penalty="l1", max_iter=10).fit(X * 1e-300, y)
        elapsed = time.perf_counter() - start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)
    assert elapsed < 10.0
    assert np.all(np.isfinite(model.coef_))


def _penalized_problem(kind, penalty, n, d, seed, intercept):
    rs = np.random.RandomState(seed)
    A = rs.randn(n, d)
    if intercept:
        A[:, 0] = 1.0
    if penalty == "l1":
        pen = bcd.L1([0.0, rs.uniform(0.0, 0.01), rs.uniform(0.0, 2.0)][rs.randint(3)])
    elif penalty == "nonnegative":
        pen = bcd.NonNegative()
    else:
        pen = bcd.Box(-rs.uniform(0.0, 1.0), rs.uniform(0.0, 1.0))
    if kind == "least_squares":
        return bcd.LeastSquares(A, rs.randn(n), penalty=pen)
    if kind == "logistic":
        y = np.where(rs.rand(n) < 0.5, 1.0, -1.0)
        y[:2] = 1.0, -1.0
        return bcd.Logistic(A, y, penalty=pen)
    return bcd.Poisson(0.3 * A, rs.poisson(1.0, n).astype(float), penalty=pen)


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["least_squares", "logistic", "poisson"]),
       penalty=st.sampled_from(["l1", "nonnegative", "box"]),
       n=st.integers(2, 40), d=st.integers(1, 6), seed=st.integers(0, 2**16),
       intercept=st.booleans(),
       tol=st.sampled_from([1e-16, 1e-15, 1e-14, 1e-12]),
       max_iter=st.integers(1, 400),
       config=st.sampled_from(["auto", "working_set", "working_set_gs"]))
def test_penalized_solves_return_within_max_iter_at_any_tol(kind, penalty, n, d, seed,
                                                            intercept, tol, max_iter, config):
    problem = _penalized_problem(kind, penalty, n, d, seed, intercept)
    options = {}
    if config == "working_set":
        options = dict(rule="cyclic", blocks="variable", block_size=1,
                       update="newton" if kind == "poisson" else "gradient", working_set=True)
    elif config == "working_set_gs":
        options = dict(rule="gs", blocks="variable", block_size=min(2, d), update="newton",
                       working_set=True)
        if kind == "least_squares":
            options["update"] = "gradient"
    old = signal.signal(signal.SIGALRM, _alarm)
    # generous: each example takes milliseconds; a hang would take for ever
    signal.setitimer(signal.ITIMER_REAL, 20.0)
    try:
        result = bcd.solve(problem, tol=tol, max_iter=max_iter, warn=False, random_state=0,
                           **options)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)
    assert result.n_iter <= max_iter, result
    assert result.status in ("converged", "max_iter", "stalled", "diverged"), result
    if result.converged and result.optimality > tol:
        assert "attainable accuracy" in result.message, result.message


# ------------------------------------------------------------ Ctrl-C

_SIGINT_SCRIPT = """
import json, signal, sys, time, warnings
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import bcd
from bcd.linear_model import LassoCV, LogisticRegressionCV

case = sys.argv[1]
rs = np.random.RandomState(0)
report = {}
model = None
# the data first: the signal comes while the call runs
if case == "path":
    A = rs.randn(1000, 4000)
    b = A[:, :50] @ rs.randn(50) + rs.randn(1000)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(1.0))
    lmax = bcd.lambda_max(problem)
    grid = np.geomspace(lmax, 1e-5 * lmax, 200)
elif case == "lassocv":
    # small alphas: every solve of the folds' paths takes seconds, so the
    # signal lands in a compiled loop
    X = rs.randn(800, 2000)
    y = X[:, :50] @ rs.randn(50) + rs.randn(800)
    alpha_max = np.abs(X.T @ (y - y.mean())).max() / 800
    model = LassoCV(alphas=alpha_max * np.geomspace(1e-3, 1e-4, 5), tol=1e-12,
                    max_iter=10**6, cv=5)
elif case == "logisticcv":
    # no intercept: each fold runs one bcd.path along the Cs
    X = rs.randn(800, 2000)
    y = (X[:, :50] @ rs.randn(50) + rs.randn(800) > 0).astype(int)
    model = LogisticRegressionCV(Cs=[10.0, 100.0, 1000.0], penalty="l1",
                                 fit_intercept=False, tol=1e-12, max_iter=10**6, cv=5)
print("started", flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        if case == "path":
            result = bcd.path(problem, grid, tol=1e-12, max_iter=10**9)
            report.update(status=result.status, n_points=len(result.lambdas),
                          finite=bool(np.all(np.isfinite(result.coefs))),
                          last=result.results[-1].status)
        else:
            model.fit(X, y)
            report.update(status="returned")
    except KeyboardInterrupt:
        report.update(status="KeyboardInterrupt",
                      fitted=None if model is None else hasattr(model, "coef_"))
report.update(returned=time.time(),
              warnings=[str(w.message) for w in caught
                        if issubclass(w.category, Warning)][-3:])
print(json.dumps(report), flush=True)
"""


def _interrupt(case, wait=1.5):
    """Run the case in a child, send SIGINT ``wait`` s after it starts, and
    return ``(report, seconds from the signal to the report)``."""
    out, sent, _ = interrupt_child(_SIGINT_SCRIPT, case, wait, timeout=120)
    report = json.loads(out.strip().splitlines()[-1])
    return report, report["returned"] - sent


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX signals")
def test_sigint_stops_a_path_with_the_points_so_far():
    report, delay = _interrupt("path")
    assert report["status"] == "interrupted", report
    assert report["last"] == "interrupted", report
    assert 1 <= report["n_points"] < 200, report
    assert report["finite"], report
    assert any("Interrupted" in w for w in report["warnings"]), report
    assert delay < 1.0, f"path returned {delay:.2f} s after SIGINT"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX signals")
@pytest.mark.parametrize("case", ["lassocv", "logisticcv"])
def test_sigint_ends_a_cross_validated_fit(case):
    report, delay = _interrupt(case)
    assert report["status"] == "KeyboardInterrupt", report
    assert report["fitted"] is False, report
    assert delay < 1.0, f"{case} raised {delay:.2f} s after SIGINT"


# ------------------------------------------------------------ max_time

def _lasso_data():
    rs = np.random.RandomState(0)
    X = rs.randn(400, 1500)
    y = X[:, :40] @ rs.randn(40) + rs.randn(400)
    return X, y


def test_max_time_is_the_deadline_of_a_whole_path():
    X, y = _lasso_data()
    problem = bcd.LeastSquares(X, y, penalty=bcd.L1(1.0))
    lmax = bcd.lambda_max(problem)
    grid = np.geomspace(lmax, 1e-5 * lmax, 100)
    max_time = 1.0
    start = time.perf_counter()
    with pytest.warns(bcd.ConvergenceWarning, match="max_time"):
        result = bcd.path(problem, grid, tol=1e-13, max_iter=10**9, max_time=max_time)
    elapsed = time.perf_counter() - start
    assert result.status == "max_time", result
    assert 1 <= len(result.lambdas) < grid.size
    assert np.array_equal(result.lambdas, grid[:len(result.lambdas)])
    assert result.coefs.shape == (len(result.lambdas), X.shape[1])
    assert np.all(np.isfinite(result.coefs))
    # one iteration of a path: a solve's set-up and final evaluation
    per_point = float(np.median(result.times - [r.iteration_time for r in result.results]))
    assert elapsed <= max_time + max(0.1 * max_time, per_point) + 0.05, (elapsed, per_point)


def _timed_fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return time.perf_counter() - start, [str(w.message) for w in caught]


@pytest.mark.parametrize("name", ["LassoCV", "LogisticRegressionCV",
                                  "LogisticRegressionCV-path"])
def test_max_time_is_the_deadline_of_a_cross_validated_fit(name):
    from bcd.linear_model import LassoCV, LogisticRegressionCV
    X, y = _lasso_data()
    if name == "LassoCV":
        def make(t):
            return LassoCV(alphas=30, eps=1e-5, tol=1e-13, max_iter=10**6, max_time=t)
    else:
        y = (y > 0).astype(int)

        def make(t):
            return LogisticRegressionCV(Cs=np.logspace(-1, 4, 10), penalty="l1",
                                        fit_intercept=name == "LogisticRegressionCV",
                                        tol=1e-13, max_iter=10**6, max_time=t)
    # the fixed cost of a fit (data preparation, the set-up of a solve per
    # fold, the final fit): one "iteration" of a cross-validated fit
    fixed, _ = _timed_fit(make(1e-3), X, y)
    max_time = 1.5
    model = make(max_time)
    elapsed, messages = _timed_fit(model, X, y)
    assert any("max_time" in m for m in messages), messages
    # one iteration of a fit of several solves is its fixed cost (set-up,
    # refit); twice it, or a quarter of max_time, absorbs a loaded machine
    assert elapsed <= max_time + max(0.25 * max_time, 2.0 * fixed), (elapsed, fixed)
    # a usable model, chosen among what was evaluated
    scores = (model.mse_path_ if name == "LassoCV"
              else np.asarray(next(iter(model.scores_.values()))))
    assert np.isnan(scores).any()
    assert not np.isnan(scores).all()
    assert np.all(np.isfinite(model.coef_))
    assert np.all(np.isfinite(model.predict(X)))


# ------------------------------------------------------------ certificates

def _float32_problem(seed):
    rs = np.random.RandomState(seed)
    A = (rs.randn(60, 30) * 10 ** rs.uniform(-1, 2)).astype(np.float32)
    b = rs.randn(60).astype(np.float32)
    return [bcd.LeastSquares(A, b, penalty=bcd.L1(0.1)),
            bcd.Logistic(A, np.sign(b), penalty=bcd.L1(0.5)),
            bcd.LeastSquares(A, b),
            bcd.Logistic(A, np.sign(b), l2=1.0)][seed % 4]


def _measure_at(problem, x):
    x = np.asarray(x, dtype=np.float64)
    g = problem.gradient(x)
    if problem.penalty is None:
        return float(np.abs(g).max())
    return problem.penalty.optimality(x, g)


@pytest.mark.parametrize("seed", range(16))
def test_float32_certificates_describe_the_returned_x(seed):
    problem = _float32_problem(seed)
    tol = 1e-6
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = bcd.solve(problem, tol=tol)
    assert result.x.dtype == np.float32
    measured = _measure_at(problem, result.x)
    assert result.optimality == pytest.approx(measured, rel=1e-6, abs=1e-12)
    assert result.objective == pytest.approx(problem.objective(result.x.astype(np.float64)),
                                             rel=1e-12)
    if result.duality_gap is not None:
        assert result.duality_gap == pytest.approx(
            problem.duality_gap(result.x.astype(np.float64)), rel=1e-6, abs=1e-12)
    assert result.converged == (result.optimality <= tol)
    if not result.converged:
        assert result.status == "stalled"
        assert "float32" in result.message
        assert any("float32" in str(w.message) for w in caught)


def test_float32_certificate_when_the_optimality_equals_the_gap():
    """A primal solve whose float64 optimality and duality gap are both
    2.2e-16 is still judged by its optimality at the returned float32 x
    (the equality once made it pass as a dual solve, judged by its gap)."""
    A = np.array([[1.76405239], [0.40015721]], dtype=np.float32)
    b = np.array([1.867558, -0.97727787], dtype=np.float32)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(np.array([1.2107840], dtype=np.float32)))
    tol = 2.9e-10
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = bcd.solve(problem, rule="random", blocks="fixed", update="gradient", tol=tol,
                           random_state=0)
    measured = _measure_at(problem, result.x)
    assert result.optimality == pytest.approx(measured, rel=1e-6, abs=1e-12)
    assert measured > tol
    assert not result.converged and result.status == "stalled"
    assert "float32" in result.message
    assert any("float32" in str(w.message) for w in caught)


@pytest.mark.parametrize("formulation", ["dual", "newton"])
def test_float32_certificates_of_the_drivers_describe_the_returned_x(formulation):
    rs = np.random.RandomState(2)
    A = (rs.randn(200, 50) * 30).astype(np.float32)
    y = np.sign(rs.randn(200))
    problem = bcd.Logistic(A, y, l2=1.0)
    reference = bcd.Logistic(A.astype(np.float64), y, l2=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bcd.solve(problem, tol=1e-10, formulation=formulation, max_iter=300)
        best = bcd.solve(reference, tol=1e-12, formulation="newton").objective
    x = result.x.astype(np.float64)
    assert result.x.dtype == np.float32
    assert result.objective == pytest.approx(problem.objective(x), rel=1e-12)
    if formulation == "newton":
        assert result.optimality == pytest.approx(_measure_at(problem, x), rel=1e-6)
        assert result.converged == (result.optimality <= 1e-10)
    else:
        # the gap bounds the suboptimality of the returned x
        assert result.duality_gap >= problem.objective(x) - best - 1e-12
    if result.status == "stalled":
        assert "float32" in result.message


# ------------------------------------------------------------ clear errors

@pytest.mark.parametrize("name", ["Lasso", "ElasticNet", "LassoCV"])
@pytest.mark.parametrize("scale", [1e200, 1e300])
def test_least_squares_estimators_name_a_target_too_large(name, scale):
    import bcd.linear_model as lm
    rs = np.random.RandomState(0)
    X, y = rs.randn(30, 5), rs.randn(30)
    with pytest.raises(ValueError, match="sum of squares of y overflows.*rescale"):
        getattr(lm, name)().fit(X, y * scale)


@pytest.mark.parametrize("kernel", ["rbf", "knn"])
def test_label_propagation_names_inputs_too_large(kernel):
    from bcd.semi_supervised import LabelPropagation
    rs = np.random.RandomState(0)
    X = rs.randn(29, 3)
    y = np.r_[rs.randint(0, 3, 10), -np.ones(19, int)]
    with pytest.raises(ValueError, match="X is too large.*rescale X"):
        LabelPropagation(kernel=kernel).fit(X * 1e300, y)


def test_lasso_cv_eps_above_one_is_named():
    from bcd.linear_model import LassoCV
    rs = np.random.RandomState(0)
    with pytest.raises(ValueError, match="eps must be below 1"):
        LassoCV(eps=2).fit(rs.randn(30, 5), rs.randn(30))
    # eps = 1, as in scikit-learn: the grid is alpha_max alone, with the zero model
    model = LassoCV(eps=1, alphas=1, cv=2).fit(rs.randn(30, 5), rs.randn(30))
    assert np.all(model.coef_ == 0)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_results_pickle_with_every_protocol(protocol):
    rs = np.random.RandomState(0)
    result = bcd.solve(bcd.LeastSquares(rs.randn(30, 5), rs.randn(30), penalty=bcd.L1(1.0)))
    clone = pickle.loads(pickle.dumps(result, protocol=protocol))
    assert np.array_equal(clone.x, result.x)
    assert clone.status == result.status and clone.options == result.options
    history = pickle.loads(pickle.dumps(result.history, protocol=protocol))
    for a, b in zip(history, result.history):
        assert a == b
    assert len(history) == len(result.history)


@pytest.mark.parametrize("verbose", [True, 2])
def test_verbose_without_standard_output_does_not_stop_the_solve(verbose, monkeypatch):
    rs = np.random.RandomState(0)
    monkeypatch.setattr(sys, "stdout", None)
    result = bcd.solve(bcd.LeastSquares(rs.randn(30, 5), rs.randn(30), penalty=bcd.L1(1.0)),
                       verbose=verbose)
    assert result.converged


@pytest.mark.parametrize("name", ["LabelPropagation", "LinearSVC", "LogisticRegression"])
def test_max_time_is_the_deadline_of_a_fit_of_several_solves(name):
    rs = np.random.RandomState(0)
    if name == "LabelPropagation":
        from bcd.semi_supervised import LabelPropagation
        # large enough that the fit outlasts max_time on a fast machine too
        # (13 s here on a loaded machine; 4,000 points took 0.6 s)
        X = rs.rand(16000, 2)
        y = np.full(16000, -1)
        y[:30] = np.arange(30) % 4

        def make(t):
            return LabelPropagation(kernel="knn", tol=1e-14, max_iter=10**8, max_time=t)
    else:
        # one solve per class (one-vs-rest), each long
        import bcd.linear_model as lm
        X = rs.randn(400, 1500)
        y = np.arange(400) % 4
        options = dict(tol=1e-14, max_iter=10**6)
        if name == "LinearSVC":
            options.update(C=1e3, loss="hinge")
        else:
            options.update(penalty="l1", C=1e3, fit_intercept=False)

        def make(t):
            return getattr(lm, name)(max_time=t, **options)
    fixed, _ = _timed_fit(make(1e-3), X, y)
    max_time = 1.0
    elapsed, messages = _timed_fit(make(max_time), X, y)
    assert any("max_time" in m for m in messages), messages
    # one iteration of a fit of several solves is its fixed cost (set-up,
    # refit); twice it, or a quarter of max_time, absorbs a loaded machine
    assert elapsed <= max_time + max(0.25 * max_time, 2.0 * fixed), (elapsed, fixed)


def test_float32_x_at_a_bound_float32_cannot_represent_stays_in_the_box():
    # the cast of x = 0.2 (the upper bound) to float32 rounds up, outside the
    # box, where F is infinite: the returned x is moved one unit inwards
    rs = np.random.RandomState(0)
    A = rs.randn(40, 6).astype(np.float32)
    b = (A.astype(np.float64) @ np.full(6, 5.0)).astype(np.float32)
    problem = bcd.LeastSquares(A, b, penalty=bcd.Box(-0.1, 0.2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bcd.solve(problem, tol=1e-6)
    x = result.x.astype(np.float64)
    assert result.x.dtype == np.float32
    assert np.all(x <= 0.2) and np.all(x >= -0.1)
    assert np.any(x > 0.2 - 1e-7)               # the bound is active
    assert np.isfinite(result.objective)
    assert result.objective == pytest.approx(problem.objective(x), rel=1e-12)


def test_ctrl_c_in_the_python_part_of_a_path_solve_stops_a_cv_fit(monkeypatch):
    # a SIGINT that lands in a solve's set-up (Python code) stops the path of
    # the fold without an interrupted solve; the CV fit must still stop
    import bcd._solve
    from bcd.linear_model import LassoCV
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 10))
    y = X[:, 0] + 0.1 * rng.standard_normal(80)
    real, calls = bcd._solve.solve, []

    def solve(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(bcd._solve, "solve", solve)
    # solver_options (here the default tol_mode) take the folds' paths to
    # bcd.path instead of the compiled path
    model = LassoCV(alphas=10, cv=3, solver_options={"tol_mode": "absolute"})
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y)
    assert len(calls) == 5 and not hasattr(model, "coef_")


@pytest.mark.parametrize("estimator", ["LassoCV", "LogisticRegressionCV"])
def test_ctrl_c_in_a_compiled_path_stops_a_cv_fit(monkeypatch, estimator):
    # the compiled paths of the folds raise KeyboardInterrupt on Ctrl-C (they
    # check for signals between passes); the CV fit stops at once
    from bcd.core import enetpath
    from bcd.linear_model import LassoCV, LogisticRegressionCV
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 10))
    y = X[:, 0] + 0.1 * rng.standard_normal(80)
    cls = enetpath.EnetPath if estimator == "LassoCV" else enetpath.LogisticPath
    real, calls = cls.solve, []

    def solve(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, "solve", solve)
    model = (LassoCV(alphas=10, cv=3) if estimator == "LassoCV" else
             LogisticRegressionCV(Cs=10, cv=3, l1_ratios=(0.0,), use_legacy_attributes=False))
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y if estimator == "LassoCV" else (y > 0).astype(int))
    assert len(calls) == 5 and not hasattr(model, "coef_")


# ------------------------------------------- a Ctrl-C swallowed where it arose

_SWALLOWED_SCRIPT = """
import gc, json, signal, sys, time
import numpy as np
import bcd
signal.signal(signal.SIGINT, signal.default_int_handler)
state = {"armed": False, "fired": False}

def collector(phase, info):
    # Python code in a garbage-collection callback, as Dask's distributed
    # installs: a KeyboardInterrupt raised in it is reported and dropped
    if state["armed"] and not state["fired"]:
        state["fired"] = True
        signal.raise_signal(signal.SIGINT)
        total = 0
        for i in range(1000):
            total += i

gc.callbacks.append(collector)

def callback(info):
    if info.iteration >= 20 and not state["armed"]:
        state["armed"] = True
        gc.collect()

rng = np.random.default_rng(0)
A = rng.standard_normal((300, 200))
problem = bcd.LeastSquares(A, rng.standard_normal(300), penalty=bcd.L1(1e-9))
start = time.perf_counter()
result = bcd.solve(problem, rule="random", update="gradient", tol=1e-30, max_iter=10**9,
                   max_time=30.0, callback=callback, warn=False)
print(json.dumps(dict(status=result.status, fired=state["fired"],
                      seconds=time.perf_counter() - start)))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals")
def test_ctrl_c_swallowed_by_a_gc_callback_still_stops_the_solve():
    done = subprocess.run([sys.executable, "-c", _SWALLOWED_SCRIPT], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # the interrupt was raised in the callback and dropped there ...
    assert out["fired"] and "Exception ignored" in done.stderr
    # ... and the solve stopped at its next signal check, not at max_time
    assert out["status"] == "interrupted" and out["seconds"] < 10.0


def _swallow_a_ctrl_c():
    try:
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):
            pass
    except KeyboardInterrupt:
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals")
def test_a_recorded_ctrl_c_is_taken_once_or_raised_at_the_end():
    from bcd import _interrupt
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # taken by a loop: once, and nothing is raised at the end
        with _interrupt.recording():
            _swallow_a_ctrl_c()
            assert _interrupt.take() and not _interrupt.take()
        # not taken: raised when the outermost recording ends
        with pytest.raises(KeyboardInterrupt):
            with _interrupt.recording():
                with _interrupt.recording():        # nested: one record
                    _swallow_a_ctrl_c()
                assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        # a call that reports the interrupt as its status is not raised again

        class Reported:
            status = "interrupted"

        @_interrupt.records
        def reports():
            _swallow_a_ctrl_c()
            return Reported()

        assert reports().status == "interrupted" and not _interrupt.take()
        # without a recording, a swallowed Ctrl-C is gone, as in Python
        _swallow_a_ctrl_c()
        assert not _interrupt.take()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_warnings_point_at_the_callers_line():
    # however deep in bcd a warning arises (and through the Ctrl-C record's
    # wrapper), it is attributed to the line that called bcd
    A = np.random.default_rng(0).standard_normal((30, 10))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        bcd.solve(bcd.LeastSquares(A, np.ones(30)), rule="random", update="gradient", max_iter=2)
        bcd.path(bcd.LeastSquares(A, np.ones(30), penalty=bcd.L1(1.0)), [0.5, 0.1], max_iter=1)
    assert len(caught) >= 2 and all(w.filename == __file__ for w in caught), \
        [(w.filename, w.lineno) for w in caught]
    assert caught[0].lineno == line and caught[-1].lineno == line + 1


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals")
def test_a_sigint_handler_that_lets_the_program_go_on_is_obeyed():
    from bcd import _interrupt
    seen = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with _interrupt.recording():
            signal.raise_signal(signal.SIGINT)
            for _ in range(1000):
                pass
            assert seen and not _interrupt.take()
    finally:
        signal.signal(signal.SIGINT, previous)
