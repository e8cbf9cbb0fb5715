"""The Python face of a problem."""
import numpy as np
import scipy.sparse as sp

from ..core._matrix import CyMatrix
from ..penalties import Penalty


def scale_rows(M, scale):
    """diag(scale) M for M as returned by ``check_matrix`` (a Fortran float64
    array or a canonical CSC matrix with int32 indices), in the same layout;
    M is not modified."""
    if sp.issparse(M):
        out = M.copy()
        out.data *= scale[out.indices]
        return out
    return np.asfortranarray(M * scale[:, None])


class Problem:
    """Base class of the problems :func:`bcd.solve` accepts.

    A problem owns its validated data and the smooth objective f; the
    optional ``penalty`` g makes the objective F = f + g.  A subclass
    provides (see the documentation page "Writing a problem"):

    * ``n_coordinates``: the length of the variable x;
    * ``lipschitz``: coordinate-wise constants L_i (set with
      ``_set_lipschitz``).  With the ``"lipschitz"`` capability they are
      global Lipschitz constants of the partial derivatives; without it they
      are positive scales, and zero only for coordinates that cannot move;
    * ``capabilities``: the oracles it provides (see ``bcd.core.specs``),
      which decide the rules, updates and block strategies it can be solved
      with;
    * :meth:`smooth_objective` and :meth:`gradient`: NumPy evaluations of
      f, for checks and users;
    * :meth:`compile`: the compiled state the engine iterates on, a
      ``bcd.core._problem.CyProblem`` subclass;
    * per capability: :meth:`hessian_graph` ("graph"),
      :meth:`sirt_diagonal` ("sirt_diagonal"), :meth:`duality_gap` and
      :meth:`safe_zeros` ("duality_gap");
    * optionally :meth:`iteration_costs`, which spaces the stopping tests.

    Subclasses are registered with :func:`bcd.problems.register`.

    Notes
    -----
    A problem holds a reference to array inputs that need no conversion (a
    float64 Fortran-ordered array, a canonical float64 CSC matrix), as
    scikit-learn estimators do: modifying such an array after building the
    problem is not supported, since constants computed from it (such as
    ``lipschitz``) would not follow.  Inputs that need a conversion are
    copied; no input is ever modified.

    A problem holds no state of a solve, so it can be solved from several
    threads at once.  It pickles and deep-copies before and after solves;
    its compiled objects are rebuilt when next used.
    """

    n_coordinates = 0
    #: The separable non-smooth part g (a bcd.penalties.Penalty) or None.
    penalty = None
    #: What the problem provides (see bcd.core.specs.PROBLEM_CAPABILITIES).
    capabilities = frozenset()
    #: The shape of f that the automatic configuration (bcd.core.auto) keys
    #: on: "linear_model" (f = sum_i phi(a_i.x) + l2/2 ||x||^2),
    #: "grouped_linear_model" (the same with a group of coordinates per
    #: feature, such as one per class), "sparse_quadratic" (a quadratic with
    #: a sparse Hessian graph), "kernel" (a quadratic with a dense kernel
    #: Hessian computed on the fly) or None (any other: a configuration
    #: valid for every problem is used).
    structure = None
    #: with capability "dual": the most coordinates without an l2 weight
    #: that the dual solver takes (minimized as blocks of their own)
    _dual_unpenalized = 1
    #: dtype of returned solutions (float32 for float32 input).
    dtype = np.dtype(np.float64)

    #: attributes that hold compiled objects or caches built on demand: a
    #: pickle or a deep copy leaves them out, and they are rebuilt when used
    _TRANSIENT = ("_column_access", "_weighted_column_access", "_graph_cache", "_dense",
                  "_dual_rows")

    def __getstate__(self):
        state = dict(self.__dict__)
        for name in self._TRANSIENT:
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._restore()

    def _restore(self):
        """Rebuild, after unpickling, the compiled objects that are not built
        on demand (none by default)."""

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
            cache[rows] = CyMatrix(self.A, need_rows=rows)
        return cache[rows]

    def _weighted_columns(self, weights, rows=False):
        """Compiled column access to diag(sqrt(weights)) A, for curvature bounds
        of a loss with sample weights (None: ``_columns``), cached."""
        if weights is None:
            return self._columns(rows)
        cache = self.__dict__.setdefault("_weighted_column_access", {})
        if rows not in cache:
            cache[rows] = CyMatrix(scale_rows(self.A, np.sqrt(weights)), need_rows=rows)
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
            penalty.compile(self.n_coordinates)     # checks per-coordinate lengths
        self.penalty = penalty

    def objective(self, x):
        """F(x) = f(x) + g(x): the smooth objective plus the penalty, if any."""
        value = self.smooth_objective(x)
        if self.penalty is not None:
            value += self.penalty.value(np.asarray(x, dtype=np.float64).reshape(-1))
        return value

    def smooth_objective(self, x):
        """f(x), evaluated with NumPy."""
        raise NotImplementedError(f"{type(self).__name__} must implement smooth_objective(x).")

    def gradient(self, x):
        """The gradient of f at x, evaluated with NumPy."""
        raise NotImplementedError(f"{type(self).__name__} must implement gradient(x).")

    def compile(self, tracking, max_block):
        """The compiled state (a ``CyProblem``) at x = 0.

        ``tracking``: keep the full gradient up to date (greedy rules read
        it); ``max_block``: the largest block a step will touch.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement "
                                  f"compile(tracking, max_block).")

    def hessian_graph(self):
        """``(CyGraph, csr_matrix)``: the sparse graph of the Hessian
        (capability "graph"), for forest-structured blocks."""
        raise NotImplementedError(f"{type(self).__name__} does not provide the graph of its "
                                  f"Hessian (capability 'graph').")

    def duality_gap(self, x, state=None):
        """A duality gap at ``x`` (capability "duality_gap"), or None where
        none is defined for the current penalty; ``state``, when given, is a
        compiled state holding exact values at ``x`` to read from."""
        raise NotImplementedError(f"{type(self).__name__} does not provide a duality gap "
                                  f"(capability 'duality_gap').")

    def safe_zeros(self, state, gradient):
        """``(gap, zeros)`` at a compiled state's iterate (capability
        "duality_gap"): the duality gap and a boolean mask of the
        coordinates proven zero at every solution (safe screening), or
        ``(None, None)`` where no gap is defined for the current penalty.
        ``gradient`` is grad f at that iterate, whose state is exact."""
        raise NotImplementedError(f"{type(self).__name__} does not provide a duality gap "
                                  f"(capability 'duality_gap').")

    def sirt_diagonal(self):
        """Row sums ``sum_j |M_ij|`` of a Hessian bound M (capability
        "sirt_diagonal"): the GSD-SIRT diagonal."""
        raise NotImplementedError(f"{type(self).__name__} provides no Hessian bound M "
                                  f"(capability 'sirt_diagonal').")

    def iteration_costs(self, block_size, tracking, dense=True):
        """Rough costs ``(per_iteration, per_check)`` in flops.

        ``dense`` says whether the iteration forms a dense block matrix
        (matrix, Newton and exact updates, or an L_b computed per variable
        block); forest-structured blocks and line searches form none.

        The solver uses them to space the stopping tests so that testing
        adds a bounded fraction to the run time.
        """
        return float(block_size), float(self.n_coordinates)
