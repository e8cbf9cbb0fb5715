"""What the scikit-learn estimators share; imports scikit-learn."""
try:                                    # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:                     # pragma: no cover - older scikit-learn
    _sk_validate_data = None


def validate_data(estimator, X, y="no_validation", reset=True, **check_params):
    """scikit-learn's ``validate_data`` (``estimator._validate_data`` before 1.6)."""
    if _sk_validate_data is not None:
        return _sk_validate_data(estimator, X, y, reset=reset, **check_params)
    return estimator._validate_data(X, y, reset=reset, **check_params)  # pragma: no cover
