"""A real Hook Bridge server in a daphne subprocess, and clients that talk to it over the network."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import websockets
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from websockets.asyncio.client import ClientConnection
from websockets.typing import Origin

from core.endpoints import endpoint
from testing.forkserver import Forked, ForkServer

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "correct-horse-battery"
# What live_server_proc's scraper sends for /metrics (HOOKBRIDGE_METRICS_TOKEN).
METRICS_TOKEN = "scrape-the-live-server"


# Where the tests' daphne workers come from: set (conftest.py), a fork of one interpreter per test worker that has
# imported the libraries already (testing.forkserver); unset (the benchmarks, which time real starts), a new one.
fork_server: ForkServer | None = None


# 32 bytes an Ed25519 private key is made from: fixed, so every test server verifies every other's checkpoints.
E2E_AUDIT_KEY = base64.b64encode(hashlib.sha256(b"e2e audit signing key, not for production").digest()).decode()


def untraced(env: Mapping[str, str]) -> dict[str, str]:
    """The environment without coverage's variables: a Python process started with COVERAGE_PROCESS_CONFIG is
    measured (coverage's `patch = subprocess`), and one that times or builds something must not be."""
    return {key: value for key, value in env.items() if not key.startswith("COVERAGE_")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PREPARE = """
import io, json
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
tokens = {}
for name, scope in [("agent-a", []), ("agent-b", []), ("answer-bot", ["--scope", "answer"]),
                    ("answer-bot-2", ["--scope", "answer"])]:
    out = io.StringIO()
    call_command("create_token", name, *scope, stdout=out)
    tokens[name] = out.getvalue().strip().splitlines()[-1]
call_command("createsuperuser", interactive=False, username="{username}", email="a@example.com", verbosity=0)
print(json.dumps(tokens))
"""


def _manage(env: dict[str, str], *args: str, root: Path = ROOT) -> str:
    if fork_server is not None and root == ROOT and fork_server.coverage_matches(env):
        returncode, stdout, stderr = forked_manage(fork_server, env, list(args), root)
    else:
        result = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
        )
        returncode, stdout, stderr = result.returncode, result.stdout, result.stderr
    if returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{stdout}\n{stderr}")
    return stdout


def forked_manage(server: ForkServer, env: dict[str, str], args: list[str], root: Path) -> tuple[int, str, str]:
    """`manage.py ARGS` as a fork of the worker's fork server (testing.forkserver): its output and errors through
    two files, as `subprocess.run(..., capture_output=True, timeout=120)` would give them."""
    with tempfile.TemporaryDirectory(prefix="hookbridge-manage-") as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        process = server.run("manage.py", args, env=env, cwd=root, out=out, err=err)
        try:
            returncode = process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        read = [path.read_text(errors="replace") if path.exists() else "" for path in (out, err)]
        return returncode, read[0], read[1]


def migrations_digest(root: Path) -> str:
    """The checkout's migrations, as a short name: a template made from them is made again when one changes."""
    digest = hashlib.sha256()
    for path in sorted(root.glob("*/migrations/*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def checkpoint(database: Path) -> None:
    """The database's write-ahead log folded into its file, so the file alone is the whole database to copy."""
    with contextlib.closing(sqlite3.connect(database)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def migrated_template(root: Path, env: dict[str, str]) -> Path:
    """An SQLite database migrated once per checkout and set of migrations; each server starts from a copy.

    Migrating from nothing took about 8 s of CPU per server, for some forty servers a run: the
    copy (sqlite3's backup, which reads a database in WAL mode whole) takes milliseconds, and the
    server's own `migrate` then finds nothing to do.
    """
    template = Path(tempfile.gettempdir()) / f"hookbridge-migrated-{migrations_digest(root)}.sqlite3"
    if template.exists():
        return template
    # One process migrates while the others wait for its template: test workers starting together each ran a
    # `migrate` of their own (three at once, 9 s each, at the start of every run's unit tests).
    with template.with_name(f"{template.stem}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            building = template.with_name(f"{template.stem}.{os.getpid()}.building")
            _manage({**env, "DATABASE_URL": f"sqlite:///{building}"}, "migrate", "-v", "0", root=root)
            checkpoint(building)
            os.replace(building, template)  # whole or not at all, for a process that looks without the lock
    return template


def prepared_template(root: Path, env: dict[str, str], username: str) -> tuple[Path, dict[str, str]]:
    """The migrated template with what PREPARE makes (four tokens, the person), made once, and those tokens.

    PREPARE in a process of its own took a Django start-up of CPU for every server (some seventy a run);
    a copy of a database already prepared takes milliseconds. Kept as a folder holding the database and
    its tokens, renamed into place whole: two workers preparing at once keep one pair, never a mix.
    """
    migrated = migrated_template(root, env)
    # The audit key too: the entries PREPARE writes are checkpointed with it.
    key = "\0".join(
        [
            str(migrated),
            PREPARE,
            username,
            env.get("DJANGO_SETTINGS_MODULE", ""),
            env.get("HOOKBRIDGE_AUDIT_SIGNING_KEY", ""),
        ]
    )
    folder = migrated.with_name(f"hookbridge-prepared-{hashlib.sha256(key.encode()).hexdigest()[:16]}")
    if not (folder / "tokens.json").exists():
        building = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
        database = building / "db.sqlite3"
        copy_database(migrated, database)
        made = _manage(
            {**env, "DATABASE_URL": f"sqlite:///{database}", "DJANGO_SUPERUSER_PASSWORD": PASSWORD},
            *("shell", "-v", "0", "-c", PREPARE.replace("{username}", username)),
            root=root,
        )
        checkpoint(database)
        (building / "tokens.json").write_text(made.strip().splitlines()[-1])
        try:
            os.rename(building, folder)  # whole or not at all; another worker's, made first, is kept
        except OSError:
            shutil.rmtree(building, ignore_errors=True)
    return folder / "db.sqlite3", json.loads((folder / "tokens.json").read_text())


@contextlib.contextmanager
def sqlite_at(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A connection to a server's SQLite file, committed then closed: sqlite3's own `with` only commits, and each
    connection left open was a ResourceWarning (hundreds per run)."""
    connection = sqlite3.connect(path)
    try:
        with connection:
            yield connection
    finally:
        connection.close()


def copy_database(template: Path, target: Path) -> None:
    source, copy = sqlite3.connect(template), sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()


# The harness's own requests (the API reads and answers, the login) wait this long: httpx's 5 s default was what a
# loaded machine (load average 6-13 on 2 cores) took for one of them, and a test then failed measuring the machine.
HARNESS_TIMEOUT = httpx2.Timeout(60)


@dataclass
class LiveServer:
    """One daphne worker on a free port, with its own database, two agent and two answering tokens, and a user."""

    env_overrides: dict[str, str] = field(default_factory=dict)
    port: int = 0
    tokens: dict[str, str] = field(default_factory=dict)
    username: str = "alice"
    process: subprocess.Popen[bytes] | Forked | None = None
    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="hookbridge-e2e-")))
    log_path: Path | None = None
    prepare: bool = True
    # The checkout the server runs from: this one, or another (bench/compare.py --baseline: the code before a change).
    root: Path = ROOT
    # testing.settings (a fast password hasher) for the tests; the benchmarks measure the site's own settings.
    settings: str = "testing.settings"
    # The module that runs daphne: daphne's own, or testing.traced (every call into our code noted, in order).
    runner: str = "daphne"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("HOOKBRIDGE_", "DATABASE_URL", "REDIS_URL", "DJANGO_"))
        }
        env.update(
            {
                "DATABASE_URL": f"sqlite:///{self.tmp / 'db.sqlite3'}",
                # Its own secret, credentials and static files: servers of parallel test workers share no file.
                "HOOKBRIDGE_DATA_DIR": str(self.tmp / "data"),
                "SECRET_KEY": "e2e-secret-key-not-for-production",
                # One audit signing key for every test server, as a team's workers share one: a server's database
                # starts as a copy of a template another server's process prepared, checkpoints and all.
                "HOOKBRIDGE_AUDIT_SIGNING_KEY": E2E_AUDIT_KEY,
                "HOOKBRIDGE_WAIT_SLICE": "0.5",
                "HOOKBRIDGE_QUESTIONS_PER_MINUTE": "1000",
                # One token makes every call of a test module, far faster than any agent: no per-token rate.
                "HOOKBRIDGE_REQUESTS_PER_MINUTE": "0",
                "HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN": "1000",
                # stdio opens a browser by default: never in tests, unless one asks for it.
                "HOOKBRIDGE_OPEN_BROWSER": "0",
                "PYTHONUNBUFFERED": "1",
                "DJANGO_SETTINGS_MODULE": self.settings,
            }
        )
        env.update(self.env_overrides)
        return env

    def setup(self) -> None:
        if self.prepare:
            env = {**self.env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}
            database = env["DATABASE_URL"]
            fresh = database.startswith("sqlite:///") and not Path(database.removeprefix("sqlite:///")).exists()
            # A new SQLite database starts as a copy of one prepared already, unless the environment changes
            # what preparing makes (the role a new person gets).
            if fresh and "HOOKBRIDGE_NEW_USER_ROLE" not in self.env_overrides:
                template, tokens = prepared_template(self.root, env, self.username)
                copy_database(template, Path(database.removeprefix("sqlite:///")))
                self.tokens.update(tokens)
                self.start()
                return
            if fresh:
                self.migrate()
            # The same commands a person runs, in one process: six processes, each setting Django up,
            # took most of every server's start (about 10 s of the suite's e2e modules' setups each).
            script = PREPARE.replace("{username}", self.username)
            made = _manage(env, "shell", "-v", "0", "-c", script, root=self.root)
            self.tokens.update(json.loads(made.strip().splitlines()[-1]))
        self.start()

    def start(self) -> None:
        self.port = self.port or free_port()
        self.log_path = self.tmp / f"daphne-{self.port}.log"
        args = ["-e", endpoint("127.0.0.1", self.port), "hookbridge_site.asgi:application"]  # as `serve` listens
        env = self.env
        if (
            self.runner == "daphne"
            and fork_server is not None
            and self.root == ROOT
            and fork_server.coverage_matches(env)
        ):
            self.process = fork_server.launch("daphne", args, env=env, cwd=self.root, log=self.log_path)
        else:
            with self.log_path.open("ab") as log:
                command = [sys.executable, "-m", self.runner, *args]
                self.process = subprocess.Popen(command, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60  # a cold start on a loaded machine (login_page_once_up says more)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited early:\n{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        # Not left running: a worker that never listened outlived its test (found 35 minutes later).
        self.process.kill()
        self.process.wait(30)
        raise RuntimeError(f"daphne did not start listening:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> float:
        """Stop the worker; returns how long it took to exit."""
        if self.process is None or self.process.poll() is not None:
            return 0.0
        started = time.monotonic()
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        return time.monotonic() - started

    def close(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def manage(self, *args: str) -> str:
        """Run a management command against this server's database."""
        return _manage(self.env, *args)

    def run_manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`manage.py` as an admin runs it on the server's machine, exit code and all (never raises on failure)."""
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=self.root, env=self.env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip

    def migrate(self) -> None:
        """Its new SQLite database as `manage.py migrate` leaves one: a copy of the checkout's migrated template
        (the command in a process of its own took 5-7 s of CPU for each of these databases)."""
        database = Path(self.env["DATABASE_URL"].removeprefix("sqlite:///"))
        assert not database.exists(), f"{database} is not new"
        copy_database(migrated_template(self.root, self.env), database)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    # --- clients -------------------------------------------------------------------------------

    def auth(self, token_name: str = "agent-a") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[token_name]}"}

    @asynccontextmanager
    async def mcp(
        self, mode: str = "legacy", token_name: str = "agent-a", path: str = "/mcp", **options: Any
    ) -> AsyncIterator[Client]:
        """A client of the SDK; options go to its Client (logging_callback, log_level, …)."""
        http = httpx2.AsyncClient(headers=self.auth(token_name), timeout=httpx2.Timeout(30, read=120))
        async with (
            http,
            Client(streamable_http_client(f"{self.url}{path}", http_client=http), mode=mode, **options) as client,
        ):
            yield client

    async def questions(self, status: str | None = None, token_name: str = "answer-bot") -> list[dict[str, Any]]:
        """The newest 500 questions of every agent (an answer token sees all; an agent token its own)."""
        params = {"status": status, "limit": "500"} if status else {"limit": "500"}
        async with httpx2.AsyncClient(headers=self.auth(token_name), timeout=HARNESS_TIMEOUT) as http:
            response = await http.get(f"{self.url}/api/questions", params=params)
            response.raise_for_status()
            return list(response.json()["questions"])

    async def answer_on_dashboard(self, question_id: str, form: dict[str, Any]) -> httpx2.Response:
        """POST the dashboard's answer form as a logged-in person would."""
        async with self.login() as browser:
            return await browser.post(f"/questions/{question_id}/answer", data=form)

    async def wait_for_question(
        self, text: str, status: str = "pending", timeout: float = 60, token_name: str = "answer-bot"
    ) -> dict[str, Any]:
        """The question as the JSON API shows it, once it is there (`token_name`: an answering token that sees it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for question in await self.questions(token_name=token_name):
                if question["question"] == text and question["status"] == status:
                    return question
            await asyncio.sleep(0.05)
        raise AssertionError(f"no {status} question {text!r} appeared; server log:\n{self.log()[-3000:]}")

    async def answer_via_api(self, question_id: str, answer: object, token_name: str = "answer-bot") -> httpx2.Response:
        async with httpx2.AsyncClient(headers=self.auth(token_name), timeout=HARNESS_TIMEOUT) as http:
            return await http.post(f"{self.url}/api/mcp-answer", json={"questionId": question_id, "answer": answer})

    @asynccontextmanager
    async def login(self) -> AsyncIterator[httpx2.AsyncClient]:
        """An HTTP client holding a logged-in dashboard session (and its CSRF token)."""
        async with httpx2.AsyncClient(base_url=self.url, follow_redirects=False, timeout=HARNESS_TIMEOUT) as http:
            yield await self._log_in(http)

    async def _log_in(self, http: httpx2.AsyncClient) -> httpx2.AsyncClient:
        page = await http.get("/accounts/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert csrf, "login page has no CSRF token"
        response = await http.post(
            "/accounts/login/",
            data={"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": csrf.group(1)},
        )
        assert response.status_code == 302, response.text
        http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
        return http

    def cookie_header(self, http: httpx2.AsyncClient) -> str:
        return "; ".join(f"{name}={value}" for name, value in http.cookies.items())

    @asynccontextmanager
    async def socket(self, path: str, http: httpx2.AsyncClient | None = None) -> AsyncIterator[ClientConnection]:
        """A WebSocket on `path`, as the logged-in browser `http` (anonymous without it)."""
        headers = {"Cookie": self.cookie_header(http)} if http is not None else {}
        async with websockets.connect(
            f"ws://127.0.0.1:{self.port}{path}", additional_headers=headers, origin=Origin(self.url)
        ) as socket:
            yield socket

    def dashboard_socket(self, http: httpx2.AsyncClient | None = None) -> AbstractAsyncContextManager[ClientConnection]:
        return self.socket("/ws/dashboard/", http)

    async def open_session(self, token_name: str = "agent-a", **fields: str) -> str:
        async with httpx2.AsyncClient(headers=self.auth(token_name), timeout=HARNESS_TIMEOUT) as http:
            response = await http.post(f"{self.url}/api/sessions", json=fields)
        assert response.status_code == 201, response.text
        return str(response.json()["guid"])

    async def session_state(self, guid: str, token_name: str = "agent-a") -> httpx2.Response:
        async with httpx2.AsyncClient(headers=self.auth(token_name), timeout=HARNESS_TIMEOUT) as http:
            return await http.get(f"{self.url}/api/sessions/{guid}")


def login_page_once_up(port: int, timeout: float = 60) -> httpx2.Response | None:
    """The login page of a server starting on `port`, once it answers; None if it never did within `timeout`.

    A minute, not 20 s: a cold `manage.py serve` (Django, the MCP SDK, a migrate check, coverage) on a loaded
    2-core machine took longer than 20 s in a fresh-clone run (2026-11-29), and the fixture failed a test that
    had not begun. Nothing is timed here: a server that does start answers as soon as it listens."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return httpx2.get(f"http://127.0.0.1:{port}/accounts/login/")
        except httpx2.HTTPError:
            time.sleep(0.1)
    return None


def process_alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for init to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def text_of(result: CallToolResult) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


async def receive_until(socket: ClientConnection, needle: str, timeout: float = 30) -> str:
    """Read messages until one contains `needle`; returns that message."""
    seen = []
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = str(await socket.recv())
                if needle in message:
                    return message
                seen.append(message[:200])
    except TimeoutError:
        raise AssertionError(f"no message with {needle!r} within {timeout}s; saw {seen}") from None


def serving(**env: str) -> Iterator[LiveServer]:
    """A worker started with `env`, for a fixture to yield from; stopped and its files removed after."""
    server = LiveServer(env_overrides=env)
    server.setup()
    try:
        yield server
    finally:
        server.close()


def stdio(server: LiveServer, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_stdio", *args], env=server.env, cwd=str(ROOT)
    )


async def closed_with(socket: ClientConnection, timeout: float) -> int | None:
    """The close code the server sends within `timeout`, reading whatever comes before it."""
    try:
        async with asyncio.timeout(timeout):
            async for _ in socket:
                pass
    except websockets.ConnectionClosed:
        pass
    return socket.close_code
