"""Selection rules, by name."""
import numpy as np

from ._select import CyclicSelector, GreedySelector, LipschitzSelector, RandomSelector


def _cyclic(units, blocks, seed):
    # fixed blocks are cycled in order; variable blocks are chunks of a fresh
    # random permutation every pass (Table 1 of the paper)
    return CyclicSelector(units.ptr, units.coords, units.lipschitz, units.per_iteration,
                          seed, blocks == "variable")


def _random(units, blocks, seed):
    return RandomSelector(units.ptr, units.coords, units.lipschitz, units.per_iteration, seed)


def _lipschitz(units, blocks, seed):
    return LipschitzSelector(units.ptr, units.coords, units.lipschitz, units.per_iteration, seed)


def _gs(units, blocks, seed):
    n = units.unit_of.shape[0]
    return GreedySelector(units.ptr, units.coords, units.lipschitz, units.per_iteration, seed,
                          units.unit_of, np.ones(n), np.ones(units.n_units))


#: name -> (factory, needs the full gradient)
RULES = {
    "cyclic": (_cyclic, False),
    "random": (_random, False),
    "lipschitz": (_lipschitz, False),
    "gs": (_gs, True),
}
