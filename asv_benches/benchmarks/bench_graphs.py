"""Sparse quadratics on graphs: the message-passing solve and the
forest-structured block strategies of Section 5 (Figure 6 of the paper).

* ``TreeSolve``: ``bcd.tree_solve`` on a random tree (each node joined to
  a uniformly chosen earlier node; worst case for memory locality), with
  its peak memory.
* ``ForestIterations``: iterations each strategy needs on datasets D
  (50 x 50 lattice) and E (two moons, 5-NN graph) to bring the residual
  ``||Qx - c||_inf`` below ``1e-8 ||c||_inf`` (lower is better), with
  exact updates; ``General`` is GS with variable blocks of
  ``floor(n^(1/3))`` coordinates and a dense exact solve.
* ``LatticeLabelPropagation``: wall time of label propagation on a 300 x 300
  lattice (4% labelled, weights 1e4) to the same relative residual.
"""
import functools

import numpy as np
import scipy.sparse as sp

import bcd

from .common import quiet

STRATEGIES = {
    "greedy_tree": dict(rule="gs", blocks="tree"),
    "random_tree": dict(rule="random", blocks="tree"),
    "red_black": dict(rule="cyclic", blocks="coloring", partition="natural"),
    "tree_partition_natural": dict(rule="cyclic", blocks="forest_partition",
                                   partition="natural"),
    "tree_partition_random": dict(rule="cyclic", blocks="forest_partition", partition="random"),
    "tree_partition_lipschitz": dict(rule="cyclic", blocks="forest_partition",
                                     partition="lipschitz"),
    "general": dict(rule="gs", blocks="variable"),
}
RELATIVE_TOL = 1e-8


def random_tree_system(n, seed=0):
    """A random tree's weighted Laplacian plus the identity, and a right-hand side."""
    rng = np.random.default_rng(seed)
    parent = (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)
    W = sp.coo_matrix((rng.uniform(0.5, 2.0, n - 1), (np.arange(1, n), parent)),
                      shape=(n, n)).tocsr()
    W = W + W.T
    Q = (sp.diags(np.asarray(W.sum(axis=1)).ravel() + 1.0) - W).tocsc()
    return Q, rng.standard_normal(n)


@functools.lru_cache(maxsize=None)
def graph_problem(name):
    """Label propagation on dataset D or E of the paper."""
    W, labels = bcd.datasets.make_paper_dataset(name, random_state=1)
    return bcd.LabelPropagation(W, labels)


@functools.lru_cache(maxsize=None)
def lattice_problem(side, fraction=0.04, weight=1e4, seed=0):
    rng = np.random.RandomState(seed)
    n = side * side
    labels = np.full(n, np.nan)
    known = rng.choice(n, int(fraction * n), replace=False)
    labels[known] = rng.randn(known.size) * 10.0
    return bcd.LabelPropagation(bcd.datasets.make_lattice_graph(side, side, weight), labels)


def strategy_options(strategy, problem):
    options = dict(STRATEGIES[strategy], update="exact")
    if strategy == "general":
        options["block_size"] = int(np.floor(problem.n_coordinates ** (1.0 / 3.0) + 1e-9))
    return options


class TreeSolve:
    params = [[10**4, 10**5, 10**6]]
    param_names = ["n"]

    def setup(self, n):
        self.Q, self.c = random_tree_system(n)

    def time_tree_solve(self, n):
        bcd.tree_solve(self.Q, self.c)

    def peakmem_tree_solve(self, n):
        bcd.tree_solve(self.Q, self.c)


class ForestIterations:
    params = [["D", "E"], list(STRATEGIES)]
    param_names = ["dataset", "strategy"]
    unit = "iterations"

    def setup(self, dataset, strategy):
        quiet()
        self.problem = graph_problem(dataset)
        self.options = strategy_options(strategy, self.problem)
        self.tol = RELATIVE_TOL * float(np.max(np.abs(self.problem.c)))

    def track_iterations_to_1e_8(self, dataset, strategy):
        result = bcd.solve(self.problem, max_iter=20000, tol=self.tol, check_every=1,
                           random_state=0, **self.options)
        return result.n_iter if result.converged else float("nan")


class LatticeLabelPropagation:
    params = [["tree_partition_natural", "greedy_tree", "red_black"]]
    param_names = ["strategy"]
    timeout = 300

    def setup(self, strategy):
        quiet()
        self.problem = lattice_problem(300)
        self.options = strategy_options(strategy, self.problem)
        self.tol = RELATIVE_TOL * float(np.max(np.abs(self.problem.c)))

    def time_to_1e_8(self, strategy):
        bcd.solve(self.problem, max_iter=100000, tol=self.tol, random_state=0, **self.options)
