"""Every sandbox insurer, one package each: `sandbox/insurers/<code>/`.

Importing this package imports every package here; each registers its class with
`sandbox.registry.register` (its `wire` module, the hand-written clients, is imported only by
whoever drives it: `sandbox.hand_wire.wire_module`). A new insurer is a new package, nothing
listed by hand.
"""

from __future__ import annotations

import importlib
import pkgutil

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda module: module.name):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
