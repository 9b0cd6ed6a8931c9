from __future__ import annotations

from django.apps import AppConfig


class IdentityConfig(AppConfig):
    name = "identity"
    verbose_name = "Company identity: sign-in and provisioning"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import email_validator

        from identity import checks  # noqa: F401  (registers the system checks)

        # SCIM's e-mails are checked by email-validator (through pydantic), which refuses special-use domains.
        # A company's directory often holds intranet addresses (user@corp.local, Active Directory's habit):
        # those are its people's real addresses here, so .local is allowed (the library's documented list).
        if "local" in email_validator.SPECIAL_USE_DOMAIN_NAMES:
            email_validator.SPECIAL_USE_DOMAIN_NAMES.remove("local")
