"""Sandbox insurer servers: the four insurers' "test environments" on loopback.

Standard library only (plus ``defusedxml`` for reading SOAP). See ``sandbox/README.md``.
"""

from .core import DEFAULT_ACCOUNTS, DEFAULT_CONFIG, INSURER_CODES, SandboxState, realistic_config
from .domain import building_id_for
from .server import SandboxServer, start_all, start_sandbox

__all__ = [
    "DEFAULT_ACCOUNTS",
    "DEFAULT_CONFIG",
    "INSURER_CODES",
    "SandboxServer",
    "SandboxState",
    "building_id_for",
    "realistic_config",
    "start_all",
    "start_sandbox",
]
