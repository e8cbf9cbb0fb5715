"""The command line: the demo and the reproduction of the paper's figures."""
import numpy as np
import pytest

import bcd
from bcd.__main__ import main
from bcd._experiments import FIGURES, classification_optimum, paper_experiment

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
    from bcd._experiments import run_grid
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
