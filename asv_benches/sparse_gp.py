"""Sparse GP regression (``bcd.gp.SparseGPRegressor``, CholQR swaps) on
Friedman1: the three targets of the sparse GP, and the cost of a swap.

Usage, from the repository root with bcd installed (gpytorch for the second
target: ``pip install '.[bench]'``)::

    python -m asv_benches.sparse_gp                   # swaps, exact, gpytorch
    python -m asv_benches.sparse_gp --targets million # n = 1e6 (several minutes)
    python -m asv_benches.sparse_gp --targets swaps --n 10000 100000 --m 64 128 256 512

Each target runs in a process of its own (peak memory is that process's),
both sides of a comparison in the same process; the load average of the
machine is printed with each result.

* ``million``: n = 1,000,000, SE-ARD (length-scales 2, variance 1, noise
  0.05, fixed), m = 512, one swap epoch (60 swaps).  Targets: fit <= 10
  minutes, peak resident memory <= 6 GB, mean and standard deviation of
  100,000 test points <= 10 s.
* ``gpytorch``: n = 100,000, m = 512, SE-ARD with the same initial
  hyperparameters, learned: bcd (variational free energy, CholQR) against
  GPyTorch's SGPR trained by its documented recipe (``ExactGP`` with a
  constant mean, ``InducingPointKernel`` on the first m training inputs,
  ``ScaleKernel(RBFKernel(ard_num_dims=10))``, ``ExactMarginalLogLikelihood``,
  ``torch.optim.SGD(lr=0.1)``, 50 iterations, float32 as in the recipe).
  Targets: bcd's test SMSE <= GPyTorch's, fit time ratio <= 1.0.
* ``exact``: n = 10,000, m = 512, against ``bcd.gp.GPRegressor`` (GBCD,
  tol 1e-4) with the same fixed hyperparameters: (a) the demo's (length-scale
  2, variance 1, noise 0.05), (b) those learned by the sparse GP's free
  energy (learning not timed).  Targets: test RMSE within 5% of the exact
  GP's, fit + 10,000 predictions >= 5x faster.
* ``swaps``: seconds per swap (one epoch of min(60, m) swaps at fixed
  hyperparameters) against m x n.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

LENGTHSCALE, VARIANCE, NOISE = 2.0, 1.0, 0.05


def _rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0 ** 2


def _load():
    return "load %.2f %.2f %.2f" % os.getloadavg()


def _smse(mean, y):
    return float(np.mean((mean - y) ** 2) / np.var(y))


def _kernel(d):
    import bcd
    return bcd.gp.SquaredExponential(np.full(d, LENGTHSCALE), VARIANCE)


def _threads(args):
    return None if args.threads == 0 else args.threads


# --------------------------------------------------------------------------- targets

def million(args):
    import bcd
    n, n_test = 1_000_000, 100_000
    X, y, Xt, yt = bcd.datasets.make_friedman1(n, n_test, random_state=0)
    rss0 = _rss_gb()
    load0 = _load()
    gp = bcd.gp.SparseGPRegressor(_kernel(10), NOISE, n_inducing=512,
                                  optimize_hyperparameters=False, max_epochs=1,
                                  random_state=0, n_threads=_threads(args))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        gp.fit(X, y)
    fit = time.perf_counter() - t0
    rss_fit = _rss_gb()
    t0 = time.perf_counter()
    mean, std = gp.predict(Xt, return_std=True)
    predict = time.perf_counter() - t0
    h = gp.history_
    return dict(target="million", n=n, m=512, fit_s=fit, predict_s=predict,
                peak_rss_gb=_rss_gb(), rss_data_gb=rss0, rss_after_fit_gb=rss_fit,
                swaps=int(h["swaps"][1]), accepted=int(h["accepted"][1]),
                start_s=float(h["time"][0]), epoch_s=float(h["time"][1] - h["time"][0]),
                smse=_smse(mean, yt), std_min=float(std.min()), load_before=load0,
                load_after=_load())


def gpytorch_target(args):
    import bcd
    n, m = args.gpytorch_n, 512
    X, y, Xt, yt = bcd.datasets.make_friedman1(n, 10000, random_state=0)
    out = dict(target="gpytorch", n=n, m=m, load_before=_load())
    # bcd
    gp = bcd.gp.SparseGPRegressor(_kernel(10), NOISE, n_inducing=m, objective="vfe",
                                  max_epochs=args.max_epochs, random_state=0,
                                  n_threads=_threads(args))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        gp.fit(X, y)
    out["bcd_fit_s"] = time.perf_counter() - t0
    out["bcd_epochs"] = int(gp.n_iter_)
    out["bcd_smse"] = _smse(gp.predict(Xt), yt)
    out["bcd_objective_per_n"] = gp.objective_ / n
    out["bcd_noise"] = gp.noise_
    out["load_mid"] = _load()
    # GPyTorch's SGPR, documented recipe
    import torch
    import gpytorch
    dtype = getattr(torch, args.torch_dtype)
    tx = torch.tensor(X, dtype=dtype)
    ty = torch.tensor(y, dtype=dtype)

    class SGPR(gpytorch.models.ExactGP):
        def __init__(self, train_x, train_y, likelihood):
            super().__init__(train_x, train_y, likelihood)
            self.mean_module = gpytorch.means.ConstantMean()
            self.base_covar_module = gpytorch.kernels.ScaleKernel(
                gpytorch.kernels.RBFKernel(ard_num_dims=train_x.shape[1]))
            self.covar_module = gpytorch.kernels.InducingPointKernel(
                self.base_covar_module, inducing_points=train_x[:m, :].clone(),
                likelihood=likelihood)

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                             self.covar_module(x))

    likelihood = gpytorch.likelihoods.GaussianLikelihood().to(dtype)
    model = SGPR(tx, ty, likelihood).to(dtype)
    model.base_covar_module.base_kernel.lengthscale = LENGTHSCALE
    model.base_covar_module.outputscale = VARIANCE
    likelihood.noise = NOISE
    t0 = time.perf_counter()
    model.train()
    likelihood.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    for _ in range(args.torch_iterations):
        optimizer.zero_grad()
        loss = -mll(model(tx), ty)
        loss.backward()
        optimizer.step()
    out["gpytorch_fit_s"] = time.perf_counter() - t0
    out["gpytorch_final_loss"] = float(loss.item())
    model.eval()
    likelihood.eval()
    with torch.no_grad(), gpytorch.settings.fast_pred_var():
        pred = model(torch.tensor(Xt, dtype=dtype)).mean.double().numpy()
    out["gpytorch_smse"] = _smse(pred, yt)
    out["gpytorch_noise"] = float(likelihood.noise.item())
    out["torch_threads"] = torch.get_num_threads()
    out["torch_dtype"] = args.torch_dtype
    out["load_after"] = _load()
    return out


def exact(args):
    import bcd
    n, m = 10_000, 512
    X, y, Xt, yt = bcd.datasets.make_friedman1(n, 10_000, random_state=0)
    rmse = lambda mean: float(np.sqrt(np.mean((mean - yt) ** 2) / np.var(yt)))  # noqa: E731
    out = dict(target="exact", n=n, m=m, load_before=_load())
    # (b) hyperparameters learned by the sparse GP's free energy (not timed)
    learner = bcd.gp.SparseGPRegressor(_kernel(10), NOISE, n_inducing=m, random_state=0,
                                       n_threads=_threads(args))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcd.ConvergenceWarning)
        learner.fit(X, y)
    out["learning_s"] = learner.history_["time"][-1]
    protocols = {"demo": (_kernel(10), NOISE), "learned": (learner.kernel_, learner.noise_)}
    for name, (kernel, noise) in protocols.items():
        t0 = time.perf_counter()
        gp = bcd.gp.GPRegressor(kernel, noise, tol=1e-4, n_threads=_threads(args)).fit(X, y)
        mean = gp.predict(Xt)
        t_exact = time.perf_counter() - t0
        sp = bcd.gp.SparseGPRegressor(kernel, noise, n_inducing=m,
                                      optimize_hyperparameters=False, random_state=0,
                                      n_threads=_threads(args))
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bcd.ConvergenceWarning)
            sp.fit(X, y)
        mean_sp = sp.predict(Xt)
        t_sparse = time.perf_counter() - t0
        out[name] = dict(exact_s=t_exact, exact_rmse=rmse(mean), gbcd_iterations=gp.n_iter_,
                         sparse_s=t_sparse, sparse_rmse=rmse(mean_sp),
                         sparse_epochs=int(sp.n_iter_), kernel=repr(kernel), noise=noise)
    out["load_after"] = _load()
    return out


def swaps(args):
    import bcd
    rows = []
    for n in args.n:
        X, y, _, _ = bcd.datasets.make_friedman1(n, 10, random_state=0)
        for m in args.m:
            gp = bcd.gp.SparseGPRegressor(_kernel(10), NOISE, n_inducing=m,
                                          optimize_hyperparameters=False, max_epochs=1,
                                          random_state=0, n_threads=_threads(args))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", bcd.ConvergenceWarning)
                gp.fit(X, y)
            h = gp.history_
            per_swap = float(h["time"][1] - h["time"][0]) / int(h["swaps"][1])
            rows.append(dict(n=n, m=m, start_s=float(h["time"][0]), per_swap_s=per_swap,
                             ns_per_mn=1e9 * per_swap / (m * n), accepted=int(h["accepted"][1]),
                             swaps=int(h["swaps"][1]), load=_load()))
    return dict(target="swaps", rows=rows)


TARGETS = {"million": million, "gpytorch": gpytorch_target, "exact": exact, "swaps": swaps}


# --------------------------------------------------------------------------- report

def report(r):
    t = r["target"]
    if t == "million":
        print(f"n = {r['n']:,}, m = {r['m']}, fixed hyperparameters, one epoch of {r['swaps']} "
              f"swaps ({r['accepted']} accepted): fit {r['fit_s']:.1f} s (start "
              f"{r['start_s']:.1f} s, epoch {r['epoch_s']:.1f} s) [target <= 600 s: "
              f"{'ok' if r['fit_s'] <= 600 else 'MISS'}]; peak RSS {r['peak_rss_gb']:.2f} GB "
              f"(data {r['rss_data_gb']:.2f} GB) [<= 6 GB: "
              f"{'ok' if r['peak_rss_gb'] <= 6 else 'MISS'}]; mean + std of 100,000 test "
              f"points {r['predict_s']:.2f} s [<= 10 s: "
              f"{'ok' if r['predict_s'] <= 10 else 'MISS'}]; test SMSE {r['smse']:.4f}; "
              f"{r['load_before']} -> {r['load_after']}")
    elif t == "gpytorch":
        ratio = r["bcd_fit_s"] / r["gpytorch_fit_s"]
        print(f"n = {r['n']:,}, m = {r['m']}, learned hyperparameters: bcd fit "
              f"{r['bcd_fit_s']:.1f} s ({r['bcd_epochs']} epochs), test SMSE "
              f"{r['bcd_smse']:.5f}, noise {r['bcd_noise']:.4f}; GPyTorch SGPR "
              f"({r['torch_dtype']}, {r['torch_threads']} threads) fit "
              f"{r['gpytorch_fit_s']:.1f} s, test SMSE {r['gpytorch_smse']:.5f}, noise "
              f"{r['gpytorch_noise']:.4f}; SMSE bcd <= GPyTorch: "
              f"{'ok' if r['bcd_smse'] <= r['gpytorch_smse'] else 'MISS'}; fit time ratio "
              f"{ratio:.2f}x [<= 1.0x: {'ok' if ratio <= 1.0 else 'MISS'}]; "
              f"{r['load_before']} -> {r['load_mid']} -> {r['load_after']}")
    elif t == "exact":
        print(f"n = {r['n']:,}, m = {r['m']} (learning the hyperparameters for (b): "
              f"{r['learning_s']:.1f} s, not timed below)")
        for name in ("demo", "learned"):
            p = r[name]
            rel = p["sparse_rmse"] / p["exact_rmse"] - 1
            speed = p["exact_s"] / p["sparse_s"]
            print(f"  {name}: {p['kernel']}, noise {p['noise']:.4g}: exact GP (GBCD, "
                  f"{p['gbcd_iterations']} iterations) {p['exact_s']:.2f} s, RMSE "
                  f"{p['exact_rmse']:.5f}; sparse ({p['sparse_epochs']} epochs) "
                  f"{p['sparse_s']:.2f} s, RMSE {p['sparse_rmse']:.5f}: RMSE "
                  f"{100 * rel:+.2f}% [within 5%: {'ok' if rel <= 0.05 else 'MISS'}], "
                  f"{speed:.1f}x faster [>= 5x: {'ok' if speed >= 5 else 'MISS'}]")
        print(f"  {r['load_before']} -> {r['load_after']}")
    else:
        print(f"{'n':>8} {'m':>5} {'start s':>8} {'s/swap':>9} {'ns/(m n)':>9} "
              f"{'accepted':>9}  load")
        for row in r["rows"]:
            print(f"{row['n']:>8} {row['m']:>5} {row['start_s']:8.2f} {row['per_swap_s']:9.4f} "
                  f"{row['ns_per_mn']:9.2f} {row['accepted']:>4}/{row['swaps']:<4}  "
                  f"{row['load']}")
    sys.stdout.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--targets", nargs="+", default=["swaps", "exact", "gpytorch"],
                        choices=list(TARGETS))
    parser.add_argument("--threads", type=int, default=0,
                        help="n_threads of bcd (default 0: the estimator's default, all "
                             "cores, as GPyTorch uses them); on a busy machine one thread "
                             "avoids waiting for the others")
    parser.add_argument("--n", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--m", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--gpytorch-n", type=int, default=100000)
    parser.add_argument("--max-epochs", type=int, default=50)
    parser.add_argument("--torch-iterations", type=int, default=50)
    parser.add_argument("--torch-dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--run", choices=list(TARGETS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        print(json.dumps(TARGETS[args.run](args)))
        return
    passthrough = [a for a in (argv if argv is not None else sys.argv[1:])]
    for target in args.targets:
        cmd = [sys.executable, "-m", "asv_benches.sparse_gp", "--run", target] + passthrough
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{target}: failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
            continue
        report(json.loads(proc.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
