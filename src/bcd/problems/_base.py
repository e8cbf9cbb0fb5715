"""The Python face of a problem."""
import numpy as np

from ..core._matrix import Matrix
from ..penalties import Penalty


class Problem:
    """Base class of the problems :func:`bcd.solve` accepts.

    A problem owns its validated data and knows

    * ``n_coordinates``: the length of the optimization variable ``x``;
    * ``lipschitz``: the coordinate-wise Lipschitz constants ``L_i`` of the
      gradient (Appendix B of Nutini, Laradji and Schmidt);
    * :meth:`smooth_objective` and :meth:`gradient`: plain NumPy
      evaluations of the documented smooth objective f, used for checking
      and by users; :meth:`objective` adds the penalty g when there is one;
    * :meth:`_make_kernel`: the compiled state the engine iterates on.

    Subclasses implement these and register themselves with
    :func:`bcd.problems.register`.
    """

    n_coordinates = 0
    #: The separable non-smooth part g (a bcd.penalties.Penalty) or None.
    penalty = None
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

    def _has_row_view(self):
        """Whether ``_columns(True)`` has been built (and costs nothing more)."""
        return True in self.__dict__.get("_column_access", {})

    def _set_penalty(self, penalty):
        if penalty is not None:
            if not isinstance(penalty, Penalty):
                raise TypeError(f"penalty must be a bcd penalty such as bcd.L1(lam), "
                                f"bcd.NonNegative() or bcd.Box(lower, upper), or None; got "
                                f"{type(penalty).__name__}.")
            penalty._kernel(self.n_coordinates)      # checks per-coordinate lengths
        self.penalty = penalty

    def objective(self, x):
        """F(x) = f(x) + g(x): the smooth objective plus the penalty, if any."""
        value = self.smooth_objective(x)
        if self.penalty is not None:
            value += self.penalty.value(np.asarray(x, dtype=np.float64).reshape(-1))
        return value

    def smooth_objective(self, x):
        raise NotImplementedError

    def gradient(self, x):
        raise NotImplementedError

    def _make_kernel(self, tracking, max_block):
        raise NotImplementedError

    def _graph(self):
        """``(Graph, matrix)``: the sparse graph of the Hessian for forest blocks,
        or None when the problem has none."""
        return None

    def _duality_gap(self, x, kernel=None):
        """A duality gap at ``x`` where the problem has one, else None;
        ``kernel``, when given, holds exact state at ``x`` to read from."""
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
