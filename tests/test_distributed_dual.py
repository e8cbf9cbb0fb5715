"""CoCoA+ with the logistic loss at the edges of its dual: dual variables
whose logits are large round to q = 1, which is inside the conjugate's
closed domain (it used to be measured as outside, and the fit stopped as
"diverged"), and the starting dual point's share of w enters w before any
proposal is taken."""
import warnings

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
import bcd.distributed as bd  # noqa: E402
from bcd.distributed import _worker  # noqa: E402


def test_logistic_conjugate_is_finite_on_the_closed_interval():
    t = np.array([1.0, -1.0, 1.0])
    s = np.array([1.0, 2.0, 3.0])
    value = _worker._conj_value("logistic", np.array([1.0, 0.0, 0.5]), t, s)
    assert value == pytest.approx(3.0 * np.log(2.0), rel=1e-15)
    assert _worker._conj_value("logistic", np.array([1.0 + 1e-12, 0.5, 0.5]), t, s) == -np.inf


def test_small_ridge_and_one_local_epoch_do_not_stop_as_diverged():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    try:
        rng = np.random.default_rng(0)
        A = rng.standard_normal((800, 60))
        y = np.sign(A @ rng.standard_normal(60) + 2.0 * rng.standard_normal(800))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bd.solve(A, y, loss="logistic", l2=1e-4, client=client, n_partitions=2,
                              tol=1e-300, max_rounds=12, local_epochs=1, line_search=False,
                              method="cocoa+")
        assert result.status == "max_iter", result
        gaps = np.asarray(result.history.duality_gap)
        assert np.all(np.isfinite(gaps))
        # the dual ascends: the gap falls well below the first rounds'
        assert gaps[-1] < 0.5 * gaps[1]
    finally:
        client.close()
        cluster.close()


@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge", "squared_hinge"])
def test_line_search_grid_is_the_conjugate_at_each_point(loss):
    # the compiled grid against the conjugate evaluated point by point;
    # some grid points leave the domain (-inf), and a row of weight 0 is
    # left out
    rng = np.random.default_rng(1)
    m = 50
    t = np.where(rng.random(m) < 0.5, -1.0, 1.0) if loss != "squared" else rng.standard_normal(m)
    s = rng.uniform(0.5, 2.0, m)
    s[3] = 0.0
    if loss == "logistic":
        q = rng.uniform(0.05, 0.95, m)
    elif loss == "hinge":
        q = rng.uniform(0.0, 1.0, m) * s
    else:
        q = rng.uniform(0.0, 1.0, m) if loss != "squared" else rng.standard_normal(m)
    d = 0.05 * rng.standard_normal(m)
    e = 0.05 * rng.standard_normal(m)
    grid = [(g, b) for b in (0.0, 0.5, -0.25) for g in (0.5, 1.0, 4.0, 20.0)]
    values = _worker._conj_grid(loss, q, d, e, t, s, grid)
    expected = [_worker._conj_value(loss, q + g * d + b * e, t, s) for g, b in grid]
    finite = np.isfinite(expected)
    if loss != "squared":
        assert not finite.all()        # the grid reaches outside the domain
    assert finite.any()
    if loss == "logistic":
        # the grid treats the closed interval's ends as outside (open)
        finite &= np.isfinite(values)
    np.testing.assert_array_equal(np.isfinite(values), np.isfinite(expected))
    np.testing.assert_allclose(values[finite], np.asarray(expected)[finite], rtol=1e-12)


def test_multinomial_line_search_grid_is_the_entropy_at_each_point():
    rng = np.random.default_rng(2)
    m, K = 40, 3
    P = rng.dirichlet(np.ones(K), size=m)
    P[0] = [1.0, 0.0, 0.0]                     # 0 log 0 = 0
    D = rng.dirichlet(np.ones(K), size=m) - P
    E = 0.1 * (rng.dirichlet(np.ones(K), size=m) - P)
    s = rng.uniform(0.5, 2.0, m)
    s[5] = 0.0
    grid = [(g, b) for b in (0.0, 0.5) for g in (0.25, 1.0, 3.0)]
    values = _worker._mnl_grid(P, D, E, s, grid)
    for j, (g, b) in enumerate(grid):
        Q = P + g * D + b * E
        if np.any(Q[s > 0] < 0):
            assert values[j] == -np.inf
        else:
            assert values[j] == pytest.approx(-_worker._mnl_entropy(Q, s), rel=1e-12)
    assert np.isfinite(values).sum() >= 2 and np.isinf(values).sum() >= 1


def _isa_paths():
    from bcd.distributed import _grid
    best = _grid.use_isa()
    paths = []
    for name in _grid.ISA_NAMES:
        try:
            _grid.use_isa(name)
        except ValueError:
            continue
        paths.append(name)
    _grid.use_isa(best)
    return paths


@pytest.mark.parametrize("isa", _isa_paths())
def test_line_search_logarithm_is_accurate_across_the_interval(isa):
    # one row at q = 0 with d = 1: grid point j evaluates the entropy at
    # v = gamma_j, from tiny probabilities to probabilities near 1, on each
    # instruction-set path this CPU runs; and the multinomial grid's
    # p log p on the same values
    from scipy.special import xlogy

    from bcd.distributed import _grid
    v = np.concatenate([np.logspace(-300, -1, 400), np.linspace(0.1, 0.9, 401),
                        1.0 - np.logspace(-1, -15, 300)])
    one, zero = np.ones(1), np.zeros(1)
    best = _grid.use_isa()
    try:
        assert _grid.use_isa(isa) == isa
        values = _grid.conj_grid("logistic", zero, one, zero, one, one, v, np.zeros_like(v))
        entropy = _grid.entropy_grid(np.zeros((1, 1)), np.ones((1, 1)), np.zeros((1, 1)), one,
                                     v, np.zeros_like(v))
    finally:
        _grid.use_isa(best)
    expected = -(xlogy(v, v) + xlogy(1.0 - v, 1.0 - v))
    np.testing.assert_allclose(values, expected, rtol=4e-15, atol=1e-300)
    np.testing.assert_allclose(entropy, -xlogy(v, v), rtol=4e-15, atol=1e-300)
    with pytest.raises(ValueError, match="name must be one of"):
        _grid.use_isa("sse9")
