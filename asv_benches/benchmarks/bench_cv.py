"""Cross-validated linear estimators against scikit-learn's, and the fixed
cost of one :func:`bcd.solve`.

* ``CVEstimators``: ``LassoCV``, ``ElasticNetCV`` and ``LogisticRegressionCV``
  of bcd and scikit-learn on the same data, the same grid (100 alphas with
  ``eps=1e-3``; 10 Cs from 1e-4 to 1e4) and the same folds (5-fold ``KFold``
  / ``StratifiedKFold``), on dense 500 x 200, dense 2000 x 500 and the 20
  Newsgroups autos/electronics tf-idf matrix (2000 x 29363, see
  ``bench_text.text_dataset``).  ``track_ratio`` is bcd's time over
  scikit-learn's (median of repeats, one process); ``track_score_gain`` is
  bcd's best mean validation score minus scikit-learn's (negative mean
  squared error for the regressions, accuracy for the classifier), which
  should be >= 0 up to noise.
* ``SolveFixedCost``: one ``bcd.solve`` of a 50 x 20 Lasso started at its
  solution, so that almost all of the time is the fixed cost (validation,
  configuration, assembly, the result).
* ``PathFixedCost``: the same at one grid value of the compiled paths the
  cross-validated estimators run (``bcd.core.enetpath``: one call of
  ``EnetPath.solve`` or ``LogisticPath.solve`` started at the solution),
  the fixed cost each grid value of a fold pays.

``python -m asv_benches.cv`` prints the table.
"""
import functools
import time
import warnings

import numpy as np

import bcd

from .common import median


def _dense(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[:10] = rng.standard_normal(10) * 2
    y = X @ w + rng.standard_normal(n)
    return X, y


@functools.lru_cache(maxsize=None)
def dataset(name):
    """``(X, y_regression, y_classes)``."""
    if name == "dense 500x200":
        X, y = _dense(500, 200, 0)
    elif name == "dense 2000x500":
        X, y = _dense(2000, 500, 1)
    else:
        from .bench_text import text_dataset
        X, labels = text_dataset()
        X = X.tocsr()
        return X, np.asarray(labels, dtype=np.float64), (np.asarray(labels) > 0).astype(int)
    return X, y, (y > np.median(y)).astype(int)


DATASETS = ["dense 500x200", "dense 2000x500", "20newsgroups tf-idf"]
ESTIMATORS = ["LassoCV", "ElasticNetCV", "LogisticRegressionCV"]


def make_pair(estimator):
    """``(bcd_estimator, sklearn_estimator, kind)`` with the same grid and folds."""
    import sklearn.linear_model as sk
    from sklearn.model_selection import KFold, StratifiedKFold

    import bcd.linear_model as ours
    if estimator == "LassoCV":
        kwargs = dict(alphas=100, eps=1e-3, cv=KFold(5), tol=1e-4)
        return ours.LassoCV(**kwargs), sk.LassoCV(**kwargs), "regression"
    if estimator == "ElasticNetCV":
        kwargs = dict(l1_ratio=0.5, alphas=100, eps=1e-3, cv=KFold(5), tol=1e-4)
        return ours.ElasticNetCV(**kwargs), sk.ElasticNetCV(**kwargs), "regression"
    kwargs = dict(Cs=10, cv=StratifiedKFold(5), l1_ratios=(0.0,), scoring="accuracy",
                  use_legacy_attributes=False, tol=1e-4)
    return (ours.LogisticRegressionCV(**kwargs), sk.LogisticRegressionCV(**kwargs),
            "classification")


def best_score(model, kind):
    """The best mean validation score of a fitted CV estimator (higher is better)."""
    if kind == "regression":
        return -float(np.min(np.mean(model.mse_path_, axis=-1)))
    return float(np.max(np.mean(model.scores_, axis=0)))


def compare(dataset_name, estimator, repeats=3):
    """``(bcd_seconds, sklearn_seconds, bcd_score, sklearn_score)``, medians."""
    X, y_reg, y_cls = dataset(dataset_name)
    ours, ref, kind = make_pair(estimator)
    y = y_reg if kind == "regression" else y_cls
    times = {"bcd": [], "sklearn": []}
    scores = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            for key, model in (("bcd", ours), ("sklearn", ref)):
                t0 = time.perf_counter()
                model.fit(X, y)
                times[key].append(time.perf_counter() - t0)
                scores[key] = best_score(model, kind)
    return median(times["bcd"]), median(times["sklearn"]), scores["bcd"], scores["sklearn"]


class CVEstimators:
    params = (DATASETS, ESTIMATORS)
    param_names = ["dataset", "estimator"]
    timeout = 600

    def setup(self, dataset_name, estimator):
        if dataset_name.startswith("20newsgroups"):
            from .bench_text import require_text_data
            require_text_data()
        dataset(dataset_name)

    def track_ratio(self, dataset_name, estimator):
        ours, ref, _, _ = compare(dataset_name, estimator, repeats=1)
        return ours / ref

    def track_score_gain(self, dataset_name, estimator):
        _, _, ours, ref = compare(dataset_name, estimator, repeats=1)
        return ours - ref


def fixed_cost_problem():
    """A 50 x 20 Lasso and its solution."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 20))
    b = rng.standard_normal(50)
    lam = 0.3 * float(np.max(np.abs(A.T @ b)))
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam))
    x = bcd.solve(problem, tol=1e-12, warn=False).x
    return problem, x


def fixed_cost(repeats=7, number=200):
    """Median seconds of one ``bcd.solve`` started at the solution."""
    problem, x = fixed_cost_problem()
    for _ in range(20):
        bcd.solve(problem, x0=x, tol=1e-6, warn=False)
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            bcd.solve(problem, x0=x, tol=1e-6, warn=False)
        runs.append((time.perf_counter() - t0) / number)
    return median(runs)


class SolveFixedCost:
    def setup(self):
        self.problem, self.x = fixed_cost_problem()

    def time_solve_at_solution(self):
        bcd.solve(self.problem, x0=self.x, tol=1e-6, warn=False)


def path_fixed_cost(kind="lasso", repeats=7, number=2000):
    """Median seconds of one compiled path solve (``kind`` "lasso": an
    ``EnetPath`` on the 50 x 20 Lasso of :func:`fixed_cost_problem`;
    "logistic": a ``LogisticPath`` on 50 x 20 labels, L2) started at the
    solution."""
    from bcd.core.enetpath import EnetPath, LogisticPath

    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 20))
    b = rng.standard_normal(50)
    if kind == "lasso":
        lam = 0.3 * float(np.max(np.abs(A.T @ b)))
        solver = EnetPath(A, b, precompute=False)
        args = (lam, 0.0, 1e-6 * float(b @ b), 1e-4, 1000)
    else:
        solver = LogisticPath(A, (b > 0).astype(float))
        args = (0.0, 1.0, 1e-6, 100)
    solver.solve(*args[:2], 1e-12 * (float(b @ b) if kind == "lasso" else 1.0), *args[3:])
    for _ in range(20):
        solver.solve(*args)
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            solver.solve(*args)
        runs.append((time.perf_counter() - t0) / number)
    return median(runs)


class PathFixedCost:
    params = (["lasso", "logistic"],)
    param_names = ["kind"]

    def track_path_solve_microseconds(self, kind):
        return path_fixed_cost(kind, repeats=3, number=500) * 1e6

    track_path_solve_microseconds.unit = "us"
