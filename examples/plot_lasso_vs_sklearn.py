r"""
The Lasso: bcd and scikit-learn
===============================

The same Lasso solved by :func:`bcd.solve` and by scikit-learn's
:class:`~sklearn.linear_model.Lasso`, with the objective values, duality
gaps and times of both.

**Scaling.** bcd writes objectives as sums over samples, with no
:math:`1/n` factor:

.. math::

   F(x) = \tfrac12 \lVert Ax - b \rVert^2 + \lambda \lVert x \rVert_1 ,

while scikit-learn averages the loss,
:math:`\tfrac{1}{2n} \lVert Ax - b \rVert^2 +
\alpha \lVert x \rVert_1`. The two have the same minimizers when
:math:`\lambda = n\alpha`, and then scikit-learn's objective is
:math:`F / n`. So ``bcd.L1(n * alpha)`` matches ``Lasso(alpha)``.
(The estimator :class:`bcd.linear_model.Lasso` makes this conversion
itself.)
"""

# %%
# The data
# --------
# A sparse 500 x 5000 design built by the recipe of the paper's dataset A.
# The penalty runs over three fractions of
# :math:`\alpha_{\max} = \lVert A^T b \rVert_\infty / n`, the smallest
# weight at which :math:`x = 0` is optimal.
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import Lasso

import bcd

A, b = bcd.datasets.make_paper_dataset("A", n_samples=500,
                                       n_features=5000, random_state=0)
n = A.shape[0]
alpha_max = np.max(np.abs(A.T @ b)) / n
print(f"A: {A.shape[0]} x {A.shape[1]}, {A.nnz} non-zeros; "
      f"alpha_max = {alpha_max:.4g}")


def sklearn_objective(x, alpha):
    return 0.5 * np.sum((A @ x - b) ** 2) / n + alpha * np.sum(np.abs(x))


def median_time(fit, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fit()
        times.append(time.perf_counter() - start)
    return out, float(np.median(times))


# %%
# Solving
# -------
# bcd runs with no options: its automatic configuration for a penalized
# least-squares problem (coordinate descent on working sets, with Anderson
# extrapolation) and its default stopping test, a KKT residual of at most
# ``tol=1e-6`` on :math:`F`. scikit-learn runs to ``tol=1e-10``, a bound on
# its duality gap relative to :math:`\lVert b \rVert^2 / n`. Both report
# their duality gap, shown below in scikit-learn's scaling. Times are
# medians of 5 runs.
fractions = [0.5, 0.1, 0.02]
times = []
for fraction in fractions:
    alpha = fraction * alpha_max
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(n * alpha))
    result, t_bcd = median_time(lambda: bcd.solve(problem))
    sk = Lasso(alpha=alpha, fit_intercept=False, tol=1e-10, max_iter=100000)
    model, t_sk = median_time(lambda: sk.fit(A, b))
    F_bcd = result.objective / n          # F in scikit-learn's scaling
    F_sk = sklearn_objective(model.coef_, alpha)
    assert abs(F_bcd - F_sk) <= 1e-8 * F_sk, "the solvers disagree"
    times.append((t_bcd, t_sk))
    print(f"alpha = {fraction:g} alpha_max, non-zeros: "
          f"bcd {np.count_nonzero(result.x)}, "
          f"sklearn {np.count_nonzero(model.coef_)}\n"
          f"  objective  bcd {F_bcd:.12g}  sklearn {F_sk:.12g}\n"
          f"             relative difference {(F_bcd - F_sk) / F_sk:.1e}\n"
          f"  gap        bcd {result.duality_gap / n:.1e}  "
          f"sklearn {model.dual_gap_:.1e}\n"
          f"  time       bcd {1e3 * t_bcd:.1f} ms  "
          f"sklearn {1e3 * t_sk:.1f} ms")
print("bcd's configuration:", result.options["auto"])

# %%
# Times
# -----
# Both solvers reach the same objective up to rounding (the relative
# differences above); the bars compare the time each took, on the machine
# that built this page.
times = 1e3 * np.array(times)
positions = np.arange(len(fractions))
fig, ax = plt.subplots(figsize=(7, 4))
ax.bar(positions - 0.2, times[:, 0], 0.4, label="bcd.solve")
ax.bar(positions + 0.2, times[:, 1], 0.4, label="sklearn Lasso")
ax.set_xticks(positions, [f"alpha = {f:g} alpha_max" for f in fractions])
ax.set_ylabel("time (ms), median of 5")
ax.set_title(f"Lasso, {A.shape[0]} x {A.shape[1]} sparse")
ax.legend()
ax.grid(True, axis="y", alpha=0.3)
fig.tight_layout()
plt.show()
