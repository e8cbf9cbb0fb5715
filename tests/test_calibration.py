"""The machine-calibrated choice between a dense solve and GBCD for kernel
systems, and the default thread count of the Gaussian-process classes."""
import numpy as np
import pytest
import scipy.linalg

import bcd
from bcd import _resources
from bcd.core import calibration


#: the default candidates per step of rule "gbcd"
_KAPPA = next(o.default for o in bcd.core.rules.RULES["gbcd"].options if o.name == "mi_candidates")


def _problem(n, **kwargs):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(n, 3))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(0.5), noise=0.1, **kwargs)


def _fix(monkeypatch, flop_rate, entry_rate, memory, block_seconds=0.01):
    monkeypatch.setattr(calibration, "dense_rate", lambda threads=1, n=10000: flop_rate)
    monkeypatch.setattr(bcd.GaussianProcess, "kernel_entry_rate", lambda self: entry_rate)
    monkeypatch.setattr(bcd.GaussianProcess, "block_seconds",
                        lambda self, size, candidates: block_seconds)
    monkeypatch.setattr(_resources, "available_memory", lambda: memory)


def test_choice_is_deterministic_for_given_figures():
    a = [calibration.decide(n, 2e10, 1e8, 8e9) for n in (100, 1000, 5000, 20000, 50000)]
    b = [calibration.decide(n, 2e10, 1e8, 8e9) for n in (100, 1000, 5000, 20000, 50000)]
    assert a == b
    # the dense solve wins at small n (its n^2 term is smaller), GBCD at large n
    # (the n^3 factorization); the switch lies where the predictions cross
    choices = [d["choice"] for d in a]
    assert choices[0] == "dense" and choices[-1] == "gbcd"
    for d in a:
        assert (d["choice"] == "dense") == (
            d["dense_s"] <= calibration.GBCD_MARGIN * d["gbcd_s"]
            and d["dense_bytes"] <= d["memory_limit"])
    # the switch of the model: GBCD when predicted GBCD_MARGIN times faster,
    # M GBCD_PASSES n^2 / e = DENSE_PASSES n^2 / e + n^3 / (3 f)
    cross = 3 * 2e10 \
        * (calibration.GBCD_MARGIN * calibration.GBCD_PASSES - calibration.DENSE_PASSES) / 1e8
    assert calibration.decide(0.99 * cross, 2e10, 1e8, None)["choice"] == "dense"
    assert calibration.decide(1.01 * cross, 2e10, 1e8, None)["choice"] == "gbcd"


def test_faster_factorization_moves_the_switch_up():
    n = 6000
    assert calibration.decide(n, 1e9, 1e8, None)["choice"] == "gbcd"
    assert calibration.decide(n, 1e11, 1e8, None)["choice"] == "dense"
    # a slower kernel favours the dense solve, which evaluates fewer entries
    assert calibration.decide(n, 1e9, 1e6, None)["choice"] == "dense"


def test_memory_limit_is_respected():
    n = 1000
    need = calibration.DENSE_BYTES * n * n
    enough = need / calibration.MEMORY_FRACTION
    assert calibration.decide(n, 1e12, 1e8, enough)["choice"] == "dense"
    low = calibration.decide(n, 1e12, 1e8, 0.99 * enough)
    assert low["choice"] == "gbcd" and low["dense_s"] < low["gbcd_s"]
    assert low["memory_limit"] == pytest.approx(calibration.MEMORY_FRACTION * 0.99 * enough)


@pytest.mark.parametrize("flop_rate, memory, row, choice", [
    (1e12, None, "small kernel system", "dense"),      # dense predicted faster
    (1e3, None, "kernel system", "gbcd"),              # dense predicted slower
    (1e12, 1e5, "kernel system", "gbcd"),              # faster, but over the memory limit
])
def test_each_branch_is_reachable_through_solve(flop_rate, memory, row, choice, monkeypatch):
    _fix(monkeypatch, flop_rate, 1e8, memory)
    problem = _problem(300)
    result = bcd.solve(problem)
    assert result.converged
    assert result.options["auto"] == row
    prediction = result.options["auto_prediction"]
    assert prediction["choice"] == choice
    assert prediction["flop_rate"] == flop_rate and prediction["entry_rate"] == 1e8
    # the block probe is skipped where the dense solve wins even against
    # GBCD's floor
    block = 0.01 if prediction["block_probe"] else calibration.selection_floor(300, _KAPPA, 1e8)
    assert prediction["block_probe"] == (choice == "gbcd")
    assert prediction["block_seconds"] == block
    expected = calibration.predict(300, flop_rate, 1e8, block, 300)
    assert (prediction["dense_s"], prediction["gbcd_s"]) == pytest.approx(expected)
    if choice == "dense":
        assert result.options["block_size"] == 300 and result.n_iter == 1
    else:
        assert result.options["rule"] == "gbcd"
    K = problem.kernel_matrix() + 0.1 * np.eye(300)
    alpha = scipy.linalg.solve(K, problem.y, assume_a="pos")
    np.testing.assert_allclose(K @ result.x, problem.y, atol=1.01 * result.options["tol"])
    np.testing.assert_allclose(result.x, alpha, atol=1e-4 * np.abs(alpha).max())


def test_real_calibration_is_cached_and_positive():
    problem = _problem(400)
    rate = problem.kernel_entry_rate()
    assert rate > 0 and problem.kernel_entry_rate() == rate
    # the same kernel kind with other hyperparameters shares the figure
    other = bcd.GaussianProcess(problem.X, problem.y, bcd.gp.SquaredExponential(2.5), 0.3,
                                n_threads=problem.n_threads)
    assert other.kernel_entry_rate() == rate
    flops = calibration.dense_rate()
    assert flops > 0 and calibration.dense_rate() == flops
    # more threads, a faster factorization, by Amdahl's law, with a serial
    # fraction that falls as 1 / n
    for n in (2000, 10000, 40000):
        serial = calibration.DENSE_SERIAL_POINTS / n
        assert calibration.dense_rate(4, n) == pytest.approx(flops * 4 / (1 + 3 * serial))
    assert calibration.dense_rate(4, 100) == pytest.approx(flops)
    seconds = problem.block_seconds(100, 30)
    assert seconds > 0 and problem.block_seconds(100, 30) == seconds
    d = calibration.kernel_choice(problem)
    assert d["choice"] in ("dense", "gbcd") and d["dense_s"] > 0 and d["gbcd_s"] > 0
    assert d["block_seconds"] > 0


def test_block_time_model():
    # GBCD: n / BLOCK_YIELD blocks, each chosen in block_seconds and updating
    # the gradient by n * block_size entries; the choice dominates small
    # systems, the update large ones
    n, k, rate, sel = 20000, 500, 2e9, 0.02
    _, gbcd = calibration.predict(n, 1e11, rate, sel, k)
    assert gbcd == pytest.approx(n / calibration.BLOCK_YIELD * (sel + n * k / rate))
    # a slower choice of blocks moves the switch to the dense solve up
    fast = [calibration.decide(m, 1e11, rate, None, 0.005, k)["choice"]
            for m in (2000, 5000, 10000, 20000, 40000)]
    slow = [calibration.decide(m, 1e11, rate, None, 0.05, k)["choice"]
            for m in (2000, 5000, 10000, 20000, 40000)]
    assert fast.count("gbcd") > slow.count("gbcd")
    assert fast[0] == slow[0] == "dense" and fast[-1] == "gbcd"


def test_prediction_only_for_kernel_systems():
    from bcd.core import auto
    A = np.random.default_rng(0).standard_normal((20, 5))
    assert auto.prediction(bcd.LeastSquares(A, np.ones(20))) is None
    assert "auto_prediction" not in bcd.solve(bcd.LeastSquares(A, np.ones(20))).options


# ---------------------------------------------------------------- threads

def _no_limits(monkeypatch, cpus=8):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(_resources, "_read", lambda path: None)
    monkeypatch.setattr(_resources.os, "sched_getaffinity", lambda pid: set(range(cpus)),
                        raising=False)
    monkeypatch.setattr(_resources.os, "cpu_count", lambda: cpus)


def test_usable_cores_follows_each_limit(monkeypatch):
    _no_limits(monkeypatch)
    assert _resources.usable_cores() == 8
    monkeypatch.setenv("OMP_NUM_THREADS", "3,2")
    assert _resources.usable_cores() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert _resources.usable_cores() == 8
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr(_resources.os, "sched_getaffinity", lambda pid: {0, 5})
    assert _resources.usable_cores() == 2


@pytest.mark.parametrize("files, cores", [
    ({"/sys/fs/cgroup/cpu.max": "150000 100000"}, 2),      # 1.5 cores, rounded up
    ({"/sys/fs/cgroup/cpu.max": "400000 100000"}, 4),
    ({"/sys/fs/cgroup/cpu.max": "max 100000"}, 8),
    ({"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "300000",
      "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000"}, 3),
    ({"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1",
      "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000"}, 8),
])
def test_usable_cores_follows_the_cgroup_quota(files, cores, monkeypatch):
    _no_limits(monkeypatch)
    monkeypatch.setattr(_resources, "_read", files.get)
    assert _resources.usable_cores() == cores


def test_gaussian_process_threads_default_to_the_usable_cores(monkeypatch):
    from bcd.gp._kernel import max_threads
    openmp = max_threads()      # OpenMP's own limit caps the default
    _no_limits(monkeypatch, cpus=64)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert _problem(50).n_threads == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr(_resources.os, "sched_getaffinity", lambda pid: {0, 1})
    assert _problem(50).n_threads == min(2, openmp)
    # an explicit count is kept
    assert _problem(50, n_threads=3).n_threads == 3
    with pytest.raises(ValueError, match="n_threads"):
        _problem(50, n_threads=0)


def test_block_probe_only_where_it_can_change_the_choice(monkeypatch):
    calls = []
    _fix(monkeypatch, 1e12, 1e8, None)
    monkeypatch.setattr(bcd.GaussianProcess, "block_seconds",
                        lambda self, size, candidates: calls.append(size) or 0.01)
    # the dense solve wins even against GBCD's floor: no probe
    d = calibration.kernel_choice(_problem(300))
    assert d["choice"] == "dense" and not d["block_probe"] and calls == []
    floor = calibration.selection_floor(300, _KAPPA, 1e8)
    assert d["block_seconds"] == floor
    _, gbcd = calibration.predict(300, 1e12, 1e8, floor, 300)
    assert d["dense_s"] <= gbcd
    # a slow factorization: GBCD may win, the probe decides
    _fix(monkeypatch, 1e3, 1e8, None)
    monkeypatch.setattr(bcd.GaussianProcess, "block_seconds",
                        lambda self, size, candidates: calls.append(size) or 0.01)
    d = calibration.kernel_choice(_problem(300))
    assert d["block_probe"] and calls == [300] and d["block_seconds"] == 0.01
    # over the memory limit: GBCD whatever the figures, with the probe's time
    _fix(monkeypatch, 1e12, 1e8, 1e5)
    d = calibration.kernel_choice(_problem(300))
    assert d["choice"] == "gbcd" and d["block_probe"]
