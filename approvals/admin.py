"""The team's rules and policies in the admin: who made each, why, until when, how often it decided."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals import dry_run, suggestions
from approvals.models import ApprovalPolicy, ApprovalRule, Grant
from projects.access import projects_with
from projects.admin import ManagedPerProject
from projects.models import OnCallSchedule, Role, on_call_name


class DryRunFirst:
    """An edit (or a new row) is replayed against the project's latest approvals before it is saved: when any would
    have been decided otherwise, the admin is shown which and saves only by confirming (approvals.dry_run)."""

    def changeform_view(
        self, request: HttpRequest, object_id: str | None = None, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        if request.method == "POST" and "_confirmed" not in request.POST:
            dry_run_page = self._dry_run(request, object_id)
            if dry_run_page is not None:
                return dry_run_page
        shown: HttpResponse = super().changeform_view(request, object_id, form_url, extra_context)  # type: ignore[misc]
        return shown

    def _dry_run(self, request: HttpRequest, object_id: str | None) -> HttpResponse | None:
        model_admin: Any = self
        stored = model_admin.get_object(request, object_id) if object_id else None
        if object_id and stored is None:
            return None  # Django's own answer (not found, or not theirs)
        if stored is not None and not model_admin.has_change_permission(request, stored):
            return None
        if stored is None and not model_admin.has_add_permission(request):
            return None
        form_class = model_admin.get_form(request, stored, change=stored is not None)
        form = form_class(request.POST, request.FILES, instance=stored)
        if not form.is_valid():
            return None  # the form shows its own errors
        edited = form.save(commit=False)
        read, differences = dry_run.of_edit(edited)
        if not differences:
            messages.info(request, f"Dry run: none of the latest {read} approvals would be decided otherwise.")
            return None
        context = {
            **model_admin.admin_site.each_context(request),
            "opts": model_admin.model._meta,
            "title": "Dry run: what this change would decide otherwise",
            "edited": dry_run.describe(edited),
            "read": read,
            "differences": differences,
            "posted": [(key, value) for key in request.POST for value in request.POST.getlist(key)],
        }
        return TemplateResponse(request, "admin/approvals/dry_run.html", context)


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(DryRunFirst, ManagedPerProject, admin.ModelAdmin[ApprovalRule]):
    """Rules decide a tool use without a person: any deny rule that matches denies; an allow needs every command
    of a compound command to be allowed. An expired rule decides nothing.

    Every decision a rule makes is kept in the question history (kind "approval", answered by "rule #…").
    A project's admins keep their project's rules; rules for every project are superusers'. Above the list, the
    rules people's own decisions suggest (approvals.suggestions), each with an Accept.
    """

    change_list_template = "admin/approvals/approvalrule/change_list.html"

    list_display = [
        "position",
        "action",
        "describe",
        "project",
        "folder",
        "owner",
        "state",
        "decided_count",
        "last_decided_at",
        "source",
    ]
    list_select_related = ["project", "owner"]
    list_display_links = ["describe"]
    list_filter = ["action", "enabled", "source", ("project", admin.RelatedOnlyFieldListFilter)]
    search_fields = [
        "tool_pattern",
        "command",
        "command_prefix",
        "path",
        "input_pattern",
        "folder",
        "message",
        "reason",
    ]
    fields = [
        "position",
        "action",
        "tool_pattern",
        "command_prefix",
        "command",
        "path",
        "input_pattern",
        "project",
        "folder",
        "message",
        "reason",
        "owner",
        "expires_at",
        "enabled",
        "source",
        "made_from",
        "decided_count",
        "last_decided_at",
    ]
    readonly_fields = ["source", "made_from", "decided_count", "last_decided_at"]

    @admin.display(description="matches")
    def describe(self, rule: ApprovalRule) -> str:
        return rule.describe()

    @admin.display(description="state")
    def state(self, rule: ApprovalRule) -> str:
        if not rule.enabled:
            return "off"
        if rule.expired:
            return f"expired {timezone.localtime(rule.expires_at):%Y-%m-%d}: decides nothing"
        if rule.expires_at:
            return f"until {timezone.localtime(rule.expires_at):%Y-%m-%d}"
        return "on"

    def save_model(self, request: HttpRequest, obj: ApprovalRule, form: Any, change: bool) -> None:
        if obj.owner_id is None and request.user.is_authenticated:
            obj.owner = request.user
        super().save_model(request, obj, form, change)

    def get_urls(self) -> list[URLPattern]:
        accept = self.admin_site.admin_view(require_POST(self.accept_suggestion))
        return [path("suggestions/accept/", accept, name="approvals_approvalrule_accept"), *super().get_urls()]

    @staticmethod
    def _administered(request: HttpRequest) -> list[Any]:
        """The projects whose rules this person makes (a rule suggested in any other is not theirs to see)."""
        return list(projects_with(request.user, Role.ADMIN)) if request.user.is_staff else []

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        mine = self._administered(request)
        context = {
            **(extra_context or {}),
            "suggestions": suggestions.suggest(mine) if mine else [],
            "rule_days": settings.HOOKBRIDGE_RULE_DAYS,
        }
        return super().changelist_view(request, context)

    def accept_suggestion(self, request: HttpRequest) -> HttpResponse:
        """Makes the rule a suggestion names, if history still suggests it and the person is its project's admin."""
        mine = self._administered(request)
        if not mine:
            raise PermissionDenied("project: you make rules in the projects where you are an admin only")
        found = suggestions.find(mine, request.POST.get("key", ""))
        if found is None:
            messages.warning(request, "That suggestion is no longer made (decided otherwise since, or a rule now "
                             "decides it): nothing was saved.")  # fmt: skip
        else:
            rule = found.accept(request.user)
            where = found.folder or "any folder"
            until = f"{timezone.localtime(rule.expires_at):%Y-%m-%d}" if rule.expires_at else "ever"
            messages.success(request, f"Saved rule #{rule.pk}: allow {rule.describe()} in {where} until {until}.")
        return HttpResponseRedirect(reverse("admin:approvals_approvalrule_changelist"))


class ApprovalPolicyForm(forms.ModelForm[ApprovalPolicy]):
    # No Meta: the admin makes the form's (its model and fields) from this base.

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        project = cleaned.get("project")
        for decider in cleaned.get("deciders") or []:
            # A decider naming no schedule would leave nobody to decide (the policy file refuses it too).
            name = on_call_name(str(decider))
            if name is not None and not OnCallSchedule.objects.filter(project=project, name__iexact=name).exists():
                self.add_error("deciders", f"{decider}: {project} has no on-call schedule named {name!r}")
        return cleaned


@admin.register(ApprovalPolicy)
class ApprovalPolicyAdmin(DryRunFirst, ManagedPerProject, admin.ModelAdmin[ApprovalPolicy]):
    """Who must decide a project's approvals that match (quorum, deciders, self-approval), and what nobody
    deciding in time means. A policy applied from a file (`policy apply`) is read-only here: edit the file."""

    form = ApprovalPolicyForm
    list_display = ["project", "position", "name", "quorum", "self_approval", "timeout_seconds", "fallback", "source"]
    list_select_related = ["project"]
    list_filter = [("project", admin.RelatedOnlyFieldListFilter), "fallback"]
    search_fields = ["name", "command_prefix", "tool_pattern"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApprovalPolicy | None = None) -> Any:
        if obj is not None and obj.source not in ("", "admin"):
            return [field.name for field in ApprovalPolicy._meta.fields]
        return ["source"]


@admin.register(Grant)
class GrantAdmin(ManagedPerProject, admin.ModelAdmin[Grant]):
    """People's "Allow for this session": what each let through at once, in which session, until when."""

    project_path = "session__project"
    list_display = ["session", "tool_name", "describe", "granted_by", "created_at", "expires_at", "revoked_at"]
    list_select_related = ["session", "granted_by"]
    readonly_fields = ["session", "tool_name", "command_prefix", "path", "granted_by", "question", "made_from",
                       "created_at", "expires_at", "revoked_at", "revoked_by"]  # fmt: skip

    @admin.display(description="allows")
    def describe(self, grant: Grant) -> str:
        return grant.describe()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made from an approval's card, never by hand
