r"""Logistic regression: :class:`LogisticRegression`.

The estimator minimizes scikit-learn's objective

.. math::
    C \sum_i s_i \ell_i(w, w_0) + r(w)

(``r``: ``||w||^2 / 2``, ``||w||_1``, ``rho ||w||_1 + (1 - rho) ||w||^2 / 2``
or 0), which divided by ``C`` is the summed objective of
:class:`bcd.Logistic` (two classes) or :class:`bcd.Multinomial` (more) with
the L1 weight ``rho / C`` and the ridge weight ``(1 - rho) / C``.
"""
import contextlib
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from ..penalties import L1
from ..problems import Logistic, Multinomial
from ._dask import (DaskClientMixin, class_indices, class_labels, class_weighted,
                    fit_distributed, fit_penalized_intercept, is_dask_array, map_rows,
                    resolve_client)
from ._base import (SPARSE_FORMATS, BCDEstimator, LinearPredictorMixin, SolveRecord,
                    SparseCoefMixin, check_sample_weight, class_sample_weight, dense_coef,
                    design_matrix, svc_design, validate_data, verbose_options, weighted_sum)

try:                                    # scikit-learn >= 1.9: its (experimental) callbacks
    from sklearn.callback import CallbackSupportMixin
    from sklearn.callback._callback_support import callback_management_context
except ImportError:                     # pragma: no cover - older scikit-learn
    class CallbackSupportMixin:
        """No callbacks before scikit-learn 1.9."""

    def callback_management_context(estimator):
        return contextlib.nullcontext()

PENALTIES = ("l2", "l1", "elasticnet")


class IterationHooks:
    """scikit-learn's callback hooks (``sklearn.callback``) around the
    iterations of one solve, as :func:`bcd.solve`'s ``callback``.

    Each solver iteration as ``max_iter`` counts them (a pass over the
    coordinates, or a Newton step) is a subtask of the fit's context, named
    "iteration": it begins with the model where it starts and ends with the
    model it reaches (``fitted_estimator``: a copy of the estimator with
    that model).  The task begun after the last iteration is ended empty
    by :meth:`close`, as scikit-learn's lbfgs does."""

    def __init__(self, context, estimator, X, y, metadata, design, classes, dtype, x_start):
        self.context, self.estimator = context, estimator
        self.data = dict(X=X, y=y, metadata=metadata)
        self.design, self.classes, self.dtype = design, classes, dtype
        self.count = 0
        self.task = self._begin(x_start)

    def attributes(self, x):
        coef, intercept = self.design.model(x)
        return {"coef_": coef.astype(self.dtype), "intercept_": intercept.astype(self.dtype),
                "classes_": self.classes}

    def _begin(self, x):
        task = self.context.subcontext(task_name="iteration")
        task.call_on_fit_task_begin(estimator=self.estimator, **self.data,
                                    reconstruction_attributes=lambda: self.attributes(x))
        return task

    def __call__(self, info):
        self._end(info.x)

    def _end(self, x):
        self.task.call_on_fit_task_end(estimator=self.estimator, **self.data,
                                       reconstruction_attributes=lambda: self.attributes(x))
        self.count += 1
        self.task = self._begin(x)

    def close(self, x=None, n_iter=0):
        """End the hooks of a solve that returned ``x`` after ``n_iter``
        iterations: the solver calls its callback after every iteration
        but the one that meets the tolerance, which ends with ``x``."""
        if x is not None and self.count == n_iter - 1:
            self._end(x)
        self.task.call_on_fit_task_end(estimator=self.estimator)


def logistic_strengths(penalty, C, l1_ratio):
    """``(l1, l2)`` weights of the objective divided by ``C``."""
    C = float(C)
    if penalty is None or C == np.inf:
        return 0.0, 0.0
    if penalty == "l2":
        return 0.0, 1.0 / C
    if penalty == "l1":
        return 1.0 / C, 0.0
    if l1_ratio is None:
        raise ValueError("penalty='elasticnet' needs l1_ratio, a number in [0, 1].")
    return float(l1_ratio) / C, (1.0 - float(l1_ratio)) / C


def encode_classes(y):
    """``(classes, y_idx)``: the sorted labels and the index of each sample's
    label; ValueError unless there are two classes or more."""
    check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"This solver needs samples of at least 2 classes in the data, but "
                         f"the data contains only one class: {classes[0]!r}.")
    return classes, y_idx.ravel()


class LogisticDesign:
    """The data of a logistic fit (the design with its intercept column and
    the encoded labels), prepared once for any number of penalty strengths.

    Two classes give :class:`bcd.Logistic` (one weight vector), more give
    :class:`bcd.Multinomial` (one per class).  The intercept is an
    unpenalized column of ones (sparse ``X`` stays sparse).  Dense columns
    are centered in the problem's copy of ``X``: with an unpenalized
    intercept, ``w.(x - m) + c`` is the model ``w.x + b`` with ``b = c -
    w.m``, so the optimum is the same, and the solver meets columns that are
    far less correlated with the intercept column.

    With ``intercept_scaling`` (liblinear's model) the intercept column has
    that value and is penalized like the others, and nothing is centered
    (centering would change the penalized problem).  Classes absent from
    ``y_idx`` (a cross-validation fold) get a row of zeros of weight 0 each."""

    def __init__(self, X, y_idx, n_classes, sample_weight, fit_intercept,
                 intercept_scaling=None):
        y_idx = np.asarray(y_idx)
        missing = np.setdiff1d(np.arange(int(n_classes)), y_idx)
        if missing.size:
            # classes without a sample here (a cross-validation fold): one row
            # of zeros of weight 0 per absent class, so that the problem has
            # every class while its loss is that of the given rows
            zeros = np.zeros((missing.size, X.shape[1]), dtype=X.dtype)
            X = sp.vstack([X, sp.csr_matrix(zeros)], format=X.format) if sp.issparse(X) \
                else np.vstack([X, zeros])
            weights = np.ones(y_idx.size) if sample_weight is None else sample_weight
            sample_weight = np.r_[weights, np.zeros(missing.size)]
            y_idx = np.r_[y_idx, missing]
        self.n_samples, self.n_features = X.shape
        self.n_classes = int(n_classes)
        self.multinomial = self.n_classes > 2
        self.fit_intercept = bool(fit_intercept)
        self.sample_weight = sample_weight
        self.weight_sum = weighted_sum(sample_weight, self.n_samples)
        # liblinear's intercept: a synthetic feature of value intercept_scaling,
        # penalized like the others (None: a free, unpenalized intercept)
        self.bias = (float(intercept_scaling) if self.fit_intercept
                     and intercept_scaling is not None else None)
        self.offset = None
        if self.bias is not None:
            self.A = svc_design(X, True, self.bias)
        else:
            self.A = design_matrix(X, 1, fit_intercept)
        if self.fit_intercept and self.bias is None and not sp.issparse(X):
            sw = np.ones(self.n_samples) if sample_weight is None else sample_weight
            self.offset = np.average(self.A[:, :-1], axis=0, weights=sw)
            self.A[:, :-1] -= self.offset
        self.y_idx = np.asarray(y_idx)
        self.width = self.n_classes if self.multinomial else 1
        rows = self.n_features + int(self.fit_intercept)
        # 1 for the coefficients, 0 for the intercept (the last row)
        mask = np.ones((rows, self.width))
        if self.fit_intercept and self.bias is None:
            mask[-1] = 0.0
        self.penalized = mask.ravel()
        # the gradient of the weighted loss with respect to the coefficients
        # at w = 0 with the best intercept (without one: at 0): the smallest
        # L1 weight with the solution w = 0, the scale of the KKT tolerance
        sw = np.ones(self.n_samples) if sample_weight is None else sample_weight
        Y = np.zeros((self.n_samples, self.n_classes))
        Y[np.arange(self.n_samples), self.y_idx] = 1.0
        if not self.multinomial:
            Y = Y[:, 1:]
        if self.fit_intercept and self.bias is None:
            P = np.average(Y, axis=0, weights=sw)
        else:
            P = np.full(Y.shape[1], 0.5 if not self.multinomial else 1.0 / self.n_classes)
        G = np.asarray(X.T @ (sw[:, None] * (P - Y)))
        if self.bias is not None:
            # the penalized intercept column is a coefficient like the others
            G = np.vstack([G, self.bias * np.sum(sw[:, None] * (P - Y), axis=0)])
        self.scale = float(np.max(np.abs(G), initial=0.0))

    def problem(self, l1, l2):
        """The problem with L1 weight ``l1`` and ridge weight ``l2`` on the coefficients."""
        intercept = self.fit_intercept and self.bias is None    # an unpenalized one
        penalty = None
        if l1 > 0:
            penalty = L1(l1 * self.penalized if intercept else float(l1))
        ridge = l2 * self.penalized if (intercept and l2 > 0) else float(l2)
        kwargs = {}
        if self.sample_weight is not None:
            kwargs["sample_weight"] = self.sample_weight
        if self.multinomial:
            return Multinomial(self.A, self.y_idx, l2=ridge, penalty=penalty, **kwargs)
        return Logistic(self.A, (self.y_idx == 1).astype(np.float64), l2=ridge,
                        penalty=penalty, **kwargs)

    def kkt_tol(self, tol):
        """The KKT tolerance of the summed objective for the estimator's
        ``tol``: ``tol`` times the scale of the gradient at the zero model
        (``tol`` times the sum of the weights where that scale is 0)."""
        return float(tol) * (self.scale if self.scale > 0 else self.weight_sum)

    def model(self, x, centre_coef=False):
        """``(coef, intercept)`` of shapes (1 or n_classes, n_features) and
        (1 or n_classes,).  Multinomial intercepts are centered (the
        probabilities do not change); so are the coefficients of each
        feature with ``centre_coef`` (for an objective without penalty)."""
        W = np.asarray(x, dtype=np.float64).reshape(-1, self.width)
        d = self.n_features
        coef = W[:d].T.copy()
        intercept = W[d].copy() if self.fit_intercept else np.zeros(self.width)
        if self.bias is not None:
            intercept *= self.bias
        if self.offset is not None:
            intercept -= self.offset @ coef.T
        if self.multinomial:
            if self.fit_intercept:
                intercept -= intercept.mean()
            if centre_coef:
                coef -= coef.mean(axis=0)
        return coef, intercept

    def start(self, coef, intercept):
        """The problem's variable for a model (warm start)."""
        W = np.asarray(coef, dtype=np.float64).T
        if self.fit_intercept:
            b = np.asarray(intercept, dtype=np.float64).reshape(1, -1)
            if self.bias is not None:
                b = b / self.bias
            if self.offset is not None:
                b = b + self.offset @ W
            W = np.vstack([W, b])
        return np.ascontiguousarray(W).ravel()

    def fit(self, record, l1, l2, tol, max_iter, x0=None, callback=None):
        """Solve at the weights ``l1``, ``l2``: ``(coef, intercept, result)``;
        ``callback`` (a :func:`bcd.solve` callback) is called once per pass
        or Newton step (not through the dual)."""
        problem = self.problem(l1, l2)
        extra = {} if callback is None else {"callback": callback}
        result = record.solve(problem, x0, max_iter, self.solve_tol(record, problem, tol, l2),
                              **extra)
        coef, intercept = self.model(result.x, centre_coef=(l1 == 0 and l2 == 0))
        return coef, intercept, result

    def solve_tol(self, record, problem, tol, l2):
        """The tolerance of :func:`bcd.solve` for the estimator's ``tol``:
        the KKT tolerance ``t`` of :meth:`kkt_tol`, or, where the problem is
        solved through its dual (whose test is the duality gap), the gap
        ``t^2 / (2 l2)``.  A gradient of norm ``t`` bounds the distance to
        the optimum by ``t / l2`` (the ridge makes the objective
        ``l2``-strongly convex), and so does that gap: both tests promise
        the same accuracy of the coefficients."""
        t = self.kkt_tol(tol)
        if l2 > 0 and record.dual(problem):
            return t * t / (2.0 * float(l2))
        return t


class LinearClassifierMixin(ClassifierMixin, LinearPredictorMixin):
    """Predictions of a fitted linear classifier (``coef_``, ``intercept_``,
    ``classes_``): one score per class, or one for two classes."""

    def decision_function(self, X):
        """Decision scores: ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            The score of ``classes_[1]`` for two classes, else one column
            per class.
        """
        if is_dask_array(X):
            width = np.shape(self.coef_)[0]
            return map_rows(self.decision_function, X, None if width == 1 else width)
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``classes_[1]`` where the score is positive (two classes), else
            the class of the largest score.
        """
        if is_dask_array(X):
            return map_rows(self.predict, X, dtype=self.classes_.dtype)
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[index]


class LogisticClassifierMixin(LinearClassifierMixin):
    """Predictions of a fitted logistic model (``coef_``, ``intercept_``,
    ``classes_``), with class probabilities."""

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probabilities in the order of ``classes_``: the logistic
            function of the score for two classes, the softmax otherwise.
        """
        if is_dask_array(X):
            return map_rows(self.predict_proba, X, len(self.classes_))
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        return softmax(scores, axis=1)

    def _predict_proba_lr(self, X):
        """One-vs-rest probabilities, as scikit-learn's linear classifiers
        compute them: the logistic function of each class's score,
        normalized to sum to 1 (for two classes: that of the one score).
        Not the model's probabilities for more than two classes (those are
        :meth:`predict_proba`'s softmax); kept for code that calls
        scikit-learn's private method.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        p = expit(self.decision_function(X))
        if p.ndim == 1:
            return np.column_stack([1.0 - p, p])
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """Logarithms of the class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            ``log(predict_proba(X))``, computed without forming the
            probabilities.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        return log_softmax(scores, axis=1)


def validate_classification(estimator, X, y, sample_weight, sparse_formats=SPARSE_FORMATS,
                            dtype=(np.float64, np.float32)):
    """``(X, y, classes, y_idx, sample_weight)`` validated for ``fit``
    (``X`` of one of the types ``dtype``, converted to the first otherwise).

    With a ``solver`` scikit-learn runs on its own compiled code with 32-bit
    indices ("liblinear", "sag", "saga"), sparse matrices with 64-bit
    indices are refused as scikit-learn refuses them; with
    ``solver="liblinear"``, so are more than two classes (liblinear's
    one-vs-rest is not scikit-learn's model since 1.7)."""
    solver = getattr(estimator, "solver", "auto")
    X, y = validate_data(estimator, X, y, accept_sparse=sparse_formats, dtype=list(dtype),
                         multi_output=False,
                         accept_large_sparse=solver not in SMALL_INDEX_SOLVERS)
    classes, y_idx = encode_classes(y)
    if solver == "liblinear" and classes.size > 2:
        raise ValueError("The 'liblinear' solver does not support multiclass classification "
                         "(n_classes >= 3). Either use another solver or wrap the estimator "
                         "in a OneVsRestClassifier to keep applying a one-versus-rest scheme.")
    sw = check_sample_weight(sample_weight, X)
    return X, y, classes, y_idx, sw


#: scikit-learn's solvers that refuse sparse matrices with 64-bit indices
SMALL_INDEX_SOLVERS = ("liblinear", "sag", "saga")


def check_solver(solver, penalty, dual):
    """Refuse, with scikit-learn's ValueError, what a solver named after one
    of scikit-learn's does not fit in scikit-learn: a penalty other than L2
    or none except with "liblinear" and "saga", ``dual=True`` except with
    "liblinear", the elastic net except with "saga", and no penalty with
    "liblinear".  ``solver="auto"`` (bcd's choice) fits every combination.

    The same arguments then fail in the same way with either library; bcd
    would fit these combinations, but code written for scikit-learn never
    passes them, and code written for bcd names no solver."""
    if solver == "auto":
        return
    if solver not in ("liblinear", "saga") and penalty not in ("l2", None):
        raise ValueError(f"Solver {solver} supports only 'l2' or None penalties, got "
                         f"{penalty} penalty. (solver='auto' fits every penalty.)")
    if solver != "liblinear" and dual:
        raise ValueError(f"Solver {solver} supports only dual=False, got dual={dual}. "
                         f"(solver='auto' solves the L2 dual.)")
    if penalty == "elasticnet" and solver != "saga":
        raise ValueError(f"Only 'saga' solver supports elasticnet penalty, got solver={solver}. "
                         f"(solver='auto' fits it too.)")
    if solver == "liblinear" and penalty is None:
        raise ValueError("C=np.inf as well as penalty=None is not supported for the liblinear "
                         "solver. (solver='auto' fits the unpenalized model.)")


def check_liblinear_values(X):
    """scikit-learn's refusal of ``X.max() > 1e30`` with ``solver="liblinear"``."""
    if X.shape[0] * X.shape[1] and X.max() > 1e30:
        raise ValueError("Using the 'liblinear' solver while X contains a maximum value > 1e30 "
                         "results in a frozen fit. Please choose another solver or rescale the "
                         "input X.")


def resolve_penalty(penalty, C, l1_ratio, ratio_name="l1_ratio"):
    """scikit-learn's (>= 1.8) choice of the penalty: ``(name, C)``.

    With ``penalty="deprecated"`` (the default) ``l1_ratio`` alone selects
    it: 0 is "l2", 1 is "l1", in between "elasticnet", and ``C = inf`` means
    no penalty (None; ``l1_ratio=None`` is "l2" with a FutureWarning).  A
    ``penalty`` given explicitly is used with scikit-learn's FutureWarning
    of its deprecation, and its warnings for an ``l1_ratio`` that disagrees;
    ``penalty=None`` sets ``C = inf``."""
    C = float(C)
    if isinstance(penalty, str) and penalty == "deprecated":
        if l1_ratio is None:
            warnings.warn(f"'{ratio_name}=None' was deprecated in scikit-learn 1.8 and will "
                          f"trigger an error in 1.10. Use 0 <= {ratio_name} <= 1 instead.",
                          FutureWarning, stacklevel=3)
            name = "l2"
        elif l1_ratio == 0:
            name = "l2"
        elif l1_ratio == 1:
            name = "l1"
        else:
            name = "elasticnet"
        return (None if C == np.inf else name), C
    warnings.warn("'penalty' was deprecated in scikit-learn 1.8 and will be removed in 1.10. "
                  "To avoid this warning, leave 'penalty' set to its default value and use "
                  "'l1_ratio' or 'C' instead. Use l1_ratio=0 instead of penalty='l2', "
                  "l1_ratio=1 instead of penalty='l1', l1_ratio set to a float between 0 and "
                  "1 instead of penalty='elasticnet', and C=np.inf instead of penalty=None.",
                  FutureWarning, stacklevel=3)
    if penalty != "elasticnet" and l1_ratio is not None and 0 < l1_ratio < 1:
        warnings.warn(f"l1_ratio parameter is only used when penalty is 'elasticnet'. Got "
                      f"(penalty={penalty})", UserWarning, stacklevel=3)
    if (penalty == "l2" and l1_ratio != 0) or (penalty == "l1" and l1_ratio != 1):
        warnings.warn(f"Inconsistent values: penalty={penalty} with l1_ratio={l1_ratio}. "
                      f"penalty is deprecated. Please use l1_ratio only.", UserWarning,
                      stacklevel=3)
    if penalty == "elasticnet" and l1_ratio is None:
        raise ValueError("l1_ratio must be specified when penalty is elasticnet.")
    if penalty is None:
        if C != 1.0:
            warnings.warn("Setting penalty=None will ignore the C and l1_ratio parameters",
                          UserWarning, stacklevel=3)
        return None, np.inf
    return penalty, C


def liblinear_bias(estimator):
    """``intercept_scaling`` where the estimator fits liblinear's model (its
    ``solver`` is "liblinear"): the intercept is then a synthetic feature of
    that value, penalized like the coefficients; else None (a free
    intercept)."""
    return float(estimator.intercept_scaling) if estimator.solver == "liblinear" else None


def logistic_method(solver, dual, penalty):
    """The key of :data:`METHODS` for scikit-learn's ``solver`` and ``dual``."""
    if dual and penalty in ("l2", None) and solver in ("auto", "liblinear"):
        return "liblinear"
    if solver == "liblinear":
        return "liblinear-primal"      # liblinear's primal solvers: Newton methods
    return solver


#: scikit-learn's solver names, plus "auto"
SOLVERS = ("auto", "lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga")


class LogisticRegression(DaskClientMixin, CallbackSupportMixin, SparseCoefMixin, LogisticClassifierMixin,
                         BCDEstimator):
    r"""Logistic regression (binary or multinomial), fitted by block
    coordinate descent.

    Minimizes, as scikit-learn's ``LogisticRegression`` does,

    .. math::
        C \sum_i s_i \ell_i + r(w)

    where :math:`\ell_i` is the log-loss of sample ``i`` (binary for two
    classes, multinomial for more: then ``w`` holds one weight vector per
    class), the intercept is unpenalized and :math:`r(w) = \rho \|w\|_1 +
    (1 - \rho) \|w\|_2^2 / 2` with ``rho = l1_ratio`` (0: the L2 penalty, 1:
    the L1 penalty; ``C = np.inf``: no penalty).  Divided by ``C``, this is
    :class:`bcd.Logistic` or :class:`bcd.Multinomial` with the L1 weight
    ``rho / C`` and the ridge weight ``(1 - rho) / C``, solved by
    :func:`bcd.solve`.

    The parameters are scikit-learn's (1.8 and later), with its meaning;
    those naming scikit-learn's algorithms choose the closest bcd method:

    * ``solver="auto"`` (default): :func:`bcd.solve`'s automatic configuration;
    * ``"lbfgs"``, ``"newton-cg"``, ``"newton-cholesky"``: ``formulation="newton"``,
      Newton steps with inner coordinate descent (binary problems; multinomial
      ones get the automatic configuration);
    * ``"liblinear"``: liblinear's model, whose intercept is a synthetic
      feature of value ``intercept_scaling`` penalized like the coefficients;
      with ``dual=True`` (the L2 penalty) ``formulation="dual"``, dual
      coordinate ascent as liblinear's dual solver, else
      ``formulation="newton"``, as liblinear's primal solvers are Newton
      methods (trust-region Newton, newGLMNET);
    * ``"sag"``, ``"saga"``: primal coordinate descent in random order, one
      coordinate at a time.

    ``dual=True`` selects the dual (as ``"liblinear"``) for the L2 penalty.
    A solver named after one of scikit-learn's refuses, with scikit-learn's
    ValueError, the arguments scikit-learn refuses with it, so that code
    behaves the same with either library: the L1 penalty and the elastic
    net except with "liblinear" and "saga" (the elastic net: "saga" only),
    ``dual=True`` except with "liblinear", no penalty and more than two
    classes with "liblinear", ``X.max() > 1e30`` with "liblinear", sparse
    matrices with 64-bit indices with "liblinear", "sag" and "saga".
    ``solver="auto"`` fits every one of these.  With ``"liblinear"`` the
    model is float64 whatever the data, as in scikit-learn; the other
    solvers keep float32 data's dtype.

    Parameters
    ----------
    penalty : {"l1", "l2", "elasticnet"} or None, default="deprecated"
        Deprecated in scikit-learn 1.8 (a FutureWarning when given): use
        ``l1_ratio`` and ``C``.  ``"l2"``, ``"l1"`` and ``"elasticnet"``
        force the penalty; None means no penalty (``C`` ignored).
    C : float, default=1.0
        Inverse of the regularization strength (> 0); ``np.inf``: no penalty.
    l1_ratio : float, default=0.0
        The L1 share ``rho`` in [0, 1]; alone, it selects the penalty (0:
        L2, 1: L1).  None is deprecated (L2, with a FutureWarning).
    dual : bool, default=False
        Solve the L2-penalized problem through its dual (dual coordinate
        ascent); ignored for other penalties.
    tol : float, default=1e-4
        Relative tolerance (>= 0; 0 runs to ``max_iter`` or the rounding
        floor): the solver stops when the KKT residual of the objective
        divided by ``C`` (the largest distance of a partial derivative to the
        subdifferential) is at most ``tol`` times the largest partial
        derivative of the weighted loss with respect to a coefficient at the
        zero model with the best intercept, :math:`\|X^T S (\bar p -
        Y)\|_\infty` (``Y``: the one-hot labels, :math:`\bar p`: the weighted
        class frequencies, or 1/2 and ``1 / n_classes`` without intercept).
        Like liblinear's, the test is relative to the gradient at the start.
        Through the dual, whose test is the duality gap of the summed
        objective, that number ``t`` becomes the gap ``t^2 / (2 / C)``,
        which bounds the distance to the optimum as the KKT test does.
    fit_intercept : bool, default=True
        Fit an intercept (an extra column of ones, unpenalized; with
        ``solver="liblinear"`` a penalized column of ``intercept_scaling``;
        sparse data are never densified).  Multinomial intercepts are reported centered,
        which leaves the probabilities unchanged.
    intercept_scaling : float, default=1
        With ``solver="liblinear"``, as in scikit-learn: the intercept is
        ``intercept_scaling`` times the weight of a synthetic feature of
        that value, penalized like the coefficients (a larger value
        penalizes the intercept less).  No effect with the other solvers,
        whose intercept is free.
    class_weight : dict or "balanced", default=None
        Weights of the classes, multiplied into the sample weights
        (``"balanced"``: ``n_samples / (n_classes * bincount(y))``).
    random_state : int, RandomState instance or None, default=None
        Seed of the random coordinate orders (None: a fixed seed, so that
        fits are reproducible).
    solver : str, default="auto"
        The method: "auto", "lbfgs", "liblinear", "newton-cg",
        "newton-cholesky", "sag" or "saga", mapped as listed above (with
        scikit-learn's refusals).
    max_iter : int, default=1000
        Maximum number of passes over the coordinates (primal coordinate
        descent: ``max_iter * n_coordinates`` block updates), over the
        samples (dual) or of Newton steps; 0 returns the starting point
        (zeros, or the previous model with ``warm_start``) with a
        ConvergenceWarning.
    verbose : int, default=0
        Print the solver's progress when positive.
    warm_start : bool, default=False
        Start from the current ``coef_`` and ``intercept_`` (fitted or set
        by hand) when their shapes fit.
    n_jobs : int, default=None
        Has no effect (one problem is solved); deprecated in scikit-learn
        1.8, so a value other than None gives its FutureWarning.
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve`; they override the
        method above, and ``tol`` and ``max_iter`` given here replace the
        values derived from the estimator's.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs), or None for no limit.  When it runs out the fit stops
        and keeps the best state reached, with a ``ConvergenceWarning``
        saying so; Ctrl-C ends a fit of several solves with
        ``KeyboardInterrupt`` at once, and the estimator is left as it was.

    client : distributed.Client, default=None
        The Dask client that fits a dask array ``X`` (through
        :func:`bcd.distributed.solve`); None: the current client (a ValueError
        when there is none).  Unused for in-memory data.  A clone shares the
        client; a pickled estimator leaves it out (None after unpickling).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients (one row for two classes: those of ``classes_[1]``).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts (zeros without ``fit_intercept``).
    n_iter_ : ndarray of shape (1,)
        Iterations of the solver, as ``max_iter`` counts them: passes over
        the coordinates (primal coordinate descent, rounded up), over the
        samples (dual) or Newton steps; 0 when ``max_iter=0``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    LogisticRegressionCV : ``C`` chosen by cross-validation.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import LogisticRegression
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [3.0, 1.0],
    ...               [0.5, 3.0], [2.5, 0.0]])
    >>> y = np.array([0, 0, 1, 1, 0, 1])
    >>> model = LogisticRegression(C=10.0).fit(X, y)
    >>> model.predict(X)
    array([0, 0, 1, 1, 0, 1])
    >>> model.predict_proba(X[:2]).round(3)
    array([[0.991, 0.009],
           [0.853, 0.147]])

    ``l1_ratio=1`` alone is the L1 penalty:

    >>> sparse = LogisticRegression(l1_ratio=1.0, C=0.5).fit(X, y)
    >>> int(np.count_nonzero(sparse.coef_))
    1
    """

    _parameter_constraints = {
        "penalty": [StrOptions(set(PENALTIES) | {"deprecated"}), None],
        "C": [Interval(numbers.Real, 0, None, closed="right")],
        "l1_ratio": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "dual": ["boolean"],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "random_state": ["random_state"],
        "solver": [StrOptions(set(SOLVERS))],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "n_jobs": [None, numbers.Integral],
        "solver_options": [dict, None],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "client": "no_validation",
    }

    def __init__(self, penalty="deprecated", *, C=1.0, l1_ratio=0.0, dual=False, tol=1e-4,
                 fit_intercept=True, intercept_scaling=1, class_weight=None, random_state=None,
                 solver="auto", max_iter=1000, verbose=0, warm_start=False, n_jobs=None,
                 solver_options=None, max_time=None,
                 client=None):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.solver_options = solver_options
        self.max_time = max_time
        self.client = client

    def fit(self, X, y, sample_weight=None):
        """Fit the model by block coordinate descent.

        With scikit-learn's callbacks (``set_callbacks``, scikit-learn 1.9's
        experimental ``sklearn.callback``), the fit is a task whose
        subtasks are the solver's iterations (passes over the coordinates or
        Newton steps; none through the dual), each hook given the model
        reached as ``fitted_estimator``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,)
            Class labels (two classes or more).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples' losses (multiplied by the
            ``class_weight`` of their class).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        # scikit-learn's callbacks: torn down however the fit ends (a context
        # manager rather than a decorator, so that warnings point at the caller)
        with callback_management_context(self):
            self._validate_params()
            penalty, C = resolve_penalty(self.penalty, self.C, self.l1_ratio)
            check_solver(self.solver, penalty, self.dual)
            l1, l2 = logistic_strengths(penalty, C, self.l1_ratio)
            if self.n_jobs is not None:
                warnings.warn(f"'n_jobs' has no effect since scikit-learn 1.8 and will be "
                              f"removed in 1.10. You provided 'n_jobs={self.n_jobs}', please "
                              f"leave it unspecified.", FutureWarning, stacklevel=2)
            if is_dask_array(X):
                return self._fit_dask(X, y, sample_weight, l1, l2)
            X, y, classes, y_idx, sw = validate_classification(self, X, y, sample_weight)
            if self.solver == "liblinear":
                check_liblinear_values(X)
            sw = class_sample_weight(self.class_weight, classes, y_idx, sw)
            design = LogisticDesign(X, y_idx, classes.size, sw, self.fit_intercept,
                                    liblinear_bias(self))
            x0 = None
            previous = getattr(self, "coef_", None)
            if self.warm_start and previous is not None:
                previous = dense_coef(previous)
                intercept = getattr(self, "intercept_", None)
                if intercept is None or not self.fit_intercept:
                    intercept = np.zeros(design.width)
                if np.shape(previous) == (design.width, X.shape[1]) \
                        and np.size(intercept) == design.width:
                    x0 = design.start(previous, intercept)
            record = SolveRecord(self, verbose_options(self.solver_options, self.verbose),
                                 method=logistic_method(self.solver, self.dual, penalty),
                                 random_state=self.random_state)
            # float32 data keep their dtype, except with liblinear, whose
            # scikit-learn models are float64 whatever the data
            dtype = np.float64 if self.solver == "liblinear" else X.dtype
            start = np.zeros(design.A.shape[1] * design.width) if x0 is None else x0
            hooks = None
            if getattr(self, "_skl_callbacks", None) or hasattr(self, "_parent_callback_ctx"):
                context = self._init_callback_context(max_subtasks=max(self.max_iter, 1) + 1)
                metadata = None if sample_weight is None else {"sample_weight": sw}
                context.call_on_fit_task_begin(estimator=self, X=X, y=y, metadata=metadata)
                hooks = IterationHooks(context, self, X, y, metadata, design, classes, dtype,
                                       start)
            final = None
            if self.max_iter == 0 and "max_iter" not in (self.solver_options or {}):
                # no iteration: the starting model (whatever the method's own start)
                coef, intercept = design.model(start)
                warnings.warn(f"{type(self).__name__}: max_iter=0: the model is the starting "
                              f"point. The max_iter was reached which means the coef_ did not "
                              f"converge.", ConvergenceWarning, stacklevel=2)
            else:
                coef, intercept, result = design.fit(record, l1, l2, self.tol, self.max_iter, x0,
                                                     callback=hooks)
                final = result.x
            if hooks is not None:
                hooks.close(final, record.n_passes)
            record.warn()
            self.classes_ = classes
            self.coef_ = coef.astype(dtype)
            self.intercept_ = intercept.astype(dtype)
            self.n_iter_ = np.array([record.n_passes])
            if hooks is not None:
                model = {"coef_": self.coef_, "intercept_": self.intercept_,
                         "classes_": classes}
                context.call_on_fit_task_end(estimator=self, X=X, y=y, metadata=metadata,
                                             reconstruction_attributes=model)
            return self

    def _fit_dask(self, X, y, sample_weight, l1, l2):
        """``fit`` on a dask array through bcd.distributed (CoCoA+, or
        ProxCoCoA+ with an L1 part): the logistic loss for two classes, the
        multinomial (softmax) loss for more, whose intercepts are reported
        centered as in memory."""
        client = resolve_client(self.client)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {X.shape}.")
        classes, y = class_labels(self, X, y, client)
        sample_weight = class_weighted(self.class_weight, classes, y, sample_weight, client)
        if classes.size == 2:
            labels = (y == classes[1]).astype(np.float64)
            if self.solver == "liblinear" and self.fit_intercept:
                # liblinear penalizes its intercept, as in memory
                coef, intercept, result = fit_penalized_intercept(
                    self, X, labels, sample_weight, "logistic", l1, l2, self.tol,
                    self.max_iter, self.intercept_scaling, client=client)
            else:
                coef, intercept, result = fit_distributed(self, X, labels, sample_weight,
                                                          "logistic", l1, l2, self.tol,
                                                          self.max_iter, client=client)
            coef, intercept = coef.reshape(1, -1), np.array([intercept])
        else:
            if l1 > 0:
                raise ValueError(f"LogisticRegression on a dask array with {classes.size} "
                                 f"classes (the multinomial model) fits an L2 penalty only; "
                                 f"got an L1 part (l1_ratio={self.l1_ratio!r}).")
            coef, intercept, result = fit_distributed(self, X, class_indices(classes, y),
                                                      sample_weight, "multinomial", 0.0, l2,
                                                      self.tol, self.max_iter, client=client)
            coef = coef.reshape(int(X.shape[1]), classes.size).T.copy()
            intercept = np.asarray(intercept, dtype=np.float64)
            intercept = intercept - intercept.mean() if self.fit_intercept else \
                np.zeros(classes.size)
        self.classes_ = classes
        self.coef_ = coef
        self.intercept_ = intercept
        self.n_iter_ = np.array([result.n_rounds])
        return self
