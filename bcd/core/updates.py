"""Block updates, by name."""
from ._update import GradientUpdate

#: name -> factory
UPDATES = {
    "gradient": GradientUpdate,
}
