"""Projects and their members in the admin; and the mixin that cuts every admin list to a person's projects.

Superusers see and edit everything. Other staff see the rows of their projects only, and edit
a project's members (and its tokens, in tokens.admin) where they are its admin.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from projects import access
from projects.models import Membership, OnCallOverride, OnCallSchedule, OnCallTurn, Project, Role, at_least


class ProjectScoped:
    """An admin list of one person's projects' rows; `project_path`: the path from a row to its project."""

    project_path = "project"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset: QuerySet[Any] = super().get_queryset(request)  # type: ignore[misc]
        return access.of_user(request.user).visible(queryset, self.project_path)


class ScopedValuesFilter(admin.AllValuesFieldListFilter):
    """A filter by a field's values, offering only the values of rows the person sees.

    Django's own takes a related model's values from all of its rows (`answer__answered_by`: every project's
    answerers), which would name other projects' people and folders in the list's sidebar (issue 37).
    """

    def __init__(self, field: Any, request: HttpRequest, params: Any, model: Any, model_admin: Any,
                 field_path: str) -> None:  # fmt: skip
        super().__init__(field, request, params, model, model_admin, field_path)
        self.lookup_choices = (
            model_admin.get_queryset(request)
            .exclude(**{f"{field_path}__isnull": True})
            .order_by(field_path)
            .values_list(field_path, flat=True)
            .distinct()
        )


class ManagedPerProject(ProjectScoped):
    """Rows a project's admins manage (its tokens, its team rules): superusers manage every row, and the rows
    of no project (every project's); a project's admins, their projects' rows, without Django's model permissions.

    Every path checks the same per-row permission as the change page (issue 37): a list action (revoke, delete)
    acts on the selected rows the person manages only; a list whose rows are not all theirs to manage is shown
    read-only (no list_editable); a row saved or deleted is checked again, whatever the form said.
    """

    def manageable(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        seen = access.of_user(request.user)
        if seen.everything:
            return queryset
        mine = [pk for pk, role in seen.roles.items() if at_least(role, Role.ADMIN)]
        return queryset.filter(**{f"{self.project_path}__in": mine})

    def manages_all_seen(self, request: HttpRequest) -> bool:
        seen = access.of_user(request.user)
        return seen.everything or all(at_least(role, Role.ADMIN) for role in seen.roles.values())

    def response_action(
        self, request: HttpRequest, queryset: QuerySet[Any], *args: Any, **kwargs: Any
    ) -> HttpResponse | None:
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        mine = self.manageable(request, queryset)
        skipped = queryset.filter(pk__in=selected).count() - mine.filter(pk__in=selected).count()
        if skipped:
            messages.warning(
                request, f"{skipped} of the selected rows are in projects you may only look at: left as they were."
            )
        answered: HttpResponse | None = super().response_action(request, mine, *args, **kwargs)  # type: ignore[misc]
        return answered

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)  # type: ignore[misc]
        if not self.manages_all_seen(request):
            changelist.list_editable = ()  # a viewer somewhere sees a read-only list
        return changelist

    def _get_list_editable_queryset(self, request: HttpRequest, prefix: str) -> QuerySet[Any]:
        found: QuerySet[Any] = super()._get_list_editable_queryset(request, prefix)  # type: ignore[misc]
        return self.manageable(request, found)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        stored = type(obj).objects.filter(pk=obj.pk).first() if change else None
        if not self._may_manage(request, obj) or (stored is not None and not self._may_manage(request, stored)):
            raise PermissionDenied("project: you manage this in the projects where you are an admin only")
        super().save_model(request, obj, form, change)  # type: ignore[misc]

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        if not self._may_manage(request, obj):
            raise PermissionDenied("project: you manage this in the projects where you are an admin only")
        super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        super().delete_queryset(request, self.manageable(request, queryset))  # type: ignore[misc]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "project" and not request.user.is_superuser:
            kwargs["queryset"] = access.projects_with(request.user, Role.ADMIN)
            kwargs["required"] = True
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def _may_manage(self, request: HttpRequest, obj: Any) -> bool:
        if not request.user.is_staff:
            return False
        seen = access.of_user(request.user)
        if obj is None:
            return seen.may_anywhere(Role.ADMIN)
        return seen.everything or (obj.project_id is not None and seen.may(obj.project_id, Role.ADMIN))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_manage(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self._may_manage(request, None)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_manage(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_manage(request, obj)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._may_manage(request, None)


class ByTheProjectsAdmins:
    """An inline's rows, managed by the admins of the project its parent row belongs to, without Django's model
    permissions (`_admin_of`: whether this person is; the parent is None on an add page)."""

    def _admin_of(self, request: HttpRequest, obj: Any) -> bool:
        raise NotImplementedError

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._admin_of(request, obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._admin_of(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._admin_of(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._admin_of(request, obj)


class MembershipInline(ByTheProjectsAdmins, admin.TabularInline[Membership, Project]):
    model = Membership
    extra = 1
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]

    # ProjectAdmin shows the inline only to the project's admins.
    def _admin_of(self, request: HttpRequest, obj: Project | None) -> bool:
        return obj is not None and access.of_user(request.user).may(obj.pk, Role.ADMIN)


@admin.register(Project)
class ProjectAdmin(ProjectScoped, admin.ModelAdmin[Project]):
    project_path = "pk"
    list_display = ["name", "is_default", "member_count", "created_at"]
    search_fields = ["name"]
    readonly_fields = ["is_default", "created_at"]
    inlines = [MembershipInline]

    @admin.display(description="Members")
    def member_count(self, obj: Project) -> int:
        return obj.memberships.count()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        # A project's admins manage its members; only superusers rename projects or make new ones.
        if obj is None:
            return super().has_change_permission(request, obj) or access.of_user(request.user).may_anywhere(Role.ADMIN)
        return access.of_user(request.user).may(obj.pk, Role.ADMIN)

    def has_delete_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        # The default project catches what names no other: it stays. Others go only when nothing is theirs (PROTECT).
        return bool(request.user.is_superuser) and (obj is None or not obj.is_default)

    def has_view_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        if obj is None:
            return access.of_user(request.user).may_anywhere(Role.VIEWER)
        return access.of_user(request.user).sees(obj.pk)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_staff)

    def get_readonly_fields(self, request: HttpRequest, obj: Project | None = None) -> list[str]:
        fixed = list(self.readonly_fields)
        return fixed if request.user.is_superuser else [*fixed, "name"]

    def get_inline_instances(self, request: HttpRequest, obj: Project | None = None) -> list[Any]:
        if obj is not None and not access.of_user(request.user).may(obj.pk, Role.ADMIN):
            return []
        return super().get_inline_instances(request, obj)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        super().save_formset(request, form, formset, change)
        access.forget(request.user)


class _ScheduleInline(ByTheProjectsAdmins):
    """A schedule's rows, managed by the admins of its project (as the schedule itself)."""

    def _admin_of(self, request: HttpRequest, obj: OnCallSchedule | None) -> bool:
        if obj is None:
            return access.of_user(request.user).may_anywhere(Role.ADMIN)
        return access.of_user(request.user).may(obj.project_id, Role.ADMIN)


class OnCallTurnInline(_ScheduleInline, admin.TabularInline[OnCallTurn, OnCallSchedule]):
    model = OnCallTurn
    extra = 1
    fields = ["position", "user"]
    verbose_name = "person, in turn"
    verbose_name_plural = "people, in the order they take turns"

    def _admin_of(self, request: HttpRequest, obj: OnCallSchedule | None) -> bool:
        # A schedule from a policy file keeps its rota in the file: edit the file.
        return super()._admin_of(request, obj) and (obj is None or obj.source in ("", "admin"))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _ScheduleInline._admin_of(self, request, obj)


class OnCallOverrideInline(_ScheduleInline, admin.TabularInline[OnCallOverride, OnCallSchedule]):
    model = OnCallOverride
    extra = 1
    fields = ["day", "user", "reason"]
    verbose_name = "override: one shift to someone else"


@admin.register(OnCallSchedule)
class OnCallScheduleAdmin(ManagedPerProject, admin.ModelAdmin[OnCallSchedule]):
    """Who is on call: a rotation of a project's people, for a policy's `on-call:NAME` (who may decide, whom an
    escalation step reaches). A schedule applied from a policy file keeps its rota in the file; its overrides (a
    sick day, a swap) are made here and survive the next apply."""

    list_display = ["name", "project", "on_call_now", "next_handoff", "rotation_days", "time_zone", "source"]
    list_select_related = ["project"]
    list_filter = [("project", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name"]
    inlines = [OnCallTurnInline, OnCallOverrideInline]

    @admin.display(description="on call now")
    def on_call_now(self, schedule: OnCallSchedule) -> str:
        person = schedule.on_call()
        return person.get_username() if person is not None else "nobody"

    @admin.display(description="next hand-off")
    def next_handoff(self, schedule: OnCallSchedule) -> str:
        upcoming = schedule.next_handoffs(1)
        if not upcoming:
            return "—"
        when, person = upcoming[0]
        return f"{when:%a %Y-%m-%d %H:%M} to {person.get_username() if person is not None else 'nobody'}"

    def get_readonly_fields(self, request: HttpRequest, obj: OnCallSchedule | None = None) -> Any:
        if obj is not None and obj.source not in ("", "admin"):
            return ["project", "name", "handoff", "time_zone", "rotation_days", "starts_on", "source"]
        return ["source"]
