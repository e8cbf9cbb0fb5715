"""Ctrl-C and max_time for the Gaussian process fits that run many solves:
hyperparameter learning (ml, cv, cv_admm, on a thread pool) and the sparse
GP's swaps.  One model: a first Ctrl-C stops the fit within about a second;
GPRegressor raises FitInterrupted carrying the best hyperparameters reached,
SparseGPRegressor keeps its best model with a warning; max_time is one
deadline for the whole fit."""
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import bcd
from bcd.gp import GPRegressor, SparseGPRegressor, SquaredExponential

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time, warnings
    import numpy as np
    import bcd
    from bcd.gp import FitInterrupted, GPRegressor, SparseGPRegressor, SquaredExponential

    # the default Ctrl-C handler, whatever the parent left (a background
    # job starts with SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    which, n = sys.argv[1], int(sys.argv[2])
    if which == "ml_estimated":
        # the marginal likelihood estimated, as above the exact method's size
        import bcd.gp.hyper.ml
        bcd.gp.hyper.ml.EXACT_MAX_SAMPLES = 0
        which = "ml"
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (n, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(n)
    if which == "sparse":
        model = SparseGPRegressor(SquaredExponential(1.0), 0.1, n_inducing=150, max_epochs=500,
                                  tol=0.0, random_state=0)
    else:
        model = GPRegressor(SquaredExponential(1.0), 0.1, optimizer=which, n_restarts=1,
                            random_state=0)
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(float(sys.argv[3]), interrupt).start()
    start = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X, y)
            outcome = "fitted " + str(model.status_) + " " + str(
                any("interrupted" in str(w.message) for w in caught)) + " " + str(
                float(model.score(X, y)) > 0.5)
        except FitInterrupted as exc:
            partial = exc.partial
            outcome = "raised " + ("none" if partial is None else
                                   str(np.all(np.isfinite(partial["theta"]))))
    done = time.monotonic()
    print(outcome)
    print(round(done - sent[0], 3) if sent else -1, round(done - start, 3))
""")


def run_interrupted(which, n, after):
    out = subprocess.run([sys.executable, "-c", SCRIPT, which, str(n), str(after)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    outcome, times = out.stdout.strip().splitlines()
    latency, total = map(float, times.split())
    return outcome, latency, total


@pytest.mark.parametrize("optimizer, n", [("ml", 1500), ("ml_estimated", 1500), ("cv", 1500),
                                          ("cv_admm", 1500)])
def test_ctrl_c_stops_hyperparameter_learning(optimizer, n):
    outcome, latency, total = run_interrupted(optimizer, n, 1.5)
    # the signal landed during the fit, which then stopped within about a
    # second (the tasks run on a thread pool and check a shared flag)
    assert latency >= 0, "the fit ended before the signal"
    assert outcome in ("raised True", "raised none")
    assert latency < 2.0, latency


def test_ctrl_c_keeps_the_sparse_gps_best_model():
    outcome, latency, total = run_interrupted("sparse", 6000, 1.5)
    assert latency >= 0, "the fit ended before the signal"
    # after the first model: kept, with a warning; before it (a slow
    # machine): FitInterrupted with nothing to keep
    assert outcome in ("fitted interrupted True True", "raised none")
    assert latency < 2.0, latency


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("optimizer", ["ml", "ml_estimated", "cv", "cv_admm"])
def test_max_time_is_the_deadline_of_hyperparameter_learning(optimizer, monkeypatch):
    if optimizer == "ml_estimated":
        from bcd.gp.hyper import ml
        monkeypatch.setattr(ml, "EXACT_MAX_SAMPLES", 0)
        optimizer = "ml"
    X, y = data(800)
    model = GPRegressor(SquaredExponential(1.0), 0.1, optimizer=optimizer, n_restarts=1,
                        max_time=0.3, random_state=0)
    start = time.perf_counter()
    with pytest.warns(bcd.ConvergenceWarning, match="max_time=0.3 ran out"):
        model.fit(X, y)
    elapsed = time.perf_counter() - start
    assert elapsed < 0.3 + 1.5, elapsed
    assert np.all(np.isfinite(model.predict(X[:5])))


@pytest.mark.parametrize("optimizer", ["ml", "cv"])
def test_a_deadline_before_any_evaluation_keeps_the_documented_details(optimizer):
    X, y = data(300)
    model = GPRegressor(SquaredExponential(1.0), 0.1, optimizer=optimizer, max_time=1e-9,
                        random_state=0)
    with pytest.warns(bcd.ConvergenceWarning, match="the initial ones"):
        model.fit(X, y)
    assert model.hyper_["n_iter"] == 0 and model.hyper_["starts"] == []
    if optimizer == "ml":
        # (cv's maximum-likelihood scale step may still rescale the start)
        assert np.array_equal(model.hyper_["theta"], np.log([1.0, 1.0, 0.1]))
        assert model.hyper_["method"] == "exact"


def test_max_time_of_the_sparse_gp():
    X, y = data(4000)
    model = SparseGPRegressor(SquaredExponential(1.0), 0.1, n_inducing=100, max_epochs=500,
                              tol=0.0, max_time=0.3, random_state=0)
    start = time.perf_counter()
    with pytest.warns(bcd.ConvergenceWarning, match="max_time"):
        model.fit(X, y)
    assert time.perf_counter() - start < 0.3 + 1.5
    assert model.status_ == "max_time"
    assert model.score(X, y) > 0.5


def test_a_fit_without_interruption_reports_its_status():
    X, y = data(300)
    model = SparseGPRegressor(SquaredExponential(1.0), 0.1, n_inducing=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        model.fit(X, y)
    assert model.status_ in ("converged", "max_epochs")


@pytest.mark.parametrize("bad", [0, -1.0, "1", float("nan")])
def test_bad_max_time_is_refused(bad):
    X, y = data(50)
    with pytest.raises((ValueError, TypeError), match="max_time"):
        GPRegressor(SquaredExponential(1.0), 0.1, max_time=bad).fit(X, y)
    with pytest.raises((ValueError, TypeError), match="max_time"):
        SparseGPRegressor(SquaredExponential(1.0), 0.1, n_inducing=5, max_time=bad).fit(X, y)


def test_ml_marginal_likelihood_matches_scikit_learn():
    sk = pytest.importorskip("sklearn.gaussian_process")
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, y = data(400)
    model = GPRegressor(SquaredExponential(1.0), 0.1, optimizer="ml").fit(X, y)
    k = model.kernel_
    ref = sk.GaussianProcessRegressor(
        ConstantKernel(k.variance) * RBF(k.lengthscale) + WhiteKernel(model.noise_),
        optimizer=None).fit(X, y)
    assert model.log_marginal_likelihood_value_ == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-9)
    np.testing.assert_allclose(model.predict(X[:20]), ref.predict(X[:20]), rtol=1e-7,
                               atol=1e-9)


# ------------------------------------------------------------------ clear errors

def test_inputs_too_large_for_float64_products_are_refused():
    X, y = data(30)
    with pytest.raises(ValueError, match="Input X has entries as large as"):
        GPRegressor(SquaredExponential(1.0), 0.1, optimizer="ml").fit(X * 1e300, y)
    with pytest.raises(ValueError, match="Input y has entries as large as"):
        SparseGPRegressor(SquaredExponential(1.0), 0.1, n_inducing=5).fit(X, y * 1e300)


def test_a_huge_cache_size_is_refused_clearly():
    X, y = data(30)
    with pytest.raises(ValueError, match="cache_size must be"):
        GPRegressor(SquaredExponential(1.0), 0.1, cache_size=1e30).fit(X, y)


@pytest.mark.parametrize("options, match", [({"rho": -1}, "rho"), ({"max_iter": 0}, "max_iter"),
                                            ({"rho_update": "yes"}, "rho_update")])
def test_admm_option_values_are_checked(options, match):
    X, y = data(30)
    with pytest.raises((ValueError, TypeError), match=match):
        GPRegressor(SquaredExponential(1.0), 0.1, optimizer="cv_admm",
                    admm_options=options).fit(X, y)


def test_the_model_does_not_see_later_changes_of_the_callers_array():
    X, y = data(60)
    model = GPRegressor(SquaredExponential(1.0), 0.1).fit(X, y)
    before = model.predict(X[:5].copy())
    query = X[:5].copy()
    X *= 3.0
    np.testing.assert_array_equal(model.predict(query), before)


def test_predictive_variance_uses_one_factor_for_every_call():
    X, y = data(200)
    model = GPRegressor(SquaredExponential(1.0), 0.1, tol=1e-10).fit(X, y)
    _, std = model.predict(X[:50], return_std=True)
    factor = model._chol
    assert factor is not None
    _, again = model.predict(X[:50], return_std=True)
    assert model._chol is factor
    K = model.kernel_(X)
    C = K + model.noise_ * np.eye(200)
    k = K[:, :50]
    exact = np.sqrt(np.maximum(np.diag(K)[:50] - np.einsum("ij,ij->j", k,
                                                           np.linalg.solve(C, k)), 0))
    np.testing.assert_allclose(std, exact, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(again, std)


DASK_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time, warnings
    import numpy as np
    import distributed
    from bcd.gp import FitInterrupted, GPRegressor, SquaredExponential

    signal.signal(signal.SIGINT, signal.default_int_handler)
    n = int(sys.argv[1])
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (n, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(n)
    if __name__ == "__main__":
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=50)
        client = distributed.Client(cluster)
        for which in sys.argv[2:]:
            model = GPRegressor(SquaredExponential(1.0), 0.1, optimizer=which, n_restarts=1,
                                cv=2, cv_scheme="consensus", client=client, random_state=0)
            sent = []

            def interrupt():
                sent.append(time.monotonic())
                os.kill(os.getpid(), signal.SIGINT)

            timer = threading.Timer(1.5, interrupt)
            timer.start()
            try:
                model.fit(X, y)
                outcome = "fitted"
            except FitInterrupted as exc:
                outcome = "raised"
            done = time.monotonic()
            timer.cancel()
            print(which, outcome, round(done - sent[0], 3) if sent else -1, flush=True)
        client.close()
        cluster.close()
""")


def test_ctrl_c_stops_hyperparameter_learning_on_a_dask_cluster(tmp_path):
    pytest.importorskip("distributed")
    script = tmp_path / "interrupt_dask.py"
    script.write_text(DASK_SCRIPT)
    out = subprocess.run([sys.executable, str(script), "2500", "ml", "cv", "cv_admm"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["ml", "cv", "cv_admm"], out.stdout
    for line in lines:
        which, outcome, latency = line.split()
        # the signal landed during the fit, whose tasks were then cancelled
        # on the workers: the caller gets FitInterrupted within a second
        assert float(latency) >= 0, f"{which}: the fit ended before the signal"
        assert outcome == "raised", line
        assert float(latency) < 2.0, line


DENSE_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    import bcd
    from bcd.gp import SquaredExponential

    signal.signal(signal.SIGINT, signal.default_int_handler)
    X, y, _, _ = bcd.datasets.make_friedman1(int(sys.argv[1]), 10, random_state=0)
    problem = bcd.GaussianProcess(X, y, SquaredExponential(2.0), 0.05)
    options = dict(rule="cyclic", blocks="variable", block_size=X.shape[0], update="exact")
    start = time.monotonic()
    bcd.solve(problem, **options)
    full = time.monotonic() - start
    threading.Timer(full / 3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    result = bcd.solve(problem, **options)
    print(result.status, result.n_iter, round(full, 3), round(time.monotonic() - start, 3))
""")


def test_ctrl_c_stops_a_dense_solve_between_the_panels_of_its_factorization():
    # one block of every point, factored by panels of 512: a Ctrl-C a third
    # of the way into the solve stops it at the next panel, before the step
    # moves anything (it used to run the factorization to its end)
    out = subprocess.run([sys.executable, "-c", DENSE_SCRIPT, "4000"], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    status, n_iter, full, elapsed = out.stdout.split()
    assert (status, n_iter) == ("interrupted", "0")
    assert float(elapsed) < float(full), (elapsed, full)


def test_max_time_stops_a_dense_solve_between_the_panels_of_its_factorization():
    # the deadline is looked at between the panels: a step that would
    # converge in one go stops instead, x unmoved (before: the step ran to
    # its end and the solve reported convergence past its max_time)
    X, y, _, _ = bcd.datasets.make_friedman1(3000, 10, random_state=0)
    problem = bcd.GaussianProcess(X, y, SquaredExponential(2.0), 0.05)
    options = dict(rule="cyclic", blocks="variable", block_size=3000, update="exact")
    with pytest.warns(bcd.ConvergenceWarning, match="max_time"):
        result = bcd.solve(problem, max_time=1e-4, **options)
    assert result.status == "max_time" and result.n_iter == 0
    assert not np.any(result.x)
    full = bcd.solve(problem, **options)
    assert full.converged and full.n_iter == 1
