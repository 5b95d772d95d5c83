"""Demo and test data: the registered insurers and two sample agencies with accounts there.

The platform never imports the sandbox (it is not shipped): where the insurers listen and which
credentials they gave the sample agencies come in as data, the way an insurer hands an agency
its credentials. The demo reads them from the sandbox's manifest (``python -m sandbox
--demo-manifest``, parsed by :func:`demo_manifest_parse`); tests and benchmarks, which may use
the sandbox, pass its ``DEFAULT_ACCOUNTS`` and their servers' URLs straight in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from agencies.models import Agency
from integrations.adapters.registry import adapter_class, registered_codes
from integrations.models import Insurer, InsurerAccount

SAMPLE_AGENCIES = (("ACENTE1", "Boğaz Sigorta Aracılık"), ("ACENTE2", "Anadolu Güven Acentesi"))


@dataclass(frozen=True)
class DemoInsurers:
    """Each insurer's URL and the sample accounts it issued, as read from a manifest."""

    base_urls: dict[str, str]
    accounts: dict[str, list[dict[str, Any]]]


def demo_manifest_parse(text: str) -> DemoInsurers:
    """``{"insurers": {code: {"base_url": ..., "accounts": [{"agency_code", "credentials"}]}}}``.

    A ``ValueError`` names the first thing wrong, so a hand-edited manifest is fixed in one go.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as problem:
        raise ValueError(f"the manifest is not JSON: {problem}") from None
    insurers = document.get("insurers") if isinstance(document, dict) else None
    if not isinstance(insurers, dict) or not insurers:
        raise ValueError("the manifest needs an object 'insurers' of insurer code -> {base_url, accounts}")
    base_urls: dict[str, str] = {}
    accounts: dict[str, list[dict[str, Any]]] = {}
    for code, entry in insurers.items():
        where = f"insurers.{code}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be an object")
        url = entry.get("base_url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"{where}.base_url must be an http(s) URL")
        listed = entry.get("accounts")
        if not isinstance(listed, list):
            raise ValueError(f"{where}.accounts must be a list")
        for index, account in enumerate(listed):
            if (
                not isinstance(account, dict)
                or not isinstance(account.get("agency_code"), str)
                or not isinstance(account.get("credentials"), dict)
            ):
                raise ValueError(f"{where}.accounts[{index}] needs agency_code (text) and credentials (object)")
        base_urls[code], accounts[code] = url, listed
    return DemoInsurers(base_urls=base_urls, accounts=accounts)


@transaction.atomic
def demo_data_seed(
    *,
    base_urls: Mapping[str, str],
    accounts: Mapping[str, Sequence[Mapping[str, Any]]],
    contracted_rate: float = 20.0,
) -> list[InsurerAccount]:
    """Create or update every registered insurer and the sample agencies' accounts; safe to run again.

    ``accounts[code]`` lists what the insurer issued (``{"agency_code", "credentials"}``), the
    n-th for the n-th sample agency. An insurer with an adapter but no URL is an error rather
    than a silently missing row.
    """
    missing = [code for code in registered_codes() if code not in base_urls]
    if missing:
        raise ValueError(f"no base URL for insurers {missing}")
    seeded: list[InsurerAccount] = []
    for code in registered_codes():
        cls = adapter_class(code)
        insurer, _ = Insurer.objects.update_or_create(
            code=code,
            defaults={"name": cls.name, "base_url": base_urls[code], "is_active": True, "products": list(cls.products)},
        )
        for (agency_code, agency_name), sample in zip(SAMPLE_AGENCIES, accounts.get(code, ()), strict=False):
            agency, _ = Agency.objects.get_or_create(code=agency_code, defaults={"name": agency_name})
            account, _ = InsurerAccount.objects.get_or_create(
                agency=agency, insurer=insurer, defaults={"agency_code": sample["agency_code"]}
            )
            account.agency_code = sample["agency_code"]
            account.contracted_rate = contracted_rate
            account.set_credentials(dict(sample["credentials"]))
            account.save()
            seeded.append(account)
    return seeded
