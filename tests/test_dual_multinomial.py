"""Dual coordinate ascent for multinomial logistic regression
(``Multinomial._solve_dual`` and its compiled solver)."""
import numpy as np
import pytest
import scipy.sparse as sp

import bcd
import bcd.problems._dual_multinomial as dual

from _data import lbfgs_reference, multinomial_data

ORDERS = ["random", "cyclic", "greedy"]


def weights(m, seed=0, zeros=True):
    w = np.random.RandomState(seed).uniform(0.2, 3.0, m)
    if zeros:
        w[::7] = 0.0
    return w


def dual_objective(problem, P):
    """D(P) = -sum_i s_i sum_k p_ik log p_ik - 1/2 sum_jk (A' U)_jk^2 / r_jk, in NumPy."""
    s = np.ones(problem.n_samples) if problem.sample_weight is None else problem.sample_weight
    U = s[:, None] * (np.eye(problem.n_classes)[problem.y] - P)
    V = np.asarray(problem.A.T @ U).ravel()
    r = np.broadcast_to(problem.l2, V.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(P > 0, P * np.log(P), 0.0)
    return -np.sum(s[:, None] * ent) - 0.5 * np.sum(V * V / r)


@pytest.fixture(params=["dense", "sparse"])
def sparse(request):
    return request.param == "sparse"


@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_the_primal_reference(sparse, weighted, k):
    A, y = multinomial_data(m=60, d=8, k=k, seed=k, sparse=sparse)
    s = weights(60) if weighted else None
    problem = bcd.Multinomial(A, y, l2=0.7, sample_weight=s)
    x_ref, f_ref = lbfgs_reference(problem)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-9, random_state=0)
    assert status == "converged" and 0 < n_epochs < 1000
    assert opt <= 1e-9
    # the reported optimality is the gradient of f at the returned x
    assert np.max(np.abs(problem.gradient(x))) == pytest.approx(opt, rel=1e-6, abs=1e-12)
    f = problem.smooth_objective(x)
    assert f == pytest.approx(f_ref, rel=1e-8)
    # the gap certifies: 0 <= f(x) - min f <= f(x) - D(P) = gap, small
    assert 0.0 <= gap <= 1e-10 * max(1.0, abs(f))
    assert f - dual_objective(problem, P) == pytest.approx(gap, abs=1e-9 * abs(f))
    np.testing.assert_allclose(x, x_ref, rtol=1e-5, atol=1e-6)
    # P is the softmax of the scores at the optimum, rows on the simplex
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    S = np.asarray(problem.A @ problem.coef(x))
    Q = np.exp(S - S.max(axis=1, keepdims=True))
    Q /= Q.sum(axis=1, keepdims=True)
    active = slice(None) if s is None else s > 0
    np.testing.assert_allclose(P[active], Q[active], atol=1e-8)


@pytest.mark.parametrize("rule", ORDERS)
def test_every_order_reaches_the_same_optimum(sparse, rule):
    A, y = multinomial_data(m=50, d=10, k=4, seed=7, sparse=sparse)
    problem = bcd.Multinomial(A, y, l2=0.3, sample_weight=weights(50, seed=1))
    x_ref, f_ref = lbfgs_reference(problem)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-9, rule=rule, random_state=3)
    assert status == "converged" and opt <= 1e-9
    assert problem.smooth_objective(x) == pytest.approx(f_ref, rel=1e-9)
    np.testing.assert_allclose(x, x_ref, rtol=1e-5, atol=1e-6)


def test_matches_scikit_learn():
    linear_model = pytest.importorskip("sklearn.linear_model")
    A, y = multinomial_data(m=120, d=10, k=3, seed=4, sparse=False)
    l2 = 2.0
    problem = bcd.Multinomial(A, y, l2=l2)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-9, random_state=0)
    # scikit-learn minimizes C * sum(loss) + ||W||^2 / 2: C = 1 / l2 is the same problem
    clf = linear_model.LogisticRegression(C=1.0 / l2, fit_intercept=False, tol=1e-12,
                                          max_iter=100000).fit(A, y)
    f_sklearn = problem.objective(clf.coef_.T)
    assert status == "converged"
    assert problem.smooth_objective(x) <= f_sklearn + 1e-9 * abs(f_sklearn)
    assert problem.smooth_objective(x) == pytest.approx(f_sklearn, rel=1e-7)
    np.testing.assert_allclose(problem.coef(x), clf.coef_.T, rtol=1e-4, atol=1e-5)


def test_per_coordinate_ridge_weights():
    A, y = multinomial_data(m=40, d=6, k=3, seed=2)
    l2 = np.random.RandomState(0).uniform(0.1, 5.0, 6 * 3)       # differs across classes
    problem = bcd.Multinomial(A, y, l2=l2)
    x_ref, f_ref = lbfgs_reference(problem)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-9, random_state=0)
    assert status == "converged" and opt <= 1e-9
    assert problem.smooth_objective(x) == pytest.approx(f_ref, rel=1e-9)
    assert 0.0 <= gap <= 1e-10


def test_zero_weight_samples_drop_out():
    A, y = multinomial_data(m=50, d=6, k=3, seed=5)
    s = weights(50, zeros=True)
    keep = s > 0
    full = bcd.Multinomial(A, y, l2=1.0, sample_weight=s)
    sub = bcd.Multinomial(A[keep], y[keep], l2=1.0, sample_weight=s[keep])
    assert sub.n_classes == full.n_classes
    x1 = full._solve_dual(tol=1e-10, rule="cyclic")[0]
    x2 = sub._solve_dual(tol=1e-10, rule="cyclic")[0]
    np.testing.assert_allclose(x1, x2, rtol=1e-7, atol=1e-9)


def test_warm_start_from_the_solution():
    A, y = multinomial_data(m=40, d=6, k=3, seed=6)
    problem = bcd.Multinomial(A, y, l2=1.0)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-10, random_state=0)
    x2, P2, n2, status2, opt2, gap2 = problem._solve_dual(tol=1e-10, p0=P)
    assert status2 == "converged" and n2 == 0 and opt2 <= 1e-10
    np.testing.assert_allclose(x2, x, rtol=1e-8, atol=1e-10)
    # from a nearby point
    P3 = 0.9 * P + 0.1 / 3
    x3, P3, n3, status3, opt3, gap3 = problem._solve_dual(tol=1e-10, p0=P3)
    assert status3 == "converged" and n3 >= 1
    np.testing.assert_allclose(x3, x, rtol=1e-7, atol=1e-9)


def test_reproducible_and_seeded():
    A, y = multinomial_data(m=40, d=6, k=3, seed=6)
    problem = bcd.Multinomial(A, y, l2=1.0)
    a = problem._solve_dual(tol=1e-8, random_state=5)
    b = problem._solve_dual(tol=1e-8, random_state=5)
    assert a[2] == b[2]
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_max_iter_and_max_time():
    A, y = multinomial_data(m=40, d=6, k=3, seed=6)
    problem = bcd.Multinomial(A, y, l2=0.01)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-14, max_iter=2)
    assert status == "max_iter" and n_epochs == 2
    # the reported optimality and gap are those of the returned point
    assert np.max(np.abs(problem.gradient(x))) == pytest.approx(opt, rel=1e-6)
    assert gap == pytest.approx(problem.smooth_objective(x) - dual_objective(problem, P),
                                rel=1e-6)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=0.0, max_iter=10**9,
                                                          max_time=0.05)
    assert status == "max_time"
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-6, max_iter=0)
    assert n_epochs == 0 and status == "max_iter"


def test_bad_ridge_and_penalty_raise():
    A, y = multinomial_data(m=30, d=5, k=3, seed=1)
    with pytest.raises(ValueError, match="l2 > 0 on every coordinate"):
        bcd.Multinomial(A, y, l2=0.0)._solve_dual()
    l2 = np.ones(15)
    l2[4] = 0.0
    with pytest.raises(ValueError, match="l2 > 0 on every coordinate"):
        bcd.Multinomial(A, y, l2=l2)._solve_dual()
    with pytest.raises(ValueError, match="penalty"):
        bcd.Multinomial(A, y, l2=1.0, penalty=bcd.L1(0.1))._solve_dual()
    with pytest.raises(ValueError, match="rule"):
        bcd.Multinomial(A, y, l2=1.0)._solve_dual(rule="gs")
    with pytest.raises(ValueError, match="P0"):
        bcd.Multinomial(A, y, l2=1.0)._solve_dual(p0=np.ones((3, 3)))


def test_empty_rows_and_large_scores():
    # separable data with a weak ridge (probabilities down to 1e-36, scores
    # in the thousands on the way), and an all-zero row, whose p stays the
    # softmax of 0 (uniform)
    rs = np.random.RandomState(3)
    A = rs.randn(30, 40) * 1000.0
    A[5] = 0.0
    y = rs.randint(0, 4, 30)
    problem = bcd.Multinomial(A, y, l2=1e-6)
    x, P, n_epochs, status, opt, gap = problem._solve_dual(tol=1e-8, random_state=0)
    assert status == "converged"
    assert np.all(np.isfinite(x)) and np.all(P > 0)
    np.testing.assert_allclose(P[5], 0.25, rtol=1e-12)
    x_ref, f_ref = lbfgs_reference(problem)
    f = problem.smooth_objective(x)
    assert f_ref - 1e-12 <= f + 1e-12 and f <= f_ref + gap + 1e-12


@pytest.mark.parametrize("isa", dual.available_isas())
def test_instruction_set_paths_agree(isa):
    A, y = multinomial_data(m=40, d=9, k=5, seed=8)
    problem = bcd.Multinomial(A, y, l2=0.5)
    before = dual._ISA
    try:
        dual._select_isa("generic")
        ref = problem._solve_dual(tol=1e-10, rule="cyclic")
        dual._select_isa(isa)
        out = problem._solve_dual(tol=1e-10, rule="cyclic")
    finally:
        dual._select_isa(before)
    assert out[3] == "converged"
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-8, atol=1e-10)


def test_incremental_updates_do_not_drift():
    A, y = multinomial_data(m=60, d=8, k=4, seed=9)
    A = sp.csr_matrix(A)
    out = dual.multinomial_dual(A.indptr, A.indices, A.data, y.astype(np.int32), 4, None,
                                np.full(32, 0.05), None, 0.0, 300, order="cyclic")
    assert out["status"] == "max_iter" and out["n_epochs"] == 300
    assert out["drift"] <= 1e-13 * np.max(np.abs(out["W"]))
    assert out["n_fallbacks"] == 0


def test_raw_solver_checks_its_inputs():
    A = sp.csr_matrix(np.eye(3))
    args = [A.indptr, A.indices, A.data, np.array([0, 1, 2], np.int32), 3, None, np.ones(9),
            None, 1e-6, 10]
    out = dual.multinomial_dual(*args)
    assert set(out) >= {"W", "P", "n_epochs", "status", "optimality", "duality_gap"}
    assert out["status"] == "converged"
    bad = list(args)
    bad[3] = np.array([0, 1, 3], np.int32)
    with pytest.raises(ValueError, match="labels"):
        dual.multinomial_dual(*bad)
    bad = list(args)
    bad[6] = np.ones(8)
    with pytest.raises(ValueError, match="ridge"):
        dual.multinomial_dual(*bad)
    with pytest.raises(ValueError, match="order"):
        dual.multinomial_dual(*args, order="greedy-ish")
    B = sp.csr_matrix(np.ones((2, 3)))
    B.indices[:] = [0, 0, 1, 0, 1, 2]            # a duplicate in row 0
    with pytest.raises(ValueError, match="canonical"):
        dual.multinomial_dual(B.indptr, B.indices, B.data, np.array([0, 1], np.int32), 2,
                              None, np.ones(6), None, 1e-6, 10)


@pytest.mark.parametrize("K", [2, 3, 17])
def test_subproblem_solvers_agree_on_extreme_inputs(K):
    # z and b over many orders of magnitude, some b = 0, tiny p_old entries:
    # the Newton solver and the fallback reach the same point, which
    # satisfies the optimality conditions up to rounding
    rs = np.random.RandomState(K)
    n_fail = 0
    for trial in range(300):
        z = rs.randn(K) * 10 ** rs.uniform(-2, 5)
        b = np.full(K, 10 ** rs.uniform(-6, 7))
        if trial % 5 == 0:
            b[rs.rand(K) < 0.5] = 0.0
        p_old = rs.dirichlet(np.full(K, 0.3))
        if not np.all(np.isfinite(p_old)):
            p_old = np.full(K, 1.0 / K)
        out = dual._subproblem(z, b, p_old)
        ref = dual._subproblem(z, b, p_old, "nested")
        np.testing.assert_allclose(ref[0].sum(), 1.0, atol=1e-14)
        if out is None:
            n_fail += 1
            continue
        p, t, it = out
        assert np.all(p > 0) and np.all(t <= 0)
        np.testing.assert_allclose(p.sum(), 1.0, atol=1e-14)
        scale = 1.0 + np.max(np.abs(z)) + np.max(b)
        np.testing.assert_allclose(p, ref[0], rtol=0, atol=1e-13 * scale)
    assert n_fail <= 3
