r"""
Gaussian process regression
===========================

:class:`bcd.gp.GPRegressor` fits a Gaussian process with fixed
hyperparameters: it solves :math:`(K + \sigma^2 I)\alpha = y` by greedy
block coordinate descent, with the kernel matrix :math:`K` evaluated on the
fly instead of stored, and predicts the mean :math:`k(x_*, X)\alpha` and
the standard deviation of the latent function.

Here the 800 inputs are one-dimensional, with a gap in the middle, so the
band of :math:`\pm 2` standard deviations widens where there are no data.
Each iteration grows a block of 100 coordinates greedily (GBCD, rule
``"gbcd"``) and solves it exactly.
"""

# %%
# Data and fit
# ------------
import matplotlib.pyplot as plt
import numpy as np

import bcd


def truth(x):
    return np.sin(x) + 0.5 * np.sin(3 * x)


rng = np.random.default_rng(0)
X = np.concatenate([rng.uniform(0, 4, 400), rng.uniform(6, 10, 400)])
X = X[:, None]                          # inputs: one column
noise = 0.3 ** 2                        # noise variance sigma^2
y = truth(X[:, 0]) + np.sqrt(noise) * rng.standard_normal(len(X))

kernel = bcd.gp.SquaredExponential(lengthscale=0.6, variance=1.0)
gp = bcd.gp.GPRegressor(kernel, noise=noise, block_size=100, tol=1e-8,
                        random_state=0)
gp.fit(X, y)
print(gp.result_)
print(f"residual ||(K + noise I) alpha - y||_inf = "
      f"{gp.result_.optimality:.1e}")

X_test = np.linspace(-1, 11, 400)[:, None]
mean, std = gp.predict(X_test, return_std=True)

# %%
# The same model in scikit-learn
# -------------------------------
# With the same kernel and noise, and the hyperparameter search turned off,
# scikit-learn's :class:`~sklearn.gaussian_process.GaussianProcessRegressor`
# (a dense Cholesky factorization) gives the same predictions:
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF

reference = GaussianProcessRegressor(RBF(length_scale=0.6), alpha=noise,
                                     optimizer=None).fit(X, y)
ref_mean, ref_std = reference.predict(X_test, return_std=True)
print(f"largest difference of the means: "
      f"{np.max(np.abs(mean - ref_mean)):.1e}")
print(f"largest difference of the standard deviations: "
      f"{np.max(np.abs(std - ref_std)):.1e}")

# %%
# The predictive band
# -------------------
# ``std`` is the latent standard deviation (the noise is not added), so the
# band says where the function itself is uncertain: narrow among the data,
# wide in the gap and beyond the ends.
x = X_test[:, 0]
fig, ax = plt.subplots(figsize=(9, 4))
ax.fill_between(x, mean - 2 * std, mean + 2 * std, color="C0", alpha=0.25,
                label="mean ± 2 std")
ax.plot(x, mean, color="C0", label="predictive mean")
ax.plot(x, truth(x), "k--", lw=1, label="true function")
ax.plot(X[:, 0], y, ".", color="0.4", ms=3, label="training data")
ax.set_xlabel("x")
ax.set_ylabel("y")
ax.legend(loc="lower left", fontsize=8, ncol=2)
ax.set_title(f"GPRegressor, {kernel!r}, noise {noise:g}")
fig.tight_layout()
plt.show()
