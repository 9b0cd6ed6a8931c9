"""A shell command as the simple commands it would run, so a rule can allow exactly what it names.

A rule that allows `npm test` must not allow `npm test && curl … | sh`: bash runs every command of a list, a
pipeline, a substitution, a subshell and the body of `bash -c`/`eval`. `parse` reads the command with bashlex (a
port of bash's own grammar to Python: pure Python, no compiled grammar to ship, and its nodes keep each word's
position, so what it read can be shown as typed) into those simple commands, and says why a rule cannot decide
what it cannot read for certain. Anything bashlex cannot parse, and every construct whose words bash computes at
run time in a way bashlex does not show (arithmetic, `case`, `[[`, parameter expansions holding substitutions,
here-documents that expand, ANSI-C quoting), is unreadable: a person decides.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

import bashlex
import bashlex.errors

# Commands that run their arguments as a shell script.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# Commands that run the command in their arguments, unchanged: the command they run is what is decided.
WRAPPERS = frozenset({"nohup", "command", "builtin", "exec"})
# Assignments that change what a command runs or loads: a command behind one is never one a rule allows.
DANGEROUS_NAMES = re.compile(
    r"^(PATH|IFS|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|"
    r"NODE_OPTIONS|NODE_PATH|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|LD_.*|DYLD_.*|GIT_.*|NPM_CONFIG_.*|npm_config_.*)$"
)
# Where output may always go: nothing is written to a file there.
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")
_EXPANDS = frozenset("*?[{")


@dataclass(frozen=True)
class Command:
    """One simple command: its words as bash passes them (quotes removed), and which of them are literal."""

    words: tuple[str, ...]
    literal: tuple[bool, ...]
    text: str
    # More arguments come at run time (what xargs appends): it matches a prefix, never a whole command.
    open_ended: bool = False

    def starts_with(self, prefix: tuple[str, ...]) -> bool:
        n = len(prefix)
        return 0 < n <= len(self.words) and self.words[:n] == prefix and all(self.literal[:n])

    def is_exactly(self, words: tuple[str, ...]) -> bool:
        return not self.open_ended and self.words == words and all(self.literal)

    def __str__(self) -> str:
        return " ".join(self.words) + (" …" if self.open_ended else "")


@dataclass
class Parsed:
    """What a command would run (`commands`), and why no rule may allow it (`problems`; empty: rules may)."""

    source: str
    commands: list[Command] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def readable(self) -> bool:
        return not self.problems


class Unreadable(Exception):
    """Something bash would compute at run time that cannot be read here."""


def parse(command: str, cwd: str = "") -> Parsed:
    """The simple commands `command` would run in `cwd`, or the reasons a person must decide it.

    Kept for the same command and folder (an agent runs the same commands again and again, and bashlex takes
    about a millisecond for one): callers read what it returns and never change it.
    """
    return _parse(command, cwd)


@functools.lru_cache(maxsize=4096)
def _parse(command: str, cwd: str) -> Parsed:
    parsed = Parsed(command)
    reader = _Reader(command, cwd, parsed)
    try:
        reader.read(command, depth=0)
        reader.check_folder()
    except Unreadable as exc:
        parsed.problems.append(str(exc))
    if not parsed.commands and not parsed.problems:
        parsed.problems.append("it runs no command")
    return parsed


def words_of(text: str) -> tuple[str, ...] | None:
    """A rule's command as words (quotes removed), or None when it is not one plain simple command."""
    parsed = parse(text)
    if not parsed.readable or len(parsed.commands) != 1:
        return None
    only = parsed.commands[0]
    return only.words if all(only.literal) and not only.open_ended else None


class _Reader:
    MAX_DEPTH = 8  # nested `bash -c "bash -c …"`: deeper than any person writes

    def __init__(self, source: str, cwd: str, parsed: Parsed) -> None:
        self.cwd = posixpath.normpath(cwd) if cwd else ""
        self.parsed = parsed
        self.writes: list[str] = []  # files it redirects to, inside the working folder as given

    def check_folder(self) -> None:
        """A redirect inside the working folder is inside it only where no `cd` moved the shell first."""
        moves = [c for c in self.parsed.commands if posixpath.basename(c.words[0]) in ("cd", "pushd", "popd")]
        if moves and self.writes:
            self.parsed.problems.append(
                f"it changes folder ({moves[0]}) and redirects to {self.writes[0]}: where that is cannot be known"
            )

    def read(self, text: str, depth: int) -> None:
        if depth > self.MAX_DEPTH:
            raise Unreadable("its commands are nested too deep to read")
        if "$'" in text or '$"' in text:
            raise Unreadable("it uses $'…' quoting, whose words are computed when it runs")
        try:
            trees = bashlex.parse(text)
        except (bashlex.errors.ParsingError, NotImplementedError, IndexError, AttributeError, TypeError) as exc:
            raise Unreadable(f"the shell parser cannot read it ({_short(exc)})") from None
        for tree in trees:
            self._node(tree, text, depth)

    def _node(self, node: Any, text: str, depth: int) -> None:
        kind = node.kind
        for redirect in getattr(node, "redirects", None) or []:  # `{ …; } > file`, `for …; done > file`
            self._redirect(redirect, text, depth)
        if kind == "command":
            self._command(node, text, depth)
        elif kind in ("list", "pipeline", "compound"):
            for part in getattr(node, "parts", None) or getattr(node, "list", None) or []:
                self._node(part, text, depth)
        elif kind in ("if", "for", "while", "until", "function"):
            for part in node.parts:
                if part.kind == "word":
                    self._expansions(part, text, depth)
                else:
                    self._node(part, text, depth)
        elif kind in ("operator", "pipe", "reservedword"):
            return
        elif kind == "redirect":
            self._redirect(node, text, depth)
        else:
            raise Unreadable(f"it uses a shell construct ({kind}) that cannot be read for certain")

    def _command(self, node: Any, text: str, depth: int) -> None:
        words: list[Any] = []
        for part in node.parts:
            if part.kind == "assignment":
                self._expansions(part, text, depth)
                if words:  # `cmd X=1` is an argument, not an assignment
                    words.append(part)
                elif DANGEROUS_NAMES.match(part.word.split("=", 1)[0]):
                    raise Unreadable(f"it sets {part.word.split('=', 1)[0]}, which changes what a command runs")
            elif part.kind == "word":
                self._expansions(part, text, depth)
                words.append(part)
            elif part.kind == "redirect":
                self._redirect(part, text, depth)
            else:
                self._node(part, text, depth)
        if words:
            self._run([w.word for w in words], [_literal(w, text) for w in words], text, depth, node.pos)

    def _run(
        self,
        words: list[str],
        literal: list[bool],
        text: str,
        depth: int,
        pos: tuple[int, int],
        open_ended: bool = False,
    ) -> None:
        """One simple command, after the wrappers that only run another: its own, and what it runs."""
        name = words[0]
        if not literal[0]:
            raise Unreadable(f"the command's name ({text[pos[0] : pos[1]].split()[0]}) is computed when it runs")
        rest, rest_literal = words[1:], literal[1:]
        base = posixpath.basename(name)
        if base in WRAPPERS and rest:
            self._run(rest, rest_literal, text, depth, pos, open_ended)
            return
        if base == "env":
            i = 0
            while i < len(rest) and (rest[i].startswith("-") or "=" in rest[i]):
                if rest[i].startswith("-") and rest[i] not in ("-i", "--ignore-environment", "-"):
                    raise Unreadable(f"env {rest[i]} is not read here")
                if "=" in rest[i] and DANGEROUS_NAMES.match(rest[i].split("=", 1)[0]):
                    raise Unreadable(f"it sets {rest[i].split('=', 1)[0]}, which changes what a command runs")
                i += 1
            if i < len(rest):
                self._run(rest[i:], rest_literal[i:], text, depth, pos, open_ended)
                return
        if base == "timeout" and len(rest) >= 2 and not rest[0].startswith("-"):
            self._run(rest[1:], rest_literal[1:], text, depth, pos, open_ended)
            return
        self.parsed.commands.append(Command(tuple(words), tuple(literal), text[pos[0] : pos[1]], open_ended))
        if base in SHELLS or base == "eval":
            self._script(base, rest, rest_literal, depth)
        elif base == "xargs":
            self._xargs(rest, rest_literal, text, depth, pos)
        elif base == "find":
            self._find_exec(rest, rest_literal, text, depth, pos)

    def _script(self, base: str, rest: list[str], literal: list[bool], depth: int) -> None:
        if base == "eval":
            if not all(literal):
                raise Unreadable("eval runs words computed when it runs")
            self.read(" ".join(rest), depth + 1)
            return
        for i, word in enumerate(rest):
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word[1:]):
                if i + 1 >= len(rest) or not literal[i + 1]:
                    raise Unreadable(f"{base} -c runs a script computed when it runs")
                self.read(rest[i + 1], depth + 1)
                return
            if not word.startswith("-"):
                return  # a script file: its name is the command's, what it holds is not ours to read

    def _xargs(self, rest: list[str], literal: list[bool], text: str, depth: int, pos: tuple[int, int]) -> None:
        with_value = {"-I", "-i", "-n", "-L", "-l", "-P", "-s", "-d", "-E", "-e", "-a", "--delimiter", "--arg-file"}
        i = 0
        while i < len(rest) and rest[i].startswith("-"):
            i += 2 if rest[i] in with_value else 1
        if i < len(rest):
            self._run(rest[i:], literal[i:], text, depth, pos, open_ended=True)
        else:
            self.parsed.commands.append(Command(("echo",), (True,), "echo", open_ended=True))

    def _find_exec(self, rest: list[str], literal: list[bool], text: str, depth: int, pos: tuple[int, int]) -> None:
        i = 0
        while i < len(rest):
            if rest[i] in ("-exec", "-execdir", "-ok", "-okdir"):
                end = i + 1
                while end < len(rest) and rest[end] not in (";", "+"):
                    end += 1
                if end == i + 1:
                    raise Unreadable(f"find {rest[i]} names no command")
                self._run(rest[i + 1 : end], literal[i + 1 : end], text, depth, pos, open_ended=True)
                i = end
            i += 1

    def _expansions(self, word: Any, text: str, depth: int) -> None:
        """The commands a word's substitutions run; a parameter expansion that hides one is unreadable."""
        for part in getattr(word, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self._node(part.command, text, depth)
            elif part.kind == "parameter":
                if any(c in part.value for c in "$`("):
                    raise Unreadable(f"${{{part.value}}} runs a command bash computes when it runs")
            elif part.kind == "tilde":
                continue
            else:
                raise Unreadable(f"it uses a shell construct ({part.kind}) that cannot be read for certain")

    def _redirect(self, node: Any, text: str, depth: int) -> None:
        if node.type in ("<<", "<<-"):
            body = node.heredoc.value if getattr(node, "heredoc", None) is not None else ""
            if any(c in body for c in "$`"):
                raise Unreadable("its here-document expands $ or ` when it runs")
            return
        target = node.output
        if isinstance(target, int):  # 2>&1: a file descriptor, not a file
            return
        self._expansions(target, text, depth)
        if node.type in (">&", "<&") and target.word.isdigit():
            return
        if target.word == "-" and node.type in (">&", "<&"):
            return
        if not _literal(target, text):
            self.parsed.problems.append(f"it redirects to {target.word}, a path computed when it runs")
            return
        path = target.word
        if path in HARMLESS_TARGETS:
            return
        if not self.cwd:
            self.parsed.problems.append(f"it redirects to {path}, and the working folder is not known")
            return
        self.writes.append(path)
        where = posixpath.normpath(posixpath.join(self.cwd, path))
        if where != self.cwd and not where.startswith(self.cwd.rstrip("/") + "/"):
            self.parsed.problems.append(f"it redirects to {path}, outside the working folder")


def _literal(word: Any, text: str) -> bool:
    """The word is passed as written: no substitution, parameter, tilde, glob or brace expands it."""
    if getattr(word, "parts", None):
        return False
    raw = text[word.pos[0] : word.pos[1]]
    unquoted = _QUOTED.sub("", raw).replace("\\*", "").replace("\\?", "").replace("\\[", "").replace("\\{", "")
    return not any(c in unquoted for c in _EXPANDS) and "$" not in unquoted


def _short(exc: BaseException) -> str:
    said = str(exc).strip() or type(exc).__name__
    return said if len(said) <= 80 else said[:77] + "…"
