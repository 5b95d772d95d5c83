"""The operator probe shows what a kasko quote priced: the options it carried, as covers."""

from __future__ import annotations

import json

import pytest

from integrations.adapters.registry import registered_codes
from tests import samples

from .test_insurer_call import creds, probe

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("code", registered_codes())
def test_probe_kasko_quote_shows_the_priced_options(sandbox, code):
    """`insurer_call <insurer> kasko_quote --data '{..., "deductible": 5000}'` lists the deductible
    (and the İMM limit asked for) among the quote's covers, in the platform's vocabulary."""
    data = {**samples.KASKO, "deductible": 5000, "liability_limit": 1000000}
    status, report = probe(
        code,
        "kasko_quote",
        "--base-url",
        sandbox[code].base_url,
        "--data",
        json.dumps(data),
        "--credentials",
        creds(code),
    )
    assert status == 0 and report["status"] == "ok", report
    covers = {cover["code"]: cover for cover in report["result"]["details"]["coverages"]}
    assert covers["deductible"] == {"code": "deductible", "name": "Muafiyet", "limit": "5000.00"}
    assert covers["liability"]["limit"] == "1000000.00"


def test_probe_shows_an_unsold_option_as_a_permanent_validation_failure(sandbox):
    """Boğaziçi sells no 10 000 TRY deductible: failed, permanent, validation, its BS-100, exit 1."""
    status, report = probe(
        "bogazici",
        "kasko_quote",
        "--base-url",
        sandbox["bogazici"].base_url,
        "--data",
        json.dumps({**samples.KASKO, "deductible": 10000}),
        "--credentials",
        creds("bogazici"),
    )
    assert status == 1
    assert (report["error_class"], report["error_kind"], report["provider_code"]) == (
        "permanent",
        "validation",
        "BS-100",
    )
