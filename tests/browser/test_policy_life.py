"""A policy's life in a real browser, at a laptop's 1366 px: a renewal that starts when the old
policy ends, the overlapping trafik guard, a cancellation and its refund, a duplicate the nightly
reconciliation found cancelled in one click, and a policy issued on an insurer's portal imported.

Every insurer call is real HTTP to the sandbox, and the worker is the session's real qcluster: it
asks the insurers, issues, cancels and reads the production lists. Only the setup goes around
the pages: a policy the agency already had (history, or a policy imported from a file while the
insurer holds it), and the reconciliation of test (d), worked by hand as
tests/policies/test_reconciliation.py works it, with its tasks kept from the qcluster.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django_q.tasks import async_task
from playwright.sync_api import Page, ViewportSize, expect

from insurehub.masking import mask_and_cut
from integrations.adapters.registry import registered_codes
from integrations.models import InsurerAccount
from notifications.models import Notification
from policies import periods
from policies.models import Cancellation, Policy, PolicyFinding, ProductionListCheck
from policies.services import reconciliation
from quotes.models import Issuance, QuoteRequest
from quotes.templatetags.desk import try_money
from tests import samples
from tests.conftest import wait_until
from tests.quotes.policy_samples import imported_policy, issued_policy
from tests.quotes.request_samples import tasks_not_sent
from tests.work.sends import hold_work_sends
from work.item import WorkState

from .test_quote_desk import fill_trafik_form, log_in, open_cheapest_confirm, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

LAPTOP: ViewportSize = {"width": 1366, "height": 768}
RESULTS_URL = re.compile(r"/talepler/[0-9a-f-]{36}/$")
CANCEL_OLD = "Eski poliçe araç satışı nedeniyle, yeni poliçenin başlangıcından itibaren iptal edilsin"
# The worker, the insurer's own processing (Deniz polls its cancellations) and a slow CI machine.
WORKER_SECONDS = 30


@pytest.fixture
def page(page: Page) -> Page:
    """The desk at the width agencies' laptops have."""
    page.set_viewport_size(LAPTOP)
    return page


def tr_date(day: date) -> str:
    return f"{day:%d.%m.%Y}"


def contract_refund(premium: Decimal, starts_on: date, ends_on: date, effective_on: date) -> Decimal:
    """CONTRACTS.md, "Cancellation": premium × days left ÷ days of the period, half-up to kuruş."""
    left = (ends_on - effective_on).days
    return (premium * left / (ends_on - starts_on).days).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def policy_on_page(page: Page) -> Policy:
    """The policy an issuance status page names, once the worker has issued it."""
    policy_no = page.locator(".policy-no")
    expect(policy_no).to_have_text(re.compile(r"\S+"))
    found = re.search(r"/policelestirme/(\d+)/", page.url)
    assert found, page.url
    issuance = Issuance.objects.get(pk=found.group(1))
    assert issuance.state == WorkState.SUBMITTED and policy_no.inner_text().strip() == issuance.policy_no
    return Policy.objects.select_related("insurer").get(issuance=issuance)


def issue_trafik_on_the_desk(page: Page, plate: str) -> Policy:
    """A trafik request for `plate` from the form, every insurer's answer, the cheapest issued."""
    page.goto("/")
    fill_trafik_form(page)
    page.get_by_label("Plaka").fill(plate)
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    wait_for_every_answer(page)
    open_cheapest_confirm(page)
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    return policy_on_page(page)


def seed_at_insurer(sandbox: dict, code: str, policy_no: str, **fields) -> None:
    """A policy the insurer holds that the platform did not issue (its portal, a duplicate)."""
    sandbox[code].state.seed_policies([{"policy_no": policy_no, "status": "ACTIVE", "product": "trafik", **fields}])


def wait_for_cancellation(page: Page, cancellation: Cancellation) -> Cancellation:
    """The cancellation's page follows the worker to the insurer's answer (htmx polls its status)."""
    page.goto(f"/iptaller/{cancellation.pk}/")
    status = page.locator("#cancellation-status")
    expect(status).to_have_attribute("data-state", "SUBMITTED", timeout=WORKER_SECONDS * 1000)
    done = Cancellation.objects.get(pk=cancellation.pk)
    assert done.cancelled_on is not None  # the insurer's answer, stored with SUBMITTED
    expect(status).to_contain_text(f"Şirketin iade primi: {try_money(done.refund)}")
    expect(status).to_contain_text(f"{tr_date(done.cancelled_on)} itibarıyla geçerli")
    return done


# --- (a) a renewal -------------------------------------------------------------------------------


def test_a_renewal_from_the_policy_page_starts_when_the_old_policy_ends_and_is_issued(
    page, shot, sandbox, desk_agent, monkeypatch
):
    """ "Yeniden teklif al" on a policy ending in 12 days: every insurer quotes a policy starting
    the day it ends, no overlap is found (that day is the old one's last day, not a shared one),
    and the renewal is issued without a choice to make."""
    ends_on = periods.today() + timedelta(days=12)
    with monkeypatch.context() as quiet:  # the old policy is history: stored, no insurer called
        tasks_not_sent(quiet)
        old = issued_policy(
            desk_agent,
            "ANK-P-RENEW-42",
            data={**samples.TRAFIK, "plate": "06BYZ42"},
            starts_on=ends_on.replace(year=ends_on.year - 1),
            ends_on=ends_on,
        )

    log_in(page, desk_agent.username)
    page.goto(f"/policeler/{old.pk}/")
    expect(page.get_by_role("heading", name="Poliçe ANK-P-RENEW-42")).to_be_visible()
    expect(page.locator("main")).to_contain_text("12 gün")
    shot(page, "old-policy")
    page.get_by_role("button", name="Yeniden teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    renewal = QuoteRequest.objects.exclude(pk=old.issuance.quote_request_id).get()
    assert renewal.starts_on == ends_on and renewal.plate == "06BYZ42"
    expect(page.locator("dd.starts-on")).to_have_text(tr_date(ends_on))
    wait_for_every_answer(page)
    expect(page.locator("#policy-in-force")).to_have_count(0)  # ending as the new one starts is no overlap
    expect(page.locator('tr.result[data-state="SUCCEEDED"]')).to_have_count(len(sandbox))
    shot(page, "renewal-quotes")

    quote = open_cheapest_confirm(page)
    expect(page.locator("main")).to_contain_text(f"Poliçe başlangıcı{tr_date(ends_on)}")
    expect(page.get_by_text("Çakışan trafik poliçesi")).to_have_count(0)
    shot(page, "renewal-confirm")
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    new = policy_on_page(page)
    shot(page, "renewal-issued")

    assert new.insurer == quote.insurer and new.starts_on == ends_on  # the insurer's own period
    assert sandbox[quote.insurer.code].state.counts()["policies_by_quote"][quote.quote_no] == [new.policy_no]
    assert Policy.objects.get(pk=old.pk).status == Policy.Status.ACTIVE and not Cancellation.objects.exists()
    page.locator(".policy-link").click()
    expect(page.locator("main")).to_contain_text(f"{tr_date(ends_on)} – ")


# --- (b) the overlapping trafik guard ------------------------------------------------------------


def test_a_trafik_policy_over_one_in_force_needs_the_agents_choice_and_cancels_the_old_one(
    page, shot, sandbox, desk_agent
):
    """A new trafik request on a plate insured until 265 days from now: warned on the results
    page, refused without a choice (in Turkish, naming the choice), and with "the old one
    cancelled" the new policy is issued and the old one cancelled at its insurer for the vehicle's
    sale from the new one's start, with the refund for the days left."""
    code = "bogazici"
    today = periods.today()
    starts_on, ends_on = today - timedelta(days=100), today + timedelta(days=265)
    old_no = f"{sandbox[code].state.ledger.prefix}-P-INFORCE-1"
    # A policy the agency brought in from a file, which the insurer holds: issued on its portal.
    seed_at_insurer(
        sandbox,
        code,
        old_no,
        agency="ACENTE1",
        premium="3650.00",
        starts_on=starts_on.isoformat(),
        ends_on=ends_on.isoformat(),
        issued_on=(starts_on - timedelta(days=1)).isoformat(),
    )
    old = imported_policy(
        "ACENTE1", code, old_no, premium=Decimal("3650.00"), starts_on=starts_on, ends_on=ends_on, source="import"
    )

    log_in(page, desk_agent.username)
    fill_trafik_form(page)  # the same plate, 34 ABC 123
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    warning = page.locator("#policy-in-force")
    expect(warning).to_contain_text(old_no)
    expect(warning).to_contain_text(f"{tr_date(starts_on)} – {tr_date(ends_on)}")
    expect(warning).to_contain_text("Aynı araç için iki trafik poliçesi olmaz")
    wait_for_every_answer(page)
    shot(page, "results-warned")

    quote = open_cheapest_confirm(page)
    expect(page.locator("#policy-in-force")).to_contain_text(old_no)
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    expect(page.get_by_role("alert")).to_contain_text(
        f"Bu plakada {old.insurer.name} trafik poliçesi {old_no} ({tr_date(starts_on)} – {tr_date(ends_on)}) yürürlükte"
    )
    expect(page.get_by_role("alert")).to_contain_text("aynı araç için iki trafik poliçesi düzenlenemez")
    expect(page.locator("#id_overlap_error")).to_have_text("Çakışan poliçe için bir seçim yapın.")
    shot(page, "refused-without-a-choice")
    assert not Issuance.objects.exists()
    assert sum(server.state.counts()["issued_total"] for server in sandbox.values()) == 0

    page.get_by_label(CANCEL_OLD).check()
    shot(page, "old-one-to-be-cancelled")
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    new = policy_on_page(page)
    shot(page, "new-issued")
    assert sandbox[quote.insurer.code].state.counts()["policies_by_quote"][quote.quote_no] == [new.policy_no]

    cancellation = Cancellation.objects.get(policy=old)
    assert cancellation.reason == "vehicle_sold" and cancellation.requested_by == desk_agent
    assert cancellation.effective_on == new.starts_on == quote.request.starts_on
    done = wait_for_cancellation(page, cancellation)
    expect(page.locator("main")).to_contain_text("Araç satışı")
    shot(page, "old-cancelled")
    assert done.refund == contract_refund(Decimal("3650.00"), starts_on, ends_on, new.starts_on)
    assert done.cancelled_on == new.starts_on
    assert sandbox[code].state.counts()["cancellations_by_policy"] == {old_no: 1}

    page.get_by_role("link", name="Poliçeye dön").click()
    expect(page.locator("main")).to_contain_text("Durumİptal")
    expect(page.locator(".card.cancellation")).to_contain_text(f"iade primi {try_money(done.refund)}")
    expect(page.get_by_role("link", name="Poliçeyi iptal et")).to_have_count(0)


# --- (c) a cancellation and its refund ------------------------------------------------------------


def test_cancelling_a_policy_shows_the_refund_estimate_then_the_insurers_refund(page, shot, sandbox, desk_agent):
    """ "Poliçeyi iptal et" on a policy issued on the desk: a date before its start is refused
    naming the field, "İadeyi hesapla" shows the contract's refund, confirming ends on the status
    page with the insurer's refund, and the list shows the policy "İptal" with its period."""
    log_in(page, desk_agent.username)
    policy = issue_trafik_on_the_desk(page, "06 CAN 42")
    assert policy.starts_on and policy.ends_on and policy.premium
    page.locator(".policy-link").click()
    expect(page.get_by_role("heading", name=f"Poliçe {policy.policy_no}")).to_be_visible()
    page.get_by_role("link", name="Poliçeyi iptal et").click()
    expect(page.get_by_role("heading", name="Poliçeyi iptal et")).to_be_visible()
    page.get_by_label("İptal nedeni").select_option(label="Sigortalı talebi")

    # Today is before the policy starts (tomorrow): the estimate is refused, naming the date.
    page.get_by_role("button", name="İadeyi hesapla").click()
    expect(page.locator("#id_effective_on_error")).to_have_text(
        f"İptal tarihi poliçe başlangıcından ({tr_date(policy.starts_on)}) önce olamaz."
    )
    shot(page, "date-before-start")

    effective_on = policy.starts_on + timedelta(days=91)
    estimate = contract_refund(policy.premium, policy.starts_on, policy.ends_on, effective_on)
    page.get_by_label("İptal tarihi").fill(effective_on.isoformat())
    page.get_by_role("button", name="İadeyi hesapla").click()
    expect(page.locator("p.refund-estimate")).to_contain_text(f"Tahmini iade primi: {try_money(estimate)}")
    expect(page.get_by_label("İptal nedeni")).to_have_value("customer_request")  # kept for the confirm
    shot(page, "estimate")
    assert not Cancellation.objects.exists()  # estimating asks nobody

    page.get_by_role("button", name="Poliçeyi iptal et").click()
    expect(page).to_have_url(re.compile(r"/iptaller/\d+/$"))
    cancellation = Cancellation.objects.get(policy=policy)
    assert cancellation.reason == "customer_request" and cancellation.effective_on == effective_on
    expect(page.locator("dd.refund-estimate")).to_have_text(try_money(estimate))
    done = wait_for_cancellation(page, cancellation)
    shot(page, "cancelled")
    assert done.refund == estimate and done.cancelled_on == effective_on  # the insurer agrees with the rule
    assert sandbox[policy.insurer.code].state.counts()["cancellations_by_policy"] == {policy.policy_no: 1}

    page.get_by_role("link", name="Poliçeler", exact=True).first.click()
    row = page.locator(f'tr.policy[data-policy-no="{policy.policy_no}"]')
    expect(row.locator("td.status")).to_have_text(f"İptal ({tr_date(effective_on)} itibarıyla)")
    expect(row).to_contain_text(tr_date(policy.starts_on))
    expect(row).to_contain_text(tr_date(policy.ends_on))
    shot(page, "list")
    # Asked again (a second tab, the back button): the same cancellation, nothing sent twice.
    page.goto(f"/policeler/{policy.pk}/iptal/")
    expect(page).to_have_url(f"/iptaller/{cancellation.pk}/")
    assert Cancellation.objects.count() == 1


# --- (d) a duplicate found at night ---------------------------------------------------------------


def reconcile_by_hand(code: str) -> list[ProductionListCheck]:
    """Tonight's checks for one insurer's accounts with today in the range, worked here (as in
    tests/policies/test_reconciliation.py), their tasks kept from the session's qcluster."""
    with pytest.MonkeyPatch.context() as quiet:
        hold_work_sends(quiet, ProductionListCheck)
        started = reconciliation.reconciliation_start(issued_to=periods.today(), days=3)
    checks = [check for check in started if check.account.insurer.code == code]
    ProductionListCheck.objects.exclude(pk__in=[check.pk for check in checks]).delete()
    for check in checks:
        assert reconciliation.production_check_process(check.pk) == WorkState.SUBMITTED
    return checks


def test_a_duplicate_the_reconciliation_found_is_shown_and_cancelled_in_one_click(page, shot, sandbox, desk_agent):
    """The insurer lists a second policy for our quote: the reconciliation flags it on both
    policies' pages and on /mukerrer-policeler/, and the confirmation naming both cancels the
    duplicate with the whole premium back while ours stays in force."""
    log_in(page, desk_agent.username)
    ours = issue_trafik_on_the_desk(page, "35 DP 707")
    code = ours.insurer.code
    quote_no = ours.issuance.insurer_quote.quote_no
    duplicate_no = f"{sandbox[code].state.ledger.prefix}-P-DUP-1"
    seed_at_insurer(
        sandbox,
        code,
        duplicate_no,
        agency="ACENTE1",
        quote_no=quote_no,
        premium=str(ours.premium),
        starts_on=ours.starts_on.isoformat(),
        ends_on=ours.ends_on.isoformat(),
        issued_on=periods.today().isoformat(),
    )
    reconcile_by_hand(code)
    duplicate = Policy.objects.get(insurer__code=code, policy_no=duplicate_no)
    finding = PolicyFinding.objects.get(kind=PolicyFinding.Kind.DUPLICATE)
    assert finding.policy == duplicate and finding.original == ours and duplicate.source == "insurer_list"

    page.get_by_role("link", name="Mükerrer poliçeler").click()
    row = page.locator(f'#duplicates tr[data-policy="{duplicate_no}"]')
    expect(row).to_contain_text(ours.policy_no)
    # The note names the quote as it is kept: masked like any free text, so a quote number whose
    # digits read as a phone number (the sandbox's run prefix may be all digits) shows starred.
    assert finding.note == mask_and_cut(
        f"Teklif {quote_no} için ikinci poliçe: platformdaki poliçe {ours.policy_no}.", 300
    )
    expect(row).to_contain_text(finding.note)
    shot(page, "duplicates")
    page.goto(f"/policeler/{ours.pk}/")
    expect(page.locator(".duplicate-of-this")).to_contain_text(duplicate_no)
    page.locator(".duplicate-of-this").get_by_role("link", name=re.compile(duplicate_no)).click()
    expect(page.get_by_role("heading", name=f"Poliçe {duplicate_no}")).to_be_visible()
    expect(page.locator(".duplicate-finding")).to_contain_text(ours.policy_no)
    expect(page.locator("dd.source")).to_have_text("Şirket listesinden")
    shot(page, "duplicate-policy")

    page.locator(".duplicate-finding").get_by_role("link", name="Mükerrer poliçeyi iptal et").click()
    expect(page.locator("dd.duplicate")).to_contain_text(duplicate_no)
    expect(page.locator("dd.original")).to_contain_text(ours.policy_no)
    expect(page.locator("main")).to_contain_text(try_money(duplicate.premium))
    shot(page, "confirmation")
    assert not Cancellation.objects.exists()
    page.get_by_role("button", name=f"{duplicate_no} poliçesini mükerrer olarak iptal et").click()
    expect(page).to_have_url(re.compile(r"/iptaller/\d+/$"))
    cancellation = Cancellation.objects.get()
    assert cancellation.policy == duplicate and cancellation.reason == "duplicate"
    done = wait_for_cancellation(page, cancellation)
    shot(page, "duplicate-cancelled")
    assert done.refund == duplicate.premium and done.cancelled_on == duplicate.starts_on

    assert PolicyFinding.objects.get(pk=finding.pk).resolved_at is not None
    assert sandbox[code].state.counts()["cancellations_by_policy"] == {duplicate_no: 1}
    assert Policy.objects.get(pk=ours.pk).status == Policy.Status.ACTIVE
    assert sandbox[code].state.ledger.policies[ours.policy_no].status == "ACTIVE"  # ours, kept at the insurer
    page.get_by_role("link", name="Mükerrer poliçeler").click()
    expect(page.locator("#duplicates")).to_contain_text("Açık mükerrer poliçe yok.")
    page.get_by_role("link", name=re.compile("^Bildirimler")).click()
    expect(
        page.locator("tr.notification").filter(has_text=f"Mükerrer poliçe bulundu: {ours.insurer.name} {duplicate_no}")
    ).to_have_count(1)
    assert Notification.objects.filter(kind=Notification.Kind.DUPLICATE_FOUND).count() == 1


# --- (e) a policy issued on an insurer's portal ---------------------------------------------------


def test_policies_issued_on_the_insurers_portals_are_imported_by_the_nightly_run(page, shot, sandbox, desk_agent):
    """Yesterday, on every insurer's portal, a policy with no quote of ours: the nightly
    reconciliation (the scheduled task, on the real worker) brings each into the agency's list;
    another agency's portal policy stays that agency's."""
    yesterday = periods.today() - timedelta(days=1)
    period = {"starts_on": periods.today().isoformat(), "ends_on": (yesterday + timedelta(days=366)).isoformat()}
    portal: dict[str, tuple[str, Decimal]] = {}
    for n, code in enumerate(registered_codes(), start=1):
        policy_no, premium = f"{sandbox[code].state.ledger.prefix}-P-PORTAL-{n}", Decimal(f"{1500 + n}.25")
        seed_at_insurer(
            sandbox, code, policy_no, agency="ACENTE1", premium=str(premium), issued_on=yesterday.isoformat(), **period
        )
        portal[code] = (policy_no, premium)
    other_agency = f"{sandbox['anka'].state.ledger.prefix}-P-PORTAL-OTHER"
    seed_at_insurer(sandbox, "anka", other_agency, agency="ACENTE2", issued_on=yesterday.isoformat(), **period)

    async_task("policies.tasks.reconciliation_nightly")
    accounts = InsurerAccount.objects.filter(is_active=True).count()
    wait_until(
        lambda: ProductionListCheck.objects.filter(state=WorkState.SUBMITTED).count() == accounts,
        timeout=WORKER_SECONDS * 2,
    )
    check = ProductionListCheck.objects.first()
    assert (check.issued_from, check.issued_to) == (yesterday - timedelta(days=6), yesterday)

    log_in(page, desk_agent.username)
    page.get_by_role("link", name="Poliçeler", exact=True).first.click()
    rows = page.locator("tr.policy")
    expect(rows).to_have_count(len(portal))
    for policy_no, premium in portal.values():
        row = page.locator(f'tr.policy[data-policy-no="{policy_no}"]')
        expect(row).to_contain_text(try_money(premium))
        expect(row.locator("td.status")).to_have_text("Yürürlükte")
    expect(page.locator("main")).not_to_contain_text(other_agency)
    shot(page, "imported")

    policy_no, premium = portal["deniz"]
    page.get_by_role("link", name=policy_no).click()
    expect(page.get_by_role("heading", name=f"Poliçe {policy_no}")).to_be_visible()
    expect(page.locator("dd.source")).to_have_text("Şirket listesinden")
    expect(page.locator(".imported-finding")).to_contain_text("Şirketin kendi kanalından (portal) düzenlenmiş")
    expect(page.locator("main")).to_contain_text("Platform dışından aktarıldı")
    expect(page.get_by_role("button", name="Yeniden teklif al")).to_have_count(0)  # no risk to quote from
    shot(page, "imported-policy")
    imported = Policy.objects.get(policy_no=policy_no)
    assert imported.agency == desk_agent.agent_profile.agency and imported.premium == premium
    assert Policy.objects.get(policy_no=other_agency).agency.code == "ACENTE2"
    assert PolicyFinding.objects.filter(kind=PolicyFinding.Kind.IMPORTED).count() == len(portal) + 1
