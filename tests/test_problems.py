"""The problem classes LeastSquares, Logistic, Multinomial, Quadratic and
LabelPropagation: objectives, gradients and Lipschitz constants against NumPy,
solutions against SciPy and scikit-learn, dense and sparse data, float32 and
float64, memory layouts, the guarantee that the caller's data is never
modified, the registry of problem classes and rejected input."""
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bcd

from _data import (BLOCKS, GREEDY, N_FEATURES, N_SAMPLES, RULES, UPDATES, dense_problem,
                   labels, lbfgs_reference, logistic_data, ls_solution, multinomial_data,
                   penalized_reference, random_problem, relative_error, solve_quietly,
                   sparse_problem, with_value)


# ---------------------------------------- least squares and logistic regression

@pytest.mark.parametrize("sparse", [False, True])
def test_least_squares_matches_lstsq(sparse):
    A, b = random_problem(80, 20, density=0.5, seed=3, sparse=sparse)
    problem = bcd.LeastSquares(A, b)
    r = bcd.solve(problem, rule="gs", blocks="variable", block_size=4, max_iter=200000,
                  tol=1e-10)
    dense = A.toarray() if sparse else A
    x_ref = np.linalg.lstsq(dense, b, rcond=None)[0]
    assert r.converged and r.status == "converged"
    assert r.optimality <= 1e-10
    np.testing.assert_allclose(r.x, x_ref, rtol=1e-7, atol=1e-9)
    assert r.objective == pytest.approx(problem.objective(x_ref), rel=1e-10)
    if sparse:
        x_lsqr = spla.lsqr(A, b, atol=1e-15, btol=1e-15, iter_lim=10000)[0]
        np.testing.assert_allclose(r.x, x_lsqr, rtol=1e-6, atol=1e-8)


def test_ridge_matches_normal_equations():
    # underdetermined, so only the l2 term makes the minimizer unique
    A, b = random_problem(20, 50, density=0.3, seed=4)
    l2 = 0.7
    r = bcd.solve(bcd.LeastSquares(A, b, l2=l2), rule="gs", blocks="fixed", block_size=5,
                  max_iter=200000, tol=1e-10)
    dense = A.toarray()
    x_ref = np.linalg.solve(dense.T @ dense + l2 * np.eye(50), dense.T @ b)
    assert r.converged
    np.testing.assert_allclose(r.x, x_ref, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("labels01", [False, True])
def test_logistic_matches_lbfgs(sparse, labels01):
    A, y = logistic_data(sparse=sparse)
    if labels01:
        y = (y > 0).astype(int)
    problem = bcd.Logistic(A, y, l2=0.5)
    x_ref, f_ref = lbfgs_reference(problem)
    r = bcd.solve(problem, rule="gs", blocks="variable", block_size=3, max_iter=200000,
                  tol=1e-8)
    assert r.converged
    assert r.optimality <= 1e-8
    assert r.objective == pytest.approx(f_ref, rel=1e-8)
    assert np.max(np.abs(problem.gradient(r.x))) <= 1e-8
    np.testing.assert_allclose(r.x, x_ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
@pytest.mark.parametrize("sparse", [False, True])
def test_block_lipschitz_is_largest_eigenvalue(kind, sparse):
    A, b = random_problem(25, 30, density=0.4, seed=5, sparse=sparse)
    l2 = 0.3
    if kind == "least_squares":
        problem, c = bcd.LeastSquares(A, b, l2=l2), 1.0
    else:
        problem, c = bcd.Logistic(A, np.where(b > 0, 1, -1), l2=l2), 0.25
    kernel = problem.compile(False, 7)
    rs = np.random.RandomState(0)
    blocks = [np.sort(rs.choice(30, size, replace=False)) for size in (1, 2, 5, 7, 7)]
    ptr = np.cumsum([0] + [len(blk) for blk in blocks]).astype(np.int32)
    coords = np.concatenate(blocks).astype(np.int32)
    got = kernel.blocks_lipschitz(ptr, coords)
    dense = A.toarray() if sparse else A
    for blk, value in zip(blocks, got):
        Ab = dense[:, blk]
        expected = np.linalg.eigvalsh(c * Ab.T @ Ab + l2 * np.eye(len(blk)))[-1]
        assert value == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(problem.lipschitz, c * (dense ** 2).sum(0) + l2, rtol=1e-13)


def test_b_single_column_accepted():
    A, b = dense_problem()
    x_col = ls_solution(A, b[:, None])
    x_flat = ls_solution(A, b)
    assert np.allclose(x_col, x_flat)


def test_logistic_label_encodings_agree():
    A, _ = sparse_problem()
    y = labels()
    y01 = (y > 0).astype(np.int64)
    ybool = y > 0
    opts = dict(rule="gs", blocks="variable", block_size=3, tol=1e-10)
    r_pm = solve_quietly(bcd.Logistic(A, y, l2=1.0), **opts)
    r_01 = solve_quietly(bcd.Logistic(A, y01, l2=1.0), **opts)
    r_bool = solve_quietly(bcd.Logistic(A, ybool, l2=1.0), **opts)
    assert r_pm.converged and r_01.converged and r_bool.converged
    assert np.allclose(r_pm.x, r_01.x, rtol=1e-8, atol=1e-10)
    assert np.allclose(r_pm.x, r_bool.x, rtol=1e-8, atol=1e-10)
    assert np.any(r_pm.x != 0)


# ---------------------------------------------- multinomial logistic regression

@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_matches_lbfgs(sparse):
    A, y = multinomial_data(sparse=sparse)
    problem = bcd.Multinomial(A, y, l2=0.5)
    x_ref, f_ref = lbfgs_reference(problem)
    r = bcd.solve(problem, rule="gsd", blocks="variable", block_size=6, update="newton",
                  tol=1e-8, max_iter=100000)
    assert r.converged and r.optimality <= 1e-8
    assert r.objective == pytest.approx(f_ref, rel=1e-8)
    assert np.max(np.abs(problem.gradient(r.x))) <= 1e-8
    np.testing.assert_allclose(r.x, x_ref, rtol=1e-5, atol=1e-6)


def test_multinomial_matches_scikit_learn_objective():
    linear_model = pytest.importorskip("sklearn.linear_model")
    A, y = multinomial_data(m=120, d=10, k=3, seed=4, sparse=False)
    l2 = 2.0
    problem = bcd.Multinomial(A, y, l2=l2)
    r = bcd.solve(problem, rule="gsd", update="newton", block_size=5, tol=1e-9, max_iter=100000)
    # scikit-learn minimizes C * sum(loss) + ||W||^2 / 2 with the same
    # symmetric parametrization, so C = 1 / l2 gives the same minimizer
    clf = linear_model.LogisticRegression(C=1.0 / l2, fit_intercept=False, tol=1e-12,
                                          max_iter=100000).fit(A, y)
    f_sklearn = problem.objective(clf.coef_.T)
    assert r.converged
    assert r.objective <= f_sklearn + 1e-9 * abs(f_sklearn)
    assert r.objective == pytest.approx(f_sklearn, rel=1e-7)
    np.testing.assert_allclose(problem.coef(r.x), clf.coef_.T, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rule,blocks,update", list(itertools.product(
    ["cyclic", "random", "lipschitz"] + GREEDY, ["fixed", "variable"], UPDATES)))
def test_multinomial_every_rule_and_update(rule, blocks, update):
    A, y = multinomial_data(m=50, d=8, k=3, seed=2)
    problem = bcd.Multinomial(A, y, l2=1.0)
    f_ref = lbfgs_reference(problem)[1]
    r = bcd.solve(problem, rule=rule, blocks=blocks, block_size=4, update=update, tol=1e-7,
                  max_iter=300000, random_state=0)
    assert r.converged, r.message
    assert r.objective == pytest.approx(f_ref, rel=1e-9)


def test_multinomial_labels_with_gaps_are_remapped():
    A, y = multinomial_data(m=60, d=6, k=3, seed=3)
    p_dense = bcd.Multinomial(A, y, l2=1.0)
    p_gaps = bcd.Multinomial(A, 10 * y + 7, l2=1.0)
    np.testing.assert_array_equal(p_gaps.classes, [7, 17, 27])
    r1 = bcd.solve(p_dense, tol=1e-9, max_iter=100000)
    r2 = bcd.solve(p_gaps, tol=1e-9, max_iter=100000)
    np.testing.assert_allclose(r1.x, r2.x, rtol=1e-9, atol=1e-12)


def test_multinomial_kernel_oracles():
    A, y = multinomial_data(m=40, d=5, k=3, seed=5)
    problem = bcd.Multinomial(A, y, l2=0.3)
    rs = np.random.RandomState(0)
    x = 0.3 * rs.randn(problem.n_coordinates)
    kernel = problem.compile(True, 6)
    kernel.set_x(x)
    assert kernel.get_objective() == pytest.approx(problem.objective(x), rel=1e-13)
    np.testing.assert_allclose(kernel.get_gradient(), problem.gradient(x), atol=1e-12)
    block = [0, 1, 4, 7, 13]
    H = kernel.get_block_matrix(block, exact=True)
    H_fd = np.empty((5, 5))
    for a, i in enumerate(block):
        e = np.zeros_like(x)
        e[i] = 1e-6
        H_fd[:, a] = (problem.gradient(x + e)[block] - problem.gradient(x - e)[block]) / 2e-6
    np.testing.assert_allclose(H, H_fd, atol=1e-7)
    # Boehning's bound with k' dominates the Hessian
    Hb = kernel.get_block_matrix(block)
    assert np.linalg.eigvalsh(Hb - H).min() >= -1e-12
    # a single coordinate: k' = 2 gives L = ||a_j||^2 / 4 + l2
    dense = A.toarray()
    assert kernel.get_block_matrix([4])[0, 0] == pytest.approx(
        0.25 * dense[:, 1] @ dense[:, 1] + 0.3)


# -------------------------------------------------------------------- Quadratic

def spd_system(n=30, seed=2):
    """A sparse SPD Q = A^T A + 0.1 I (not diagonally dominant, varied scales) and c."""
    A, _ = random_problem(2 * n, n, density=0.15, seed=seed)
    Q = sp.csc_matrix(A.T @ A + 0.1 * sp.identity(n))
    c = np.random.RandomState(seed).randn(n)
    return Q, c


SOLVER_OPTIONS = [
    dict(rule="gs", blocks="variable", block_size=3, update="exact"),
    dict(rule="gsd", blocks="variable", block_size=3, update="matrix"),
    dict(rule="gsq", blocks="variable", block_size=3, update="newton"),
    dict(rule="gsq", blocks="variable", block_size=2, update="gradient"),
    dict(rule="gsl", blocks="variable", block_size=3, update="exact"),
    dict(rule="random", blocks="variable", block_size=3, update="newton"),
    dict(rule="gs", blocks="fixed", block_size=4, update="gradient"),
    dict(rule="gsd", blocks="fixed", block_size=4, update="exact"),
    dict(rule="gsq", blocks="fixed", block_size=4, update="matrix"),
    dict(rule="gsl", blocks="fixed", block_size=4, update="gradient"),
    dict(rule="cyclic", blocks="fixed", block_size=5, update="linesearch"),
    dict(rule="lipschitz", blocks="fixed", block_size=5, update="newton"),
    dict(rule="gs", blocks="tree", update="exact"),
    dict(rule="gsd", blocks="coloring", update="exact"),
    dict(rule="gs", blocks="forest_partition", update="matrix"),
]


def _id(options):
    return "-".join(str(v) for v in options.values())


@pytest.mark.parametrize("options", SOLVER_OPTIONS, ids=_id)
@pytest.mark.parametrize("dense", [False, True])
def test_quadratic_solution_matches_a_direct_solve(options, dense):
    Q, c = spd_system()
    x_ref = np.linalg.solve(Q.toarray(), c) if dense else spla.spsolve(Q, c)
    problem = bcd.Quadratic(Q.toarray() if dense else Q, c)
    r = bcd.solve(problem, tol=1e-10, max_iter=300000, random_state=0, **options)
    assert r.converged, r.status
    assert r.optimality <= 1e-10
    assert relative_error(r.x, x_ref) <= 1e-8
    # reported values describe the returned point
    assert r.optimality == pytest.approx(np.max(np.abs(Q @ r.x - c)), rel=1e-6, abs=1e-13)
    assert r.objective == pytest.approx(problem.objective(r.x), rel=1e-10)
    assert r.objective == pytest.approx(problem.objective(x_ref), rel=1e-12)


def test_quadratic_from_a_starting_point():
    Q, c = spd_system(seed=5)
    x_ref = spla.spsolve(Q, c)
    x0 = x_ref + 1e-3 * np.random.RandomState(1).randn(x_ref.size)
    x0_copy = x0.copy()
    r = bcd.solve(bcd.Quadratic(Q, c), rule="gs", block_size=3, update="exact", x0=x0,
                  tol=1e-11, max_iter=100000)
    assert r.converged and relative_error(r.x, x_ref) <= 1e-9
    np.testing.assert_array_equal(x0, x0_copy)


@pytest.mark.parametrize("dense", [False, True])
def test_quadratic_objective_and_gradient_match_numpy(dense):
    Q, c = spd_system(seed=3)
    Qd = Q.toarray()
    problem = bcd.Quadratic(Qd if dense else Q, c)
    assert problem.n_coordinates == 30
    np.testing.assert_allclose(problem.lipschitz, np.diag(Qd), rtol=1e-15)
    rs = np.random.RandomState(0)
    for _ in range(5):
        x = rs.randn(30) * 10
        assert problem.objective(x) == pytest.approx(0.5 * x @ Qd @ x - c @ x, rel=1e-12)
        np.testing.assert_allclose(problem.gradient(x), Qd @ x - c, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(problem.gradient(list(x)), Qd @ x - c, rtol=1e-12,
                                   atol=1e-12)
    assert problem.objective(np.zeros(30)) == 0.0
    np.testing.assert_array_equal(problem.gradient(np.zeros(30)), -c)
    with pytest.raises(ValueError, match="x has length 29, expected 30"):
        problem.objective(np.zeros(29))
    with pytest.raises(ValueError, match="x has length 31, expected 30"):
        problem.gradient(np.zeros(31))


def test_quadratic_objective_decreases_along_a_solve():
    Q, c = spd_system(seed=4)
    problem = bcd.Quadratic(Q, c)
    values = []
    bcd.solve(problem, rule="gs", block_size=3, update="exact", max_iter=200, tol=0.0,
              callback=lambda info: values.append(info.objective))
    assert len(values) == 200
    # exact block updates never increase f
    assert np.all(np.diff(values) <= 1e-12 * np.abs(values[:-1]))
    np.testing.assert_allclose(values[-1], problem.objective(
        bcd.solve(problem, rule="gs", block_size=3, update="exact", max_iter=200,
                  tol=0.0).x), rtol=1e-12)


@pytest.mark.parametrize("dense", [False, True])
def test_quadratic_float32_input_gives_float32_output(dense):
    Q, c = spd_system(seed=6)
    Q32 = Q.astype(np.float32)
    problem = bcd.Quadratic(Q32.toarray() if dense else Q32, c.astype(np.float32))
    assert problem.dtype == np.float32
    for options in (dict(rule="gs", blocks="variable", update="exact"),
                    dict(rule="gs", blocks="tree", update="exact")):
        r = bcd.solve(problem, tol=1e-6, max_iter=100000, **options)
        assert r.x.dtype == np.float32
        x_ref = spla.spsolve(sp.csc_matrix(Q32, dtype=np.float64), c.astype(np.float32))
        assert relative_error(r.x.astype(np.float64), x_ref) <= 1e-5
    # float64 Q with a float32 c stays float64
    assert bcd.solve(bcd.Quadratic(Q, c.astype(np.float32)), max_iter=10).x.dtype == np.float64


def test_quadratic_accepts_other_matrix_formats():
    Q, c = spd_system(seed=7)
    x_ref = spla.spsolve(Q, c)
    for M in (Q.tocsr(), Q.tocoo(), sp.csr_array(Q), np.asfortranarray(Q.toarray()),
              Q.toarray().tolist()):
        r = bcd.solve(bcd.Quadratic(M, list(c)), rule="gs", block_size=3, update="exact",
                      tol=1e-10, max_iter=100000)
        assert r.converged and relative_error(r.x, x_ref) <= 1e-8


# ------------------------------------------------------------- LabelPropagation

D_OPTIMUM = -1045999575.2270697


def laplacian_parts(W, labels, known_mask):
    """Restricted Laplacian and linear term, built directly from the definition."""
    W = sp.csr_matrix(W, dtype=np.float64, copy=True)
    W.setdiag(0.0)
    W.eliminate_zeros()
    L = (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).toarray()
    U, K = np.flatnonzero(~known_mask), np.flatnonzero(known_mask)
    Q = L[np.ix_(U, U)]
    c = -L[np.ix_(U, K)] @ labels[K]
    return Q, c


def small_lattice(size=8, n_labelled=5, weight=1.0, seed=0):
    return bcd.datasets.make_lattice_dataset(size, n_labelled, weight, random_state=seed)


@pytest.fixture(scope="module")
def dataset_d():
    W, labels = bcd.datasets.make_paper_dataset("D", random_state=1)
    return W, labels, bcd.LabelPropagation(W, labels)


def test_dataset_d_has_the_paper_optimum(dataset_d):
    W, labels, problem = dataset_d
    assert W.shape == (2500, 2500)
    assert np.count_nonzero(~np.isnan(labels)) == 100
    assert problem.n_coordinates == 2400 and problem.known.size == 100
    x_star = spla.spsolve(sp.csc_matrix(problem.Q), problem.c)
    assert problem.objective(x_star) == pytest.approx(D_OPTIMUM, rel=1e-9)
    # smallest eigenvalue of the restricted Laplacian
    lam = spla.eigsh(sp.csc_matrix(problem.Q), k=1, sigma=0, which="LM",
                     return_eigenvectors=False)[0]
    assert lam == pytest.approx(4739.9, rel=1e-4)


@pytest.mark.parametrize("options", [dict(blocks="forest_partition", rule="cyclic"),
                                     dict(blocks="tree", rule="gs")], ids=_id)
def test_dataset_d_forest_solve_reaches_the_optimum(dataset_d, options):
    _, labels, problem = dataset_d
    x_star = spla.spsolve(sp.csc_matrix(problem.Q), problem.c)
    r = bcd.solve(problem, update="exact", tol=1e-2, max_iter=20000, **options)
    assert r.converged
    assert r.objective == pytest.approx(D_OPTIMUM, rel=1e-8)
    assert relative_error(r.x, x_star) <= 1e-6
    z = problem.full_labels(r.x)
    known = ~np.isnan(labels)
    np.testing.assert_array_equal(z[known], labels[known])
    # maximum principle: harmonic values lie within the range of the known labels
    assert labels[known].min() - 1e-6 <= z.min() and z.max() <= labels[known].max() + 1e-6


def test_dataset_e_matches_a_direct_solve():
    W, labels = bcd.datasets.make_paper_dataset("E", random_state=1)
    problem = bcd.LabelPropagation(W, labels)
    assert W.shape == (2000, 2000)
    assert problem.n_coordinates == 1900
    assert set(np.unique(labels[problem.known])) == {1.0, 2.0}
    Qd, cd = laplacian_parts(W, labels, ~np.isnan(labels))
    np.testing.assert_allclose(problem.Q.toarray(), Qd, rtol=0, atol=1e-12)
    np.testing.assert_allclose(problem.c, cd, rtol=0, atol=1e-12)
    x_star = spla.spsolve(sp.csc_matrix(problem.Q), problem.c)
    f_star = problem.objective(x_star)
    r = bcd.solve(problem, rule="gs", blocks="tree", update="exact", tol=1e-9, max_iter=50000)
    assert r.converged
    assert r.objective == pytest.approx(f_star, rel=1e-10)
    assert relative_error(r.x, x_star) <= 1e-6
    z = problem.full_labels(r.x)
    assert 1.0 - 1e-8 <= z.min() and z.max() <= 2.0 + 1e-8


def test_label_propagation_matches_its_definition():
    rs = np.random.RandomState(3)
    X = rs.randn(60, 2)
    W = bcd.datasets.make_knn_graph(X, 4)
    W.data = rs.uniform(0.5, 2.0, W.nnz)
    W = sp.csr_matrix(W.maximum(W.T))
    W = W + sp.diags(rs.uniform(1.0, 2.0, 60))          # self-loops are ignored
    labels = np.full(60, np.nan)
    labels[rs.choice(60, 12, replace=False)] = rs.randn(12)
    problem = bcd.LabelPropagation(W, labels)
    known = ~np.isnan(labels)
    np.testing.assert_array_equal(problem.known, np.flatnonzero(known))
    np.testing.assert_array_equal(problem.unknown, np.flatnonzero(~known))
    Qd, cd = laplacian_parts(W, labels, known)
    np.testing.assert_allclose(problem.Q.toarray(), Qd, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(problem.c, cd, rtol=1e-14, atol=1e-14)
    # f(x) = 1/2 sum_{i<j} w_ij (z_i - z_j)^2 + constant, z = full labels
    Wu = sp.triu(W, k=1).tocoo()

    def energy(x):
        z = problem.full_labels(x)
        return 0.5 * np.sum(Wu.data * (z[Wu.row] - z[Wu.col]) ** 2)

    xs = [rs.randn(problem.n_coordinates) for _ in range(4)]
    offsets = [problem.objective(x) - energy(x) for x in xs]
    np.testing.assert_allclose(offsets, offsets[0], rtol=1e-10, atol=1e-10)
    # the solution is harmonic: each unknown value is the weighted mean of its neighbours
    x_star = spla.spsolve(sp.csc_matrix(problem.Q), problem.c)
    z = problem.full_labels(x_star)
    Wn = sp.csr_matrix(W)
    Wn.setdiag(0.0)
    Wn.eliminate_zeros()
    means = (Wn @ z) / np.asarray(Wn.sum(axis=1)).ravel()
    np.testing.assert_allclose(z[problem.unknown], means[problem.unknown], rtol=1e-10)


def test_full_labels_puts_known_labels_back():
    W, labels = small_lattice()
    problem = bcd.LabelPropagation(W, labels)
    x = np.arange(problem.n_coordinates, dtype=float) + 0.5
    z = problem.full_labels(x)
    assert z.shape == (64,)
    known = ~np.isnan(labels)
    np.testing.assert_array_equal(z[known], labels[known])
    np.testing.assert_array_equal(z[~known], x)
    with pytest.raises(ValueError, match="x has length"):
        problem.full_labels(np.zeros(64))


def test_mask_is_equivalent_to_nan_labels():
    W, labels = small_lattice(seed=4)
    known = ~np.isnan(labels)
    filled = np.where(known, labels, 123.0)      # values at unknown nodes are not read
    a = bcd.LabelPropagation(W, labels)
    for mask in (known, known.astype(int), list(known)):
        b = bcd.LabelPropagation(W, filled, mask=mask)
        np.testing.assert_array_equal(a.known, b.known)
        np.testing.assert_array_equal(a.unknown, b.unknown)
        np.testing.assert_array_equal(a.Q.toarray(), b.Q.toarray())
        np.testing.assert_array_equal(a.c, b.c)
    # NaN at unknown nodes is fine with a mask too
    b = bcd.LabelPropagation(W, labels, mask=known)
    np.testing.assert_array_equal(a.c, b.c)
    ra = bcd.solve(a, rule="gs", blocks="tree", update="exact", tol=1e-10, max_iter=10000)
    rb = bcd.solve(b, rule="gs", blocks="tree", update="exact", tol=1e-10, max_iter=10000)
    np.testing.assert_array_equal(ra.x, rb.x)
    np.testing.assert_array_equal(a.full_labels(ra.x), b.full_labels(rb.x))


def test_dense_weights_equal_sparse_weights():
    W, labels = bcd.datasets.make_two_moons_dataset(150, 12, random_state=3)
    a = bcd.LabelPropagation(W, labels)
    for Wx in (W.toarray(), np.asfortranarray(W.toarray()), W.tocsc(), W.tocoo(),
               sp.csr_array(W)):
        b = bcd.LabelPropagation(Wx, labels)
        np.testing.assert_array_equal(a.Q.toarray(), b.Q.toarray())
        np.testing.assert_array_equal(a.c, b.c)
    ra = bcd.solve(a, rule="cyclic", blocks="forest_partition", update="exact", tol=1e-10,
                   max_iter=10000)
    rb = bcd.solve(bcd.LabelPropagation(W.toarray(), labels), rule="cyclic",
                   blocks="forest_partition", update="exact", tol=1e-10, max_iter=10000)
    np.testing.assert_allclose(ra.x, rb.x, rtol=1e-12)
    # float32 weights give float32 solutions
    r32 = bcd.solve(bcd.LabelPropagation(W.astype(np.float32), labels), rule="gs",
                    blocks="tree", update="exact", tol=1e-6, max_iter=10000)
    assert r32.x.dtype == np.float32
    np.testing.assert_allclose(r32.x, ra.x, rtol=1e-5)


# ----------------------------------- dense and sparse data, float32 and float64

@pytest.mark.parametrize("rule,blocks", list(itertools.product(RULES, BLOCKS)))
def test_dense_csr_csc_coo_inputs_agree(rule, blocks):
    A, b = random_problem(30, 25, density=0.4, seed=9)
    results = []
    for fmt in ["dense", "csr", "csc", "coo"]:
        data = A.toarray() if fmt == "dense" else A.asformat(fmt)
        r = bcd.solve(bcd.LeastSquares(data, b), rule=rule, blocks=blocks, block_size=3,
                      max_iter=300, tol=0.0, random_state=5)
        results.append(r.x)
    for x in results[1:]:
        np.testing.assert_allclose(x, results[0], rtol=1e-11, atol=1e-13)


def test_dense_and_sparse_logistic_agree_with_greedy_tracking():
    A, y = logistic_data(m=50, n=30, seed=2)
    r_sparse = bcd.solve(bcd.Logistic(A, y), rule="gs", max_iter=300, tol=0.0)
    r_dense = bcd.solve(bcd.Logistic(A.toarray(), y), rule="gs", max_iter=300, tol=0.0)
    np.testing.assert_allclose(r_sparse.x, r_dense.x, rtol=1e-10, atol=1e-12)


def test_float32_matches_float64():
    A, b = random_problem(40, 10, density=0.6, seed=12, sparse=False)
    r64 = bcd.solve(bcd.LeastSquares(A, b, l2=1.0), tol=1e-8, max_iter=100000)
    r32 = bcd.solve(bcd.LeastSquares(A.astype(np.float32), b.astype(np.float32), l2=1.0),
                    tol=1e-5, max_iter=100000)
    assert r32.x.dtype == np.float32 and r64.x.dtype == np.float64
    np.testing.assert_allclose(r32.x, r64.x, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("sparse", [False, True])
def test_float32_input(sparse):
    A, b = (sparse_problem() if sparse else dense_problem())
    A32 = A.astype(np.float32)
    A64 = A32.astype(np.float64)               # the same numbers in float64
    opts = dict(rule="gs", blocks="variable", block_size=3, tol=1e-10)
    r32 = solve_quietly(bcd.LeastSquares(A32, b, l2=1.0), **opts)
    r64 = solve_quietly(bcd.LeastSquares(A64, b, l2=1.0), **opts)
    assert r32.x.dtype == np.float32
    assert r64.x.dtype == np.float64
    # tol=1e-10 is out of reach of a float32 x: the certificate of the
    # returned array says so
    assert r64.converged
    assert r32.converged == (r32.optimality <= 1e-10)
    if not r32.converged:
        assert r32.status == "stalled" and "float32" in r32.message, r32.message
    np.testing.assert_allclose(r32.x, r64.x, rtol=1e-5, atol=1e-6)

    r32 = solve_quietly(bcd.Logistic(A32, labels(), l2=1.0), **opts)
    r64 = solve_quietly(bcd.Logistic(A64, labels(), l2=1.0), **opts)
    assert r32.x.dtype == np.float32
    np.testing.assert_allclose(r32.x, r64.x, rtol=1e-5, atol=1e-6)


def test_integer_dtype_inputs():
    rs = np.random.RandomState(5)
    A = rs.randint(-5, 6, size=(N_SAMPLES, N_FEATURES)).astype(np.int64)
    b = rs.randint(-5, 6, size=N_SAMPLES).astype(np.int64)
    p_int = bcd.LeastSquares(A, b)
    assert p_int.dtype == np.float64
    r_int = solve_quietly(p_int, block_size=3)
    r_float = solve_quietly(bcd.LeastSquares(A.astype(np.float64), b.astype(np.float64)),
                            block_size=3)
    assert r_int.x.dtype == np.float64
    assert r_int.converged
    assert np.allclose(r_int.x, r_float.x, rtol=1e-12, atol=1e-14)

    r_sparse = solve_quietly(bcd.LeastSquares(sp.csr_matrix(A), b), block_size=3)
    assert np.allclose(r_sparse.x, r_float.x, rtol=1e-9, atol=1e-12)


# -------------------------------------------- memory layouts and read-only data

def test_non_contiguous_dense_inputs():
    rs = np.random.RandomState(3)
    A_wide = rs.randn(N_SAMPLES, 2 * N_FEATURES)
    b_long = rs.randn(2 * N_SAMPLES)
    A_view, b_view = A_wide[:, ::2], b_long[::2]
    assert not A_view.flags.c_contiguous and not A_view.flags.f_contiguous
    assert not b_view.flags.c_contiguous
    x0_long = rs.randn(2 * N_FEATURES)
    x0_view = x0_long[::2]

    for kwargs in [dict(rule="gs", blocks="variable"), dict(rule="cyclic", blocks="fixed")]:
        ref = ls_solution(np.ascontiguousarray(A_view), np.ascontiguousarray(b_view),
                          block_size=3, x0=np.ascontiguousarray(x0_view), **kwargs)
        got = ls_solution(A_view, b_view, block_size=3, x0=x0_view, **kwargs)
        assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_transposed_C_array():
    rs = np.random.RandomState(4)
    At = rs.randn(N_FEATURES, N_SAMPLES)        # C-ordered, so At.T is F-ordered
    b = rs.randn(N_SAMPLES)
    ref = ls_solution(np.ascontiguousarray(At.T), b, block_size=3)
    got = ls_solution(At.T, b, block_size=3)
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_non_contiguous_labels():
    A, _ = dense_problem()
    y_long = np.repeat(labels(), 2)
    y_view = y_long[::2]
    ref = solve_quietly(bcd.Logistic(A, np.ascontiguousarray(y_view), l2=1.0)).x
    got = solve_quietly(bcd.Logistic(A, y_view, l2=1.0)).x
    assert np.allclose(got, ref)


def _readonly(arr):
    arr = np.array(arr, copy=True, order="K")
    arr.setflags(write=False)
    return arr


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("rule", ["gs", "cyclic"])
def test_read_only_dense_inputs(order, rule):
    A, b = dense_problem()
    A = np.asarray(A, order=order)
    x0 = np.linspace(-1, 1, N_FEATURES)
    ref = ls_solution(A.copy(order=order), b.copy(), rule=rule, block_size=3, x0=x0.copy())
    A_ro, b_ro, x0_ro = _readonly(A), _readonly(b), _readonly(x0)
    got = ls_solution(A_ro, b_ro, rule=rule, block_size=3, x0=x0_ro)
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)

    y = labels()
    ref = solve_quietly(bcd.Logistic(A, y, l2=1.0), rule=rule, block_size=3).x
    got = solve_quietly(bcd.Logistic(A_ro, _readonly(y), l2=1.0), rule=rule, block_size=3).x
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csc", "csr", "coo"])
@pytest.mark.parametrize("rule", ["gs", "random"])
def test_read_only_sparse_arrays(fmt, rule):
    A, b = sparse_problem()
    A = A.asformat(fmt)
    ref = ls_solution(A.copy(), b, rule=rule, block_size=3, random_state=0)
    A_ro = A.copy()
    A_ro.data.setflags(write=False)
    for attr in ("indices", "indptr", "row", "col"):
        if hasattr(A_ro, attr):
            getattr(A_ro, attr).setflags(write=False)
    got = ls_solution(A_ro, _readonly(b), rule=rule, block_size=3, random_state=0)
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------- all-zero columns

@pytest.mark.parametrize("sparse", [False, True, "explicit-zeros"])
@pytest.mark.parametrize("kwargs", [
    dict(rule="gs", blocks="variable", block_size=3),
    dict(rule="gs", blocks="variable", block_size=N_FEATURES),
    dict(rule="gs", blocks="fixed", block_size=3, partition="sort"),
    dict(rule="cyclic", blocks="fixed", block_size=3, partition="order"),
    dict(rule="random", blocks="variable", block_size=N_FEATURES),
    dict(rule="lipschitz", blocks="fixed", block_size=4, partition="avg"),
], ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_zero_column(sparse, kwargs):
    A, b = dense_problem()
    A = A.copy()
    A[:, 4] = 0.0
    if sparse == "explicit-zeros":
        # the column's entries are stored, but all of them are zero
        A = sp.csc_matrix(A + 1e-3)
        A.data[A.indptr[4]:A.indptr[5]] = 0.0
        assert A.indptr[5] - A.indptr[4] == N_SAMPLES
    elif sparse:
        A = sp.csc_matrix(A)
        assert A[:, 4].nnz == 0
    r = solve_quietly(bcd.LeastSquares(A, b), tol=1e-8, random_state=0, **kwargs)
    assert r.converged, r
    assert r.x[4] == 0.0
    assert np.all(np.isfinite(r.x))
    assert np.isfinite(r.objective) and np.isfinite(r.optimality)
    assert np.all(np.isfinite(r.history.objective))
    assert np.all(np.isfinite(r.history.optimality))
    dense = A.toarray() if sp.issparse(A) else A
    x_ref = np.linalg.lstsq(np.delete(dense, 4, axis=1), b, rcond=None)[0]
    assert np.allclose(np.delete(r.x, 4), x_ref, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("sparse", [False, True])
def test_zero_column_logistic(sparse):
    A, _ = dense_problem()
    A = A.copy()
    A[:, 0] = 0.0
    if sparse:
        A = sp.csr_matrix(A)
    r = solve_quietly(bcd.Logistic(A, labels(), l2=0.0), block_size=3, tol=1e-6,
                      max_iter=20000)
    assert r.x[0] == 0.0
    assert np.all(np.isfinite(r.x))
    assert np.isfinite(r.objective)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("blocks", ["variable", "fixed"])
def test_all_zero_matrix(sparse, blocks):
    A = np.zeros((N_SAMPLES, N_FEATURES))
    if sparse:
        A = sp.csc_matrix(A)
    b = np.ones(N_SAMPLES)
    x0 = np.linspace(-1, 1, N_FEATURES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bcd.ConvergenceWarning)
        r = bcd.solve(bcd.LeastSquares(A, b), blocks=blocks, block_size=3)
        r0 = bcd.solve(bcd.LeastSquares(A, b), blocks=blocks, block_size=3, x0=x0)
    assert r.converged and r.n_iter == 0
    assert np.array_equal(r.x, np.zeros(N_FEATURES))
    assert r.objective == pytest.approx(0.5 * N_SAMPLES)
    # the gradient is zero everywhere, so any start is optimal and kept
    assert r0.converged and r0.n_iter == 0
    assert np.array_equal(r0.x, x0)


# -------------------------------------------- the caller's data is not modified

def _noncanonical_csc():
    """A 6 x 4 CSC matrix with unsorted row indices and duplicate entries."""
    data = np.array([1.0, 2.0, -1.5, 0.5, 3.0, 1.0, 2.5, -2.0, 1.25, 4.0])
    indices = np.array([3, 0, 3, 5, 1, 2, 1, 4, 0, 2], dtype=np.int32)
    indptr = np.array([0, 3, 5, 8, 10], dtype=np.int32)
    A = sp.csc_matrix((data, indices, indptr), shape=(6, 4))
    assert not A.has_canonical_format
    return A


def _coo_with_duplicates():
    rows = np.array([0, 1, 2, 3, 4, 5, 0, 2, 2, 5])
    cols = np.array([0, 1, 2, 3, 0, 1, 0, 3, 2, 3])
    data = np.array([1.0, 2.0, 3.0, -1.0, 0.5, 1.5, 2.0, -0.5, 1.0, 2.0])
    return sp.coo_matrix((data, (rows, cols)), shape=(6, 4))


def _sparse_arrays(A):
    names = [n for n in ("data", "indices", "indptr", "row", "col", "coords")
             if hasattr(A, n)]
    out = {}
    for name in names:
        value = getattr(A, name)
        if isinstance(value, tuple):
            for i, v in enumerate(value):
                out[f"{name}{i}"] = np.array(v, copy=True)
        elif isinstance(value, np.ndarray):
            out[name] = value.copy()
        else:   # lil: object arrays of lists
            out[name] = [list(v) for v in value]
    if A.format == "lil":
        out["rows"] = [list(r) for r in A.rows]
        out["data"] = [list(r) for r in A.data]
    return out


def _assert_same_sparse(before, A):
    after = _sparse_arrays(A)
    assert before.keys() == after.keys()
    for name in before:
        if isinstance(before[name], np.ndarray):
            assert before[name].dtype == after[name].dtype, name
            assert np.array_equal(before[name], after[name]), name
        else:
            assert before[name] == after[name], name


SOLVE_VARIANTS = [
    dict(rule="gs", blocks="variable", block_size=2),
    dict(rule="gs", blocks="fixed", block_size=2, partition="sort"),
    dict(rule="cyclic", blocks="fixed", block_size=3, partition="order"),
    dict(rule="random", blocks="variable", block_size=2),
    dict(rule="lipschitz", blocks="fixed", block_size=2, partition="avg"),
]


def _solve_all_variants(problem, x0):
    for kwargs in SOLVE_VARIANTS:
        solve_quietly(problem, x0=x0, max_iter=200, random_state=0, **kwargs)


def test_dense_inputs_not_modified():
    A, b = dense_problem()
    x0 = np.linspace(-1, 1, N_FEATURES)
    y = labels()
    for A_in in (A, np.asfortranarray(A)):
        A_copy, b_copy, x0_copy, y_copy = A_in.copy(order="K"), b.copy(), x0.copy(), y.copy()
        _solve_all_variants(bcd.LeastSquares(A_in, b, l2=0.1), x0)
        _solve_all_variants(bcd.Logistic(A_in, y, l2=0.1), x0)
        assert np.array_equal(A_in, A_copy)
        assert A_in.flags.c_contiguous == A_copy.flags.c_contiguous
        assert np.array_equal(b, b_copy)
        assert np.array_equal(x0, x0_copy)
        assert np.array_equal(y, y_copy)


def test_integer_and_list_inputs_not_modified():
    A = np.arange(24, dtype=np.int64).reshape(6, 4) % 5 - 2
    b = [1, 0, -1, 2, 3, 1]
    A_copy, b_copy = A.copy(), list(b)
    _solve_all_variants(bcd.LeastSquares(A, b, l2=0.1), np.zeros(4))
    assert np.array_equal(A, A_copy) and A.dtype == np.int64
    assert b == b_copy


@pytest.mark.parametrize("make", [
    lambda: sp.csc_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.csr_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.coo_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.lil_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.csc_array(np.arange(24.0).reshape(6, 4) % 5 - 2),
    lambda: sp.csc_matrix(np.arange(24.0).reshape(6, 4) % 5 - 2, dtype=np.float32),
    lambda: sp.csc_matrix((np.arange(24.0).reshape(6, 4) % 5 - 2).astype(np.int64)),
    _noncanonical_csc,
    _coo_with_duplicates,
], ids=["csc", "csr", "coo", "lil", "csc_array", "csc-float32", "csc-int64",
        "csc-noncanonical", "coo-duplicates"])
def test_sparse_inputs_not_modified(make):
    A = make()
    fmt, dtype, nnz = A.format, A.dtype, A.nnz
    dense_before = A.toarray()
    before = _sparse_arrays(A)
    b = np.arange(6, dtype=np.float64) - 2.5
    b_copy = b.copy()
    y = np.array([1, -1, 1, -1, -1, 1], dtype=np.float64)
    y_copy = y.copy()
    x0 = np.array([0.5, -0.25, 1.0, 0.0])
    x0_copy = x0.copy()

    _solve_all_variants(bcd.LeastSquares(A, b, l2=0.1), x0)
    _solve_all_variants(bcd.Logistic(A, y, l2=0.1), x0)

    assert A.format == fmt and A.dtype == dtype and A.nnz == nnz
    _assert_same_sparse(before, A)
    assert np.array_equal(A.toarray(), dense_before)
    assert np.array_equal(b, b_copy)
    assert np.array_equal(y, y_copy)
    assert np.array_equal(x0, x0_copy)


def test_noncanonical_csc_matches_canonical():
    A = _noncanonical_csc()
    b = np.arange(6, dtype=np.float64) - 2.5
    canonical = A.copy()
    canonical.sum_duplicates()
    ref = ls_solution(canonical, b, l2=0.1, block_size=2)
    got = ls_solution(A, b, l2=0.1, block_size=2)
    assert np.allclose(got, ref, rtol=1e-10, atol=1e-12)
    assert np.allclose(got, ls_solution(A.toarray(), b, l2=0.1, block_size=2))


def test_problem_does_not_alias_target():
    """Changing b after building the problem must not change the problem."""
    A, b = dense_problem()
    problem = bcd.LeastSquares(A, b, l2=1.0)
    ref = solve_quietly(problem, block_size=3).x
    b[:] = 0.0
    again = solve_quietly(problem, block_size=3).x
    assert np.allclose(again, ref)


def test_inputs_are_not_modified():
    Q, c = spd_system(seed=8)
    Q.indices = Q.indices.astype(np.int32)
    Q.indptr = Q.indptr.astype(np.int32)
    copies = (Q.data.copy(), Q.indices.copy(), Q.indptr.copy(), c.copy())
    Qd = np.asfortranarray(Q.toarray())
    Qd_copy = Qd.copy()
    for M in (Q, Qd):
        problem = bcd.Quadratic(M, c)
        for options in (dict(rule="gs", blocks="variable", update="exact"),
                        dict(rule="gsq", blocks="fixed", update="matrix"),
                        dict(rule="gs", blocks="tree", update="exact"),
                        dict(rule="random", blocks="coloring", update="exact")):
            bcd.solve(problem, max_iter=50, tol=0.0, **options)
        problem.objective(np.ones(30))
        problem.gradient(np.ones(30))
    for a, b in zip(copies, (Q.data, Q.indices, Q.indptr, c)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(Qd, Qd_copy)

    W, labels = small_lattice(seed=2)
    W = sp.csr_matrix(W + sp.diags(np.full(64, 2.0)))          # with self-loops
    known = ~np.isnan(labels)
    filled = np.where(known, labels, 0.0)
    for Wx, lab, mask in ((W, labels, None), (W.tocsc(), filled, known),
                          (np.asfortranarray(W.toarray()), labels, None)):
        before = ((Wx.data.copy(), Wx.indices.copy(), Wx.indptr.copy()) if sp.issparse(Wx)
                  else Wx.copy())
        lab_before = lab.copy()
        mask_before = None if mask is None else mask.copy()
        problem = bcd.LabelPropagation(Wx, lab, mask=mask)
        x = bcd.solve(problem, rule="gs", blocks="tree", update="exact", max_iter=20,
                      tol=0.0).x
        problem.full_labels(x)
        if sp.issparse(Wx):
            for a, b in zip(before, (Wx.data, Wx.indices, Wx.indptr)):
                np.testing.assert_array_equal(a, b)
            assert Wx.diagonal().min() == 2.0
        else:
            np.testing.assert_array_equal(before, Wx)
        np.testing.assert_array_equal(lab_before, lab)
        if mask is not None:
            np.testing.assert_array_equal(mask_before, mask)


# --------------------------------------------------------------------- registry

@pytest.fixture
def registered_subclass():
    class RidgeLeastSquares(bcd.LeastSquares):
        def __init__(self, A, b, l2=1.0):
            super().__init__(A, b, l2=l2)

    name = "ridge_least_squares_test"
    yield name, RidgeLeastSquares
    bcd.problems._REGISTRY.pop(name, None)


def test_registry_builtin_names():
    names = bcd.problems.available()
    assert "least_squares" in names
    assert "logistic" in names


def test_registry_make_builtins():
    A, b = dense_problem()
    p = bcd.problems.make("least_squares", A=A, b=b)
    assert isinstance(p, bcd.LeastSquares)
    assert p.n_features == N_FEATURES
    q = bcd.problems.make("logistic", A=A, y=labels(), l2=0.5)
    assert isinstance(q, bcd.Logistic)
    assert q.l2 == 0.5


def test_registry_make_unknown_lists_names():
    with pytest.raises(ValueError, match="nope") as excinfo:
        bcd.problems.make("nope")
    message = str(excinfo.value)
    for name in bcd.problems.available():
        assert repr(name) in message


def test_registry_make_validates_arguments():
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b"):
        bcd.problems.make("least_squares", A=A, b=b[:-1])


@pytest.mark.parametrize("cls", [dict, object, 42, lambda A, b: None,
                                 bcd.LeastSquares(np.eye(2), [1.0, 2.0])],
                         ids=["dict", "object", "int", "function", "instance"])
def test_register_rejects_non_problem(cls):
    before = dict(bcd.problems._REGISTRY)
    with pytest.raises(TypeError, match="Problem"):
        bcd.problems.register("not_a_problem_test", cls)
    assert "not_a_problem_test" not in bcd.problems.available()
    assert bcd.problems._REGISTRY == before


def test_register_subclass(registered_subclass):
    name, cls = registered_subclass
    bcd.problems.register(name, cls)
    assert name in bcd.problems.available()
    A, b = dense_problem()
    p = bcd.problems.make(name, A=A, b=b)
    assert isinstance(p, cls)
    assert p.l2 == 1.0
    r = solve_quietly(p, block_size=3)
    assert r.converged
    # the built-in entry is untouched
    assert type(bcd.problems.make("least_squares", A=A, b=b)) is bcd.LeastSquares


def test_registry_cleanup_after_subclass_test():
    assert "ridge_least_squares_test" not in bcd.problems.available()


def test_registering_an_alias_does_not_rename_the_class():
    try:
        bcd.problems.register("ls_alias", bcd.LeastSquares)
        assert bcd.problems.make("ls_alias", A=np.eye(2), b=[1.0, 2.0]).__class__ is bcd.LeastSquares
        assert "least_squares" in bcd.problems.available()
        assert bcd.problems.make("least_squares", A=np.eye(2), b=[1.0, 2.0]) is not None
    finally:
        bcd.problems._REGISTRY.pop("ls_alias", None)


# ----------------------------------------- bad input: LeastSquares and Logistic

@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_dense_A_rejected(bad):
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.LeastSquares(with_value(A, (3, 4), bad), b)
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.Logistic(with_value(A, (3, 4), bad), labels())


@pytest.mark.parametrize("fmt", ["csc", "csr", "coo", "lil"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_sparse_A_rejected(fmt, bad):
    A, b = sparse_problem()
    A = A.copy()
    A.data[2] = bad
    A = A.asformat(fmt)
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.LeastSquares(A, b)
    with pytest.raises(ValueError, match=r"\bA\b.*(NaN|infinity)"):
        bcd.Logistic(A, labels())


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_b_rejected(bad):
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b.*(NaN|infinity)"):
        bcd.LeastSquares(A, with_value(b, 5, bad))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_y_rejected(bad):
    A, _ = dense_problem()
    with pytest.raises(ValueError, match=r"\by\b"):
        bcd.Logistic(A, with_value(labels(), 5, bad))


def test_b_length_mismatch():
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b.*length"):
        bcd.LeastSquares(A, b[:-1])
    with pytest.raises(ValueError, match=r"\bb\b.*length"):
        bcd.LeastSquares(A, np.append(b, 1.0))


def test_y_length_mismatch():
    A, _ = dense_problem()
    with pytest.raises(ValueError, match=r"\by\b.*length"):
        bcd.Logistic(A, labels()[:-1])


def test_b_two_columns_rejected():
    A, b = dense_problem()
    with pytest.raises(ValueError, match=r"\bb\b.*1-dimensional"):
        bcd.LeastSquares(A, np.column_stack([b, b]))


@pytest.mark.parametrize("shape", [(N_SAMPLES,), (2, N_SAMPLES, N_FEATURES)])
def test_A_wrong_ndim_rejected(shape):
    A = np.ones(shape)
    with pytest.raises(ValueError, match=r"\bA\b.*2-dimensional"):
        bcd.LeastSquares(A, np.ones(N_SAMPLES))
    with pytest.raises(ValueError, match=r"\bA\b.*2-dimensional"):
        bcd.Logistic(A, labels())


def test_A_scalar_rejected():
    with pytest.raises(ValueError, match=r"\bA\b"):
        bcd.LeastSquares(np.float64(1.0), [1.0])


@pytest.mark.parametrize("A", [
    np.zeros((0, 5)),
    np.zeros((5, 0)),
    sp.csc_matrix((0, 0)),
    sp.csr_matrix((0, 5)),
    sp.csc_matrix((5, 0)),
], ids=["dense-0x5", "dense-5x0", "csc-0x0", "csr-0x5", "csc-5x0"])
def test_empty_A_rejected(A):
    b = np.zeros(A.shape[0])
    with pytest.raises(ValueError, match=r"\bA\b.*non-empty"):
        bcd.LeastSquares(A, b)


@pytest.mark.parametrize("y", [
    np.ones(N_SAMPLES),                                   # one class
    np.arange(N_SAMPLES) % 3 - 1.0,                       # {-1, 0, 1}
    np.arange(N_SAMPLES) % 2 + 1.0,                       # {1, 2}
    np.arange(N_SAMPLES) % 2 - 1.0,                       # {-1, 0}
    np.where(np.arange(N_SAMPLES) % 2, 1.0, 0.5),         # {0.5, 1}
    np.where(np.arange(N_SAMPLES) % 2, 1.0, -0.5),        # {-0.5, 1}
], ids=["single", "three", "one-two", "minus-one-zero", "half-one", "neg-half-one"])
def test_logistic_bad_label_sets(y):
    A, _ = dense_problem()
    with pytest.raises(ValueError, match=r"\by\b.*two classes"):
        bcd.Logistic(A, y)


@pytest.mark.parametrize("l2, exc", [
    (-1.0, ValueError), (-1e-12, ValueError), (np.nan, ValueError), (np.inf, ValueError),
    ("1.0", TypeError), (None, TypeError),
])
@pytest.mark.parametrize("cls", ["LeastSquares", "Logistic"])
def test_bad_l2(cls, l2, exc):
    A, b = dense_problem()
    target = b if cls == "LeastSquares" else labels()
    with pytest.raises(exc, match="l2"):
        getattr(bcd, cls)(A, target, l2=l2)


@pytest.mark.parametrize("make", [np.asarray, sp.csr_matrix], ids=["dense", "sparse"])
def test_complex_A_rejected(make):
    A, b = dense_problem()
    with pytest.raises(TypeError, match=r"\bA\b.*complex"):
        bcd.LeastSquares(make(A + 1j * A), b)


def test_complex_b_rejected():
    A, b = dense_problem()
    with pytest.raises(TypeError, match=r"\bb\b"):
        bcd.LeastSquares(A, b + 0j)


@pytest.mark.parametrize("A", [
    np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=object),
    np.array([["1", "2"], ["3", "4"], ["5", "6"]]),
    np.array([[b"1", b"2"], [b"3", b"4"], [b"5", b"6"]]),
], ids=["object", "str", "bytes"])
def test_non_numeric_A_rejected(A):
    with pytest.raises(TypeError, match=r"\bA\b"):
        bcd.LeastSquares(A, np.ones(3))


def test_string_labels_rejected():
    A, _ = dense_problem()
    y = np.where(labels() > 0, "pos", "neg")
    with pytest.raises(TypeError, match=r"\by\b"):
        bcd.Logistic(A, y)


def test_overflowing_column_norms_are_rejected():
    A, b = dense_problem()
    A[:, 3] = 1e160
    with pytest.raises(ValueError, match="overflows"):
        bcd.LeastSquares(A, b)


# ------------------------------------ bad input: Quadratic and LabelPropagation

def test_quadratic_rejects_bad_input():
    Q, c = spd_system(n=6, seed=1)
    Qd = Q.toarray()
    bad = Qd.copy()
    bad[0, 1] += 1.0
    with pytest.raises(ValueError, match="Q must be symmetric"):
        bcd.Quadratic(bad, c)
    with pytest.raises(ValueError, match="Q must be symmetric"):
        bcd.Quadratic(sp.csr_matrix(bad), c)
    for value in (0.0, -1.0):
        bad = Qd.copy()
        bad[3, 3] = value
        with pytest.raises(ValueError, match="diagonal of Q must be positive.*entry 3"):
            bcd.Quadratic(bad, c)
        with pytest.raises(ValueError, match="diagonal of Q must be positive.*entry 3"):
            bcd.Quadratic(sp.csc_matrix(bad), c)
    # a structurally missing diagonal entry is a zero
    bad = sp.lil_matrix(Qd)
    bad[2, 2] = 0.0
    with pytest.raises(ValueError, match="diagonal of Q must be positive.*entry 2"):
        bcd.Quadratic(sp.csr_matrix(bad), c)
    for value in (np.nan, np.inf):
        bad = Qd.copy()
        bad[1, 2] = bad[2, 1] = value
        with pytest.raises(ValueError, match="Q contains NaN or infinity"):
            bcd.Quadratic(bad, c)
        with pytest.raises(ValueError, match="Q contains NaN or infinity"):
            bcd.Quadratic(sp.csr_matrix(bad), c)
        bad_c = c.copy()
        bad_c[4] = value
        with pytest.raises(ValueError, match="c contains NaN or infinity"):
            bcd.Quadratic(Q, bad_c)
    with pytest.raises(ValueError, match="Q must be square"):
        bcd.Quadratic(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="Q must be square"):
        bcd.Quadratic(sp.random(4, 3, density=0.5, random_state=0), np.ones(4))
    with pytest.raises(ValueError, match="c has length 5, expected 6"):
        bcd.Quadratic(Q, c[:5])
    with pytest.raises(ValueError, match="Q must be .*2-dimensional"):
        bcd.Quadratic(np.ones(4), np.ones(4))
    with pytest.raises(TypeError, match="Q must hold real numbers"):
        bcd.Quadratic(Qd.astype(complex), c)


def test_label_propagation_rejects_bad_weights():
    W, labels = small_lattice()
    Wd = W.toarray()
    bad = Wd.copy()
    bad[0, 1] = 2.0 * bad[0, 1] + 1.0
    with pytest.raises(ValueError, match="W must be symmetric"):
        bcd.LabelPropagation(bad, labels)
    with pytest.raises(ValueError, match="W must be symmetric"):
        bcd.LabelPropagation(sp.csr_matrix(bad), labels)
    bad = Wd.copy()
    bad[0, 1] = bad[1, 0] = -1.0
    with pytest.raises(ValueError, match="W must be non-negative"):
        bcd.LabelPropagation(bad, labels)
    with pytest.raises(ValueError, match="W must be non-negative"):
        bcd.LabelPropagation(sp.csr_matrix(bad), labels)
    for value in (np.nan, np.inf):
        bad = Wd.copy()
        bad[0, 1] = bad[1, 0] = value
        with pytest.raises(ValueError, match="W contains NaN or infinity"):
            bcd.LabelPropagation(bad, labels)
        with pytest.raises(ValueError, match="W contains NaN or infinity"):
            bcd.LabelPropagation(sp.csr_matrix(bad), labels)
    with pytest.raises(ValueError, match="W must be square"):
        bcd.LabelPropagation(np.ones((4, 5)), [1.0, np.nan, np.nan, np.nan])
    # a negative self-loop is ignored like any diagonal entry
    ok = Wd.copy()
    np.fill_diagonal(ok, -3.0)
    np.testing.assert_array_equal(bcd.LabelPropagation(ok, labels).Q.toarray(),
                                  bcd.LabelPropagation(W, labels).Q.toarray())


def test_label_propagation_rejects_bad_labels():
    W, labels = small_lattice()
    bad = labels.copy()
    bad[np.flatnonzero(~np.isnan(labels))[0]] = np.inf
    with pytest.raises(ValueError, match="labels of known nodes must be finite"):
        bcd.LabelPropagation(W, bad)
    mask = ~np.isnan(labels)
    mask[np.flatnonzero(np.isnan(labels))[0]] = True       # a known node labelled NaN
    with pytest.raises(ValueError, match="labels of known nodes must be finite"):
        bcd.LabelPropagation(W, labels, mask=mask)
    with pytest.raises(ValueError, match=r"labels must have length 64"):
        bcd.LabelPropagation(W, labels[:-1])
    with pytest.raises(ValueError, match=r"labels must have length 64"):
        bcd.LabelPropagation(W, np.append(labels, 1.0))
    with pytest.raises(ValueError, match=r"labels must have length 64"):
        bcd.LabelPropagation(W, labels.reshape(8, 8))
    with pytest.raises(ValueError, match=r"mask must have shape \(64,\)"):
        bcd.LabelPropagation(W, labels, mask=~np.isnan(labels[:-1]))
    with pytest.raises(ValueError, match=r"mask must have shape \(64,\)"):
        bcd.LabelPropagation(W, labels, mask=np.flatnonzero(~np.isnan(labels)))
    with pytest.raises(ValueError, match="At least one node must be labelled"):
        bcd.LabelPropagation(W, np.full(64, np.nan))
    with pytest.raises(ValueError, match="At least one node must be labelled"):
        bcd.LabelPropagation(W, np.zeros(64), mask=np.zeros(64, dtype=bool))
    with pytest.raises(ValueError, match="Every node is labelled"):
        bcd.LabelPropagation(W, np.zeros(64))
    with pytest.raises(ValueError, match="Every node is labelled"):
        bcd.LabelPropagation(W, np.ones(64), mask=np.ones(64, dtype=bool))


def test_label_propagation_rejects_an_unlabelled_component():
    # two 4 x 4 lattices side by side, labels only on the first
    W1 = bcd.datasets.make_lattice_graph(4, 4)
    W = sp.block_diag([W1, W1], format="csr")
    labels = np.full(32, np.nan)
    labels[[0, 5]] = [1.0, 2.0]
    with pytest.raises(ValueError, match=r"1 connected component\(s\) of the graph have no "
                                         r"labelled node.*node 16"):
        bcd.LabelPropagation(W, labels)
    labels[20] = 3.0
    problem = bcd.LabelPropagation(W, labels)
    assert problem.n_coordinates == 29
    # an isolated unlabelled node is a component of its own
    W2 = sp.block_diag([W1, sp.csr_matrix((1, 1))], format="csr")
    labels = np.full(17, np.nan)
    labels[3] = 1.0
    with pytest.raises(ValueError, match="no labelled node.*node 16"):
        bcd.LabelPropagation(W2, labels)
    # edges of weight zero do not connect
    W3 = bcd.datasets.make_lattice_graph(1, 6).toarray()
    W3[2, 3] = W3[3, 2] = 0.0
    labels = np.array([1.0, np.nan, np.nan, np.nan, np.nan, np.nan])
    with pytest.raises(ValueError, match="no labelled node.*node 3"):
        bcd.LabelPropagation(sp.csr_matrix(W3), labels)


# ------------------------------------------------------------------ Poisson

def _poisson_data(m=300, n=40, seed=0):
    rs = np.random.RandomState(seed)
    A = rs.randn(m, n) * 0.3
    y = rs.poisson(np.exp(A @ (0.3 * rs.randn(n)))).astype(float)
    return A, y


@pytest.mark.parametrize("fmt", ["dense", "csc", "csr"])
@pytest.mark.parametrize("update", ["newton", "linesearch"])
def test_poisson_matches_scikit_learn(fmt, update):
    from sklearn.linear_model import PoissonRegressor
    A, y = _poisson_data()
    alpha = 0.01
    X = A if fmt == "dense" else getattr(sp, f"{fmt}_matrix")(A)
    # scikit-learn minimizes f / n_samples with l2 = n_samples * alpha
    problem = bcd.Poisson(X, y, l2=A.shape[0] * alpha)
    result = bcd.solve(problem, rule="gs", blocks="variable", block_size=5, update=update,
                       tol=1e-9, max_iter=100000)
    assert result.converged
    ref = PoissonRegressor(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=10000,
                           solver="newton-cholesky").fit(A, y)
    np.testing.assert_allclose(result.x, ref.coef_, rtol=1e-6, atol=1e-8)
    assert np.abs(problem.gradient(result.x)).max() <= 1e-9


def test_poisson_objective_gradient_and_float32():
    A, y = _poisson_data(50, 8, seed=1)
    problem = bcd.Poisson(A, y, l2=0.5)
    rs = np.random.RandomState(2)
    x = 0.2 * rs.randn(8)
    z = A @ x
    assert problem.smooth_objective(x) == pytest.approx(
        np.sum(np.exp(z) - y * z) + 0.25 * x @ x, rel=1e-13)
    eps = 1e-6
    num = [(problem.smooth_objective(x + eps * e) - problem.smooth_objective(x - eps * e))
           / (2 * eps) for e in np.eye(8)]
    np.testing.assert_allclose(problem.gradient(x), num, rtol=1e-6, atol=1e-8)
    state = problem.compile(True, 4)
    state.set_x(x)
    assert state.get_objective() == pytest.approx(problem.objective(x), rel=1e-13)
    np.testing.assert_allclose(state.get_gradient(), problem.gradient(x), atol=1e-12)
    r64 = bcd.solve(problem, update="newton", tol=1e-8)
    r32 = bcd.solve(bcd.Poisson(A.astype(np.float32), y, l2=0.5), update="newton", tol=1e-8)
    assert r32.x.dtype == np.float32
    np.testing.assert_allclose(r32.x, r64.x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("positive", [False, True])
def test_poisson_with_l1_reaches_the_reference_optimum(positive):
    A, y = _poisson_data(200, 20, seed=3)
    lam = 3.0
    problem = bcd.Poisson(A, y, penalty=bcd.L1(lam, positive=positive))
    result = bcd.solve(problem, rule="gs", blocks="variable", block_size=5, update="newton",
                       tol=1e-9, max_iter=100000)
    assert result.converged and result.optimality <= 1e-9
    f_ref = penalized_reference(problem)
    assert result.objective <= f_ref + 1e-9 * abs(f_ref)
    assert 0 < np.count_nonzero(result.x) < A.shape[1]
    if positive:
        assert np.all(result.x >= 0)


def test_poisson_refuses_what_needs_a_bound():
    A, y = _poisson_data(30, 5)
    problem = bcd.Poisson(A, y)
    with pytest.raises(ValueError, match="with lipschitz='bound' needs coordinate-wise "
                                         "Lipschitz constants.*Poisson does not provide.*"
                                         "'gradient', 'linesearch', 'newton'"):
        bcd.solve(problem, lipschitz="bound")
    # the gradient update estimates L_b instead
    result = bcd.solve(problem, update="gradient", tol=1e-8)
    assert result.converged and result.options["lipschitz"] == "estimate"
    with pytest.raises(ValueError, match="with lipschitz='estimate' does not handle a "
                                         "penalty.*'newton'"):
        bcd.solve(bcd.Poisson(A, y, penalty=bcd.L1(1.0)), update="gradient")
    # the automatic configuration takes Newton steps on weighted least squares
    result = bcd.solve(bcd.Poisson(A, y, penalty=bcd.L1(1.0)), tol=1e-8)
    assert result.converged and result.options["formulation"] == "newton"
    # the primal's own configuration: proximal Newton steps
    result = bcd.solve(bcd.Poisson(A, y, penalty=bcd.L1(1.0)), tol=1e-8, formulation="primal")
    assert result.converged and result.options["update"] == "newton"
    for options in (dict(update="matrix"), dict(update="exact"), dict(rule="lipschitz"),
                    dict(rule="gsl"), dict(rule="gsq"), dict(rule="gbcd"),
                    dict(blocks="tree")):
        with pytest.raises(ValueError, match="Poisson does not provide"):
            bcd.solve(problem, **{"update": "newton", **options})
    assert bcd.solve(problem, update="gradient", lipschitz="estimate", tol=1e-8).converged
    with pytest.raises(ValueError, match="y must be non-negative"):
        bcd.Poisson(A, -np.ones(30))
    assert bcd.problems.make("poisson", A=A, y=y).n_coordinates == 5


# --------------------------------------------------------- multinomial labels

def test_multinomial_keeps_label_values_and_dtype():
    A = np.random.RandomState(0).rand(6, 3)
    y = np.array([2**60, 2**60 + 1, 2**60 + 2] * 2, dtype=np.int64)
    problem = bcd.Multinomial(A, y)
    assert problem.n_classes == 3
    assert problem.classes.dtype == np.int64
    np.testing.assert_array_equal(problem.classes, np.unique(y))
    with pytest.raises(ValueError, match="integer class labels"):
        bcd.Multinomial(A, [0.5, 1, 0, 1, 0, 1])
