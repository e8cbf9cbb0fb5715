"""Small helpers shared by the reproductions: progress lines and optional
imports (the library's own helpers are private)."""
import importlib
import sys
import time


class Status:
    """Progress lines of a long reproduction, at most one every ``interval``
    seconds; on a terminal one line rewritten in place."""

    def __init__(self, interval=1.0, stream=None):
        self.interval = interval
        self._stream = stream
        self.start = time.perf_counter()
        self._last = self.start
        self._width = 0

    @property
    def stream(self):
        return sys.stdout if self._stream is None else self._stream

    def _in_place(self):
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:       # a closed stream
            return False

    def elapsed(self):
        """Seconds since the start."""
        return time.perf_counter() - self.start

    def due(self):
        """Whether ``interval`` has passed since the last line."""
        return time.perf_counter() - self._last >= self.interval

    def show(self, text, force=False):
        """Show ``text`` now if ``interval`` has passed since the last line (or ``force``)."""
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        stream = self.stream
        if self._in_place():
            stream.write("\r" + text + " " * max(0, self._width - len(text)))
            self._width = len(text)
        else:
            stream.write(text + "\n")
        stream.flush()

    def clear(self):
        """Erase the line being rewritten (before other output)."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def import_optional(module, extra):
    """Import ``module``, or raise an ImportError naming ``bcd[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise ImportError(
            f"{top!r} is required here but is not installed; install it with "
            f"pip install 'bcd[{extra}]'.") from exc
