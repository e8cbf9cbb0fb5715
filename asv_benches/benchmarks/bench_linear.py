"""Linear models: least squares (dataset A), binary logistic regression (B)
and multinomial logistic regression (C), all sparse, from the paper.

asv benchmarks of every rule x block strategy (blocks of 5 coordinates;
the stopping test disabled with ``tol=0`` and ``check_every=10**9`` so that
every run does exactly the requested number of iterations):

* ``Iterations``, ``SecondsPerIteration``: wall time of 200 iterations
  (set-up included) and time per iteration of the compiled loop alone
  (``Result.time / n_iter``), on A and B.
* ``Suboptimality``: f(x_500) - f* on A and B (lower is better), the
  objective evaluated with NumPy/SciPy from the returned ``x``.
* ``GreedyRules``, ``GreedyRuleSetup``: the curvature-aware greedy rules GSL,
  GSD and GSQ with fixed and variable blocks, and their own set-up (SIRT
  diagonal, block inverses, row view of A).
* ``Updates``: every block update (gradient step with the curvature bound
  or a running Lipschitz estimate, Armijo line search along -grad_b f,
  matrix step, block Newton with a line search, exact minimizer for least
  squares) with Gauss-Southwell on A and B.
* ``MultinomialRules``, ``MultinomialUpdates``: dataset C (1000 x 1000,
  50 classes, so 50000 coordinates, ``l2 = 1``), every rule with block
  Newton updates and every update with GSD.  A step refreshes the softmax
  of every row the block touches, and greedy rules push the change of all
  50 classes of those rows into the tracked gradient, so greedy iterations
  cost much more than on A and B.
* ``SolveOverhead``: fixed cost of a call to ``bcd.solve`` on a tiny problem.
* ``PeakMemory``: peak memory of a greedy solve on A.  ``peakmem`` reports
  the peak resident size of the whole benchmark process; generating A goes
  through dense temporaries (about 200 MB), so the data are built in
  ``setup_cache`` (another process) and only the sparse matrix is loaded
  into the measuring process.

These classes keep the asv names they were recorded under in the modules
``bench_iterations``, ``bench_convergence``, ``bench_greedy``,
``bench_updates``, ``bench_multinomial``, ``bench_overhead`` and
``bench_memory`` (see ``common.keep_benchmark_names``).

Rows a-f of ``asv_benches/compare.py`` (bcd against scikit-learn and
against NumPy/SciPy loops doing bcd's iterations) are the ``compare_*``
functions below, each documented with its target; ``STEPS`` lists them for
compare.py, and the ``RowTrack`` classes at the end report their ratios to
asv.
"""
import abc
import functools
import time
import warnings

import numpy as np

import bcd

from .common import (BLOCK_SIZE, BLOCKS, DATASETS, GREEDY_RULES, NO_CHECKS, RULES, UPDATES,
                     IterationTracks, Row, RowTrack, fmt_time, format_options,
                     keep_benchmark_names, make_problem, median, objective, optimal_value,
                     paper_dataset, quiet, ratio_row, run_iterations, solve_options,
                     sparse_square, at_loosest_tolerance, timed, update_options, warm_up)
from .references import GS_VB_OPTIONS, check_iterates, numpy_gs_vb, numpy_gsd_newton

DATASET = "C"          # the multinomial problem
N_ITER = 200           # iterations of the multinomial benchmarks


# --------------------------------------------------------------------------- per-rule benchmarks

@keep_benchmark_names("bench_iterations")
class Iterations:
    """Wall time of ``bcd.solve`` for 200 iterations (set-up included)."""

    params = [DATASETS, RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    n_iter = 200

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)

    def time_200_iterations(self, dataset, rule, blocks):
        bcd.solve(self.problem, max_iter=self.n_iter, tol=0.0, check_every=NO_CHECKS,
                  **self.options)


@keep_benchmark_names("bench_iterations")
class SecondsPerIteration:
    """Time per iteration of the compiled loop alone (``Result.time / n_iter``).

    Unlike ``Iterations.time_200_iterations`` this excludes the one-time
    set-up of a solve (partitions, initial gradient), which dominates for
    the cheap rules.
    """

    params = [DATASETS, RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    unit = "seconds"
    n_iter = 1000

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)

    def track_seconds_per_iteration(self, dataset, rule, blocks):
        result = bcd.solve(self.problem, max_iter=self.n_iter, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return result.time / result.n_iter


@keep_benchmark_names("bench_convergence")
class Suboptimality:
    params = [DATASETS, RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    unit = "objective gap"
    n_iter = 500

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)
        self.f_star = optimal_value(dataset)

    def track_suboptimality_500(self, dataset, rule, blocks):
        result = bcd.solve(self.problem, max_iter=self.n_iter, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return objective(dataset, result.x) - self.f_star


@keep_benchmark_names("bench_greedy")
class GreedyRules(IterationTracks):
    params = [DATASETS, GREEDY_RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    timeout = 180
    timed_iterations = 200

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)
        warm_up(self.problem, self.options)


@keep_benchmark_names("bench_greedy")
class GreedyRuleSetup:
    """Wall time of a one-iteration solve on a new problem object: the
    rule's own set-up (SIRT diagonal for GSL with variable blocks, block
    inverses for GSQ with fixed blocks, row view of A) plus one iteration."""

    params = [DATASETS, GREEDY_RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    number = 1
    repeat = (1, 5, 20.0)
    warmup_time = 0.0
    timeout = 180

    def setup(self, dataset, rule, blocks):
        quiet()
        make_problem(dataset)            # generate the data outside the measurement
        self.options = solve_options(rule, blocks)

    def time_setup_and_one_iteration(self, dataset, rule, blocks):
        bcd.solve(make_problem(dataset), max_iter=1, tol=0.0, check_every=NO_CHECKS,
                  **self.options)


@keep_benchmark_names("bench_updates")
class Updates(IterationTracks):
    params = [DATASETS, UPDATES, BLOCKS]
    param_names = ["dataset", "update", "blocks"]
    rule = "gs"

    def setup(self, dataset, update, blocks):
        if update == "exact" and dataset != "A":
            raise NotImplementedError("the exact update needs a quadratic objective")
        quiet()
        self.problem = make_problem(dataset)
        self.options = dict(solve_options(self.rule, blocks), **update_options(update))
        warm_up(self.problem, self.options)


class MultinomialTracks(abc.ABC):
    """``track_`` benchmarks shared by the classes on dataset C whose
    ``setup`` sets ``self.problem`` and ``self.options``: the time per
    iteration of the compiled loop and f(x_200).  (Abstract, so that asv
    does not collect it as a benchmark class.)"""

    @abc.abstractmethod
    def setup(self, *params):
        """Set ``self.problem`` and ``self.options``."""

    def _solve_200(self):
        return bcd.solve(self.problem, max_iter=N_ITER, tol=0.0, check_every=NO_CHECKS,
                         **self.options)

    def track_seconds_per_iteration(self, *params):
        """Time per iteration of the compiled loop (``Result.iteration_time / n_iter``)."""
        result = self._solve_200()
        return result.iteration_time / result.n_iter

    track_seconds_per_iteration.unit = "seconds"

    def track_objective_200(self, *params):
        """f(x_200), evaluated with NumPy/SciPy (the optimal value is about 6.7137)."""
        return objective(DATASET, self._solve_200().x)

    track_objective_200.unit = "objective"


@keep_benchmark_names("bench_multinomial")
class MultinomialRules(MultinomialTracks):
    params = [RULES + GREEDY_RULES, BLOCKS]
    param_names = ["rule", "blocks"]
    timeout = 180

    def setup(self, rule, blocks):
        quiet()
        self.problem = make_problem(DATASET)
        self.options = dict(solve_options(rule, blocks), update="newton")
        warm_up(self.problem, self.options)


@keep_benchmark_names("bench_multinomial")
class MultinomialUpdates(MultinomialTracks):
    params = [[u for u in UPDATES if u != "exact"], BLOCKS]
    param_names = ["update", "blocks"]
    rule = "gsd"

    def setup(self, update, blocks):
        quiet()
        self.problem = make_problem(DATASET)
        self.options = dict(solve_options(self.rule, blocks), **update_options(update))
        warm_up(self.problem, self.options)

    def time_200_iterations(self, update, blocks):
        """Wall time of a 200-iteration solve (its set-up included)."""
        bcd.solve(self.problem, max_iter=N_ITER, tol=0.0, check_every=NO_CHECKS, **self.options)


@keep_benchmark_names("bench_overhead")
class SolveOverhead:
    def setup(self):
        quiet()
        rng = np.random.default_rng(0)
        self.A = np.asfortranarray(rng.standard_normal((10, 5)))
        self.b = rng.standard_normal(10)
        self.problem = bcd.LeastSquares(self.A, self.b)

    def time_solve_one_iteration(self):
        bcd.solve(self.problem, max_iter=1)

    def time_problem_and_solve_one_iteration(self):
        bcd.solve(bcd.LeastSquares(self.A, self.b), max_iter=1)


@keep_benchmark_names("bench_memory")
class PeakMemory:
    timeout = 120

    def setup_cache(self):
        return paper_dataset("A")

    def setup(self, data):
        quiet()
        self.problem = bcd.LeastSquares(*data)

    def peakmem_gs_variable_500(self, data):
        bcd.solve(self.problem, rule="gs", blocks="variable", block_size=5, max_iter=500,
                  tol=0.0, check_every=NO_CHECKS)


# --------------------------------------------------------------------------- a. cyclic vs scikit-learn

def _sklearn_lasso_epochs(A, b, epochs):
    """Seconds of a scikit-learn Lasso fit doing ``epochs`` cyclic epochs, and
    the number of epochs it did."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
    from sklearn.linear_model import Lasso

    model = Lasso(alpha=1e-10, fit_intercept=False, tol=0.0, max_iter=epochs,
                  selection="cyclic")
    elapsed, _ = timed(model.fit, A, b, ignore=SklearnConvergenceWarning)
    return elapsed, int(model.n_iter_)


def compare_cyclic_sklearn(repeats, epochs=20):
    """Row a: cyclic single-coordinate epochs on dataset A (least squares,
    sparse 1000 x 10000) against scikit-learn's coordinate descent for Lasso
    with a negligible penalty.  scikit-learn's time per epoch is the
    difference of a ``2E``-epoch and an ``E``-epoch fit divided by ``E``,
    which removes its fixed set-up cost.  Target: bcd / scikit-learn <= 1.
    """
    A, b = paper_dataset("A")
    n = A.shape[1]
    problem = bcd.LeastSquares(A, b)
    options = dict(rule="cyclic", blocks="fixed", partition="order", block_size=1)
    run_iterations(problem, max_iter=n, **options)          # warm-up
    _sklearn_lasso_epochs(A, b, 1)
    bcd_epoch, sk_epoch, sk_epochs_done = [], [], set()
    for _ in range(repeats):
        result = run_iterations(problem, max_iter=epochs * n, **options)
        bcd_epoch.append(result.iteration_time / epochs)
        t1, done1 = _sklearn_lasso_epochs(A, b, epochs)
        t2, done2 = _sklearn_lasso_epochs(A, b, 2 * epochs)
        sk_epoch.append((t2 - t1) / epochs)
        sk_epochs_done.update([(epochs, done1), (2 * epochs, done2)])
    note = f"E={epochs} epochs of {n} coordinates"
    if any(asked != done for asked, done in sk_epochs_done):
        note += "; scikit-learn stopped early, its epoch time is unreliable"
    ours, theirs = median(bcd_epoch), median(sk_epoch)
    return ratio_row("a. cyclic epoch on A: bcd / sklearn Lasso CD", ours, theirs, ours / theirs,
                     "<= 1.0x", note=note)


# --------------------------------------------------------------------------- b. GS-VB vs NumPy

#: the matrices of row b: name in the table, data, and target of NumPy / bcd
GS_MATRICES = {"sparse": ("sparse 20000^2", sparse_square, 20.0),
               "A": ("A", functools.partial(paper_dataset, "A"), 3.0)}


def compare_gs_numpy(matrix, repeats, n_iter=300):
    """Row b: Gauss-Southwell with variable blocks of 5 coordinates (GS-VB)
    against a plain NumPy/SciPy loop doing the same iterations
    (``references.numpy_gs_vb``: full gradient through a CSR copy of A^T,
    ``argpartition``, column slicing, ``eigvalsh`` of the 5 x 5 Gram matrix,
    residual update).  Both must produce the same iterates; an AssertionError
    names the first iteration that differs if they do not.  ``matrix`` is
    "sparse", a very sparse 20000 x 20000 matrix with 10 non-zeros per
    column (target NumPy / bcd >= 20; see also ``compare_gs_random``), or
    "A", dataset A (target NumPy / bcd >= 3).
    """
    name, data, target = GS_MATRICES[matrix]
    A, b = data()
    problem = bcd.LeastSquares(A, b)
    run_iterations(problem, max_iter=10, **GS_VB_OPTIONS)         # warm-up
    numpy_gs_vb(A, b, 2)
    ours, theirs = [], []
    for _ in range(repeats):
        x_ref, per_iter, blocks, steps = numpy_gs_vb(A, b, n_iter)
        theirs.append(per_iter)
        result = run_iterations(problem, max_iter=n_iter, **GS_VB_OPTIONS)
        ours.append(result.iteration_time / result.n_iter)
        check_iterates(problem, result.x, x_ref, blocks, steps, name)
    mine, ref = median(ours), median(theirs)
    return ratio_row(f"b. GS-VB on {name}: NumPy / bcd", mine, ref, ref / mine, f">= {target:g}x",
                     digits=1, note=f"{n_iter} iterations, iterates identical")


def compare_gs_random(repeats, n_iter=20000, target=10.0):
    """Row b, second target: GS-VB / Random-VB time per iteration <= 10 on
    the very sparse 20000 x 20000 matrix (blocks of 5)."""
    name, data, _ = GS_MATRICES["sparse"]
    problem = bcd.LeastSquares(*data())
    run_iterations(problem, rule="random", blocks="variable", block_size=BLOCK_SIZE, max_iter=10)
    gs, rnd = [], []
    for seed in range(repeats):
        r = run_iterations(problem, max_iter=n_iter, **GS_VB_OPTIONS)
        gs.append(r.iteration_time / r.n_iter)
        r = run_iterations(problem, rule="random", blocks="variable", block_size=BLOCK_SIZE,
                           max_iter=n_iter, random_state=seed)
        rnd.append(r.iteration_time / r.n_iter)
    g, q = median(gs), median(rnd)
    return ratio_row(f"b. per iteration on {name}: GS-VB / Random-VB", g, q, g / q,
                     f"<= {target:g}x", digits=1, note=f"{n_iter} iterations each")


# --------------------------------------------------------------------------- c. overhead

def compare_overhead(repeats, calls=200, warmup=20, target=1e-3):
    """Row c: fixed cost of ``bcd.solve`` on a 10 x 5 dense problem with
    ``max_iter=1`` (wall time of the call, median of ``calls`` calls).
    Target <= 1 ms.  ``figure`` is that time in seconds."""
    rng = np.random.default_rng(0)
    A = np.asfortranarray(rng.standard_normal((10, 5)))
    b = rng.standard_normal(10)
    problem = bcd.LeastSquares(A, b)
    medians = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        for _ in range(warmup):
            bcd.solve(problem, max_iter=1)
        for _ in range(repeats):
            times = [timed(bcd.solve, problem, max_iter=1)[0] for _ in range(calls)]
            medians.append(np.median(times))
    value = median(medians)
    return Row("c. bcd.solve on 10 x 5, max_iter=1", fmt_time(value), "-", fmt_time(value),
               f"<= {fmt_time(target)}", value <= target, f"median of {calls} calls", value)


# --------------------------------------------------------------------------- d, e. time to tolerance

L2 = 1.0
TOL = 1e-6
#: scikit-learn tolerances tried, loosest first, until its solution passes TOL
SKLEARN_TOLS = tuple(10.0 ** -e for e in range(2, 15))

# Fastest bcd configuration found for Logistic(B, l2=1) to ||grad f||_inf <= 1e-6
# (time to build the problem and solve, 2-core machine, scikit-learn's liblinear
# at about 35 ms and lbfgs at about 0.1 s on the same machine):
#   cyclic, variable blocks (a fresh random permutation cut into blocks every
#   pass), Armijo line search along -grad_b f, stopping test every ~2 epochs:
#     block_size 100: 0.33 s, 150: 0.26 s, 200: 0.21 s, 300: 0.20 s, 400: 0.24 s,
#     500: 0.37 s, 1000: 0.52 s; with check_every="auto" (a test every 1 or 2
#     iterations at these block sizes) 0.56 s at 200 and 0.76 s at 300.
#   random, variable blocks, line search: block_size 200: 0.54 s, 500: 0.66 s;
#   random, fixed blocks, line search, block_size 50-500: 0.65-0.96 s.
#   gs / gsd / gsl, fixed or variable blocks, line search, block_size 100-500:
#     0.96-1.5 s (gsl with variable blocks 2.6 s, of which about 1 s computes
#     the SIRT diagonal); smaller blocks did not converge within 1.5 s.
#   cyclic with fixed blocks (any partition), the lipschitz rule, and every
#   newton, matrix and gradient (lipschitz "bound" or "estimate") update for
#   every rule and block_size in 1..1000: not converged within 1.5 s (newton
#   reaches 1e-6..1e-5; matrix and gradient stay at 1e-1..1, their curvature
#   bound ||a_j||^2 / 4 being far above the curvature at the solution).
LOGISTIC_BEST = dict(rule="cyclic", blocks="variable", block_size=300, update="linesearch",
                     check_every=66, random_state=0)

# Fastest bcd configuration found for Multinomial(C, l2=1) to ||grad f||_inf <= 1e-6
# (scikit-learn's newton-cg at about 0.4 s; lbfgs stops at 3.6e-6 after 0.25 s):
#   random, fixed blocks, line search, one stopping test per epoch:
#     partition "sort" (default; all classes of two features of similar norm
#     per block) block_size 100: 4.2 s; partition "order" block_size 50 (one
#     feature, all classes): 5.8 s, 100: 4.3 s, 150: 4.7 s, 200: 4.5 s.
#   gs, fixed blocks of one feature (50 coordinates): line search 6.2 s,
#     newton 7.0 s.
#   not converged within 3 s (best ||g|| 1e-3 ... 1e-1): cyclic fixed and
#   variable, random variable, lipschitz, gs / gsd / gsl with block_size
#   10-200 (fixed) or 5-200 (variable), with line search or newton; matrix
#   and gradient ("bound" or "estimate") with every rule (||g|| >= 0.3).
MULTINOMIAL_BEST = dict(rule="random", blocks="fixed", block_size=100, update="linesearch",
                        check_every=500, random_state=0)


def _optimality(problem, x):
    """||grad f(x)||_inf on bcd's objective, by NumPy/SciPy."""
    return float(np.max(np.abs(problem.gradient(x))))


def _sklearn_x(model):
    """bcd's flat ``x`` from a fitted LogisticRegression: the coefficient row
    (binary) or ``W = coef_.T`` flattened row-major (multinomial)."""
    coef = model.coef_
    return coef.ravel().copy() if coef.shape[0] == 1 else coef.T.ravel()


def _check_objective_scaling(problem, model, A, y, name):
    """bcd's objective at scikit-learn's solution must be its summed log-loss
    plus l2/2 ||w||^2, i.e. scikit-learn's objective times 1/C."""
    from sklearn.metrics import log_loss

    x = _sklearn_x(model)
    theirs = log_loss(y, model.predict_proba(A), labels=model.classes_, normalize=False) \
        + 0.5 * L2 * float(x @ x)
    ours = problem.objective(x)
    if not abs(ours - theirs) <= 1e-9 * abs(theirs):
        raise AssertionError(f"objective scaling differs on {name}: bcd {ours!r}, "
                             f"scikit-learn log-loss + l2/2 ||w||^2 {theirs!r}")


def _time_sklearn(name, make_model, A, y, problem, repeats, check_name):
    """Tighten ``tol`` by factors of 10 until the fit reaches TOL on
    ``problem`` (or stops improving for three steps), check the objective
    scaling at that fit, and time ``repeats`` fits at that ``tol``."""
    def fit_seconds(tol):
        return timed(make_model(tol).fit, A, y, ignore=Warning)[0]

    def attempt(tol):
        model = make_model(tol)
        timed(model.fit, A, y, ignore=Warning)      # convergence and lbfgs messages
        return _optimality(problem, _sklearn_x(model)), model

    ref = at_loosest_tolerance(name, SKLEARN_TOLS, attempt, TOL, fit_seconds, repeats)
    _check_objective_scaling(problem, ref.payload, A, y, check_name)
    return ref


def _time_bcd_to_tol(make_problem, options, repeats):
    """Median wall time of building the problem and solving it to TOL."""
    bcd.solve(make_problem(), max_iter=10, **options)          # warm-up
    times, opts, iters, converged = [], [], [], True
    for _ in range(repeats):
        start = time.perf_counter()
        problem = make_problem()
        result = bcd.solve(problem, tol=TOL, max_iter=10**9, **options)
        times.append(time.perf_counter() - start)
        opts.append(_optimality(problem, result.x))
        iters.append(result.n_iter)
        converged &= bool(result.converged)
    chosen = bcd.core.auto.configuration(result.options)
    return median(times), max(opts), int(np.median(iters)), converged, chosen


def compare_time_to_tol(label, make_problem, options, references, A, y, repeats, name):
    """Rows of bcd's time to TOL over the fastest reference that reaches TOL:
    one for ``bcd.solve`` with the default (automatic) configuration and
    one for the best explicit configuration ``options``."""
    problem = make_problem()
    refs = [_time_sklearn(ref_name, make_model, A, y, problem, repeats, name)
            for ref_name, make_model in references]
    reached = [r for r in refs if r.reached]
    ref = min(reached or refs, key=lambda r: r.seconds)
    peers = "; ".join(r.describe(f"||g||={r.error:.2e}", TOL,
                                 f", n_iter={int(np.max(r.payload.n_iter_))}") for r in refs)
    if not reached:
        peers += "; no scikit-learn solver reached the tolerance"
    rows = []
    for kind, config in (("default", {}), ("best explicit", options)):
        ours, opt, n_iter, converged, chosen = _time_bcd_to_tol(make_problem, config, repeats)
        note = (f"l2={L2:g}; bcd {kind} ({format_options(chosen)}): {n_iter} iterations, "
                f"||g||={opt:.2e}" + ("" if converged and opt <= TOL else " NOT CONVERGED"))
        rows.append(ratio_row(f"{label} ({kind})", ours, f"{fmt_time(ref.seconds)} {ref.name}",
                              ours / ref.seconds, "<= 1.0x",
                              note=note + ("; " + peers if not rows else ""),
                              passed=converged and opt <= TOL))
    return rows


def compare_logistic_sklearn(repeats):
    """Row d: time to ``||grad f||_inf <= 1e-6`` on dataset B (binary
    logistic regression, sparse 1000 x 10000) with ``l2 = 1``: ``bcd.solve``
    with its default configuration, and bcd's fastest explicit configuration
    (found by a grid search, see ``LOGISTIC_BEST``), against
    scikit-learn's ``LogisticRegression`` with ``solver="lbfgs"`` and
    ``solver="liblinear"`` (dual, as n_features > n_samples), both without
    intercept and with ``C = 1 / l2``, which is the same objective up to the
    factor C.  Each scikit-learn ``tol`` is tightened by factors of 10 until
    its solution passes ``||grad f||_inf <= 1e-6`` on bcd's objective
    (``problem.gradient``); only the fit is timed.  A solver that never
    gets there is reported at its best ``tol`` but is not a reference:
    lbfgs stops on its relative-decrease test (64 eps on the
    sample-averaged objective) near 1e-6.  bcd's time covers building the
    problem and the solve.  Target: bcd default / (faster of the
    scikit-learn solvers that reach the tolerance) <= 1; a second row
    reports the explicit configuration.
    """
    from sklearn.linear_model import LogisticRegression

    A, y = paper_dataset("B")
    C = 1.0 / L2

    def lbfgs(tol):
        return LogisticRegression(solver="lbfgs", C=C, fit_intercept=False, tol=tol,
                                  max_iter=100000)

    def liblinear(tol):
        # dual coordinate descent: the recommended form when n_features > n_samples
        return LogisticRegression(solver="liblinear", dual=True, C=C, fit_intercept=False,
                                  tol=tol, max_iter=100000, random_state=0)

    return compare_time_to_tol(
        "d. logistic B to 1e-6: bcd / sklearn",
        lambda: bcd.Logistic(A, y, l2=L2), LOGISTIC_BEST,
        [("lbfgs", lbfgs), ("liblinear", liblinear)], A, y, repeats, "B")


def compare_multinomial_sklearn(repeats):
    """Row e: the same as row d on dataset C (multinomial logistic
    regression, sparse 1000 x 1000, 50 classes, ``l2 = 1``) against
    scikit-learn's lbfgs (multinomial loss, no intercept, ``C = 1``) and,
    because lbfgs stops on its relative-decrease test before reaching 1e-6
    here, newton-cg.  The objective scaling is checked: at scikit-learn's
    solution, bcd's objective must equal scikit-learn's summed log-loss plus
    ``l2/2 ||W||^2``.  bcd runs its default configuration and
    ``MULTINOMIAL_BEST``.  Target: bcd default / (fastest scikit-learn
    solver that reaches the tolerance) <= 1.
    """
    from sklearn.linear_model import LogisticRegression

    A, y = paper_dataset("C")
    C = 1.0 / L2

    def make(solver):
        # multinomial loss is the default for multi-class lbfgs and newton-cg
        return lambda tol: LogisticRegression(solver=solver, C=C, fit_intercept=False, tol=tol,
                                              max_iter=100000)

    return compare_time_to_tol(
        "e. multinomial C to 1e-6: bcd / sklearn",
        lambda: bcd.Multinomial(A, y, l2=L2), MULTINOMIAL_BEST,
        [("lbfgs", make("lbfgs")), ("newton-cg", make("newton-cg"))], A, y, repeats, "C")


# --------------------------------------------------------------------------- f. GSD-VB + Newton vs NumPy

def compare_gsd_newton_numpy(repeats, n_iter=200, target=20.0):
    """Row f: the GSD rule with variable blocks of 5 coordinates and block
    Newton updates (GSD-VB + Newton) on dataset C (``l2 = 1``) against a
    NumPy/SciPy loop doing the same iterations
    (``references.numpy_gsd_newton``): full gradient ``A^T (P - Y) + l2 X``
    by a sparse-dense product, scores ``g_i^2 / L_i`` with bcd's ``L_i``
    (``||A[:, j]||^2 / 4 + l2`` for feature j and every class),
    ``argpartition``, the dense block Hessian of the multinomial loss,
    Cholesky solve with the pseudo-inverse and steepest-descent fallbacks,
    and the Armijo backtracking search of ``src/bcd/core/_update.pyx``
    (quadratic, then cubic interpolation), with f(x + alpha d) - f(x)
    evaluated as bcd does.  Both must produce the same iterates
    (AssertionError otherwise).  Target NumPy / bcd >= 20.
    """
    A, y = paper_dataset("C")
    problem = bcd.Multinomial(A, y, l2=L2)
    options = dict(rule="gsd", blocks="variable", block_size=BLOCK_SIZE, update="newton")
    L = np.asarray(problem.lipschitz)
    run_iterations(problem, max_iter=10, **options)          # warm-up
    numpy_gsd_newton(A, problem.y, problem.n_classes, L, L2, 2)
    ours, theirs = [], []
    for _ in range(repeats):
        x_ref, per_iter, blocks, steps = numpy_gsd_newton(A, problem.y, problem.n_classes, L,
                                                          L2, n_iter)
        theirs.append(per_iter)
        result = run_iterations(problem, max_iter=n_iter, **options)
        ours.append(result.iteration_time / result.n_iter)
        check_iterates(problem, result.x, x_ref, blocks, steps, "C", options, "GSD-VB + Newton")
    mine, ref = median(ours), median(theirs)
    return ratio_row("f. GSD-VB + Newton on C: NumPy / bcd", mine, ref, ref / mine,
                     f">= {target:g}x", digits=1,
                     note=f"{n_iter} iterations, l2={L2:g}, iterates identical")


#: the rows of compare.py in this module: (progress title, run(repeats) -> Row)
STEPS = [
    ("a. cyclic epochs vs scikit-learn", compare_cyclic_sklearn),
    ("b. GS-VB vs NumPy, sparse 20000 x 20000", functools.partial(compare_gs_numpy, "sparse")),
    ("b. GS-VB vs Random-VB, sparse 20000 x 20000", compare_gs_random),
    ("b. GS-VB vs NumPy, dataset A", functools.partial(compare_gs_numpy, "A")),
    ("c. solve overhead", compare_overhead),
    ("d. logistic regression on B to 1e-6 vs scikit-learn", compare_logistic_sklearn),
    ("e. multinomial regression on C to 1e-6 vs scikit-learn", compare_multinomial_sklearn),
    ("f. GSD-VB + Newton vs NumPy, dataset C", compare_gsd_newton_numpy),
]


# --------------------------------------------------------------------------- rows as asv tracks

class CyclicVsSklearn(RowTrack):
    """Row a: bcd / scikit-learn time per cyclic epoch on A (target <= 1)."""

    requires = ("sklearn",)

    def track_epoch_ratio(self):
        return compare_cyclic_sklearn(self.repeats).figure


class GaussSouthwellVsNumpy(RowTrack):
    """Row b: NumPy / bcd time per GS-VB iteration (targets >= 20 on the
    sparse 20000 x 20000 matrix, >= 3 on A)."""

    params = [list(GS_MATRICES)]
    param_names = ["matrix"]

    def track_numpy_ratio(self, matrix):
        return compare_gs_numpy(matrix, self.repeats).figure


class GaussSouthwellVsRandom(RowTrack):
    """Row b: GS-VB / Random-VB time per iteration on the sparse 20000 x
    20000 matrix (target <= 10)."""

    def track_gs_random_ratio(self):
        return compare_gs_random(self.repeats).figure


class SolveOverheadRow(RowTrack):
    """Row c: median wall time of ``bcd.solve`` on a 10 x 5 problem with
    ``max_iter=1`` (target <= 1 ms)."""

    unit = "seconds"

    def track_overhead(self):
        return compare_overhead(self.repeats).figure


class LogisticVsSklearn(RowTrack):
    """Row d: bcd (default configuration) / fastest scikit-learn time to
    ||grad f||_inf <= 1e-6 on B."""

    requires = ("sklearn",)

    def track_time_ratio(self):
        return compare_logistic_sklearn(self.repeats)[0].figure


class MultinomialVsSklearn(RowTrack):
    """Row e: bcd (default configuration) / fastest scikit-learn time to
    ||grad f||_inf <= 1e-6 on C."""

    requires = ("sklearn",)

    def track_time_ratio(self):
        return compare_multinomial_sklearn(self.repeats)[0].figure


class GsdNewtonVsNumpy(RowTrack):
    """Row f: NumPy / bcd time per GSD-VB + Newton iteration on C (target >= 20)."""

    def track_numpy_ratio(self):
        return compare_gsd_newton_numpy(self.repeats).figure
