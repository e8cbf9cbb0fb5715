"""Calls that run many solves, and the edges of the stopping test: the
working-set loop always ends within ``max_iter``; Ctrl-C and ``max_time``
hold for whole paths and cross-validated fits; certificates describe the
returned ``x``; clear errors at the edges of the inputs.
"""
import json
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
