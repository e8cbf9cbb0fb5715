r"""
Non-negative least squares and box constraints
==============================================

A penalty that is the indicator of a set turns :func:`bcd.solve` into a
constrained solver: :class:`bcd.NonNegative` constrains :math:`x \ge 0`,
:class:`bcd.Box` constrains :math:`l \le x \le u`. The optimality measure
is then the KKT residual: the distance of :math:`-\nabla_i f(x)` to the
normal cone of the constraint at :math:`x_i`, which is zero exactly at the
solution. This example checks the solutions against SciPy's
:func:`~scipy.optimize.nnls` and :func:`~scipy.optimize.lsq_linear`.
"""

# %%
# Non-negative least squares
# --------------------------
# A dense 400 x 120 design, and a target made from a non-negative vector
# with many zeros, plus noise.
import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import lsq_linear, nnls

import bcd

rng = np.random.default_rng(0)
A = rng.standard_normal((400, 120))
x_true = np.maximum(rng.standard_normal(120), 0) * 2
b = A @ x_true + rng.standard_normal(400)

nonneg = bcd.LeastSquares(A, b, penalty=bcd.NonNegative())
result = bcd.solve(nonneg, tol=1e-9)
x_nnls, _ = nnls(A, b)
print(result)
print("configuration:", result.options["auto"])
print(f"objective: bcd {result.objective:.12g}, "
      f"scipy.optimize.nnls {nonneg.objective(x_nnls):.12g}")
print(f"largest coefficient difference: "
      f"{np.max(np.abs(result.x - x_nnls)):.1e}")
print(f"zeros: bcd {np.count_nonzero(result.x == 0)}, "
      f"nnls {np.count_nonzero(x_nnls == 0)}")

# %%
# A box
# -----
# The same data with every coefficient held in :math:`[0.5, 1.5]`. The
# solution sits on a bound wherever the unconstrained one would leave the
# box.
box = bcd.LeastSquares(A, b, penalty=bcd.Box(0.5, 1.5))
boxed = bcd.solve(box, tol=1e-9)
reference = lsq_linear(A, b, bounds=(0.5, 1.5), tol=1e-12)
print(boxed)
print(f"objective: bcd {boxed.objective:.12g}, "
      f"scipy.optimize.lsq_linear {box.objective(reference.x):.12g}")
at_bound = np.isclose(boxed.x, 0.5) | np.isclose(boxed.x, 1.5)
print(f"{np.count_nonzero(at_bound)} of {boxed.x.size} "
      f"coefficients at a bound")

# %%
# The solutions
# -------------
order = np.argsort(x_true)
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
panels = ((result.x, x_nnls, "x >= 0"),
          (boxed.x, reference.x, "0.5 <= x <= 1.5"))
for ax, (x, ref, title) in zip(axes, panels):
    ax.plot(x_true[order], "k.", ms=4, label="x used to make b")
    ax.plot(ref[order], "s", mfc="none", color="C1", ms=7, label="SciPy")
    ax.plot(x[order], "o", color="C0", ms=3, label="bcd.solve")
    ax.set_title(title)
    ax.set_xlabel("coefficient (sorted by the x used to make b)")
    ax.grid(True, alpha=0.3)
axes[1].axhspan(0.5, 1.5, color="C2", alpha=0.1, label="box")
for ax in axes:
    ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
