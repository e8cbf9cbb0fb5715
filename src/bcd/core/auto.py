"""The automatic configuration of :func:`bcd.solve`: ``AUTO_TABLE``.

When ``rule``, ``blocks``, ``block_size`` and ``update`` are all left at
``"auto"`` (and no option of a particular rule, block strategy or update
is given), :func:`choose` takes the first row of ``AUTO_TABLE`` that
matches the problem's ``structure`` (see :class:`bcd.problems.Problem`),
its penalty and its size, and that ``bcd.core.specs.check_combination``
accepts for it.  A problem no row covers gets the first valid row of
``FALLBACKS``.  The choice is recorded in ``Result.options["auto"]``.

Each row's justification quotes measurements of the candidate
configurations on a 2-core machine; ``python -m asv_benches.autotune``
reruns that grid (explicit configurations per problem class, in one
process) next to what the table chooses.
"""
import dataclasses

import numpy as np
from typing import Callable, Mapping

from .specs import check_combination

#: Anderson depth K of every row that extrapolates (the choice of celer and
#: skglm; 3-10 measured within 10% of each other on label propagation)
DEPTH = 5


@dataclasses.dataclass(frozen=True)
class Row:
    """One row of the table: ``when(problem)`` selects it, ``config`` is
    passed to :func:`bcd.solve` (``block_size`` capped at n)."""
    name: str
    when: Callable
    config: Mapping
    why: str


def _penalized(problem):
    return problem.penalty is not None


def _has(*caps):
    return lambda problem: set(caps) <= problem.capabilities


def _all(*tests):
    return lambda problem: all(t(problem) for t in tests)


def _structure(*names):
    return lambda problem: getattr(problem, "structure", None) in names


def _not(test):
    return lambda problem: not test(problem)


#: the most coordinates for which one Newton step on all of them is the default
SMALL = 256

#: the same for dense data, whose block Hessian is one BLAS rank-k update
DENSE_NEWTON = 512

#: smooth models with at most this many coordinates take Newton steps from
#: the start, more (up to the limits above) quasi-Newton steps first
NEWTON_ONLY = 64



#: formulation name -> ``accepts(problem)``: whether a problem can be solved
#: in that formulation, registered by the module that implements it
#: (:mod:`bcd.problems.dual` registers ``"dual"``), so that the core imports
#: none of the modules above it
FORMULATION_TESTS = {}


def register_formulation(name, accepts):
    """Register the test of the rows whose configuration names ``formulation=name``."""
    FORMULATION_TESTS[name] = accepts
    return accepts


def _dual(problem):
    return FORMULATION_TESTS["dual"](problem)


def _few_coordinates(problem):
    n = problem.n_coordinates
    return n <= SMALL or (_dense(problem) and n <= DENSE_NEWTON)


def _dense(problem):
    return isinstance(getattr(problem, "A", None), np.ndarray)


def _very_few_coordinates(problem):
    return problem.n_coordinates <= NEWTON_ONLY


def _wide(problem):
    """At most as many samples as features: the dual has the fewer coordinates."""
    return problem.n_samples <= problem.n_features


def _dense_kernel(problem):
    """The calibrated choice (:func:`bcd.core.calibration.kernel_choice`)
    is the dense solve: predicted faster than GBCD on this machine, and its
    matrices within the memory limit."""
    return prediction(problem)["choice"] == "dense"


def prediction(problem):
    """The figures of the calibrated choice for a kernel system, or None
    for other problems (see ``bcd.core.calibration``)."""
    if getattr(problem, "structure", None) != "kernel" \
            or not hasattr(problem, "kernel_entry_rate"):
        return None
    from . import calibration
    return calibration.kernel_choice(problem)


#: coordinate descent in column order with extrapolation, and on working sets
_CD = dict(rule="cyclic", blocks="fixed", partition="order", block_size=1,
           extrapolation=DEPTH)
_WORKING_SET_CD = dict(_CD, working_set=True)

AUTO_TABLE = (
    Row("penalized least squares",
        _all(_penalized, _structure("linear_model"), _has("quadratic")),
        dict(_WORKING_SET_CD, update="gradient"),
        "Lasso on dataset A (lambda=5e4): 3.7 ms (x >= 0) and 5.1 ms against 3.8 / 5.3 ms "
        "for the best greedy configuration (GS, variable blocks of 75, proximal Newton) and "
        "21.7 / 27.1 ms for plain coordinate descent; 5000 x 50000 at lambda_max/20: 83 ms "
        "against 0.81 s for coordinate descent and 13 s for greedy rules"),
    Row("penalized model without Lipschitz constants (Newton)",
        _all(_penalized, _structure("linear_model"), _has("quadratic_model"),
             _not(_has("lipschitz"))),
        dict(formulation="newton"),
        "L1-Poisson on sparse 5000 x 2000 (density 1%, l2=1, lambda=2): Newton steps on "
        "weighted least-squares models solved by the penalized least-squares row, 6 "
        "iterations in 35 ms, against 98 ms for working-set proximal Newton coordinate "
        "steps (the next row)"),
    Row("penalized generalized linear model",
        _all(_penalized, _structure("linear_model"), _has("block_hessian")),
        dict(_WORKING_SET_CD, update="newton"),
        "L1-logistic on dataset B: one-coordinate proximal Newton steps need half the "
        "iterations of proximal gradient steps at lambda_max/20 and a tenth at "
        "lambda_max/100 (0.25 s against 0.70 s); without extrapolation 2x slower"),
    Row("penalized problem with coordinate Lipschitz constants",
        _all(_penalized, _has("lipschitz")),
        dict(_WORKING_SET_CD, update="gradient"),
        "the working-set coordinate descent of the least-squares row, for penalized "
        "problems without a row of their own"),
    Row("sparse quadratic",
        _all(_not(_penalized), _structure("sparse_quadratic"), _has("graph")),
        dict(rule="cyclic", blocks="forest_partition", update="exact", extrapolation=DEPTH),
        "label propagation on a 300 x 300 lattice to ‖Qx − c‖ <= 1e-8 ‖c‖: forest "
        "partition with message passing, 0.44 s, and 0.12 s with extrapolation (spsolve "
        "0.32 s); greedy and random rules are slower (row h of asv_benches/compare.py)"),
    Row("small kernel system",
        _all(_not(_penalized), _structure("kernel"), _dense_kernel),
        dict(rule="cyclic", blocks="variable", block_size="all", update="exact"),
        "one exact block of every coordinate, a dense Cholesky solve, where it is predicted "
        "faster than GBCD from the dense factorization rate and the kernel-entry rate "
        "measured once per process on this machine, and K (factored in place) and the "
        "copy of its fallback (16 n^2 bytes) take at most half of the available memory "
        "(bcd.core.calibration); on the 2-core "
        "machine the crossover lies near 6000 points"),
    Row("kernel system",
        _all(_not(_penalized), _structure("kernel")),
        dict(rule="gbcd", blocks="variable", update="exact"),
        "the greedy block rule of Bo and Sminchisescu with exact block solves, the "
        "configuration of their GP experiments (asv_benches/gp_scaling.py)"),
    Row("least squares with few coordinates",
        _all(_not(_penalized), _has("quadratic"), _few_coordinates,
             _structure("linear_model")),
        dict(rule="cyclic", blocks="variable", block_size=DENSE_NEWTON, update="exact"),
        "ridge on dense 20000 x 200 (l2=1): one exact block, a Cholesky solve of the Gram "
        "matrix formed by one BLAS rank-k update, 25 ms (numpy's X.T @ X alone 30 ms), "
        "against 37 ms for the Newton row below, whose line search a quadratic does not need"),
    Row("smooth model with very few coordinates",
        _all(_not(_penalized), _has("block_hessian"), _very_few_coordinates,
             _structure("linear_model", "grouped_linear_model")),
        dict(rule="cyclic", blocks="variable", block_size=NEWTON_ONLY, update="newton"),
        "Newton steps on all coordinates: with at most 64 the block Hessian costs at most "
        "three passes over the data, and the 5-8 Newton steps no more than the 15-30 "
        "quasi-Newton steps of the next row (Poisson on dense 20000 x 50, l2=1: 17 ms "
        "against 12 ms), with the exact answer that quadratic convergence gives at a loose "
        "tolerance (the scikit-learn estimators' sample-weight checks); the multinomial "
        "model of iris with an intercept: 7 iterations, 1 ms"),
    Row("smooth model with few coordinates",
        _all(_not(_penalized), _has("block_hessian"), _few_coordinates,
             _structure("linear_model", "grouped_linear_model")),
        dict(rule="cyclic", blocks="variable", block_size=DENSE_NEWTON, update="lbfgs",
             newton_after="auto"),
        "quasi-Newton (L-BFGS) steps on all coordinates, then Newton steps once they have "
        "cost about six Newton steps, at most 50 (one BLAS thread): L2-logistic on dense 100000 x 100 "
        "0.24 s against 0.36 s for Newton steps from the start and 0.21 s for scikit-"
        "learn's lbfgs; make_classification 20000 x 500 with an intercept 0.21 s against "
        "0.77 s for Newton (lbfgs 0.14 s); columns scaled over six orders of magnitude "
        "(20000 x 128, the model scaled by the L_i) 0.04 s against 0.09 s for Newton, "
        "where scikit-learn's lbfgs stops at max_iter after 13 s; on nearly collinear "
        "columns (20000 x 200, l2=1e-3) the quasi-Newton steps stall and Newton finishes: "
        "0.33 s against 0.22 s for Newton alone"),
    Row("L2-regularized linear model (dual)",
        _all(_not(_penalized), _structure("linear_model"), _dual, _wide),
        dict(formulation="dual", rule="random"),
        "coordinate ascent over the samples (python -m asv_benches.defaults, one BLAS "
        "thread): logistic on dataset B (1000 x 10000, l2=1) 36 ms against 216 ms for the "
        "line-search row below and 186 ms for liblinear; ridge on dataset A 48 ms, where "
        "coordinate descent with extrapolation stopped at max_iter after 1.1 s (LSQR 56 "
        "ms); cyclic order 30x slower than random permutations on both"),
    Row("smooth linear model on dense data with many coordinates",
        _all(_not(_penalized), _structure("linear_model"), _dense, _has("quadratic_model"),
             _not(_has("quadratic"))),
        dict(rule="cyclic", blocks="variable", block_size="all", update="lbfgs"),
        "quasi-Newton (L-BFGS) steps on all coordinates, two passes over the data each "
        "(one BLAS thread), where the Newton row below solves each weighted least-squares "
        "model by passes of coordinate descent over dense columns: logistic on "
        "make_classification 5000 x 2000 (50 informative, l2=1) 4.4 s against 18.0 s, "
        "logistic on Gaussian 20000 x 1000 0.53 s against 2.5 s, Poisson on Gaussian "
        "10000 x 1000 0.34 s against 0.76 s; no Newton steps after a budget, whose n x n "
        "Hessians grow with the coordinates"),
    Row("smooth generalized linear model (Newton)",
        _all(_not(_penalized), _structure("linear_model"), _has("quadratic_model"),
             _not(_has("quadratic"))),
        dict(formulation="newton"),
        "tall data with many columns: Poisson on sparse 5000 x 2000 (density 1%, l2=1): 7 "
        "Newton steps in 33 ms, where the line-search row below stops at max_iter (scikit-"
        "learn's lbfgs 0.41 s, glum 4.3 s); logistic on sparse 20000 x 2000 (l2=1): 87 ms "
        "against 105 ms through the dual and 231 ms for the line-search row"),
    Row("L2-regularized multiclass linear model (dual)",
        _all(_not(_penalized), _structure("grouped_linear_model"), _dual, _wide),
        dict(formulation="dual", rule="random"),
        "the maximum-entropy dual of Yu, Huang and Lin, one probability vector per "
        "sample: dataset C (1000 x 1000, 50 classes, l2=1) in 75 ms and 33 passes, against "
        "5.5 s for the random fixed blocks of the next row and 387 ms for scikit-learn's "
        "lbfgs"),
    Row("smooth multiclass linear model",
        _all(_not(_penalized), _structure("grouped_linear_model")),
        dict(rule="random", blocks="fixed", block_size=100, update="linesearch"),
        "multinomial regression on dataset C: random fixed blocks of 100 with a line "
        "search, 4.2 s; cyclic, greedy, Newton and extrapolated variants 4.3-7 s or "
        "not converged within 10 s"),
    Row("least squares",
        _all(_not(_penalized), _structure("linear_model"), _has("quadratic")),
        dict(_CD, update="gradient"),
        "ridge on dataset A (l2=1; 10000 columns): coordinate descent with extrapolation "
        "made 1000 passes in 1.3 s to optimality 1.2, where cyclic variable blocks of 300 "
        "with a line search reached 1.7 in 20 s; a 40 x 25 least-squares test problem: "
        "1391 iterations to 1e-6 (5243 without extrapolation, and not within 10000 with "
        "the line-search row below)"),
    Row("smooth linear model",
        _all(_not(_penalized), _structure("linear_model")),
        dict(rule="cyclic", blocks="variable", block_size=300, update="linesearch"),
        "logistic regression on dataset B: cyclic variable blocks of 300 with a line "
        "search, 0.18 s; one-coordinate gradient or Newton steps, with or without "
        "extrapolation, not converged within 5 s"),
)

#: for problems no row covers, in order: greedy selection of variable blocks
#: of 5 with gradient steps (a running Lipschitz estimate where L_i are
#: unknown, which needs a smooth problem), else with proximal Newton steps
#: (a penalized problem without Lipschitz constants)
FALLBACKS = (
    Row("fallback", lambda problem: True,
        dict(rule="gs", blocks="variable", block_size=5, update="gradient"),
        "no row of the table covers this problem: Gauss-Southwell on variable blocks of 5 "
        "with gradient steps"),
    Row("fallback (Newton)", lambda problem: True,
        dict(rule="gs", blocks="variable", block_size=5, update="newton"),
        "the same with (proximal) Newton steps, for penalized problems without Lipschitz "
        "constants"),
)

#: what :func:`bcd.solve` uses when only some of rule, blocks, block_size
#: and update are given (the defaults before the automatic choice existed)
EXPLICIT_DEFAULTS = dict(rule="gs", blocks="variable", block_size=None, update="gradient")


def _resolve(config, n):
    config = dict(config)
    size = config.get("block_size")
    if size == "all":
        config["block_size"] = max(1, n)
    elif size is not None:
        config["block_size"] = max(1, min(size, n))
    return config


def choose(problem, tables, primal=False):
    """``(config, row)``: the first row of ``AUTO_TABLE`` then ``FALLBACKS``
    that matches ``problem`` and is a valid combination for it (with
    ``primal``, only the rows that run on the primal problem).

    Raises ValueError when none is (a problem without the capabilities any
    of them needs), naming what to give explicitly instead."""
    n = problem.n_coordinates
    for row in AUTO_TABLE + FALLBACKS:
        if not row.when(problem):
            continue
        config = _resolve(row.config, n)
        if config.get("formulation", "primal") != "primal":
            if not primal:
                return config, row
            continue
        options = {k: v for k, v in config.items()
                   if k not in ("rule", "blocks", "block_size", "update")}
        try:
            check_combination(problem, config["blocks"], config["rule"], config["update"],
                              options, tables)
        except ValueError:
            continue
        return config, row
    raise ValueError(f"no automatic configuration applies to {type(problem).__name__}"
                     f"{' with ' + repr(problem.penalty) if problem.penalty is not None else ''}"
                     f" (its capabilities: {sorted(problem.capabilities)}); give rule, blocks "
                     f"and update explicitly (see docs/combinations.md).")


#: the options that make up a configuration (see :func:`configuration`)
RECORDED = ("formulation", "rule", "blocks", "block_size", "update", "partition",
            "working_set", "extrapolation", "shrinking")


def configuration(options):
    """The configuration part of resolved options (``Result.options``)."""
    return {k: options[k] for k in RECORDED if k in options}


def table_markdown():
    """``AUTO_TABLE`` and ``FALLBACKS`` as a Markdown table, in order."""
    lines = ["`bcd.solve(problem)` takes the first row that matches the problem and is a "
             "valid combination for it (`bcd.core.auto.AUTO_TABLE`; measured by "
             "`python -m asv_benches.autotune`).", "",
             "| row | configuration | measured |", "|---|---|---|"]
    for row in AUTO_TABLE + FALLBACKS:
        config = ", ".join(f"`{k}={v!r}`" for k, v in row.config.items())
        lines.append(f"| {row.name} | {config} | {row.why} |")
    return "\n".join(lines) + "\n"


def describe(config, row):
    """One line naming the row and the configuration it chose."""
    items = ", ".join(f"{k}={v!r}" for k, v in config.items())
    return f"automatic configuration ({row.name}): {items}"
