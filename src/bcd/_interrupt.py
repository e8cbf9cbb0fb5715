"""A Ctrl-C that is not lost where its exception is swallowed.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be
when it runs the SIGINT handler.  If that is inside a garbage-collection
callback (Dask's distributed installs one, and so may any library), the
exception is reported as "ignored" and the interrupt is gone: a solve that
was interrupted in its Python part would then run to its end.

While :func:`recording` is active in the main thread, the SIGINT handler in
effect is wrapped so that each Ctrl-C it turns into ``KeyboardInterrupt``
(Python's default handler does) is also recorded.  The compiled loops
take the record at their signal checks (:func:`take`, through
``bcd.core._clock.interrupted``) and stop as for any Ctrl-C.  A record that
no loop took, and that the call did not report as its "interrupted" status,
raises ``KeyboardInterrupt`` when the outermost :func:`recording` ends.
Only the outermost call installs the wrapper, so composite calls (paths,
cross-validation) and the solves they run share one record.
"""
import contextlib
import functools
import signal
import threading

_active = False         # a recording is in progress in the main thread
_pending = False        # a Ctrl-C was recorded and no loop has taken it


def take():
    """True, once, if a Ctrl-C was recorded in the main thread and not
    taken since; False in other threads (signals reach the main thread
    only, and a solve in another thread must not take its Ctrl-C).

    Examples
    --------
    >>> from bcd import _interrupt
    >>> _interrupt.take()
    False
    """
    global _pending
    if not _pending or threading.current_thread() is not threading.main_thread():
        return False
    _pending = False
    return True


@contextlib.contextmanager
def recording():
    """Record every Ctrl-C for the duration (see the module's docstring).

    A no-op outside the main thread, inside another recording, and where the
    SIGINT handler is not a Python callable (ignored, or the default action).

    Examples
    --------
    >>> from bcd import _interrupt
    >>> with _interrupt.recording():
    ...     pass
    """
    global _active, _pending
    if _active or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield
        return

    def handler(signum, frame):
        # recorded only when the handler in effect raises KeyboardInterrupt:
        # one that lets the program go on is obeyed as before
        global _pending
        try:
            previous(signum, frame)
        except KeyboardInterrupt:
            _pending = True
            raise

    signal.signal(signal.SIGINT, handler)
    _active = True
    _pending = False
    try:
        yield
    except KeyboardInterrupt:
        _pending = False        # this interrupt arrived as an exception
        raise
    finally:
        _active = False
        signal.signal(signal.SIGINT, previous)
    if _pending:
        # raised where it was swallowed, and not taken by a loop
        _pending = False
        raise KeyboardInterrupt


def records(fn):
    """Decorate ``fn`` to run inside :func:`recording`.  A result whose
    ``status`` is "interrupted" reports the Ctrl-C: the record is then
    cleared (the KeyboardInterrupt was caught and turned into that status
    where it arose, or a loop took the record)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        global _pending
        with recording():
            result = fn(*args, **kwargs)
            if getattr(result, "status", None) == "interrupted":
                _pending = False
            return result
    return wrapper
