"""Input checking shared by problems and the solver."""
import numbers
import os

import numpy as np
import scipy.sparse as sp


def check_matrix(A, name="A"):
    """Validate a data matrix and return it in the layout the compiled problems read.

    Returns ``(M, dtype)`` where ``M`` is either a Fortran-ordered float64
    array or a canonical float64 CSC matrix with int32 indices, and
    ``dtype`` is the floating type results are returned in (float32 for
    float32 input, float64 otherwise).  The caller's object is never
    modified: a conversion that would change it makes a copy.
    """
    if sp.issparse(A):
        if A.ndim != 2:
            raise ValueError(f"{name} must be 2-dimensional, got shape {A.shape}.")
        _check_dtype(A.dtype, name)
        out_dtype = result_dtype(A.dtype)
        if A.shape[0] == 0 or A.shape[1] == 0:
            raise ValueError(f"{name} must be non-empty, got shape {A.shape}.")
        if A.format == "csc" and A.dtype == np.float64 and A.has_canonical_format \
                and A.indices.dtype == np.int32 and A.indptr.dtype == np.int32:
            M = A
        else:
            M = sp.csc_matrix(A, dtype=np.float64, copy=True)
            M.sum_duplicates()
            M.sort_indices()
            if M.nnz >= 2**31 - 1:
                raise ValueError(f"{name} has {M.nnz} stored entries; at most 2**31 - 2 are supported.")
            M.indices = M.indices.astype(np.int32, copy=False)
            M.indptr = M.indptr.astype(np.int32, copy=False)
        if not np.all(np.isfinite(M.data)):
            raise ValueError(f"{name} contains NaN or infinity.")
        return M, out_dtype
    _reject_masked(A, name)
    arr = np.asarray(A)
    _check_dtype(arr.dtype, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-dimensional array or sparse matrix, got {arr.ndim} dimension(s).")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}.")
    out_dtype = result_dtype(arr.dtype)
    M = np.asfortranarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return M, out_dtype


def result_dtype(dtype):
    """The dtype results are returned in for input of ``dtype``: float32 for
    single precision in either byte order, float64 otherwise."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.kind == "f" and dtype.itemsize == 4 \
        else np.dtype(np.float64)


def _reject_masked(v, name):
    if isinstance(v, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array; bcd does not read masks.  Pass "
                        f"{name}.filled(value) or drop the masked entries.")


def _check_dtype(dtype, name):
    if dtype == object or not (np.issubdtype(dtype, np.number) or dtype == np.bool_):
        raise TypeError(f"{name} must hold real numbers, got dtype {dtype}.")
    if np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got complex dtype {dtype}.")


def check_vector(v, name, length=None):
    """Validate a finite 1-D real vector; returns a new float64 array."""
    if sp.issparse(v):
        v = v.toarray()
    _reject_masked(v, name)
    arr = np.asarray(v)
    _check_dtype(arr.dtype, name)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} has length {arr.shape[0]}, expected {length}.")
    out = np.array(arr, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return out


def check_scalar(value, name, *, low=None, high=None, low_inclusive=True, integer=False,
                 allow_none=False):
    """Validate a real (or integer) scalar within bounds and return it."""
    if value is None and allow_none:
        return None
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if integer else "a real number"
        raise TypeError(f"{name} must be {what}, got {value!r}.")
    if not integer and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value!r}.")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}.")
    return int(value) if integer else float(value)


def check_ridge(l2, n):
    """Validate ridge weights: a scalar (returned as float) or one
    non-negative weight per coordinate (returned as a read-only float64
    array of length ``n``)."""
    if np.ndim(l2) == 0 and not sp.issparse(l2):
        return check_scalar(l2.item() if isinstance(l2, np.ndarray) else l2, "l2", low=0.0)
    w = check_vector(l2, "l2", n)
    if np.any(w < 0):
        raise ValueError("l2 must be >= 0 for every coordinate; got negative weights.")
    w.setflags(write=False)
    return w


def check_sample_weight(sample_weight, n_samples):
    """Validate sample weights (None: all ones): non-negative, finite, of
    length ``n_samples`` and with a positive sum; returns float64 or None."""
    if sample_weight is None:
        return None
    s = check_vector(sample_weight, "sample_weight", n_samples)
    if np.any(s < 0):
        raise ValueError("sample_weight must be >= 0 for every sample; got negative weights.")
    if not np.any(s > 0):
        raise ValueError("sample_weight must have a positive sum; got all zeros.")
    s.setflags(write=False)
    return s


def check_solver_options(options, reserved, why):
    """An estimator's ``solver_options``: None or a dict of options of
    :func:`bcd.solve`, none of them in ``reserved`` (the estimator sets
    those; ``why`` says how).  Returns a new dict."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"solver_options must be a dict of options of bcd.solve or None, "
                        f"got {type(options).__name__}.")
    taken = sorted(set(options) & set(reserved))
    if taken:
        raise ValueError(f"solver_options may not set {', '.join(map(repr, taken))}: {why}.")
    return dict(options)


def check_random_state(seed):
    """Turn None, an int, a RandomState or a Generator into a RandomState-like source."""
    if seed is None:
        return np.random.RandomState()
    if isinstance(seed, (np.random.RandomState, np.random.Generator)):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return np.random.RandomState(int(seed))
    raise TypeError(f"random_state must be None, an int, a numpy RandomState or Generator; got {seed!r}.")


class LazyRandomState:
    """``np.random.RandomState(seed)``, created only when a draw needs it.

    Seeding a legacy RandomState costs far more than a small solve (hundreds
    of microseconds), and most solves draw only seed words for their
    compiled generators from it: :func:`seed_words` of a ``LazyRandomState``
    returns the words the RandomState would give, from a per-seed cache; any
    other draw gets the RandomState advanced past the words already taken,
    so the stream is the same as with the RandomState itself."""

    __slots__ = ("seed", "_rs", "_words_drawn")

    def __init__(self, seed):
        self.seed = int(seed)
        self._rs = None
        self._words_drawn = 0

    @property
    def random_state(self):
        if self._rs is None:
            self._rs = np.random.RandomState(self.seed)
            for _ in range(self._words_drawn):
                _draw_words(self._rs)
        return self._rs

    def __getattr__(self, name):
        return getattr(self.random_state, name)


class LazyEntropy:
    """``np.random.default_rng()`` (fresh entropy), created only when a draw
    needs it.

    Creating a Generator costs tens of microseconds, a good share of a small
    solve, and most solves only take seed words for their compiled
    generators: :func:`seed_words` of a ``LazyEntropy`` draws them from the
    operating system's entropy (as the Generator would be seeded); any other
    draw gets the Generator."""

    __slots__ = ("_rng",)

    def __init__(self):
        self._rng = None

    @property
    def generator(self):
        if self._rng is None:
            self._rng = np.random.default_rng()
        return self._rng

    def __getattr__(self, name):
        return getattr(self.generator, name)


#: per seed, the first seed words of RandomState(seed)
_SEED_WORDS = {}
#: the 63 low bits (seed words are non-negative int64)
_WORD_MASK = (1 << 63) - 1
_CACHED_WORDS = 8


def _draw_words(rs):
    hi = np.iinfo(np.int64).max
    if isinstance(rs, np.random.Generator):
        return tuple(int(v) for v in rs.integers(0, hi, size=2))
    return tuple(int(v) for v in rs.randint(0, hi, size=2, dtype=np.int64))


def seed_words(random_state):
    """Two 63-bit integers drawn from ``random_state`` to seed compiled RNGs."""
    if isinstance(random_state, LazyEntropy):
        if random_state._rng is None:
            # two fresh 63-bit words, as unpredictable as a fresh Generator's
            raw = int.from_bytes(os.urandom(16), "little")
            return (raw & _WORD_MASK, (raw >> 64) & _WORD_MASK)
        random_state = random_state._rng
    if isinstance(random_state, LazyRandomState):
        k = random_state._words_drawn
        if random_state._rs is None and k < _CACHED_WORDS:
            seed = random_state.seed
            words = _SEED_WORDS.get(seed)
            if words is None:
                if len(_SEED_WORDS) > 1024:
                    _SEED_WORDS.clear()
                rs = np.random.RandomState(seed)
                words = _SEED_WORDS[seed] = [_draw_words(rs) for _ in range(_CACHED_WORDS)]
            random_state._words_drawn = k + 1
            return words[k]
        words = _draw_words(random_state.random_state)
        random_state._words_drawn = k + 1
        return words
    rs = check_random_state(random_state)
    hi = np.iinfo(np.int64).max
    if isinstance(rs, np.random.Generator):
        return tuple(int(v) for v in rs.integers(0, hi, size=2))
    return tuple(int(v) for v in rs.randint(0, hi, size=2, dtype=np.int64))


def check_symmetric(M, name, dtype=np.float64):
    """Raise ValueError unless M equals its transpose up to the rounding of
    ``dtype`` (the precision of the caller's data)."""
    diff = abs(M - M.T)
    scale = abs(M).max() if sp.issparse(M) else np.max(np.abs(M))
    worst = diff.max() if sp.issparse(diff) else np.max(diff)
    rtol = 1e-12 if np.dtype(dtype) == np.float64 else 1e-5
    if worst > rtol * max(scale, 1e-300):
        raise ValueError(f"{name} must be symmetric; max |{name} - {name}.T| = {worst:.3g}.")
