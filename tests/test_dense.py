"""Large dense SPD factorizations by panels (bcd.core._dense) and the
process resources module (threads after fork, available memory)."""
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import scipy.linalg

from bcd import _resources
from bcd.core._dense import INTERRUPTED, TIMED_OUT, cholesky, inverse_from_cholesky


def spd(n, seed=0, shift=1.0):
    B = np.random.default_rng(seed).standard_normal((n, n))
    return B @ B.T / n + shift * np.eye(n)


@pytest.mark.parametrize("n, panel", [(1, 1), (2, 1), (7, 3), (64, 64), (65, 64), (300, 32),
                                      (300, 1000)])
def test_cholesky_and_inverse_match_lapack(n, panel):
    A = spd(n, seed=n)
    F = np.array(A, order="F")
    F[np.tril_indices(n, -1)] = 7.0          # the strict lower triangle is never read
    assert cholesky(F, panel=panel) == 0
    U = np.triu(F)
    np.testing.assert_allclose(U, scipy.linalg.cholesky(A, lower=False), rtol=1e-11, atol=1e-13)
    assert np.all(F[np.tril_indices(n, -1)] == 7.0)
    assert inverse_from_cholesky(F, panel=panel) == 0
    np.testing.assert_allclose(np.triu(F), np.triu(np.linalg.inv(A)), rtol=1e-10, atol=1e-12)
    assert np.all(F[np.tril_indices(n, -1)] == 7.0)


@pytest.mark.parametrize("panel", [1, 4, 16, 100])
def test_not_positive_definite_reports_lapacks_order(panel):
    A = spd(40, seed=3)
    A[25, 25] = -1.0                         # the leading minor of order 26 is indefinite
    _, expected = scipy.linalg.lapack.dpotrf(A, lower=0)
    assert expected == 26
    assert cholesky(np.asfortranarray(A), panel=panel) == expected


def test_singular_factor_reports_its_zero_pivot():
    U = np.asfortranarray(np.triu(spd(10, seed=4)))
    U[6, 6] = 0.0
    assert inverse_from_cholesky(U, panel=4) == 7


def test_deadline_stops_between_panels():
    A = np.asfortranarray(spd(200))
    assert cholesky(A.copy(order="F"), panel=8, deadline=time.monotonic() - 1.0) == TIMED_OUT
    F = A.copy(order="F")
    assert cholesky(F, panel=8) == 0
    assert inverse_from_cholesky(F, panel=8, deadline=time.monotonic() - 1.0) == TIMED_OUT


def test_bad_arrays_are_refused():
    with pytest.raises(ValueError, match="Fortran-ordered"):
        cholesky(np.eye(3) + np.ones((3, 3)) * 0.1)          # C order, not symmetric layout
    with pytest.raises(ValueError, match="Fortran-ordered"):
        cholesky(np.asfortranarray(np.eye(3, dtype=np.float32)))
    with pytest.raises(ValueError, match="Fortran-ordered"):
        cholesky(np.asfortranarray(np.ones((3, 4))))
    with pytest.raises(ValueError, match="panel"):
        cholesky(np.asfortranarray(np.eye(3)), panel=0)
    assert cholesky(np.zeros((0, 0), order="F")) == 0


def test_ctrl_c_stops_the_factorization():
    """SIGINT during a long factorization: it returns INTERRUPTED after the
    current panel instead of running to the end, and the signal is consumed
    as that status."""
    script = textwrap.dedent("""
        import os, signal, threading, time
        import numpy as np
        from bcd.core._dense import cholesky
        signal.signal(signal.SIGINT, signal.default_int_handler)
        n = 1500
        A = np.asfortranarray(np.eye(n) * n + 1.0)
        work = np.empty_like(A, order="F")
        send = lambda delay: threading.Timer(
            delay, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        send(0.3)
        codes, missed = [], 0
        while len(codes) < 500 and -1 not in codes:
            try:
                work[...] = A
                codes.append(cholesky(work, panel=8))
            except KeyboardInterrupt:
                # the signal fell between two factorizations (in Python code,
                # which raises it): send it again
                missed += 1
                if missed > 20:
                    raise
                send(0.05)
        print(codes[-1], len(codes))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    code, count = map(int, out.stdout.split())
    assert code == INTERRUPTED and count < 500


def test_available_memory_is_a_positive_byte_count():
    memory = _resources.available_memory()
    assert memory is None or memory > 1 << 20


def test_threads_are_resolved_and_capped_after_fork(monkeypatch):
    assert _resources.resolve_threads(None, 3) == 3
    assert _resources.resolve_threads(2, 8) == 2
    assert _resources.resolve_threads(0, 1) == 1
    monkeypatch.setattr(_resources, "_forked_after_parallel", True)
    monkeypatch.setattr(_resources, "_warned", False)
    with pytest.warns(RuntimeWarning, match="spawn"):
        assert _resources.resolve_threads(4, 4) == 1
    assert _resources.resolve_threads(None, 1) == 1


def test_forked_child_after_a_parallel_gp_solve_finishes():
    """GNU OpenMP's pool does not survive fork(): a child forked after a
    parallel GP solve used to hang in its first parallel loop.  It now runs
    single-threaded, with the same iterates, and finishes."""
    script = textwrap.dedent("""
        import multiprocessing as mp, warnings
        import numpy as np
        import bcd

        def fit(n_threads):
            X = np.random.default_rng(0).standard_normal((1200, 3))
            p = bcd.gp.GaussianProcess(X, np.sin(X[:, 0]), bcd.gp.SquaredExponential(1.0),
                                       0.1, n_threads=n_threads)
            return bcd.solve(p, rule="gbcd", blocks="variable", block_size=100,
                             update="exact", tol=1e-6, random_state=0).x

        if __name__ == "__main__":
            parent = fit(2)
            with mp.get_context("fork").Pool(1) as pool:
                child = pool.apply_async(fit, (2,)).get(timeout=120)
            print(bool(np.array_equal(child, parent)))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_overlapping_blas_limits_restore_the_original():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads_now():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]

    before = blas_threads_now()
    first = _resources.blas_threads(1)
    second = _resources.blas_threads(2)
    first.__enter__()
    second.__enter__()
    assert set(blas_threads_now()) <= {1}
    first.__exit__(None, None, None)         # the first out does not restore
    assert set(blas_threads_now()) <= {2}
    second.__exit__(None, None, None)        # the last out does
    assert blas_threads_now() == before
