"""CV-ADMM with a fixed and with a balanced rho on Friedman1 (SE-ARD).

One fit per call, printed on one line: 5-fold consensus CV-ADMM from all
length-scales, the variance and the noise at 1 (12 log-parameters), on
``bcd.datasets.make_friedman1(n, 2000, random_state=0)``, with the given
``admm_options`` (JSON), or the marginal-likelihood fit with ``--ml``.
Prints CPU time (``time.process_time``) and wall time, the test RMSE on the
2000 test points, the iterations, the cross-validation MSE, the final rho
of each fold and of the consensus constraint, the first warning and the
load average before and after; ``--cv`` fits ``optimizer="cv"`` (the CV
error by its exact gradient) instead::

    python -m asv_benches.gp_cv_rho --n 500 --options '{"rho_update": false}'
    python -m asv_benches.gp_cv_rho --n 500 --options '{"theta_steps": 1, "z_steps": 10}'
    python -m asv_benches.gp_cv_rho --n 500 --ml
    python -m asv_benches.gp_cv_rho --n 2000 --cv
"""
import argparse
import json
import os
import time
import warnings

import numpy as np

import bcd
from bcd.gp import GPRegressor, SquaredExponential


def run(n, opts, opt="cv_admm"):
    X, y, Xt, yt = bcd.datasets.make_friedman1(n, 2000, random_state=0)
    gp = GPRegressor(SquaredExponential(np.ones(10)), 1.0, optimizer=opt, cv=5,
                     cv_scheme="consensus", admm_options=opts if opt == "cv_admm" else None,
                     random_state=0)
    load0 = os.getloadavg()[0]
    t, w = time.process_time(), time.perf_counter()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        gp.fit(X, y)
    cpu, wall = time.process_time() - t, time.perf_counter() - w
    rmse = float(np.sqrt(np.mean((gp.predict(Xt) - yt) ** 2)))
    extra = ""
    if opt == "cv":
        extra = "cv_mse %.4f" % gp.cv_mse_
    if opt == "cv_admm":
        rho = gp.hyper_["rho"]
        extra = "cv_mse %.4f rho_folds_final %s rho_cons_final %s" % (
            gp.cv_mse_, [float("%.3g" % r[-1]) for r in rho["folds"] if len(r)],
            "%.3g" % rho["consensus"][-1] if len(rho.get("consensus", ())) else None)
    print(opt, json.dumps(opts), "n", n, "cpu %.1f wall %.1f" % (cpu, wall), "rmse %.4f" % rmse,
          "iters", gp.hyper_.get("n_iter"), extra, "warn",
          [str(r.message)[:40] for r in rec][:1],
          "load %.2f %.2f" % (load0, os.getloadavg()[0]), flush=True)
    return rmse


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--options", default="{}", help="admm_options as JSON")
    parser.add_argument("--ml", action="store_true", help="fit by marginal likelihood")
    parser.add_argument("--cv", action="store_true",
                        help='fit by optimizer="cv" (exact-gradient CV)')
    args = parser.parse_args(argv)
    run(args.n, json.loads(args.options), "ml" if args.ml else "cv" if args.cv else "cv_admm")


if __name__ == "__main__":
    main()
