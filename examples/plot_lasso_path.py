r"""
A Lasso regularization path
===========================

:func:`bcd.path` solves an L1-penalized problem along a decreasing grid of
penalty weights, starting each solve from the previous solution. Here the
problem is the Lasso on scikit-learn's diabetes data (442 patients, 10
standardized measurements),

.. math::

   F(x) = \tfrac12 \lVert Ax - b \rVert^2 + \lambda \lVert x \rVert_1 ,

from :math:`\lambda_{\max}`, the smallest weight at which :math:`x = 0`
is optimal, down to :math:`\lambda_{\max} / 1000`.
"""

# %%
# The path
# --------
# The weight given to :class:`bcd.L1` only marks the problem as
# L1-penalized; :func:`bcd.path` replaces it at every grid value. The
# response is centred, as the problem has no intercept.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes

import bcd

data = load_diabetes()
A, b = data.data, data.target - data.target.mean()
problem = bcd.LeastSquares(A, b, penalty=bcd.L1(1.0))
path = bcd.path(problem, tol=1e-8)
print(path)
print(f"lambda_max = {path.lambda_max:.6g} "
      f"(= max_i |a_i^T b| = {np.max(np.abs(A.T @ b)):.6g})")

# %%
# Every solve stops on its KKT residual (``tol``), and for the Lasso the
# duality gap certifies the objective as well:
relative_gap = path.duality_gaps / path.objectives
print(f"largest KKT residual on the path: {path.optimality.max():.2e}")
print(f"largest duality gap relative to F: {np.nanmax(relative_gap):.2e}")
print(f"block updates per grid value: {path.n_iter.min()} to "
      f"{path.n_iter.max()}; {1e3 * path.times.sum():.1f} ms in all")

# %%
# Coefficients along the path
# ---------------------------
# Variables enter the model one after another as the weight decreases;
# one can also leave again, as happens near the end of this path.
order = np.argsort(-np.abs(path.coefs[-1]))
ratio = path.lambdas / path.lambda_max
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for j in order:
    axes[0].semilogx(ratio, path.coefs[:, j], label=data.feature_names[j])
axes[0].set_ylabel("coefficient")
axes[0].legend(fontsize=8, ncol=2)
axes[0].set_title("Lasso path, diabetes data")
support = np.count_nonzero(path.coefs, axis=1)
axes[1].semilogx(ratio, support, "o-", ms=3)
axes[1].set_ylabel("non-zero coefficients")
axes[1].set_title("support size")
for ax in axes:
    ax.invert_xaxis()
    ax.set_xlabel("lambda / lambda_max")
    ax.grid(True, alpha=0.3)
fig.tight_layout()
plt.show()
