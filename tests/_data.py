"""Small seeded problems and helpers shared by the tests."""
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.optimize
import scipy.sparse as sp

import bcd

# the rules and block strategies every problem supports
RULES = ["cyclic", "random", "lipschitz", "gs"]
BLOCKS = ["fixed", "variable"]
# the greedy rules and the updates of smooth problems
GREEDY = ["gs", "gsl", "gsd", "gsq"]
UPDATES = ["gradient", "linesearch", "matrix", "newton", "lbfgs"]

# the size of dense_problem and sparse_problem
N_SAMPLES, N_FEATURES = 30, 12


# ------------------------------------------------------------------ problems

def random_problem(m, n, density=0.3, seed=0, sparse=True):
    """A seeded random least-squares system with varied column scales."""
    rs = np.random.RandomState(seed)
    A = sp.random(m, n, density=density, random_state=rs, format="csc")
    A.data = rs.randn(A.nnz)
    A = A @ sp.diags(rs.uniform(0.2, 5.0, n))
    A = sp.csc_matrix(A)
    b = rs.randn(m)
    return (A if sparse else A.toarray()), b


def logistic_data(m=60, n=15, seed=1, sparse=True):
    """A random_problem matrix with labels in {-1, +1} from a noisy linear model."""
    A, _ = random_problem(m, n, density=0.4, seed=seed, sparse=sparse)
    rs = np.random.RandomState(seed + 100)
    w = rs.randn(n)
    y = np.sign(A @ w + 0.5 * rs.randn(m))
    y[y == 0] = 1
    return A, y


def multinomial_data(m=80, d=12, k=4, seed=1, sparse=True):
    """A random_problem matrix with labels in 0, ..., k - 1 from a noisy linear model."""
    A, _ = random_problem(m, d, density=0.5, seed=seed, sparse=sparse)
    rs = np.random.RandomState(seed)
    y = np.argmax(A @ rs.randn(d, k) + rs.randn(m, k), axis=1)
    return A, y


def dense_problem(m=N_SAMPLES, n=N_FEATURES, seed=0):
    """A seeded, well-conditioned dense least-squares system (C-ordered)."""
    rs = np.random.RandomState(seed)
    A = rs.randn(m, n)
    b = rs.randn(m)
    return A, b


def sparse_problem(m=N_SAMPLES, n=N_FEATURES, seed=0, density=0.5):
    """A seeded sparse (CSC) least-squares system of full column rank."""
    rs = np.random.RandomState(seed)
    A = sp.random(m, n, density=density, random_state=rs, format="csc")
    A.data = rs.randn(A.nnz)
    # every column gets at least one entry so the system has full column rank
    A = sp.csc_matrix(A + sp.eye(m, n, format="csc"))
    b = rs.randn(m)
    return A, b


def labels(m=N_SAMPLES, seed=0):
    """Labels in {-1, +1} with both classes present."""
    rs = np.random.RandomState(seed + 10)
    y = np.where(rs.rand(m) < 0.5, -1.0, 1.0)
    y[0], y[1] = -1.0, 1.0
    return y


def small(name, seed=1):
    """A small version of the paper's dataset A, B or C as its problem."""
    if name == "C":
        A, t = bcd.datasets.make_paper_dataset("C", random_state=seed, n_samples=200,
                                               n_features=200, n_classes=10)
        return bcd.Multinomial(A, t)
    A, t = bcd.datasets.make_paper_dataset(name, random_state=seed, n_samples=200,
                                           n_features=2000)
    return bcd.LeastSquares(A, t) if name == "A" else bcd.Logistic(A, t)


# ------------------------------------------------------------------ solving

def final(problem, max_iter=300, **options):
    """The objective after max_iter iterations (no stopping on tol)."""
    return bcd.solve(problem, max_iter=max_iter, tol=0.0, random_state=0, **options).objective


def quiet_solve(*args, **kwargs):
    """bcd.solve as called, without the ConvergenceWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        return bcd.solve(*args, **kwargs)


def solve_quietly(problem, **kwargs):
    """bcd.solve with a tight default tol and without the ConvergenceWarning."""
    kwargs.setdefault("tol", 1e-10)
    kwargs.setdefault("max_iter", 100000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        return bcd.solve(problem, **kwargs)


def ls_solution(A, b, l2=0.0, **kwargs):
    """The solution x of a least-squares problem, solved quietly."""
    return solve_quietly(bcd.LeastSquares(A, b, l2=l2), **kwargs).x


def lbfgs_reference(problem):
    """A tight L-BFGS-B solve of a problem's objective: (x, f)."""
    res = scipy.optimize.minimize(problem.objective, np.zeros(problem.n_coordinates),
                                  jac=problem.gradient, method="L-BFGS-B",
                                  options=dict(gtol=1e-13, ftol=1e-16, maxiter=50000,
                                               maxcor=30))
    return res.x, res.fun


# ------------------------------------------------------------------ arrays

def relative_error(x, ref):
    """max |x - ref| relative to max |ref|."""
    return np.max(np.abs(x - ref)) / np.max(np.abs(ref))


def with_value(arr, index, value):
    """A float64 copy of arr with arr[index] = value."""
    out = np.array(arr, dtype=np.float64)
    out[index] = value
    return out


def assemble_parts(problem, rule, blocks, block_size, update, order=None, rng=None, x0=None,
                   options=None):
    """``(state, units, selector, assembly)`` of a configuration, by
    :func:`bcd.core.assemble`; ``order`` is the partition of fixed blocks or
    the vertex order of forest partitions (ignored by other strategies)."""
    import bcd
    options = dict(options or {})
    if order is not None and blocks == "fixed":
        options["partition"] = order
    elif order is not None and blocks in ("forest_partition", "coloring"):
        options["vertex_order"] = order
    if x0 is not None:
        x0 = np.ascontiguousarray(x0, dtype=np.float64)
    parts = bcd.core.assemble(problem, rule, blocks, update, block_size, rng, x0, **options)
    return parts.state, parts.units, parts.selector, parts


def penalized_reference(problem):
    """min f + g by L-BFGS-B for g none, L1 (split x = u - v, u, v >= 0; v = 0
    with ``positive``) or a box (bounds): the optimal value."""
    n = problem.n_coordinates
    pen = problem.penalty
    f, grad = problem.smooth_objective, problem.gradient
    opts = dict(gtol=1e-12, ftol=1e-16, maxiter=100000, maxcor=30)
    if pen is None or isinstance(pen, bcd.Box):
        bounds = None if pen is None else list(zip(np.broadcast_to(pen.lower, n),
                                                   np.broadcast_to(pen.upper, n)))
        return scipy.optimize.minimize(f, np.zeros(n), jac=grad, method="L-BFGS-B",
                                       bounds=bounds, options=opts).fun
    lam = np.broadcast_to(pen.lam, n)

    def split(uv):
        return f(uv[:n] - uv[n:]) + lam @ (uv[:n] + uv[n:])

    def split_grad(uv):
        g = grad(uv[:n] - uv[n:])
        return np.concatenate([g + lam, -g + lam])

    bounds = [(0, None)] * n + [(0, 0 if pen.positive else None)] * n
    return scipy.optimize.minimize(split, np.zeros(2 * n), jac=split_grad, method="L-BFGS-B",
                                   bounds=bounds, options=opts).fun


def interrupt_child(script, case, wait, timeout):
    """Run ``python -c script case``; once it prints "started", wait
    ``wait`` s and send SIGINT.  Returns ``(stdout, seconds from the signal
    to the child's exit)``; fails the test when the child does not start,
    ends before the signal, outlives ``timeout`` s after it or exits with an
    error."""
    import pytest

    proc = subprocess.Popen([sys.executable, "-c", script, case],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()            # import and set-up (may rebuild bcd)
        if line.strip() != "started":
            proc.wait(timeout=60)
            pytest.fail(f"the child did not start: {line!r}\n{proc.stderr.read()[-3000:]}")
        time.sleep(wait)
        assert proc.poll() is None, "the call ended before SIGINT: make it longer"
        proc.send_signal(signal.SIGINT)
        sent = time.time()
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"still running {timeout} s after SIGINT; stderr: {err[-3000:]}")
        exited = time.time()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, f"exit code {proc.returncode} after SIGINT:\n{err[-3000:]}"
    return out, sent, exited
