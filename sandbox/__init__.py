"""Sandbox insurer servers: the insurers' "test environments" on loopback.

Standard library only (plus ``defusedxml`` for reading SOAP). See ``sandbox/README.md``.
Importing this package registers every sandbox insurer (``sandbox.registry``): a new insurer
is one module in ``sandbox/insurers/``, decorated with ``@register``, found there by itself.
"""

from . import insurers  # noqa: F401  (registers every module in sandbox/insurers/)
from .core import DEFAULT_CONFIG, SandboxState
from .domain import building_id_for
from .registry import DEFAULT_ACCOUNTS, insurer_class, realistic_config, register, registered_codes
from .server import DEFAULT_BASE_PORT, SandboxServer, demo_manifest, fixed_port_urls, start_all, start_sandbox

__all__ = [
    "DEFAULT_ACCOUNTS",
    "DEFAULT_BASE_PORT",
    "DEFAULT_CONFIG",
    "SandboxServer",
    "SandboxState",
    "building_id_for",
    "demo_manifest",
    "fixed_port_urls",
    "insurer_class",
    "realistic_config",
    "register",
    "registered_codes",
    "start_all",
    "start_sandbox",
]
