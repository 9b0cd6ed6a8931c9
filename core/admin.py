"""What every admin page of a record shares."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest


class RecordAdmin:
    """A record of what happened (a question, an answer, an event): readable by staff, changed by nobody.

    No add, no Save, no Delete, for superusers too; old records leave with `manage.py purge`.
    """

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
