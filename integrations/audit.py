"""The audit trail of every change to what decides access or money: who, when, which row, each field from → to.

Audited: agencies and which agency each login works for, users (active, staff, superuser,
groups, permissions; the password only as "changed"), groups' permissions, and what tunes an
insurer (insurers, accounts, retry policies, error mappings); an app of a higher layer adds
its own rows with `audit_register` (the commission agreements). Model signals record every
save and delete of those rows, wherever it comes from: the admin (its forms, list-view edits,
bulk deletes, the rows a deleted insurer takes with it), a service such as the dashboard's
"classify as", a shell or a management command. So a new way of changing them cannot forget
to audit. What signals do not see: `QuerySet.update()`, `bulk_create()` and raw SQL on these
models — do not use them there.

Who: the logged-in user of the request being served (`AuditActorMiddleware`), or the user a
service names with `audit_actor(user)`; outside any request the entry says "system".

Entries are written in the caller's transaction: a change that rolls back leaves no entry
behind. (In autocommit, as in a shell, the entry follows the change at once.)

Secrets are never written here, not even encrypted or hashed: an entry only says they changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group
from django.contrib.auth.models import User as AuthUser
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models.signals import m2m_changed, post_save, pre_delete, pre_save
from django.http import HttpRequest, HttpResponse

from agencies.models import Agency, AgentProfile
from insurehub.masking import mask_and_cut
from integrations.answers.classification import clear_mapping_cache
from integrations.answers.taxonomy import ErrorClass, ErrorKind
from integrations.models import AdminChange, Attempt, ErrorMapping, Insurer, InsurerAccount, OperationPolicy

User = AuthUser | AnonymousUser | None

# Who an entry names when no request and no service says who: a shell, a command, a worker.
SYSTEM_ACTOR = "system"
# A request with nobody logged in (a password reset link, a rehash during a login).
ANONYMOUS_ACTOR = "anonim"

# Bookkeeping the database writes by itself: not anyone's decision.
UNAUDITED_FIELDS = frozenset({"id", "created_at", "updated_at"})


@dataclass(frozen=True)
class AuditSpec:
    """What of a model is audited. `fields=None`: every concrete field but the bookkeeping ones."""

    fields: tuple[str, ...] | None = None
    # Field -> (name shown in the entry, label). The value itself never leaves this module.
    secrets: dict[str, tuple[str, str]] = field(default_factory=dict)
    many_to_many: tuple[str, ...] = ()

    def field_names(self, model: type[models.Model]) -> list[str]:
        names = [f.name for f in model._meta.concrete_fields if f.name not in UNAUDITED_FIELDS]
        if self.fields is not None:
            names = [name for name in names if name in self.fields or name in self.secrets]
        return names


AUDIT_SPECS: dict[type[models.Model], AuditSpec] = {
    Insurer: AuditSpec(),
    InsurerAccount: AuditSpec(secrets={"credentials_encrypted": ("credentials", "kimlik bilgileri")}),
    OperationPolicy: AuditSpec(),
    ErrorMapping: AuditSpec(),
    Agency: AuditSpec(),
    AgentProfile: AuditSpec(),
    # Not last_login (every login writes it) nor names and e-mail: they decide nothing.
    get_user_model(): AuditSpec(
        fields=("username", "is_active", "is_staff", "is_superuser"),
        secrets={"password": ("password", "parola")},
        many_to_many=("groups", "user_permissions"),
    ),
    Group: AuditSpec(fields=("name",), many_to_many=("permissions",)),
}


def audited_models() -> tuple[type[models.Model], ...]:
    """Every audited model, those registered by other apps included."""
    return tuple(AUDIT_SPECS)


Snapshot = dict[str, Any]


# --- Who ------------------------------------------------------------------------------------

_current_request: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)
_named_actor: ContextVar[tuple[User] | None] = ContextVar("audit_actor", default=None)


class AuditActorMiddleware:
    """Lets audit entries name the request's user. `request.user` is read when an entry is
    written, not here: DRF's token authentication sets it only inside the view."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _current_request.set(request)
        try:
            return self.get_response(request)
        finally:
            _current_request.reset(token)


@contextmanager
def audit_actor(user: User) -> Iterator[None]:
    """Changes made inside are recorded as `user`'s (a service acting for someone it was handed)."""
    token = _named_actor.set((user,))
    try:
        yield
    finally:
        _named_actor.reset(token)


def audit_actor_current() -> tuple[AuthUser | None, str]:
    """The user an entry names now, and the name written beside it."""
    named = _named_actor.get()
    request = _current_request.get()
    if named is not None:
        user = named[0]
    elif request is not None:
        user = getattr(request, "user", None)
    else:
        return None, SYSTEM_ACTOR
    if user is not None and not isinstance(user, AnonymousUser) and user.is_authenticated:
        return user, user.get_username()
    return None, ANONYMOUS_ACTOR if request is not None else SYSTEM_ACTOR


# --- What -----------------------------------------------------------------------------------


def model_field(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    """`model`'s own field `name` (a column or a many-to-many), never a reverse relation."""
    found = model._meta.get_field(name)
    if not isinstance(found, models.Field):
        raise TypeError(f"{model.__name__}.{name} is a relation to it, not a field of its own")
    return found


def admin_change_snapshot(obj: models.Model) -> Snapshot:
    """The audited fields of `obj`, as JSON-ready values (related rows by their name)."""
    snapshot: Snapshot = {}
    for name in AUDIT_SPECS[type(obj)].field_names(type(obj)):
        own_field = model_field(type(obj), name)
        if own_field.is_relation:
            related = getattr(obj, name, None)
            snapshot[name] = str(related) if related is not None else None
        else:
            snapshot[name] = _json_ready(own_field.value_from_object(obj))
    return snapshot


def admin_change_record(
    *, action: str, obj: models.Model, before: Snapshot | None = None, after: Snapshot | None = None
) -> AdminChange | None:
    """Write one entry for `obj` naming the current actor; None for a "change" that changed nothing.

    `before` is required for change and delete, `after` for add and change; when omitted it is
    taken from `obj` as it is now.
    """
    if action != AdminChange.Action.DELETE and after is None:
        after = admin_change_snapshot(obj)
    if action == AdminChange.Action.DELETE and before is None:
        before = admin_change_snapshot(obj)
    # A deleted row's secrets go with it: nothing to say about them.
    changes = _diff(type(obj), before or {}, after or {}, secrets=action != AdminChange.Action.DELETE)
    if action == AdminChange.Action.CHANGE and not changes:
        return None
    return _entry_create(action=action, obj=obj, changes=changes)


def _entry_create(*, action: str, obj: models.Model, changes: list[dict[str, Any]]) -> AdminChange:
    user, username = audit_actor_current()
    return AdminChange.objects.create(
        user=user,
        username=username,
        action=action,
        model_name=obj._meta.model_name or "",  # every model has one; the stubs allow None
        object_id=str(obj.pk),
        object_repr=mask_and_cut(obj, 200),
        insurer_code=_insurer_code(obj),
        changes=changes,
    )


# --- Signals --------------------------------------------------------------------------------


# The signal handlers keep their notes (_audit_before, _audit_skip) on the row being saved: attributes
# no model declares, hence the ignores on their assignments.
def _before_save(sender: type[models.Model], instance: models.Model, raw: bool = False, **kwargs: Any) -> None:
    instance._audit_before = None  # type: ignore[attr-defined]
    instance._audit_skip = raw  # type: ignore[attr-defined]  # fixtures load data, nobody decides
    update_fields = kwargs.get("update_fields")
    audited = AUDIT_SPECS[sender].field_names(sender)
    if update_fields is not None and not set(update_fields) & set(audited):
        instance._audit_skip = True  # type: ignore[attr-defined]  # e.g. last_login at every login
        return
    if raw or instance._state.adding or instance.pk is None:
        return
    stored = sender._default_manager.filter(pk=instance.pk).first()
    instance._audit_before = admin_change_snapshot(stored) if stored is not None else None  # type: ignore[attr-defined]


def _after_save(sender: type[models.Model], instance: models.Model, created: bool, **kwargs: Any) -> None:
    if getattr(instance, "_audit_skip", False):
        return
    before = getattr(instance, "_audit_before", None)
    if created or before is None:
        admin_change_record(action=AdminChange.Action.ADD, obj=instance)
    else:
        admin_change_record(action=AdminChange.Action.CHANGE, obj=instance, before=before)
    instance._audit_before = None  # type: ignore[attr-defined]


def _before_delete(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    # Before, not after: the rows this one names (an account's insurer) may be gone afterwards.
    # Every cascaded row gets its own signal (a listener turns off Django's fast delete for it),
    # and the delete runs in a transaction, so a failed delete takes its entries back.
    admin_change_record(action=AdminChange.Action.DELETE, obj=instance)


def _names(owner: models.Model, field_name: str) -> list[str]:
    return sorted(str(related) for related in getattr(owner, field_name).all())


def _many_to_many_changed(
    sender: type[models.Model],
    instance: models.Model,
    action: str,
    reverse: bool,
    model: type[models.Model],
    pk_set: set[Any] | None,
    **kwargs: Any,
) -> None:
    owner_model, field_name = _THROUGH[sender]
    stash_name = f"_audit_m2m_{field_name}"
    if action.startswith("pre_"):
        if not reverse:
            owners = [instance]
        elif pk_set is not None:
            owners = list(owner_model._default_manager.filter(pk__in=pk_set))
        else:  # group.user_set.clear(): every user in the group loses it
            owners = list(owner_model._default_manager.filter(**{field_name: instance}))
        setattr(instance, stash_name, [(owner, _names(owner, field_name)) for owner in owners])
        return
    label = str(model_field(owner_model, field_name).verbose_name)
    for owner, before in getattr(instance, stash_name, []):
        after = _names(owner, field_name)
        if after != before:
            change = {"field": field_name, "label": label, "from": before, "to": after}
            _entry_create(action=AdminChange.Action.CHANGE, obj=owner, changes=[change])
    setattr(instance, stash_name, [])


_THROUGH: dict[type[models.Model], tuple[type[models.Model], str]] = {}


def _through_model(model: type[models.Model], name: str) -> type[models.Model]:
    """The model of the rows of `model`'s many-to-many field `name` (its `through`)."""
    many = model_field(model, name)
    through = many.remote_field.through if isinstance(many, models.ManyToManyField) else None
    if through is None:
        raise TypeError(f"{model.__name__}.{name} is audited as a many-to-many field and is not one")
    return through


def _connect(model: type[models.Model], spec: AuditSpec) -> None:
    uid = f"audit:{model._meta.label}"
    pre_save.connect(_before_save, sender=model, dispatch_uid=uid)
    post_save.connect(_after_save, sender=model, dispatch_uid=uid)
    pre_delete.connect(_before_delete, sender=model, dispatch_uid=uid)
    for name in spec.many_to_many:
        through = _through_model(model, name)
        _THROUGH[through] = (model, name)
        m2m_changed.connect(_many_to_many_changed, sender=through, dispatch_uid=f"{uid}.{name}")


for _model, _spec in AUDIT_SPECS.items():
    _connect(_model, _spec)


def audit_register(model: type[models.Model], spec: AuditSpec | None = None) -> None:
    """Audit `model` too, from its app's `AppConfig.ready()`: an app above this layer (the
    commission agreements) keeps its money-deciding rows in the same trail without this module
    importing it. Registering twice is harmless (the signals are connected by `dispatch_uid`)."""
    AUDIT_SPECS[model] = spec or AuditSpec()
    _connect(model, AUDIT_SPECS[model])


# --- Services -------------------------------------------------------------------------------


# What an admin is told before mapping a code to a permanent kind where that could make a second policy.
ISSUANCE_RISK_TR = (
    "{insurer} aynı poliçeleştirme isteğini ayıklamaz ve bu kod bir poliçeleştirme gönderiminin yanıtında "
    "görüldü. Kalıcı bir tür “poliçe kesilmedi” demektir: kayıt başarısız olur ve teklif talebi başka bir "
    "şirketle poliçeleştirmeye açılır. Kod aslında sonucu belirsiz bir yanıtsa (zaman aşımı, arka sistem "
    "hatası), poliçe şirkette kesilmiş olabilir ve yeniden deneme ikinci poliçe kestirebilir. Yalnızca şirket "
    "isteğin kendisini kesin olarak reddettiğinde kalıcı seçin."
)
ISSUANCE_RISK_CONFIRM_TR = "Bu riski anladığınızı onaylamadan bu kod kalıcı olarak sınıflanamaz."
# Shown beside a code seen only on issuance look-ups: its class never decides whether money moved.
LOOK_UP_ONLY_TR = (
    "Bu kod yalnızca poliçe sorgularında görüldü: sınıfı sorgunun yeniden sorulup sorulmayacağını belirler, "
    "poliçeleştirmenin sonucunu hiçbir zaman kanıtlamaz (sonuç, şirket açıkça söyleyene dek bilinmiyor kalır)."
)


def error_mapping_issuance_risk(*, insurer_code: str, provider_code: str) -> str:
    """Why mapping this code to a permanent kind could issue a second policy, or "".

    At an insurer that does not deduplicate issuance, a permanent answer to a send is read as
    "nothing was issued" (the record FAILED, its request free for another insurer, a replay sent
    under a new reference): mapping an ambiguous code there turns an unknown outcome into a
    definite refusal. Deduplicating insurers answer a repeat with the first send's result, and
    a code seen only on look-ups never proves anything, so neither is a risk.
    """
    from integrations.adapters.registry import adapter_class

    try:
        deduplicated = adapter_class(insurer_code).issuance_deduplicated
    except LookupError:
        return ""
    if deduplicated:
        return ""
    seen_on_send = Attempt.objects.filter(
        insurer_code=insurer_code, provider_code=provider_code, operation="issue_policy", call="main"
    ).exists()
    insurer = Insurer.objects.filter(code=insurer_code).values_list("name", flat=True).first() or insurer_code
    return ISSUANCE_RISK_TR.format(insurer=insurer) if seen_on_send else ""


def error_mapping_seen_on_look_ups_only(*, insurer_code: str, provider_code: str) -> bool:
    """The code was seen on issuance look-ups and on nothing else."""
    seen = Attempt.objects.filter(insurer_code=insurer_code, provider_code=provider_code)
    return seen.filter(call="lookup").exists() and not seen.exclude(call="lookup").exists()


def error_mapping_check(*, insurer_code: str, provider_code: str, kind: ErrorKind, risk_confirmed: bool) -> None:
    """Refuse a permanent mapping that could make a second policy unless the admin confirmed it."""
    if kind.error_class is not ErrorClass.PERMANENT or risk_confirmed:
        return
    risk = error_mapping_issuance_risk(insurer_code=insurer_code, provider_code=provider_code)
    if risk:
        raise ValidationError({"kind": f"{risk} {ISSUANCE_RISK_CONFIRM_TR}"})


def error_mapping_classify(
    *,
    user: User,
    insurer_code: str,
    provider_code: str,
    kind: str,
    note: str = "",
    risk_confirmed: bool = False,
) -> ErrorMapping:
    """Map an insurer's raw code to a kind (the dashboard's "classify as"): creates or updates, audited as `user`.

    Every worker reads admin mappings through a five-second cache, so the new class is in force
    everywhere within seconds; this process drops its cache at once. A permanent kind for a code
    seen on a send to an insurer that does not deduplicate needs `risk_confirmed`
    (`error_mapping_issuance_risk` says why).
    """
    try:
        chosen = ErrorKind(kind)
    except ValueError as exc:
        raise ValidationError({"kind": "Geçersiz hata türü."}) from exc
    if chosen is ErrorKind.UNCLASSIFIED:
        raise ValidationError({"kind": "Bir kodu yeniden 'sınıflanmamış' olarak eşlemek anlamsızdır."})
    insurer = Insurer.objects.filter(code=insurer_code).first()
    if insurer is None:
        raise ValidationError({"insurer": "Böyle bir sigorta şirketi yok."})
    error_mapping_check(
        insurer_code=insurer_code, provider_code=provider_code, kind=chosen, risk_confirmed=risk_confirmed
    )
    with transaction.atomic(), audit_actor(user):
        mapping = ErrorMapping.objects.select_for_update().filter(insurer=insurer, provider_code=provider_code).first()
        if mapping is None:
            mapping = ErrorMapping(insurer=insurer, provider_code=provider_code, kind=chosen.value, note=note)
        else:
            mapping.kind = chosen.value
            mapping.note = note or mapping.note
        mapping.full_clean()
        mapping.save()
        transaction.on_commit(clear_mapping_cache)
    return mapping


# --- Reading --------------------------------------------------------------------------------


def admin_change_summary(changes: list[dict[str, Any]]) -> str:
    """One line for a list view: `en fazla deneme: 3 → 1; kimlik bilgileri: değiştirildi`."""
    parts = []
    for change in changes:
        if change.get("secret"):
            parts.append(f"{change['label']}: değiştirildi")
        else:
            old, new = audit_value_shown(change.get("from")), audit_value_shown(change.get("to"))
            parts.append(f"{change['label']}: {old} → {new}")
    return "; ".join(parts)


def _diff(model: type[models.Model], before: Snapshot, after: Snapshot, *, secrets: bool) -> list[dict[str, Any]]:
    spec = AUDIT_SPECS[model]
    changes: list[dict[str, Any]] = []
    for name in spec.field_names(model):
        if name not in before and name not in after:
            continue
        old, new = before.get(name), after.get(name)
        if name in spec.secrets:
            if not secrets:
                continue
            # Fernet output (and a password hash's salt) differs every time: any new value is a change.
            if (old or "") != (new or ""):
                shown_name, label = spec.secrets[name]
                changes.append({"field": shown_name, "label": label, "secret": True})
            continue
        if old != new:
            label = str(model_field(model, name).verbose_name)
            changes.append({"field": name, "label": label, "from": old, "to": new})
    return changes


def _insurer_code(obj: models.Model) -> str:
    """The insurer a row belongs to, for the trail's filter: an insurer itself, or any audited row
    with an `insurer` (accounts, policies, mappings, an app's registered rows)."""
    if isinstance(obj, Insurer):
        return obj.code
    insurer = getattr(obj, "insurer", None)
    return insurer.code if isinstance(insurer, Insurer) else ""


def _json_ready(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def audit_value_shown(value: Any) -> str:
    """A recorded value as an operator reads it."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "evet" if value else "hayır"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    return str(value)
