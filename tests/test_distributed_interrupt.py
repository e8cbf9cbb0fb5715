"""Ctrl-C and max_time for bcd.distributed fits on a real LocalCluster: a
first Ctrl-C stops the rounds within about a second and returns the best
certified point with status "interrupted"; max_time is the deadline of the
rounds."""
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("distributed")

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time, warnings
    import numpy as np
    import distributed
    import bcd
    import bcd.distributed as bd

    if __name__ == "__main__":
        signal.signal(signal.SIGINT, signal.default_int_handler)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=50)
        client = distributed.Client(cluster)
        rng = np.random.default_rng(0)
        A = rng.standard_normal((4000, 300))
        y = np.sign(A @ rng.standard_normal(300) + 2.0 * rng.standard_normal(4000))
        # a tolerance it cannot reach: only the signal or the deadline stops it
        # (CoCoA+: Newton's method would reach the floor of rounding first)
        kw = dict(loss="logistic", l2=1e-3, client=client, n_partitions=4, tol=1e-300,
                  max_rounds=10**6, method="cocoa+")
        which = sys.argv[1]
        sent = []
        if which == "interrupt":
            kw["max_time"] = 60.0      # a lost Ctrl-C fails the test instead of hanging it

            def interrupt():
                sent.append(time.monotonic())
                os.kill(os.getpid(), signal.SIGINT)
            threading.Timer(3.0, interrupt).start()
        else:
            kw["max_time"] = 2.0
        start = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = bd.solve(A, y, **kw)
        done = time.monotonic()
        warned = any(result.status in str(w.message) for w in caught)
        finite = bool(np.all(np.isfinite(result.x)) and np.isfinite(result.duality_gap))
        print(result.status, warned, finite, result.n_rounds,
              round(done - sent[0], 3) if sent else -1, round(done - start, 3))
        client.close()
        cluster.close()
""")


def run(tmp_path, which):
    script = tmp_path / "distributed_stop.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script), which], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    status, warned, finite, rounds, latency, total = out.stdout.split()
    return status, warned == "True", finite == "True", int(rounds), float(latency), float(total)


def test_ctrl_c_stops_the_rounds(tmp_path):
    status, warned, finite, rounds, latency, _ = run(tmp_path, "interrupt")
    assert latency >= 0, "the fit ended before the signal"
    assert status == "interrupted" and warned and finite and rounds > 1
    assert latency < 2.0, latency


def test_max_time_is_the_deadline_of_the_rounds(tmp_path):
    status, warned, finite, rounds, _, total = run(tmp_path, "deadline")
    assert status == "max_time" and warned and finite and rounds > 1
    assert total < 2.0 + 2.0, total


def test_a_ctrl_c_swallowed_where_it_was_raised_is_still_recorded():
    # Dask runs garbage-collection callbacks in the main thread, where an
    # exception is printed and dropped: the fit reads the record instead
    import os
    import signal
    import time

    from bcd import _interrupt
    from bcd.distributed._driver import _check_ctrl_c

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with _interrupt.recording():
                try:
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(1.0)
                except KeyboardInterrupt:
                    pass                    # swallowed
                _check_ctrl_c()             # the fit's check raises it again
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)