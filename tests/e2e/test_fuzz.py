"""Property-based fuzzing of every tool of every set over real HTTP (issue 17).

Valid arguments come from each tool's published inputSchema (`from_schema` below: the subset of
JSON Schema the tools publish; hypothesis-jsonschema 0.23 fails on Hypothesis 6.170); one
mutation makes them invalid: a required argument dropped, an unknown one added, a wrong type,
a number no column holds, a NUL or half a surrogate pair, a 1 MB string, nesting 200 deep.
Invariants: no 5xx, never accepted, no "Error executing tool", the error names the argument
(or the body), no row of any table written, no traceback in the server's log. On SQLite and
on PostgreSQL (the team tests). The outcomes are counted in test-artifacts/fuzz-summary.json.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, cast

import httpx2
import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from testing.browser import ARTIFACTS
from testing.hook_world import HookWorld
from testing.live import PASSWORD, LiveServer, sqlite_at
from testing.team import fresh_postgres_database, require_team_services

SETS = ["maxsim", "askme", "clifford", "progress", "hooks", "approvals"]
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
outcomes: Counter[str] = Counter()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.team)])
def fuzz_server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """SQLite, the embedded default; and the team's PostgreSQL, whose columns are stricter."""
    with tempfile.TemporaryDirectory(prefix="hookbridge-fuzz-") as base, ExitStack() as stack:
        world = HookWorld(Path(base))
        env = {
            "HOOKBRIDGE_PLUGINS_DIR": str(world.plugins),
            "HOOKBRIDGE_WORKSPACE": str(world.workspace),
            "HOOK_TEST_LOG": str(world.log),
            "HOOK_TEST_PIDS": str(world.pids),
        }
        if request.param == "postgresql":
            require_team_services()
            env["DATABASE_URL"] = stack.enter_context(fresh_postgres_database(migrated=True))
        server = LiveServer(env_overrides=env)
        server.setup()
        try:
            yield server
        finally:
            ARTIFACTS.mkdir(exist_ok=True)
            (ARTIFACTS / "fuzz-summary.json").write_text(json.dumps(dict(sorted(outcomes.items())), indent=2))
            server.close()


def row_counts(server: LiveServer) -> dict[str, int]:
    url = server.env["DATABASE_URL"]
    if url.startswith("sqlite"):
        with sqlite_at(server.tmp / "db.sqlite3") as db:
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {table: db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in tables}
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        tables = [
            row[0] for row in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
        ]
        counts: dict[str, int] = {}
        for table in tables:
            found = db.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            assert found is not None
            counts[table] = int(found[0])
        return counts


def from_schema(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> st.SearchStrategy[Any]:
    """Values valid for the JSON Schema that pydantic publishes for a tool's arguments."""
    defs = {**(defs or {}), **schema.get("$defs", {})}
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return st.one_of([from_schema(option, defs) for option in schema["anyOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        alphabet = st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")
        return st.text(alphabet, min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 30), 30))
    if kind == "integer":
        return st.integers(schema.get("minimum", -1000), schema.get("maximum", 1000))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = from_schema(schema.get("items", {"type": "string"}), defs)
        low = schema.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=max(low, min(schema.get("maxItems", 3), 3)), unique_by=None)
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {name: from_schema(spec, defs) for name, spec in properties.items() if name in required},
            optional={name: from_schema(spec, defs) for name, spec in properties.items() if name not in required},
        )
    raise AssertionError(f"a schema this fuzzer does not know: {schema}")


@st.composite
def invalid_arguments(draw: st.DrawFn, schema: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(mutation, the argument it touched, the arguments): valid ones from the schema, then one mutation."""
    arguments: dict[str, Any] = dict(cast("dict[str, Any]", draw(from_schema(schema))))
    properties = sorted(schema.get("properties", {}))
    required = sorted(schema.get("required", []))
    mutations = ["extra", "deep"] + (["drop"] if required else [])
    if properties:
        mutations += ["type", "number", "nul", "surrogate", "long"]
    mutation = draw(st.sampled_from(mutations))
    name = draw(st.sampled_from(required if mutation == "drop" else properties or ["zz_unknown"]))
    if mutation == "drop":
        del arguments[name]
    elif mutation == "extra":
        name = "zz_unknown"
        arguments[name] = draw(WRONG_VALUES)
    elif mutation == "type":
        arguments[name] = draw(WRONG_VALUES)
    elif mutation == "number":
        arguments[name] = draw(st.sampled_from([2**31, -(2**31) - 1, 10**30, -(10**30), 2**63]))
    elif mutation == "nul":
        arguments[name] = draw(st.text(max_size=10)) + "\x00" + draw(st.text(max_size=10))
    elif mutation == "surrogate":
        arguments[name] = "half a pair " + draw(st.sampled_from(["\ud800", "\udfff", "\udc00x"]))
    elif mutation == "long":
        arguments[name] = "x" * 1_000_000
    elif mutation == "deep":
        name = "body"
        arguments[draw(st.sampled_from(properties or ["zz_unknown"]))] = json.loads("[" * 200 + "]" * 200)
    if mutation not in ("nul", "surrogate", "deep"):
        # Only what the schema refuses: a mutation that happens to stay valid would be a real call.
        assume(not jsonschema.Draft202012Validator(schema).is_valid(arguments))
    return mutation, name, arguments


def call(
    http: httpx2.Client, server: LiveServer, path: str, tool: str, arguments: dict[str, Any]
) -> tuple[int, dict[str, Any] | None, str]:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
        ensure_ascii=True,  # a lone surrogate travels as its \\u escape, as a JavaScript client sends it
    )
    response = http.post(f"{server.url}{path}", content=body, headers={"Content-Type": "application/json"})
    text = response.text
    message = None
    for line in text.splitlines():
        if line.startswith("data:") and '"id"' in line:
            message = json.loads(line[5:])
    if message is None and response.headers.get("content-type", "").startswith("application/json"):
        message = response.json()
    return response.status_code, message, text


@pytest.mark.parametrize("toolset", SETS)
def test_no_invalid_call_is_accepted_crashes_or_writes(fuzz_server: LiveServer, toolset: str) -> None:
    path = f"/mcp/{toolset}"
    with httpx2.Client(headers={**fuzz_server.auth(), **HEADERS}, timeout=20) as http:
        listed = http.post(
            f"{fuzz_server.url}{path}", json={"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}}
        )
        tools = [
            (tool["name"], tool["inputSchema"])
            for line in listed.text.splitlines() if line.startswith("data:")
            for tool in json.loads(line[5:])["result"]["tools"]
        ] or [(t["name"], t["inputSchema"]) for t in listed.json()["result"]["tools"]]  # fmt: skip
        assert tools
        for tool, schema in tools:
            fuzz_one_tool(fuzz_server, http, path, tool, schema)
    assert "Traceback" not in fuzz_server.log()


def fuzz_one_tool(server: LiveServer, http: httpx2.Client, path: str, tool: str, schema: dict[str, Any]) -> None:
    @settings(suppress_health_check=list(HealthCheck))
    @given(case=invalid_arguments(schema))
    def refused(case: tuple[str, str, dict[str, Any]]) -> None:
        mutation, name, arguments = case
        before = row_counts(server)
        status, message, text = call(http, server, path, tool, arguments)
        where = f"{tool} {mutation} {name}: {status} {text[:300]}"
        assert status < 500, where
        assert message is not None, where
        if "error" in message:
            outcome = f"{status} json-rpc {message['error']['code']}"
            said = message["error"]["message"]
        else:
            result = message["result"]
            assert result.get("isError") is True, f"accepted: {where}"
            outcome = f"{status} tool error"
            said = result["content"][0]["text"]
        assert "Error executing tool" not in said, where
        assert "Traceback" not in said, where
        expected = "zz_unknown" if mutation == "extra" else name
        assert expected in said or (mutation in ("deep", "long") and "body" in said), where
        assert row_counts(server) == before, where
        database = server.env["DATABASE_URL"].split(":", 1)[0]
        outcomes[f"{database} {mutation}: {outcome}"] += 1
        outcomes[f"{database} calls"] += 1

    refused()


TEXT_VALUES = st.one_of(
    WRONG_VALUES,
    st.just(""),
    st.just("   "),
    st.text(max_size=10).map(lambda text: text + "\x00"),
    st.sampled_from(["half a pair \ud800", "x" * 100_001]),
)
QUERY_VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["0", "-1", "1e3", "NaN", "%00", "9" * 400, "Zm9v", "eyJ9", "a" * 5000]),
)


async def _claude_code_session(server: LiveServer) -> str:
    """A session opened by Claude Code's hooks: one whose agent takes messages."""
    session_id = str(uuid.uuid4())
    body = {"session_id": session_id, "hook_event_name": "UserPromptSubmit", "cwd": "/tmp", "prompt": "fuzz"}
    async with httpx2.AsyncClient(headers=server.auth("agent-a"), timeout=60) as http:
        assert (await http.post(f"{server.url}/hooks/claude", json=body)).status_code == 200
    state = await server.session_state(session_id)
    assert state.status_code == 200, state.text
    return session_id


def test_no_invalid_input_to_the_paged_and_steering_routes_is_accepted_crashes_or_writes(
    fuzz_server: LiveServer,
) -> None:
    """The surfaces of issue 27: the queue's cursor, the session events' pages, and steering messages."""
    import asyncio

    guid = asyncio.run(_claude_code_session(fuzz_server))
    base = fuzz_server.url
    with (
        httpx2.Client(base_url=base, headers=fuzz_server.auth("answer-bot"), timeout=20) as api,
        httpx2.Client(base_url=base, timeout=20) as person,
    ):
        page = person.get("/accounts/login/")
        csrf = page.text.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        logged_in = person.post(
            "/accounts/login/",
            data={"username": fuzz_server.username, "password": PASSWORD, "csrfmiddlewaretoken": csrf},
        )
        assert logged_in.status_code == 302

        @settings(suppress_health_check=list(HealthCheck), max_examples=60)
        @given(after=QUERY_VALUES)
        def cursor(after: str) -> None:
            before = row_counts(fuzz_server)
            response = person.get("/questions/pending", params={"after": after})
            where = f"after={after[:60]!r}: {response.status_code} {response.text[:200]}"
            assert response.status_code in (200, 400), where
            if response.status_code == 400:
                assert response.text.startswith("after:"), where
            assert row_counts(fuzz_server) == before, where
            outcomes[f"cursor {response.status_code}"] += 1

        @settings(suppress_health_check=list(HealthCheck), max_examples=60)
        @given(name=st.sampled_from(["events_before", "events_limit"]), value=QUERY_VALUES)
        def events_page(name: str, value: str) -> None:
            response = api.get(f"/api/sessions/{guid}", params={name: value})
            where = f"{name}={value[:60]!r}: {response.status_code} {response.text[:200]}"
            assert response.status_code in (200, 400), where
            if response.status_code == 400:
                assert response.json()["field"] == name, where
            outcomes[f"events page {response.status_code}"] += 1

        @settings(suppress_health_check=list(HealthCheck), max_examples=80)
        @given(
            body=st.one_of(
                st.fixed_dictionaries({"text": TEXT_VALUES}),
                st.fixed_dictionaries({"text": st.just("ok"), "zz_unknown": WRONG_VALUES}),
                st.fixed_dictionaries({}),
                WRONG_VALUES.filter(lambda value: not isinstance(value, dict)),
            )
        )
        def message(body: Any) -> None:
            before = row_counts(fuzz_server)
            content = json.dumps(body, ensure_ascii=True)
            response = api.post(
                f"/api/sessions/{guid}/messages", content=content, headers={"Content-Type": "application/json"}
            )
            where = f"{content[:80]}: {response.status_code} {response.text[:200]}"
            assert response.status_code < 500, where
            if response.status_code == 201:
                # Only a real message is taken: non-empty text, within the limit, nothing unknown refused here.
                assert isinstance(body, dict), where
                assert isinstance(body.get("text"), str), where
                assert body["text"].strip(), where
                assert "\x00" not in body["text"], where
                outcomes["message 201"] += 1
                return
            error = response.json()
            fields: tuple[str, ...] = ("text", "body", "guid")
            if "is not a JSON number" in error.get("error", ""):
                fields += ("zz_unknown",)  # no JSON at all (Infinity, NaN): refused wherever it sits, by its key
            assert error.get("field") in fields, where
            assert row_counts(fuzz_server) == before, where
            outcomes[f"message {response.status_code} {error.get('field')}"] += 1

        cursor()
        events_page()
        message()
    assert "Traceback" not in fuzz_server.log()
