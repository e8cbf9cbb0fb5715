"""Hyperparameter learning for Gaussian process regression.

Three optimizers, used by :class:`bcd.gp.GPRegressor`:

* ``"ml"``: the log marginal likelihood maximised on the log-parameters
  with its gradient; exact, by L-BFGS-B and a dense Cholesky factorization
  (O(n^3) time, O(n^2) memory: the reference) up to 5,000 points, and
  estimated above (:mod:`.ml_iterative`: preconditioned conjugate
  gradients, stochastic Lanczos quadrature, Hutchinson's estimator).
* ``"cv"``: the cross-validation error minimized by L-BFGS-B with its exact
  gradient: per fold and evaluation, z = C_T^-1 y_T and the adjoint
  w = C_T^-1 K_TV (K_VT z - y_V) by GBCD solves warm-started at the previous
  evaluation's, and one gradient contraction (O(n n_t) time per GBCD pass,
  O(n) memory per fold).
* ``"cv_admm"``: cross-validation by the non-linearly constrained ADMM of
  Xu, Yin, Zhang, Luo and Cui (hold-out, and K-fold in the naive and the
  consensus form).  Every step uses kernel products evaluated on the fly and
  gradient contractions (:meth:`bcd.gp.kernels.Kernel.gradient`): O(n n_t)
  time per iteration and O(n) memory per fold.

The folds, the restarts and the candidates run as tasks on an executor: a
local thread pool (the compiled kernels release the GIL) or a
``dask.distributed.Client``.  Everything sent to a task pickles.

The package holds one module per concern: :mod:`.common` (the space of
log-parameters, starts, folds, L-BFGS-B, the exact solve), :mod:`.ml`
(with :mod:`.ml_iterative`),
:mod:`.cv_exact`, :mod:`.cv_admm` and :mod:`.executors`.  The estimators
choose among them through the table :data:`bcd.gp.optimizers.OPTIMIZERS`.
"""
from .common import (CV_SCHEMES, Space, convergence_warning, exact_solve, lbfgs, make_folds,
                     start_points)
from .cv_admm import (ADMM_DEFAULTS, RHO_RANGE, HoldOut, balance_rho, consensus_step,
                      fit_cv_admm, holdout_init, holdout_run, state_summary, state_theta,
                      state_validation)
from .cv_exact import (CV_DEFAULTS, CVFold, cv_fold_evaluate, cv_fold_init, cv_fold_message,
                       cv_fold_run, fit_cv)
from .executors import DaskExecutor, LocalExecutor, check_client, make_executor, threads_per_task
from .ml import fit_ml, log_marginal_likelihood, ml_task

__all__ = [
    # common
    "CV_SCHEMES", "Space", "convergence_warning", "exact_solve", "lbfgs", "make_folds",
    "start_points",
    # optimizer="cv_admm"
    "ADMM_DEFAULTS", "RHO_RANGE", "HoldOut", "balance_rho", "consensus_step", "fit_cv_admm",
    "holdout_init", "holdout_run", "state_summary", "state_theta", "state_validation",
    # optimizer="cv"
    "CV_DEFAULTS", "CVFold", "cv_fold_evaluate", "cv_fold_init", "cv_fold_message",
    "cv_fold_run", "fit_cv",
    # executors
    "DaskExecutor", "LocalExecutor", "check_client", "make_executor", "threads_per_task",
    # optimizer="ml"
    "fit_ml", "log_marginal_likelihood", "ml_task",
]
