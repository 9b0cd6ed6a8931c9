"""Issue 53: on-call schedules: a rotation of people with a hand-off time in a time zone, and overrides for a day."""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from projects.models import OnCallOverride, OnCallSchedule, OnCallTurn, Project, on_call_now

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def backend(db: None) -> OnCallSchedule:
    shop = Project.objects.create(name="shop")
    schedule = OnCallSchedule.objects.create(
        project=shop, name="backend", handoff=time(9, 0), time_zone="Europe/Berlin", rotation_days=7,
        starts_on=date(2026, 11, 30),  # a Monday
    )  # fmt: skip
    for i, name in enumerate(["ann", "bob", "cat"]):
        OnCallTurn.objects.create(schedule=schedule, user=User.objects.create_user(name), position=i)
    return schedule


def at(day: int, hour: int, minute: int = 0, month: int = 12) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=BERLIN)


def who(schedule: OnCallSchedule, when: datetime) -> str:
    person = schedule.on_call(when)
    return person.get_username() if person is not None else "nobody"


def test_it_hands_off_at_the_hand_off_time_in_the_schedule_s_own_time_zone(backend: OnCallSchedule) -> None:
    assert who(backend, at(30, 9, month=11)) == "ann"
    assert who(backend, at(7, 8, 59)) == "ann", "a minute before Monday's hand-off the last shift still holds"
    assert who(backend, at(7, 9, 0)) == "bob"
    assert who(backend, at(14, 9)) == "cat"
    assert who(backend, at(21, 9)) == "ann", "the rota starts again"
    # 08:30 UTC is 09:30 in Berlin: bob's shift has started there.
    assert who(backend, datetime(2026, 12, 7, 8, 30, tzinfo=ZoneInfo("UTC"))) == "bob"


def test_an_override_gives_one_shift_to_someone_else_and_then_the_rota_goes_on(backend: OnCallSchedule) -> None:
    dan = User.objects.create_user("dan")
    OnCallOverride.objects.create(schedule=backend, day=date(2026, 12, 9), user=dan, reason="bob is ill")
    assert who(backend, at(9, 8)) == "bob", "before the hand-off on the 9th the 8th's shift holds"
    assert who(backend, at(9, 10)) == "dan"
    assert who(backend, at(10, 8, 59)) == "dan"
    assert who(backend, at(10, 9)) == "bob"
    handoffs = [(when.isoformat(), person.get_username()) for when, person in backend.next_handoffs(3, at(8, 12))]
    assert handoffs == [
        ("2026-12-09T09:00:00+01:00", "dan"),
        ("2026-12-10T09:00:00+01:00", "bob"),
        ("2026-12-14T09:00:00+01:00", "cat"),
    ]


def test_a_schedule_without_people_has_nobody_on_call_and_an_unknown_name_finds_nobody(
    backend: OnCallSchedule,
) -> None:
    empty = OnCallSchedule.objects.create(project=backend.project, name="empty")
    assert empty.on_call() is None
    assert empty.next_handoffs() == []
    assert on_call_now(backend.project_id, "nosuch") is None
    other = Project.objects.create(name="other")
    assert on_call_now(other.pk, "backend") is None, "a schedule is its project's alone"
    assert on_call_now(backend.project_id, "BACKEND", at(7, 10)).get_username() == "bob"


def test_it_refuses_a_time_zone_that_does_not_exist_and_a_rotation_of_no_days(backend: OnCallSchedule) -> None:
    backend.time_zone = "Mars/Olympus"
    with pytest.raises(ValidationError) as refused:
        backend.full_clean()
    assert "time_zone" in refused.value.message_dict
    backend.time_zone, backend.rotation_days = "UTC", 0
    with pytest.raises(ValidationError) as refused:
        backend.full_clean()
    assert "rotation_days" in refused.value.message_dict


def test_the_admin_lists_who_is_on_call_and_a_file_s_rota_is_read_only_but_its_overrides_are_not(
    backend: OnCallSchedule, client: Any
) -> None:
    from projects.models import Role

    lead = User.objects.create_user("lead", is_staff=True)
    backend.project.set_member(lead, Role.ADMIN)
    outsider = User.objects.create_user("outsider", is_staff=True)
    Project.objects.create(name="elsewhere").set_member(outsider, Role.ADMIN)
    client.force_login(lead)
    listed = client.get("/admin/projects/oncallschedule/").content.decode()
    assert "backend" in listed
    assert f'<td class="field-on_call_now">{who(backend, datetime.now(BERLIN))}</td>' in listed
    backend.source = "shop.yaml"
    backend.save()
    page = client.get(f"/admin/projects/oncallschedule/{backend.pk}/change/").content.decode()
    assert 'name="rotation_days"' not in page, "a file's schedule is edited in the file"
    assert 'name="turns-0-user"' not in page
    assert 'name="overrides-0-day"' in page, "an override for a day is made here"
    client.force_login(outsider)
    assert client.get(f"/admin/projects/oncallschedule/{backend.pk}/change/").status_code in (302, 403, 404)
    assert "backend" not in client.get("/admin/projects/oncallschedule/").content.decode()
