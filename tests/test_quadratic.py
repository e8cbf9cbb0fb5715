"""Quadratic problems and graph-based label propagation (datasets D and E)."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bcd

from _data import random_problem

D_OPTIMUM = -1045999575.2270697


def spd_system(n=30, seed=2):
    """A sparse SPD Q = A^T A + 0.1 I (not diagonally dominant, varied scales) and c."""
    A, _ = random_problem(2 * n, n, density=0.15, seed=seed)
    Q = sp.csc_matrix(A.T @ A + 0.1 * sp.identity(n))
    c = np.random.RandomState(seed).randn(n)
    return Q, c


def relative_error(x, ref):
    return np.max(np.abs(x - ref)) / np.max(np.abs(ref))


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


# --------------------------------------------------------------- Quadratic

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


# --------------------------------------------------------------- LabelPropagation

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


# --------------------------------------------------------------- bad input

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
