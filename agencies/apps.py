from django.apps import AppConfig


class AgenciesConfig(AppConfig):
    name = "agencies"
    verbose_name = "Acenteler"

    def ready(self) -> None:
        from django.contrib import admin

        from agencies.auth import ThrottledAdminAuthenticationForm

        # The admin login counts failures with the agents' login: one lock-out, in the database.
        admin.site.login_form = ThrottledAdminAuthenticationForm
