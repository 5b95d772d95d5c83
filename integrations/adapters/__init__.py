"""The common interface of insurer adapters (`base`) and their registry (`registry`).

Importing this package registers every shipped adapter: each insurer is a package of its own
under `integrations/insurers/`, found there, never listed here.
"""

import integrations.insurers  # noqa: F401  (registers every insurer's adapter)
from integrations.adapters.registry import adapter_class, registered_codes  # noqa: F401
