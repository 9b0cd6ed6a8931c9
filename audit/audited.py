"""A model whose every save and delete is an audit entry: created, changed (each field before and after) or deleted.

For the rows that say who may decide (rules, policies, grants, memberships) and who may call (tokens): the
admin, the policy file, the API and the commands all save through the model, so each path is recorded in the
same transaction as its change. Queryset updates and deletes bypass save(): these models' own methods avoid
them, and `audit verify` cannot see a change that was never recorded, so the docs say so.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from django.db import models, transaction

from audit import chain


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class Audited(models.Model):
    # "rule" -> rule.created, rule.changed, rule.deleted.
    audit_noun: ClassVar[str] = ""
    # Fields never written into the record (a secret's digest).
    audit_hidden: ClassVar[frozenset[str]] = frozenset()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Atomic: the change and its entry land together or not at all.
        with transaction.atomic():
            before = None
            if not self._state.adding and self.pk is not None:
                old = type(self)._base_manager.filter(pk=self.pk).first()
                before = old.audit_values() if old is not None else None
            super().save(*args, **kwargs)
            after = self.audit_values()
            if before is None:
                verb, details = "created", {"after": after}
            else:
                changed = {
                    name: [before.get(name), value] for name, value in after.items() if before.get(name) != value
                }
                if not changed:
                    return
                verb, details = "changed", {"changes": changed}
            action = self.audit_action(verb, details)
            chain.record(action, project=self._audit_project(), target=self.audit_target(), target_id=self.pk,
                         details=details)  # fmt: skip

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        with transaction.atomic():
            before, pk, project, target = self.audit_values(), self.pk, self._audit_project(), self.audit_target()
            deleted = super().delete(*args, **kwargs)
            details = {"before": before}
            chain.record(self.audit_action("deleted", details), project=project, target=target, target_id=pk,
                         details=details)  # fmt: skip
            return deleted

    def audit_values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for field in self._meta.concrete_fields:
            if field.name in self.audit_hidden:
                continue
            values[field.name] = _plain(field.value_from_object(self))
        return values

    def audit_action(self, verb: str, changes: dict[str, Any]) -> str:
        """The action's name for `verb` (created, changed, deleted); a model may name its own (token.revoked)."""
        return f"{self.audit_noun}.{verb}"

    def audit_target(self) -> str:
        return f"{self.audit_noun} {self}"[:300]

    def _audit_project(self) -> Any:
        return getattr(self, "project", None) if getattr(self, "project_id", None) else None
