"""The Ask-Me set: the tools and prompts of the Ask-Me MCP server, so its agents switch without changes."""

from __future__ import annotations

from typing import Annotated, Literal

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from mcpapi.asking import ask_and_wait
from mcpapi.toolsets.entries import Toolset
from questions.models import Kind

MAX = settings.HOOKBRIDGE_MAX_QUESTION_LENGTH

Markdown = Annotated[StrictStr, Field(min_length=1, max_length=MAX)]
Line = Annotated[StrictStr, Field(min_length=1, max_length=2000)]


def _timeout() -> float | None:
    return settings.HOOKBRIDGE_ASKME_TIMEOUT


class MultipleChoiceQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Markdown = Field(description="The question, in markdown.")
    options: list[Line] = Field(
        min_length=1, max_length=settings.HOOKBRIDGE_MAX_OPTIONS, description="The options to choose from."
    )


class NextOption(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Annotated[StrictStr, Field(min_length=1, max_length=100)]
    title: Line
    description: Annotated[StrictStr, Field(max_length=MAX)]
    icon: Annotated[StrictStr | None, Field(max_length=16)] = None


async def ask_one_question(
    question: Annotated[Markdown, Field(description="The question to ask, in markdown.")],
    ctx: Context,
) -> CallToolResult:
    """Ask a person on your team one open question and wait for their free-text answer."""
    return await ask_and_wait(ctx, tool="ask-one-question", kind=Kind.ONE_QUESTION, text=question, timeout=_timeout())


async def ask_multiple_choice(
    questions: Annotated[
        list[MultipleChoiceQuestion],
        Field(min_length=1, max_length=20, description="Questions, each with options to choose from."),
    ],
    ctx: Context,
) -> CallToolResult:
    """Ask a person on your team one or more multiple-choice questions and wait for their choices.

    For every question the user may select several options and comment on each
    selected option, then says whether they are done ("done") or want to be
    asked more ("drill-deeper"). The result carries every selection with its
    comment and an instruction for what to do next.
    """
    for index, item in enumerate(questions):
        if len(set(item.options)) != len(item.options):
            raise ToolError(f"questions[{index}].options: every option must be distinct")
    payload = {"questions": [item.model_dump() for item in questions]}
    text = "\n\n".join(item.text for item in questions)
    return await ask_and_wait(
        ctx,
        tool="ask-multiple-choice",
        kind=Kind.MULTIPLE_CHOICE,
        text=text,
        payload=payload,
        timeout=_timeout(),
    )


async def challenge_hypothesis(
    title: Annotated[Line, Field(description="What the hypotheses are about.")],
    description: Annotated[Markdown, Field(description="Context for the user, in markdown.")],
    hypotheses: Annotated[
        list[Line], Field(min_length=1, max_length=20, description="Statements for the user to rate.")
    ],
    ctx: Context,
) -> CallToolResult:
    """Ask a person on your team to rate hypotheses on a 7-step agreement scale, and wait for the ratings.

    The scale runs Fully disagree … Fully agree; each rating may carry a comment.
    The result lists every hypothesis with its rating.
    """
    payload = {"title": title, "description": description, "hypotheses": hypotheses}
    return await ask_and_wait(
        ctx,
        tool="challenge-hypothesis",
        kind=Kind.HYPOTHESIS,
        text=title,
        payload=payload,
        timeout=_timeout(),
    )


async def choose_next(
    title: Annotated[Line, Field(description="The decision to make.")],
    description: Annotated[Markdown, Field(description="Context for the decision, in markdown.")],
    options: Annotated[list[NextOption], Field(min_length=2, max_length=8, description="2 to 8 options.")],
    ctx: Context,
) -> CallToolResult:
    """Ask a person on your team to choose what comes next among 2 to 8 options, and wait for the choice.

    The user selects one option (with an optional message), rejects them all
    (action "aborted"), or asks for new ideas (action "new-ideas").
    """
    ids = [option.id for option in options]
    if len(set(ids)) != len(ids):
        raise ToolError("options: every option needs a distinct id")
    payload = {
        "title": title,
        "description": description,
        "options": [option.model_dump(exclude_none=True) for option in options],
    }
    return await ask_and_wait(
        ctx, tool="choose-next", kind=Kind.CHOOSE_NEXT, text=title, payload=payload, timeout=_timeout()
    )


# --- prompts ----------------------------------------------------------------------------------


def suggest_follow_up_questions(
    originalQuestion: str,
    response: str,
    goal: str | None = None,
    responseType: Literal["open", "multiple-choice", "hypothesis"] | None = None,
) -> str:
    """Suggest follow-up questions after a user's answer."""
    tool = {
        "open": "ask-one-question",
        "multiple-choice": "ask-multiple-choice",
        "hypothesis": "challenge-hypothesis",
    }.get(responseType or "", "the Ask-Me tool that fits best")
    return "\n".join(
        [
            "You asked the user a question and got an answer. Suggest what to ask next.",
            "",
            f"## Original question\n{originalQuestion}",
            f"## The user's response{f' ({responseType})' if responseType else ''}\n{response}",
            f"## Goal\n{goal}" if goal else "## Goal\nUnderstand the user's intent well enough to act on it.",
            "",
            "## What to do",
            "1. **Analysis summary**: in two or three sentences, what the response settled, and what it left open,"
            " ambiguous or contradictory.",
            "2. **Follow-up questions**: 3 to 5 of them, most important first, each aimed at one open point. For each:",
            "   - the question itself;",
            "   - **Priority**: High, Medium or Low (High: you cannot proceed safely without the answer);",
            "   - **Reasoning**: why it matters, and what you will do differently depending on the answer;",
            "   - **Question type**: open (ask-one-question), multiple-choice (ask-multiple-choice) or"
            " hypothesis (challenge-hypothesis), whichever gets the clearest answer.",
            f"3. Then ask the highest-priority question with {tool}; if nothing important is open, say so and proceed.",
        ]
    )


def human_decision(
    context: str,
    options: str,
    urgency: Literal["low", "medium", "high"] | None = None,
    domain: str | None = None,
) -> str:
    """Prepare a decision for a human: context, options, trade-offs, recommendation."""
    return "\n".join(
        [
            f"A decision needs a human{f' ({urgency} urgency)' if urgency else ''}{f' in {domain}' if domain else ''}.",
            "",
            f"## Context\n{context}",
            f"## Options\n{options}",
            "",
            "## What to do",
            "1. Restate the decision in one sentence.",
            "2. For each option give its benefits, its risks and what it would cost to undo.",
            "3. Say which option you recommend and why, and what would change your mind.",
            "4. Ask the user with choose-next, one option per choice, your recommendation first"
            + (", and keep it short: this is urgent." if urgency == "high" else "."),
        ]
    )


def expert_consultation(
    topic: str,
    expertise_area: str,
    specific_question: str | None = None,
    background_info: str | None = None,
    expected_outcome: str | None = None,
) -> str:
    """Consult the user as an expert on a topic."""
    lines = [
        f"Consult the user as an expert in {expertise_area} about {topic}.",
        "",
    ]
    if background_info:
        lines.append(f"## Background\n{background_info}")
    if specific_question:
        lines.append(f"## The question\n{specific_question}")
    if expected_outcome:
        lines.append(f"## What you need from them\n{expected_outcome}")
    lines += [
        "",
        "## What to do",
        "1. Summarise what you already know and what you have tried, in a few lines.",
        "2. Ask one precise question with ask-one-question; include the facts an expert needs to answer it.",
        "3. If the answer names options, confirm your understanding with challenge-hypothesis before acting.",
    ]
    return "\n".join(lines)


def creative_brainstorm(
    challenge: str,
    goal: str | None = None,
    constraints: str | None = None,
    target_audience: str | None = None,
    inspiration_sources: str | None = None,
    idea_count: int = 7,
) -> str:
    """Brainstorm ideas, then let the user pick the direction."""
    lines = [f"Brainstorm {idea_count} distinct ideas for this challenge: {challenge}", ""]
    if goal:
        lines.append(f"## Goal\n{goal}")
    if constraints:
        lines.append(f"## Constraints\n{constraints}")
    if target_audience:
        lines.append(f"## Audience\n{target_audience}")
    if inspiration_sources:
        lines.append(f"## Inspiration\n{inspiration_sources}")
    lines += [
        "",
        "## What to do",
        f"1. Write {idea_count} ideas that differ in approach, not just in detail; give each a title and two lines.",
        "2. Keep the 2 to 8 strongest and present them with choose-next, one option per idea.",
        "3. If the user asks for new ideas, change approach rather than varying the same ones.",
    ]
    return "\n".join(lines)


TOOLSET = Toolset(
    name="askme",
    tools=(
        ("ask-one-question", ask_one_question),
        ("ask-multiple-choice", ask_multiple_choice),
        ("challenge-hypothesis", challenge_hypothesis),
        ("choose-next", choose_next),
    ),
    prompts=(
        ("suggest-follow-up-questions", suggest_follow_up_questions),
        ("human-decision", human_decision),
        ("expert-consultation", expert_consultation),
        ("creative-brainstorm", creative_brainstorm),
    ),
    asks=True,
    asking=frozenset({"ask-one-question", "ask-multiple-choice", "challenge-hypothesis", "choose-next"}),
    instructions=(
        "ask-one-question, ask-multiple-choice, challenge-hypothesis and choose-next {wait} a person on your "
        "team answers on the dashboard."
    ),
)
