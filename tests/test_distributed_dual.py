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
                              tol=1e-300, max_rounds=12, local_epochs=1, line_search=False)
        assert result.status == "max_iter", result
        gaps = np.asarray(result.history.duality_gap)
        assert np.all(np.isfinite(gaps))
        # the dual ascends: the gap falls well below the first rounds'
        assert gaps[-1] < 0.5 * gaps[1]
    finally:
        client.close()
        cluster.close()
