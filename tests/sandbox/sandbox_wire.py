"""Inputs and the wire clients for the sandbox's own tests.

The clients are each insurer's `CLIENT`, written by hand from the contract beside its sandbox
(`sandbox/insurers/<code>/wire.py`, see `sandbox/hand_wire.py`), not from the sandbox's code,
so the tests read as "send this on the wire, expect that back". `CLIENTS` holds one for every
registered insurer, the test-only fifth included.
"""

from __future__ import annotations

from sandbox.hand_wire import DASK_BASE, KASKO, OTHER_TCKN, TCKN, TRAFIK, UAVT, VKN, YEAR, by_code, dask
from sandbox.insurers.anka.wire import AnkaClient
from sandbox.insurers.bogazici.wire import BogaziciClient
from sandbox.insurers.cinar.wire import CinarClient, cinar_body
from sandbox.insurers.deniz.wire import DenizClient

__all__ = [
    "CLIENTS",
    "DASK_BASE",
    "KASKO",
    "OTHER_TCKN",
    "TCKN",
    "TRAFIK",
    "UAVT",
    "VKN",
    "YEAR",
    "AnkaClient",
    "BogaziciClient",
    "CinarClient",
    "DenizClient",
    "cinar_body",
    "dask",
]

CLIENTS = by_code("CLIENT")
