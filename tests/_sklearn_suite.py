"""Run scikit-learn's own test modules with the estimator imports switched to bcd.

The modules come from the installed scikit-learn (its wheel ships them).  Each
is copied to a temporary directory, the imports of the estimators bcd
provides are rebound to bcd's classes right after the module's own imports,
and pytest runs the copy in a subprocess with a small plugin that records,
for every test item, its outcome and whether it built a bcd estimator (an
instance created while it ran, or one among its parameters).

Run as a script to print the counts::

    python tests/_sklearn_suite.py [coordinate_descent|logistic|label_propagation] [--verbose]

The excluded items (``EXCLUDED``: tests of scikit-learn's internals and private
functions) run too, so that it is known which build a bcd estimator, and count
as failures whatever their outcome; ``KNOWN_FAILURES`` gives the reasons of the
other items that fail.
"""
import ast
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

#: per module: the path inside scikit-learn, the statements that rebind the
#: estimators to bcd's, and the excluded items (node-id prefixes after the
#: module name) with the reason
MODULES = {
    "coordinate_descent": {
        "path": "linear_model/tests/test_coordinate_descent.py",
        "names": ("ElasticNet", "ElasticNetCV", "Lasso", "LassoCV"),
        "rebind": textwrap.dedent("""\
            import bcd.linear_model as _bcd_lm
            for _name in ("ElasticNet", "ElasticNetCV", "Lasso", "LassoCV"):
                if hasattr(_bcd_lm, _name):
                    globals()[_name] = getattr(_bcd_lm, _name)
            """),
    },
    "logistic": {
        "path": "linear_model/tests/test_logistic.py",
        "names": ("LogisticRegression", "LogisticRegressionCV"),
        "rebind": "from bcd.linear_model import LogisticRegression, LogisticRegressionCV\n",
    },
    "label_propagation": {
        "path": "semi_supervised/tests/test_label_propagation.py",
        "names": ("LabelPropagation",),
        "rebind": textwrap.dedent("""\
            import types as _types
            import bcd.semi_supervised as _bcd_semi
            label_propagation = _types.SimpleNamespace(**vars(label_propagation))
            label_propagation.LabelPropagation = _bcd_semi.LabelPropagation
            """),
    },
}

#: excluded items: (module, node-id prefix after "test_<module>.py::", reason);
#: only tests of scikit-learn's internals and private functions.  They run
#: (so that it is known which build a bcd estimator) and count as failures.
EXCLUDED = [
    ("logistic", "test_newton_cholesky_fallback_to_lbfgs", "asserts scikit-learn's internal "
     "fallback from newton-cholesky to lbfgs (its warning, and an iteration count one "
     "less than lbfgs's); bcd's Newton steps need no fallback"),
    ("logistic", "test_logistic_cv_multinomial_score", "calls the private "
     "_log_reg_scoring_path with the estimator's parameters (bcd's include solver_options "
     "and max_time, which that function does not take)"),
    ("coordinate_descent", "test_lassoCV_does_not_set_precompute", "monkeypatches the Lasso "
     "class inside scikit-learn's private _coordinate_descent module"),
]

#: the other items that fail, with the reason (documentation only: they
#: count as failures as any failing item does)
KNOWN_FAILURES = [
    ("logistic", "test_logistic_regression_callback_support[0]", "asserts that a fit with "
     "max_iter=0 has one iteration task besides the closing one, as scikit-learn's lbfgs "
     "reports (scipy calls its callback once); bcd runs no iteration and reports none"),
    ("logistic", "test_logistic_regression_callback_support_warning", "asserts scikit-learn's "
     "UserWarning that callbacks are supported only with solver='lbfgs'; bcd supports them "
     "with every solver"),
    ("coordinate_descent", "test_warm_start$", "asserts that scikit-learn's cyclic coordinate "
     "descent, 5 passes and then 5 warm-started ones, ends at the iterate of 10 passes, "
     "neither converged; bcd's solver (working sets, extrapolation) takes other steps"),
    ("coordinate_descent", "test_enet_nonfinite_params", "matches scikit-learn's wording "
     "(\"Coordinate descent iterations resulted in non-finite parameter values\"); bcd "
     "raises a ValueError before iterating, saying that centering X overflows float64"),
    ("label_propagation", "test_convergence_warning", "asserts that scikit-learn's "
     "fixed-point iteration has not converged after one iteration; bcd solves the "
     "one-unknown problem exactly"),
]

PLUGIN = textwrap.dedent('''\
    import json, os
    import pytest
    pytest_plugins = ["sklearn.conftest"]

    _current = [None]
    _built = set()
    _outcomes = {}

    def _install():
        from bcd.linear_model._base import BCDEstimator
        import bcd.semi_supervised as semi
        def _new(cls, *args, **kwargs):
            if _current[0] is not None:
                _built.add(_current[0])
            return object.__new__(cls)
        for klass in (BCDEstimator, semi.LabelPropagation):
            klass.__new__ = staticmethod(_new)
        return (BCDEstimator, semi.LabelPropagation)

    _BCD = _install()

    def _has_bcd(value, classes=False):
        if isinstance(value, _BCD) or (classes and isinstance(value, type)
                                       and issubclass(value, _BCD)):
            return True
        if isinstance(value, (list, tuple)):
            return any(_has_bcd(v, classes) for v in value)
        if isinstance(value, dict):
            return any(_has_bcd(v, classes) for v in value.values())
        return False

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        _current[0] = item.nodeid
        params = getattr(getattr(item, "callspec", None), "params", {})
        if _has_bcd(params):
            _built.add(item.nodeid)
        yield
        _current[0] = None

    def pytest_runtest_logreport(report):
        old = _outcomes.get(report.nodeid)
        if report.when == "call" or report.failed or (report.skipped and old is None):
            outcome = report.outcome
            if report.when == "call" and hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            if old in ("failed", "error"):
                return
            _outcomes[report.nodeid] = outcome if report.when == "call" or not report.failed \\
                else "error"

    _NAMES = tuple(os.environ.get("BCD_SUITE_NAMES", "").split(","))

    def pytest_collection_modifyitems(config, items):
        # run only the items that can build a bcd estimator: those whose test
        # function names one (or whose parameters hold one); the others test
        # scikit-learn's own estimators and functions
        import inspect
        keep, drop = [], []
        for item in items:
            try:
                source = inspect.getsource(item.function)
            except (OSError, TypeError, AttributeError):
                source = ""
            params = getattr(getattr(item, "callspec", None), "params", {})
            if any(name in source for name in _NAMES) or _has_bcd(params, classes=True):
                keep.append(item)
            else:
                drop.append(item)
        if drop and os.environ.get("BCD_SUITE_ALL_ITEMS") != "1":
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_sessionfinish(session, exitstatus):
        with open(os.environ["BCD_SUITE_REPORT"], "w") as f:
            json.dump({k: {"outcome": v, "bcd": k in _built} for k, v in _outcomes.items()}, f)
''')


def sklearn_test_source(relpath):
    spec = importlib.util.find_spec("sklearn")
    path = Path(spec.origin).parent / relpath
    return path.read_text()


def rewrite(source, rebind):
    """The module source with ``rebind`` inserted after its last top-level import."""
    tree = ast.parse(source)
    last = max(node.end_lineno for node in tree.body
               if isinstance(node, (ast.Import, ast.ImportFrom)))
    lines = source.splitlines(keepends=True)
    return "".join(lines[:last]) + rebind + "".join(lines[last:])


def excluded(name):
    return [(prefix, reason) for module, prefix, reason in EXCLUDED if module == name]


def matches(nodeid, pattern):
    """Whether ``nodeid`` starts with ``pattern``, where ``*`` in the pattern
    stands for any text and a final ``$`` asks for the whole node id."""
    import re
    exact = pattern.endswith("$")
    regex = ".*".join(re.escape(piece) for piece in pattern.rstrip("$").split("*"))
    return re.match(regex + ("$" if exact else ""), nodeid) is not None


def run_module(name, timeout=1800, extra_args=()):
    """Run one module; returns ``{nodeid: {"outcome", "bcd"}}`` (node ids as
    ``test_<module>.py::...``) and the wall time."""
    import time
    info = MODULES[name]
    filename = Path(info["path"]).name
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / filename).write_text(rewrite(sklearn_test_source(info["path"]), info["rebind"]))
        (tmp / "conftest.py").write_text(PLUGIN)
        report = tmp / "report.json"
        args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                "--no-header", "-rN", "--tb=no", "--rootdir", str(tmp), "-o",
                "addopts=", "-o", "filterwarnings=", str(tmp / filename), *extra_args]
        env = dict(os.environ, BCD_SUITE_REPORT=str(report),
                   BCD_SUITE_NAMES=",".join(info["names"]),
                   OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"),
                   OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        start = time.perf_counter()
        log = os.environ.get("BCD_SUITE_OUTPUT")
        with open(log or os.devnull, "w") as out:
            subprocess.run(args, cwd=tmp, env=env, timeout=timeout, stdout=out,
                           stderr=subprocess.STDOUT, text=True)
        elapsed = time.perf_counter() - start
        if not report.exists():
            raise RuntimeError(f"pytest wrote no report for {name}")
        data = json.loads(report.read_text())
    prefix = f"{filename}::"
    return {k[k.index(prefix):] if prefix in k else k: v for k, v in data.items()}, elapsed


def summarize(name, results):
    """``(passed, total)`` over the items that build a bcd estimator, the
    excluded items counted as failures."""
    filename = Path(MODULES[name]["path"]).name
    excl = [f"{filename}::{p}" for p, _ in excluded(name)]

    def is_excluded(nodeid):
        return any(matches(nodeid, p) for p in excl)

    bcd_items = {k: v for k, v in results.items() if v["bcd"] and not is_excluded(k)}
    passed = sum(v["outcome"] in ("passed", "xfailed") for v in bcd_items.values())
    # the excluded items run (so that it is known which build a bcd
    # estimator) but count as failures whatever their outcome
    n_excluded = sum(1 for k, v in results.items() if v["bcd"] and is_excluded(k))
    return passed, len(bcd_items) + n_excluded


if __name__ == "__main__":
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(MODULES)
    for name in names:
        extra = ["--tb=line", "-v", "--durations=20"] if "--tb" in sys.argv else []
        results, elapsed = run_module(name, extra_args=extra)
        passed, total = summarize(name, results)
        failing = sorted(k for k, v in results.items()
                         if v["bcd"] and v["outcome"] not in ("passed", "xfailed"))
        if "--verbose" in sys.argv:
            filename = Path(MODULES[name]["path"]).name
            listed = [f"{filename}::{p}" for m, p, _ in EXCLUDED + KNOWN_FAILURES if m == name]
            for k in failing:
                note = "" if any(matches(k, p) for p in listed) else "  (not listed)"
                print("  FAIL", k, results[k]["outcome"] + note)
        print(f"{name}: {passed}/{total} items that build a bcd estimator pass "
              f"({100 * passed / max(total, 1):.1f}%); {len(results)} items in all; "
              f"{elapsed:.1f} s")
