"""Semi-supervised learning with scikit-learn's interface, solved by block coordinate descent.

Requires scikit-learn (``pip install 'bcd[sklearn]'``).
"""
from .._optional import import_optional

import_optional("sklearn", "sklearn")

__all__ = []
