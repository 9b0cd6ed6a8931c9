"""The hooks tool set over real HTTP: discovery, runs across marker folders, safety, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS
from testing.hook_world import LINT, HookWorld, call, gone_within, wait_for_file
from testing.live import ROOT, LiveServer, receive_until, text_of
from testing.live import process_alive as alive


@pytest.fixture(scope="module")
def world() -> Iterator[HookWorld]:
    with tempfile.TemporaryDirectory(prefix="hookbridge-hooks-") as base:
        yield HookWorld(Path(base))


@pytest.fixture(scope="module")
def hooks_server(world: HookWorld) -> Iterator[LiveServer]:
    server = LiveServer(
        env_overrides={
            "HOOKBRIDGE_PLUGINS_DIR": str(world.plugins),
            "HOOKBRIDGE_WORKSPACE": str(world.workspace),
            "HOOKBRIDGE_HOOK_OUTPUT_LIMIT": "4096",
            "HOOKBRIDGE_PROGRESS_INTERVAL": "0.5",
            "HOOK_TEST_LOG": str(world.log),
            "HOOK_TEST_PIDS": str(world.pids),
        }
    )
    server.setup()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(autouse=True)
def fresh_log(world: HookWorld) -> None:
    world.log.write_text("")


async def last_run_once_finished(server: LiveServer, world: HookWorld, timeout: float = 5) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = world.runs(server)[-1]
    while last["status"] == "running" and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        last = world.runs(server)[-1]
    return last


# --- discovery -------------------------------------------------------------------------------------


async def test_tools_list_shows_each_hook_with_its_description_annotations_and_schema(
    hooks_server: LiveServer, world: HookWorld
) -> None:
    async with hooks_server.mcp("2026-07-28", path="/mcp/hooks") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        "jutsu_typescript_lint",
        "jutsu_typescript_typecheck",
        "do_shell_whereami",
        "do_shell_sleepy",
        "do_shell_slow",
        "do_shell_env",
        "do_shell_noisy",
        "do_shell_chatty",
        "do_shell_flood",
    }  # the broken plugin is skipped, the others load
    lint = tools["jutsu_typescript_lint"]
    assert lint.description == (
        "Lints the TypeScript code.\n"
        'Triggers: "lint the code", "check the style".\n'
        "Runs in directories containing: package.json.\n"
        f"Command: {LINT}"
    )
    assert lint.title == "Lint Typescript"
    assert lint.annotations is not None
    assert lint.annotations.model_dump(by_alias=True, exclude_none=True) == {
        "title": "Lint Typescript",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    schema = lint.input_schema
    assert schema["type"] == "object"
    assert schema.get("required", []) == []
    assert {
        name: {k: v for k, v in spec.items() if k != "description"} for name, spec in schema["properties"].items()
    } == {
        "verbose": {"type": "boolean", "default": False, "title": "Verbose"},
        "failFast": {"type": "boolean", "default": True, "title": "Failfast"},
        "directory": {"type": "string", "default": ".", "maxLength": 1024, "title": "Directory"},
    }
    typecheck = tools["jutsu_typescript_typecheck"]
    assert typecheck.title == "Check Types"
    assert typecheck.annotations is not None
    assert typecheck.annotations.read_only_hint is True
    assert typecheck.description == (
        "Runs the typecheck hook of the jutsu-typescript plugin.\n"
        "Runs in the workspace folder, or in the directory you give.\n"
        "Command: echo typecheck"
    )
    assert tools["do_shell_whereami"].title == "Whereami Shell"


async def test_hooks_compose_with_other_tool_sets(hooks_server: LiveServer) -> None:
    async with hooks_server.mcp("legacy", path="/mcp/hooks+maxsim") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"ask_question", "jutsu_typescript_lint"} <= names


def test_hooks_list_shows_what_was_found_and_the_skipped_config(hooks_server: LiveServer, world: HookWorld) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "hooks", "list"],
        cwd=ROOT,
        env=hooks_server.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1  # a config was skipped
    assert "9 hook(s) served at /mcp/hooks" in result.stdout
    assert "jutsu_typescript_lint  Lint Typescript" in result.stdout
    assert f"command: {LINT}" in result.stdout
    assert f"{world.plugins / 'broken' / 'han-config.json'}: hooks.lint.command: Field required" in result.stderr


# --- execution -------------------------------------------------------------------------------------


async def test_fail_fast_stops_at_the_first_failing_directory(hooks_server: LiveServer, world: HookWorld) -> None:
    is_error, text, data = await call(hooks_server, "jutsu_typescript_lint")
    assert is_error
    assert world.ran() == ["packages/a", "packages/b"]  # c never ran; node_modules is not searched
    assert "✅ packages/a: exit 0" in text
    assert "❌ packages/b: exit 3" in text
    assert "⏭ packages/c: not run (failfast)" in text
    assert "lint error in b" in text  # the failure's output (stderr too)
    assert "lint in a" not in text  # a passing folder's output only when verbose
    assert [(d["directory"], d["status"], d["exitCode"]) for d in data["directories"]] == [
        ("packages/a", "passed", 0),
        ("packages/b", "failed", 3),
        ("packages/c", "skipped", None),
    ]
    assert data["status"] == "failed"


async def test_without_fail_fast_every_directory_runs(hooks_server: LiveServer, world: HookWorld) -> None:
    is_error, text, _ = await call(hooks_server, "jutsu_typescript_lint", failFast=False, verbose=True)
    assert is_error
    assert world.ran() == ["packages/a", "packages/b", "packages/c"]
    assert "failed in 1 of 3 directories run" in text
    assert "✅ packages/c: exit 0" in text
    assert "lint in a" in text
    assert "lint in c" in text
    assert "lint error in b" in text


async def test_a_passing_run_is_not_an_error(hooks_server: LiveServer, world: HookWorld) -> None:
    is_error, text, data = await call(hooks_server, "jutsu_typescript_lint", directory="packages/a")
    assert not is_error
    assert world.ran() == ["packages/a"]
    assert text.startswith("✅ Lint Typescript (jutsu_typescript_lint) passed in 1 of 1 directories.")
    assert data["status"] == "passed"


async def test_a_folder_without_markers_runs_nothing(hooks_server: LiveServer, world: HookWorld) -> None:
    is_error, text, data = await call(hooks_server, "jutsu_typescript_lint", directory="$(touch pwned)")
    assert not is_error
    assert data["status"] == "nothing-to-run"
    assert "contains package.json" in text
    assert world.ran() == []


async def test_the_hook_gets_its_plugin_root_and_none_of_the_servers_secrets(
    hooks_server: LiveServer, world: HookWorld
) -> None:
    is_error, text, _ = await call(hooks_server, "do_shell_env", verbose=True)
    assert not is_error
    assert f"root={world.plugins / 'do-shell'}" in text
    assert "secret=unset" in text
    assert "e2e-secret-key" not in text


async def test_long_output_is_cut_and_the_cut_is_stated(hooks_server: LiveServer) -> None:
    is_error, text, _ = await call(hooks_server, "do_shell_noisy")
    assert is_error
    assert "the-end" in text  # the end of the output is kept
    assert "bytes cut here" in text
    assert re.search(r"\[output cut: 15913 of 20009 bytes left out; the limit is 4096 bytes per directory\]", text)
    assert len(text) < 6000


# --- safety ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("directory", ["../..", "/etc", "escape", "packages/../../outside", "/"])
async def test_a_directory_leaving_the_workspace_is_refused_and_nothing_runs(
    hooks_server: LiveServer, world: HookWorld, directory: str
) -> None:
    runs_before = len(world.runs(hooks_server))
    for tool in ("do_shell_whereami", "jutsu_typescript_lint"):
        is_error, text, _ = await call(hooks_server, tool, directory=directory)
        assert is_error
        assert "is outside the workspace" in text
    assert world.ran() == []
    assert len(world.runs(hooks_server)) == runs_before


@pytest.mark.parametrize("directory", ["$(touch pwned)", "; touch pwned", "`touch pwned`", "x && touch pwned"])
async def test_shell_metacharacters_in_directory_are_never_executed(
    hooks_server: LiveServer, world: HookWorld, directory: str
) -> None:
    is_error, text, _ = await call(hooks_server, "do_shell_whereami", directory=directory)
    if (world.workspace / directory).is_dir():
        # A folder with that literal name exists: the hook runs there, the name is only a path.
        assert not is_error
        assert world.ran() == [directory]
    else:
        assert is_error
        assert "is not a folder in the workspace" in text
        assert world.ran() == []
    assert not list(world.base.rglob("pwned"))
    assert not (ROOT / "pwned").exists()


# --- time-outs, cancellation, concurrency ------------------------------------------------------------


async def test_a_timeout_kills_the_whole_process_group(hooks_server: LiveServer, world: HookWorld) -> None:
    started = time.monotonic()
    is_error, text, data = await call(hooks_server, "do_shell_sleepy")
    assert time.monotonic() - started < 60, "the 300 s sleep was killed at its timeout"
    assert is_error
    assert data["status"] == "timed-out"
    assert "timed out after 1.5 s, processes killed" in text
    child = int((world.pids / "sleepy.pid").read_text())
    assert await gone_within(child), "the hook's sleeping child outlived the timeout"


async def test_a_caller_with_a_progress_token_hears_from_a_long_run(hooks_server: LiveServer) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with hooks_server.mcp("2026-07-28", path="/mcp/hooks") as client:
        result = await client.call_tool("do_shell_sleepy", {}, progress_callback=on_progress)
    assert result.is_error  # it times out after 1.5 s; the interval is 0.5 s on this server
    assert len(seen) >= 3, seen
    values = [value for value, _ in seen]
    assert values == sorted(values), "progress must increase"
    assert len(set(values)) == len(values), "progress must increase"
    assert seen[0][1] == "do_shell_sleepy: 0 of 1 folders done; running in ."
    assert seen[-1][1] is not None
    assert re.fullmatch(r"do_shell_sleepy: 0 of 1 folders done; running in \. for 1 s", seen[-1][1])


# --- verbose output, live -------------------------------------------------------------------------


async def hear_chatty(world: HookWorld, messages: list[str], prefix: str = "[.] ") -> None:
    """Wait until "step one" has come while the hook runs (it waits for the go file), then let it go on."""
    go = world.pids / "go"
    go.unlink(missing_ok=True)
    try:
        deadline = time.monotonic() + 30
        while f"{prefix}step one" not in messages:
            assert time.monotonic() < deadline, f"no live line while the hook ran: {messages}"
            await asyncio.sleep(0.02)
        assert f"{prefix}step two" not in messages  # the hook is still waiting: this came live
    finally:
        go.write_text("")


@pytest.mark.parametrize("era", ["2026-07-28", "legacy"])
async def test_verbose_output_comes_as_progress_while_the_hook_runs(
    hooks_server: LiveServer, world: HookWorld, era: str
) -> None:
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with hooks_server.mcp(era, path="/mcp/hooks") as client:
        call = asyncio.create_task(
            client.call_tool("do_shell_chatty", {"verbose": True}, progress_callback=on_progress)
        )
        await hear_chatty(world, messages)
        result = await call
    assert not result.is_error
    assert [m for m in messages if m.startswith("[.]")] == ["[.] step one", "[.] step two"]
    assert "step one\nstep two" in text_of(result)  # the result still has it all


@pytest.mark.parametrize(
    ("era", "options"),
    [("legacy", {}), ("2026-07-28", {"log_level": "info"})],
    ids=["handshake-era", "2026-opted-in"],
)
async def test_verbose_output_comes_as_log_messages_to_a_caller_without_a_progress_token(
    hooks_server: LiveServer, world: HookWorld, era: str, options: dict[str, Any]
) -> None:
    messages: list[str] = []
    loggers: set[str | None] = set()

    async def on_log(params: Any) -> None:
        messages.append(str(params.data))
        loggers.add(params.logger)

    async with hooks_server.mcp(era, path="/mcp/hooks", logging_callback=on_log, **options) as client:
        call = asyncio.create_task(client.call_tool("do_shell_chatty", {"verbose": True}))
        await hear_chatty(world, messages)
        result = await call
    assert not result.is_error
    assert messages == ["[.] step one", "[.] step two"]
    assert loggers == {"do_shell_chatty"}


async def test_a_level_set_with_logging_set_level_holds_for_the_connection_on_later_requests(
    hooks_server: LiveServer, world: HookWorld
) -> None:
    """Stateless HTTP keeps no session: the level is kept for the connection's Mcp-Session-Id."""
    messages: list[str] = []

    async def on_log(params: Any) -> None:
        messages.append(str(params.data))

    (world.pids / "go").write_text("")  # no waiting for a live line: none should come
    async with hooks_server.mcp("legacy", path="/mcp/hooks", logging_callback=on_log) as client:
        assert client.server_capabilities.logging is not None
        await client.set_logging_level("warning")
        quiet = await client.call_tool("do_shell_chatty", {"verbose": True})
        await client.set_logging_level("debug")
        chatty = await client.call_tool("do_shell_chatty", {"verbose": True})
    assert "step one\nstep two" in text_of(quiet)
    assert "step one\nstep two" in text_of(chatty)
    assert messages == ["[.] step one", "[.] step two"], "info lines only after the level let them through"


async def test_the_typescript_sdk_hears_live_output_past_its_timeout_and_an_abort_stops_the_run(
    hooks_server: LiveServer, world: HookWorld
) -> None:
    """As hosts embed it: a 2 s timeout reset by progress, then an Esc-style abort of a second run."""
    from testing.ts_client import ts_clients

    go = world.pids / "go"
    go.unlink(missing_ok=True)
    async with ts_clients() as ts:
        await ts.connect("host", f"{hooks_server.url}/mcp/hooks", hooks_server.tokens["agent-a"])
        options = {"timeout": 2000, "resetTimeoutOnProgress": True, "progress": True}
        await ts.call("host", "live", "do_shell_chatty", {"verbose": True}, **options)
        await ts.wait_for(event="progress", call="live", message="[.] step one")
        await asyncio.sleep(3)  # past the client's own timeout: progress kept the call alive
        go.write_text("")
        outcome = await ts.outcome("live")
        assert outcome["event"] == "result", outcome
        assert "step one\nstep two" in outcome["result"]["content"][0]["text"]
        assert [e["message"] for e in ts.all(event="progress", call="live") if e["message"].startswith("[.]")] == [
            "[.] step one",
            "[.] step two",
        ]

        go.unlink()
        await ts.call("host", "esc", "do_shell_chatty", {"verbose": True}, **options)
        await ts.wait_for(event="progress", call="esc", message="[.] step one")
        await ts.send(op="abort", call="esc")
        assert (await ts.outcome("esc"))["event"] == "error"
    last = await last_run_once_finished(hooks_server, world)
    assert (last["tool"], last["status"]) == ("do_shell_chatty", "cancelled")
    go.write_text("")


async def test_without_verbose_no_output_is_sent_live(hooks_server: LiveServer, world: HookWorld) -> None:
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async def on_log(params: Any) -> None:
        messages.append(str(params.data))

    (world.pids / "go").write_text("")  # no waiting: nothing is listened for
    async with hooks_server.mcp("legacy", path="/mcp/hooks", logging_callback=on_log) as client:
        result = await client.call_tool("do_shell_chatty", {}, progress_callback=on_progress)
    assert not result.is_error
    assert messages == ["do_shell_chatty: 0 of 1 folders done; running in ."]


async def test_live_output_is_bounded_and_says_where_the_rest_is(hooks_server: LiveServer) -> None:
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with hooks_server.mcp("2026-07-28", path="/mcp/hooks") as client:
        result = await client.call_tool("do_shell_flood", {"verbose": True}, progress_callback=on_progress)
    lines = [m for m in messages if m.startswith("[.]")]
    assert lines[:200] == [f"[.] {n}" for n in range(1, 201)]
    assert lines[200:] == ["[.] … more output is not sent live (limit 200 lines); the result has it"]
    assert "\n1000" in text_of(result)


async def test_a_client_that_disconnects_gets_its_hook_killed(hooks_server: LiveServer, world: HookWorld) -> None:
    pid_file = world.pids / "slow.pid"
    pid_file.unlink(missing_ok=True)
    call_task = asyncio.create_task(call(hooks_server, "do_shell_slow"))
    child = int(await wait_for_file(pid_file))
    assert alive(child)
    call_task.cancel()  # closes the HTTP connection mid-call
    with pytest.raises(asyncio.CancelledError):
        await call_task
    assert await gone_within(child), "the hook kept running after its client went away"
    last = await last_run_once_finished(hooks_server, world)
    assert (last["tool"], last["status"], last["slot"]) == ("do_shell_slow", "cancelled", None)


async def test_a_cancel_notification_stops_the_run_while_its_stream_stays_open(
    hooks_server: LiveServer, world: HookWorld
) -> None:
    """What the TypeScript SDK does on Esc: POST notifications/cancelled on the side, keep the stream open."""
    import httpx2

    pid_file = world.pids / "slow.pid"
    pid_file.unlink(missing_ok=True)
    headers = {
        **hooks_server.auth(),
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    call_body = {
        "jsonrpc": "2.0",
        "id": 77,
        "method": "tools/call",
        "params": {"name": "do_shell_slow", "arguments": {}},
    }
    url = f"{hooks_server.url}/mcp/hooks"
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:

        async def call() -> list[str]:
            async with http.stream("POST", url, json=call_body) as response:
                assert response.status_code == 200
                return [line async for line in response.aiter_lines() if line.startswith("data:")]

        stream = asyncio.create_task(call())
        child = int(await wait_for_file(pid_file))
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}}
        assert (await http.post(url, json=cancel)).status_code == 202
        assert await gone_within(child), "the hook kept running after the call was cancelled"
        await asyncio.wait_for(stream, 30)
    last = await last_run_once_finished(hooks_server, world)
    assert (last["tool"], last["status"], last["slot"]) == ("do_shell_slow", "cancelled", None)


async def test_a_second_run_in_the_same_folder_is_refused_while_the_first_runs(
    hooks_server: LiveServer, world: HookWorld
) -> None:
    pid_file = world.pids / "slow.pid"
    pid_file.unlink(missing_ok=True)
    first = asyncio.create_task(call(hooks_server, "do_shell_slow"))
    try:
        child = int(await wait_for_file(pid_file))
        is_error, text, _ = await call(hooks_server, "do_shell_slow")
        assert is_error
        assert "do_shell_slow is already running in '.'" in text
        assert "started" in text
        assert "agent-a" in text
        # Another folder is another slot.
        other_error, _, _ = await call(hooks_server, "do_shell_whereami", directory="packages")
        assert not other_error
    finally:
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
    assert await gone_within(child)


# --- the dashboard -------------------------------------------------------------------------------------


async def test_a_dashboard_sees_the_run_start_and_finish(hooks_server: LiveServer, world: HookWorld) -> None:
    async with hooks_server.login() as browser, hooks_server.dashboard_socket(browser) as socket:
        await receive_until(socket, 'id="hook-runs"')  # the current state first
        call_task = asyncio.create_task(call(hooks_server, "jutsu_typescript_lint", directory="packages/b"))
        started = await receive_until(socket, 'hx-swap-oob="afterbegin:#hook-runs"')
        run_id = re.search(r'id="hook-run-([0-9a-f-]+)"', started)
        assert run_id
        assert 'data-status="running"' in started
        finished = await receive_until(socket, 'data-status="failed"')
        assert f'id="hook-run-{run_id.group(1)}"' in finished
        _, _, data = await call_task
        assert data["runId"] == run_id.group(1)
        page = await browser.get(f"/hooks/runs/{run_id.group(1)}/")
    assert page.status_code == 200
    assert "lint error in b" in page.text  # the captured output is viewable
    assert "packages/b" in page.text


async def test_the_run_page_needs_a_login(hooks_server: LiveServer) -> None:
    import httpx2

    async with httpx2.AsyncClient(base_url=hooks_server.url, timeout=60) as http:
        response = await http.get(f"/hooks/runs/{uuid.uuid4()}/")
    assert response.status_code == 302
    assert "/accounts/login/" in response.headers["location"]


async def test_a_hook_run_over_stdio_shows_on_the_web_dashboard(hooks_server: LiveServer, world: HookWorld) -> None:
    """Two processes on the embedded layer: the stdio process's pushes reach the server's dashboards directly."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    token = hooks_server.tokens["agent-b"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--token", token, "--toolsets", "hooks"],
        env=hooks_server.env,
        cwd=str(ROOT),
    )
    async with hooks_server.login() as browser, hooks_server.dashboard_socket(browser) as dashboard:
        await receive_until(dashboard, 'id="hook-runs"')
        async with Client(params) as client:
            result = await client.call_tool("do_shell_whereami", {"directory": "packages"})
        assert not result.is_error
        assert world.ran() == ["packages"]
        pushed = await receive_until(dashboard, 'data-status="passed"', timeout=10)
    assert "Whereami Shell" in pushed
    assert "agent-b" in pushed


@pytest.mark.browser
async def test_a_run_shows_live_on_the_dashboard_and_its_output_on_its_page(
    hooks_server: LiveServer, world: HookWorld, browser: Browser
) -> None:
    from testing.browser import log_in

    page = await browser.new_page()
    await log_in(page, hooks_server)
    await expect(page.get_by_role("heading", name="Hook runs")).to_be_visible()
    pid_file = world.pids / "slow.pid"
    pid_file.unlink(missing_ok=True)
    slow = asyncio.create_task(call(hooks_server, "do_shell_slow", directory="packages"))
    row = page.locator("li.hook-run", has_text="Slow Shell").first
    await expect(row).to_have_attribute("data-status", "running", timeout=10_000)  # pushed, no reload
    slow.cancel()
    await asyncio.gather(slow, return_exceptions=True)
    await expect(row).to_have_attribute("data-status", "cancelled", timeout=10_000)

    lint = asyncio.create_task(call(hooks_server, "jutsu_typescript_lint", failFast=False))
    lint_row = page.locator("li.hook-run", has_text="Lint Typescript").first
    await expect(lint_row).to_have_attribute("data-status", "failed", timeout=15_000)
    await expect(lint_row).to_contain_text("agent-a")
    await lint
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "dashboard-hook-runs.png"), full_page=True)

    await lint_row.get_by_role("link", name="Lint Typescript").click()
    await expect(page.get_by_role("heading", name="Lint Typescript")).to_be_visible()
    failed = page.locator("details.run-directory", has_text="packages/b")
    await expect(failed).to_have_attribute("open", "")  # failures open by default
    await expect(failed.locator("pre")).to_contain_text("lint error in b")
    await page.locator("summary", has_text="packages/a").click()
    await expect(page.locator("details.run-directory", has_text="packages/a").locator("pre")).to_contain_text(
        "lint in a"
    )
    await page.screenshot(path=str(ARTIFACTS / "hook-run-page.png"), full_page=True)


# Each filter's label text against its control, and anything wider than the screen: (problem, where).
FILTER_LAYOUT = """
() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) problems.push(["page wider than the screen", width]);
  for (const label of document.querySelectorAll("form[role=search] label")) {
    const control = label.querySelector("select, input");
    const text = [...label.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    const range = document.createRange();
    range.selectNodeContents(text);
    const t = range.getBoundingClientRect();
    const c = control.getBoundingClientRect();
    if (c.right > t.left && t.right > c.left && c.bottom > t.top && t.bottom > c.top) {
      problems.push(["control overlaps its label", control.name]);
    }
    if (c.right > width + 0.5) problems.push(["control wider than the screen", control.name]);
  }
  for (const row of document.querySelectorAll("li.hook-run")) {
    if (row.getBoundingClientRect().right > width + 0.5) problems.push(["row wider than the screen", row.id]);
  }
  return problems;
}
"""


@pytest.mark.browser
@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_the_runs_page_filters_by_hook_status_and_agent(
    hooks_server: LiveServer, world: HookWorld, browser: Browser, width: int, height: int
) -> None:
    from testing.browser import log_in, serious_violations

    async with hooks_server.mcp("legacy", token_name="agent-b", path="/mcp/hooks") as client:
        await client.call_tool("do_shell_whereami", {"directory": "packages"})
    await call(hooks_server, "jutsu_typescript_lint", failFast=False)  # agent-a; packages/b fails
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, hooks_server)
    await page.get_by_role("link", name="Hooks", exact=True).click()
    await expect(page.get_by_role("heading", name="Hook runs")).to_be_visible()
    rows = page.locator("li.hook-run")
    await expect(rows.first).to_be_visible()
    assert await rows.count() >= 2

    await page.locator("select[name=agent]").select_option("agent-b")  # applied on change, without a reload
    await expect(page).to_have_url(re.compile(r"/hooks/runs/\?.*agent=agent-b"))
    await expect(rows.filter(has_text="agent-a")).to_have_count(0)
    await expect(rows.filter(has_text="Whereami Shell").first).to_be_visible()

    await page.locator("select[name=agent]").select_option("")
    await page.locator("select[name=hook]").select_option("jutsu_typescript_lint")
    await page.locator("select[name=status]").select_option("failed")
    await expect(page).to_have_url(re.compile(r"hook=jutsu_typescript_lint.*status=failed"))
    await expect(rows.filter(has_text="Whereami Shell")).to_have_count(0)
    await expect(rows.first).to_have_attribute("data-status", "failed")
    assert set(await rows.evaluate_all("rows => rows.map((r) => r.dataset.status)")) == {"failed"}

    assert await page.evaluate(FILTER_LAYOUT) == []
    assert await serious_violations(page) == []
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"hook-runs-{width}.png"), full_page=True)
    await rows.first.get_by_role("link").click()
    await expect(page.get_by_role("heading", name="Lint Typescript")).to_be_visible()
    await page.close()


async def test_the_run_caps_hold_across_parallel_calls_in_many_folders(world: HookWorld) -> None:
    """The attack the caps stop: one token naming many folders at once (maxConcurrent counts per folder)."""
    server = LiveServer(
        env_overrides={
            "HOOKBRIDGE_PLUGINS_DIR": str(world.plugins),
            "HOOKBRIDGE_WORKSPACE": str(world.workspace),
            "HOOK_TEST_LOG": str(world.log),
            "HOOK_TEST_PIDS": str(world.pids),
            "HOOKBRIDGE_HOOK_MAX_RUNS": "3",
            "HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN": "2",
        }
    )
    server.setup()
    folders = [".", "packages", "packages/a", "packages/b", "packages/c"]
    try:
        calls = [asyncio.create_task(call(server, "do_shell_slow", directory=folder)) for folder in folders]
        refused: list[str] = []
        deadline = time.monotonic() + 20
        while len(refused) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            refused = [task.result()[1] for task in calls if task.done()]
        assert len(refused) == 3, refused  # agent-a may run 2: the other 3 are refused at once
        for text in refused:
            assert text.startswith(
                "Token 'agent-a' has 2 hook runs going, the most Hook Bridge allows at once "
                "(HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN=2). Nothing was started"
            ), text
        running = [run for run in world.runs(server) if run["status"] == "running"]
        assert len(running) == 2
        assert len(world.runs(server)) == 2  # refused runs leave no row behind
        # Another token still gets the server's third place, and no more.
        async with server.mcp("legacy", token_name="agent-b", path="/mcp/hooks") as client:
            third = asyncio.create_task(client.call_tool("do_shell_slow", {"directory": "node_modules/dep"}))
            for _ in range(200):  # until the third run is going (10 s at most)
                if len([run for run in world.runs(server) if run["status"] == "running"]) == 3:
                    break
                await asyncio.sleep(0.05)
            fourth = await client.call_tool("do_shell_slow", {"directory": "node_modules"})
            assert fourth.is_error
            assert text_of(fourth).startswith("The server has 3 hook runs going")
            assert "HOOKBRIDGE_HOOK_MAX_RUNS=3" in text_of(fourth)
            third.cancel()
            await asyncio.gather(third, return_exceptions=True)
        for task in calls:
            task.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
    finally:
        server.close()


async def test_no_process_is_left_over(hooks_server: LiveServer, world: HookWorld) -> None:
    # Waited on, not looked at once: the runs cut short just before are still in their SIGTERM grace.
    for pid_file in world.pids.glob("*.pid"):
        assert await gone_within(int(pid_file.read_text()), 15), pid_file.name
    assert await asyncio.to_thread(os.path.exists, world.log)
