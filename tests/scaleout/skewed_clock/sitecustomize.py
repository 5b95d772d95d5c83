"""A wall clock off by INSUREHUB_TEST_CLOCK_SKEW_SECONDS, for one worker process of the chaos suite.

Put this directory first on PYTHONPATH and Python imports it at start-up, before Django or
django-q2: `time.time()`, `time.time_ns()` and `datetime.now()` / `utcnow()` / `today()` are then
off by the skew, as on a machine whose clock drifted; monotonic clocks stay right. (libfaketime,
the usual tool, breaks `time.sleep` under Python 3.11: its `clock_nanosleep` fails with EINVAL.)
Worker processes forked by the qcluster inherit it.
"""

import datetime as _datetime
import os
import time as _time

_SKEW = float(os.environ.get("INSUREHUB_TEST_CLOCK_SKEW_SECONDS", "0") or 0)

if _SKEW:
    _real_time, _real_time_ns = _time.time, _time.time_ns
    _delta = _datetime.timedelta(seconds=_SKEW)
    _real_datetime = _datetime.datetime

    def _skewed_time() -> float:
        return _real_time() + _SKEW

    def _skewed_time_ns() -> int:
        return _real_time_ns() + int(_SKEW * 1_000_000_000)

    class _SkewedDatetime(_real_datetime):
        @classmethod
        def now(cls, tz=None):
            return _real_datetime.now(tz) + _delta

        @classmethod
        def utcnow(cls):
            return _real_datetime.utcnow() + _delta

        @classmethod
        def today(cls):
            return _real_datetime.today() + _delta

    _SkewedDatetime.__name__ = _SkewedDatetime.__qualname__ = "datetime"
    _SkewedDatetime.__module__ = "datetime"
    _time.time, _time.time_ns = _skewed_time, _skewed_time_ns
    # Replacing the class is the point here; the stubs know datetime.datetime as the class itself.
    _datetime.datetime = _SkewedDatetime  # type: ignore[misc]
    # pickle names a class by where it is found: `datetime.datetime` is now the subclass, so a
    # real datetime (made by C code: the database driver, arithmetic) would no longer pickle
    # ("not the same object as datetime.datetime") and every django-q2 task this process sends
    # would fail. Pickled as the subclass, it unpickles as a plain datetime anywhere else.
    import copyreg

    def _reduce_as_skewed(value: _real_datetime) -> tuple[type[_real_datetime], tuple[object, ...]]:
        reduced = value.__reduce__()
        assert isinstance(reduced, tuple)  # a datetime reduces to (its class, its state), never a name
        return _SkewedDatetime, reduced[1]

    copyreg.pickle(_real_datetime, _reduce_as_skewed)


def _run_the_next_sitecustomize() -> None:
    """Python imports one `sitecustomize`: this one shadows any later on PYTHONPATH (the test-only
    insurer registers itself from one), so run the next one found after this directory."""
    import importlib.util
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    seen_here = False
    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        if folder == here:
            seen_here = True
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if seen_here and os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_next_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


_run_the_next_sitecustomize()
