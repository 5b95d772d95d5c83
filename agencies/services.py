"""An agency manager's writes: the agency's agents and sub-agencies (tali acente), added and
switched off and on.

The agency always comes from the manager's own profile, never from the caller, so a manager
cannot name another agency; and only plain agents are managed here: staff logins and other
agency admins are the platform's to manage (Django admin), not the agency's. The manager is the
agency's own staff: a sub-agency user is never an agency admin (`agent_role_problems`, and a
database constraint on `AgentProfile`).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count

from agencies.models import Agency, AgentProfile, SubAgency
from agencies.scope import is_agency_manager
from insurehub.errors import Forbidden, Invalid
from insurehub.model_fields import char_max_length
from insurehub.person_names import person_name_problem

SUB_AGENCY_ADMIN_MESSAGE = "Tali acente çalışanı acente yöneticisi olamaz."
SUB_AGENCY_OTHER_AGENCY_MESSAGE = "Tali acente, çalışanın acentesine ait olmalıdır."
SUB_AGENCY_CHOICE_MESSAGE = "Geçersiz tali acente seçimi."


class AgentInvalid(Invalid):
    """The new agent's input has errors; nothing was saved. `errors` maps field -> messages."""


class SubAgencyInvalid(Invalid):
    """The new sub-agency's input has errors; nothing was saved. `errors` maps field -> messages."""


def agent_role_problems(
    *, agency: Agency | None, sub_agency: SubAgency | None, is_agency_admin: bool
) -> dict[str, str]:
    """What is wrong with a login's place in an agency, by field, in Turkish: a sub-agency user
    who would be an agency admin (the manager sees and manages the whole agency, which a
    sub-agency user may not), or a sub-agency of another agency. The Django admin's profile form
    asks here; the desk's `agent_create` makes plain agents only (never admins, and only of the
    manager's own sub-agencies); the check constraint on `AgentProfile` holds for any other writer."""
    errors: dict[str, str] = {}
    if sub_agency is None:
        return errors
    if is_agency_admin:
        errors["is_agency_admin"] = SUB_AGENCY_ADMIN_MESSAGE
    if agency is not None and sub_agency.agency_id != agency.pk:
        errors["sub_agency"] = SUB_AGENCY_OTHER_AGENCY_MESSAGE
    return errors


def _admin_profile(admin: User) -> AgentProfile:
    profile = getattr(admin, "agent_profile", None)
    if profile is None or not is_agency_manager(admin) or not profile.agency.is_active:
        raise Forbidden("Bu işlem için acente yöneticisi olmalısınız.")
    return profile


def managed_agents(*, admin: User):
    """The agents an agency admin may manage: plain agents of their own agency, their own staff
    and the sub-agencies' users alike."""
    profile = _admin_profile(admin)
    return (
        AgentProfile.objects.filter(
            agency_id=profile.agency_id,
            is_agency_admin=False,
            user__is_staff=False,
            user__is_superuser=False,
        )
        .select_related("user", "sub_agency")
        .order_by("user__username")
    )


def managed_sub_agencies(*, admin: User):
    """The manager's agency's sub-agencies, active or not, with how many agents each has."""
    profile = _admin_profile(admin)
    return SubAgency.objects.filter(agency_id=profile.agency_id).annotate(agent_count=Count("agents")).order_by("name")


def agent_create(
    *,
    admin: User,
    username: str,
    password: str,
    first_name: str = "",
    last_name: str = "",
    sub_agency_id: int | None = None,
) -> AgentProfile:
    """A new plain agent of the admin's agency, of one of its active sub-agencies with
    `sub_agency_id` (none: the agency's own staff). Raises AgentInvalid keyed by field, in Turkish."""
    profile = _admin_profile(admin)
    user_model = get_user_model()
    username = username.strip()
    errors: dict[str, list[str]] = {}
    sub_agency = None
    if sub_agency_id is not None:
        sub_agency = SubAgency.objects.filter(pk=sub_agency_id, agency_id=profile.agency_id, is_active=True).first()
        if sub_agency is None:
            errors["sub_agency_id"] = [SUB_AGENCY_CHOICE_MESSAGE]
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
        return AgentProfile.objects.create(user=candidate, agency_id=profile.agency_id, sub_agency=sub_agency)


def agent_set_active(*, admin: User, agent_id: int, is_active: bool) -> AgentProfile:
    """Switch an agent's login off (or back on). Another agency's agent is DoesNotExist, like an unknown one.

    Deactivating, not deleting: the agent's requests and issuances keep pointing at the login.
    An inactive user's sessions and API tokens stop working at their next request.
    """
    agent = managed_agents(admin=admin).get(pk=agent_id)
    agent.user.is_active = is_active
    agent.user.save(update_fields=["is_active"])
    return agent


def agent_set_sub_agency(*, admin: User, agent_id: int, sub_agency_id: int | None) -> AgentProfile:
    """Move an agent into one of the agency's active sub-agencies (or, with None, back to the
    agency's own staff). Another agency's agent is DoesNotExist, like an unknown one; another
    agency's or a switched-off sub-agency is AgentInvalid on `sub_agency_id`.

    What the agent made before stays credited where it was made: the credit is fixed at the sale.
    """
    agent = managed_agents(admin=admin).get(pk=agent_id)
    sub_agency = None
    if sub_agency_id is not None:
        sub_agency = SubAgency.objects.filter(pk=sub_agency_id, agency_id=agent.agency_id, is_active=True).first()
        if sub_agency is None:
            raise AgentInvalid({"sub_agency_id": [SUB_AGENCY_CHOICE_MESSAGE]})
    agent.sub_agency = sub_agency
    agent.save(update_fields=["sub_agency"])
    return agent


def sub_agency_create(*, admin: User, code: str, name: str) -> SubAgency:
    """A new sub-agency (tali acente) of the manager's agency. Raises SubAgencyInvalid keyed by
    field, in Turkish: a code is letters, digits, - and _ and unique within the agency."""
    profile = _admin_profile(admin)
    code, name = code.strip().lower(), " ".join(name.split())
    errors: dict[str, list[str]] = {}
    code_max = char_max_length(SubAgency, "code")
    if not code:
        errors["code"] = ["Tali acente kodu zorunludur."]
    elif len(code) > code_max or not all(c.isascii() and (c.isalnum() or c in "-_") for c in code):
        errors["code"] = [f"Kod en fazla {code_max} karakter; yalnızca harf, rakam, - ve _ içerebilir."]
    elif SubAgency.objects.filter(agency_id=profile.agency_id, code=code).exists():
        errors["code"] = ["Bu kodla bir tali acenteniz zaten var."]
    if not name:
        errors["name"] = ["Tali acente adı zorunludur."]
    elif len(name) > char_max_length(SubAgency, "name"):
        errors["name"] = ["Tali acente adı en fazla 200 karakter olabilir."]
    if errors:
        raise SubAgencyInvalid(errors)
    try:
        with transaction.atomic():
            return SubAgency.objects.create(agency_id=profile.agency_id, code=code, name=name)
    except IntegrityError:
        # Two managers adding the same code at once meet the unique constraint.
        raise SubAgencyInvalid({"code": ["Bu kodla bir tali acenteniz zaten var."]}) from None


def sub_agency_set_active(*, admin: User, sub_agency_id: int, is_active: bool) -> SubAgency:
    """Switch a sub-agency off (or back on). Another agency's is DoesNotExist, like an unknown one.

    Deactivating, not deleting: what it sold stays credited to it. Its users' logins, sessions
    and API tokens stop working at their next request (`agencies.backends.agency_allows`).
    """
    sub_agency = managed_sub_agencies(admin=admin).get(pk=sub_agency_id)
    sub_agency.is_active = is_active
    sub_agency.save(update_fields=["is_active"])
    return sub_agency
