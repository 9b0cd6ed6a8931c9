"""An approval: an agent host asks whether a tool may run (Claude Code's PermissionRequest, its prompt tool).

The answer is a decision, stored as the host reads it: {"behavior": "allow"} (with "updatedInput"
when a person edited the input, or "updatedPermissions" holding one of the host's own
suggestions), or {"behavior": "deny", "message": ...}. The payload holds what the host sent:
tool_name, tool_input, permission_suggestions, and where it came from (session, cwd).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from django import forms
from django.conf import settings

from questions.decisions import Decision
from questions.kinds.base import AnswerForm, Asked, InvalidAnswer, QuestionKind, Reply, optional_text

DEFAULT_DENIAL = "A person on your team denied this on Hook Bridge."


def describe_suggestion(suggestion: Any) -> str:
    """A host's permission suggestion in words, for its "Always allow …" button."""
    if not isinstance(suggestion, dict):
        return json.dumps(suggestion, ensure_ascii=False)[:120]
    kind = suggestion.get("type")
    where = suggestion.get("destination")
    scope = f" ({'this session' if where == 'session' else where})" if where else ""
    if kind == "addRules" and isinstance(suggestion.get("rules"), list):
        rules = []
        for rule in suggestion["rules"]:
            if isinstance(rule, dict):
                content = rule.get("ruleContent")
                rules.append(f"{rule.get('toolName', '?')}({content})" if content else str(rule.get("toolName", "?")))
        verb = "Always deny" if suggestion.get("behavior") == "deny" else "Always allow"
        return f"{verb} {', '.join(rules)}{scope}"
    if kind == "addDirectories" and isinstance(suggestion.get("directories"), list):
        return f"Always allow access to {', '.join(str(d) for d in suggestion['directories'])}{scope}"
    if kind == "setMode":
        return f"Allow, and switch to {suggestion.get('mode')} mode{scope}"
    return f"Allow, and {kind}: {json.dumps(suggestion, ensure_ascii=False)[:100]}"


def suggestions_of(question: Asked) -> list[Any]:
    found = question.payload.get("permission_suggestions")
    return found if isinstance(found, list) else []


def destructive(command: str) -> list[str]:
    """What in `command` matches a phrase of HOOKBRIDGE_DESTRUCTIVE_COMMANDS, as the command spells it.

    A phrase matches from the start of a word, whatever the case of its words and the spaces between them; a
    flag keeps its case ("git branch -D", not "-d") and takes more letters after it ("rm -r" is in "rm -rf"),
    and a phrase ending in a letter ends a word ("reboot", not "rebooted"). Of overlapping matches, the longest.
    """
    spans = []
    for phrase in settings.HOOKBRIDGE_DESTRUCTIVE_COMMANDS:
        words = phrase.split()
        if not words:
            continue
        parts = [rf"(?-i:{re.escape(word)})" if word.startswith("-") else re.escape(word) for word in words]
        pattern = r"\s+".join(parts)
        if re.fullmatch(r"-[A-Za-z]+", words[-1]):
            pattern += "[A-Za-z]*"
        elif phrase[-1].isalnum():
            pattern += r"(?![\w-])"
        spans += [match.span() for match in re.finditer(rf"(?<![\w-]){pattern}", command, re.IGNORECASE)]
    found: list[str] = []
    reached = -1
    for begin, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if begin >= reached:
            found.append(" ".join(command[begin:end].split()))
            reached = end
    return list(dict.fromkeys(found))


def does(payload: Any) -> tuple[str, str]:
    """What an approval would let happen, as (verb, what) the card, its row, a batch's list and its toast say:
    ("runs", "rm -rf build"), ("writes 12 lines to", "src/app.py"), ("edits", "src/models/order.py"), or
    ("uses", "WebFetch: https://…") for any other tool (issue 55: an Edit read as its question's text)."""
    tool = str(payload.get("tool_name") or "a tool") if isinstance(payload, dict) else "a tool"
    tool_input = payload.get("tool_input") if isinstance(payload, dict) else None
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path") or "")
    if isinstance(tool_input.get("command"), str):
        return "runs", tool_input["command"]
    if (write := written(tool, tool_input)) is not None:
        lines = write["lines"]
        return f"writes {lines} line{'' if lines == 1 else 's'} to", write["path"]
    if tool in ("Edit", "MultiEdit", "NotebookEdit") and path:
        return "edits", path
    detail = path or next((str(v) for v in tool_input.values() if isinstance(v, str) and v.strip()), "")
    return "uses", f"{tool}: {detail}" if detail else tool


def input_diff(tool_name: str, tool_input: Any) -> str | None:
    """An Edit or MultiEdit as a unified diff of the text it replaces; None for other tools.

    Not a Write: it replaces the whole file, whose content now the server never sees, so a diff from an
    empty file made overwriting a workflow look like creating it (issue 39). `written` shows it instead.
    """
    if not isinstance(tool_input, dict):
        return None
    path = str(tool_input.get("file_path") or tool_input.get("path") or "the file").lstrip("/")
    if tool_name == "Edit" and isinstance(tool_input.get("old_string"), str):
        edits = [(tool_input["old_string"], str(tool_input.get("new_string", "")))]
    elif tool_name == "MultiEdit" and isinstance(tool_input.get("edits"), list):
        edits = [
            (str(edit.get("old_string", "")), str(edit.get("new_string", "")))
            for edit in tool_input["edits"]
            if isinstance(edit, dict)
        ]
    else:
        return None
    lines: list[str] = []
    for old, new in edits:
        lines += difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}", lineterm=""
        )
    return "\n".join(line.rstrip("\n") for line in lines)


def written(tool_name: str, tool_input: Any) -> dict[str, Any] | None:
    """A Write as what it does: the path, how many lines, the whole content; None for other tools."""
    if tool_name != "Write" or not isinstance(tool_input, dict) or not isinstance(tool_input.get("content"), str):
        return None
    content = tool_input["content"]
    path = str(tool_input.get("file_path") or "the file")
    return {"path": path, "lines": len(content.splitlines()), "content": content}


def _line_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    return {"+": "added", "-": "removed", "@": "hunk"}.get(line[:1], "context")


class ApprovalForm(AnswerForm):
    """Which button was pressed (`behavior`: allow, edit, deny, suggestion-<i>), the edited input, the message."""

    def add_fields(self) -> None:
        self.fields["behavior"] = optional_text()
        self.fields["updatedInput"] = optional_text()
        self.fields["message"] = forms.CharField(required=False, max_length=settings.HOOKBRIDGE_MAX_ANSWER_LENGTH)
        # A project admin deciding alone past the approval's policy says why (Question.record_answer checks who).
        self.fields["breakGlass"] = forms.CharField(required=False, max_length=500, strip=True)

    @property
    def break_glass(self) -> str:
        """Why the person decides alone past the policy ("": they cast one vote, as anyone)."""
        needs = getattr(self.question, "requirement", None)  # as grant_refused reads it
        return str(self.cleaned_data.get("breakGlass") or "") if needs else ""

    @property
    def break_glass_offered(self) -> bool:
        """Whether the policy asks for more than one person's say, so deciding alone is break-glass."""
        needs = getattr(self.question, "requirement", None) or {}
        return bool(needs) and (beyond_one_person(needs) or bool(needs.get("deciders")))

    @property
    def input_json(self) -> str:
        """The input as the edit box shows it: what the person typed, or the host's input, formatted."""
        if self.is_bound:
            return self.typed("updatedInput")
        return json.dumps(self.question.payload.get("tool_input", {}), indent=2, ensure_ascii=False)

    @property
    def input_problem(self) -> str:
        return self.problem("updatedInput")

    @property
    def typed_message(self) -> str:
        return self.typed("message")

    @property
    def typed_break_glass(self) -> str:
        return self.typed("breakGlass")

    @property
    def break_glass_problem(self) -> str:
        return self.problem("breakGlass")

    @property
    def pressed(self) -> str:
        """The decision chosen (kept when the form comes back with an error)."""
        return self.typed("behavior")

    @property
    def shown(self) -> dict[str, Any]:
        """What the card shows of the input: a command, a diff (as (class, line) pairs), a write, or formatted JSON."""
        tool, tool_input = str(self.question.payload.get("tool_name", "")), self.question.payload.get("tool_input")
        inputs = tool_input if isinstance(tool_input, dict) else {}
        shown: dict[str, Any] = {
            "description": inputs.get("description") if isinstance(inputs.get("description"), str) else ""
        }
        shown["command"] = inputs["command"] if tool == "Bash" and isinstance(inputs.get("command"), str) else None
        shown["destructive"] = destructive(shown["command"]) if shown["command"] else []
        diff = input_diff(tool, tool_input)
        shown["write"] = written(tool, tool_input)
        shown["path"] = inputs.get("file_path", "")
        shown["diff"] = None if diff is None else [(_line_class(line), line) for line in diff.splitlines()]
        shown["json"] = json.dumps(tool_input, indent=2, ensure_ascii=False)
        return shown

    @property
    def suggestions(self) -> list[dict[str, str]]:
        return [
            {"value": f"suggestion-{i}", "label": describe_suggestion(s)}
            for i, s in enumerate(suggestions_of(self.question))
        ]

    def field_for(self, problem: str) -> str | None:
        return problem if problem in ("updatedInput", "message", "breakGlass") else None

    def clean(self) -> dict[str, Any] | None:
        if not self.data.get("behavior"):
            # Choosing is one act and sending another (issue 29): Send with nothing chosen changes nothing.
            self.add_error(None, "Choose a decision (Allow, Deny, …), then Send.")
            return self.cleaned_data
        if self.data.get("breakGlass") and self.data.get("behavior") not in ("allow", "deny"):
            self.add_error("breakGlass", "Break-glass decides Allow or Deny, as asked: choose one of them.")
            return self.cleaned_data
        if self.data.get("behavior") == "edit":
            try:
                json.loads(str(self.data.get("updatedInput", "")))
            except ValueError as exc:
                # Said here, next to the box: the kind's parse only ever sees parsed JSON.
                self.add_error("updatedInput", f"The edited input is not JSON ({exc}).")
                return self.cleaned_data
        return super().clean()

    def to_answer(self) -> tuple[Any, Any]:
        pressed = self.cleaned_data["behavior"]
        if pressed == "edit":
            return Decision.allow(updated_input=json.loads(self.cleaned_data["updatedInput"])).as_dict(), None
        if pressed.startswith("suggestion-") and pressed[len("suggestion-") :].isdigit():
            return {"behavior": "allow", "suggestion": int(pressed[len("suggestion-") :])}, None
        if pressed == "deny":
            return Decision.deny(self.cleaned_data["message"]).as_dict(), None
        if pressed == "grant":
            return {"behavior": "allow", "grantMinutes": settings.HOOKBRIDGE_GRANT_MINUTES}, None
        return {"behavior": pressed}, None

    @property
    def grant_refused(self) -> str:
        """Why "Allow for this session" is not offered on this card ("": it is)."""
        return grant_refused(self.question)

    @property
    def keys(self) -> dict[str, int]:
        """The digit that picks each decision, in the order the card shows them (hookbridge.js's pick counts so)."""
        grant = 0 if self.grant_refused else 1
        first = 2 + grant
        after = first + len(self.suggestions)
        return {"grant": 2 if grant else 0, "suggestion": first, "edit": after, "deny": after + 1}

    @property
    def grant_minutes(self) -> int:
        return int(settings.HOOKBRIDGE_GRANT_MINUTES)


def beyond_one_person(needs: dict[str, Any]) -> bool:
    """Whether an approval's policy (Question.requirement) gives the decision to more than one person, or to someone
    other than the author: what no one person's rule, grant or habit may decide for them."""
    return int(needs.get("quorum") or 1) > 1 or not needs.get("self_approval", True)


def grant_refused(question: Asked) -> str:
    """Why a person may not allow this tool use for the rest of its session ("": they may).

    A grant lets the same tool and command prefix through at once (approvals.grants): never for a command that
    cannot be undone, nor where the approval's policy needs more than one person or someone other than the author.
    """
    # Read with getattr: Asked is what every kind reads, and only a stored approval has a session and a policy.
    if getattr(question, "session_id", None) is None:
        return "it belongs to no session"
    needs = getattr(question, "requirement", None) or {}
    if beyond_one_person(needs):
        return f"{needs.get('policy') or 'its policy'} needs more people than one"
    tool_input = question.payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if question.payload.get("tool_name") == "Bash" and isinstance(command, str) and destructive(command):
        return "it runs a command that cannot be undone"
    return ""


class Approval(QuestionKind):
    name = "approval"
    label = "Approval"
    order = 70
    form_class = ApprovalForm

    def parse(self, question: Asked, value: Any, option: Any = None) -> Reply:
        if not isinstance(value, dict):
            raise InvalidAnswer("answer", 'An approval is decided with an object: {"behavior": "allow" or "deny"}.')
        behavior = value.get("behavior")
        tool = question.payload.get("tool_name", "the tool")
        if behavior == "deny":
            message = value.get("message")
            if message is not None and not isinstance(message, str):
                raise InvalidAnswer("message", "message must be text.")
            message = (message or "").strip() or DEFAULT_DENIAL
            if len(message) > settings.HOOKBRIDGE_MAX_ANSWER_LENGTH:
                raise InvalidAnswer(
                    "message", f"message is longer than {settings.HOOKBRIDGE_MAX_ANSWER_LENGTH} characters."
                )
            return Reply(f"Denied {tool}: {message}", Decision.deny(message).as_dict(), option="deny")
        if behavior != "allow":
            raise InvalidAnswer("behavior", "behavior must be 'allow' or 'deny'.")
        edited: dict[str, Any] | None = None
        chosen: list[Any] | None = None
        said = f"Allowed {tool}"
        if "grantMinutes" in value:
            minutes = value["grantMinutes"]
            if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= 24 * 60:
                raise InvalidAnswer("grantMinutes", "grantMinutes must be a whole number of minutes, 1 to 1440.")
            if refused := grant_refused(question):
                raise InvalidAnswer("grantMinutes", f"This approval cannot be allowed for its session: {refused}.")
            if set(value) - {"behavior", "grantMinutes"}:
                raise InvalidAnswer("grantMinutes", "An allow for the session allows the input as asked, unchanged.")
            return Reply(
                f"Allowed {tool} for this session, {minutes} minutes",
                {"behavior": "allow", "grantMinutes": minutes},
                option="allow",
            )
        if "updatedInput" in value:
            edited = value["updatedInput"]
            if not isinstance(edited, dict):
                raise InvalidAnswer("updatedInput", "updatedInput must be a JSON object (the tool's input).")
            # The decision is for what runs, not for what was shown: said as such wherever the answer is read.
            asked = question.payload.get("tool_input")
            command = edited.get("command") if tool == "Bash" else None
            if edited == asked:
                said += " (the edit changed nothing)"
            elif isinstance(command, str):
                said += f" with changes: it runs `{command[:200]}`, not what was asked"
            else:
                said += " with changes: not the input that was asked"
        suggestions = suggestions_of(question)
        if "suggestion" in value:
            index = value["suggestion"]
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(suggestions):
                raise InvalidAnswer(
                    "suggestion", f"suggestion must be the index of one of the host's {len(suggestions)} suggestions."
                )
            chosen = [suggestions[index]]
            said = describe_suggestion(suggestions[index])
        elif "updatedPermissions" in value:
            chosen = value["updatedPermissions"]
            if not isinstance(chosen, list) or any(item not in suggestions for item in chosen):
                raise InvalidAnswer(
                    "updatedPermissions", "updatedPermissions may only hold the host's own permission_suggestions."
                )
            said += ", always"
        return Reply(said, Decision.allow(updated_input=edited, updated_permissions=chosen).as_dict(), option="allow")

    def host_decision(self, question: Asked, data: dict[str, Any]) -> dict[str, Any]:
        """The decision as the permission-prompt tool returns it: an allow always carries the input to run."""
        decision = Decision.of(data)
        if decision is not None and decision.allowed:
            edited = decision.updated_input
            return Decision.allow(
                updated_input=edited if edited is not None else question.payload.get("tool_input", {}),
                updated_permissions=decision.updated_permissions,
            ).as_dict()
        return Decision.deny(
            decision.message if decision is not None and decision.message else DEFAULT_DENIAL
        ).as_dict()

    def result_text(self, question: Asked, reply_text: str, data: dict[str, Any]) -> str:
        return json.dumps(self.host_decision(question, data), ensure_ascii=False)

    def structured_result(self, question: Asked, data: dict[str, Any]) -> dict[str, Any]:
        return self.host_decision(question, data)


KIND = Approval()
