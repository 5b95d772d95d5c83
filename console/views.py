"""The operator console's pages: the health dashboard (an admin page), its "classify as" action, /metrics."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from console.health import (
    WINDOWS,
    HealthFilter,
    MinutePoint,
    attempts_per_minute,
    health_window,
    insurer_health,
    login_lockouts,
    provider_code_conclusions,
    reconciliation_health,
    retry_budgets,
    send_rates,
    unknown_codes_seen,
    work_sources,
)
from console.metrics import metrics_render
from integrations.answers.classification import MAPPING_CACHE_SECONDS
from integrations.answers.taxonomy import ErrorKind
from integrations.audit import LOOK_UP_ONLY_TR, error_mapping_classify
from integrations.models import Insurer
from integrations.operations import PRODUCT_LABELS_TR, Product

# What an operator picks from when classifying a code: the class first, so the choice reads as a decision.
KIND_LABELS_TR: dict[str, str] = {
    ErrorKind.THROTTLED: "geçici · kısıtlama (bekle, tekrar dene)",
    ErrorKind.UNAVAILABLE: "geçici · hizmet kullanılamıyor",
    ErrorKind.TIMEOUT: "geçici · zaman aşımı",
    ErrorKind.CONNECTION: "geçici · bağlantı hatası",
    ErrorKind.NOT_READY: "geçici · henüz hazır değil (bekle)",
    ErrorKind.VALIDATION: "kalıcı · geçersiz bilgi",
    ErrorKind.AUTH: "kalıcı · kimlik doğrulama",
    ErrorKind.NOT_ALLOWED: "kalıcı · yetki yok",
    ErrorKind.NOT_FOUND: "kalıcı · kayıt bulunamadı",
    ErrorKind.BUSINESS_REJECT: "kalıcı · şirket reddetti",
    ErrorKind.EXPIRED: "kalıcı · süresi dolmuş",
}


# Who may read the dashboard and /metrics over a session: what both show is the attempt log, summed.
DASHBOARD_PERMISSION = "integrations.view_attempt"


@require_GET
def health_dashboard(request: HttpRequest) -> HttpResponse:
    """Per insurer and product over a window: calls, outcomes, throttles, work records, unknown codes.

    The admin site lets any staff login in; the dashboard aggregates the attempt log, so it asks
    for the right to read that log (`integrations.view_attempt`), like `/metrics` does.
    """
    if not request.user.has_perm(DASHBOARD_PERMISSION):
        raise PermissionDenied
    window = health_window(request.GET.get("window"))
    insurers = list(Insurer.objects.order_by("code").values_list("code", "name"))
    insurer_code = request.GET.get("insurer", "")
    insurer_code = insurer_code if insurer_code in {code for code, _ in insurers} else ""
    product = request.GET.get("product", "")
    product = product if product in {p.value for p in Product} else ""
    health = HealthFilter.last(window, insurer_code=insurer_code, product=product)
    rows = insurer_health(health=health)
    labels = {source.name: source.label for source in work_sources()}
    context = {
        **admin.site.each_context(request),
        "title": "Sigorta şirketleri sağlık panosu",
        "window": window,
        "windows": WINDOWS.values(),
        "insurers": insurers,
        # Every table names an insurer by its name ("Anka Sigorta"); the code stays in data-insurer.
        "insurer_names": dict(insurers),
        "insurer_code": insurer_code,
        "products": [(p.value, PRODUCT_LABELS_TR[p]) for p in Product],
        "product": product,
        "now": health.now,
        "rows": rows,
        "work_rows": [
            (row, source, labels.get(source, source), counts) for row in rows for source, counts in row.work.items()
        ],
        "conclusions": provider_code_conclusions(health=health),
        "chart": minute_chart(attempts_per_minute(health=health)),
        "unknown_codes": unknown_codes_seen(health=health),
        "kind_choices": KIND_LABELS_TR.items(),
        "send_rates": send_rates(insurer_code=insurer_code),
        "budgets": retry_budgets(insurer_codes=[insurer_code] if insurer_code else [c for c, _ in insurers]),
        "filter_query": _filter_query(window.key, insurer_code, product),
        "mapping_cache_seconds": int(MAPPING_CACHE_SECONDS),
        "look_up_only_note": LOOK_UP_ONLY_TR,
        "lockouts": login_lockouts(since=health.since, now=health.now),
        "reconciliation": reconciliation_health(since=health.since, insurer_code=insurer_code),
    }
    return render(request, "console/health.html", context)


@require_POST
def unknown_code_classify(request: HttpRequest) -> HttpResponse:
    """The dashboard's "classify as …": creates (or updates) the admin's error mapping for one raw code."""
    if not (
        request.user.has_perm("integrations.add_errormapping")
        and request.user.has_perm("integrations.change_errormapping")
    ):
        raise PermissionDenied
    insurer_code = request.POST.get("insurer", "")
    provider_code = request.POST.get("provider_code", "")
    kind = request.POST.get("kind", "")
    try:
        mapping = error_mapping_classify(
            user=request.user,
            insurer_code=insurer_code,
            provider_code=provider_code,
            kind=kind,
            note="Sağlık panosundan sınıflandırıldı",
            risk_confirmed=request.POST.get("risk_confirmed") == "1",
        )
    except ValidationError as exc:
        messages.error(request, f"{insurer_code} / {provider_code} sınıflandırılamadı: {'; '.join(exc.messages)}")
    else:
        label = KIND_LABELS_TR.get(mapping.kind, mapping.kind)
        messages.success(
            request,
            f"{mapping.insurer.name} / {mapping.provider_code} artık “{label}” olarak sınıflanıyor; "
            f"tüm işçilerde en geç {MAPPING_CACHE_SECONDS:g} sn içinde geçerli olur.",
        )
    # Back to the dashboard as the operator was looking at it (rebuilt, never a caller-given URL).
    query = _filter_query(
        request.POST.get("window", ""), request.POST.get("filter_insurer", ""), request.POST.get("filter_product", "")
    )
    return HttpResponseRedirect(f"{reverse('integrations_health')}?{query}")


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format, for a session with `integrations.view_attempt` or
    `Authorization: Bearer <METRICS_TOKEN>`."""
    if not _metrics_allowed(request):
        if request.user.is_authenticated:
            raise PermissionDenied
        response = HttpResponse("Kimlik doğrulaması gerekli.\n", status=401, content_type="text/plain; charset=utf-8")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body, content_type = metrics_render()
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response


def _metrics_allowed(request: HttpRequest) -> bool:
    user = request.user
    if user.is_authenticated and user.is_active and user.has_perm(DASHBOARD_PERMISSION):
        return True
    token = getattr(settings, "METRICS_TOKEN", "")
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    # No token configured means no token access at all, never "any token". Compared as bytes:
    # compare_digest refuses non-ASCII text with a TypeError, which was a 500 for any caller.
    return (
        bool(token)
        and scheme.lower() == "bearer"
        and hmac.compare_digest(presented.strip().encode("utf-8", "surrogateescape"), token.encode("utf-8"))
    )


def _filter_query(window: str, insurer_code: str, product: str) -> str:
    params = {"window": health_window(window).key}
    if insurer_code and Insurer.objects.filter(code=insurer_code).exists():
        params["insurer"] = insurer_code
    if product in {p.value for p in Product}:
        params["product"] = product
    return urlencode(params)


@dataclass(frozen=True)
class MinuteChart:
    """An inline SVG of calls and throttles per minute: no script, no external library."""

    width: int
    height: int
    left: int
    top: int
    plot_width: int
    plot_height: int
    peak: int
    attempts_area: str
    attempts_line: str
    throttled_area: str
    throttled_line: str
    first_minute: datetime | None
    last_minute: datetime | None
    total_attempts: int
    total_throttled: int

    @property
    def bottom(self) -> int:
        return self.top + self.plot_height

    @property
    def right(self) -> int:
        return self.left + self.plot_width


def minute_chart(points: list[MinutePoint], *, width: int = 960, height: int = 220) -> MinuteChart:
    left, top, right_pad, bottom_pad = 48, 12, 12, 28
    plot_width, plot_height = width - left - right_pad, height - top - bottom_pad
    peak = max((p.attempts for p in points), default=0)
    scale = max(peak, 1)
    step = plot_width / max(len(points) - 1, 1)

    def xy(i: int, value: int) -> str:
        return f"{left + i * step:.1f},{top + plot_height * (1 - value / scale):.1f}"

    def line(values: list[int]) -> str:
        return " ".join(xy(i, v) for i, v in enumerate(values))

    def area(values: list[int]) -> str:
        if not values:
            return ""
        base = top + plot_height
        return f"{left:.1f},{base:.1f} {line(values)} {left + (len(values) - 1) * step:.1f},{base:.1f}"

    attempts = [p.attempts for p in points]
    throttled = [p.throttled for p in points]
    return MinuteChart(
        width=width,
        height=height,
        left=left,
        top=top,
        plot_width=plot_width,
        plot_height=plot_height,
        peak=peak,
        attempts_area=area(attempts),
        attempts_line=line(attempts),
        throttled_area=area(throttled),
        throttled_line=line(throttled),
        first_minute=timezone.localtime(points[0].minute) if points else None,
        last_minute=timezone.localtime(points[-1].minute) if points else None,
        total_attempts=sum(attempts),
        total_throttled=sum(throttled),
    )
