r"""
Label propagation on two moons
==============================

Semi-supervised classification: of 600 points on two interleaved half
circles, 10 carry their class, and the others get theirs by propagation
along a nearest-neighbour graph. With the known labels
:math:`y_j = \pm 1` fixed, the unknown values minimize

.. math::

   \tfrac12 \sum_{i<j} w_{ij} (x_i - x_j)^2 ,

and the sign of :math:`x_i` is the predicted class.
:class:`bcd.LabelPropagation` states this as a sparse quadratic, which
:func:`bcd.solve` minimizes with forest-structured blocks by default. (The
estimator :class:`bcd.semi_supervised.LabelPropagation` does the same
behind scikit-learn's interface.)
"""

# %%
# The graph
# ---------
# A symmetric 10-nearest-neighbour graph with unit weights, built with
# scikit-learn's :func:`~sklearn.neighbors.kneighbors_graph`.
import matplotlib.pyplot as plt
import numpy as np
from scipy.sparse.csgraph import connected_components
from sklearn.datasets import make_moons
from sklearn.neighbors import kneighbors_graph

import bcd

X, classes = make_moons(n_samples=600, noise=0.1, random_state=0)
y = np.where(classes == 1, 1.0, -1.0)
W = kneighbors_graph(X, n_neighbors=10, include_self=False)
W = W.maximum(W.T)
n_components = connected_components(W, directed=False)[0]
print(f"{W.shape[0]} nodes, {W.nnz // 2} edges, "
      f"{n_components} connected component(s)")

rng = np.random.default_rng(0)
known = np.concatenate([
    rng.choice(np.flatnonzero(classes == c), 5, replace=False)
    for c in (0, 1)])
labels = np.full(len(y), np.nan)          # NaN: unknown
labels[known] = y[known]

# %%
# Solving
# -------
# With no options, :func:`bcd.solve` picks its configuration from the
# problem's structure; ``result.options["auto"]`` names the row of the
# automatic table it used.
problem = bcd.LabelPropagation(W, labels)
result = bcd.solve(problem)
print(result)
print("configuration:", {key: result.options[key]
                         for key in ("auto", "rule", "blocks", "update")})

scores = problem.full_labels(result.x)   # every node, the known ones too
predicted = np.where(scores > 0, 1.0, -1.0)
unknown = problem.unknown
accuracy = np.mean(predicted[unknown] == y[unknown])
print(f"accuracy on the {unknown.size} unlabelled points: {accuracy:.3f}")

# %%
# The propagated values
# ---------------------
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
points = axes[0].scatter(X[:, 0], X[:, 1], c=scores, cmap="coolwarm",
                         vmin=-1, vmax=1, s=12)
fig.colorbar(points, ax=axes[0], label="x_i", shrink=0.6)
axes[0].set_title("propagated values")
wrong = predicted != y
axes[1].scatter(X[~wrong, 0], X[~wrong, 1], s=12,
                c=np.where(predicted[~wrong] > 0, "C3", "C0"))
axes[1].scatter(X[wrong, 0], X[wrong, 1], marker="x", c="k", s=30,
                label=f"misclassified ({wrong.sum()})")
axes[1].set_title(f"sign of x_i: accuracy {accuracy:.3f}")
for ax in axes:
    ax.scatter(X[known, 0], X[known, 1], s=120, facecolors="none",
               edgecolors="k", linewidths=1.5,
               label="labelled" if ax is axes[1] else None)
    ax.set_aspect("equal")
axes[1].legend(loc="lower left", fontsize=8)
fig.tight_layout()

# %%
# With scikit-learn's interface
# -----------------------------
# :class:`bcd.semi_supervised.LabelPropagation` takes the points and the
# labels the scikit-learn way (``-1`` marks an unlabelled point), builds
# its own k-nearest-neighbour graph (as in scikit-learn, a point counts
# among its own ``n_neighbors``, so ``n_neighbors=11`` links each to its 10
# nearest others; weight 1 between mutual neighbours, 1/2 otherwise) and
# solves one problem per class.
from bcd.semi_supervised import LabelPropagation

y_partial = np.full(len(classes), -1)
y_partial[known] = classes[known]
model = LabelPropagation(kernel="knn", n_neighbors=11).fit(X, y_partial)
agree = np.mean(model.transduction_ == np.where(predicted > 0, 1, 0))
print(f"estimator: accuracy on the unlabelled points "
      f"{np.mean(model.transduction_[unknown] == classes[unknown]):.3f}; "
      f"same labels as above for {100 * agree:.1f}% of the points")
plt.show()
