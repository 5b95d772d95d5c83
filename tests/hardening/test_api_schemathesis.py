"""schemathesis against the API's own OpenAPI document, served by `/api/schema/`.

Every operation gets schema-valid (positive) and schema-breaking (negative) requests, sent
through the real WSGI application with an agent's token, over a database that holds both
agencies' objects. Whatever is sent: no 5xx, and every answer is one the schema documents —
status, content type, headers and body.
"""

from __future__ import annotations

import json
import re

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import api_as
from tests.hardening.test_isolation_matrix import agency_objects

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def _operation_labels() -> list[str]:
    """Every operation of the schema, known at collection time (generating it needs no database)."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    )


OPERATIONS = _operation_labels()


@pytest.fixture
def wsgi_app():
    """The project's WSGI application, without closing the database connection after each request.

    Django's own test client does the same: the test's transaction lives on that connection.
    """
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield get_wsgi_application()
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api(agents):
    """The served schema, loaded into schemathesis, and an agent's token; both agencies hold objects."""
    for user in agents.values():
        agency_objects(user)
    client = api_as(agents["ACENTE1"])
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = schemathesis.openapi.from_dict(json.loads(response.content))
    operations = {result.ok().label: result.ok() for result in schema.get_all_operations()}
    token = Token.objects.create(user=agents["ACENTE1"]).key
    return operations, {"Authorization": f"Token {token}"}


def test_every_served_operation_is_fuzzed(agents):
    """The operations fuzzed here are exactly the ones `/api/schema/` serves."""
    client = api_as(agents["ACENTE1"])
    served = json.loads(client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").content)
    labels = {f"{m.upper()} {p}" for p, item in served["paths"].items() for m in item if m != "parameters"}
    assert labels == set(OPERATIONS)


@pytest.mark.django_db
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("label", OPERATIONS)
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_api_answers_what_its_schema_says(api, wsgi_app, label, mode, data):
    """Positive and negative requests to every operation: no 5xx, every answer as documented."""
    operations, headers = api
    case = data.draw(operations[label].as_strategy(generation_mode=mode), label="case")
    response = case.call_and_validate(app=wsgi_app, headers=headers, checks=CHECKS)
    if mode is GenerationMode.NEGATIVE and not lenient_paging(case, response.status_code):
        case.validate_response(response, checks=[negative_data_rejection], headers=headers)


def lenient_paging(case, status_code: int) -> bool:
    """A junk `limit`/`offset` is read as DRF's default page, on purpose (tests/quotes/api asserts the 200).

    So a schema-breaking list request answered 200 is not a failure when a paging value is what
    broke it. Every other schema-breaking value must be refused with a 4xx.
    """
    if status_code != 200:
        return False
    for name in ("limit", "offset"):
        value = (case.query or {}).get(name)
        if value is not None and not re.fullmatch(r"-?[0-9]+", str(value)):
            return True
    return False
