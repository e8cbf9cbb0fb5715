"""Linear models with scikit-learn's interface, fitted by block coordinate descent.

Requires scikit-learn (``pip install 'bcd[sklearn]'``).
"""
from .._optional import import_optional

import_optional("sklearn", "sklearn")

__all__ = []
