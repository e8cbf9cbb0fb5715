"""Pinned iterates: the sequence of iterates of a set of explicit
configurations, recorded once and compared to what the solver computes now.

Refactoring the solver's structure must not change what it computes: every
configuration below must reproduce the stored iterates, up to rounding.
Another CPU or BLAS rounds differently in the last bits (and the GP
kernels' loops differ per instruction set), and those differences grow
through the iterations, so the comparison (``assert_same_trajectory``) has
two parts that rounding cannot fail but a change of algorithm does:

* the values, to ``VALUE_RTOL`` times the trajectory's scale (its largest
  entry): a different step size, block or update moves entries by far
  more;
* the blocks, exactly: a coordinate that moved by more than ``MOVE_RTOL``
  times the scale in one iteration of either trajectory must have moved
  (by any amount) in the same iteration of the other.  A coordinate outside
  the chosen block keeps its value bit for bit on any machine, so a block
  containing another coordinate, however small its step, fails here.

Run this file as a script to record them again after an intended
algorithmic change.
"""
import pathlib
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import bcd

DATA = pathlib.Path(__file__).with_name("data") / "trajectories.npz"
N_ITER = 25
#: largest difference of two iterates, relative to the trajectory's scale
VALUE_RTOL = 1e-9
#: a step larger than this, relative to the scale, marks a coordinate as moved
MOVE_RTOL = 1e-12


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


def _lasso(fraction=0.3):
    A, b = bcd.datasets.make_paper_dataset("A", n_samples=60, n_features=150, random_state=3)
    lam = fraction * np.max(np.abs(A.T @ b))
    return bcd.LeastSquares(A, b, penalty=bcd.L1(lam))


def _lasso_wider():
    # lambda_max / 10: 13 non-zeros, so that greedy blocks of 5 are chosen by
    # scores well above rounding.  At lambda_max * 0.3 the support has 6
    # coordinates, and once they are found the blocks are filled up with
    # coordinates whose scores are rounding noise: which ones depends on the
    # machine, and the trajectories with it.
    return _lasso(0.1)


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
    "lasso_gsd_newton": (_lasso_wider, dict(rule="gsd", blocks="variable", block_size=5,
                                            update="newton")),
    "lasso_gsl_fixed_two_metric": (_lasso, dict(rule="gsl", blocks="fixed", block_size=5,
                                                update="two_metric")),
    "lasso_gs_homotopy": (_lasso_wider, dict(rule="gs", blocks="variable", block_size=5,
                                             update="homotopy")),
    "box_gs_gradient": (lambda: _least_squares(bcd.Box(-0.05, 0.05)),
                        dict(rule="gs", blocks="variable", block_size=5, update="gradient")),
}

#: cases with random choices (rule, partition or vertex order)
RANDOM_CASES = ["logistic_random_variable_gradient", "logistic_cyclic_random_linesearch",
                "lattice_random_tree", "lattice_gsl_coloring", "ls_lipschitz_avg_estimate"]


def trajectory(name, random_state=0):
    """The iterates x_1, ..., x_N of case ``name`` as an (N, n) array."""
    build, options = CASES[name]
    iterates = []

    def record(info):
        iterates.append(info.x)

    bcd.solve(build(), max_iter=N_ITER, tol=0.0, random_state=random_state, callback=record,
              check_every=7, **options)
    return np.array(iterates)


def steps(iterates):
    """x_k - x_{k-1} for every iterate (x_0 = 0, the solves' start)."""
    return np.diff(np.vstack([np.zeros((1, iterates.shape[1])), iterates]), axis=0)


def assert_same_trajectory(actual, expected):
    """``actual`` is ``expected`` up to rounding: the same blocks, exactly,
    and the same values to ``VALUE_RTOL`` times the scale (module docstring).

    A solve with ``tol=0`` stops early only when its optimality measure is
    exactly 0, which rounding decides: trajectories of different lengths
    agree if the longer one stays, after the shorter ends, within the value
    tolerance of the shorter's last iterate."""
    assert actual.ndim == expected.ndim == 2 and actual.shape[1] == expected.shape[1], \
        (actual.shape, expected.shape)
    scale = max(float(np.max(np.abs(expected), initial=0.0)), np.finfo(float).tiny)
    n = min(len(actual), len(expected))
    longer = actual if len(actual) > n else expected
    np.testing.assert_allclose(longer[n:], np.broadcast_to(longer[n - 1], longer[n:].shape),
                               rtol=0, atol=VALUE_RTOL * scale,
                               err_msg=f"the trajectories have {len(actual)} and "
                                       f"{len(expected)} iterates, and the longer one moves on")
    actual, expected = actual[:n], expected[:n]
    step_a, step_e = steps(actual), steps(expected)
    for moved, other, which in ((np.abs(step_a) > MOVE_RTOL * scale, step_e, "expected"),
                                (np.abs(step_e) > MOVE_RTOL * scale, step_a, "actual")):
        missing = np.argwhere(moved & (other == 0.0))
        assert missing.size == 0, (
            f"the blocks differ: (iteration, coordinate) pairs moved in one trajectory but "
            f"not in the {which} one: {(missing + [1, 0])[:10].tolist()}")
    np.testing.assert_allclose(actual, expected, rtol=0, atol=VALUE_RTOL * scale,
                               err_msg="the iterates differ by more than rounding")


@pytest.fixture(scope="module")
def stored():
    with np.load(DATA) as data:
        return dict(data)


@pytest.mark.filterwarnings("ignore::bcd.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_iterates_are_unchanged(name, stored):
    assert name in stored, f"no stored trajectory for {name}; run {__file__} to record it"
    assert_same_trajectory(trajectory(name), stored[name])


# ------------------------------------------------------------------ the comparison itself

@pytest.mark.parametrize("name", sorted(CASES))
def test_comparison_tolerates_rounding(name, stored):
    # every entry changed by up to 1e-15 relatively, as another machine's
    # rounding would (and even 1e-13, a hundred times more)
    rng = np.random.default_rng(0)
    expected = stored[name]
    for size in (1e-15, 1e-13):
        perturbed = expected * (1.0 + size * rng.uniform(-1.0, 1.0, expected.shape))
        assert not np.array_equal(perturbed, expected)
        assert_same_trajectory(perturbed, expected)
        assert_same_trajectory(expected, perturbed)


#: cases whose data have exact ties (the lattice's nodes of equal degree and
#: equal gradients), which every machine keeps (the same operations on the
#: same numbers) but a perturbation of the data breaks
EXACT_TIES = {"lattice_gbcd", "lattice_gs_forest_partition", "lattice_gs_tree"}


@pytest.fixture
def perturbed_data(monkeypatch):
    """The datasets of the cases with every matrix entry changed by up to
    1e-15 relatively (labels and targets unchanged), as rounding might."""
    rng = np.random.default_rng(1)

    def perturb(M):
        if sp.issparse(M):
            M = M.copy()
            M.data = M.data * (1.0 + 1e-15 * rng.uniform(-1.0, 1.0, M.data.shape))
            return M
        return M * (1.0 + 1e-15 * rng.uniform(-1.0, 1.0, np.shape(M)))

    def wrap(make):
        def made(*args, **kwargs):
            first, *rest = make(*args, **kwargs)
            return (perturb(first), *rest)
        return made

    for name in ("make_paper_dataset", "make_lattice_dataset", "make_friedman1"):
        monkeypatch.setattr(bcd.datasets, name, wrap(getattr(bcd.datasets, name)))


@pytest.mark.filterwarnings("ignore::bcd.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(set(CASES) - EXACT_TIES))
def test_rounding_of_the_data_keeps_the_trajectory(name, stored, perturbed_data):
    # the cases are chosen so that no block is decided by rounding noise
    assert_same_trajectory(trajectory(name), stored[name])


@pytest.mark.filterwarnings("ignore::bcd.ConvergenceWarning")
@pytest.mark.parametrize("name", RANDOM_CASES)
def test_comparison_fails_for_another_seed(name, stored):
    with pytest.raises(AssertionError, match="the blocks differ"):
        assert_same_trajectory(trajectory(name, random_state=1), stored[name])


def _moved_and_still(trajectory, k):
    """A coordinate moved at iteration ``k`` (0-based) and one that was not."""
    step = steps(trajectory)[k]
    return int(np.flatnonzero(step != 0)[0]), int(np.flatnonzero(step == 0)[0])


def test_comparison_fails_for_a_swapped_block(stored):
    expected = stored["ls_gs_variable_gradient"]
    k = 10
    i, j = _moved_and_still(expected, k)
    step = steps(expected)[k, i]
    # iteration k moves j instead of i, by the same step, and the later
    # iterates inherit the difference
    swapped = expected.copy()
    swapped[k:, i] -= step
    swapped[k:, j] += step
    with pytest.raises(AssertionError, match="the blocks differ"):
        assert_same_trajectory(swapped, expected)


def test_comparison_fails_for_a_tiny_step_outside_the_block(stored):
    # a block with one more coordinate, whose step (1e-10 of the scale) is
    # within the value tolerance: only the block comparison sees it
    expected = stored["logistic_gsd_variable_newton"]
    k = 5
    _, j = _moved_and_still(expected, k)
    grown = expected.copy()
    grown[k:, j] += 1e-10 * np.abs(expected).max()
    np.testing.assert_allclose(grown, expected, rtol=0, atol=VALUE_RTOL * np.abs(expected).max())
    with pytest.raises(AssertionError, match=r"the blocks differ.*\[6, " + str(j) + r"\]"):
        assert_same_trajectory(grown, expected)


def test_comparison_allows_an_exact_early_stop(stored):
    # one solve stopped after 20 iterations (optimality exactly 0), the other
    # went on with steps of rounding size: the same; with real steps: not
    expected = stored["ls_gs_variable_gradient"]
    short = expected[:20]
    rng = np.random.default_rng(2)
    still = short[-1] * (1.0 + 1e-15 * rng.uniform(-1.0, 1.0, (5, short.shape[1])))
    assert_same_trajectory(np.vstack([short, still]), short)
    assert_same_trajectory(short, np.vstack([short, still]))
    with pytest.raises(AssertionError, match="the longer one moves on"):
        assert_same_trajectory(expected, short)


def test_comparison_fails_for_a_different_step(stored):
    # the same blocks with every step 1% longer from iteration 3 on
    expected = stored["ls_gsl_fixed_matrix"]
    longer = np.cumsum(steps(expected) * np.where(np.arange(N_ITER) >= 3, 1.01, 1.0)[:, None],
                       axis=0)
    with pytest.raises(AssertionError, match="differ by more than rounding"):
        assert_same_trajectory(longer, expected)


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(CASES)
    data = dict(np.load(DATA)) if DATA.exists() else {}
    for name in names:
        data[name] = trajectory(name)
        print(name, data[name].shape)
    np.savez_compressed(DATA, **data)
