"""Every insurer the platform ships, one package each: `integrations/insurers/<code>/`.

A package holds the insurer's adapter (`adapter.py`, registered with
`integrations.adapters.registry`) and its answer samples (`answer_samples.py`: one valid answer
per kind in the insurer's own words, which the adapter fuzz breaks). Importing this package
imports every `<code>.adapter` found here, so adding an insurer is adding its package (and its
sandbox package, `sandbox/insurers/<code>/`): no list of insurers is kept anywhere.
"""

from __future__ import annotations

import importlib
import pkgutil


def _register_every_insurer() -> list[str]:
    found = []
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda module: module.name):
        if module.ispkg and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}.adapter")
            found.append(module.name)
    return found


SHIPPED_PACKAGES = _register_every_insurer()
"""The insurer packages found here (their names are the insurer codes)."""
