"""The policy's PDF for other front ends: download, and ask for it again.

Same rules as the desk (`documents.views`): reading follows `quotes.selectors` (own agency, or
`quotes.view_all_agencies`), a re-fetch is the policy's own agency only; anything else is 404,
like an unknown id. Errors are DRF's `{"detail": "..."}`, as in `quotes.api.views`, answered by
the one exception handler (`insurehub.api_errors`).
"""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from documents import selectors
from documents.api.serializers import PolicyDocumentSerializer
from documents.services import document_refetch
from documents.views import document_file_response
from insurehub import api_input
from insurehub.api.ids import pk_or_404
from insurehub.api.responses import NOT_AUTHENTICATED, NOT_FOUND, DetailSerializer, field_errors
from insurehub.errors import Conflict
from insurehub.request_types import AuthenticatedRequest
from work.item import OPEN_STATES

POLICY_ID = OpenApiParameter("policy_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The policy's `id`.")
NOT_READY_MESSAGE = "Poliçe belgesi henüz hazır değil; birkaç saniye sonra yeniden deneyin."
NOT_FETCHED_MESSAGE = "Poliçe belgesi sigorta şirketinden alınamadı; yeniden almayı deneyin."
NOT_ASKED_MESSAGE = "Bu poliçe için henüz belge istenmedi; yeniden almayı deneyin."


class PolicyDocumentApi(APIView):
    def perform_content_negotiation(self, request: Request, force: bool = False):
        # A client asking for `Accept: application/pdf` gets the PDF; its errors still come as
        # JSON (the first renderer) instead of a 406 before the view is even reached.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        operation_id="policies_document_download",
        summary="Download the policy's PDF",
        description=(
            "The insurer's policy document, fetched in the background after issuance. 409 while it "
            "is being prepared or could not be fetched (POST .../document/refetch/ asks again). "
            "During a re-fetch the previous PDF is still served."
        ),
        parameters=[POLICY_ID],
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, description="The PDF, as an attachment."),
            403: NOT_AUTHENTICATED,
            404: NOT_FOUND,
            409: OpenApiResponse(DetailSerializer, description="No PDF stored yet: being prepared, or not fetched."),
        },
    )
    def get(self, request: AuthenticatedRequest, policy_id: str) -> FileResponse:
        policy = selectors.policy_for_document(user=request.user, policy_id=pk_or_404(policy_id))
        document = selectors.document_of(policy)
        if document is None:
            raise Conflict(NOT_ASKED_MESSAGE)
        if not document.file:
            raise Conflict(NOT_READY_MESSAGE if document.state in OPEN_STATES else NOT_FETCHED_MESSAGE)
        # A file gone from storage raises Http404, which DRF answers as a JSON 404.
        return document_file_response(document)


class PolicyDocumentRefetchApi(APIView):
    @extend_schema(
        operation_id="policies_document_refetch",
        summary="Fetch the policy's PDF again",
        description=(
            "Queues the fetch of the policy's PDF from the insurer (the policy's own agency only). "
            "The previous PDF stays downloadable until the new one is stored. Asking while a fetch "
            "is under way changes nothing. Poll GET .../document/ until it answers 200."
        ),
        parameters=[POLICY_ID],
        request=None,
        responses={
            202: OpenApiResponse(PolicyDocumentSerializer, description="The fetch is queued (or already under way)."),
            400: field_errors("A body with fields: this operation takes none.", {"force": ["..."]}),
            403: OpenApiResponse(
                DetailSerializer, description="Not logged in, the user belongs to no agency, or it is deactivated."
            ),
            404: NOT_FOUND,
            409: OpenApiResponse(DetailSerializer, description="The agency may not fetch documents now."),
        },
    )
    def post(self, request: AuthenticatedRequest, policy_id: str) -> Response:
        api_input.EmptyInput.check(request.data)
        document = document_refetch(user=request.user, policy_id=pk_or_404(policy_id))
        return Response(PolicyDocumentSerializer(document).data, status=status.HTTP_202_ACCEPTED)
