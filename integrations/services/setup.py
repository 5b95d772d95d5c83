"""Demo and test data: the four sandbox insurers and two sample agencies with accounts there."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction

from agencies.models import Agency
from integrations.adapters.registry import adapter_class, registered_codes
from integrations.models import Insurer, InsurerAccount

SAMPLE_AGENCIES = (("ACENTE1", "Boğaz Sigorta Aracılık"), ("ACENTE2", "Anadolu Güven Acentesi"))
SANDBOX_BASE_PORT = 8101


def sandbox_base_urls(host: str = "127.0.0.1", base_port: int = SANDBOX_BASE_PORT) -> dict[str, str]:
    from sandbox import INSURER_CODES

    return {code: f"http://{host}:{base_port + i}" for i, code in enumerate(INSURER_CODES)}


@transaction.atomic
def demo_data_seed(*, base_urls: Mapping[str, str], contracted_rate: float = 20.0) -> list[InsurerAccount]:
    """Create or update insurers and the sample agencies' accounts; safe to run again."""
    from sandbox import DEFAULT_ACCOUNTS

    accounts: list[InsurerAccount] = []
    for code in registered_codes():
        cls = adapter_class(code)
        insurer, _ = Insurer.objects.update_or_create(
            code=code,
            defaults={"name": cls.name, "base_url": base_urls[code], "is_active": True, "products": list(cls.products)},
        )
        for (agency_code, agency_name), sample in zip(SAMPLE_AGENCIES, DEFAULT_ACCOUNTS[code], strict=False):
            agency, _ = Agency.objects.get_or_create(code=agency_code, defaults={"name": agency_name})
            account, _ = InsurerAccount.objects.get_or_create(
                agency=agency, insurer=insurer, defaults={"agency_code": sample["agency_code"]}
            )
            account.agency_code = sample["agency_code"]
            account.contracted_rate = contracted_rate
            account.set_credentials(sample["credentials"])
            account.save()
            accounts.append(account)
    return accounts
