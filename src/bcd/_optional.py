"""Imports of optional dependencies with errors that name the extra to install."""
import importlib


def import_optional(module, extra):
    """Import ``module``; if it is missing, raise an ImportError that names
    the ``bcd[extra]`` installation providing it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise ImportError(
            f"{top!r} is required here but is not installed; install it with "
            f"pip install 'bcd[{extra}]'.") from exc
