"""docs/architecture.md's walk of one `ask_question` is what a real ask and answer run (issue 58).

A daphne worker runs with every call into our code noted in order (testing.traced); the Python SDK asks, a
person answers on the dashboard. Then each function the walk cites must have run, each step's first after the
step before it began, and every module of ours the ask passed through (but the plumbing named below) must be
cited in some step: a step taken out of the document, or a call the code stops making, fails here."""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from django.dispatch import Signal

from testing.live import ROOT, LiveServer, receive_until, text_of

DOC = ROOT / "docs" / "architecture.md"
WALK = "## One `ask_question`, from tool call to tool return"
# Modules the ask passes through that no walk of it should have to name: the ground floor's plumbing and the
# request's middleware (and the open dashboard socket's); rendering helpers (the card's template tags and links);
# what runs beside the ask (the dashboard's and the feed's receivers, the services a first request starts, the
# channels notify.scheduling asks whether they are set up, the audit record); and the test's own polling of the
# JSON API.
PLUMBING = re.compile(
    r"^(core\.|hookbridge_site\.(middleware|settings|checks|tracing|urls)|audit\.|tokens\.(auth|models|signals|websocket)"
    r"|projects\.|lifecycle\.|dashboard\.|identity\.|approvals\."
    r"|notify\.(policy|models|health|steps|push|audit_stream|audit_watch|email|slack|telegram|discord|teams|webhook)"
    r"|questions\.(markdown|wording|serializers|states|images|queue|forms|replies|signals|endings|kinds\.|analytics"
    r"|api|links|sweeper|templatetags)"
    r"|mcpapi\.(runtime|toolset_names|client_log|tasks|models|toolsets\.(?!maxsim)))"
)
# The ask's spine: one function of each step, in the order they run. Each must run in this order, and the walk
# must cite each in its own steps' order: a step taken out of the document takes its function with it.
SPINE = (
    "mcpapi.http.MCPRouter.__call__",
    "mcpapi.toolsets.maxsim.ask_question",
    "mcpapi.asking.ask_and_wait",
    "questions.models.Question.ask",
    "questions.live.question_asked",
    "questions.asking.Wait.run",
    "questions.views.answer",
    "questions.wakeups.wake_the_waiting_calls",
    "mcpapi.asking.result_of",
    "mcpapi.http._mark_delivered",
)
# What the walk cites that a plain ask and answer does not run, and why.
ELSEWHERE = {
    "mcpapi.server.build_http_app": "runs once, at start-up",
    "questions.asking.Caller": "a dataclass: no code of its own runs",
    "questions.asking.Wait.on_cancel": "runs on a client's cancel",
    "questions.asking.Wait.on_cut": "runs on a cut call",
    "notify.models.Delivery": "its steps are written only where a channel is set up (none is here)",
}


@pytest.fixture(scope="module")
def trace() -> Iterator[list[str]]:
    """Every call into our code, in order, while the Python SDK asks and a person answers on the dashboard."""
    # Slices longer than the test: the wait ends by its wake-up (step 9), never by a slice's re-read of the row.
    server = LiveServer(runner="testing.traced", env_overrides={"HOOKBRIDGE_WAIT_SLICE": "120"})
    trace_file = server.tmp / "calls.txt"
    server.env_overrides["HOOKBRIDGE_TRACE_FILE"] = str(trace_file)
    server.setup()
    try:
        yield asyncio.run(ask_and_answer(server, trace_file))
    finally:
        server.close()


async def ask_and_answer(server: LiveServer, trace_file: Path) -> list[str]:
    text = f"Walk the architecture? {uuid.uuid4().hex[:6]}"
    # The person who answers has the dashboard open (a card is rendered only for a page that may hear it).
    async with server.login() as person, server.dashboard_socket(person) as dashboard, server.mcp() as client:
        await receive_until(dashboard, "status-bar")
        begun = len(await asyncio.to_thread(lines, trace_file))
        asking = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await server.wait_for_question(text)
        answered = await server.answer_on_dashboard(question["id"], {"answer": "Yes, walk it"})
        assert answered.status_code == 200, answered.text
        result = await asyncio.wait_for(asking, 60)
    assert "Yes, walk it" in text_of(result)
    await asyncio.sleep(1)  # the response's last deliveries are noted after it went out
    return (await asyncio.to_thread(lines, trace_file))[begun:]


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def walk_text(doc: str) -> str:
    return doc.split(WALK, 1)[1].split("\n## ", 1)[0]


def steps(walk: str) -> list[list[str]]:
    """The walk's steps, each the dotted names it cites that name a function, a method or a class, in order."""
    return [
        [name for name in re.findall(r"`([a-z_]+(?:\.[A-Za-z_]\w*)+)`", step) if _callable(name)]
        for step in re.split(r"\n(?=\d+\. )", walk.strip())[1:]
    ]


@functools.cache
def _callable(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            thing: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for part in parts[cut:]:
                thing = getattr(thing, part)
        except AttributeError:
            return False
        return not isinstance(thing, ModuleType | Signal) and (inspect.isroutine(thing) or inspect.isclass(thing))
    return False


@functools.cache
def _module_of(call: str) -> str:
    """`questions.asking.Wait.run` → `questions.asking`: the longest prefix that is a module."""
    parts = call.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        return ".".join(parts[:cut])
    return call


def first_call(trace: list[str], name: str, start: int = 0) -> int | None:
    """Where `name` (a function, a method, or a class: any of its methods) first runs at or after `start`."""
    for at in range(start, len(trace)):
        if trace[at] == name or trace[at].startswith(f"{name}."):
            return at
    return None


def problems(walk: str, trace: list[str]) -> list[str]:
    """Where the walk and what ran disagree; none when they agree."""
    found = []
    walked = steps(walk)
    if len(walked) < 5:
        return [f"the walk has {len(walked)} steps"]
    never = [name for names in walked for name in names if name not in ELSEWHERE and first_call(trace, name) is None]
    if never:
        found.append(f"the walk cites what a real ask never ran: {never}")
    ran = [first_call(trace, name) for name in SPINE]
    if None in ran or ran != sorted(at for at in ran if at is not None):
        found.append(f"the spine does not run in its order: {dict(zip(SPINE, ran, strict=True))}")
    step_of = {name: number for number, names in reversed(list(enumerate(walked, start=1))) for name in names}
    told = [step_of.get(name) for name in SPINE]
    if None in told or told != sorted(number for number in told if number is not None):
        found.append(
            f"the walk does not tell the spine in its order (its steps): {dict(zip(SPINE, told, strict=True))}"
        )
    cited = set(re.findall(r"`([a-z_]+(?:\.\w+)+)`", walk))
    unnamed = {}
    for call in trace:
        module = _module_of(call)
        if module in unnamed or PLUMBING.match(module):
            continue
        if not any(name == module or name.startswith(f"{module}.") for name in cited):
            unnamed[module] = call
    if unnamed:
        found.append(f"the ask runs through modules the walk never names (their first calls): {unnamed}")
    return found


def test_the_walk_of_one_ask_is_what_a_real_ask_and_answer_run(trace: list[str]) -> None:
    assert not problems(walk_text(DOC.read_text()), trace)


def test_the_walk_with_any_one_step_taken_out_no_longer_matches(trace: list[str]) -> None:
    walk = walk_text(DOC.read_text())
    numbered = re.split(r"\n(?=\d+\. )", walk.strip())
    unnoticed = []
    for number in range(1, len(numbered)):
        without = "\n".join(part for n, part in enumerate(numbered) if n != number)
        if not problems(without, trace):
            unnoticed.append(number)
    assert not unnoticed, f"steps that could go without the test noticing: {unnoticed}"


def test_a_call_the_code_stops_making_is_noticed(trace: list[str]) -> None:
    stopped = [call for call in trace if not call.startswith("questions.wakeups.")]
    assert any("questions.wakeups" in problem for problem in problems(walk_text(DOC.read_text()), stopped))
