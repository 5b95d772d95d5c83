"""Who may see and act on which record: the one scope rule of the desk and the API (docs/agencies.md).

- An agency's own staff (`AgentProfile.sub_agency` null) see every record of their agency,
  whatever sub-agency it is credited to.
- A sub-agency user (tali acente, `AgentProfile.sub_agency` set) sees only the records credited
  to their sub-agency; the agency's own records and another sub-agency's are unknown ones.
- Reading every agency takes `quotes.view_all_agencies` (a head office); it is reading only:
  acting (issuing, changing, re-fetching) stays with the user's own scope.
- A user without an agency sees nothing.

Every selector narrows its queryset here, giving the path from its model to the agency and to
the sub-agency the record is credited to (`request__agency`, `policy__sub_agency`, ...), so the
rule is written once and a record outside the scope answers 404 exactly like one that does not
exist. A record that no sub-agency can own (a commission agreement) passes `sub_agency=None`:
the agency's staff see it, sub-agency users never do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from django.db.models import Model, Q, QuerySet

from insurehub.errors import NoActiveAgency

if TYPE_CHECKING:
    from agencies.models import Agency

# The head-office reading permission; named by string so this bottom layer imports no desk app.
VIEW_ALL_AGENCIES = "quotes.view_all_agencies"

NOTHING = Q(pk__in=[])

M = TypeVar("M", bound=Model)


def scope_q(user: Any, *, agency: str = "agency", sub_agency: str | None = "sub_agency", acting: bool = False) -> Q:
    """The records `user` may read (or, with `acting`, act on), as a filter on a model whose
    agency is at `agency` and whose credited sub-agency is at `sub_agency`."""
    if not acting and user.has_perm(VIEW_ALL_AGENCIES):
        return Q()
    profile = getattr(user, "agent_profile", None)
    if profile is None:
        return NOTHING
    within = Q(**{agency: profile.agency_id})
    if profile.sub_agency_id is None:
        return within
    if sub_agency is None:
        return NOTHING
    return within & Q(**{sub_agency: profile.sub_agency_id})


def scoped(
    queryset: QuerySet[M],
    *,
    user: Any,
    agency: str = "agency",
    sub_agency: str | None = "sub_agency",
    acting: bool = False,
) -> QuerySet[M]:
    """`queryset` narrowed to what `user` may read (or act on): `scope_q` applied."""
    return queryset.filter(scope_q(user, agency=agency, sub_agency=sub_agency, acting=acting))


def may_act_on(user: Any, *, agency_id: int | None, sub_agency_id: int | None) -> bool:
    """The same rule for one record in hand (a page deciding whether to offer "issue" or "edit"):
    the user's own agency, and their sub-agency's record if they work for one."""
    profile = getattr(user, "agent_profile", None)
    if profile is None or agency_id is None or profile.agency_id != agency_id:
        return False
    return profile.sub_agency_id is None or profile.sub_agency_id == sub_agency_id


def agency_of(user: Any) -> Agency:
    """The agency `user` works for (their new records are the agency's); a user without one
    may not act, which is said as `NoActiveAgency` (403), not as an empty result."""
    profile = getattr(user, "agent_profile", None)
    if profile is None:
        raise NoActiveAgency("Bu kullanıcı bir acenteye bağlı değil.")
    return profile.agency


def sub_agency_of(user: Any) -> Any:
    """The sub-agency `user` works for (their new records are credited to it), or None."""
    profile = getattr(user, "agent_profile", None)
    return profile.sub_agency if profile is not None and profile.sub_agency_id is not None else None


def is_agency_manager(user: Any) -> bool:
    """The agency's owner/manager role: `is_agency_admin` on the agency's own staff. A sub-agency
    user is never one (a database constraint holds it; checked here too for the record in hand)."""
    profile = getattr(user, "agent_profile", None)
    return profile is not None and profile.is_agency_admin and profile.sub_agency_id is None
