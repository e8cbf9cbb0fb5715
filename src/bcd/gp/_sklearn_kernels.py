"""scikit-learn kernel objects translated to bcd's compiled kernels.

:func:`translate` reads a kernel of ``sklearn.gaussian_process.kernels``
(a tree of sums, products and exponentiations over base kernels) and, where
bcd has an exact equivalent, returns a :class:`TranslatedKernel`: a bcd
kernel (:class:`~bcd.gp.SquaredExponential`, :class:`~bcd.gp.Matern`,
:class:`~bcd.gp.Periodic`, :class:`~bcd.gp.RationalQuadratic`, their sums
and products) plus the parts bcd
kernels do not model, a constant added to every entry and a white-noise
diagonal that appears on ``k(X)`` only, as scikit-learn's ``WhiteKernel``
does.  Where there is none it returns the reason as a string, and the
caller evaluates the scikit-learn kernel itself.

How the parameters travel.  Every parameter of the bcd kernel is, on a log
scale, an affine function of scikit-learn's ``kernel.theta``:
``log p = C @ theta + b``.  A ``ConstantKernel`` factor adds its ``log c``
to the log-variance of its product term, ``k ** e`` multiplies it by ``e``
and divides a squared-exponential, periodic or rational quadratic
length-scale by ``sqrt(e)`` (``log l - log(e) / 2``; the rational
quadratic's alpha becomes ``alpha e``), a fixed parameter is a constant
``b``.  The
gradient of a function of the kernel with respect to ``theta`` is then
``C.T @`` its gradient with respect to bcd's log-parameters (the chain
rule), and bcd's parameters that depend on no free entry of ``theta`` are
fixed (``bounds="fixed"``).  The bounds of a bcd parameter that is one
entry of ``theta`` (shifted by a constant) are scikit-learn's, mapped;
the optimizer itself works on ``theta`` within scikit-learn's bounds.
"""
import numpy as np

from .kernels import Matern, Periodic, SquaredExponential

try:                                     # bcd's rational quadratic kernel, where built
    from .kernels import RationalQuadratic as _RationalQuadratic
except ImportError:                      # pragma: no cover - older bcd
    _RationalQuadratic = None

__all__ = ["translate", "TranslatedKernel"]


class _Form:
    """``log p = C @ theta + b`` for a parameter of m elements."""
    __slots__ = ("C", "b")

    def __init__(self, C, b):
        self.C = np.asarray(C, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)

    @classmethod
    def constant(cls, n_theta, logvalue):
        logvalue = np.atleast_1d(np.asarray(logvalue, dtype=np.float64))
        return cls(np.zeros((logvalue.size, n_theta)), logvalue)

    def __add__(self, other):
        return _Form(self.C + other.C, self.b + other.b)

    def scaled(self, factor):
        return _Form(self.C * factor, self.b * factor)

    def shifted(self, delta):
        return _Form(self.C, self.b + delta)

    def value(self, theta):
        return np.exp(self.C @ theta + self.b)

    @property
    def free(self):
        return bool(np.any(self.C != 0))


class _Untranslatable(Exception):
    """A part of the kernel with no exact compiled equivalent."""


def _param_form(kernel, name, offsets, n_theta, base):
    """Form of the hyperparameter ``name`` of the base kernel ``kernel``,
    whose free hyperparameters start at ``base`` in theta."""
    value = np.atleast_1d(np.asarray(getattr(kernel, name), dtype=np.float64))
    if not np.all(np.isfinite(value)) or np.any(value <= 0):
        raise _Untranslatable(f"{type(kernel).__name__} has {name}={getattr(kernel, name)!r}, "
                              f"not positive and finite")
    if name not in offsets:                      # fixed
        return _Form.constant(n_theta, np.log(value))
    start, size = offsets[name]
    C = np.zeros((value.size, n_theta))
    if size == value.size:
        C[np.arange(size), base + start + np.arange(size)] = 1.0
    elif size == 1:
        C[:, base + start] = 1.0
    else:
        raise _Untranslatable(f"{type(kernel).__name__}: {name} has {value.size} values but "
                              f"{size} hyperparameter elements")
    return _Form(C, np.zeros(value.size))


def _offsets(kernel):
    """Free hyperparameters of a base kernel: name -> (start, size) in its theta."""
    out, k = {}, 0
    for hyp in kernel.hyperparameters:
        if hyp.fixed:
            continue
        out[hyp.name] = (k, hyp.n_elements)
        k += hyp.n_elements
    return out


class _Term:
    """A product term: its log-scale form, its compiled factors
    ``(kind, lengthscale form, period form or None, base kernel)`` and
    whether it holds a white-noise factor (then it lives on the diagonal
    of k(X) only, where every compiled factor equals 1)."""
    __slots__ = ("scale", "factors", "white")

    def __init__(self, scale, factors, white):
        self.scale = scale
        self.factors = factors
        self.white = white


def _terms(kernel, base, n_theta, n_features):
    from sklearn.gaussian_process import kernels as sk

    kind = type(kernel)
    if kind is sk.Sum:
        return (_terms(kernel.k1, base, n_theta, n_features)
                + _terms(kernel.k2, base + kernel.k1.n_dims, n_theta, n_features))
    if kind is sk.Product:
        left = _terms(kernel.k1, base, n_theta, n_features)
        right = _terms(kernel.k2, base + kernel.k1.n_dims, n_theta, n_features)
        return [_Term(a.scale + b.scale, a.factors + b.factors, a.white or b.white)
                for a in left for b in right]
    if kind is sk.Exponentiation:
        e = kernel.exponent
        inner = _terms(kernel.kernel, base, n_theta, n_features)
        if len(inner) != 1:
            raise _Untranslatable("a power of a sum of kernels")
        if not (np.isscalar(e) and np.isfinite(e)):
            raise _Untranslatable(f"the exponent {e!r}")
        term = inner[0]
        if term.white and not e > 0:
            raise _Untranslatable(f"WhiteKernel ** {e!r}")
        factors = []
        for fkind, ls, per, owner in term.factors:
            if fkind not in ("se", "periodic", "rq") or not e > 0:
                raise _Untranslatable(f"{type(owner).__name__} ** {e!r}")
            if fkind == "rq":
                # (1 + d^2 / (2 a l^2)) ** (-a e): a' = a e and a' l'^2 = a l^2,
                # l' = l / sqrt(e)
                factors.append((fkind, ls.shifted(-0.5 * np.log(e)), per.shifted(np.log(e)),
                                owner))
                continue
            # exp(-r^2 / (2 l^2)) ** e = exp(-r^2 / (2 (l / sqrt(e))^2)), and
            # likewise for the periodic kernel's length-scale
            factors.append((fkind, ls.shifted(-0.5 * np.log(e)), per, owner))
        return [_Term(term.scale.scaled(e), factors, term.white)]

    offsets = _offsets(kernel)
    zero = _Form.constant(n_theta, 0.0)
    if kind is sk.ConstantKernel:
        return [_Term(_param_form(kernel, "constant_value", offsets, n_theta, base), [], False)]
    if kind is sk.WhiteKernel:
        return [_Term(_param_form(kernel, "noise_level", offsets, n_theta, base), [], True)]
    if kind in (sk.RBF, sk.Matern):
        nu = getattr(kernel, "nu", np.inf)
        names = {np.inf: "se", 1.5: "matern32", 2.5: "matern52"}
        if nu not in names:
            raise _Untranslatable(f"Matern with nu={nu!r} (bcd compiles nu = 1.5, 2.5 and the "
                                  f"squared exponential, nu = inf)")
        ls = _param_form(kernel, "length_scale", offsets, n_theta, base)
        if ls.C.shape[0] not in (1, n_features):
            raise _Untranslatable(f"{kind.__name__} has {ls.C.shape[0]} length-scales for "
                                  f"{n_features} features")
        return [_Term(zero, [(names[nu], ls, None, kernel)], False)]
    if kind is sk.ExpSineSquared:
        ls = _param_form(kernel, "length_scale", offsets, n_theta, base)
        per = _param_form(kernel, "periodicity", offsets, n_theta, base)
        if ls.C.shape[0] != 1 or per.C.shape[0] != 1:
            raise _Untranslatable("ExpSineSquared with several length-scales or periods")
        return [_Term(zero, [("periodic", ls, per, kernel)], False)]
    if kind is sk.RationalQuadratic and _RationalQuadratic is not None:
        ls = _param_form(kernel, "length_scale", offsets, n_theta, base)
        shape = _param_form(kernel, "alpha", offsets, n_theta, base)
        if ls.C.shape[0] != 1:
            # scikit-learn's kernel itself refuses them: let it say so
            raise _Untranslatable("RationalQuadratic with several length-scales")
        return [_Term(zero, [("rq", ls, shape, kernel)], False)]
    raise _Untranslatable(f"{kind.__name__}")


def _bounds_for(form, sk_bounds):
    """bcd bounds of a parameter: "fixed" when it depends on no free entry
    of theta, scikit-learn's (mapped) when it is one entry shifted by a
    constant, bcd's defaults otherwise."""
    if not form.free:
        return "fixed"
    rows = [np.flatnonzero(row) for row in form.C]
    if all(r.size == 1 and row[r[0]] == 1.0 for r, row in zip(rows, form.C)):
        idx = [int(r[0]) for r in rows]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            lo = np.exp(sk_bounds[idx, 0] + form.b)
            hi = np.exp(sk_bounds[idx, 1] + form.b)
        if np.ptp(lo) == 0 and np.ptp(hi) == 0:
            lo, hi = float(lo[0]), float(hi[0])
            if np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi:
                return (lo, hi)
    return (1e-5, 1e5)


class TranslatedKernel:
    """A scikit-learn kernel at its current ``theta`` as a bcd kernel
    (``compiled``, None when every term is a constant or white noise), a
    constant and a white-noise level, with the chain rule to ``theta``.

    ``jacobian`` has one row per free log-parameter of ``compiled`` (the
    order of ``compiled.theta``) and one column per entry of scikit-learn's
    ``theta``.  ``constants`` and ``whites`` are ``(value, d value / d theta)``
    per constant or white-noise term.
    """

    def __init__(self, compiled, jacobian, constants, whites, n_theta):
        self.compiled = compiled
        self.jacobian = jacobian
        self.constants = constants
        self.whites = whites
        self.n_theta = n_theta
        self.constant = float(sum(v for v, _ in constants))
        self.noise = float(sum(v for v, _ in whites))

    def cross(self, X1, X2):
        """k(X1, X2) with X2 another set of inputs (no white noise), F-ordered."""
        if self.compiled is None:
            return np.full((X1.shape[0], X2.shape[0]), self.constant, order="F")
        K = self.compiled.evaluator(X1, X2).matrix()
        if self.constant:
            K += self.constant
        return K

    def matrix(self, X):
        """k(X) (the white noise on its diagonal), F-ordered."""
        n = X.shape[0]
        if self.compiled is None:
            K = np.full((n, n), self.constant, order="F")
        else:
            K = self.compiled.evaluator(X).matrix()
            if self.constant:
                K += self.constant
        if self.noise:
            K[np.diag_indices(n)] += self.noise
        return K

    def diag(self, X):
        """k(x, x) for every row (all translated kernels are stationary)."""
        value = self.constant + self.noise
        if self.compiled is not None:
            value += self.compiled.diag_value()
        return np.full(X.shape[0], value)

    def gradient(self, X, W, trace_W, sum_W):
        """``sum_ij W_ij dk(X)_ij / dtheta`` for a symmetric W given by its
        upper triangle (F-ordered), with its trace and the sum of its entries."""
        grad = np.zeros(self.n_theta)
        if self.compiled is not None and self.jacobian.shape[0]:
            g = self.compiled.gradient(X).dense(W.T, symmetric=True)
            grad += self.jacobian.T @ g
        for value, d in self.constants:
            grad += d * sum_W
        for value, d in self.whites:
            grad += d * trace_W
        return grad


def translate(kernel, n_features):
    """:class:`TranslatedKernel` for a scikit-learn kernel at its current
    theta, or a string saying which part has no compiled equivalent."""
    theta = np.asarray(kernel.theta, dtype=np.float64)
    n_theta = theta.shape[0]
    try:
        terms = _terms(kernel, 0, n_theta, n_features)
    except _Untranslatable as exc:
        return str(exc)
    with np.errstate(divide="ignore", invalid="ignore"):   # log of (-inf, inf) bounds
        sk_bounds = np.asarray(kernel.bounds, dtype=np.float64).reshape(-1, 2) if n_theta \
            else np.zeros((0, 2))
    constants, whites, compiled_terms = [], [], []
    forms = {}                                   # (id(bcd base), name) -> form
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for term in terms:
            scale = float(term.scale.value(theta)[0])
            if not (np.isfinite(scale) and scale > 0):
                return f"a term with scale {scale!r}, not positive and finite"
            d_scale = scale * term.scale.C[0]
            if term.white:
                whites.append((scale, d_scale))
                continue
            if not term.factors:
                constants.append((scale, d_scale))
                continue
            product = None
            for k, (fkind, ls, per, owner) in enumerate(term.factors):
                var_form = term.scale if k == 0 else _Form.constant(n_theta, 0.0)
                variance = scale if k == 0 else 1.0
                lsv = ls.value(theta)
                if not np.all(np.isfinite(lsv)) or np.any(lsv <= 0):
                    return f"{type(owner).__name__} length-scale {lsv!r} out of range"
                lsv = lsv if lsv.size > 1 else float(lsv[0])
                if fkind == "periodic":
                    perv = float(per.value(theta)[0])
                    if not (np.isfinite(perv) and perv > 0):
                        return f"ExpSineSquared period {perv!r} out of range"
                    base_k = Periodic(perv, lsv, variance,
                                      period_bounds=_bounds_for(per, sk_bounds),
                                      lengthscale_bounds=_bounds_for(ls, sk_bounds),
                                      variance_bounds=_bounds_for(var_form, sk_bounds))
                    forms[(id(base_k), "period")] = per
                elif fkind == "rq":
                    av = float(per.value(theta)[0])
                    if not (np.isfinite(av) and av > 0):
                        return f"RationalQuadratic alpha {av!r} out of range"
                    base_k = _RationalQuadratic(lsv, av, variance,
                                                lengthscale_bounds=_bounds_for(ls, sk_bounds),
                                                alpha_bounds=_bounds_for(per, sk_bounds),
                                                variance_bounds=_bounds_for(var_form, sk_bounds))
                    forms[(id(base_k), "alpha")] = per
                elif fkind == "se":
                    base_k = SquaredExponential(lsv, variance,
                                                lengthscale_bounds=_bounds_for(ls, sk_bounds),
                                                variance_bounds=_bounds_for(var_form, sk_bounds))
                else:
                    base_k = Matern(1.5 if fkind == "matern32" else 2.5, lsv, variance,
                                    lengthscale_bounds=_bounds_for(ls, sk_bounds),
                                    variance_bounds=_bounds_for(var_form, sk_bounds))
                forms[(id(base_k), "lengthscale")] = ls
                forms[(id(base_k), "variance")] = var_form
                product = base_k if product is None else product * base_k
            compiled_terms.append(product)
    compiled = None
    for t in compiled_terms:
        compiled = t if compiled is None else compiled + t
    rows = []
    if compiled is not None:
        parts = compiled.get_params(deep=True)
        for hyp in compiled.hyperparameters:
            if hyp.fixed:
                continue
            prefix, _, name = hyp.name.rpartition("__")
            owner = parts[prefix] if prefix else compiled
            form = forms[(id(owner), name)]
            C = form.C
            if C.shape[0] != hyp.n_elements:
                C = np.repeat(C, hyp.n_elements, axis=0) if C.shape[0] == 1 else C
            rows.append(C)
    jacobian = np.vstack(rows) if rows else np.zeros((0, n_theta))
    return TranslatedKernel(compiled, jacobian, constants, whites, n_theta)
