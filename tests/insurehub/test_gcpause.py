"""The drain's heap freeze: frozen while any holder is inside, given back when the last leaves."""

from __future__ import annotations

import gc

from insurehub.gcpause import heap_frozen


def test_the_heap_is_frozen_inside_and_given_back_after_the_last_holder():
    assert gc.get_freeze_count() == 0
    with heap_frozen():
        frozen = gc.get_freeze_count()
        assert frozen > 1000  # the imports and Django: out of every collection's walk
        # Frozen objects that die meanwhile (other threads run) leave the count: it only shrinks.
        with heap_frozen():  # a second drain in the same process shares the freeze: nothing more frozen
            assert gc.get_freeze_count() <= frozen
        assert 1000 < gc.get_freeze_count() <= frozen  # still frozen after the inner block
    assert gc.get_freeze_count() == 0  # nothing frozen for good: what dies later is collected


def test_an_error_inside_still_unfreezes():
    try:
        with heap_frozen():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.get_freeze_count() == 0


SERVER = """
import gc
import insurehub.wsgi  # what gunicorn and runserver load
from insurehub.gcpause import heap_frozen
frozen = gc.get_freeze_count()
with heap_frozen():  # a drain run in a server process
    pass
print(frozen, gc.get_freeze_count())
"""


def test_a_server_freezes_its_startup_heap_for_good_and_a_drain_leaves_it_in_place():
    """`insurehub.wsgi` leaves Django and the project out of every collection of a web process,
    and a block (a drain run there) does not give it back. In a process of its own: frozen for
    good, it would stay so for the rest of the test session."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "insurehub.settings.test"}
    out = subprocess.run(
        [sys.executable, "-c", SERVER], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    at_start, after_block = map(int, out.stdout.split()[-2:])
    assert at_start > 10_000
    assert after_block > at_start // 2  # still frozen (some frozen objects die meanwhile)
