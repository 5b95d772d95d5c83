"""The agency manager's page on the desk: the agency's agents and sub-agencies (tali acente),
a form to add each, a switch per row.

A desk page rather than a filtered Django admin: the admin site is for platform staff, and
keeping agency admins out of it (`is_staff` stays off) leaves nothing there to filter correctly.
Only the agency's manager opens it (`agencies.scope.is_agency_manager`: a sub-agency user never
is one).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from agencies.forms import AgentCreateForm, AgentMoveForm, SubAgencyCreateForm
from agencies.scope import is_agency_manager
from agencies.services import (
    agent_create,
    agent_set_active,
    agent_set_sub_agency,
    managed_agents,
    managed_sub_agencies,
    sub_agency_create,
    sub_agency_set_active,
)
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest


def _require_agency_admin(request: HttpRequest) -> None:
    if not is_agency_manager(request.user):
        raise PermissionDenied


def _page(
    request: AuthenticatedHttpRequest,
    *,
    agent_form: AgentCreateForm | None = None,
    sub_agency_form: SubAgencyCreateForm | None = None,
) -> HttpResponse:
    sub_agencies = list(managed_sub_agencies(admin=request.user))
    context = {
        "form": agent_form or AgentCreateForm(sub_agencies=sub_agencies),
        "sub_agency_form": sub_agency_form or SubAgencyCreateForm(),
        "agents": managed_agents(admin=request.user),
        "sub_agencies": sub_agencies,
        "agency": request.user.agent_profile.agency,
    }
    failed = (agent_form is not None and agent_form.errors) or (sub_agency_form is not None and sub_agency_form.errors)
    return render(request, "agencies/agent_list.html", context, status=400 if failed else 200)


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def agent_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    _require_agency_admin(request)
    if request.method != "POST":
        return _page(request)
    form = AgentCreateForm(request.POST, sub_agencies=managed_sub_agencies(admin=request.user))
    if form.is_valid():
        with desk_errors(form) as outcome:
            agent = agent_create(admin=request.user, **form.cleaned_data)
        if outcome.ok:
            messages.success(request, f"{agent.user.get_username()} eklendi.")
            return redirect("agency_agents")
    return _page(request, agent_form=form)


@login_required
@require_POST
@desk_errors
def agent_toggle(request: AuthenticatedHttpRequest, agent_id: int) -> HttpResponse:
    _require_agency_admin(request)
    is_active = request.POST.get("aktif") == "1"
    agent = agent_set_active(admin=request.user, agent_id=agent_id, is_active=is_active)
    state = "etkinleştirildi" if is_active else "pasifleştirildi"
    messages.success(request, f"{agent.user.get_username()} {state}.")
    return redirect("agency_agents")


@login_required
@require_POST
@desk_errors
def agent_move(request: AuthenticatedHttpRequest, agent_id: int) -> HttpResponse:
    """An agent moved into a sub-agency, or back to the agency's own staff (a blank choice)."""
    _require_agency_admin(request)
    form = AgentMoveForm(request.POST, sub_agencies=managed_sub_agencies(admin=request.user))
    if not form.is_valid():
        messages.error(request, "Geçersiz tali acente seçimi.")
        return redirect("agency_agents")
    agent = agent_set_sub_agency(
        admin=request.user, agent_id=agent_id, sub_agency_id=form.cleaned_data["sub_agency_id"]
    )
    where = agent.sub_agency.name if agent.sub_agency else "acentenin kendisi"
    messages.success(request, f"{agent.user.get_username()}: {where}.")
    return redirect("agency_agents")


@login_required
@require_POST
@desk_errors
def sub_agency_add(request: AuthenticatedHttpRequest) -> HttpResponse:
    _require_agency_admin(request)
    form = SubAgencyCreateForm(request.POST)
    if form.is_valid():
        with desk_errors(form) as outcome:
            sub_agency = sub_agency_create(admin=request.user, **form.cleaned_data)
        if outcome.ok:
            messages.success(request, f"{sub_agency.name} tali acentesi eklendi.")
            return redirect("agency_agents")
    return _page(request, sub_agency_form=form)


@login_required
@require_POST
@desk_errors
def sub_agency_toggle(request: AuthenticatedHttpRequest, sub_agency_id: int) -> HttpResponse:
    _require_agency_admin(request)
    is_active = request.POST.get("aktif") == "1"
    sub_agency = sub_agency_set_active(admin=request.user, sub_agency_id=sub_agency_id, is_active=is_active)
    state = "etkinleştirildi" if is_active else "pasifleştirildi"
    messages.success(request, f"{sub_agency.name} tali acentesi {state}.")
    return redirect("agency_agents")
