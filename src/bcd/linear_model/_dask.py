"""Fitting and predicting on dask arrays: the estimators route a dask array
through :func:`bcd.distributed.solve` on their ``client`` or the current
Dask client (CoCoA+ for L2 penalties, ProxCoCoA+ with an L1 part);
predictions on a dask array are dask arrays, computed block by block on the
workers."""
import copy

import numpy as np


class DaskClientMixin:
    """The ``client`` parameter of the estimators that fit dask arrays.

    A ``distributed.Client`` is a connection, shared and never copied:
    ``clone`` hands the same client to the clone (scikit-learn's default
    would deep-copy it, which a client does not support), and a pickled
    estimator leaves it out (``client`` is None after unpickling; the fitted
    attributes never hold it)."""

    def __sklearn_clone__(self):
        client = getattr(self, "client", None)
        if client is None:
            return super().__sklearn_clone__()
        # clone a shallow copy without the client (self is left alone), then
        # give the clone the same client
        proxy = copy.copy(self)
        proxy.client = None
        clone = super(DaskClientMixin, proxy).__sklearn_clone__()
        clone.client = client
        return clone

    def __getstate__(self):
        state = super().__getstate__()
        if state.get("client") is not None:
            state = dict(state)
            state["client"] = None
        return state


def resolve_client(client):
    """``client``, or the current Dask client when None; a ValueError
    when there is none, and a TypeError for anything but a client."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("fitting on a dask array needs pip install 'bcd[distributed]'.") \
            from exc
    if client is None:
        try:
            return distributed.get_client()
        except ValueError as exc:
            raise ValueError("fitting on a dask array needs a Dask client: pass client= to "
                             "the estimator or create a distributed.Client first (none is "
                             "current).") from exc
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be None or a distributed.Client, got "
                        f"{type(client).__name__}.")
    return client


def compute(client, x):
    """The dask collection ``x`` computed on ``client``."""
    return client.compute(x).result()


def is_dask_array(X):
    """Whether ``X`` is a dask array (without importing dask)."""
    return type(X).__module__.startswith("dask.array") and hasattr(X, "chunks")


def map_rows(method, X, width=None, dtype=np.float64):
    """``method`` applied to each row block of the dask array ``X``: a dask
    array of shape (n_samples,) or, with ``width``, (n_samples, width)."""
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: -1})
    if width is None:
        return X.map_blocks(method, drop_axis=1, dtype=dtype, meta=np.empty(0, dtype))
    return X.map_blocks(method, chunks=(X.chunks[0], (width,)), dtype=dtype,
                        meta=np.empty((0, 0), dtype))


def class_labels(estimator, X, y, client):
    """``(classes, y)`` of labels ``y`` (an array or a dask array with X's
    row chunks): the sorted classes (computed on ``client``) and ``y`` as a
    dask array; a ValueError naming the estimator with fewer than two."""
    import dask.array as da
    if getattr(y, "ndim", 1) != 1:
        raise ValueError(f"with a dask array X, y must be 1-d; got shape {y.shape}.")
    y = y if is_dask_array(y) else da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    classes = np.unique(np.asarray(compute(client, da.unique(y))))
    if classes.size < 2:
        raise ValueError(f"{type(estimator).__name__} needs samples of at least 2 classes; y "
                         f"has {classes.size}: {classes.tolist()[:10]}.")
    return classes, y


def class_indices(classes, y):
    """The index of each label of the dask array ``y`` in ``classes``, as
    a float64 dask array (block by block)."""
    return y.map_blocks(lambda b: np.searchsorted(classes, b).astype(np.float64),
                        dtype=np.float64, meta=np.empty(0, np.float64))


def class_weighted(class_weight, classes, y, sample_weight, client):
    """The sample weights of a fit on dask arrays with scikit-learn's
    ``class_weight`` folded in (None, a dict from label to weight, or
    "balanced", as :func:`._base.class_sample_weight` in memory): a dask
    array with the row chunks of the dask labels ``y`` (``sample_weight``
    stays as given when ``class_weight`` is None).  The class counts of
    "balanced" (weighted by ``sample_weight``) are computed on ``client``."""
    import dask.array as da
    from ._base import check_class_weight
    if class_weight is None:
        return sample_weight
    check_class_weight(class_weight, classes)
    idx = y.map_blocks(lambda b: np.searchsorted(classes, b), dtype=np.intp,
                       meta=np.empty(0, np.intp))
    sw = None
    if sample_weight is not None:
        sw = sample_weight if is_dask_array(sample_weight) else \
            da.from_array(np.asarray(sample_weight, dtype=np.float64), chunks=(y.chunks[0],))
        sw = sw.rechunk((y.chunks[0],)).astype(np.float64)
    if isinstance(class_weight, dict):
        per_class = np.array([float(class_weight.get(c, 1.0)) for c in classes.tolist()])
    else:
        # scikit-learn's "balanced": sum(w) / (n_classes * w_c), w_c the
        # (weighted) count of class c
        counts = np.asarray(compute(client, da.bincount(idx, weights=sw,
                                                        minlength=classes.size)),
                            dtype=np.float64)
        with np.errstate(divide="ignore"):
            per_class = counts.sum() / (classes.size * counts)
    weights = idx.map_blocks(lambda b: per_class[b], dtype=np.float64,
                             meta=np.empty(0, np.float64))
    return weights if sw is None else weights * sw


def binary_labels(estimator, X, y, client):
    """``(classes, labels, y)`` of a two-class ``y`` (an array or a dask
    array with X's row chunks): the two classes, y == classes[1] as a
    float64 dask array, and y as a dask array; a ValueError naming the
    estimator otherwise."""
    classes, y = class_labels(estimator, X, y, client)
    if classes.size != 2:
        raise ValueError(f"{type(estimator).__name__} on a dask array fits two classes; y has "
                         f"{classes.size}: {classes.tolist()[:10]}.")
    return classes, (y == classes[1]).astype(np.float64), y


def fit_penalized_intercept(estimator, X, y, sample_weight, loss, l1, l2, tol, max_iter,
                            scaling, client=None):
    """:func:`fit_distributed` of a model whose intercept is penalized, as
    liblinear's: the intercept is the coefficient of a last column of
    ``scaling`` (:func:`intercept_column`).  ``(coef, intercept, result)``
    with coef of X's n_features."""
    d = int(X.shape[1])
    coef, _, result = fit_distributed(estimator, intercept_column(X, scaling), y,
                                      sample_weight, loss, l1, l2, tol, max_iter,
                                      fit_intercept=False, client=client)
    estimator.n_features_in_ = d
    return coef[:d], float(scaling) * float(coef[d]), result


def intercept_column(X, scaling):
    """The dask array ``X`` (float64, one column chunk) with a last column
    of ``scaling``: the penalized intercept of liblinear's models."""
    import dask.array as da
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: -1})
    column = da.full((X.shape[0], 1), float(scaling), chunks=(X.chunks[0], 1),
                     dtype=np.float64)
    return da.concatenate([X.astype(np.float64), column], axis=1)


def fit_distributed(estimator, X, y, sample_weight, loss, l1, l2, tol, max_iter,
                    fit_intercept=None, client=None):
    """Solve the estimator's objective on the dask array ``X`` with
    :func:`bcd.distributed.solve` on ``client`` (by default the estimator's
    ``client`` parameter, or the current client); ``(coef, intercept,
    result)`` (for ``loss="multinomial"``, coef is the flat n_features x
    n_classes W and the intercept one per class).  The
    stopping test is the relative duality gap ``tol ** 2`` (the gap is
    quadratic in the distance to the optimum, as the KKT measure of ``tol``
    is linear).  ``fit_intercept`` overrides the estimator's (an intercept
    that the estimator penalizes is a column of X instead).  The
    estimator's ``max_time`` (if it has one) bounds the whole solve, the
    placing of the partitions included."""
    try:
        from .. import distributed as bd
    except ImportError as exc:  # pragma: no cover
        raise ImportError("fitting on a dask array needs pip install 'bcd[distributed]'.") \
            from exc
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d, got shape {X.shape}.")
    if getattr(y, "ndim", 1) != 1:
        raise ValueError("with a dask array X, y must be 1-d (one target or class labels).")
    if client is None:
        client = resolve_client(getattr(estimator, "client", None))
    result = bd.solve(X, y, loss=loss, client=client, l1=float(l1), l2=float(l2) if l2 > 0 else None,
                      sample_weight=sample_weight,
                      fit_intercept=estimator.fit_intercept if fit_intercept is None
                      else fit_intercept,
                      tol=float(tol) ** 2, relative=True,
                      max_rounds=int(max_iter) if max_iter else 500,
                      local_epochs=2, max_time=getattr(estimator, "max_time", None))
    estimator.n_features_in_ = int(X.shape[1])
    intercept = np.array(result.intercept) if np.ndim(result.intercept) else \
        float(result.intercept)
    return result.x.copy(), intercept, result
