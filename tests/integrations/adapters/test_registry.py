"""The adapter registry: every adapter states how its issuance is kept safe."""

from __future__ import annotations

import pytest

from integrations.adapters.base import InsurerAdapter
from integrations.adapters.registry import adapter_class, register, registered_codes


def test_every_registered_adapter_states_its_issuance_safety():
    for code in registered_codes():
        cls = adapter_class(code)
        assert isinstance(cls.issuance_deduplicated, bool), code
        assert "find_issued_policy" not in getattr(cls, "__abstractmethods__", ()), code


def test_an_adapter_that_does_not_say_whether_it_deduplicates_is_refused():
    silent = type("SilentAdapter", (InsurerAdapter,), {"code": "silent", "name": "Sessiz Sigorta"})
    with pytest.raises(TypeError, match="issuance_deduplicated"):
        register(silent)
    assert "silent" not in registered_codes()
