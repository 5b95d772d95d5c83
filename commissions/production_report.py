"""The agency's production report (üretim raporu): what it sold in a period, what that earned, what
came back, and how many of the policies falling due were renewed with it.

One reading of the numbers, shared by the desk page, its Excel file and the API:

- A policy counts in the period it was **issued** in (`issued_at`, Türkiye's calendar), and so do
  its cancellation, its refund and its commission's reversal, whenever they came: a month's row
  is that month's production and what became of it, so a January policy cancelled in March lowers
  January's net. The policy list filtered to the same policies sums to the same premiums.
- Money is the stored figures, summed: the premium as the insurer gave it, the refund the insurer
  answered to our cancellation (`policies.Cancellation.refund`; a policy found cancelled on the
  insurer's portal has none known), the commission entries (`PolicyCommission`) as reckoned and
  rounded once there (`commissions.services.kurus`). Nothing is rounded again here.
- Renewal rate: of the policies whose period ends in the report's range (cancelled ones left out:
  nothing is due), those for which the agency holds another policy of the same product on the
  same risk (the plate; DASK: the UAVT address code of its request) starting within
  `RENEWAL_MATCH_DAYS` of the old one's end. The platform does not link a renewal to the policy
  it renews (a renewal is a new quote request for the same risk, `quotes.services.renewals`), so
  the risk and the dates are the link.

Who may read it: the agency's admin among its own staff (a sub-agency's admin may not), for their
agency; head-office readers with `quotes.view_all_agencies`, for any agency.
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import DecimalField, OuterRef, Q, Subquery, Sum, Value
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce
from django.utils import timezone

from agencies.models import Agency, AgentProfile, SubAgency
from agencies.scope import is_agency_manager
from commissions.models import PolicyCommission
from insurehub.errors import Forbidden, Invalid, NotFound
from insurehub.spreadsheets import Cell, xlsx_table
from integrations.models import Insurer
from integrations.operations import PRODUCT_LABELS_TR, Product
from policies.models import Cancellation, Policy
from policies.periods import today
from quotes.services.policies import spreadsheet_safe
from work.item import WorkState

ZERO = Decimal("0.00")
RENEWAL_MATCH_DAYS = 30
MAX_RANGE_DAYS = 731  # two years of months: a page a manager reads, not a data dump
MONTHS_TR = (
    "Ocak",
    "Şubat",
    "Mart",
    "Nisan",
    "Mayıs",
    "Haziran",
    "Temmuz",
    "Ağustos",
    "Eylül",
    "Ekim",
    "Kasım",
    "Aralık",
)
# The sub-agency filter's value for what the agency sold itself (no sub-agency).
OWN_SALES = "acente"
OWN_SALES_TR = "Acente (doğrudan)"
NO_SELLER_TR = "Satan belli değil (aktarılan)"

MANAGERS_ONLY_TR = "Üretim raporunu yalnızca acente yöneticisi görebilir."
RANGE_REVERSED_TR = "Bitiş tarihi başlangıçtan önce olamaz."
RANGE_TOO_LONG_TR = "Tarih aralığı en fazla iki yıl olabilir."
NO_SUCH_AGENCY_TR = "Böyle bir acente yok."


def month_label(month: date) -> str:
    return f"{MONTHS_TR[month.month - 1]} {month.year}"


def month_short_label(month: date) -> str:
    """ "Şub 26": a month under a chart's column."""
    return f"{MONTHS_TR[month.month - 1][:3]} {month.year % 100:02d}"


def month_range(on: date) -> tuple[date, date]:
    """The first and last day of `on`'s month."""
    return on.replace(day=1), on.replace(day=calendar.monthrange(on.year, on.month)[1])


# --- who reads which agency ------------------------------------------------------------------


def report_agency_for(*, user: User, agency_code: str = "") -> Agency:
    """The agency whose report `user` reads: any (by `agency_code`) for head office; their own
    for the agency's admin among its own staff, another agency's code being one they cannot see
    (NotFound, as an unknown one). Anyone else: Forbidden."""
    profile: AgentProfile | None = getattr(user, "agent_profile", None)
    if user.has_perm("quotes.view_all_agencies"):
        if agency_code:
            agency = Agency.objects.filter(code=agency_code).first()
        elif profile is not None:
            agency = profile.agency
        else:
            agency = Agency.objects.order_by("name").first()
        if agency is None:
            raise NotFound(NO_SUCH_AGENCY_TR)
        return agency
    if profile is None or not is_agency_manager(user):
        raise Forbidden(MANAGERS_ONLY_TR)
    if agency_code and agency_code != profile.agency.code:
        raise NotFound(NO_SUCH_AGENCY_TR)
    return profile.agency


def report_agencies_for(*, user: User) -> list[Agency]:
    """The agencies `user` may pick on the report: all for head office, else none to pick."""
    return list(Agency.objects.order_by("name")) if user.has_perm("quotes.view_all_agencies") else []


def report_sellers(*, agency: Agency) -> list[tuple[int, str]]:
    """(user id, name) of everyone who may have sold for the agency: its agents, and whoever a
    policy of it names as its seller."""
    ids = set(AgentProfile.objects.filter(agency=agency).values_list("user_id", flat=True))
    ids |= set(
        Policy.objects.filter(agency=agency, sold_by__isnull=False).values_list("sold_by_id", flat=True).distinct()
    )
    users = get_user_model().objects.filter(pk__in=ids).order_by("username")
    return [(user.pk, _person(user)) for user in users]


def _person(user: User | None) -> str:
    if user is None:
        return NO_SELLER_TR
    full = user.get_full_name().strip() if hasattr(user, "get_full_name") else ""
    return f"{full} ({user.get_username()})" if full else user.get_username()


# --- the filter ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFilter:
    """The report's filters: the agency (already checked for the reader), the range of issue days
    (both included, Türkiye's calendar), and optional insurer code, product, seller (a user id)
    and sub-agency (an id, or `OWN_SALES` for what the agency sold itself)."""

    agency: Agency
    date_from: date
    date_to: date
    insurer: str = ""
    product: str = ""
    sold_by_id: int | None = None
    sub_agency: str = ""

    def policies(self) -> Q:
        """The policies these filters keep, whatever their dates."""
        q = Q(agency=self.agency)
        if self.insurer:
            q &= Q(insurer__code=self.insurer)
        if self.product:
            q &= Q(product=self.product)
        if self.sold_by_id is not None:
            q &= Q(sold_by_id=self.sold_by_id)
        if self.sub_agency == OWN_SALES:
            q &= Q(sub_agency__isnull=True)
        elif self.sub_agency:
            q &= Q(sub_agency_id=int(self.sub_agency))
        return q


def report_filter_make(
    *,
    agency: Agency,
    date_from: date | None = None,
    date_to: date | None = None,
    insurer: str = "",
    product: str = "",
    sold_by_id: int | None = None,
    sub_agency: str = "",
) -> ReportFilter:
    """The filter, checked: the range defaults to this month; a reversed or over-long range, an
    unknown insurer, product or sub-agency of another agency is Invalid, naming the field."""
    first, last = month_range(today())
    date_from = date_from or (date_to.replace(day=1) if date_to else first)
    date_to = date_to or (month_range(date_from)[1] if date_from != first else last)
    errors: dict[str, str] = {}
    if date_to < date_from:
        errors["date_to"] = RANGE_REVERSED_TR
    elif (date_to - date_from).days > MAX_RANGE_DAYS:
        errors["date_to"] = RANGE_TOO_LONG_TR
    if insurer and not Insurer.objects.filter(code=insurer).exists():
        errors["insurer"] = "Böyle bir sigorta şirketi yok."
    if product and product not in {p.value for p in Product}:
        errors["product"] = "Ürün trafik, kasko veya dask olmalıdır."
    if sub_agency and sub_agency != OWN_SALES:
        if not sub_agency.isdigit() or not SubAgency.objects.filter(pk=int(sub_agency), agency=agency).exists():
            errors["sub_agency"] = "Böyle bir tali acente yok."
    if errors:
        raise Invalid(errors)
    return ReportFilter(
        agency=agency,
        date_from=date_from,
        date_to=date_to,
        insurer=insurer,
        product=product,
        sold_by_id=sold_by_id,
        sub_agency=sub_agency,
    )


# --- the figures -----------------------------------------------------------------------------


@dataclass
class Figures:
    """One row of the report. Commission figures are the entries' sums: `commission` what was
    earned at issuance, `commission_reversed` (≤ 0) what cancellations gave back, each with the
    sub-agency's part; the agency's part is the rest."""

    policies: int = 0
    premium: Decimal = ZERO
    commission: Decimal = ZERO
    sub_agency_commission: Decimal = ZERO
    cancellations: int = 0
    refunds: Decimal = ZERO
    commission_reversed: Decimal = ZERO
    sub_agency_reversed: Decimal = ZERO

    def add(self, row: dict) -> None:
        self.policies += 1
        self.premium += row["premium"] or ZERO
        self.commission += row["accrual"]
        self.sub_agency_commission += row["accrual_sub"]
        self.cancellations += row["status"] == Policy.Status.CANCELLED
        self.refunds += row["refund"]
        self.commission_reversed += row["reversal"]
        self.sub_agency_reversed += row["reversal_sub"]

    @property
    def agency_commission(self) -> Decimal:
        return self.commission - self.sub_agency_commission

    @property
    def net_premium(self) -> Decimal:
        return self.premium - self.refunds

    @property
    def net_commission(self) -> Decimal:
        return self.commission + self.commission_reversed

    @property
    def net_sub_agency_commission(self) -> Decimal:
        return self.sub_agency_commission + self.sub_agency_reversed

    @property
    def net_agency_commission(self) -> Decimal:
        return self.net_commission - self.net_sub_agency_commission

    def as_dict(self) -> dict[str, object]:
        names = (
            "policies",
            "premium",
            "commission",
            "agency_commission",
            "sub_agency_commission",
            "cancellations",
            "refunds",
            "commission_reversed",
            "sub_agency_reversed",
            "net_premium",
            "net_commission",
            "net_agency_commission",
            "net_sub_agency_commission",
        )
        return {name: getattr(self, name) for name in names}


@dataclass
class Group:
    key: str
    label: str
    figures: Figures = field(default_factory=Figures)


@dataclass(frozen=True)
class Renewals:
    due: int
    renewed: int

    @property
    def rate(self) -> Decimal | None:
        """Percent, one decimal (half-up); None when nothing fell due."""
        if not self.due:
            return None
        return (Decimal(self.renewed) * 100 / self.due).quantize(Decimal("0.1"))


@dataclass(frozen=True)
class ProductionReport:
    filter: ReportFilter
    total: Figures
    by_month: list[Group]
    by_insurer: list[Group]
    by_product: list[Group]
    by_agent: list[Group]
    by_sub_agency: list[Group]
    renewals: Renewals

    def breakdowns(self) -> list[tuple[str, str, list[Group]]]:
        """(key, Turkish title, groups) of each breakdown, in the order the page and the file show."""
        return [
            ("month", "Ay", self.by_month),
            ("insurer", "Sigorta şirketi", self.by_insurer),
            ("product", "Ürün", self.by_product),
            ("agent", "Satan", self.by_agent),
            ("sub_agency", "Tali acente", self.by_sub_agency),
        ]


def _entry_sum(kind: str, column: str) -> Coalesce:
    entries = PolicyCommission.objects.filter(policy=OuterRef("pk"), kind=kind).values(column)[:1]
    return Coalesce(Subquery(entries), Value(ZERO), output_field=DecimalField(max_digits=12, decimal_places=2))


def _rows(report_filter: ReportFilter) -> list[dict]:
    refund = (
        Cancellation.objects.filter(policy=OuterRef("pk"), state=WorkState.SUBMITTED, refund__isnull=False)
        .order_by()
        .values("policy")
        .annotate(total=Sum("refund"))
        .values("total")[:1]
    )
    accrual, reversal = PolicyCommission.Kind.ACCRUAL, PolicyCommission.Kind.REVERSAL
    return list(
        Policy.objects.filter(
            report_filter.policies(),
            issued_at__date__gte=report_filter.date_from,
            issued_at__date__lte=report_filter.date_to,
        )
        .annotate(
            refund=Coalesce(Subquery(refund), Value(ZERO), output_field=DecimalField(max_digits=12, decimal_places=2)),
            accrual=_entry_sum(accrual, "amount"),
            accrual_sub=_entry_sum(accrual, "sub_agency_amount"),
            reversal=_entry_sum(reversal, "amount"),
            reversal_sub=_entry_sum(reversal, "sub_agency_amount"),
        )
        .values(
            "pk",
            "issued_at",
            "insurer_id",
            "product",
            "sold_by_id",
            "sub_agency_id",
            "premium",
            "status",
            "refund",
            "accrual",
            "accrual_sub",
            "reversal",
            "reversal_sub",
        )
        .order_by("issued_at", "pk")
    )


def _grouped(
    rows: Iterable[dict], key: Callable[[dict], Any], label: Callable[[Any], str], keys: Iterable = ()
) -> list[Group]:
    """The rows summed per `key` (its `label` shown); `keys` first, in order, even when empty."""
    groups: dict[Any, Group] = {k: Group(key=str(k), label=label(k)) for k in keys}
    for row in rows:
        k = key(row)
        if k not in groups:
            groups[k] = Group(key="" if k is None else str(k), label=label(k))
        groups[k].figures.add(row)
    return list(groups.values())


def _months(date_from: date, date_to: date) -> list[date]:
    months, month = [], date_from.replace(day=1)
    while month <= date_to:
        months.append(month)
        month = (month + timedelta(days=32)).replace(day=1)
    return months


def _renewals(report_filter: ReportFilter) -> Renewals:
    uavt = KeyTextTransform("uavt_code", "issuance__quote_request__input_data")
    due = list(
        Policy.objects.filter(
            report_filter.policies(),
            ends_on__gte=report_filter.date_from,
            ends_on__lte=report_filter.date_to,
        )
        .exclude(status=Policy.Status.CANCELLED)
        .annotate(uavt=uavt)
        .values("pk", "product", "plate", "uavt", "ends_on")
    )

    def risk(row: dict) -> tuple[str, str] | None:
        value = row["uavt"] if row["product"] == Product.DASK else row["plate"]
        return (row["product"], value) if value else None

    keyed = [(row, risk(row)) for row in due]
    risks = {key for _, key in keyed if key is not None}
    if not risks:
        return Renewals(due=len(due), renewed=0)
    window = timedelta(days=RENEWAL_MATCH_DAYS)
    earliest = min(row["ends_on"] for row in due) - window
    latest = max(row["ends_on"] for row in due) + window
    plates = {value for product, value in risks if product != Product.DASK}
    uavts = {value for product, value in risks if product == Product.DASK}
    successors: dict[tuple[str, str], list[tuple[int, date]]] = defaultdict(list)
    candidates = (
        Policy.objects.annotate(uavt=uavt)
        .filter(
            (Q(plate__in=plates) & ~Q(product=Product.DASK)) | (Q(product=Product.DASK) & Q(uavt__in=uavts)),
            agency=report_filter.agency,
            starts_on__gte=earliest,
            starts_on__lte=latest,
        )
        .values("pk", "product", "plate", "uavt", "starts_on")
    )
    for row in candidates:
        key = risk(row)
        if key is not None:
            successors[key].append((row["pk"], row["starts_on"]))

    def is_renewed(row: dict, key: tuple[str, str] | None) -> bool:
        return key is not None and any(
            pk != row["pk"] and abs((starts - row["ends_on"]).days) <= RENEWAL_MATCH_DAYS
            for pk, starts in successors[key]
        )

    renewed = sum(1 for row, key in keyed if is_renewed(row, key))
    return Renewals(due=len(due), renewed=renewed)


def production_report(*, report_filter: ReportFilter) -> ProductionReport:
    """The report for `report_filter` (checked by `report_filter_make`, its agency by
    `report_agency_for`)."""
    rows = _rows(report_filter)
    total = Figures()
    for row in rows:
        total.add(row)
    insurers = dict(Insurer.objects.values_list("pk", "name"))
    sub_agencies = dict(SubAgency.objects.filter(agency=report_filter.agency).values_list("pk", "name"))
    seller_ids = {row["sold_by_id"] for row in rows if row["sold_by_id"] is not None}
    sellers = {user.pk: user for user in get_user_model().objects.filter(pk__in=seller_ids)}

    def product_label(code: str) -> str:
        try:
            return PRODUCT_LABELS_TR[Product(code)]
        except ValueError:
            return str(code)

    def by_label(groups: list[Group]) -> list[Group]:
        return sorted(groups, key=lambda group: (-group.figures.premium, group.label))

    return ProductionReport(
        filter=report_filter,
        total=total,
        by_month=_grouped(
            rows,
            lambda row: timezone.localtime(row["issued_at"]).date().replace(day=1),
            month_label,
            keys=_months(report_filter.date_from, report_filter.date_to),
        ),
        by_insurer=by_label(_grouped(rows, lambda row: row["insurer_id"], lambda pk: insurers.get(pk, str(pk)))),
        by_product=by_label(_grouped(rows, lambda row: row["product"], product_label)),
        by_agent=by_label(_grouped(rows, lambda row: row["sold_by_id"], lambda pk: _person(sellers.get(pk)))),
        by_sub_agency=by_label(
            _grouped(
                rows,
                lambda row: row["sub_agency_id"],
                lambda pk: OWN_SALES_TR if pk is None else sub_agencies.get(pk, str(pk)),
            )
        ),
        renewals=_renewals(report_filter),
    )


# --- the file --------------------------------------------------------------------------------

EXPORT_HEADER = (
    "Kırılım",
    "Değer",
    "Poliçe",
    "Brüt prim (TL)",
    "Komisyon (TL)",
    "Acente komisyonu (TL)",
    "Tali acente komisyonu (TL)",
    "İptal",
    "İade primi (TL)",
    "Komisyon iadesi (TL)",
    "Net prim (TL)",
    "Net komisyon (TL)",
    "Net acente komisyonu (TL)",
    "Net tali acente komisyonu (TL)",
)


def _figure_cells(figures: Figures) -> tuple[Cell, ...]:
    return (
        figures.policies,
        figures.premium,
        figures.commission,
        figures.agency_commission,
        figures.sub_agency_commission,
        figures.cancellations,
        figures.refunds,
        figures.commission_reversed,
        figures.net_premium,
        figures.net_commission,
        figures.net_agency_commission,
        figures.net_sub_agency_commission,
    )


def production_report_rows(report: ProductionReport) -> list[tuple[Cell, ...]]:
    """The report as the file's rows: the total, each breakdown's groups, and the renewal rate."""
    period = f"{report.filter.date_from:%d.%m.%Y}–{report.filter.date_to:%d.%m.%Y}"
    rows: list[tuple[Cell, ...]] = [("Toplam", period, *_figure_cells(report.total))]
    for _, title, groups in report.breakdowns():
        rows += [(title, spreadsheet_safe(group.label), *_figure_cells(group.figures)) for group in groups]
    renewals = report.renewals
    rate = "–" if renewals.rate is None else f"%{renewals.rate}".replace(".", ",")
    rows.append(("Yenileme oranı", f"{rate} ({renewals.renewed} / {renewals.due})"))
    return rows


def production_report_xlsx(report: ProductionReport) -> bytes:
    """The report as an Excel workbook, made as every export's is (`insurehub.spreadsheets`)."""
    return xlsx_table(sheet_title="Üretim raporu", header=EXPORT_HEADER, rows=production_report_rows(report))


def production_report_filename(report: ProductionReport) -> str:
    f = report.filter
    return f"uretim-raporu-{f.agency.code}-{f.date_from:%Y%m%d}-{f.date_to:%Y%m%d}.xlsx"
