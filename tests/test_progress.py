"""Progress output: rate, terminal and log-file forms, and its validation."""
import io
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import bcd
from bcd._progress import Progress

LINE = re.compile(r"iter +(\d+)  objective (\S+)  optimality (\S+)  time (\S+)s")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _slow_solve(verbose, max_time=2.5):
    """A solve that runs for max_time seconds (tol=0 is never reached)."""
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=100, n_features=400, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        return bcd.solve(bcd.LeastSquares(A, b), rule="gs", block_size=5, tol=0.0,
                         max_iter=10**9, max_time=max_time, check_every=100, verbose=verbose)


def test_verbose_lines_at_most_about_once_a_second(capsys):
    result = _slow_solve(True)
    lines = capsys.readouterr().out.splitlines()
    reports = [line for line in lines if LINE.match(line)]
    # about one a second over 2.5 s, plus the final line with the status
    assert 2 <= len(reports) <= 5, lines
    assert reports[-1].endswith("max_time")
    iterations = [int(LINE.match(line).group(1)) for line in reports]
    assert iterations == sorted(iterations) and iterations[-1] == result.n_iter
    assert float(LINE.match(reports[-1]).group(2)) == pytest.approx(result.objective, rel=1e-9)
    times = [float(LINE.match(line).group(4)) for line in reports]
    assert all(b - a >= 0.9 for a, b in zip(times[:-2], times[1:-1]))


def test_verbose_2_rewrites_one_line_on_a_terminal(monkeypatch):
    term = _Terminal()
    monkeypatch.setattr(sys, "stdout", term)
    _slow_solve(2)
    out = term.getvalue()
    assert out.count("\r") >= 2
    assert out.endswith("max_time\n") and out.count("\n") == 1


def test_verbose_2_gives_plain_lines_in_a_log_file(capsys):
    _slow_solve(2)
    out = capsys.readouterr().out
    assert "\r" not in out
    assert sum(bool(LINE.match(line)) for line in out.splitlines()) >= 2


def test_verbose_prints_the_automatic_choice_and_a_final_line(capsys):
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=50, n_features=200)
    result = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(1e3)), verbose=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("automatic configuration")
    assert LINE.match(lines[-1]) and lines[-1].endswith("converged")
    assert int(LINE.match(lines[-1]).group(1)) == result.n_iter


def test_quiet_by_default(capsys):
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=50, n_features=200)
    bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(1e3)))
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("bad", [3, -1, "yes", 1.5, None])
def test_bad_verbose(bad):
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=20, n_features=50)
    with pytest.raises(ValueError, match="verbose must be"):
        bcd.solve(bcd.LeastSquares(A, b), verbose=bad)


def test_progress_clear_and_rate():
    term = _Terminal()
    p = Progress(2, stream=term, interval=0.0)
    p.show("a long line of text")
    p.show("short")
    assert term.getvalue() == "\ra long line of text\rshort" + " " * 14
    p.clear()
    assert term.getvalue().endswith("\r" + " " * 5 + "\r")
    log = io.StringIO()
    q = Progress(2, stream=log, interval=60.0)
    q.show("not yet")
    q.end("final")
    assert log.getvalue() == "final\n"


def _run_on_a_terminal(code, timeout):
    """What ``python -c code`` writes to a pseudo-terminal as its stdout."""
    leader, follower = os.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=follower,
                            stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=timeout)
    os.close(leader)
    assert proc.returncode == 0, proc.stderr.read().decode()
    return b"".join(chunks).decode()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_self_updating_line_on_a_real_terminal():
    code = ("import warnings, bcd\n"
            "warnings.simplefilter('ignore')\n"
            "A, b = bcd.datasets.make_paper_dataset('A', n_samples=100, n_features=400)\n"
            "bcd.solve(bcd.LeastSquares(A, b), rule='gs', block_size=5, tol=0.0,\n"
            "          max_iter=10**9, max_time=2.2, check_every=100, verbose=2)\n")
    out = _run_on_a_terminal(code, timeout=60)
    assert out.count("\r") >= 2, out          # rewritten in place (the terminal adds \r\n too)
    assert "max_time" in out


def test_gp_fit_reports_progress(capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    y = np.sin(6 * X[:, 0])
    gp = bcd.gp.GPRegressor(bcd.gp.SquaredExponential(0.3), noise=0.01, tol=1e-8, verbose=True)
    gp.fit(X, y)
    last = capsys.readouterr().out.splitlines()[-1]
    assert LINE.match(last) and last.endswith("converged")
    assert int(LINE.match(last).group(1)) == gp.n_iter_


HYPER_LINE = re.compile(r"(ml|cv|cv_admm)\b.*: iteration (\d+) .*(noise|lengthscale)=\S+  "
                        r"time (\S+)s$")


@pytest.mark.parametrize("optimizer", ["ml", "cv", "cv_admm"])
def test_hyperparameter_learning_reports_each_iteration(optimizer, capsys, monkeypatch):
    """Every optimizer reports its iterations (objective, hyperparameters,
    time), rate-limited; a log file keeps the lines."""
    # no rate limit: every iteration's line
    monkeypatch.setattr(Progress.__init__, "__defaults__", (1, None, 0.0))
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (120, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        bcd.gp.GPRegressor(bcd.gp.SquaredExponential(1.0), 0.1, optimizer=optimizer, cv=2,
                           random_state=0, verbose=True,
                           admm_options={"max_iter": 5}).fit(X, y)
    lines = [line for line in capsys.readouterr().out.splitlines() if HYPER_LINE.match(line)]
    assert len(lines) >= 2, lines
    assert int(HYPER_LINE.match(lines[-1]).group(2)) >= 2


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_hyperparameter_progress_on_a_terminal():
    code = ("import numpy as np, bcd\n"
            "rng = np.random.default_rng(0)\n"
            "X = rng.uniform(-3, 3, (400, 2)); y = np.sin(X[:, 0])\n"
            "bcd.gp.GPRegressor(bcd.gp.SquaredExponential(1.0), 0.1, optimizer='ml',\n"
            "                   verbose=2).fit(X, y)\n")
    out = _run_on_a_terminal(code, timeout=300)
    assert "ml: log marginal likelihood" in out and "after" in out
