r"""
Forest-structured blocks on a lattice
=====================================

Label propagation on a graph asks for node values :math:`x` that vary
little along edges while the labelled nodes keep their labels:

.. math::

   \min_x \tfrac12 \sum_{i<j} w_{ij} (x_i - x_j)^2 ,

a quadratic :math:`\tfrac12 x^T Q x - c^T x` over the unknown nodes whose
Hessian :math:`Q` (the graph Laplacian restricted to them) has the graph's
sparsity. When the nodes of a block induce a forest of that graph, the
block's exact minimizer costs time linear in the block, by message passing
(Section 5 of the paper). So blocks can hold half the nodes or more and
still be solved exactly.

This example compares the forest-structured block strategies of
:func:`bcd.solve` with coordinate descent on the paper's lattice problem
(its dataset D, here 40 x 40 instead of 50 x 50), and draws the blocks.
"""

# %%
# The problem
# -----------
import warnings

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import bcd

W, labels = bcd.datasets.make_lattice_dataset(size=40, n_labelled=64,
                                              random_state=1)
problem = bcd.LabelPropagation(W, labels)
n = problem.n_coordinates
f_star = problem.objective(spsolve(sp.csc_matrix(problem.Q), problem.c))
print(f"{W.shape[0]} nodes, {n} unknown, f* = {f_star:.10g}")

# %%
# The strategies
# --------------
# * ``blocks="tree"``: every iteration grows a maximal forest, trying the
#   nodes by decreasing :math:`|\nabla_i f|` (``rule="gs"``) or in random
#   order (``rule="random"``);
# * ``blocks="coloring"``: the greedy colouring, blocks without internal
#   edges, visited in turn (red-black on a full lattice; on the unknown
#   nodes of this one it needs a third, small colour, printed below);
# * ``blocks="forest_partition"``: the greedy partition into forests,
#   visited in turn;
# * the paper's "General" baseline: Gauss-Southwell on variable blocks of
#   :math:`\lfloor n^{1/3} \rfloor` nodes with a dense exact solve;
# * coordinate descent: one node at a time, in order.
#
# Every run records the objective at every iteration (``check_every=1``).
tau = int(np.floor(n ** (1 / 3) + 1e-9))
configs = {
    "greedy tree": dict(rule="gs", blocks="tree"),
    "random tree": dict(rule="random", blocks="tree"),
    "red-black": dict(rule="cyclic", blocks="coloring"),
    "forest partition": dict(rule="cyclic", blocks="forest_partition"),
    f"GS, variable blocks of {tau}": dict(rule="gs", blocks="variable",
                                          block_size=tau),
    "coordinate descent": dict(rule="cyclic", blocks="fixed",
                               partition="order", block_size=1),
}


def run(options, max_iter):
    # runs of a fixed length end with status "max_iter": no warning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        result = bcd.solve(problem, update="exact", max_iter=max_iter,
                           tol=0.0, check_every=1, random_state=0,
                           **options)
    return (result.history.objective - f_star) / abs(f_star)


gaps = {label: run(options, 100) for label, options in configs.items()}
for label, gap in gaps.items():
    print(f"{label:>26s}: (f - f*)/|f*| = {gap[-1]:.2e} "
          f"after 100 iterations")

# %%
# Per pass over the nodes
# -----------------------
# An iteration on a forest block costs about as much as updating its nodes
# one by one, so the fair comparison with coordinate descent counts node
# updates. The partitions are fixed and visited in turn, so their block
# sizes give that count exactly: the builders behind ``"coloring"`` and
# ``"forest_partition"``, :func:`bcd.forest.greedy_coloring` and
# :func:`bcd.forest.forest_partition`, applied to the Hessian's graph.
# (Tree blocks are grown anew at every iteration and are left out here.)
per_pass = {}
for label, build in (("red-black", bcd.forest.greedy_coloring),
                     ("forest partition", bcd.forest.forest_partition)):
    sizes = np.bincount(build(problem.Q))
    print(f"{label}: blocks of {sizes.tolist()} nodes")
    updated = np.concatenate([[0], np.resize(sizes, 100)])
    per_pass[label] = np.cumsum(updated) / n, gaps[label]
n_passes = 30
cd_gap = run(configs["coordinate descent"], n_passes * n)
per_pass["coordinate descent"] = np.arange(n_passes * n + 1) / n, cd_gap
for label, (passes, gap) in per_pass.items():
    k = np.searchsorted(passes, n_passes)
    print(f"{label:>18s}: (f - f*)/|f*| = {gap[k]:.2e} "
          f"after {passes[k]:.0f} passes")

# %%
# Suboptimality
# -------------
# Per iteration (left) the forest blocks are far ahead: each solves
# hundreds of nodes exactly, and the greedy tree, grown around the largest
# gradients, leads. Per pass (right) the red-black blocks are no better
# than coordinate descent: a block without internal edges is solved
# exactly by one coordinate step per node, so red-black *is* coordinate
# descent in another order. The forest partition is ahead: solving a
# forest exactly settles whole paths of the lattice at once, where a
# coordinate step moves information one edge.
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
colors = {label: f"C{k}" for k, label in enumerate(gaps)}
for label, gap in gaps.items():
    style = "--" if label.startswith(("GS", "coordinate")) else "-"
    axes[0].semilogy(np.arange(gap.size), gap, style, color=colors[label],
                     label=label)
for label, (passes, gap) in per_pass.items():
    style = "--" if label.startswith("coordinate") else "-"
    axes[1].semilogy(passes, gap, style, color=colors[label], label=label)
axes[0].set_xlabel("iteration")
axes[1].set_xlabel("node updates / n (passes)")
axes[1].set_xlim(0, n_passes)
axes[0].set_ylabel("(f(x_k) - f*) / |f*|")
for ax in axes:
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle("label propagation on a 40 x 40 lattice")
fig.tight_layout()

# %%
# The blocks
# ----------
# On a small lattice with every node unknown, the colouring gives the two
# red-black blocks (no edge inside a block) and the forest partition two
# blocks whose induced edges (drawn in colour) form forests;
# :func:`bcd.forest.is_forest` checks that.
side = 8
grid = bcd.datasets.make_lattice_graph(side, side)
partitions = {"red-black colouring": bcd.forest.greedy_coloring(grid),
              "forest partition": bcd.forest.forest_partition(grid)}
for name, blocks in partitions.items():
    forests = all(bcd.forest.is_forest(grid, np.flatnonzero(blocks == k))
                  for k in range(blocks.max() + 1))
    print(f"{name}: {blocks.max() + 1} blocks, "
          f"every block a forest: {forests}")

# node i sits at row i % side, column i // side
rows = np.arange(side * side) % side
cols = np.arange(side * side) // side
edges = sp.triu(grid).tocoo()
fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
for ax, (name, blocks) in zip(axes, partitions.items()):
    for i, j in zip(edges.row, edges.col):
        inside = blocks[i] == blocks[j]
        ax.plot([cols[i], cols[j]], [rows[i], rows[j]], zorder=1,
                color=f"C{blocks[i]}" if inside else "0.85",
                lw=2.5 if inside else 1)
    ax.scatter(cols, rows, c=[f"C{k}" for k in blocks], s=60, zorder=2,
               edgecolors="k", linewidths=0.5)
    ax.set_title(f"{name}: {blocks.max() + 1} blocks")
    ax.set_aspect("equal")
    ax.axis("off")
fig.tight_layout()
plt.show()
