"""The project's URLconf with the rate-limited logins wired in, as insurehub/urls.py should have them.

Used by test_login_rate_limit.py through `@pytest.mark.urls`, so the lockout is tested whatever
the project's URLconf says today; `test_project_urls_use_the_rate_limited_login` checks the wiring.
"""

from django.urls import path

from agencies.auth import (
    RateLimitedLoginView,
    ThrottledAuthTokenSerializer,
)
from insurehub.urls import urlpatterns as project_urlpatterns
from quotes.api.views import TokenObtainApi

urlpatterns = [
    path("giris/", RateLimitedLoginView.as_view(), name="login"),
    path(
        "api/auth/token/",
        TokenObtainApi.as_view(serializer_class=ThrottledAuthTokenSerializer),
        name="throttled-auth-token",
    ),
    *project_urlpatterns,
]
