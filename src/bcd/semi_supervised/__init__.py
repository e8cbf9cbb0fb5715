"""Semi-supervised learning with scikit-learn's interface, solved by block coordinate descent.

* :class:`LabelPropagation`: the harmonic solution of Zhu, Ghahramani and
  Lafferty on a k-nearest-neighbour or Gaussian graph of the inputs.

Requires scikit-learn (``pip install 'bcd[sklearn]'``).
"""
from .._optional import import_optional

import_optional("sklearn", "sklearn")

from ._label_propagation import LabelPropagation  # noqa: E402

__all__ = ["LabelPropagation"]
