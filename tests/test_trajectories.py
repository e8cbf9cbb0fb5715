"""Pinned iterates: the sequence of iterates of a set of explicit
configurations, recorded once and compared bitwise.

Refactoring the solver's structure must not change what it computes: every
configuration below must reproduce the stored iterates exactly.  Run this
file as a script to record them again after an intended algorithmic change.
"""
import pathlib
import sys

import numpy as np
import pytest

import bcd

DATA = pathlib.Path(__file__).with_name("data") / "trajectories.npz"
N_ITER = 25


def _least_squares(penalty=None):
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=60, n_features=150, random_state=3)
    return bcd.LeastSquares(A, b, penalty=penalty)


def _logistic():
    A, y = bcd.datasets.make_paper_dataset("B", n_samples=60, n_features=120, random_state=4)
    return bcd.Logistic(A, y, l2=1.0)


def _multinomial():
    A, y = bcd.datasets.make_paper_dataset("C", n_samples=60, n_features=30, random_state=5)
    return bcd.Multinomial(A, y, l2=1.0)


def _lattice():
    W, labels = bcd.datasets.make_lattice_dataset(size=12, n_labelled=20, weight=1e2,
                                                  random_state=2)
    return bcd.LabelPropagation(W, labels)


def _gp():
    X, y, _, _ = bcd.datasets.make_friedman1(300, 10, random_state=1)
    return bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(lengthscale=2.0), noise=0.1)


def _lasso():
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=60, n_features=150, random_state=3)
    lam = 0.3 * np.max(np.abs(A.T @ b))
    return bcd.LeastSquares(A, b, penalty=bcd.L1(lam))


#: name -> (problem builder, solve options)
CASES = {
    "ls_gs_variable_gradient": (_least_squares, dict(rule="gs", blocks="variable", block_size=5,
                                                     update="gradient")),
    "ls_gsl_fixed_matrix": (_least_squares, dict(rule="gsl", blocks="fixed", block_size=5,
                                                 update="matrix", partition="sort")),
    "ls_gsq_variable_exact": (_least_squares, dict(rule="gsq", blocks="variable", block_size=4,
                                                   update="exact")),
    "ls_lipschitz_avg_estimate": (_least_squares, dict(rule="lipschitz", blocks="fixed",
                                                       block_size=5, partition="avg",
                                                       update="gradient",
                                                       lipschitz="estimate")),
    "logistic_gsd_variable_newton": (_logistic, dict(rule="gsd", blocks="variable",
                                                     block_size=5, update="newton")),
    "logistic_cyclic_random_linesearch": (_logistic, dict(rule="cyclic", blocks="fixed",
                                                          block_size=5, partition="random",
                                                          update="linesearch")),
    "logistic_random_variable_gradient": (_logistic, dict(rule="random", blocks="variable",
                                                          block_size=5, update="gradient")),
    "multinomial_gsq_fixed_matrix": (_multinomial, dict(rule="gsq", blocks="fixed",
                                                        block_size=6, update="matrix",
                                                        partition="order")),
    "lattice_gs_tree": (_lattice, dict(rule="gs", blocks="tree", update="exact")),
    "lattice_random_tree": (_lattice, dict(rule="random", blocks="tree", update="exact")),
    "lattice_gsl_coloring": (_lattice, dict(rule="gsl", blocks="coloring", update="exact",
                                            vertex_order="random")),
    "lattice_gs_forest_partition": (_lattice, dict(rule="gs", blocks="forest_partition",
                                                   update="exact", vertex_order="lipschitz")),
    "lattice_gbcd": (_lattice, dict(rule="gbcd", blocks="variable", block_size=10,
                                    update="exact", mi_candidates=7)),
    "gp_gbcd": (_gp, dict(rule="gbcd", block_size=20, update="exact")),
    "lasso_gs_gradient": (_lasso, dict(rule="gs", blocks="variable", block_size=5,
                                       update="gradient")),
    "lasso_gsd_newton": (_lasso, dict(rule="gsd", blocks="variable", block_size=5,
                                      update="newton")),
    "lasso_gsl_fixed_two_metric": (_lasso, dict(rule="gsl", blocks="fixed", block_size=5,
                                                update="two_metric")),
    "lasso_gs_homotopy": (_lasso, dict(rule="gs", blocks="variable", block_size=5,
                                       update="homotopy")),
    "box_gs_gradient": (lambda: _least_squares(bcd.Box(-0.05, 0.05)),
                        dict(rule="gs", blocks="variable", block_size=5, update="gradient")),
}

#: cases whose iterates depend on the instruction-set path of the GP kernels
ISA_DEPENDENT = {"gp_gbcd"}


def trajectory(name):
    """The iterates x_1, ..., x_N of case ``name`` as an (N, n) array."""
    build, options = CASES[name]
    iterates = []

    def record(info):
        iterates.append(info.x)

    bcd.solve(build(), max_iter=N_ITER, tol=0.0, random_state=0, callback=record,
              check_every=7, **options)
    return np.array(iterates)


@pytest.fixture(scope="module")
def stored():
    with np.load(DATA) as data:
        return dict(data)


@pytest.mark.filterwarnings("ignore::bcd.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_iterates_are_unchanged(name, stored):
    assert name in stored, f"no stored trajectory for {name}; run {__file__} to record it"
    if name in ISA_DEPENDENT:
        # the compiled kernels' loops differ per instruction set (vector
        # width, fused multiply-adds), so kernel entries may differ in the
        # last bits from those of the recording machine
        np.testing.assert_allclose(trajectory(name), stored[name], rtol=1e-12, atol=1e-15)
    else:
        np.testing.assert_array_equal(trajectory(name), stored[name])


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(CASES)
    data = dict(np.load(DATA)) if DATA.exists() else {}
    for name in names:
        data[name] = trajectory(name)
        print(name, data[name].shape)
    np.savez_compressed(DATA, **data)
