"""Fitting and predicting on dask arrays: the estimators route a dask array
through :func:`bcd.distributed.solve` on the current Dask client (CoCoA+
for L2 penalties, ProxCoCoA+ with an L1 part); predictions on a dask array
are dask arrays, computed block by block on the workers."""
import numpy as np


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


def binary_labels(estimator, X, y):
    """``(classes, labels)`` of a two-class ``y`` (an array or a dask array
    with X's row chunks): the two classes, and y == classes[1] as a float64
    dask array; a ValueError naming the estimator otherwise."""
    import dask.array as da
    y = y if is_dask_array(y) else da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    classes = np.unique(np.asarray(da.unique(y).compute()))
    if classes.size != 2:
        raise ValueError(f"{type(estimator).__name__} on a dask array fits two classes; y has "
                         f"{classes.size}: {classes.tolist()[:10]}.")
    return classes, (y == classes[1]).astype(np.float64)


def fit_distributed(estimator, X, y, sample_weight, loss, l1, l2, tol, max_iter,
                    fit_intercept=None):
    """Solve the estimator's objective on the dask array ``X`` with
    :func:`bcd.distributed.solve`; ``(coef, intercept, result)``.  The
    stopping test is the relative duality gap ``tol ** 2`` (the gap is
    quadratic in the distance to the optimum, as the KKT measure of ``tol``
    is linear).  ``fit_intercept`` overrides the estimator's (an intercept
    that the estimator penalizes is a column of X instead)."""
    try:
        from .. import distributed as bd
    except ImportError as exc:  # pragma: no cover
        raise ImportError("fitting on a dask array needs pip install 'bcd[distributed]'.") \
            from exc
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d, got shape {X.shape}.")
    if getattr(y, "ndim", 1) != 1:
        raise ValueError("with a dask array X, y must be 1-d (one target or binary labels).")
    result = bd.solve(X, y, loss=loss, l1=float(l1), l2=float(l2) if l2 > 0 else None,
                      sample_weight=sample_weight,
                      fit_intercept=estimator.fit_intercept if fit_intercept is None
                      else fit_intercept,
                      tol=float(tol) ** 2, relative=True,
                      max_rounds=int(max_iter) if max_iter else 500,
                      local_epochs=2)
    estimator.n_features_in_ = int(X.shape[1])
    return result.x.copy(), float(result.intercept), result
