"""Writes on customers: create and update, always inside the acting agent's own scope: their
agency, and for a sub-agency user their sub-agency, which a new customer is credited to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from agencies.models import Agency
from agencies.scope import may_act_on, sub_agency_of
from customers.models import Customer
from customers.validators import CUSTOMER_FIELDS, validate_customer
from insurehub.errors import Invalid, NoActiveAgency
from insurehub.masking import mask_identity

DUPLICATE_IDENTITY_MESSAGE = "Bu T.C. kimlik / vergi numarasıyla kayıtlı bir müşteriniz zaten var."
NO_AGENCY_MESSAGE = "Bu kullanıcı bir acenteye bağlı değil; müşteri kaydedemez."
AGENCY_INACTIVE_MESSAGE = "Acenteniz pasif durumda; müşteri kaydedilemez."


class CustomerInvalid(Invalid):
    """The input has errors; nothing was saved. `errors` maps field -> Turkish message."""


def customer_agency(user: User) -> Agency:
    """The agency a user writes customers for. Reading every agency (`quotes.view_all_agencies`)
    is not acting for one: a user without an agency of their own writes nothing."""
    profile = getattr(user, "agent_profile", None)
    if profile is None:
        raise NoActiveAgency(NO_AGENCY_MESSAGE)
    if not profile.agency.is_active:
        raise NoActiveAgency(AGENCY_INACTIVE_MESSAGE)
    return profile.agency


def customer_may_write(user: User) -> bool:
    try:
        customer_agency(user)
    except NoActiveAgency:
        return False
    return True


def _identity_taken(agency: Agency, identity_no: str, *, exclude_pk: int | None = None) -> bool:
    same = Customer.objects.filter(agency=agency, identity_no=identity_no)
    if exclude_pk is not None:
        same = same.exclude(pk=exclude_pk)
    return same.exists()


def _save(customer: Customer) -> Customer:
    """The unique constraint is the rule; the check before it only words the common case. Two
    agents saving the same new customer at once meet the constraint, answered the same way."""
    if _identity_taken(customer.agency, customer.identity_no, exclude_pk=customer.pk):
        raise CustomerInvalid({"identity_no": DUPLICATE_IDENTITY_MESSAGE})
    try:
        with transaction.atomic():
            customer.save()
    except IntegrityError:
        raise CustomerInvalid({"identity_no": DUPLICATE_IDENTITY_MESSAGE}) from None
    return customer


def customer_create(*, user: User, data: Mapping[str, Any]) -> Customer:
    """Validate, then store a customer of the user's agency, credited to the user's sub-agency
    (none for the agency's own staff).

    The identity number is unique per agency, not per sub-agency (one person, one customer of the
    agency): a sub-agency user adding a person the agency already serves is told so, without
    being shown whose customer it is.
    """
    agency = customer_agency(user)
    clean, errors = validate_customer(data)
    if errors:
        raise CustomerInvalid(errors)
    return _save(Customer(agency=agency, sub_agency=sub_agency_of(user), created_by=user, **clean))


def customer_update(*, user: User, customer: Customer, data: Mapping[str, Any]) -> Customer:
    """Change some or all fields; fields not in `data` keep their value. The whole customer is
    checked again, so a consent time cannot lose its channel through a partial change.

    Another agency's (or sub-agency's) customer raises `Customer.DoesNotExist`: the caller
    answers "not found".
    """
    customer_agency(user)
    if not may_act_on(user, agency_id=customer.agency_id, sub_agency_id=customer.sub_agency_id):
        raise Customer.DoesNotExist("Müşteri bulunamadı.")
    current = {field: getattr(customer, field) for field in CUSTOMER_FIELDS}
    clean, errors = validate_customer({**current, **{k: v for k, v in data.items() if k in CUSTOMER_FIELDS}})
    if errors:
        raise CustomerInvalid(errors)
    for field, value in clean.items():
        setattr(customer, field, value)
    return _save(customer)


def customer_identity_conflict(*, customer: Customer, owner_id: str) -> str | None:
    """The quote's identity number must be the customer's: a quote priced for one person and
    stored under another is a policy issued to the wrong name. A message when they differ."""
    if not owner_id or "".join(owner_id.split()) == customer.identity_no:
        return None
    return f"Seçilen müşterinin kimlik numarasıyla ({mask_identity(customer.identity_no)}) uyuşmuyor."
