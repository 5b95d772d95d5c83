"""The agency admin's page on the desk: the agency's agents, a form to add one, a switch per agent.

A desk page rather than a filtered Django admin: the admin site is for platform staff, and
keeping agency admins out of it (`is_staff` stays off) leaves nothing there to filter correctly.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from agencies.forms import AgentCreateForm
from agencies.services import agent_create, agent_set_active, managed_agents
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest


def _require_agency_admin(request: HttpRequest) -> None:
    profile = getattr(request.user, "agent_profile", None)
    if profile is None or not profile.is_agency_admin:
        raise PermissionDenied


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def agent_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    _require_agency_admin(request)
    form = AgentCreateForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        with desk_errors(form) as outcome:
            agent = agent_create(admin=request.user, **form.cleaned_data)
        if outcome.ok:
            messages.success(request, f"{agent.user.get_username()} eklendi.")
            return redirect("agency_agents")
    context = {"form": form, "agents": managed_agents(admin=request.user), "agency": request.user.agent_profile.agency}
    return render(request, "agencies/agent_list.html", context, status=400 if form.errors else 200)


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
