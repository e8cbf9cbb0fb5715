"""Datasets of the paper's experiments (Appendix F.1) and generators."""
import numpy as np
import scipy.sparse as sp

from ._validation import check_scalar


def _legacy_rng(random_state):
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if random_state is None or (isinstance(random_state, (int, np.integer))
                                and not isinstance(random_state, bool)):
        return np.random.RandomState(random_state)
    raise TypeError(f"random_state must be None, an int or a numpy RandomState; got {random_state!r}.")


def _paper_matrix(rs, m, n):
    """The sparse matrix recipe shared by datasets A, B and C."""
    A = rs.randn(m, n) + 1.0
    A *= 10.0 * rs.randn(n)                    # column scales
    A *= rs.rand(m, n) < 10.0 * np.log(m) / m  # keep each entry w.p. 10 log(m)/m
    return A


def make_paper_dataset(name, random_state=1, n_samples=None, n_features=None, sparse=True,
                       n_classes=50):
    """Generate one of the paper's datasets.

    The recipes follow Appendix F.1 of Nutini, Laradji and Schmidt with
    NumPy's legacy generator, in the call order of the authors' code, so
    ``random_state=1`` (the default) gives the paper's construction.

    Parameters
    ----------
    name : {"A", "B", "C"}
        ``"A"``: least squares, returns ``(A, b)``.  ``"B"``: binary
        logistic regression on the same kind of matrix, returns ``(A, y)``
        with ``y`` in {-1, +1}.  ``"C"``: 50-class logistic regression,
        1000 x 1000, returns ``(A, y)`` with ``y`` in 0..49 (labels
        ``argmax(A W + E)`` for standard normal W and E).
    random_state : int or numpy.random.RandomState, default=1
        Seed of the legacy generator.
    n_samples, n_features : int, optional
        Size of the matrix (default 1000 x 10000 for A and B, 1000 x 1000
        for C, as in the paper).  Smaller sizes give quick versions with the
        same structure.
    n_classes : int, default=50
        Number of classes of dataset C.
    sparse : bool, default=True
        Return the matrix as a CSC sparse matrix (about 7% of its entries are
        non-zero at the default size) or as a dense array.

    Examples
    --------
    >>> import bcd
    >>> A, b = bcd.datasets.make_paper_dataset("A", n_samples=100, n_features=400)
    >>> A.shape, b.shape
    ((100, 400), (100,))
    """
    if name not in ("A", "B", "C"):
        raise ValueError(f"Unknown dataset {name!r}; valid names are 'A', 'B', 'C'.")
    m = check_scalar(1000 if n_samples is None else n_samples, "n_samples", low=2, integer=True)
    default_n = 1000 if name == "C" else 10000
    n = check_scalar(default_n if n_features is None else n_features, "n_features", low=1,
                     integer=True)
    rs = _legacy_rng(random_state)
    A = _paper_matrix(rs, m, n)
    if name == "C":
        k = check_scalar(n_classes, "n_classes", low=2, integer=True)
        W = rs.randn(n, k)
        target = np.argmax(A @ W + rs.randn(m, k), axis=1)
        return (sp.csc_matrix(A) if sparse else np.asfortranarray(A)), target
    x_true = rs.randn(n) * (rs.rand(n) < 0.1)
    if name == "A":
        target = A @ x_true + rs.randn(m)
    else:
        target = np.sign(A @ x_true)
        target[target == 0] = 1.0
        target *= np.sign(rs.rand(m) - 0.1)
    A = sp.csc_matrix(A) if sparse else np.asfortranarray(A)
    return A, target
