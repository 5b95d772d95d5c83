"""An agency admin's writes: adding the agency's agents and switching them off and on.

The agency always comes from the admin's own profile, never from the caller, so an agency admin
cannot name another agency; and only plain agents are managed here: staff logins and other
agency admins are the platform's to manage (Django admin), not the agency's.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from agencies.models import AgentProfile
from insurehub.errors import Forbidden, Invalid
from insurehub.person_names import person_name_problem


class AgentInvalid(Invalid):
    """The new agent's input has errors; nothing was saved. `errors` maps field -> messages."""


def _admin_profile(admin: User) -> AgentProfile:
    profile = getattr(admin, "agent_profile", None)
    if profile is None or not profile.is_agency_admin or not profile.agency.is_active:
        raise Forbidden("Bu işlem için acente yöneticisi olmalısınız.")
    return profile


def managed_agents(*, admin: User):
    """The agents an agency admin may manage: plain agents of their own agency."""
    profile = _admin_profile(admin)
    return (
        AgentProfile.objects.filter(
            agency_id=profile.agency_id,
            is_agency_admin=False,
            user__is_staff=False,
            user__is_superuser=False,
        )
        .select_related("user")
        .order_by("user__username")
    )


def agent_create(
    *, admin: User, username: str, password: str, first_name: str = "", last_name: str = ""
) -> AgentProfile:
    """A new plain agent of the admin's agency. Raises AgentInvalid keyed by field, in Turkish."""
    profile = _admin_profile(admin)
    user_model = get_user_model()
    username = username.strip()
    errors: dict[str, list[str]] = {}
    if not username:
        errors["username"] = ["Kullanıcı adı zorunludur."]
    else:
        try:
            user_model.username_validator(username)
        except ValidationError:
            errors["username"] = ["Kullanıcı adı yalnızca harf, rakam ve @ . + - _ içerebilir."]
        if user_model._default_manager.filter(username__iexact=username).exists():
            errors["username"] = ["Bu kullanıcı adı kullanılıyor."]
    for field, label, value in (("first_name", "Ad", first_name), ("last_name", "Soyad", last_name)):
        problem = person_name_problem(value, label=label)
        if problem:
            errors[field] = [problem]
    candidate = user_model(username=username, first_name=first_name.strip(), last_name=last_name.strip())
    try:
        validate_password(password, user=candidate)
    except ValidationError as invalid:
        errors["password"] = list(invalid.messages)
    if errors:
        raise AgentInvalid(errors)
    with transaction.atomic():
        candidate.set_password(password)
        candidate.save()
        return AgentProfile.objects.create(user=candidate, agency_id=profile.agency_id)


def agent_set_active(*, admin: User, agent_id: int, is_active: bool) -> AgentProfile:
    """Switch an agent's login off (or back on). Another agency's agent is DoesNotExist, like an unknown one.

    Deactivating, not deleting: the agent's requests and issuances keep pointing at the login.
    An inactive user's sessions and API tokens stop working at their next request.
    """
    agent = managed_agents(admin=admin).get(pk=agent_id)
    agent.user.is_active = is_active
    agent.user.save(update_fields=["is_active"])
    return agent
