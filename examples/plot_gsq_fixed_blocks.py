r"""
Greedy rules with matrix updates (GS, GSL, GSD, GSQ)
====================================================

With a *matrix update* a block moves by
:math:`x_b \leftarrow x_b - H_b^{-1} \nabla_b f(x)`, where :math:`H_b`
bounds the block's Hessian. The progress such a step guarantees is
:math:`\tfrac12 \nabla_b f^T H_b^{-1} \nabla_b f`, so the greedy rule
that maximizes exactly that, GSQ (``rule="gsq"``), picks the block with the
best guarantee; GS, GSL and GSD use cheaper scores. This repeats the
comparison of the paper's Figure 5 on small copies of its datasets A
(least squares) and B (logistic regression), with fixed blocks of 5
coordinates.
"""

# %%
# Data
# ----
# Dataset B has more features than samples. When its matrix has full row
# rank, some :math:`x` gives every sample a positive margin, so the
# logistic loss tends to 0 along :math:`t x` as :math:`t \to \infty`:
# its infimum is :math:`f^* = 0`, and :math:`f(x_k)` is the suboptimality.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from scipy.sparse.linalg import lsqr

import bcd

size = dict(n_samples=200, n_features=2000, random_state=1)
A, b = bcd.datasets.make_paper_dataset("A", **size)
B, y = bcd.datasets.make_paper_dataset("B", **size)
least_squares = bcd.LeastSquares(A, b)
logistic = bcd.Logistic(B, y)
x_lsqr = lsqr(A, b, atol=1e-15, btol=1e-15, conlim=1e16,
              iter_lim=100000)[0]
f_star_A = least_squares.objective(x_lsqr)
print(f"A: f* = {f_star_A:.3g} (LSQR)")
rank = np.linalg.matrix_rank(B.toarray())
print(f"B: rank {rank} with {B.shape[0]} samples, so f* = 0")

# %%
# Runs
# ----
# Fixed blocks partition the coordinates once, sorted by :math:`L_i`
# (``partition="sort"``); the GSQ scores need :math:`H_b^{-1}` of every
# block, computed once. Each run makes 500 iterations (``tol=0``; the
# warnings that they stop at ``max_iter`` are silenced).
rules = ["gs", "gsl", "gsd", "gsq"]
panels = {"dataset A, least squares": (least_squares, f_star_A),
          "dataset B, logistic regression": (logistic, 0.0)}
curves = {}
for title, (problem, f_star) in panels.items():
    for rule in rules:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bcd.ConvergenceWarning)
            result = bcd.solve(problem, rule=rule, blocks="fixed",
                               partition="sort", block_size=5,
                               update="matrix", max_iter=500, tol=0.0,
                               check_every=1)
        gap = result.history.objective - f_star
        curves[title, rule] = result.history.iteration, gap
        print(f"{title}, {rule:>3s}: f(x_500) - f* = {gap[-1]:.3e}")

# %%
# With matrix updates, GSQ makes the most progress on both problems, and
# GS, which ignores the curvature, the least.
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, title in zip(axes, panels):
    for rule in rules:
        iteration, gap = curves[title, rule]
        ax.semilogy(iteration, np.maximum(gap, 1e-16), label=rule)
    ax.set_title(f"{title}\nfixed blocks of 5, matrix updates",
                 fontsize=10)
    ax.set_xlabel("iteration k")
    ax.set_ylabel("f(x_k) - f*")
    ax.grid(True, alpha=0.3)
    ax.legend(title="rule")
fig.tight_layout()
plt.show()
