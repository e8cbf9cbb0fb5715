"""Linear models with scikit-learn's interface, fitted by block coordinate descent.

Requires scikit-learn (``pip install 'bcd[sklearn]'``).  The estimators
minimize scikit-learn's objectives with the same parameter names and
scaling; the problems are :class:`bcd.LeastSquares`, :class:`bcd.Logistic`
and :class:`bcd.Multinomial` solved by :func:`bcd.solve` with its automatic
configuration.
"""
from .._optional import import_optional

import_optional("sklearn", "sklearn")

from ._coordinate_descent import ElasticNet, Lasso, NonNegativeLinearRegression  # noqa: E402
from ._cv import LassoCV, LogisticRegressionCV  # noqa: E402
from ._logistic import LogisticRegression  # noqa: E402

__all__ = ["Lasso", "ElasticNet", "NonNegativeLinearRegression", "LogisticRegression",
           "LassoCV", "LogisticRegressionCV"]
