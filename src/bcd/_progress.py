"""Progress output for long runs: plain lines, or one self-updating line on a terminal.

The compiled loop runs without the GIL; it calls a :class:`Progress` only
at its stopping tests, and only when ``interval`` seconds have passed
since its last report, so printing costs nothing per iteration.
"""
import sys
import time

#: seconds between two progress reports
INTERVAL = 1.0
VERBOSE_LEVELS = (0, 1, 2)


def check_verbose(verbose):
    """Validate ``verbose`` (False/True or 0, 1, 2) and return it as an int."""
    if isinstance(verbose, bool) or (isinstance(verbose, int) and verbose in VERBOSE_LEVELS):
        return int(verbose)
    import numpy as np
    if isinstance(verbose, (np.bool_, np.integer)) and int(verbose) in VERBOSE_LEVELS:
        return int(verbose)
    raise ValueError(f"verbose must be False, True (or 1: a line per stopping test, at most "
                     f"about one a second) or 2 (one self-updating line on a terminal); "
                     f"got {verbose!r}.")


class Progress:
    """Report progress at most every ``interval`` seconds.

    Parameters
    ----------
    level : {1, 2}
        1: a plain line per report.  2: one line rewritten in place when
        ``stream`` is a terminal, plain lines otherwise (a log file keeps
        every report).
    stream : file-like, optional
        Default ``sys.stdout`` (looked up when printing).
    interval : float, default=1.0
        Least seconds between two reports (the final one is always shown).
    """

    def __init__(self, level=1, stream=None, interval=INTERVAL):
        self.level = check_verbose(level)
        self._stream = stream
        self.interval = interval
        self.start = time.perf_counter()
        self._last = self.start
        self._width = 0          # length of the line being rewritten, if any

    @property
    def stream(self):
        """The output: ``sys.stdout`` as it is now, or a stream that discards
        everything when there is none (``sys.stdout`` is None in a
        windowless application, or after the user set it so)."""
        stream = sys.stdout if self._stream is None else self._stream
        return _DISCARD if stream is None else stream

    def _write(self, text):
        # a report that cannot be written (no stream, a closed one, a broken
        # pipe) never stops a solve
        stream = self.stream
        try:
            stream.write(text)
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass

    @property
    def in_place(self):
        """Whether reports rewrite one line (level 2 on a terminal)."""
        if self.level < 2:
            return False
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:       # a closed stream
            return False

    def elapsed(self):
        return time.perf_counter() - self.start

    def due(self):
        """Whether ``interval`` has passed since the last report."""
        return time.perf_counter() - self._last >= self.interval

    def show(self, text, force=False):
        """Show ``text`` now if a report is due (or ``force``)."""
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        if self.in_place:
            pad = max(0, self._width - len(text))
            self._write("\r" + text + " " * pad)
            self._width = len(text)
        else:
            self._write(text + "\n")

    def end(self, text=None):
        """Show a final ``text`` (always) and end the line being rewritten."""
        if text is not None:
            self.show(text, force=True)
        if self._width:
            self._write("\n")
            self._width = 0

    def clear(self):
        """Erase the line being rewritten (before other output)."""
        if self._width:
            self._write("\r" + " " * self._width + "\r")
            self._width = 0

    # -- the solver's reports ---------------------------------------------
    def __call__(self, iteration, objective, optimality, _loop_time=None):
        """A stopping test: iteration, objective and optimality (the compiled
        loop passes its own clock too; the time shown is the solve's)."""
        self.show(self.format(iteration, objective, optimality))

    def format(self, iteration, objective, optimality, status=None):
        text = (f"iter {iteration:>9d}  objective {objective:.10e}  optimality "
                f"{optimality:.3e}  time {self.elapsed():.1f}s")
        return text if status is None else f"{text}  {status}"


class _Discard:
    """A text stream that discards what is written to it."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


_DISCARD = _Discard()


def make_progress(verbose, stream=None):
    """A :class:`Progress` for ``verbose`` (None when it is off)."""
    level = check_verbose(verbose)
    return Progress(level, stream) if level else None
