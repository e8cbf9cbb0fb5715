"""Block strategies: which coordinate sets a rule may choose from.

A strategy turns the active coordinates (those with ``L_i > 0``; a
coordinate with ``L_i = 0`` has a constant partial derivative and is never
updated) into *units* and says how many units make one block:

* ``"fixed"``: a partition into blocks of at most ``block_size``
  coordinates; one block per iteration.
* ``"variable"``: single coordinates; ``block_size`` of them per iteration.

and, for problems whose Hessian has a known sparse graph (quadratics), the
forest-structured strategies of Section 5 of the paper, whose blocks are
solved by message passing in linear time:

* ``"tree"``: a maximal forest grown every iteration (greedily by the rule's
  scores, or randomly); the units are single coordinates;
* ``"forest_partition"``: the greedy partition into forests (Section 5.5);
* ``"coloring"``: the greedy (Welsh-Powell) colouring, whose colour classes
  have no internal edges (red-black on a lattice in natural order).
"""
import numpy as np

from ._forest import CyForestUpdate, forest_partition, greedy_coloring
from .specs import Option, Spec, SpecTable, boolean, needs


class Units:
    """Coordinates grouped into units, stored CSR-like.

    Attributes
    ----------
    ptr, coords : int32 arrays
        Unit ``u`` holds ``coords[ptr[u]:ptr[u + 1]]`` (sorted).
    per_iteration : int
        Units combined into one block.
    lipschitz : float64 array
        ``L_b`` of every unit.
    unit_of : int32 array of length n
        Unit of each coordinate, -1 for inactive coordinates.
    max_block : int
        Largest number of coordinates one block can have.
    typical_size : float
        Expected block size (sets the spacing of stopping tests).
    dense : bool
        Whether blocks are solved with dense block matrices (False for
        forest-structured blocks, solved by message passing).
    """

    def __init__(self, ptr, coords, per_iteration, lipschitz, n, max_block=None,
                 typical_size=None, dense=True):
        self.ptr = np.ascontiguousarray(ptr, dtype=np.int32)
        self.coords = np.ascontiguousarray(coords, dtype=np.int32)
        self.per_iteration = int(per_iteration)
        self.lipschitz = np.ascontiguousarray(lipschitz, dtype=np.float64)
        unit_of = np.full(n, -1, dtype=np.int32)
        n_units = len(self.ptr) - 1
        if n_units > 0 and len(self.coords) == n_units:
            # one coordinate per unit (the common case): no sizes to count
            unit_of[self.coords] = np.arange(n_units, dtype=np.int32)
            largest = mean = 1
        else:
            sizes = np.diff(self.ptr)
            unit_of[self.coords] = np.repeat(np.arange(n_units, dtype=np.int32), sizes)
            largest = sizes.max() if sizes.size else 0
            mean = sizes.mean() if sizes.size else 1
        self.unit_of = unit_of
        self.max_block = int(max_block if max_block is not None else
                             self.per_iteration * largest)
        self.typical_size = float(typical_size if typical_size is not None else
                                  self.per_iteration * mean)
        self.dense = bool(dense)

    @property
    def n_units(self):
        return len(self.ptr) - 1

    @property
    def max_size(self):
        return int(np.max(np.diff(self.ptr))) if self.n_units else 0

    def blocks(self):
        """The units as a list of coordinate arrays."""
        return [self.coords[self.ptr[u]:self.ptr[u + 1]] for u in range(self.n_units)]


def partition(L, block_size, kind, rng, coordinates=None):
    """Partition the coordinates with ``L > 0`` (among ``coordinates``, a
    sorted subset, when given) into blocks of <= block_size.

    ``kind`` is one of

    * ``"order"``: consecutive coordinates;
    * ``"random"``: a random permutation cut into blocks;
    * ``"sort"``: sorted by decreasing ``L_i``, so the largest constants
      share blocks (the paper's choice for greedy rules);
    * ``"avg"``: sorted, then dealt to blocks in a snake order so that
      large and small constants are mixed and block averages are similar.

    Returns the list of blocks (each sorted).
    """
    ptr, coords = partition_arrays(L, block_size, kind, rng, coordinates)
    return [coords[ptr[u]:ptr[u + 1]] for u in range(len(ptr) - 1)]


def partition_arrays(L, block_size, kind, rng, coordinates=None):
    """:func:`partition` as ``(ptr, coords)``: block ``u`` is
    ``coords[ptr[u]:ptr[u + 1]]`` (sorted); computed without a Python loop."""
    active = active_coordinates(L, coordinates)
    n_active = active.size
    n_blocks = -(-n_active // block_size)
    if kind == "order":
        # consecutive (sorted) coordinates: the blocks are slices of them
        ptr = np.minimum(np.arange(n_blocks + 1, dtype=np.int64) * block_size, n_active)
        return ptr.astype(np.int32), active.astype(np.int32)
    if kind == "random":
        order = active[rng.permutation(n_active)]
    elif kind in ("sort", "avg"):
        order = active[np.argsort(-L[active], kind="stable")]
    else:  # pragma: no cover - validated by the caller
        raise ValueError(kind)
    position = np.arange(n_active)
    if kind == "avg":
        lap, pos = position // n_blocks, position % n_blocks
        owner = np.where(lap % 2 == 0, pos, n_blocks - 1 - pos)
    else:
        owner = position // block_size
    grouped = np.lexsort((order, owner))
    coords = order[grouped].astype(np.int32)
    ptr = np.zeros(n_blocks + 1, dtype=np.int32)
    np.cumsum(np.bincount(owner, minlength=n_blocks), out=ptr[1:])
    return ptr, coords


def active_coordinates(L, coordinates=None):
    """The coordinates with ``L_i > 0``, among ``coordinates`` if given."""
    if coordinates is None:
        return np.flatnonzero(L > 0).astype(np.int32)
    coordinates = np.asarray(coordinates, dtype=np.int32)
    return coordinates[L[coordinates] > 0]


def vertex_order(L, kind, rng):
    """The active vertices (``L > 0``) in order ``kind`` (see the ``vertex_order`` option)."""
    active = np.flatnonzero(L > 0).astype(np.int32)
    if kind == "random":
        return active[rng.permutation(active.size)]
    if kind == "lipschitz":
        return active[np.argsort(-L[active], kind="stable")]
    return active


def _units_from_labels(labels, n):
    """Blocks ``{i : labels[i] == k}`` (labels < 0: inactive) as ptr, coords."""
    active = np.flatnonzero(labels >= 0)
    coords = active[np.argsort(labels[active], kind="stable")].astype(np.int32)
    counts = np.bincount(labels[active], minlength=labels.max() + 1 if active.size else 0)
    ptr = np.zeros(counts.size + 1, dtype=np.int32)
    np.cumsum(counts, out=ptr[1:])
    return ptr, coords


def _gershgorin(graph_matrix, labels, n_blocks):
    """max_{i in b} sum_{j in b} |Q_ij| for every block b: an upper bound on
    lambda_max(Q_bb) computed in O(nnz) (no dense block is formed)."""
    coo = graph_matrix.tocoo()
    same = (labels[coo.row] == labels[coo.col]) & (labels[coo.row] >= 0)
    rows = np.bincount(coo.row[same], np.abs(coo.data[same]), minlength=labels.size)
    out = np.zeros(n_blocks)
    act = labels >= 0
    np.maximum.at(out, labels[act], rows[act])
    return out


def _variable(ctx):
    L = np.asarray(ctx.state.lipschitz)
    active = active_coordinates(L, ctx.coordinates)
    ptr = np.arange(active.size + 1, dtype=np.int32)
    return Units(ptr, active, ctx.block_size, L[active], L.shape[0])


def _tree(ctx):
    L = np.asarray(ctx.state.lipschitz)
    active = np.flatnonzero(L > 0).astype(np.int32)
    ptr = np.arange(active.size + 1, dtype=np.int32)
    return Units(ptr, active, 1, L[active], L.shape[0], max_block=active.size,
                 typical_size=max(1.0, active.size / 2), dense=False)


def _forest_units(ctx, build):
    L = np.asarray(ctx.state.lipschitz)
    order = vertex_order(L, ctx.options["vertex_order"], ctx.rng)
    labels = build(ctx.graph, order)
    ptr, coords = _units_from_labels(labels, L.shape[0])
    return Units(ptr, coords, 1, _gershgorin(ctx.graph_matrix, labels, len(ptr) - 1),
                 L.shape[0], dense=False)


def _forest_partition(ctx):
    return _forest_units(ctx, forest_partition)


def _coloring(ctx):
    return _forest_units(ctx, greedy_coloring)


def _fixed(ctx):
    L = np.asarray(ctx.state.lipschitz)
    ptr, coords = partition_arrays(L, ctx.block_size, ctx.options["partition"], ctx.rng,
                                   ctx.coordinates)
    units = Units(ptr, coords, 1, np.zeros(len(ptr) - 1), L.shape[0])
    units.lipschitz = ctx.state.blocks_lipschitz(units.ptr, units.coords)
    return units


def _message_passing(ctx):
    # the block solve of forest-structured strategies, linear in the block
    return CyForestUpdate(ctx.graph, ctx.units.ptr)


def _default_partition(capabilities):
    return "sort" if "lipschitz" in capabilities else "order"


_VERTEX_ORDER = Option(
    "vertex_order", "natural", "order in which the greedy forest/colouring visits the nodes",
    choices={"natural": needs(), "random": needs(), "lipschitz": needs(["lipschitz"])},
    text="""The order in which the greedy algorithm of ``blocks="forest_partition"``
    and ``"coloring"`` visits the nodes (``"lipschitz"``: decreasing
    ``L_i``).""")

#: the blocks are drawn from a working set grown by an outer loop
#: (``bcd.core.workingset``); the units are rebuilt on each working set
_WORKING_SET = Option("working_set", False,
                      "solve a sequence of problems restricted to working sets",
                      check=boolean("working_set"), kind="bool", auto=True,
                      text="""With fixed or variable blocks: solve a sequence of
    problems restricted to working sets (the generalized support and the
    coordinates that violate optimality most, doubling as the support fills
    them), each by the configured rule and update, until the optimality
    measure of all coordinates reaches ``tol`` (``bcd.core.workingset``).
    ``"auto"``: as the automatic configuration chooses, else off.""")

#: name -> Spec.  Forest-structured strategies need the Hessian's graph and
#: solve their blocks by message passing (``solve``).
BLOCKS = SpecTable({
    "fixed": Spec("blocks", "fixed", _fixed, needs(),
                  options=(Option("partition", _default_partition,
                                  "how the fixed partition is formed",
                                  choices={"order": needs(), "random": needs(),
                                           "sort": needs(["lipschitz"]),
                                           "avg": needs(["lipschitz"])},
                                  text="""How fixed blocks are formed: ``"sort"`` (by
                  decreasing ``L_i``, largest together; the default where the
                  problem has Lipschitz constants, else ``"order"``),
                  ``"order"``, ``"random"`` or ``"avg"``."""),
                           _WORKING_SET),
                  doc="a partition chosen once (of each working set)"),
    "variable": Spec("blocks", "variable", _variable, needs(), options=(_WORKING_SET,),
                     doc="any block_size coordinates"),
    "tree": Spec("blocks", "tree", _tree, needs(["graph"], penalty=None),
                 solve=_message_passing,
                 doc="a maximal forest of the Hessian's graph grown every iteration"),
    "forest_partition": Spec("blocks", "forest_partition", _forest_partition,
                             needs(["graph"], penalty=None), options=(_VERTEX_ORDER,),
                             solve=_message_passing,
                             doc="the greedy partition into forests"),
    "coloring": Spec("blocks", "coloring", _coloring, needs(["graph"], penalty=None),
                     options=(_VERTEX_ORDER,), solve=_message_passing,
                     doc="the greedy colouring (red-black on a lattice)"),
})
