from django.apps import AppConfig


class AgenciesConfig(AppConfig):
    name = "agencies"
    verbose_name = "Acenteler"

    def ready(self) -> None:
        from django.contrib import admin

        from agencies.auth import ThrottledAdminAuthenticationForm, throttled_admin_login

        # The admin login counts failures with the agents' login: one lock-out, in the database,
        # answered with 429 and Retry-After like the others. Set before the URLconf reads `site.login`.
        admin.site.login_form = ThrottledAdminAuthenticationForm
        if not getattr(admin.site.login, "throttled", False):
            # The site's own bound method, wrapped on this one instance on purpose (mypy refuses any
            # assignment to a method).
            admin.site.login = throttled_admin_login(admin.site.login)  # type: ignore[method-assign]
