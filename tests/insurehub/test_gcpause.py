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
