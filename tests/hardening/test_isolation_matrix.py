"""Agency isolation as a matrix: every object type × read, list, issue, replay, over the web desk and the API.

Both agencies hold the same kinds of objects for the same customer (same plate, same TCKN), so
a leak cannot hide behind different data. Each cell runs in both directions (ACENTE1 looking at
ACENTE2's objects and the other way round) and checks two things: the other agency's object is
refused exactly like one that does not exist (never told apart), and the agent's own object
works through the same door (so the refusal is scoping, not a broken page).

| object        | read                    | list                        | issue / change           | replay            |
|---------------|-------------------------|-----------------------------|--------------------------|-------------------|
| quote request | web detail+results, API | web list+search, API+search | —                        | —                 |
| comparison    | web page and PDF        | —                           | —                        | —                 |
| insurer quote | web confirm page, API   | request rows, web and API   | web POST, API            | —                 |
| issuance      | web detail+status, API  | on the request pages (web)  | —                        | admin, API        |
| policy        | web page+warning, API   | web list+search+export, API | —                        | sync admin        |
| renewal       | —                       | web list (30/60 d), API     | web re-quote POST        | —                 |
| document      | web download+state, API | —                           | —                        | re-fetch web, API |
| customer      | web page+edit page, API | web list+search, API+search | web+API edit, quote form | —                 |
| notification  | web open (marks read)   | web list                    | —                        | —                 |
| consent       | on the customer page    | on the customer page        | web record               | —                 |
| offer         | web PDF                 | sent messages (web)         | web send                 | —                 |

Pages are compared byte for byte but for the CSRF token of the header's logout form (masked
afresh on every render). A notification is its recipient's alone: opening one that is not
yours (another agency's, or a colleague's) goes back to the list like an unknown id, marking
nothing. Everything is shared by the same customer (`Müşteri <agency code>`, the same TCKN), and
each agency's policy ends within the renewal window with a stored PDF.

Replay is staff work (admin actions, `replay_dead_letters`): agents of either agency are refused
for their own records as for the other's, and the API has no replay operation at all.

Every cell runs again inside one agency with sub-agencies (tali acente, `agencies.scope`): a
sub-agency A1 user against sub-agency A2's objects and against the agency's own (HQ), and the
other way round; the agency's own staff reach every sub-agency's objects, reading and acting;
what a sub-agency user creates is credited to their sub-agency; the commission agreements stay
the manager's.

The desk cells run again for a staff login and for an agency admin (both scoped like an agent);
reading across agencies takes `quotes.view_all_agencies` and still issues nothing; the agency
admin's agents page reaches only that agency's plain agents.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import StreamingHttpResponse
from django.test import Client
from django.utils import timezone
from openpyxl import load_workbook
from rest_framework.test import APIClient

from customers.models import Customer
from documents.models import PolicyDocument
from integrations.models import InsurerAccount
from notifications.models import Notification
from policies.models import Policy
from quotes.models import InsurerQuote, Issuance, QuoteRequest
from sync.models import SyncItem, SyncRun
from tests import samples
from tests.conftest import api_as
from work.item import WorkState

pytestmark = pytest.mark.django_db

UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000"
UNKNOWN_PK = 987654321
# The logout form in every page's header carries a CSRF token masked afresh on each render: the
# one byte-for-byte difference between two 404 pages that is not about the object asked for.
_CSRF_RE = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"')
# Each agency's policy ends within the renewal window, so it is on the renewal lists.
ENDS_IN_DAYS = 20


@dataclass
class AgencyObjects:
    """One agency's objects of every type (created directly: no insurer call is needed to own them)."""

    user: User
    request: QuoteRequest  # with `quote`, a successful quote nobody issued yet
    quote: InsurerQuote
    issued_request: QuoteRequest  # issued: its SUBMITTED issuance made `policy`
    failed_issuance: Issuance  # a dead letter, on a third request
    issuance: Issuance
    policy: Policy  # in force, ending within ENDS_IN_DAYS, for `customer`
    sync_item: SyncItem
    document: PolicyDocument  # `policy`'s PDF, fetched and stored
    notification: Notification  # an unread one, for `user`
    customer: Customer  # the customer every request and the policy are for
    label: str  # whose objects: the agency's code, and the sub-agency's when credited to one

    @property
    def requests(self) -> list[QuoteRequest]:
        return [self.request, self.issued_request, self.failed_issuance.quote_request]


def agency_pdf(agency_code: str) -> bytes:
    """A small PDF of the agency's own: a download shows whose file it served."""
    return f"%PDF-1.4\n% policy document of {agency_code}\n%%EOF\n".encode()


def agency_objects(user, identity_no: str = samples.TRAFIK["owner_id"]) -> AgencyObjects:
    """The user's scope's objects: their agency's, credited to their sub-agency if they work for one
    (the customer's identity number is unique per agency, so each scope of one agency has its own)."""
    agency = user.agent_profile.agency
    sub_agency = user.agent_profile.sub_agency
    # A sub-agency's label does not contain its agency's ("A1-ACENTE1"): no name is part of another.
    label = f"{sub_agency.code.upper()}-{agency.code}" if sub_agency else agency.code
    customer = Customer.objects.create(
        agency=agency, sub_agency=sub_agency, name=f"Müşteri {label}", identity_no=identity_no, created_by=user
    )
    accounts = {a.insurer.code: a for a in InsurerAccount.objects.select_related("insurer").filter(agency=agency)}
    now = timezone.now()

    def quote_request() -> QuoteRequest:
        return QuoteRequest.objects.create(
            agency=agency,
            sub_agency=sub_agency,
            created_by=user,
            product="trafik",
            input_data={**samples.TRAFIK, "owner_id": identity_no},
            plate=samples.TRAFIK["plate"],
            owner_id=identity_no,
            deadline_at=now + timedelta(minutes=5),
            customer=customer,
        )

    def quote(request: QuoteRequest, code: str) -> InsurerQuote:
        return InsurerQuote.objects.create(
            request=request,
            insurer=accounts[code].insurer,
            account=accounts[code],
            state=InsurerQuote.State.SUCCEEDED,
            attempt=1,
            quote_no=f"{code[:2].upper()}-T-{label}-{request.pk}",
            premium=Decimal("1234.50"),
            currency="TRY",
            valid_until=now + timedelta(hours=1),
            finished_at=now,
        )

    def issuance(row: InsurerQuote, state: str, suffix: str) -> Issuance:
        return Issuance.objects.create(
            insurer_quote=row,
            quote_request=row.request,
            agency=agency,
            requested_by=user,
            reference=f"IH-{label}-{suffix}",
            state=state,
            payload={"quote_no": row.quote_no, "payment_token": samples.PAYMENT_TOKEN},
            error_class="permanent" if state == WorkState.FAILED else "",
            error_kind="business_reject" if state == WorkState.FAILED else "",
            policy_no=f"PN-{label}-{suffix}" if state == WorkState.SUBMITTED else "",
        )

    open_request = quote_request()
    open_quote = quote(open_request, "anka")
    issued_request = quote_request()
    # A dead letter on a request of its own: replaying it may make it live (one live issuance per request).
    failed = issuance(quote(quote_request(), "anka"), WorkState.FAILED, "F")
    submitted = issuance(quote(issued_request, "cinar"), WorkState.SUBMITTED, "S")
    policy = Policy.objects.create(
        agency=agency,
        insurer=accounts["cinar"].insurer,
        account=accounts["cinar"],
        product="trafik",
        policy_no=submitted.policy_no,
        issuance=submitted,
        plate=samples.TRAFIK["plate"],
        owner_id=identity_no,
        premium=Decimal("1234.50"),
        customer=customer,
        sub_agency=sub_agency,
        sold_by=user,
        starts_on=timezone.localdate() - timedelta(days=365 - ENDS_IN_DAYS),
        ends_on=timezone.localdate() + timedelta(days=ENDS_IN_DAYS),
    )
    sync_item = SyncItem.objects.create(
        run=SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND),
        policy=policy,
        state=WorkState.FAILED,
        payload={"policy_no": policy.policy_no, "insurer": "cinar", "product": "trafik"},
    )
    pdf = agency_pdf(label)
    document = PolicyDocument.objects.create(
        policy=policy,
        agency=agency,
        state=WorkState.SUBMITTED,
        file=default_storage.save(f"policy-documents/isolation/{label}.pdf", ContentFile(pdf)),
        content_type="application/pdf",
        size=len(pdf),
        sha256=hashlib.sha256(pdf).hexdigest(),
        fetched_at=now,
        finished_at=now,
    )
    notification = Notification.objects.create(
        recipient=user,
        agency=agency,
        kind=Notification.Kind.DOCUMENT_READY,
        key=f"isolation-{label}",
        title=f"Poliçe belgesi hazır: {policy.policy_no}",
        link=f"/policeler/{policy.pk}/",
    )
    return AgencyObjects(
        user=user,
        request=open_request,
        quote=open_quote,
        issued_request=issued_request,
        failed_issuance=failed,
        issuance=submitted,
        policy=policy,
        sync_item=sync_item,
        document=document,
        notification=notification,
        customer=customer,
        label=label,
    )


@dataclass
class World:
    objects: dict[str, AgencyObjects]

    def web(self, agency: str) -> Client:
        client = Client()
        client.force_login(self.objects[agency].user)
        return client

    def api(self, agency: str) -> APIClient:
        client = api_as(self.objects[agency].user)
        return client


def _media_in(settings, tmp_path) -> None:
    # The policy PDFs go to this test's own directory, through `default_storage`.
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"}}


@pytest.fixture
def world(agents, settings, tmp_path) -> World:
    _media_in(settings, tmp_path)
    return World({code: agency_objects(user) for code, user in agents.items()})


# Within ACENTE1: the agency's own staff (HQ, credited to no sub-agency) and two sub-agencies'
# users. A TCKN each: a customer's number is unique per agency (the plate is shared).
SUB_AGENCY_IDENTITIES = {"HQ": samples.TRAFIK["owner_id"], "A1": "12345678950", "A2": "17291716060"}


@pytest.fixture
def sub_world(agents, settings, tmp_path) -> World:
    """ACENTE1's staff agent (HQ) and one user of each of its sub-agencies A1 and A2, each with
    objects of every type credited to their own scope."""
    from django.contrib.auth import get_user_model

    from agencies.models import AgentProfile, SubAgency

    _media_in(settings, tmp_path)
    staff = agents["ACENTE1"]
    agency = staff.agent_profile.agency
    users = {"HQ": staff}
    for code in ("A1", "A2"):
        sub_agency = SubAgency.objects.create(agency=agency, code=code.lower(), name=f"Tali {code}")
        user = get_user_model().objects.create_user(f"tali-{code.lower()}", password="test-pass-123")
        AgentProfile.objects.create(user=user, agency=agency, sub_agency=sub_agency)
        users[code] = user
    return World({code: agency_objects(user, SUB_AGENCY_IDENTITIES[code]) for code, user in users.items()})


def assert_hidden(client, path: str, unknown_path: str, method: str = "get", status: int = 404, **kwargs) -> None:
    """Another agency's object answers exactly like one that does not exist (`status`, same body,
    same redirect), apart from the per-render CSRF token of the page's logout form."""
    response = getattr(client, method)(path, **kwargs)
    unknown = getattr(client, method)(unknown_path, **kwargs)
    assert response.status_code == status, (path, response.status_code)
    assert response.status_code == unknown.status_code, path
    assert response.get("Location") == unknown.get("Location"), path
    assert _CSRF_RE.sub(b"", response.content) == _CSRF_RE.sub(b"", unknown.content), path


def assert_shown(client, path: str, *expected: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    text = response.content.decode()
    for fragment in expected:
        assert fragment in text, (path, fragment)
    return text


# --- the cells ------------------------------------------------------------------------------------


def quote_request_read_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    for suffix in ("", "sonuclar/", "yeniden/"):
        assert_shown(client, f"/talepler/{own.request.public_id}/{suffix}")
        assert_hidden(client, f"/talepler/{other.request.public_id}/{suffix}", f"/talepler/{UNKNOWN_UUID}/{suffix}")


def quote_request_read_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    assert_shown(client, f"/api/quote-requests/{own.request.public_id}/", str(own.request.public_id))
    assert_hidden(client, f"/api/quote-requests/{other.request.public_id}/", f"/api/quote-requests/{UNKNOWN_UUID}/")


def quote_request_list_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    for term in ("", samples.TRAFIK["plate"], own.customer.identity_no):
        # The desk search is a POST that redirects to a token URL (the term never sits in a URL).
        path = client.post("/talepler/ara/", {"q": term})["Location"] if term else "/talepler/"
        text = assert_shown(client, path, str(own.request.public_id))
        assert str(other.request.public_id) not in text and str(other.issued_request.public_id) not in text


def quote_request_list_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    for query in ("", f"?search={samples.TRAFIK['plate']}"):
        body = json.loads(assert_shown(client, f"/api/quote-requests/{query}"))
        ids = {item["id"] for item in body["results"]}
        assert ids == {str(r.public_id) for r in own.requests}
        assert str(other.request.public_id) not in ids and body["count"] == 3
    # An identity number is searched by POST, the term in the body (never in a URL).
    body = client.post("/api/quote-requests/search/", {"search": own.customer.identity_no}, format="json").json()
    ids = {item["id"] for item in body["results"]}
    assert ids == {str(r.public_id) for r in own.requests}


def insurer_quote_read_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    assert_shown(client, f"/teklifler/{own.quote.pk}/policelestir/", own.quote.quote_no)
    assert_hidden(client, f"/teklifler/{other.quote.pk}/policelestir/", f"/teklifler/{UNKNOWN_PK}/policelestir/")


def insurer_quote_read_api(w: World, viewer: str, owner: str) -> None:
    """The API shows quote rows only inside their request: the other's request is hidden, rows and all."""
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    body = json.loads(assert_shown(client, f"/api/quote-requests/{own.request.public_id}/"))
    assert [row["id"] for row in body["results"]] == [own.quote.pk]
    assert_hidden(client, f"/api/quote-requests/{other.request.public_id}/", f"/api/quote-requests/{UNKNOWN_UUID}/")


def insurer_quote_list_web(w: World, viewer: str, owner: str) -> None:
    """The viewer's request pages list the viewer's rows only."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    for request in (own.request, own.issued_request):
        for suffix in ("", "sonuclar/"):
            text = assert_shown(client, f"/talepler/{request.public_id}/{suffix}")
            assert other.quote.quote_no not in text and f"/teklifler/{other.quote.pk}/" not in text


def insurer_quote_list_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    other_rows = set(InsurerQuote.objects.filter(request__in=other.requests).values_list("pk", flat=True))
    for request in (own.request, own.issued_request):
        body = json.loads(assert_shown(client, f"/api/quote-requests/{request.public_id}/"))
        assert not {row["id"] for row in body["results"]} & other_rows


def insurer_quote_issue_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    # The world's plate has a trafik policy in force at each agency: the agent chooses to cancel it.
    form = {"payment_token": samples.PAYMENT_TOKEN, "overlap": "cancel_old"}
    assert_hidden(
        client,
        f"/teklifler/{other.quote.pk}/policelestir/",
        f"/teklifler/{UNKNOWN_PK}/policelestir/",
        "post",
        data=form,
    )
    assert not Issuance.objects.filter(insurer_quote=other.quote).exists()
    response = client.post(f"/teklifler/{own.quote.pk}/policelestir/", form)
    assert response.status_code == 302 and Issuance.objects.get(insurer_quote=own.quote).agency == own.request.agency


def insurer_quote_issue_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    body = {"payment_token": samples.PAYMENT_TOKEN, "overlap": "cancel_old"}
    assert_hidden(
        client,
        f"/api/insurer-quotes/{other.quote.pk}/issue/",
        f"/api/insurer-quotes/{UNKNOWN_PK}/issue/",
        "post",
        data=body,
        format="json",
    )
    # Issuing the other's already-issued quotes must not hand back their issuance either.
    for row in (other.failed_issuance.insurer_quote, other.issuance.insurer_quote):
        assert client.post(f"/api/insurer-quotes/{row.pk}/issue/", body, format="json").status_code == 404
    assert not Issuance.objects.filter(insurer_quote=other.quote).exists()
    response = client.post(f"/api/insurer-quotes/{own.quote.pk}/issue/", body, format="json")
    assert response.status_code == 202 and Issuance.objects.get(insurer_quote=own.quote).agency == own.request.agency


def issuance_read_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    for suffix in ("", "durum/"):
        assert_shown(client, f"/policelestirme/{own.issuance.pk}/{suffix}")
        for issuance in (other.issuance, other.failed_issuance):
            assert_hidden(client, f"/policelestirme/{issuance.pk}/{suffix}", f"/policelestirme/{UNKNOWN_PK}/{suffix}")


def issuance_read_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    assert_shown(client, f"/api/issuances/{own.issuance.pk}/", own.issuance.reference)
    for issuance in (other.issuance, other.failed_issuance):
        assert_hidden(client, f"/api/issuances/{issuance.pk}/", f"/api/issuances/{UNKNOWN_PK}/")


def issuance_list_web(w: World, viewer: str, owner: str) -> None:
    """Issuances are listed on their request's page: the viewer's pages never name the other's."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    pages = ["/talepler/", f"/talepler/{own.issued_request.public_id}/", "/policeler/"]
    for page in pages:
        text = assert_shown(client, page)
        for issuance in (other.issuance, other.failed_issuance):
            assert issuance.reference not in text and f"/policelestirme/{issuance.pk}/" not in text


def issuance_replay_admin(w: World, viewer: str, owner: str) -> None:
    """Replay is an admin action: an agent is sent to the admin login, for their own record and the other's."""
    client = w.web(viewer)
    for issuance in (w.objects[viewer].failed_issuance, w.objects[owner].failed_issuance):
        response = client.post(
            "/admin/quotes/issuance/", {"action": "replay_selected", "_selected_action": [issuance.pk]}
        )
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
        assert Issuance.objects.get(pk=issuance.pk).state == WorkState.FAILED


def issuance_replay_api(w: World, viewer: str, owner: str) -> None:
    """The API offers no replay: nothing in the schema, and no write on an issuance moves it."""
    client = w.api(viewer)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert not [path for path in schema["paths"] if "replay" in path.lower()]
    assert set(schema["paths"]["/api/issuances/{issuance_id}/"]) <= {"get", "parameters"}
    for issuance in (w.objects[viewer].failed_issuance, w.objects[owner].failed_issuance):
        for method in ("post", "put", "patch", "delete"):
            response = getattr(client, method)(f"/api/issuances/{issuance.pk}/", {}, format="json")
            assert response.status_code in (404, 405), (method, response.status_code)
        assert Issuance.objects.get(pk=issuance.pk).state == WorkState.FAILED


def policy_list_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    # A plate, a TCKN, part of the customer's name, the policy number's common prefix, a period filter.
    for term in ("", samples.TRAFIK["plate"], own.customer.identity_no, "Müşteri", "PN-"):
        path = client.post("/policeler/ara/", {"q": term})["Location"]
        for filters in ("", "donem=30"):
            page = f"{path}{'&' if '?' in path else '?'}{filters}" if filters else path
            text = assert_shown(client, page, own.policy.policy_no, f"/policeler/{own.policy.pk}/")
            assert other.policy.policy_no not in text and f"/policeler/{other.policy.pk}/" not in text


def policy_list_api(w: World, viewer: str, owner: str) -> None:
    client, own = w.api(viewer), w.objects[viewer]
    body = json.loads(assert_shown(client, "/api/policies/"))
    assert [item["policy_no"] for item in body["results"]] == [own.policy.policy_no] and body["count"] == 1


def policy_replay_admin(w: World, viewer: str, owner: str) -> None:
    """A policy's failed sync is replayed from the admin only: agents are sent to the admin login."""
    client = w.web(viewer)
    for item in (w.objects[viewer].sync_item, w.objects[owner].sync_item):
        response = client.post("/admin/sync/syncitem/", {"action": "replay_selected", "_selected_action": [item.pk]})
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
        assert SyncItem.objects.get(pk=item.pk).state == WorkState.FAILED


def policy_read_web(w: World, viewer: str, owner: str) -> None:
    """The policy page, and the plate warning on a request page: both name the own agency's policy only."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    assert_shown(client, f"/policeler/{own.policy.pk}/", own.policy.policy_no)
    assert_hidden(client, f"/policeler/{other.policy.pk}/", f"/policeler/{UNKNOWN_PK}/")
    # Same plate at both agencies: the open request warns of a policy in force, the agency's own.
    text = assert_shown(client, f"/talepler/{own.request.public_id}/", own.policy.policy_no)
    assert other.policy.policy_no not in text and f"/policeler/{other.policy.pk}/" not in text


def policy_read_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    body = json.loads(assert_shown(client, f"/api/policies/{own.policy.pk}/", own.policy.policy_no))
    assert body["customer"]["id"] == own.customer.pk
    assert_hidden(client, f"/api/policies/{other.policy.pk}/", f"/api/policies/{UNKNOWN_PK}/")


def policy_export_web(w: World, viewer: str, owner: str) -> None:
    """The export is the list as a file: CSV and Excel carry the own agency's policy only."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    response = client.get("/policeler/disari-aktar/?format=csv")
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)  # the CSV is streamed
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")), delimiter=";"))
    cells = {cell for row in rows for cell in row}
    assert own.policy.policy_no in cells and other.policy.policy_no not in cells and len(rows) == 2
    response = client.get("/policeler/disari-aktar/?format=xlsx")
    assert response.status_code == 200
    sheet = load_workbook(io.BytesIO(response.content), read_only=True).active
    assert sheet is not None
    xlsx_cells = {cell for row in sheet.iter_rows(values_only=True) for cell in row}
    assert own.policy.policy_no in xlsx_cells and other.policy.policy_no not in xlsx_cells


def renewal_list_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    for window in ("", "?gun=30", "?gun=60"):
        text = assert_shown(client, f"/yenilemeler/{window}", own.policy.policy_no, f"/yenilemeler/{own.policy.pk}/")
        assert other.policy.policy_no not in text and f"/yenilemeler/{other.policy.pk}/" not in text


def renewal_list_api(w: World, viewer: str, owner: str) -> None:
    client, own = w.api(viewer), w.objects[viewer]
    for window in ("", "?days=30", "?days=60"):
        body = json.loads(assert_shown(client, f"/api/renewals/{window}"))
        assert [item["id"] for item in body["results"]] == [own.policy.pk] and body["count"] == 1


def renewal_quote_web(w: World, viewer: str, owner: str) -> None:
    """Quoting another agency's policy again is refused like an unknown policy, and asks nobody."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    before = QuoteRequest.objects.count()
    assert_hidden(
        client, f"/yenilemeler/{other.policy.pk}/teklif/", f"/yenilemeler/{UNKNOWN_PK}/teklif/", "post", data={}
    )
    assert QuoteRequest.objects.count() == before
    response = client.post(f"/yenilemeler/{own.policy.pk}/teklif/", {})
    assert response.status_code == 302 and QuoteRequest.objects.count() == before + 1
    renewed = QuoteRequest.objects.latest("pk")
    assert response["Location"] == f"/talepler/{renewed.public_id}/"
    assert renewed.agency == own.customer.agency and renewed.customer == own.customer


def renewal_quote_api(w: World, viewer: str, owner: str) -> None:
    """The API's re-quote: another agency's policy is unknown, and nobody is asked."""
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    before = QuoteRequest.objects.count()
    assert_hidden(
        client, f"/api/renewals/{other.policy.pk}/quote/", f"/api/renewals/{UNKNOWN_PK}/quote/", "post", data={}
    )
    assert QuoteRequest.objects.count() == before
    response = client.post(f"/api/renewals/{own.policy.pk}/quote/", {})
    assert response.status_code == 201 and QuoteRequest.objects.count() == before + 1
    renewed = QuoteRequest.objects.latest("pk")
    assert response.json()["id"] == str(renewed.public_id) and renewed.customer == own.customer


def comparison_read_web(w: World, viewer: str, owner: str) -> None:
    """The comparison page and its PDF are the request's: another agency's request is unknown."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    text = assert_shown(client, f"/talepler/{own.request.public_id}/karsilastir/", f"/teklifler/{own.quote.pk}/")
    assert f"/teklifler/{other.quote.pk}/" not in text
    response = client.get(f"/talepler/{own.request.public_id}/karsilastir.pdf")
    assert response.status_code == 200 and response.content.startswith(b"%PDF-")
    for request in (other.request, other.issued_request):
        for suffix in ("karsilastir/", "karsilastir.pdf"):
            assert_hidden(client, f"/talepler/{request.public_id}/{suffix}", f"/talepler/{UNKNOWN_UUID}/{suffix}")


def _downloaded(response) -> bytes:
    assert response.status_code == 200, response.status_code
    return b"".join(response.streaming_content)


def document_read_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    assert _downloaded(client.get(f"/policeler/{own.policy.pk}/belge/")) == agency_pdf(own.label)
    assert_shown(client, f"/policeler/{own.policy.pk}/belge/durum/", f"/policeler/{own.policy.pk}/belge/")
    for suffix in ("belge/", "belge/durum/"):
        assert_hidden(client, f"/policeler/{other.policy.pk}/{suffix}", f"/policeler/{UNKNOWN_PK}/{suffix}")


def document_read_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    response = client.get(f"/api/policies/{own.policy.pk}/document/")
    assert _downloaded(response) == agency_pdf(own.label)
    assert_hidden(client, f"/api/policies/{other.policy.pk}/document/", f"/api/policies/{UNKNOWN_PK}/document/")


def _document_state(document: PolicyDocument) -> tuple:
    document = PolicyDocument.objects.get(pk=document.pk)
    return document.state, document.attempts, document.file.name, document.updated_at


def document_refetch_web(w: World, viewer: str, owner: str) -> None:
    """ "Yeniden al" on another agency's policy is unknown and leaves its record as it was."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    before = _document_state(other.document)
    assert_hidden(
        client, f"/policeler/{other.policy.pk}/belge/yenile/", f"/policeler/{UNKNOWN_PK}/belge/yenile/", "post", data={}
    )
    assert _document_state(other.document) == before
    assert client.post(f"/policeler/{own.policy.pk}/belge/yenile/", {}).status_code == 302
    assert PolicyDocument.objects.get(pk=own.document.pk).state == WorkState.QUEUED


def document_refetch_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    before = _document_state(other.document)
    assert_hidden(
        client,
        f"/api/policies/{other.policy.pk}/document/refetch/",
        f"/api/policies/{UNKNOWN_PK}/document/refetch/",
        "post",
        format="json",
    )
    assert _document_state(other.document) == before
    response = client.post(f"/api/policies/{own.policy.pk}/document/refetch/", format="json")
    assert response.status_code == 202 and PolicyDocument.objects.get(pk=own.document.pk).state == WorkState.QUEUED


def customer_read_web(w: World, viewer: str, owner: str) -> None:
    """The customer page (with the customer's policies) and the edit page; the other's are unknown."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    text = assert_shown(client, f"/musteriler/{own.customer.pk}/", own.customer.name, own.policy.policy_no)
    assert other.policy.policy_no not in text and str(other.request.public_id) not in text
    assert_shown(client, f"/musteriler/{own.customer.pk}/duzenle/", own.customer.name)
    for suffix in ("", "duzenle/"):
        assert_hidden(client, f"/musteriler/{other.customer.pk}/{suffix}", f"/musteriler/{UNKNOWN_PK}/{suffix}")


def customer_read_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    assert json.loads(assert_shown(client, f"/api/customers/{own.customer.pk}/"))["name"] == own.customer.name
    assert_hidden(client, f"/api/customers/{other.customer.pk}/", f"/api/customers/{UNKNOWN_PK}/")


def customer_list_web(w: World, viewer: str, owner: str) -> None:
    """Same TCKN, same name prefix at both agencies: list and search show the own agency's customer only."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    for term in ("", own.customer.identity_no, "Müşteri"):
        # The desk search is a POST that redirects to a token URL (the term never sits in a URL).
        path = client.post("/musteriler/ara/", {"q": term})["Location"]
        text = assert_shown(client, path, own.customer.name, f"/musteriler/{own.customer.pk}/")
        assert other.customer.name not in text and f"/musteriler/{other.customer.pk}/" not in text


def customer_list_api(w: World, viewer: str, owner: str) -> None:
    client, own = w.api(viewer), w.objects[viewer]
    for query in ("", "?search=Müşteri"):
        body = json.loads(assert_shown(client, f"/api/customers/{query}"))
        assert [item["id"] for item in body["results"]] == [own.customer.pk] and body["count"] == 1
    body = client.post("/api/customers/search/", {"search": own.customer.identity_no}, format="json").json()
    assert [item["id"] for item in body["results"]] == [own.customer.pk] and body["count"] == 1


def _customer_form(customer: Customer, name: str) -> dict[str, str]:
    return {"name": name, "identity_no": customer.identity_no, "phone": "", "email": "", "address": ""}


def customer_change_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    assert_hidden(
        client,
        f"/musteriler/{other.customer.pk}/duzenle/",
        f"/musteriler/{UNKNOWN_PK}/duzenle/",
        "post",
        data=_customer_form(other.customer, "Değiştirilmiş Ad"),
    )
    assert Customer.objects.get(pk=other.customer.pk).name == other.customer.name
    response = client.post(f"/musteriler/{own.customer.pk}/duzenle/", _customer_form(own.customer, "Yeni Ad"))
    assert response.status_code == 302 and Customer.objects.get(pk=own.customer.pk).name == "Yeni Ad"


def customer_change_api(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.api(viewer), w.objects[viewer], w.objects[owner]
    body = {"name": "Değiştirilmiş Ad"}
    assert_hidden(
        client,
        f"/api/customers/{other.customer.pk}/",
        f"/api/customers/{UNKNOWN_PK}/",
        "patch",
        data=body,
        format="json",
    )
    assert Customer.objects.get(pk=other.customer.pk).name == other.customer.name
    response = client.patch(f"/api/customers/{own.customer.pk}/", {"name": "Yeni Ad"}, format="json")
    assert response.status_code == 200 and Customer.objects.get(pk=own.customer.pk).name == "Yeni Ad"


def customer_quote_web(w: World, viewer: str, owner: str) -> None:
    """The quote form offers and takes the own agency's customers only: its search box finds the
    own agency's (by name or the shared identity number), never the other's; the other's pk, or
    its name typed without a script, is a field error."""
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    before = QuoteRequest.objects.count()
    page = assert_shown(client, "/teklif/yeni/trafik/", 'data-customer-search="/musteriler/sec/"')
    assert other.customer.name not in page
    for term in ("müşteri", samples.TRAFIK["owner_id"][:4], other.customer.name):
        found = client.post("/musteriler/sec/", {"q": term}).json()["results"]
        assert other.customer.pk not in {item["id"] for item in found}, term
    assert [item["id"] for item in client.post("/musteriler/sec/", {"q": "müşteri"}).json()["results"]] == [
        own.customer.pk
    ]
    # For the viewer's own identity number, so the only thing wrong is the customer typed.
    response = client.post(
        "/teklif/yeni/trafik/",
        {
            **samples.TRAFIK,
            "owner_id": own.customer.identity_no,
            "customer_query": other.customer.name,
        },
    )
    assert response.status_code == 200 and list(response.context["form"].errors) == ["customer"]
    # The customer page's "teklif al" link (?musteri=) preselects nothing for another agency's customer.
    assert_hidden(
        client,
        f"/teklif/yeni/trafik/?musteri={other.customer.pk}",
        f"/teklif/yeni/trafik/?musteri={UNKNOWN_PK}",
        status=200,
    )
    form = {**samples.TRAFIK, "owner_id": own.customer.identity_no}
    response = client.post("/teklif/yeni/trafik/", {**form, "customer": str(other.customer.pk)})
    assert response.status_code == 200 and list(response.context["form"].errors) == ["customer"]
    assert QuoteRequest.objects.count() == before
    response = client.post("/teklif/yeni/trafik/", {**form, "customer": str(own.customer.pk)})
    assert response.status_code == 302 and QuoteRequest.objects.count() == before + 1
    created = QuoteRequest.objects.latest("pk")
    # Credited where the customer is: the viewer's sub-agency, or none for the agency's own.
    assert created.customer == own.customer and created.sub_agency_id == own.customer.sub_agency_id


def notification_read_web(w: World, viewer: str, owner: str) -> None:
    """Opening (and so marking read) someone else's notification does what an unknown one does:
    back to the list, nothing marked. Notifications are per person, so a colleague's is as closed."""
    from django.contrib.auth import get_user_model

    from agencies.models import AgentProfile

    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    colleague = get_user_model().objects.create_user(f"meslektas-{viewer.lower()}", password="test-pass-123")
    AgentProfile.objects.create(user=colleague, agency=own.customer.agency)
    colleagues = Notification.objects.create(
        recipient=colleague,
        agency=own.customer.agency,
        kind=own.notification.kind,
        key="colleague",
        title="Meslektaşın",
    )
    for notification in (other.notification, colleagues):
        assert_hidden(
            client, f"/bildirimler/{notification.pk}/ac/", f"/bildirimler/{UNKNOWN_PK}/ac/", "post", status=302, data={}
        )
        assert Notification.objects.get(pk=notification.pk).read_at is None
    response = client.post(f"/bildirimler/{own.notification.pk}/ac/", {})
    assert response.status_code == 302 and response["Location"] == own.notification.link
    assert Notification.objects.get(pk=own.notification.pk).read_at is not None


def notification_list_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    text = assert_shown(client, "/bildirimler/", own.notification.title, f"/bildirimler/{own.notification.pk}/ac/")
    assert other.notification.title not in text and f"/bildirimler/{other.notification.pk}/ac/" not in text


def consent_change_web(w: World, viewer: str, owner: str) -> None:
    """Recording consent for the other's customer is unknown-customer; the own one is recorded."""
    from outreach.models import ChannelConsent

    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    form = {"channel": "email", "action": "withdraw", "method": "phone"}
    assert_hidden(
        client,
        f"/musteriler/{other.customer.pk}/iletisim-izni/",
        f"/musteriler/{UNKNOWN_PK}/iletisim-izni/",
        "post",
        data=form,
    )
    assert not ChannelConsent.objects.filter(customer=other.customer).exists()
    assert client.post(f"/musteriler/{own.customer.pk}/iletisim-izni/", form).status_code == 302
    assert ChannelConsent.objects.get(customer=own.customer).recorded_by == own.user
    text = assert_shown(client, f"/musteriler/{own.customer.pk}/", "İletişim izinleri", "Geri çekti")
    assert f"/musteriler/{other.customer.pk}/iletisim-izni/" not in text


def offer_read_web(w: World, viewer: str, owner: str) -> None:
    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    response = client.get(f"/talepler/{own.request.public_id}/teklif.pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert_hidden(client, f"/talepler/{other.request.public_id}/teklif.pdf", f"/talepler/{UNKNOWN_UUID}/teklif.pdf")


def offer_send_web(w: World, viewer: str, owner: str) -> None:
    """Sending the other's offer is an unknown request, nothing sent; the own one goes (with consent),
    and the sent message is listed on the own pages only."""
    from django.core import mail

    from outreach.models import ChannelConsent, ConsentText, OutboundMessage

    client, own, other = w.web(viewer), w.objects[viewer], w.objects[owner]
    for objects in (own, other):
        Customer.objects.filter(pk=objects.customer.pk).update(email=f"musteri@{objects.customer.agency.code}.example")
        ChannelConsent.objects.create(
            customer=objects.customer,
            agency=objects.customer.agency,
            channel="email",
            given=True,
            text=ConsentText.objects.get(channel="email", version=1),
            recorded_at=timezone.now(),
            recorded_by=objects.user,
            method="wet_signature",
        )
    assert_hidden(
        client,
        f"/talepler/{other.request.public_id}/musteriye-gonder/",
        f"/talepler/{UNKNOWN_UUID}/musteriye-gonder/",
        "post",
        data={"channel": "email"},
    )
    assert not OutboundMessage.objects.exists() and not mail.outbox
    assert client.post(f"/talepler/{own.request.public_id}/musteriye-gonder/", {"channel": "email"}).status_code == 302
    sent = OutboundMessage.objects.get()
    assert sent.agency == own.customer.agency and sent.status == "sent"
    assert [m.to for m in mail.outbox] == [[f"musteri@{own.customer.agency.code}.example"]]
    for page in (f"/talepler/{own.request.public_id}/", f"/musteriler/{own.customer.pk}/"):
        assert_shown(client, page, sent.recipient)
    other_client = w.web(owner)
    for page in (f"/talepler/{other.request.public_id}/", f"/musteriler/{other.customer.pk}/"):
        assert sent.recipient not in assert_shown(other_client, page)


CELLS: dict[str, Callable[[World, str, str], None]] = {
    "quote_request-read-web": quote_request_read_web,
    "quote_request-read-api": quote_request_read_api,
    "quote_request-list-web": quote_request_list_web,
    "quote_request-list-api": quote_request_list_api,
    "insurer_quote-read-web": insurer_quote_read_web,
    "insurer_quote-read-api": insurer_quote_read_api,
    "insurer_quote-list-web": insurer_quote_list_web,
    "insurer_quote-list-api": insurer_quote_list_api,
    "insurer_quote-issue-web": insurer_quote_issue_web,
    "insurer_quote-issue-api": insurer_quote_issue_api,
    "issuance-read-web": issuance_read_web,
    "issuance-read-api": issuance_read_api,
    "issuance-list-web": issuance_list_web,
    "issuance-replay-web": issuance_replay_admin,
    "issuance-replay-api": issuance_replay_api,
    "policy-list-web": policy_list_web,
    "policy-list-api": policy_list_api,
    "policy-replay-web": policy_replay_admin,
    "policy-read-web": policy_read_web,
    "policy-read-api": policy_read_api,
    "policy-export-web": policy_export_web,
    "renewal-list-web": renewal_list_web,
    "renewal-list-api": renewal_list_api,
    "renewal-quote-web": renewal_quote_web,
    "renewal-quote-api": renewal_quote_api,
    "comparison-read-web": comparison_read_web,
    "document-read-web": document_read_web,
    "document-read-api": document_read_api,
    "document-refetch-web": document_refetch_web,
    "document-refetch-api": document_refetch_api,
    "customer-read-web": customer_read_web,
    "customer-read-api": customer_read_api,
    "customer-list-web": customer_list_web,
    "customer-list-api": customer_list_api,
    "customer-change-web": customer_change_web,
    "customer-change-api": customer_change_api,
    "customer-quote-web": customer_quote_web,
    "notification-read-web": notification_read_web,
    "notification-list-web": notification_list_web,
    "consent-change-web": consent_change_web,
    "offer-read-web": offer_read_web,
    "offer-send-web": offer_send_web,
}


@pytest.mark.parametrize(("viewer", "owner"), [("ACENTE1", "ACENTE2"), ("ACENTE2", "ACENTE1")])
@pytest.mark.parametrize("cell", sorted(CELLS))
def test_agent_reaches_only_their_own_agencys_objects(world, cell, viewer, owner):
    """Each matrix cell: the other agency's object is refused like an unknown one; the agent's own works."""
    CELLS[cell](world, viewer, owner)


# --- roles -----------------------------------------------------------------------------------------
#
# The same cells hold for the other roles a desk user may have: a staff login (is_staff grants
# no reading across agencies; only `quotes.view_all_agencies` does) and an agency admin (who
# manages their own agency's agents and reaches nothing more of the other agency).

DESK_CELLS = sorted(cell for cell in CELLS if "replay" not in cell)


def _give_role(world: World, role: str) -> None:
    for objects in world.objects.values():
        user = objects.user
        if role == "staff":
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        elif role == "agency_admin":
            user.agent_profile.is_agency_admin = True
            user.agent_profile.save(update_fields=["is_agency_admin"])


@pytest.mark.parametrize("role", ["staff", "agency_admin"])
@pytest.mark.parametrize(("viewer", "owner"), [("ACENTE1", "ACENTE2"), ("ACENTE2", "ACENTE1")])
@pytest.mark.parametrize("cell", DESK_CELLS)
def test_staff_and_agency_admins_reach_only_their_own_agencys_objects(world, role, cell, viewer, owner):
    """A staff flag or the agency-admin flag widens nothing: every desk and API cell holds as for an agent."""
    _give_role(world, role)
    CELLS[cell](world, viewer, owner)


@pytest.mark.parametrize("role", ["staff", "agency_admin"])
def test_staff_and_agency_admins_cannot_replay(world, role):
    """Replay needs the admin's change permission: neither a bare staff login nor an agency admin has it."""
    _give_role(world, role)
    for viewer in world.objects:
        client = world.web(viewer)
        for objects in world.objects.values():
            response = client.post(
                "/admin/quotes/issuance/",
                {"action": "replay_selected", "_selected_action": [objects.failed_issuance.pk]},
            )
            assert response.status_code in (302, 403)
            assert response.status_code == 403 or response["Location"].startswith("/admin/login/")
            assert Issuance.objects.get(pk=objects.failed_issuance.pk).state == WorkState.FAILED


def _reader(world: World):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    reader = get_user_model().objects.create_user("merkez-okuyucu", password="test-pass-123", is_staff=True)
    reader.user_permissions.add(Permission.objects.get(content_type__app_label="quotes", codename="view_all_agencies"))
    return reader


def test_view_all_agencies_reads_both_agencies_on_desk_and_api(world):
    """`quotes.view_all_agencies` is the one door to reading across agencies: lists, search and details.
    Reading is not acting: a customer's edit page and a document re-fetch stay with the agency."""
    reader = _reader(world)
    web, api = Client(), APIClient()
    web.force_login(reader)
    api.force_authenticate(reader)
    listed = web.get(web.post("/talepler/ara/", {"q": samples.TRAFIK["owner_id"]})["Location"]).content.decode()
    body = api.get("/api/quote-requests/").json()
    for objects in world.objects.values():
        assert str(objects.request.public_id) in listed
        assert str(objects.request.public_id) in {item["id"] for item in body["results"]}
        assert_shown(web, f"/talepler/{objects.request.public_id}/")
        assert_shown(web, f"/policelestirme/{objects.issuance.pk}/")
        assert_shown(api, f"/api/issuances/{objects.issuance.pk}/", objects.issuance.reference)
        assert_shown(web, "/policeler/", objects.policy.policy_no)
        assert_shown(web, f"/policeler/{objects.policy.pk}/", objects.policy.policy_no)
        assert_shown(api, f"/api/policies/{objects.policy.pk}/", objects.policy.policy_no)
        assert_shown(web, "/yenilemeler/", objects.policy.policy_no)
        assert objects.policy.pk in {item["id"] for item in api.get("/api/renewals/").json()["results"]}
        assert_shown(web, "/musteriler/", objects.customer.name)
        assert_shown(web, f"/musteriler/{objects.customer.pk}/", objects.customer.name)
        assert_shown(api, f"/api/customers/{objects.customer.pk}/", objects.customer.name)
        assert web.get(f"/musteriler/{objects.customer.pk}/duzenle/").status_code == 404
        # Asking for an agency is the agency's: no re-run, and no customer offered on a quote form.
        assert web.get(f"/talepler/{objects.request.public_id}/yeniden/").status_code == 404
        assert web.post("/musteriler/sec/", {"q": objects.customer.name}).json()["results"] == []
        assert api.patch(f"/api/customers/{objects.customer.pk}/", {"name": "X"}, format="json").status_code == 404
        assert Customer.objects.get(pk=objects.customer.pk).name == objects.customer.name
        pdf = agency_pdf(objects.label)
        assert _downloaded(web.get(f"/policeler/{objects.policy.pk}/belge/")) == pdf
        assert _downloaded(api.get(f"/api/policies/{objects.policy.pk}/document/")) == pdf
        before = _document_state(objects.document)
        assert web.post(f"/policeler/{objects.policy.pk}/belge/yenile/", {}).status_code == 404
        assert api.post(f"/api/policies/{objects.policy.pk}/document/refetch/", format="json").status_code in (403, 404)
        assert _document_state(objects.document) == before


def test_view_all_agencies_issues_no_agencys_quote(world):
    """Reading every agency is not acting for it: the reader's issue attempts are refused, nothing stored."""
    reader = _reader(world)
    web, api = Client(), APIClient()
    web.force_login(reader)
    api.force_authenticate(reader)
    form = {"payment_token": samples.PAYMENT_TOKEN}
    for objects in world.objects.values():
        assert web.post(f"/teklifler/{objects.quote.pk}/policelestir/", form).status_code == 404
        response = api.post(f"/api/insurer-quotes/{objects.quote.pk}/issue/", form, format="json")
        assert response.status_code in (403, 404)
        assert not Issuance.objects.filter(insurer_quote=objects.quote).exists()


def test_agency_admin_manages_only_their_own_agencys_agents(world):
    """The agents page lists, adds and switches off agents of the admin's agency only; another's is unknown."""
    from django.contrib.auth import get_user_model

    from agencies.models import AgentProfile

    _give_role(world, "agency_admin")
    own_admin, other_admin = world.objects["ACENTE1"].user, world.objects["ACENTE2"].user
    own_agent = AgentProfile.objects.create(
        user=get_user_model().objects.create_user("ajan-bir", password="test-pass-123"),
        agency=own_admin.agent_profile.agency,
    )
    other_agent = AgentProfile.objects.create(
        user=get_user_model().objects.create_user("ajan-iki", password="test-pass-123"),
        agency=other_admin.agent_profile.agency,
    )
    client = world.web("ACENTE1")
    page = assert_shown(client, "/acente/calisanlar/", "ajan-bir")
    assert "ajan-iki" not in page and other_admin.username not in page
    assert_hidden(
        client,
        f"/acente/calisanlar/{other_agent.pk}/durum/",
        f"/acente/calisanlar/{UNKNOWN_PK}/durum/",
        "post",
        data={"aktif": "0"},
    )
    # The admin's own row and another agency admin are not theirs to switch off either.
    for profile in (own_admin.agent_profile, other_admin.agent_profile):
        assert client.post(f"/acente/calisanlar/{profile.pk}/durum/", {"aktif": "0"}).status_code == 404
    assert get_user_model().objects.filter(is_active=False).count() == 0
    assert client.post(f"/acente/calisanlar/{own_agent.pk}/durum/", {"aktif": "0"}).status_code == 302
    assert get_user_model().objects.get(pk=own_agent.user_id).is_active is False
    response = client.post(
        "/acente/calisanlar/", {"username": "yeni-ajan", "first_name": "Ayşe", "password": "uzun-ve-zor-parola-42"}
    )
    assert response.status_code == 302
    created = AgentProfile.objects.get(user__username="yeni-ajan")
    assert created.agency == own_admin.agent_profile.agency and not created.is_agency_admin
    assert not created.user.is_staff and not created.user.is_superuser


def test_agents_page_is_for_agency_admins_only(world):
    """A plain agent, a staff login without a profile and a stranger cannot open or post to the agents page."""
    from django.contrib.auth import get_user_model

    agent = world.web("ACENTE1")
    assert agent.get("/acente/calisanlar/").status_code == 403
    other_agent = world.objects["ACENTE2"].user.agent_profile
    assert agent.post(f"/acente/calisanlar/{other_agent.pk}/durum/", {"aktif": "0"}).status_code == 403
    assert agent.post("/acente/calisanlar/", {"username": "x", "password": "uzun-ve-zor-parola-42"}).status_code == 403
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("personel", password="p", is_staff=True))
    assert staff.get("/acente/calisanlar/").status_code == 403
    assert Client().get("/acente/calisanlar/")["Location"].startswith("/giris/")
    assert not get_user_model().objects.filter(username="x").exists()
    assert get_user_model().objects.get(pk=other_agent.user_id).is_active


def test_agency_admin_is_kept_out_of_the_django_admin(world):
    """The agency admin is no staff: the Django admin sends them to its login."""
    _give_role(world, "agency_admin")
    response = world.web("ACENTE1").get("/admin/agencies/agentprofile/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_staff_replay_reaches_every_agency(world, db):
    """The positive side of the replay cells: staff replay dead letters of either agency from the admin."""
    from django.contrib.auth import get_user_model

    staff = get_user_model().objects.create_superuser("merkez-yonetici", "m@example.com", "test-pass-123")
    client = Client()
    client.force_login(staff)
    ids = [objects.failed_issuance.pk for objects in world.objects.values()]
    response = client.post("/admin/quotes/issuance/", {"action": "replay_selected", "_selected_action": ids})
    assert response.status_code == 302
    assert set(Issuance.objects.filter(pk__in=ids).values_list("state", flat=True)) == {WorkState.QUEUED}
    items = [objects.sync_item.pk for objects in world.objects.values()]
    response = client.post("/admin/sync/syncitem/", {"action": "replay_selected", "_selected_action": items})
    assert response.status_code == 302
    assert set(SyncItem.objects.filter(pk__in=items).values_list("state", flat=True)) == {WorkState.QUEUED}


# --- sub-agencies (tali acente) ------------------------------------------------------------------
#
# Every cell again inside one agency: a sub-agency's user against the other sub-agency's objects
# and against the agency's own (HQ). "Another's is an unknown one" holds as between agencies.
# The agency's own staff reach every sub-agency's objects, reading and acting.

SUB_AGENCY_PAIRS = [("A1", "A2"), ("A1", "HQ"), ("A2", "A1"), ("A2", "HQ")]


@pytest.mark.parametrize(("viewer", "owner"), SUB_AGENCY_PAIRS)
@pytest.mark.parametrize("cell", sorted(CELLS))
def test_sub_agency_user_reaches_only_their_sub_agencys_objects(sub_world, cell, viewer, owner):
    """Each matrix cell within one agency: the other sub-agency's and the agency's own objects are
    refused like unknown ones; the sub-agency user's own work through the same door."""
    CELLS[cell](sub_world, viewer, owner)


def test_agency_staff_reach_every_sub_agencys_objects(sub_world):
    """The agency's own staff (no sub-agency) read and act on every sub-agency's objects, desk and API."""
    web, api = sub_world.web("HQ"), sub_world.api("HQ")
    everyone = sub_world.objects.values()
    body = api.get("/api/quote-requests/").json()
    assert {item["id"] for item in body["results"]} == {str(r.public_id) for o in everyone for r in o.requests}
    assert {item["policy_no"] for item in api.get("/api/policies/").json()["results"]} == {
        o.policy.policy_no for o in everyone
    }
    assert {item["id"] for item in api.get("/api/customers/").json()["results"]} == {o.customer.pk for o in everyone}
    for code in ("A1", "A2"):
        objects = sub_world.objects[code]
        assert_shown(web, f"/talepler/{objects.request.public_id}/")
        assert_shown(web, f"/teklifler/{objects.quote.pk}/policelestir/", objects.quote.quote_no)
        assert_shown(web, f"/policelestirme/{objects.issuance.pk}/")
        assert_shown(api, f"/api/issuances/{objects.issuance.pk}/", objects.issuance.reference)
        assert_shown(web, "/policeler/", objects.policy.policy_no)
        assert_shown(web, f"/policeler/{objects.policy.pk}/", objects.policy.policy_no)
        assert_shown(web, "/yenilemeler/", objects.policy.policy_no)
        assert_shown(web, f"/musteriler/{objects.customer.pk}/", objects.customer.name, objects.policy.policy_no)
        assert_shown(web, f"/musteriler/{objects.customer.pk}/duzenle/", objects.customer.name)
        assert _downloaded(api.get(f"/api/policies/{objects.policy.pk}/document/")) == agency_pdf(objects.label)
        assert web.post(f"/policeler/{objects.policy.pk}/belge/yenile/", {}).status_code == 302
        assert PolicyDocument.objects.get(pk=objects.document.pk).state == WorkState.QUEUED
        response = api.patch(f"/api/customers/{objects.customer.pk}/", {"name": f"Yeni {code}"}, format="json")
        assert response.status_code == 200 and Customer.objects.get(pk=objects.customer.pk).name == f"Yeni {code}"


def test_what_a_sub_agency_user_creates_is_credited_to_their_sub_agency(sub_world):
    """Customers (desk and API) and quote requests (desk and API) of a sub-agency user carry their
    sub-agency; the staff quoting for a sub-agency's customer credit that sub-agency, their own none."""
    a1 = sub_world.objects["A1"]
    sub_agency = a1.user.agent_profile.sub_agency
    web, api = sub_world.web("A1"), sub_world.api("A1")
    response = web.post("/musteriler/yeni/", {"name": "Deniz Kaya", "identity_no": "10000000078", "phone": ""})
    assert response.status_code == 302
    assert Customer.objects.get(identity_no="10000000078").sub_agency == sub_agency
    response = api.post("/api/customers/", {"name": "Ece Demir", "identity_no": "20000000046"}, format="json")
    assert response.status_code == 201 and Customer.objects.get(pk=response.json()["id"]).sub_agency == sub_agency
    response = api.post(
        "/api/quote-requests/",
        {"product": "trafik", "data": {**samples.TRAFIK, "owner_id": "20000000046"}},
        format="json",
    )
    assert response.status_code == 201
    assert QuoteRequest.objects.get(public_id=response.json()["id"]).sub_agency == sub_agency
    form = {**samples.TRAFIK, "owner_id": a1.customer.identity_no, "customer": str(a1.customer.pk)}
    assert web.post("/teklif/yeni/trafik/", form).status_code == 302
    assert QuoteRequest.objects.latest("pk").sub_agency == sub_agency
    staff = sub_world.web("HQ")
    assert staff.post("/teklif/yeni/trafik/", form).status_code == 302
    created = QuoteRequest.objects.latest("pk")
    assert created.created_by == sub_world.objects["HQ"].user and created.sub_agency == sub_agency
    hq = sub_world.objects["HQ"]
    own_form = {**samples.TRAFIK, "owner_id": hq.customer.identity_no, "customer": str(hq.customer.pk)}
    assert staff.post("/teklif/yeni/trafik/", own_form).status_code == 302
    assert QuoteRequest.objects.latest("pk").sub_agency is None


def test_sub_agency_user_cannot_quote_for_a_customer_outside_their_sub_agency(sub_world):
    """The service refuses another scope's customer with a field error on `customer`, nothing stored."""
    from quotes.services.quote_requests import InputInvalid, quote_request_create

    a1, hq = sub_world.objects["A1"], sub_world.objects["HQ"]
    before = QuoteRequest.objects.count()
    with pytest.raises(InputInvalid) as refused:
        quote_request_create(user=a1.user, product="trafik", data=dict(samples.TRAFIK), customer=hq.customer)
    assert list(refused.value.field_errors) == ["customer"]
    assert QuoteRequest.objects.count() == before


def test_sub_agency_users_are_kept_from_commission_agreements(sub_world):
    """Agreements are the manager's: a sub-agency user gets the desk page's 403 and no agreement over the API."""
    from commissions.models import CommissionAgreement

    hq = sub_world.objects["HQ"]
    agreement = CommissionAgreement.objects.create(
        agency=hq.customer.agency,
        insurer=hq.policy.insurer,
        product="trafik",
        rate=Decimal("10.00"),
        base="gross",
        effective_from=timezone.localdate() - timedelta(days=400),
    )
    for code in ("A1", "A2"):
        assert sub_world.web(code).get("/acente/komisyonlar/").status_code == 403
        api = sub_world.api(code)
        assert api.get("/api/commission-agreements/").json()["count"] == 0
        assert api.get(f"/api/commission-agreements/{agreement.pk}/").status_code == 404
        body = {
            "insurer": "anka",
            "product": "trafik",
            "rate": "12.50",
            "base": "gross",
            "effective_from": "2027-01-01",
        }
        assert api.post("/api/commission-agreements/", body, format="json").status_code == 403
    assert sub_world.api("HQ").get(f"/api/commission-agreements/{agreement.pk}/").status_code == 200
