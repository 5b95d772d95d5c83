"""The application's errors answered in one place each: the API's exception handler and the desk's
`desk_errors`. Views raise nothing of their own; these are the shapes every view relies on."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import Permission
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404, HttpResponse
from django.test import RequestFactory
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from customers.services import CustomerInvalid
from documents.services import DocumentRefused
from insurehub.desk_errors import desk_errors
from insurehub.errors import AppError, Conflict, Forbidden, Invalid, NoActiveAgency, NotFound, Unavailable
from policies.models import Policy
from quotes.api.views import QuoteRequestsApi
from quotes.services.issuance import IssuanceRefused
from quotes.services.quote_requests import InputInvalid, NoInsurerAvailable
from quotes.services.renewals import RenewalNotPossible


@dataclass(frozen=True)
class ApiAnswer:
    """A rendered API answer, with its JSON body read (None when empty)."""

    response: Response
    body: Any

    @property
    def status_code(self) -> int:
        return self.response.status_code


def api_answer(error: Exception, *, nest: bool = False) -> ApiAnswer:
    """What a real DRF view answers when its service raises `error`."""

    class RaisingApi(APIView):
        authentication_classes = ()
        permission_classes = ()

        def get(self, request):
            raise error

    class NestingApi(RaisingApi):
        field_errors_shape = staticmethod(QuoteRequestsApi.field_errors_shape)

    response = (NestingApi if nest else RaisingApi).as_view()(APIRequestFactory().get("/"))
    response.render()
    return ApiAnswer(response, json.loads(response.content) if response.content else None)


# --- the family ------------------------------------------------------------------------------


def test_service_errors_are_members_of_the_family_with_their_old_attributes():
    """Callers written before the family still work: names, `errors`, `str()`, PermissionError."""
    invalid = InputInvalid({"plate": "Geçerli bir plaka girin."})
    assert isinstance(invalid, Invalid) and invalid.errors == {"plate": "Geçerli bir plaka girin."}
    assert str(invalid) == "plate: Geçerli bir plaka girin."
    assert invalid.field_errors == {"plate": ["Geçerli bir plaka girin."]}
    assert isinstance(CustomerInvalid({"name": "x"}), Invalid)
    assert str(NoInsurerAvailable("Hesap yok.")) == "Hesap yok."
    assert NoInsurerAvailable("Hesap yok.").field_errors == {"product": ["Hesap yok."]}
    for refusal in (IssuanceRefused("a"), DocumentRefused("b"), RenewalNotPossible("c")):
        assert isinstance(refusal, Conflict) and refusal.status == 409
    no_agency = NoActiveAgency("Bu kullanıcı bir acenteye bağlı değil.")
    assert isinstance(no_agency, Forbidden) and isinstance(no_agency, PermissionError)
    assert str(no_agency) == "Bu kullanıcı bir acenteye bağlı değil."


def test_each_kind_has_its_status_and_a_turkish_default_message():
    assert [kind.status for kind in (Invalid, Forbidden, NotFound, Conflict, Unavailable)] == [400, 403, 404, 409, 503]
    assert Unavailable().message.startswith("Hizmet şu anda")


# --- the API's exception handler -------------------------------------------------------------


def test_api_invalid_answers_400_with_each_field_and_its_messages():
    response = api_answer(Invalid({"plate": "Plaka hatalı.", "password": ["Çok kısa.", "Çok yaygın."]}))
    assert response.status_code == 400
    assert response.body == {"plate": ["Plaka hatalı."], "password": ["Çok kısa.", "Çok yaygın."]}


def test_api_invalid_without_fields_answers_drfs_non_field_errors():
    response = api_answer(Invalid({}, "Girdi tutarsız."))
    assert response.status_code == 400 and response.body == {"non_field_errors": ["Girdi tutarsız."]}


def test_a_view_may_nest_field_errors_as_its_body_does():
    """The quote request API's fields sit under `data`, except `product`."""
    response = api_answer(InputInvalid({"plate": "Plaka hatalı.", "product": "Geçersiz ürün."}), nest=True)
    assert response.body == {"data": {"plate": ["Plaka hatalı."]}, "product": ["Geçersiz ürün."]}
    response = api_answer(NoInsurerAvailable("Bu ürün için tanımlı aktif sigorta şirketi hesabı yok."), nest=True)
    assert response.body == {"product": ["Bu ürün için tanımlı aktif sigorta şirketi hesabı yok."]}


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NoActiveAgency("Acenteniz pasif durumda; teklif alınamaz."), 403),
        (NotFound("Poliçe bulunamadı."), 404),
        (IssuanceRefused("Teklifin süresi dolmuş. Lütfen yeni teklif alın."), 409),
        (Unavailable("Şimdi olmaz."), 503),
    ],
)
def test_api_other_kinds_answer_their_status_and_detail(error: AppError, status: int):
    response = api_answer(error)
    assert response.status_code == status and response.body == {"detail": error.message}


def test_api_does_not_exist_answers_404_the_same_for_every_model():
    """Another agency's object and an unknown id must be told apart by nothing, not even the text."""
    expected = {"detail": str(exceptions.NotFound().detail)}
    for missing in (Policy.DoesNotExist("Poliçe 7 başka acentenin."), Permission.DoesNotExist()):
        response = api_answer(missing)
        assert response.status_code == 404 and response.body == expected


def test_api_other_exceptions_are_still_drfs_or_a_server_error():
    assert api_answer(exceptions.Throttled(wait=3)).response["Retry-After"] == "3"
    with pytest.raises(ZeroDivisionError):
        api_answer(ZeroDivisionError())


# --- the desk's helper: a context manager around the service call ---------------------------


class AgentForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField()


class RenamingForm(AgentForm):
    def error_field(self, name: str) -> str:
        return {"identity_no": "username"}.get(name, name)


def valid_form(form_class: type[forms.Form] = AgentForm) -> forms.Form:
    form = form_class({"username": "ayse", "password": "uzun-bir-parola"})
    assert form.is_valid()
    return form


def test_desk_field_errors_land_on_the_named_fields_and_the_rest_on_top():
    form = valid_form()
    with desk_errors(form) as outcome:
        raise Invalid({"password": ["Çok kısa.", "Çok yaygın."], "agency": "Acente seçin."})
    assert not outcome.ok and outcome.status == 400
    assert form.errors["password"] == ["Çok kısa.", "Çok yaygın."]
    assert form.non_field_errors() == ["Acente seçin."]


def test_desk_error_without_fields_is_a_page_level_form_error():
    form = valid_form()
    with desk_errors(form) as outcome:
        raise NoActiveAgency("Acenteniz pasif durumda; teklif alınamaz.")
    assert form.non_field_errors() == ["Acenteniz pasif durumda; teklif alınamaz."]
    assert outcome.status == 403 and outcome.message == "Acenteniz pasif durumda; teklif alınamaz."


def test_desk_form_may_rename_a_services_field():
    form = valid_form(RenamingForm)
    with desk_errors(form):
        raise CustomerInvalid({"identity_no": "Bu numarayla kayıtlı bir müşteriniz var."})
    assert form.errors == {"username": ["Bu numarayla kayıtlı bir müşteriniz var."]}


def test_desk_without_a_form_keeps_the_refusal_for_the_page():
    with desk_errors() as outcome:
        raise IssuanceRefused("Teklifin süresi dolmuş. Lütfen yeni teklif alın.")
    assert (outcome.ok, outcome.status) == (False, 409)
    assert outcome.message == "Teklifin süresi dolmuş. Lütfen yeni teklif alın."
    with desk_errors() as fine:
        pass
    assert (fine.ok, fine.status, fine.message) == (True, 200, "")


@pytest.mark.django_db
def test_desk_not_found_inside_the_block_is_the_404_page_with_a_turkish_message():
    with pytest.raises(Http404, match=r"^Poliçe bulunamadı\.$"), desk_errors():
        Policy.objects.get(pk=-1)
    with pytest.raises(Http404, match=r"^Teklif yok\.$"), desk_errors():
        raise NotFound("Teklif yok.")


def test_desk_lets_anything_outside_the_family_through():
    with pytest.raises(ValueError), desk_errors(valid_form()):
        raise ValueError("a bug is a bug")


# --- the desk's helper: a decorator over the whole view --------------------------------------


def decorated(error: Exception):
    @desk_errors
    def view(request):
        """A desk view."""
        raise error

    return view


@pytest.mark.parametrize(
    ("error", "page", "message"),
    [
        (Permission.DoesNotExist(), Http404, "İzin bulunamadı."),  # Turkish capitals: İ, not I
        (Policy.DoesNotExist(), Http404, "Poliçe bulunamadı."),
        (NotFound("Müşteri bulunamadı."), Http404, "Müşteri bulunamadı."),
        (Forbidden("Bu işlem için acente yöneticisi olmalısınız."), PermissionDenied, "acente yöneticisi"),
        (RenewalNotPossible("Yeniden teklif alınamaz."), BadRequest, "Yeniden teklif alınamaz."),
    ],
)
def test_desk_decorator_turns_an_error_nothing_shows_into_its_page(error, page, message):
    with pytest.raises(page, match=message):
        decorated(error)(RequestFactory().get("/"))


def test_desk_decorator_keeps_the_views_name_and_answer():
    @desk_errors
    def policy_page(request):
        """The policy page."""
        return HttpResponse("ok")

    assert policy_page.__name__ == "policy_page" and policy_page.__doc__ == "The policy page."
    assert policy_page(RequestFactory().get("/")).content == b"ok"
