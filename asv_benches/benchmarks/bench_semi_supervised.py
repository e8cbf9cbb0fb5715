"""Semi-supervised learning: label propagation on the two moons.

Row p (``compare_semi_supervised``): ``bcd.semi_supervised.LabelPropagation
(kernel="knn")`` against scikit-learn's ``LabelSpreading(kernel="knn")``,
both with their defaults otherwise (7 neighbours each), on
``sklearn.datasets.make_moons(100000, noise=0.1, random_state=0)`` with 1%
of the points (1000, drawn uniformly with seed 0) labelled.  Timed: ``fit``
(graph construction and propagation), median of the repeats.  Reported:
the ratio bcd / scikit-learn (target <= 0.2), the fraction of points whose
``transduction_`` agree, the accuracy of both against the true labels, and
where bcd's time goes: the k-nearest-neighbour graph (the same
``NearestNeighbors`` search as scikit-learn's, timed on its own), the
iterations of the solves (``Result.time`` of each class, from
``results_``), and the rest (symmetrizing the graph, building the problems,
the solves' set-up).

The two estimators compute different things: bcd's solves the harmonic
problem of Zhu et al. on the symmetrized graph to its tolerance (residual
1e-3 by default), scikit-learn's runs the label spreading iteration of Zhou
et al. (alpha = 0.2) until the distributions change by less than 1e-3 or
for at most 30 iterations.  ``SemiSupervisedVsSklearn`` reports the row's
ratio to asv (skipped without scikit-learn).
"""
import functools
import time

import numpy as np

from .common import RowTrack, fmt_time, median, ratio_row, timed

#: row p: the data set, the labelled fraction and the graph
N_SAMPLES = 100000
NOISE = 0.1
N_LABELLED = 1000
N_NEIGHBORS = 7
SEED = 0
TARGET = "<= 0.2x"


@functools.lru_cache(maxsize=None)
def moons():
    """``(X, y, truth)``: the two moons, the labels with -1 for the
    unlabelled points and the true labels."""
    from sklearn.datasets import make_moons

    X, truth = make_moons(N_SAMPLES, noise=NOISE, random_state=SEED)
    y = np.full(N_SAMPLES, -1)
    labelled = np.random.default_rng(SEED).choice(N_SAMPLES, N_LABELLED, replace=False)
    y[labelled] = truth[labelled]
    return X, y, truth


def _graph_seconds(X):
    """Time of the k-nearest-neighbour connectivity graph alone, built as
    both estimators build it."""
    from sklearn.neighbors import NearestNeighbors

    start = time.perf_counter()
    NearestNeighbors(n_neighbors=N_NEIGHBORS).fit(X).kneighbors_graph(mode="connectivity")
    return time.perf_counter() - start


def compare_semi_supervised(repeats):
    """Row p: fit time of ``bcd.semi_supervised.LabelPropagation(kernel="knn")``
    against ``sklearn.semi_supervised.LabelSpreading(kernel="knn")`` (both
    with 7 neighbours and their defaults otherwise) on 100000 two-moons
    points with 1000 labelled; target bcd / scikit-learn <= 0.2.  The row
    fails if a bcd solve did not converge."""
    from sklearn.semi_supervised import LabelSpreading

    from bcd.semi_supervised import LabelPropagation

    X, y, truth = moons()
    ours, theirs, graph = [], [], []
    for _ in range(max(1, repeats)):
        t, mine = timed(LabelPropagation(kernel="knn", n_neighbors=N_NEIGHBORS).fit, X, y,
                        ignore=Warning)
        ours.append(t)
        t, ref = timed(LabelSpreading(kernel="knn", n_neighbors=N_NEIGHBORS).fit, X, y,
                       ignore=Warning)
        theirs.append(t)
        graph.append(_graph_seconds(X))
    ours, theirs, graph = median(ours), median(theirs), median(graph)
    solves = sum(r.time for r in mine.results_)
    converged = all(r.converged for r in mine.results_)
    agree = float(np.mean(mine.transduction_ == ref.transduction_))
    note = (f"make_moons({N_SAMPLES}, noise={NOISE}), {N_LABELLED} labelled, "
            f"{N_NEIGHBORS} neighbours; transduction_ agree on {agree:.4f} of the points; "
            f"accuracy bcd {np.mean(mine.transduction_ == truth):.4f}, scikit-learn "
            f"{np.mean(ref.transduction_ == truth):.4f}; bcd: {len(mine.results_)} solves "
            f"({mine.results_[0].options['auto']!r}: "
            f"{mine.results_[0].options['blocks']}), {mine.n_iter_} block updates in all, "
            f"{'all converged' if converged else 'NOT all converged'}; time: graph "
            f"{fmt_time(graph)} (the k-NN search alone), solves {fmt_time(solves)} (bcd.solve's "
            f"iterations), the rest {fmt_time(max(ours - graph - solves, 0.0))} (symmetrizing "
            f"the graph, building the problems, the solves' set-up); "
            f"scikit-learn: {ref.n_iter_} iterations, {fmt_time(max(theirs - graph, 0.0))} "
            f"besides the graph")
    return ratio_row("p. label propagation, moons 1e5, 1% labelled: bcd / LabelSpreading",
                     ours, theirs, ours / theirs, TARGET, note=note, passed=converged)


#: the rows of compare.py in this module: (progress title, run(repeats) -> Row(s))
STEPS = [
    ("p. label propagation on 100000 two moons (1% labelled) vs scikit-learn LabelSpreading",
     compare_semi_supervised),
]


# --------------------------------------------------------------------------- rows as asv tracks

class SemiSupervisedVsSklearn(RowTrack):
    """Row p: bcd / scikit-learn fit time of label propagation on 100000
    two-moons points, 1% labelled (target <= 0.2)."""

    requires = ("sklearn",)

    def track_time_ratio(self):
        return compare_semi_supervised(self.repeats).figure
