import warnings

import pytest

import bcd


@pytest.fixture(autouse=True)
def _no_convergence_warnings_by_default():
    # Tests that run a fixed number of iterations expect to stop on max_iter;
    # tests about the warning itself re-enable it with pytest.warns.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        yield
