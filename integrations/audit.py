"""The audit trail of operator changes: who changed which tuning row, when, each field from → to.

The admin calls these services for every add, change and delete (forms, list-view edits,
bulk deletes, the rows a deleted insurer takes with it), and so does the health dashboard's
"classify as" button. Entries are written in the caller's transaction: a change that rolls
back leaves no entry behind.

Credentials are never written here, not even encrypted: an entry only says they changed.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db import models, router, transaction
from django.db.models.deletion import Collector

from integrations.classification import clear_mapping_cache
from integrations.models import AdminChange, ErrorMapping, Insurer, InsurerAccount, OperationPolicy
from integrations.taxonomy import ErrorKind

AUDITED_MODELS: tuple[type[models.Model], ...] = (Insurer, InsurerAccount, OperationPolicy, ErrorMapping)

# Field -> (name shown in the entry, label). The value itself never leaves this module.
SECRET_FIELDS = {"credentials_encrypted": ("credentials", "kimlik bilgileri")}

# Bookkeeping the database writes by itself: not an operator's change.
UNAUDITED_FIELDS = frozenset({"id", "created_at", "updated_at"})

Snapshot = dict[str, Any]
User = AbstractBaseUser | AnonymousUser | None


def admin_change_snapshot(obj: models.Model) -> Snapshot:
    """The operator-set fields of `obj`, as JSON-ready values (related rows by their name)."""
    snapshot: Snapshot = {}
    for field in obj._meta.concrete_fields:
        if field.name in UNAUDITED_FIELDS:
            continue
        if field.is_relation:
            related = getattr(obj, field.name, None)
            snapshot[field.name] = str(related) if related is not None else None
        else:
            snapshot[field.name] = _json_ready(field.value_from_object(obj))
    return snapshot


def admin_change_record(
    *,
    user: User,
    action: str,
    obj: models.Model,
    before: Snapshot | None = None,
    after: Snapshot | None = None,
) -> AdminChange | None:
    """Write one entry; returns None for a "change" that changed nothing.

    `before` is required for change and delete, `after` for add and change; when omitted it is
    taken from `obj` as it is now.
    """
    if action != AdminChange.Action.DELETE and after is None:
        after = admin_change_snapshot(obj)
    if action == AdminChange.Action.DELETE and before is None:
        before = admin_change_snapshot(obj)
    # A deleted account's credentials go with it: nothing to say about them.
    changes = _diff(type(obj), before or {}, after or {}, secrets=action != AdminChange.Action.DELETE)
    if action == AdminChange.Action.CHANGE and not changes:
        return None
    authenticated = user is not None and user.is_authenticated
    return AdminChange.objects.create(
        user=user if authenticated else None,
        username=user.get_username() if authenticated else "",
        action=action,
        model_name=obj._meta.model_name,
        object_id=str(obj.pk),
        object_repr=str(obj)[:200],
        insurer_code=_insurer_code(obj),
        changes=changes,
    )


def admin_change_record_delete(*, user: User, obj: models.Model) -> list[AdminChange]:
    """Entries for `obj` and every audited row its deletion cascades to (an insurer's policies...).

    Call before deleting: afterwards the rows are gone.
    """
    collector = Collector(using=router.db_for_write(type(obj)))
    collector.collect([obj])
    doomed: list[models.Model] = [obj]
    for model, instances in collector.data.items():
        if model in AUDITED_MODELS:
            doomed.extend(i for i in instances if not (type(i) is type(obj) and i.pk == obj.pk))
    for queryset in collector.fast_deletes:
        if queryset.model in AUDITED_MODELS:
            doomed.extend(queryset)
    entries = []
    for row in doomed:
        entry = admin_change_record(user=user, action=AdminChange.Action.DELETE, obj=row)
        if entry is not None:
            entries.append(entry)
    return entries


def error_mapping_classify(
    *, user: User, insurer_code: str, provider_code: str, kind: str, note: str = ""
) -> ErrorMapping:
    """Map an insurer's raw code to a kind (the dashboard's "classify as"): creates or updates, audited.

    Every worker reads admin mappings through a five-second cache, so the new class is in force
    everywhere within seconds; this process drops its cache at once.
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
    with transaction.atomic():
        mapping = ErrorMapping.objects.select_for_update().filter(insurer=insurer, provider_code=provider_code).first()
        if mapping is None:
            mapping = ErrorMapping(insurer=insurer, provider_code=provider_code, kind=chosen.value, note=note)
            mapping.full_clean()
            mapping.save()
            admin_change_record(user=user, action=AdminChange.Action.ADD, obj=mapping)
        else:
            before = admin_change_snapshot(mapping)
            mapping.kind = chosen.value
            mapping.note = note or mapping.note
            mapping.full_clean()
            mapping.save()
            admin_change_record(user=user, action=AdminChange.Action.CHANGE, obj=mapping, before=before)
        transaction.on_commit(clear_mapping_cache)
    return mapping


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
    changes: list[dict[str, Any]] = []
    for field in model._meta.concrete_fields:
        name = field.name
        if name not in before and name not in after:
            continue
        old, new = before.get(name), after.get(name)
        if name in SECRET_FIELDS:
            if not secrets:
                continue
            # Fernet output differs on every encryption, so any new ciphertext is a real change.
            if (old or "") != (new or ""):
                shown_name, label = SECRET_FIELDS[name]
                changes.append({"field": shown_name, "label": label, "secret": True})
            continue
        if old != new:
            changes.append({"field": name, "label": str(field.verbose_name), "from": old, "to": new})
    return changes


def _insurer_code(obj: models.Model) -> str:
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
