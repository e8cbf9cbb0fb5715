"""The compiled elastic-net path (bcd.core.enetpath) of the cross-validated
estimators: its solutions against scikit-learn's enet_path and a dense
direct certificate (the duality gap recomputed here), in its three modes."""
import numpy as np
import pytest
import scipy.sparse as sp

from bcd.core.enetpath import EnetPath, LogisticPath

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import enet_path  # noqa: E402


def _data(n, d, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if sparse:
        X[rng.random((n, d)) < 0.6] = 0.0
    y = X[:, :4] @ np.array([2.0, -1.0, 0.5, 1.5]) + 0.1 * rng.standard_normal(n) + 3.0
    sw = rng.integers(0, 4, n).astype(float)
    sw *= n / sw.sum()
    return X, y, sw


def _gap(Xc, yc, sw, w, l1, l2, positive):
    """The elastic-net duality gap of the weighted problem, from scratch."""
    u = np.sqrt(sw)
    A, b = Xc * u[:, None], yc * u
    r = b - A @ w
    corr = A.T @ r - l2 * w
    drive = np.max(corr) if positive else np.max(np.abs(corr))
    const = min(1.0, l1 / drive) if drive > 0 else 1.0
    primal = 0.5 * r @ r + l1 * np.abs(w).sum() + 0.5 * l2 * w @ w
    dual = const * r @ b - 0.5 * const ** 2 * (r @ r + l2 * w @ w)
    return primal - dual


def _build(mode, X, yc, sw, x_mean, positive):
    if mode == "sparse":
        return EnetPath(sp.csc_matrix(X), yc, sample_weight=sw, x_mean=x_mean,
                        positive=positive)
    return EnetPath(X - x_mean, yc, sample_weight=sw, positive=positive,
                    precompute=mode == "gram")


@pytest.mark.parametrize("positive", [False, True], ids=["signed", "positive"])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.4])
@pytest.mark.parametrize("shape", [(60, 15), (20, 40)], ids=["tall", "wide"])
@pytest.mark.parametrize("mode", ["gram", "dense", "sparse"])
def test_path_matches_sklearn_and_certifies_its_gap(mode, shape, l1_ratio, positive):
    n, d = shape
    X, y, sw = _data(n, d, sparse=mode == "sparse")
    x_mean = sw @ X / sw.sum()
    yc = y - sw @ y / sw.sum()
    Xc = X - x_mean
    u = np.sqrt(sw)
    enet = _build(mode, X, yc, sw, x_mean, positive)
    assert enet.mode == mode
    drive = (Xc.T @ (sw * yc))
    lmax = (drive.max() if positive else np.abs(drive).max()) / n / l1_ratio
    alphas = np.geomspace(lmax, lmax * 1e-2, 8)
    # scikit-learn's path on the rows scaled by sqrt(sw): the same objective
    _, ref, _ = enet_path(Xc * u[:, None], yc * u, alphas=alphas, l1_ratio=l1_ratio,
                          tol=1e-12, max_iter=100000, positive=positive)
    gap_tol = 1e-12 * float(sw @ yc ** 2)
    for k, alpha in enumerate(alphas):
        l1, l2 = n * alpha * l1_ratio, n * alpha * (1 - l1_ratio)
        gap, passes, converged = enet.solve(l1, l2, gap_tol, 1e-10, 100000)
        w = enet.coef
        assert converged and gap <= gap_tol
        # the reported gap is the gap at the returned coefficients
        assert _gap(Xc, yc, sw, w, l1, l2, positive) == pytest.approx(gap, abs=1e-9 * n)
        np.testing.assert_allclose(w, ref[:, k], atol=1e-6)
        if positive:
            assert np.all(w >= 0)


def test_warm_start_and_max_passes():
    X, y, _ = _data(50, 10)
    yc, Xc = y - y.mean(), X - X.mean(axis=0)
    lam = 0.05 * np.abs(Xc.T @ yc).max()
    enet = EnetPath(Xc, yc)
    gap, passes, converged = enet.solve(lam, 0.0, 1e-30, 0.0, 3)
    assert passes == 3 and not converged and gap > 1e-30
    cold = EnetPath(Xc, yc)
    cold.solve(lam, 0.0, 1e-10, 1e-8, 10000)
    warm = EnetPath(Xc, yc)
    warm.set_coef(cold.coef)
    # started at the solution: the initial gap test stops it at once
    assert warm.solve(lam, 0.0, 1e-10, 1e-8, 10000)[1] == 0
    np.testing.assert_array_equal(warm.coef, cold.coef)


def test_bad_input():
    X, y, _ = _data(20, 5)
    with pytest.raises(ValueError, match="l1"):
        EnetPath(X, y).solve(0.0, 1.0, 1e-6, 1e-4, 10)
    with pytest.raises(ValueError, match="x_mean"):
        EnetPath(X, y, x_mean=np.zeros(5))


def test_caller_arrays_unchanged():
    X, y, sw = _data(30, 6, sparse=True)
    copies = [X.copy(), y.copy(), sw.copy()]
    Xs = sp.csr_matrix(X)
    data = Xs.data.copy()
    for enet in (EnetPath(X, y, sample_weight=sw), EnetPath(Xs, y, sample_weight=sw,
                                                             x_mean=X.mean(axis=0))):
        enet.solve(1.0, 0.5, 1e-10, 1e-6, 1000)
    for a, b in zip((X, y, sw), copies):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(Xs.data, data)


# --------------------------------------------------------------------------- logistic


def _logistic_data(sparse):
    rng = np.random.default_rng(3)
    n, d = 80, 12
    X = rng.standard_normal((n, d))
    if sparse:
        X[rng.random((n, d)) < 0.5] = 0.0
    y = (X[:, :3] @ np.array([1.5, -1.0, 0.5]) + 0.7 * rng.standard_normal(n) > 0).astype(float)
    A = np.c_[X, np.ones(n)]
    sw = rng.random(n) * 2.0
    return (sp.csc_matrix(A) if sparse else A), y, sw, np.r_[np.ones(d), 0.0]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("l1, l2", [(0.0, 1.0), (0.0, 0.05), (1.0, 0.0), (0.5, 0.5)])
def test_logistic_path_matches_sklearn_and_certifies(sparse, l1, l2):
    from sklearn.linear_model import LogisticRegression

    A, y, sw, pen = _logistic_data(sparse)
    path = LogisticPath(A, y, sample_weight=sw, penalized=pen)
    opt, steps, status = path.solve(l1, l2, 1e-9, 100)
    assert status == "converged" and opt <= 1e-9
    w = path.coef
    # the optimality measure, recomputed here: the gradient of the summed
    # loss plus the ridge, and its distance to the L1 subdifferential
    Ad = A.toarray() if sparse else A
    p = 1.0 / (1.0 + np.exp(-(Ad @ w)))
    grad = Ad.T @ (sw * (p - y)) + l2 * pen * w
    t = l1 * pen
    resid = np.where(w != 0, np.abs(grad + t * np.sign(w)), np.maximum(np.abs(grad) - t, 0.0))
    assert resid.max() <= 1e-9 * 1.01
    # scikit-learn's model with C = 1 / (l1 + l2) and l1_ratio = l1 / (l1 + l2)
    C, ratio = 1.0 / (l1 + l2), l1 / (l1 + l2)
    ref = LogisticRegression(C=C, l1_ratio=ratio, solver="saga" if l1 else "lbfgs", tol=1e-12,
                             max_iter=100000).fit(Ad[:, :-1], y, sample_weight=sw)
    # scikit-learn divides the loss by sum(sw) and the penalty by C sum(sw):
    # the same minimizer
    np.testing.assert_allclose(w[:-1], ref.coef_.ravel(), atol=2e-6)
    np.testing.assert_allclose(w[-1], ref.intercept_[0], atol=2e-6)


def test_logistic_path_tight_tolerance_and_warm_start():
    A, y, sw, pen = _logistic_data(False)
    path = LogisticPath(A, y, sample_weight=sw, penalized=pen)
    # near the optimum the decrease is below the rounding of the objective:
    # the full Newton steps still reach a measure far below it
    for l2 in np.geomspace(10.0, 1e-2, 5):
        opt, steps, status = path.solve(0.0, l2, 1e-11, 50)
        assert status == "converged" and steps < 50
    w = path.coef
    again = LogisticPath(A, y, sample_weight=sw, penalized=pen)
    again.set_coef(w)
    assert again.solve(0.0, 1e-2, 1e-11, 50)[1] == 0
    with pytest.raises(ValueError, match="entries"):
        again.set_coef(w[:-1])


def test_ctrl_c_interrupts_a_compiled_solve():
    # in a fresh interpreter, like the other Ctrl-C tests: in this process a
    # Dask cluster of an earlier test may have left a garbage-collection
    # callback, where a KeyboardInterrupt is printed and dropped
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os, signal, threading, time
        import numpy as np
        from bcd.core.enetpath import EnetPath
        signal.signal(signal.SIGINT, signal.default_int_handler)
        rng = np.random.default_rng(0)
        X = rng.standard_normal((300, 200))
        y = X[:, :4] @ np.array([2.0, -1.0, 0.5, 1.5]) + 0.1 * rng.standard_normal(300)
        enet = EnetPath(X, y - y.mean(), precompute=False)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.perf_counter()
        try:
            # a gap below zero is never reached: only Ctrl-C ends it
            enet.solve(1e-3, 0.0, -1.0, 0.0, 10 ** 12)
            print("returned")
        except KeyboardInterrupt:
            print("interrupted", time.perf_counter() - start)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    outcome, *elapsed = out.stdout.split()
    assert outcome == "interrupted", out.stdout
    assert float(elapsed[0]) < 5.0
