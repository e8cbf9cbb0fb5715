"""Compare bcd with reference implementations and print a table of ratios.

Usage, from the repository root with bcd installed::

    python -m asv_benches.compare            # 7 repeats per measurement
    python -m asv_benches.compare --quick    # 3 repeats

Everything runs in one process; each figure is the median over the
repeats.  bcd's iteration times are ``Result.iteration_time`` (seconds spent in
the iterations proper) divided by the number of iterations, with the stopping test
disabled (``tol=0``, ``check_every=10**9``).

a. Cyclic single-coordinate epochs on dataset A (least squares, sparse
   1000 x 10000) against scikit-learn's coordinate descent for Lasso with a
   negligible penalty.  scikit-learn's time per epoch is the difference of
   a ``2E``-epoch and an ``E``-epoch fit divided by ``E``, which removes its
   fixed set-up cost.  Target: bcd / scikit-learn <= 1.

b. Gauss-Southwell with variable blocks of 5 coordinates (GS-VB) against a
   plain NumPy/SciPy loop doing the same iterations (full gradient through
   a CSR copy of A^T, ``argpartition``, column slicing, ``eigvalsh`` of the
   5 x 5 Gram matrix, residual update).  Both must produce the same
   iterates; the script stops with an AssertionError (naming the first
   iteration that differs) if they do not.  Matrices: (i) a very sparse
   20000 x 20000 matrix with 10 non-zeros per column, target NumPy / bcd
   >= 20, plus GS-VB / Random-VB time per iteration <= 10 on the same
   matrix; (ii) dataset A, target NumPy / bcd >= 3.

c. Fixed cost of ``bcd.solve`` on a 10 x 5 dense problem with
   ``max_iter=1`` (wall time of the call).  Target <= 1 ms.

A missed target is reported as MISS; the exit code is 0 regardless.

Every algorithm compared here is single-threaded, so BLAS is limited to
one thread before NumPy is imported: idle OpenBLAS workers spin after each
BLAS call, and on a two-core machine they would steal time from whichever
single-threaded loop is timed next.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402

_REPO_ROOT = Path(__file__).resolve().parent.parent


def _import_installed_bcd():
    """Import bcd from the installed build, not from the source tree.

    ``python -m`` puts the working directory first on ``sys.path``; from the
    repository root that would shadow the installed package with the
    uncompiled sources.
    """
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _REPO_ROOT]
    try:
        import bcd
    finally:
        sys.path[:] = saved
    return bcd


bcd = _import_installed_bcd()

NO_CHECKS = 10**9
TAU = 5


# --------------------------------------------------------------------------- helpers

def _median(values):
    return float(np.median(np.asarray(values, dtype=float)))


def _fmt_time(seconds):
    if seconds >= 1.0:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} us"
    return f"{seconds * 1e9:.3g} ns"


class Row:
    def __init__(self, label, bcd_value, reference, value, target, passed, note=""):
        self.label = label
        self.bcd_value = bcd_value
        self.reference = reference
        self.value = value
        self.target = target
        self.passed = passed
        self.note = note


def _solve(problem, **options):
    options.setdefault("tol", 0.0)
    options.setdefault("check_every", NO_CHECKS)
    return bcd.solve(problem, **options)


# --------------------------------------------------------------------------- data

def sparse_square(n=20000, nnz_per_column=10, seed=0):
    """``n x n`` CSC matrix with exactly ``nnz_per_column`` standard normal
    entries per column in distinct random rows, and a standard normal ``b``."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.choice(n, nnz_per_column, replace=False) for _ in range(n)])
    cols = np.repeat(np.arange(n), nnz_per_column)
    vals = rng.standard_normal(n * nnz_per_column)
    A = sp.csc_matrix((vals, (rows, cols)), shape=(n, n))
    b = rng.standard_normal(n)
    return A, b


# --------------------------------------------------------------------------- a. cyclic vs sklearn

def _lasso_fit_seconds(A, b, epochs):
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
    from sklearn.linear_model import Lasso

    model = Lasso(alpha=1e-10, fit_intercept=False, tol=0.0, max_iter=epochs,
                  selection="cyclic")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        start = time.perf_counter()
        model.fit(A, b)
        elapsed = time.perf_counter() - start
    return elapsed, int(model.n_iter_)


def compare_cyclic_sklearn(A, b, repeats, epochs=20):
    n = A.shape[1]
    problem = bcd.LeastSquares(A, b)
    options = dict(rule="cyclic", blocks="fixed", partition="order", block_size=1)
    _solve(problem, max_iter=n, **options)          # warm-up
    _lasso_fit_seconds(A, b, 1)
    bcd_epoch, sk_epoch, sk_epochs_done = [], [], set()
    for _ in range(repeats):
        result = _solve(problem, max_iter=epochs * n, **options)
        bcd_epoch.append(result.iteration_time / epochs)
        t1, done1 = _lasso_fit_seconds(A, b, epochs)
        t2, done2 = _lasso_fit_seconds(A, b, 2 * epochs)
        sk_epoch.append((t2 - t1) / epochs)
        sk_epochs_done.update([(epochs, done1), (2 * epochs, done2)])
    note = f"E={epochs} epochs of {n} coordinates"
    if any(asked != done for asked, done in sk_epochs_done):
        note += "; scikit-learn stopped early, its epoch time is unreliable"
    ours, theirs = _median(bcd_epoch), _median(sk_epoch)
    ratio = ours / theirs
    return Row("a. cyclic epoch on A: bcd / sklearn Lasso CD", _fmt_time(ours),
               _fmt_time(theirs), f"{ratio:.2f}x", "<= 1.0x", ratio <= 1.0, note)


# --------------------------------------------------------------------------- b. GS-VB vs NumPy

def numpy_gs_vb(A, b, n_iter, tau=TAU):
    """Gauss-Southwell with variable blocks for 1/2 ||Ax - b||^2 from x = 0.

    Each iteration computes the full gradient, takes the ``tau`` coordinates
    with the largest ``|g_i|`` (never one with an all-zero column), and
    steps ``x_b -= g_b / L_b`` with ``L_b`` the largest eigenvalue of
    ``A_b^T A_b``.  Returns ``x``, seconds per iteration, and the blocks and
    steps of every iteration (to locate a divergence from bcd).
    """
    A = sp.csc_matrix(A)
    At = A.T.tocsr()
    n = A.shape[1]
    empty = np.flatnonzero(np.diff(A.indptr) == 0)
    x = np.zeros(n)
    r = -np.asarray(b, dtype=float)
    blocks = np.empty((n_iter, tau), dtype=np.intp)
    steps = np.empty((n_iter, tau))
    start = time.perf_counter()
    for k in range(n_iter):
        g = At @ r
        score = np.abs(g)
        if empty.size:
            score[empty] = -1.0
        blk = np.argpartition(score, n - tau)[n - tau:]
        blk.sort()
        Ab = A[:, blk]
        L = np.linalg.eigvalsh((Ab.T @ Ab).toarray())[-1]
        d = g[blk] / -L
        x[blk] += d
        r += Ab @ d
        blocks[k] = blk
        steps[k] = d
    elapsed = time.perf_counter() - start
    return x, elapsed / n_iter, blocks, steps


def _same(x, x_ref):
    scale = float(np.max(np.abs(x_ref))) if x_ref.size else 0.0
    return np.allclose(x, x_ref, rtol=1e-9, atol=1e-9 * max(scale, 1e-300))


def _check_iterates(problem, x_bcd, x_ref, blocks, steps, name):
    """Raise an AssertionError locating the first iteration where bcd's
    GS-VB iterates leave those of the NumPy loop."""
    if _same(x_bcd, x_ref):
        return
    n_iter = len(blocks)

    def reference_at(k):
        x = np.zeros(problem.n_features)
        np.add.at(x, blocks[:k].ravel(), steps[:k].ravel())
        return x

    def bcd_at(k):
        return _solve(problem, rule="gs", blocks="variable", block_size=TAU, max_iter=k).x

    lo, hi = 0, n_iter          # iterates agree after lo steps, differ after hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _same(bcd_at(mid), reference_at(mid)):
            lo = mid
        else:
            hi = mid
    moved = np.flatnonzero(bcd_at(hi) != bcd_at(hi - 1))
    diff = np.abs(x_bcd - x_ref)
    raise AssertionError(
        f"GS-VB iterates of bcd differ from the NumPy loop on {name}: after {n_iter} "
        f"iterations max |x_bcd - x_numpy| = {diff.max():.3e} (max |x_numpy| = "
        f"{np.abs(x_ref).max():.3e}). First differing iteration: {hi} (1-based); NumPy "
        f"updated block {blocks[hi - 1].tolist()}, bcd changed coordinates {moved.tolist()}.")


def compare_gs_numpy(A, b, name, repeats, n_iter, target):
    problem = bcd.LeastSquares(A, b)
    options = dict(rule="gs", blocks="variable", block_size=TAU)
    _solve(problem, max_iter=10, **options)         # warm-up
    numpy_gs_vb(A, b, 2)
    ours, theirs = [], []
    for _ in range(repeats):
        x_ref, per_iter, blocks, steps = numpy_gs_vb(A, b, n_iter)
        theirs.append(per_iter)
        result = _solve(problem, max_iter=n_iter, **options)
        ours.append(result.iteration_time / result.n_iter)
        _check_iterates(problem, result.x, x_ref, blocks, steps, name)
    mine, ref = _median(ours), _median(theirs)
    ratio = ref / mine
    return Row(f"b. GS-VB on {name}: NumPy / bcd", _fmt_time(mine), _fmt_time(ref),
               f"{ratio:.1f}x", f">= {target:g}x", ratio >= target,
               f"{n_iter} iterations, iterates identical")


def compare_gs_random(A, b, name, repeats, n_iter=20000, target=10.0):
    problem = bcd.LeastSquares(A, b)
    _solve(problem, rule="random", blocks="variable", block_size=TAU, max_iter=10)
    gs, rnd = [], []
    for seed in range(repeats):
        r = _solve(problem, rule="gs", blocks="variable", block_size=TAU, max_iter=n_iter)
        gs.append(r.iteration_time / r.n_iter)
        r = _solve(problem, rule="random", blocks="variable", block_size=TAU, max_iter=n_iter,
                   random_state=seed)
        rnd.append(r.iteration_time / r.n_iter)
    g, q = _median(gs), _median(rnd)
    ratio = g / q
    return Row(f"b. per iteration on {name}: GS-VB / Random-VB", _fmt_time(g), _fmt_time(q),
               f"{ratio:.1f}x", f"<= {target:g}x", ratio <= target,
               f"{n_iter} iterations each")


# --------------------------------------------------------------------------- c. overhead

def compare_overhead(repeats, calls=200, warmup=20, target=1e-3):
    rng = np.random.default_rng(0)
    A = np.asfortranarray(rng.standard_normal((10, 5)))
    b = rng.standard_normal(10)
    problem = bcd.LeastSquares(A, b)
    medians = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        for _ in range(warmup):
            bcd.solve(problem, max_iter=1)
        for _ in range(repeats):
            times = np.empty(calls)
            for i in range(calls):
                start = time.perf_counter()
                bcd.solve(problem, max_iter=1)
                times[i] = time.perf_counter() - start
            medians.append(np.median(times))
    value = _median(medians)
    return Row("c. bcd.solve on 10 x 5, max_iter=1", _fmt_time(value), "-", _fmt_time(value),
               f"<= {_fmt_time(target)}", value <= target, f"median of {calls} calls")


# --------------------------------------------------------------------------- report

def _machine_info():
    try:
        import sklearn
        sklearn_version = sklearn.__version__
    except ImportError:
        sklearn_version = "not installed"
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    cpu = platform.processor() or platform.machine()
    return [
        f"bcd {bcd.__version__} ({Path(bcd.__file__).parent})",
        f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn_version}",
        f"{platform.platform()}, {cpu}, {os.cpu_count()} CPUs ({usable} usable)",
    ]


def _print_table(rows):
    header = ("measurement", "bcd", "reference", "ratio/value", "target", "result")
    cells = [header] + [(r.label, r.bcd_value, r.reference, r.value, r.target,
                         "PASS" if r.passed else "MISS") for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    for i, c in enumerate(cells):
        print("  ".join(s.ljust(w) if j == 0 else s.rjust(w)
                        for j, (s, w) in enumerate(zip(c, widths))))
        if i == 0:
            print(line)
    print()
    for r in rows:
        if r.note:
            print(f"  {r.label}: {r.note}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m asv_benches.compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7

    warnings.simplefilter("ignore", bcd.ConvergenceWarning)
    for line in _machine_info():
        print(line)
    print(f"{repeats} repeats, medians\n", flush=True)

    rows = []
    A, b = bcd.datasets.make_paper_dataset("A", random_state=1)
    A_sparse, b_sparse = sparse_square()

    steps = [
        ("a. cyclic epochs vs scikit-learn", lambda: compare_cyclic_sklearn(A, b, repeats)),
        ("b. GS-VB vs NumPy, sparse 20000 x 20000",
         lambda: compare_gs_numpy(A_sparse, b_sparse, "sparse 20000^2", repeats, 300, 20.0)),
        ("b. GS-VB vs Random-VB, sparse 20000 x 20000",
         lambda: compare_gs_random(A_sparse, b_sparse, "sparse 20000^2", repeats)),
        ("b. GS-VB vs NumPy, dataset A",
         lambda: compare_gs_numpy(A, b, "A", repeats, 300, 3.0)),
        ("c. solve overhead", lambda: compare_overhead(repeats)),
    ]
    for title, run in steps:
        print(f"running {title} ...", flush=True)
        rows.append(run())
    print()
    _print_table(rows)
    missed = [r.label for r in rows if not r.passed]
    print()
    print(f"{len(rows) - len(missed)}/{len(rows)} targets met" +
          (f"; MISS: {', '.join(missed)}" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
