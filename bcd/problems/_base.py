"""The Python face of a problem."""
import numpy as np

from ..core._matrix import Matrix


class Problem:
    """Base class of the problems :func:`bcd.solve` accepts.

    A problem owns its validated data and knows

    * ``n_coordinates``: the length of the optimization variable ``x``;
    * ``lipschitz``: the coordinate-wise Lipschitz constants ``L_i`` of the
      gradient (Appendix B of Nutini, Laradji and Schmidt);
    * :meth:`objective` and :meth:`gradient`: plain NumPy evaluations of the
      documented objective, used for checking and by users;
    * :meth:`_make_kernel`: the compiled state the engine iterates on.

    Subclasses implement these and register themselves with
    :func:`bcd.problems.register`.
    """

    n_coordinates = 0
    #: Whether the kernel multiplies by a Hessian bound M of the whole
    #: problem (needed by rule "gsq" with variable blocks).
    _has_hessian_bound = False
    #: dtype of returned solutions (float32 for float32 input).
    dtype = np.dtype(np.float64)

    @property
    def lipschitz(self):
        """Coordinate-wise Lipschitz constants L_i (read-only array)."""
        return self._lipschitz

    def _set_lipschitz(self, L):
        L = np.asarray(L, dtype=np.float64)
        if not np.all(np.isfinite(L)):
            raise ValueError("A has a column whose squared norm overflows float64; rescale A.")
        L.setflags(write=False)
        self._lipschitz = L

    def _columns(self, rows=False):
        """Compiled column access to ``self.A`` (with its row view if asked), cached."""
        cache = self.__dict__.setdefault("_column_access", {})
        if rows not in cache:
            cache[rows] = Matrix(self.A, need_rows=rows)
        return cache[rows]

    def objective(self, x):
        raise NotImplementedError

    def gradient(self, x):
        raise NotImplementedError

    def _make_kernel(self, tracking, max_block):
        raise NotImplementedError

    def _graph(self):
        """``(Graph, matrix)``: the sparse graph of the Hessian for forest blocks,
        or None when the problem has none."""
        return None

    def _sirt_diagonal(self):
        """Row sums sum_j |M_ij| of a Hessian bound M (the GSD-SIRT diagonal)."""
        raise ValueError(f"{type(self).__name__} provides no Hessian bound M, which the "
                         f"SIRT diagonal (gsd_diagonal='sirt', rule 'gsl' with variable "
                         f"blocks) needs.")

    def _costs(self, block_size, tracking, dense=True):
        """Rough costs ``(per_iteration, per_check)`` in flops.

        ``dense`` says whether the iteration forms a dense block matrix
        (matrix, Newton and exact updates, or an L_b computed per variable
        block); forest-structured blocks and line searches form none.

        The solver uses them to space the stopping tests so that testing
        adds a bounded fraction to the run time.
        """
        return float(block_size), float(self.n_coordinates)
