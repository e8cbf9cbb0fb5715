"""The automatic configuration of ``bcd.solve`` (``bcd.core.auto``): every
registered problem, with and without each penalty it accepts, solved with no
options and checked against SciPy / scikit-learn references; the row
recorded in ``result.options`` and the configuration it stands for; the
fallback for problems the table does not cover; the explicit defaults; the
``verbose`` line; and the validation of the working-set and extrapolation
options."""

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bcd
from bcd.core import auto
from bcd.core.assembly import TABLES
from bcd.core.specs import check_combination

from _data import (lbfgs_reference, logistic_data, multinomial_data, penalized_reference,
                   random_problem)

#: the rows for problems the table does not cover: ``FALLBACK``, or the
#: ``FALLBACKS`` tried in order where the library has several
FALLBACKS = tuple(getattr(auto, "FALLBACKS", None) or (auto.FALLBACK,))
ROWS = tuple(auto.AUTO_TABLE) + FALLBACKS
ROW_NAMES = {row.name for row in ROWS}

# ------------------------------------------------------------------ problems

PENALTIES = {
    "none": lambda lam: None,
    "l1": lambda lam: bcd.L1(lam),
    "l1_positive": lambda lam: bcd.L1(lam, positive=True),
    "nonnegative": lambda lam: bcd.NonNegative(),
    "box": lambda lam: bcd.Box(-0.1, 0.2),
}


def _spd_system(n=30, seed=2):
    A, _ = random_problem(2 * n, n, density=0.15, seed=seed)
    Q = sp.csc_matrix(A.T @ A + 0.1 * sp.identity(n))
    return Q, np.random.RandomState(seed).randn(n)


def _poisson_data(m=100, n=12, seed=0):
    rs = np.random.RandomState(seed)
    A = rs.randn(m, n) * 0.3
    y = rs.poisson(np.exp(A @ (0.3 * rs.randn(n)))).astype(float)
    return A, y


def _least_squares(pen):
    A, b = random_problem(40, 25, density=0.4, seed=0, sparse=False)
    return bcd.LeastSquares(A, b, penalty=pen(0.1 * np.max(np.abs(A.T @ b))))


def _logistic(pen):
    A, y = logistic_data(m=60, n=15)
    penalty = pen(2.0)
    # the smooth problem needs a ridge term for its minimum to be attained
    return bcd.Logistic(A, y, l2=1.0 if penalty is None else 0.0, penalty=penalty)


def _linear_svm(pen):
    A, y = logistic_data(m=60, n=15)
    penalty = pen(2.0)
    return bcd.LinearSVM(A, y, l2=1.0 if penalty is None else 0.0, penalty=penalty)


def _multinomial(pen):
    A, y = multinomial_data(m=60, d=8, k=3)
    return bcd.Multinomial(A, y, l2=1.0, penalty=pen(2.0))


def _poisson(pen):
    A, y = _poisson_data()
    return bcd.Poisson(A, y, l2=1.0, penalty=pen(2.0))


def _quadratic(pen):
    Q, c = _spd_system()
    return bcd.Quadratic(Q, c, penalty=pen(0.3))


def _label_propagation(pen):
    W, labels = bcd.datasets.make_lattice_dataset(8, 5, 1.0, random_state=0)
    return bcd.LabelPropagation(W, labels, penalty=pen(0.3))


def _gp_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    return X, np.sin(6.0 * X[:, 0]) + 0.1 * rng.standard_normal(n)


BUILDERS = {
    "least_squares": _least_squares,
    "logistic": _logistic,
    "linear_svm": _linear_svm,
    "multinomial": _multinomial,
    "poisson": _poisson,
    "quadratic": _quadratic,
    "label_propagation": _label_propagation,
}


def test_every_registered_problem_is_covered():
    assert set(bcd.problems.available()) == set(BUILDERS) | {"gaussian_process"}


def _accepted_cases():
    cases = []
    for name, build in BUILDERS.items():
        for pen_name, pen in PENALTIES.items():
            try:
                build(lambda lam, pen=pen: pen(lam))
            except (TypeError, ValueError):
                continue        # the problem does not accept this penalty
            cases.append((name, pen_name))
    return cases


CASES = _accepted_cases()


def test_the_penalized_problems_accept_every_penalty():
    # all registered problems but the GP take a penalty: the cases below cover them all
    assert len(CASES) == len(BUILDERS) * len(PENALTIES)


# ---------------------------------------------------------------- references

def _reference(name, pen_name, problem):
    """``(x or None, F*)`` of a problem from SciPy / scikit-learn."""
    n = problem.n_coordinates
    if name == "least_squares":
        A, b = problem.A, problem.b
        if pen_name == "none":
            x = np.linalg.lstsq(A, b, rcond=None)[0]
        elif pen_name in ("l1", "l1_positive"):
            from sklearn.linear_model import Lasso
            lam = float(problem.penalty.lam)
            x = Lasso(alpha=lam / A.shape[0], fit_intercept=False, tol=1e-15, max_iter=200000,
                      positive=pen_name == "l1_positive").fit(A, b).coef_
        elif pen_name == "nonnegative":
            x = scipy.optimize.nnls(A, b)[0]
        else:
            pen = problem.penalty
            lo, up = np.broadcast_to(pen.lower, n), np.broadcast_to(pen.upper, n)
            x = scipy.optimize.lsq_linear(A, b, bounds=(lo, up), tol=1e-15, method="bvls").x
            x = np.clip(x, lo, up)            # bvls may miss a bound by rounding
        return x, problem.objective(x)
    if pen_name == "none" and name in ("quadratic", "label_propagation"):
        x = spla.spsolve(sp.csc_matrix(problem.Q), problem.c)
        return x, problem.objective(x)
    if pen_name == "none":
        x, _ = lbfgs_reference(problem)
        return x, problem.objective(x)
    return None, penalized_reference(problem)


def _assert_row_consistent(result, problem):
    """The recorded row is the first valid row of the table that matches the
    problem, and the recorded options are its configuration."""
    options = result.options
    assert options["auto"] in ROW_NAMES
    rows = ROWS
    row = next(r for r in rows if r.name == options["auto"])
    assert row.when(problem)
    for earlier in rows[:rows.index(row)]:
        if earlier.when(problem):
            # block_size capped at n ("all": n)
            config = auto._resolve(earlier.config, problem.n_coordinates)
            rest = {k: v for k, v in config.items()
                    if k not in ("rule", "blocks", "block_size", "update")}
            with pytest.raises(ValueError):
                check_combination(problem, config["blocks"], config["rule"], config["update"],
                                  rest, TABLES)
    for key, value in auto._resolve(row.config, problem.n_coordinates).items():
        assert options[key] == value, (key, options[key], value)
    if "working_set" not in row.config and "working_set" in options:
        assert options["working_set"] is False
    if "extrapolation" not in row.config and "extrapolation" in options:
        assert options["extrapolation"] == 0


# --------------------------------------------------- solve(problem), no options

@pytest.mark.parametrize("name, pen_name", CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_solve_with_no_options_reaches_the_reference(name, pen_name):
    problem = BUILDERS[name](PENALTIES[pen_name])
    result = bcd.solve(problem)
    assert result.converged, result.message
    assert result.status == "converged"
    assert result.optimality <= result.options["tol"]
    _assert_row_consistent(result, problem)
    x_ref, f_ref = _reference(name, pen_name, problem)
    # the result describes its point
    assert result.objective == pytest.approx(problem.objective(result.x), rel=1e-10, abs=1e-12)
    assert result.objective == pytest.approx(f_ref, rel=1e-8, abs=1e-10)
    # certified to tol: never worse than the reference beyond rounding
    assert result.objective <= f_ref + 1e-9 * abs(f_ref) + 1e-12
    if x_ref is not None:
        np.testing.assert_allclose(result.x, x_ref, rtol=1e-4, atol=1e-5)
    if problem.penalty is not None:
        kkt = problem.penalty.optimality(result.x, problem.gradient(result.x))
        assert kkt <= 1.01 * result.options["tol"]


@pytest.mark.parametrize("n, precomputed, dense_faster, row", [
    (150, False, True, "small kernel system"),
    (600, True, True, "small kernel system"),
    (600, False, False, "kernel system"),
    (600, True, False, "kernel system")])
def test_gaussian_process_with_no_options_matches_a_direct_solve(n, precomputed, dense_faster,
                                                                 row, monkeypatch):
    # calibration figures that make the dense solve predicted faster or slower
    from bcd.core import calibration
    monkeypatch.setattr(calibration, "dense_rate",
                        lambda threads=1, n=10000: 1e12 if dense_faster else 1e3)
    monkeypatch.setattr(bcd.GaussianProcess, "kernel_entry_rate", lambda self: 1e8)
    monkeypatch.setattr(bcd.GaussianProcess, "block_seconds", lambda self, k, c: 0.01)
    X, y = _gp_data(n)
    problem = bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(0.3), noise=0.1,
                                  precomputed=precomputed)
    result = bcd.solve(problem)
    assert result.converged
    _assert_row_consistent(result, problem)
    assert result.options["auto"] == row
    prediction = result.options["auto_prediction"]
    assert prediction["choice"] == ("dense" if dense_faster else "gbcd")
    assert (prediction["dense_s"] <= prediction["gbcd_s"]) == dense_faster
    if row == "small kernel system":
        # one exact block of every coordinate: the direct solve itself
        assert result.n_iter == 1 and result.options["block_size"] == n
    K = problem.kernel(X) + 0.1 * np.eye(n)
    alpha = scipy.linalg.solve(K, y, assume_a="pos")
    f_ref = problem.objective(alpha)
    assert result.objective == pytest.approx(f_ref, rel=1e-8)
    np.testing.assert_allclose(result.x, alpha, rtol=0, atol=1e-4 * np.abs(alpha).max())
    np.testing.assert_allclose(K @ result.x, y, atol=result.options["tol"] * 1.01)


def test_documented_choices():
    # the rows named by the docstrings of bcd.solve and bcd.core.auto
    lasso = _least_squares(PENALTIES["l1"])
    r = bcd.solve(lasso)
    assert r.options["auto"] == "penalized least squares"
    assert (r.options["rule"], r.options["working_set"], r.options["extrapolation"]) \
        == ("cyclic", True, auto.DEPTH)
    lp = bcd.solve(_label_propagation(PENALTIES["none"]))
    assert lp.options["blocks"] == "forest_partition" and lp.options["update"] == "exact"


def test_auto_strings_are_the_defaults():
    problem = _least_squares(PENALTIES["l1"])
    a = bcd.solve(problem)
    b = bcd.solve(problem, rule="auto", blocks="auto", block_size="auto", update="auto",
                  working_set="auto", extrapolation="auto")
    assert a.options == b.options
    np.testing.assert_array_equal(a.x, b.x)


# ---------------------------------------------------------- explicit configurations

@pytest.mark.parametrize("given, expected", [
    (dict(rule="cyclic"), dict(rule="cyclic", blocks="variable", update="gradient")),
    (dict(blocks="fixed"), dict(rule="gs", blocks="fixed", update="gradient")),
    (dict(update="newton"), dict(rule="gs", blocks="variable", update="newton")),
    (dict(block_size=3), dict(rule="gs", blocks="variable", update="gradient", block_size=3)),
    (dict(lipschitz="bound"), dict(rule="gs", blocks="variable", update="gradient")),
])
@pytest.mark.parametrize("pen_name", ["none", "l1"])
def test_explicit_configurations_keep_the_old_defaults(given, expected, pen_name):
    problem = _least_squares(PENALTIES[pen_name])
    result = bcd.solve(problem, tol=1e-6, max_iter=10**6, **given)
    assert result.options["auto"] is None
    for key, value in expected.items():
        assert result.options[key] == value
    assert result.options.get("working_set", False) is False
    assert result.options.get("extrapolation", 0) == 0
    assert result.converged
    f_ref = _reference("least_squares", pen_name, problem)[1]
    assert result.objective == pytest.approx(f_ref, rel=1e-9)


def test_explicit_working_set_and_extrapolation_are_recorded():
    problem = _least_squares(PENALTIES["l1"])
    result = bcd.solve(problem, rule="cyclic", blocks="fixed", working_set=True,
                       extrapolation=3, tol=1e-8)
    assert result.options["auto"] is None
    assert result.options["working_set"] is True and result.options["extrapolation"] == 3
    assert result.converged


def test_working_set_and_extrapolation_override_the_automatic_choice():
    problem = _least_squares(PENALTIES["l1"])
    plain = bcd.solve(problem, working_set=False, extrapolation=0, tol=1e-8)
    assert plain.options["auto"] == "penalized least squares"
    assert plain.options["working_set"] is False and plain.options["extrapolation"] == 0
    assert plain.converged
    assert plain.objective == pytest.approx(bcd.solve(problem, tol=1e-8).objective, rel=1e-10)


# ------------------------------------------------------ problems no row covers

class _Delegating(bcd.problems.Problem):
    """A user-written problem: the smooth part and the compiled state of a
    built-in problem, its own (smaller) capabilities, and ``structure`` left
    at the base class's None, so that no row of the table names it."""

    def __init__(self, inner, capabilities, penalty=None):
        self._inner = inner
        self.capabilities = frozenset(capabilities)
        self.n_coordinates = inner.n_coordinates
        self.dtype = inner.dtype
        self._set_lipschitz(inner.lipschitz)
        self._set_penalty(penalty)

    def smooth_objective(self, x):
        return self._inner.smooth_objective(x)

    def gradient(self, x):
        return self._inner.gradient(x)

    def compile(self, tracking, max_block):
        return self._inner.compile(tracking, max_block)


_LS_CAPS = {"lipschitz", "hessian_bound", "bound_products", "block_hessian"}
_POISSON_CAPS = {"block_hessian"}


@pytest.mark.parametrize("kind", ["least_squares", "poisson"])
@pytest.mark.parametrize("pen_name", ["none", "l1", "nonnegative"])
def test_custom_problem_without_a_row_gets_a_valid_configuration(kind, pen_name):
    if kind == "least_squares":
        A, b = random_problem(40, 12, density=0.5, seed=4, sparse=False)
        inner, caps, lam = bcd.LeastSquares(A, b), _LS_CAPS, 0.1 * np.max(np.abs(A.T @ b))
    else:
        A, y = _poisson_data(m=80, n=8)
        inner, caps, lam = bcd.Poisson(A, y, l2=1.0), _POISSON_CAPS, 2.0
    problem = _Delegating(inner, caps, PENALTIES[pen_name](lam))
    assert problem.structure is None
    # "auto never picks a combination that errors": a problem no row names
    # gets a valid fallback
    result = bcd.solve(problem)
    assert result.converged, result.message
    assert result.options["auto"] in ROW_NAMES
    if pen_name == "none":
        assert result.options["auto"] == FALLBACKS[0].name
        for key, value in FALLBACKS[0].config.items():
            assert result.options[key] == value
    f_ref = penalized_reference(problem)
    assert result.objective == pytest.approx(f_ref, rel=1e-8)


def test_custom_problem_with_no_capabilities():
    A, y = _poisson_data(m=80, n=8)
    inner = bcd.Poisson(A, y, l2=1.0)
    # smooth: gradient steps with a running Lipschitz estimate need nothing
    smooth = _Delegating(inner, set())
    result = bcd.solve(smooth, tol=1e-8, max_iter=10**6)
    assert result.converged and result.options["auto"] == FALLBACKS[0].name
    assert result.options["lipschitz"] == "estimate"
    assert result.objective == pytest.approx(lbfgs_reference(inner)[1], rel=1e-9)
    # penalized: no update handles the penalty without L_i or block Hessians,
    # so the automatic choice is a ValueError (as an explicit one is), not a crash
    penalized = _Delegating(inner, set(), bcd.L1(1.0))
    with pytest.raises(ValueError):
        bcd.solve(penalized, rule="gs", update="gradient")
    with pytest.raises(ValueError, match="rule|update"):
        bcd.solve(penalized)


@pytest.mark.parametrize("name, pen_name",
                         [(n, p) for n in BUILDERS for p in ("none", "l1")])
def test_registered_problem_with_no_structure_runs(name, pen_name):
    problem = BUILDERS[name](PENALTIES[pen_name])
    problem.structure = None             # an instance the table's rows do not name
    # the fallback (greedy gradient steps) is slow on some problems: a larger
    # max_iter, which keeps the automatic configuration
    result = bcd.solve(problem, max_iter=10**6)
    assert result.converged, result.message
    _assert_row_consistent(result, problem)
    if pen_name == "none":
        assert result.options["auto"] == FALLBACKS[0].name
    assert result.objective == pytest.approx(_reference(name, pen_name, problem)[1], rel=1e-8,
                                             abs=1e-10)


# -------------------------------------------------------------------- verbose

def _auto_lines(out):
    return [line for line in out.splitlines() if line.startswith("automatic configuration (")]


@pytest.mark.parametrize("name, pen_name", [("least_squares", "l1"), ("logistic", "none"),
                                            ("label_propagation", "none")])
def test_verbose_prints_one_line_naming_the_choice(capsys, name, pen_name):
    problem = BUILDERS[name](PENALTIES[pen_name])
    result = bcd.solve(problem, verbose=True)
    lines = _auto_lines(capsys.readouterr().out)
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith(f"automatic configuration ({result.options['auto']}): ")
    for key in ("rule", "blocks", "update"):
        assert f"{key}={result.options[key]!r}" in line
    for key in ("working_set", "extrapolation"):
        if key in result.options:
            assert f"{key}={result.options[key]!r}" in line
    assert "automatic configuration (" not in line[len("automatic configuration ("):]


def test_verbose_explicit_configuration_prints_no_automatic_line(capsys):
    bcd.solve(_least_squares(PENALTIES["l1"]), rule="cyclic", verbose=True, tol=1e-6,
              max_iter=100000)
    out = capsys.readouterr().out
    assert "iter" in out
    assert not _auto_lines(out) and "automatic configuration" not in out


# ----------------------------------------------------------------- bad input

@pytest.fixture(scope="module")
def lasso():
    return _least_squares(PENALTIES["l1"])


@pytest.mark.parametrize("value", ["yes", 1, 0, 1.0])
def test_working_set_must_be_a_bool(lasso, value):
    with pytest.raises(TypeError, match="working_set"):
        bcd.solve(lasso, working_set=value)
    with pytest.raises(TypeError, match="working_set"):
        bcd.solve(lasso, rule="cyclic", blocks="fixed", working_set=value)


@pytest.mark.parametrize("value", [-1, 2.5, True, "5"])
def test_extrapolation_must_be_a_non_negative_int(lasso, value):
    with pytest.raises((ValueError, TypeError), match="extrapolation"):
        bcd.solve(lasso, rule="cyclic", extrapolation=value)


def test_negative_extrapolation_is_a_value_error(lasso):
    with pytest.raises(ValueError, match="extrapolation"):
        bcd.solve(lasso, extrapolation=-1)
    with pytest.raises(ValueError, match="extrapolation"):
        bcd.solve(lasso, rule="cyclic", extrapolation=-1)


@pytest.mark.parametrize("rule", ["gs", "random", "gsd"])
def test_extrapolation_needs_the_cyclic_rule(lasso, rule):
    with pytest.raises(ValueError, match=r"extrapolation=3 does not apply.*rule 'cyclic'"):
        bcd.solve(lasso, rule=rule, extrapolation=3)


def test_working_set_needs_fixed_or_variable_blocks():
    problem = _label_propagation(PENALTIES["none"])
    with pytest.raises(ValueError, match=r"working_set=True does not apply.*"
                                         r"blocks 'fixed', blocks 'variable'"):
        bcd.solve(problem, rule="cyclic", blocks="forest_partition", update="exact",
                  working_set=True)
    with pytest.raises(ValueError, match="working_set"):
        bcd.solve(problem, blocks="tree", update="exact", working_set=True)


def test_gap_tol_needs_a_working_set(lasso):
    with pytest.raises(ValueError, match="gap_tol"):
        bcd.solve(lasso, rule="cyclic", blocks="fixed", gap_tol=1e-3)
    with pytest.raises(ValueError, match="gap_tol"):
        bcd.solve(lasso, working_set=False, gap_tol=1e-3)


def test_gap_tol_needs_a_duality_gap():
    problem = _logistic(PENALTIES["l1"])
    with pytest.raises(ValueError, match="gap_tol.*duality gap.*Logistic"):
        bcd.solve(problem, rule="cyclic", blocks="fixed", working_set=True, gap_tol=1e-3)
    with pytest.raises(ValueError, match="gap_tol.*duality gap"):
        bcd.solve(problem, gap_tol=1e-3)          # the automatic choice has working sets


@pytest.mark.parametrize("gap_tol", [-1.0, np.nan, "1"])
def test_gap_tol_is_checked(lasso, gap_tol):
    with pytest.raises((ValueError, TypeError), match="gap_tol"):
        bcd.solve(lasso, gap_tol=gap_tol)


@pytest.mark.parametrize("screening", ["yes", 1, None])
def test_screening_must_be_a_bool(lasso, screening):
    with pytest.raises(TypeError, match="screening"):
        bcd.solve(lasso, screening=screening)


# ---------------------------------------------------------- x0 is not modified

@pytest.mark.parametrize("read_only", [False, True])
def test_x0_is_not_modified_on_the_working_set_path(read_only):
    A, b = random_problem(60, 250, density=0.2, seed=3, sparse=True)
    lam_max = np.max(np.abs(A.T @ b))
    # a start from a smaller lambda: screening puts some of its non-zeros to zero
    x0 = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(0.03 * lam_max)), tol=1e-8).x
    x0 = x0 + 1e-3 * np.random.RandomState(0).randn(x0.size)
    copy = x0.copy()
    if read_only:
        x0.setflags(write=False)
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(0.2 * lam_max))
    result = bcd.solve(problem, x0=x0, tol=1e-9)
    assert result.options["working_set"] is True
    assert result.converged
    np.testing.assert_array_equal(x0, copy)
    assert np.count_nonzero(result.x) < np.count_nonzero(x0)
    assert result.objective == pytest.approx(bcd.solve(problem, tol=1e-9).objective, rel=1e-10)


def test_few_coordinates_get_newton_steps_on_all_of_them():
    # columns scaled over six orders of magnitude: the line-search row stalls here
    rng = np.random.default_rng(0)
    A = rng.standard_normal((400, 12)) * np.exp(rng.uniform(-7, 7, 12))
    y = (A @ rng.standard_normal(12) / np.exp(rng.uniform(-7, 7, 12)).mean()
         + rng.standard_normal(400) > 0).astype(float)
    problem = bcd.Logistic(A, y, l2=1.0)
    result = bcd.solve(problem, tol=1e-8)
    assert result.options["auto"] == "smooth model with very few coordinates"
    assert result.options["update"] == "newton" and result.options["block_size"] == 12
    assert result.converged and result.n_iter < 50
    ref = scipy.optimize.minimize(problem.smooth_objective, np.zeros(12), jac=problem.gradient,
                                  method="trust-exact",
                                  hess=lambda x: _logistic_hessian(A, y, x, 1.0))
    assert result.objective == pytest.approx(ref.fun, rel=1e-10)
    # more coordinates: quasi-Newton steps, Newton's after a budget
    A = np.repeat(A, 8, axis=1) * np.exp(rng.uniform(-1, 1, 96))
    problem = bcd.Logistic(A, y, l2=1.0)
    result = bcd.solve(problem, tol=1e-8)
    assert result.options["auto"] == "smooth model with few coordinates"
    assert result.options["update"] == "lbfgs" and result.options["newton_after"] == "auto"
    assert result.converged and result.n_iter < 100
    ref = scipy.optimize.minimize(problem.smooth_objective, np.zeros(96), jac=problem.gradient,
                                  method="trust-exact",
                                  hess=lambda x: _logistic_hessian(A, y, x, 1.0))
    assert result.objective == pytest.approx(ref.fun, rel=1e-10)
    big = bcd.Logistic(rng.standard_normal((50, auto.DENSE_NEWTON + 1)), y[:50], l2=1.0)
    assert bcd.solve(big, max_iter=1).options["auto"] != "smooth model with few coordinates"
    # sparse data: the block Hessian costs more (no BLAS), and the limit is lower
    wide = sp.random(50, auto.SMALL + 1, density=0.3, random_state=0, format="csc")
    assert bcd.solve(bcd.Logistic(wide, y[:50]), max_iter=1).options["auto"] \
        != "smooth model with few coordinates"
    dense = bcd.Logistic(wide.toarray(), y[:50])
    assert bcd.solve(dense, max_iter=1).options["auto"] == "smooth model with few coordinates"


def _logistic_hessian(A, y, x, l2):
    p = 1.0 / (1.0 + np.exp(-(A @ x)))
    return (A.T * (p * (1 - p))) @ A + l2 * np.eye(A.shape[1])


def test_dense_models_with_many_coordinates_get_quasi_newton_steps():
    # dense tall data with more than 512 columns: L-BFGS steps on all of them
    # (sparse data keeps the Newton formulation)
    rng = np.random.default_rng(4)
    A = rng.standard_normal((1500, auto.DENSE_NEWTON + 40))
    w = rng.standard_normal(A.shape[1]) / np.sqrt(A.shape[1])
    y = np.where(A @ w + 0.5 * rng.standard_normal(1500) > 0, 1.0, -1.0)
    for problem in (bcd.Logistic(A, y, l2=1.0),
                    bcd.Poisson(A / 10, rng.poisson(np.exp(A @ w / 10)), l2=1.0)):
        result = bcd.solve(problem, tol=1e-9)
        assert result.options["auto"] == "smooth linear model on dense data with many coordinates"
        assert result.options["update"] == "lbfgs" and result.converged
        newton = bcd.solve(problem, formulation="newton", tol=1e-9)
        assert result.objective == pytest.approx(newton.objective, rel=1e-12)
    sparse = bcd.Logistic(sp.csc_matrix(A * (rng.random(A.shape) < 0.05)), y, l2=1.0)
    assert bcd.solve(sparse, max_iter=1, warn=False).options["auto"] \
        == "smooth generalized linear model (Newton)"
