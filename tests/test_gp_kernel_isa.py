"""Every compiled kernel on every instruction-set path of the array loops.

The path (generic, AVX2, AVX-512) is chosen once, at import, from the CPU
or from the environment variable ``BCD_KERNEL_ISA``; so each path available
on this machine is checked in a subprocess of its own, against dense
references built from ``scipy.spatial.distance.cdist`` over inputs whose
distances range from about 1e-7 to where the kernels underflow.  Every way
the kernels are evaluated is covered: whole matrices (tiles of rows against
columns), products with vectors, the gathered rows of GBCD's blocks and the
entries evaluated one by one.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bcd.gp._kernel import available_isas

SCRIPT = textwrap.dedent(r"""
    import json
    import numpy as np
    from scipy.spatial.distance import cdist
    from bcd import solve
    from bcd.gp import (GaussianProcess, Hamming, HistogramIntersection, LocallyPeriodic, Matern,
                        Periodic, SquaredExponential)
    from bcd.gp._kernel import kernel_isa

    PI = np.longdouble("3.141592653589793238462643383279502884")

    def sin2pi(t):
        # sin^2(pi t) with t reduced by its nearest integer (exactly) before
        # pi multiplies it: np.sin(np.pi * d / p) would add an error of
        # about an ulp of pi d / p, above 1e-12 relative of the kernel for
        # d / p in the hundreds
        f = t - np.rint(t)
        return np.sin(PI * f) ** 2

    def ref(name, X1, X2):
        s = cdist(X1 / 0.7, X2 / 0.7, "sqeuclidean")
        d = cdist(X1, X2)
        se = np.exp(-0.5 * s)
        t3, t5 = np.sqrt(3 * s), np.sqrt(5 * s)
        m32 = (1 + t3) * np.exp(-t3)
        m52 = (1 + t5 + t5 * t5 / 3) * np.exp(-t5)
        per = np.exp(-2 * sin2pi(d.astype(np.longdouble) / np.longdouble(1.3))
                     / np.longdouble(0.81)).astype(float)
        lp = np.exp(-d ** 2 / (2 * 0.9 ** 2)) * per
        return {"se": 1.5 * se, "m32": m32, "m52": m52, "per": per, "lp": lp,
                "se+m32": 1.5 * se + m32, "se*per": 1.5 * se * per,
                "m52*lp+se": m52 * lp + 1.5 * se}[name]

    def build(name):
        k = {"se": SquaredExponential(0.7, 1.5), "m32": Matern(1.5, 0.7),
             "m52": Matern(2.5, 0.7), "per": Periodic(1.3, 0.9),
             "lp": LocallyPeriodic(1.3, 0.9)}
        if name in k:
            return k[name]
        if name == "se+m32":
            return k["se"] + k["m32"]
        if name == "se*per":
            return k["se"] * k["per"]
        return k["m52"] * k["lp"] + k["se"]

    def rel_err(a, b):
        # relative error where the reference is a normal number; below,
        # both must be (nearly) zero
        big = np.abs(b) > 1e-300
        return max(float(np.max(np.abs(a - b)[big] / np.abs(b)[big], initial=0.0)),
                   float(np.max(np.abs(a - b)[~big], initial=0.0)) * 1e290)

    out = {"isa": kernel_isa(), "errors": {}}
    rng = np.random.default_rng(3)
    # row counts not multiples of any vector or chunk width, above a tile
    for scale in (1e-7, 1.0, 4.0, 25.0, 100.0):
        X1 = rng.uniform(-1, 1, size=(301, 3)) * scale
        X2 = rng.uniform(-1, 1, size=(45, 3)) * scale
        for name in ("se", "m32", "m52", "per", "lp", "se+m32", "se*per", "m52*lp+se"):
            if scale > 25 and name not in ("per", "lp"):
                # exp(-s / 2) of s in the tens of thousands: an ulp of s
                # alone is 1e-12 of the kernel.  The periodic kernels go to
                # distances of about 130 periods; beyond, the ulp of d moves
                # sin^2(pi d / p) by more than 1e-12 whatever the sine.
                continue
            k = build(name)
            R = ref(name, X1, X2)
            ev = k.evaluator(X1, X2)
            w = rng.standard_normal(45)
            rows = np.arange(0, 301, 7)
            cols = [int(c) for c in rng.permutation(45)[:37]]
            errs = [rel_err(k(X1, X2), R), rel_err(ev.matrix(), R),
                    float(np.max(np.abs(ev.matvec(w) - R @ w)) / np.abs(R).sum(1).max(initial=1e-300))]
            # GBCD's path: rows of a growing block's columns (gathered inputs)
            # and entries one by one, through the GP problem on X1 alone
            R11 = ref(name, X1, X1)
            # K w over every chunk width (301 columns, some weights zero)
            w1 = rng.standard_normal(301) * (rng.uniform(size=301) > 0.2)
            errs.append(float(np.max(np.abs(k.evaluator(X1).matvec(w1) - R11 @ w1))
                              / np.abs(R11).sum(1).max(initial=1e-300)))
            Kf = R11 + 1e-3 * np.eye(301)
            p = GaussianProcess(X1, np.zeros(301), k, 1e-3).compile(True, 64)
            H = p.get_hessian_entries(rows, cols)
            errs.append(rel_err(H, Kf[np.ix_(rows, cols)]))
            H1 = p.get_hessian_entries(rows[:3], cols[:2])
            errs.append(rel_err(H1, Kf[np.ix_(rows[:3], cols[:2])]))
            out["errors"][f"{name}@{scale:g}"] = max(errs)
    # discrete kernels
    C1 = rng.integers(0, 3, size=(301, 5)).astype(float)
    C2 = rng.integers(0, 3, size=(45, 5)).astype(float)
    wts = np.array([0.1, 2.0, 30.0, 1e-8, 700.0])
    Rh = 2.0 * np.exp(-((C1[:, None, :] != C2[None, :, :]) * wts).sum(-1))
    out["errors"]["hamming"] = rel_err(Hamming(wts, 2.0)(C1, C2), Rh)
    H1 = rng.gamma(0.5, size=(301, 4)) * 1e3
    H2 = rng.gamma(0.5, size=(45, 4)) * 1e-3
    Ri = 0.5 * np.minimum(H1[:, None, :], H2[None, :, :]).sum(-1)
    out["errors"]["intersection"] = rel_err(HistogramIntersection(0.5)(H1, H2), Ri)
    Ri2 = 0.5 * np.minimum(H1[:, None, :], H1[None, :45, :]).sum(-1)
    out["errors"]["intersection-same"] = rel_err(HistogramIntersection(0.5)(H1, H1[:45]), Ri2)
    # GBCD on a small problem: the solution of this path
    X, y = rng.uniform(-1, 1, size=(400, 4)), rng.standard_normal(400)
    res = solve(GaussianProcess(X, y, SquaredExponential(0.7), 0.1), rule="gbcd",
                block_size=40, update="exact", tol=1e-10, random_state=0)
    out["alpha"] = res.x.tolist()
    print(json.dumps(out))
""")


def _run(isa):
    env = dict(os.environ, BCD_KERNEL_ISA=isa)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def results():
    return {isa: _run(isa) for isa in available_isas()}


def test_generic_path_is_always_available():
    assert available_isas()[0] == "generic"


def test_every_kernel_on_every_path_matches_cdist_reference(results):
    for isa, res in results.items():
        assert res["isa"] == isa
        bad = {k: v for k, v in res["errors"].items() if not v <= 1e-12}
        assert not bad, f"{isa}: relative errors above 1e-12: {bad}"


def test_gbcd_solution_is_the_same_on_every_path(results):
    alphas = {isa: np.array(res["alpha"]) for isa, res in results.items()}
    first = alphas["generic"]
    for isa, alpha in alphas.items():
        np.testing.assert_allclose(alpha, first, rtol=1e-7, atol=1e-7, err_msg=isa)


@pytest.mark.parametrize("value, message", [
    ("sse9", "must be one of 'auto', 'generic', 'avx2' or 'avx512'"),
    ("avx512" if "avx512" not in available_isas() else None, "is not available"),
])
def test_bad_isa_choice_is_a_clear_error(value, message):
    if value is None:
        pytest.skip("every path is available on this machine")
    env = dict(os.environ, BCD_KERNEL_ISA=value)
    proc = subprocess.run([sys.executable, "-c", "import bcd"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode != 0
    assert "BCD_KERNEL_ISA" in proc.stderr and message in proc.stderr
