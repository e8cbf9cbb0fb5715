"""Block strategies: which coordinate sets a rule may choose from.

A strategy turns the active coordinates (those with ``L_i > 0``; a
coordinate with ``L_i = 0`` has a constant partial derivative and is never
updated) into *units* and says how many units make one block:

* ``"fixed"``: a partition into blocks of at most ``block_size``
  coordinates; one block per iteration.
* ``"variable"``: single coordinates; ``block_size`` of them per iteration.
"""
import numpy as np

PARTITIONS = ("order", "random", "sort", "avg")
BLOCKS = ("fixed", "variable")


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
    """

    def __init__(self, ptr, coords, per_iteration, lipschitz, n):
        self.ptr = np.ascontiguousarray(ptr, dtype=np.int32)
        self.coords = np.ascontiguousarray(coords, dtype=np.int32)
        self.per_iteration = int(per_iteration)
        self.lipschitz = np.ascontiguousarray(lipschitz, dtype=np.float64)
        unit_of = np.full(n, -1, dtype=np.int32)
        unit_of[self.coords] = np.repeat(np.arange(len(self.ptr) - 1, dtype=np.int32),
                                         np.diff(self.ptr))
        self.unit_of = unit_of

    @property
    def n_units(self):
        return len(self.ptr) - 1

    @property
    def max_size(self):
        return int(np.max(np.diff(self.ptr))) if self.n_units else 0

    def blocks(self):
        """The units as a list of coordinate arrays."""
        return [self.coords[self.ptr[u]:self.ptr[u + 1]] for u in range(self.n_units)]


def partition(L, block_size, kind, rng):
    """Partition the coordinates with ``L > 0`` into blocks of <= block_size.

    ``kind`` is one of

    * ``"order"``: consecutive coordinates;
    * ``"random"``: a random permutation cut into blocks;
    * ``"sort"``: sorted by decreasing ``L_i``, so the largest constants
      share blocks (the paper's choice for greedy rules);
    * ``"avg"``: sorted, then dealt to blocks in a snake order so that
      large and small constants are mixed and block averages are similar.

    Returns the list of blocks (each sorted).
    """
    active = np.flatnonzero(L > 0)
    n_active = active.size
    if n_active == 0:
        return []
    n_blocks = -(-n_active // block_size)
    if kind == "order":
        order = active
    elif kind == "random":
        order = active[rng.permutation(n_active)]
    elif kind == "sort":
        order = active[np.argsort(-L[active], kind="stable")]
    elif kind == "avg":
        srt = active[np.argsort(-L[active], kind="stable")]
        lap = np.arange(n_active) // n_blocks
        pos = np.arange(n_active) % n_blocks
        owner = np.where(lap % 2 == 0, pos, n_blocks - 1 - pos)
        return [np.sort(srt[owner == u]) for u in range(n_blocks)]
    else:  # pragma: no cover - validated by the caller
        raise ValueError(kind)
    return [np.sort(order[s:s + block_size]) for s in range(0, n_active, block_size)]


def make_units(kind, kernel, block_size, partition_kind, rng):
    """Build the :class:`Units` of block strategy ``kind`` for ``kernel``."""
    L = np.asarray(kernel.lipschitz)
    n = L.shape[0]
    if kind == "variable":
        active = np.flatnonzero(L > 0).astype(np.int32)
        ptr = np.arange(active.size + 1, dtype=np.int32)
        return Units(ptr, active, block_size, L[active], n)
    blocks = partition(L, block_size, partition_kind, rng)
    sizes = np.array([len(b) for b in blocks], dtype=np.int64)
    ptr = np.zeros(len(blocks) + 1, dtype=np.int32)
    np.cumsum(sizes, out=ptr[1:])
    coords = np.concatenate(blocks).astype(np.int32) if blocks else np.zeros(0, np.int32)
    units = Units(ptr, coords, 1, np.zeros(len(blocks)), n)
    units.lipschitz = kernel.blocks_lipschitz(units.ptr, units.coords)
    return units
