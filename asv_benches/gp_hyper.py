"""GP hyperparameter learning on Friedman1 with the SE-ARD kernel: bcd's
``optimizer="ml"``, ``"cv"`` and ``"cv_admm"`` against scikit-learn's
``GaussianProcessRegressor``, and a Dask cluster against the thread pool.

Usage, from the repository root with bcd installed::

    python -m asv_benches.gp_hyper ml-vs-sklearn --n 2000
    python -m asv_benches.gp_hyper cv-vs-sklearn --n 10000 [--sklearn-evals 1] [--with-ml]
    python -m asv_benches.gp_hyper cv-large --n 50000
    python -m asv_benches.gp_hyper dask --n 4000
    python -m asv_benches.gp_hyper ml-large --n 20000

``ml-large`` is the call of the README's crash report, at scale:
``make_friedman1(n, 2000, random_state=0)``, ``SquaredExponential(1.0)``,
``noise=0.1``, ``optimizer="ml"`` (above 5,000 points the marginal
likelihood is estimated, with the kernel matrix stored while it fits);
it reports the time, the peak memory and the test R^2.

The CV cases run ``--optimizer cv`` (the default: the CV error by L-BFGS-B
with its exact gradient) or ``--optimizer cv_admm`` (the paper's ADMM).

Every fit runs in a process of its own (``--one CASE``, printing a JSON
line) so that its peak resident memory is its own; "extra MB" is the peak
minus the resident size once the data are made.  Data:
``bcd.datasets.make_friedman1(n, 1000)`` (inputs and outputs standardized,
noise 1).  Kernel: variance 1 times SE with ten length-scales 1, noise 1,
all bounds (1e-5, 1e5) (scikit-learn: ``ConstantKernel * RBF + WhiteKernel``,
``alpha=1e-10``, ``n_restarts_optimizer=0``, ``normalize_y=False``).

Targets: n = 2,000: "ml" time <= 1.0x scikit-learn's with the same log
marginal likelihood within 1e-6 relative; n = 10,000: cross-validation
(5-fold consensus) time <= 0.25x scikit-learn's ML, test RMSE within 5% of
ML's (``--with-ml`` fits bcd's "ml" on the same data for it), peak memory
<= 25%; n = 50,000: cross-validation within 30 minutes and 2 GB.

scikit-learn at n = 10,000 needs a 10,000 x 10,000 x 12 gradient tensor
(9.6 GB) and about a minute per evaluation: ``--sklearn-evals k`` stops its
L-BFGS-B after k evaluations and reports the time per evaluation; its full
time is then that times the number of evaluations bcd's "ml" needs on the
same data (the two follow the same path: same objective, start, bounds and
optimizer), stated as an estimate.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _data(n, seed=0):
    import bcd
    return bcd.datasets.make_friedman1(n, 1000, random_state=seed)


def _bcd_kernel():
    import numpy as np
    import bcd
    return bcd.gp.SquaredExponential(np.ones(10), 1.0)


def _rmse(pred, y):
    import numpy as np
    return float(np.sqrt(np.mean((pred - y) ** 2)))


def one(case, n, options):
    """Run one fit; return a dict of measurements."""
    import numpy as np
    import bcd

    if case == "ml_large":
        X, y, Xt, yt = bcd.datasets.make_friedman1(n, 2000, random_state=0)
    else:
        X, y, Xt, yt = _data(n)
    base = _rss_mb()
    out = dict(case=case, n=n, rss_before_mb=base)
    warnings.simplefilter("ignore")
    if case == "ml_large":
        gp = bcd.gp.GPRegressor(bcd.gp.SquaredExponential(1.0), noise=0.1, optimizer="ml",
                                verbose=options.get("verbose", False))
        t0 = time.perf_counter()
        gp.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["rmse"] = _rmse(gp.predict(Xt), yt)
        out["r2"] = float(gp.score(Xt, yt))
        out["lml"] = float(gp.hyper_["lml"])
        out["method"] = gp.hyper_["method"]
        out["evaluations"] = gp.hyper_["n_evaluations"]
        out["iterations"] = int(gp.hyper_["n_iter"])
        out["theta"] = list(map(float, np.append(gp.kernel_.theta, np.log(gp.noise_))))
    elif case == "sklearn":
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
        import scipy.optimize

        evals = options.get("sklearn_evals")
        count = [0]

        def optimizer(obj, theta0, bounds):
            def fun(theta):
                count[0] += 1
                return obj(theta)
            opts = {} if not evals else dict(maxfun=evals, maxiter=evals)
            res = scipy.optimize.minimize(fun, theta0, jac=True, method="L-BFGS-B",
                                          bounds=bounds, options=opts)
            out["nit"] = int(res.nit)
            return res.x, res.fun

        kernel = ConstantKernel(1.0, (1e-5, 1e5)) * RBF(np.ones(10), (1e-5, 1e5)) \
            + WhiteKernel(1.0, (1e-5, 1e5))
        gp = GaussianProcessRegressor(kernel, alpha=1e-10, optimizer=optimizer,
                                      n_restarts_optimizer=0)
        t0 = time.perf_counter()
        gp.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["evaluations"] = count[0]
        out["lml"] = float(gp.log_marginal_likelihood_value_)
        out["rmse"] = _rmse(gp.predict(Xt), yt)
        out["theta"] = list(map(float, gp.kernel_.theta))
    else:
        kw = dict(optimizer="ml") if case == "ml" else dict(
            optimizer=options.get("optimizer", "cv"), cv=options.get("folds", 5),
            cv_scheme=options.get("scheme", "consensus"), random_state=0)
        client = cluster = None
        if case == "dask":
            from distributed import Client, LocalCluster
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=40)
            client = Client(cluster)
            kw["client"] = client
        if options.get("admm_options"):
            kw["admm_options"] = options["admm_options"]
        gp = bcd.gp.GPRegressor(_bcd_kernel(), 1.0, **kw)
        t0 = time.perf_counter()
        gp.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["rmse"] = _rmse(gp.predict(Xt), yt)
        out["theta"] = list(map(float, np.append(gp.kernel_.theta, np.log(gp.noise_))))
        out["lml"] = getattr(gp, "log_marginal_likelihood_value_", None)
        out["cv_mse"] = getattr(gp, "cv_mse_", None)
        out["iterations"] = int(len(gp.history_))
        out["final_solve_iterations"] = int(gp.n_iter_)
        out["evaluations"] = gp.hyper_.get("n_evaluations")
        if client is not None:
            client.close()
            cluster.close()
    out["rss_peak_mb"] = _peak_mb()
    out["extra_mb"] = out["rss_peak_mb"] - base
    return out


def run(case, n, **options):
    """``one`` in a fresh process (its own peak memory)."""
    cmd = [sys.executable, "-m", "asv_benches.gp_hyper", "--one", case, "--n", str(n),
           "--options", json.dumps(options)]
    env = dict(os.environ)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{case} n={n} failed ({res.returncode}): {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _load():
    return os.getloadavg()[0]


def _show(r):
    print(f"  {r['case']:<8} n={r['n']:<6} {r['seconds']:9.2f}s  RMSE {r['rmse']:.4f}  "
          f"lml {r.get('lml')}  peak {r['rss_peak_mb']:.0f} MB (extra {r['extra_mb']:.0f})  "
          f"{'evals ' + str(r['evaluations']) + ' ' if r.get('evaluations') else ''}"
          f"{'iterations ' + str(r.get('iterations')) if 'iterations' in r else ''}",
          flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", nargs="?", default="ml-vs-sklearn",
                        choices=["ml-vs-sklearn", "cv-vs-sklearn", "cv-large", "dask",
                                 "ml-large"])
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--options", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--sklearn-evals", type=int, default=None,
                        help="stop scikit-learn's L-BFGS-B after this many evaluations "
                             "(its full time is then estimated)")
    parser.add_argument("--optimizer", default="cv", choices=["cv", "cv_admm"],
                        help="the cross-validation optimizer of the CV cases")
    parser.add_argument("--with-ml", action="store_true",
                        help="cv-vs-sklearn: also fit bcd's 'ml' (dense, exact) for the "
                             "RMSE comparison and the evaluation count")
    parser.add_argument("--ml-evaluations", type=int, default=None,
                        help="evaluations the full ML fit needs (for the estimate; default: "
                             "run bcd's 'ml' to count them)")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.n, json.loads(args.options))))
        return 0
    opt = args.optimizer
    print(f"load average before: {_load():.2f}")
    if args.what == "ml-vs-sklearn":
        n = args.n or 2000
        ours, ref = run("ml", n), run("sklearn", n)
        for r in (ours, ref):
            _show(r)
        rel = abs(ours["lml"] - ref["lml"]) / abs(ref["lml"])
        print(f"n={n}: time ml / scikit-learn = {ours['seconds'] / ref['seconds']:.2f}x "
              f"(target <= 1.0x); |lml - lml_sklearn| / |lml_sklearn| = {rel:.1e} "
              f"(target <= 1e-6); sklearn evaluations {ref['evaluations']}")
    elif args.what == "cv-vs-sklearn":
        n = args.n or 10000
        cv = run("cv", n, optimizer=opt)
        _show(cv)
        ml = None
        if args.with_ml:
            ml = run("ml", n)
            _show(ml)
            print(f"n={n}: test RMSE {opt} / ml = {cv['rmse'] / ml['rmse']:.3f} (target <= "
                  f"1.05)", flush=True)
        ref = run("sklearn", n, sklearn_evals=args.sklearn_evals)
        _show(ref)
        sk_seconds, note = ref["seconds"], "measured"
        if args.sklearn_evals:
            evals = args.ml_evaluations or (ml["evaluations"] if ml else None)
            per_eval = ref["seconds"] / ref["evaluations"]
            sk_seconds = per_eval * evals if evals else float("nan")
            note = (f"estimated: {per_eval:.1f}s per evaluation x {evals} evaluations of the "
                    f"full ML fit")
        print(f"n={n}: time {opt} / scikit-learn ML = {cv['seconds'] / sk_seconds:.3f}x "
              f"(target <= 0.25x; scikit-learn {sk_seconds:.0f}s, {note}); peak memory "
              f"{cv['rss_peak_mb']:.0f} / {ref['rss_peak_mb']:.0f} MB = "
              f"{cv['rss_peak_mb'] / ref['rss_peak_mb']:.3f} (extra {cv['extra_mb']:.0f} / "
              f"{ref['extra_mb']:.0f} MB = {cv['extra_mb'] / ref['extra_mb']:.3f}; target <= "
              f"0.25); RMSE {opt} {cv['rmse']:.4f}")
    elif args.what == "cv-large":
        n = args.n or 50000
        cv = run("cv", n, optimizer=opt)
        _show(cv)
        print(f"n={n}: {opt} {cv['seconds'] / 60:.1f} min (target <= 30), peak "
              f"{cv['rss_peak_mb'] / 1024:.2f} GB (target <= 2)")
    elif args.what == "ml-large":
        n = args.n or 20000
        r = run("ml_large", n)
        _show(r)
        print(f"n={n}: optimizer='ml' ({r['method']}) {r['seconds'] / 60:.1f} min, peak "
              f"{r['rss_peak_mb'] / 1024:.2f} GB, test R^2 {r['r2']:.4f}")
    else:
        n = args.n or 4000
        local = run("cv", n, folds=5, scheme="consensus", optimizer=opt)
        dist = run("dask", n, folds=5, scheme="consensus", optimizer=opt)
        for r in (local, dist):
            _show(r)
        same = local["theta"] == dist["theta"]
        print(f"n={n}: Dask 2-worker cluster / thread pool = "
              f"{dist['seconds'] / local['seconds']:.2f}x (cluster start-up included); "
              f"same hyperparameters: {same}")
    print(f"load average after: {_load():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
