"""Every sandbox insurer, one module each: `sandbox/insurers/<code>.py`.

Importing this package imports every module here; each registers its class with
`sandbox.registry.register`. A new insurer is a new module, nothing listed by hand.
"""

from __future__ import annotations

import importlib
import pkgutil

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda module: module.name):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
