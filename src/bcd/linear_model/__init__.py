"""Linear models with scikit-learn's interface, fitted by block coordinate descent.

Requires scikit-learn (``pip install 'bcd[sklearn]'``).  The estimators
minimize scikit-learn's objectives with the same parameter names and
scaling; the problems are :class:`bcd.LeastSquares`, :class:`bcd.Logistic`,
:class:`bcd.Multinomial`, :class:`bcd.Poisson` and :class:`bcd.LinearSVM`
solved by :func:`bcd.solve` with its automatic configuration.
"""
from .._optional import import_optional

import_optional("sklearn", "sklearn")

from ._coordinate_descent import ElasticNet, Lasso, NonNegativeLinearRegression  # noqa: E402
from ._cv import ElasticNetCV, LassoCV, LogisticRegressionCV  # noqa: E402
from ._glm import PoissonRegressor  # noqa: E402
from ._logistic import LogisticRegression  # noqa: E402
from ._ridge import Ridge  # noqa: E402
from ._svm import LinearSVC  # noqa: E402

__all__ = ["Lasso", "ElasticNet", "NonNegativeLinearRegression", "Ridge", "LogisticRegression",
           "PoissonRegressor", "LinearSVC", "LassoCV", "ElasticNetCV",
           "LogisticRegressionCV"]
