"""Reading a client's JSON: nothing a body holds can crash a parser or the code walking the value."""

from __future__ import annotations

import pytest

from core.jsonapi import MAX_DEPTH, BadJSON, loads, too_deep, unstorable
from mcpapi.jsonrpc import jsonrpc_problem


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def test_json_up_to_the_depth_limit_is_read() -> None:
    value = loads(nested(MAX_DEPTH))
    for _ in range(MAX_DEPTH):
        value = value[0]
    assert value == 1


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000, 100_000])
def test_deeper_json_is_refused_with_a_reason_not_a_crash(depth: int) -> None:
    with pytest.raises(BadJSON, match=f"nested too deeply: at most {MAX_DEPTH} levels"):
        loads(nested(depth))


def test_depth_counts_objects_and_arrays_alike() -> None:
    value: object = 1
    for index in range(MAX_DEPTH + 1):
        value = {"k": value} if index % 2 else [value]
    assert too_deep(value)
    assert not too_deep({"a": [1, {"b": []}], "c": "[[[[[[[[["})


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(constant: str) -> None:
    with pytest.raises(BadJSON, match=f"{constant} is not a JSON number"):
        loads(f'{{"step": {constant}}}')


def test_invalid_json_says_where() -> None:
    # The parser's own words differ between Python versions (3.13: "Illegal trailing comma …").
    with pytest.raises(BadJSON, match=r"^is not valid JSON \(.+: line 1 column [89] \(char [78]\)\)$"):
        loads('{"a": 1,}')


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
            -32600,
            'id must be a string or an integer, not {"a": 1}',
        ),
        (b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', -32600, "id must be a string or an integer, not NaN"),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600, "not 1.5"),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, "not true"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, "not null"),
        (
            b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": [], "method": "ping"}]',
            -32600,
            "a batch (a JSON array of messages) is not served",
        ),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": NaN}', -32700, "NaN is not a JSON number"),
        (nested(2000).encode(), -32700, "nested too deeply"),
    ],
)
def test_the_mcp_endpoint_answers_a_body_the_sdk_must_not_see(body: bytes, code: int, message: str) -> None:
    problem = jsonrpc_problem(body)
    assert problem is not None
    status, error = problem
    assert (status, error["id"], error["error"]["code"]) == (400, None, code)
    assert message in error["error"]["message"]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [('{"question": "half \\ud800"}', "arguments.question: must not contain an unpaired surrogate"),
     ('{"options": [{"label": "a\\udc00b"}]}', "arguments.options.0.label: must not contain an unpaired surrogate"),
     ('{"step": NaN}', "arguments.step: NaN is not a JSON number"),
     ('{"step": -Infinity}', "arguments.step: -Infinity is not a JSON number")],
)  # fmt: skip
def test_what_the_sdk_cannot_parse_is_refused_by_name_under_the_request_id(arguments: str, named: str) -> None:
    body = (
        '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "t", "arguments": ' + arguments + "}}"
    )
    problem = jsonrpc_problem(body.encode())
    assert problem is not None
    status, error = problem
    assert (status, error["id"], error["error"]["code"]) == (200, 12, -32602)
    assert error["error"]["message"] == f"Invalid params: {named}" + error["error"]["message"].removeprefix(
        f"Invalid params: {named}"
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": "abc", "method": "ping"}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "id": 7, "result": {}}',  # a response to the server: it has no method
        b"not json at all",  # the SDK's own parse error answers this one
    ],
)
def test_a_good_body_goes_on_to_the_sdk(body: bytes) -> None:
    assert jsonrpc_problem(body) is None


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"name": "a\x00b"}, "name: must not contain a NUL character"),
        (
            {"answer": {"rows": [{"note": "ok"}, {"note": "half \ud800"}]}},
            "answer.rows.1.note: must not contain an unpaired surrogate",
        ),
        ({"answer": {"k\x00": "v"}}, "answer: a key must not contain a NUL character"),
        ({"fine": ["text", 1, None, {"é": "✓ 😀"}]}, None),
    ],
)
def test_text_no_database_can_store_is_found_and_named(values: dict[str, object], problem: str | None) -> None:
    found = unstorable(values)
    assert found == problem if problem is None else found is not None and found.startswith(problem)


def test_unstorable_text_is_found_at_any_depth_without_recursion() -> None:
    value: object = "deep \x00"
    for _ in range(100_000):
        value = [value]
    assert unstorable({"x": value}) == "x" + ".0" * 100_000 + ": must not contain a NUL character (\\u0000)"


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ('{"name": "ask_question", "arguments": "x"}', "Invalid params: arguments must be an object of the tool's arguments by name, not a string"),  # noqa: E501
        ('{"name": "ask_question", "arguments": [1]}', "Invalid params: arguments must be an object of the tool's arguments by name, not an array"),  # noqa: E501
        ('{"name": 5, "arguments": {}}', "Invalid params: name must be a string naming the tool to call, not 5"),
        ('"ask_question"', "Invalid params: params must be an object with the tool's name and its arguments"),
        ('{"name": "nope", "arguments": {}}', "Unknown tool: 'nope'; tools here: ask_question, get_phase_status"),
    ],
)  # fmt: skip
def test_a_tool_call_the_sdk_cannot_use_is_a_32602_naming_the_field(params: str, said: str) -> None:
    body = '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ' + params + "}"
    problem = jsonrpc_problem(body.encode(), frozenset({"ask_question", "get_phase_status"}))
    assert problem is not None
    status, error = problem
    assert (status, error["id"], error["error"]["code"]) == (200, 3, -32602)
    assert error["error"]["message"] == said


def test_a_known_tool_with_object_arguments_goes_on() -> None:
    body = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask_question", "arguments": {}}}'
    assert jsonrpc_problem(body, frozenset({"ask_question"})) is None
