"""The production layout of docs/deploy.md, run for real: the repo's systemd units and nginx config.

Two workers are started with the worker unit's own ExecStart, after the migrate
unit's commands, on a fresh PostgreSQL database and Redis; the repo's nginx site
config, with TLS, stands in front of them. HTTP, SSE and WebSockets go through it.
Needs PostgreSQL, Redis (see testing/team.py), nginx and openssl (make system-deps).
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shlex
import shutil
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import websockets
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from websockets.typing import Origin

from testing.live import PASSWORD, ROOT, LiveServer, free_port, receive_until
from testing.team import REDIS_URL, fresh_postgres_database, require_team_services

# The stack's start (migrate, two workers with coverage, nginx) took 113 s on a loaded 2-core machine, past the
# suite's 120 s for a test: its own waits are bounded and say what did not start.
pytestmark = pytest.mark.timeout(300)

DEPLOY = ROOT / "deploy"
VENV_BIN = Path(os.environ.get("VIRTUAL_ENV", ROOT / ".venv")) / "bin"


def unit_commands(unit: str, instance: str = "") -> list[list[str]]:
    """The ExecStart lines of a unit in deploy/systemd, with the repo in place of /srv/hookbridge."""
    text = (DEPLOY / "systemd" / unit).read_text()
    commands = []
    for line in re.findall(r"^ExecStart=(.+)$", text, flags=re.M):
        line = line.replace("%i", instance).replace("/srv/hookbridge/.venv/bin/", f"{VENV_BIN}/")
        commands.append(shlex.split(line))
    return commands


def unit_env(**overrides: str) -> dict[str, str]:
    """deploy/env.example with the test's own values for what differs on this machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKBRIDGE_", "DATABASE_URL", "REDIS_URL"))}
    for line in (DEPLOY / "env.example").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    env.update(overrides)
    return env


def nginx_site(workers: list[int], http_port: int, https_port: int, cert: Path, key: Path) -> str:
    site = (DEPLOY / "nginx" / "hookbridge.conf").read_text()
    servers = "".join(f"    server 127.0.0.1:{port};\n" for port in workers)
    site = re.sub(
        r"(upstream hookbridge_workers \{\n)(?:.*\n)*?(    keepalive)", rf"\1    # workers\n{servers}\2", site
    )
    site = site.replace("listen 80;", f"listen 127.0.0.1:{http_port};")
    site = site.replace("listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;")
    site = site.replace("server_name hooks.example.com;", "server_name localhost;")
    site = site.replace("/etc/letsencrypt/live/hooks.example.com/fullchain.pem", str(cert))
    site = site.replace("/etc/letsencrypt/live/hooks.example.com/privkey.pem", str(key))
    site = site.replace("/srv/hookbridge/var/staticfiles/", f"{ROOT}/var/staticfiles/")
    assert site.count("127.0.0.1:") >= 4, "the site config's shape changed: update this test"
    return site


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    require_team_services()
    for tool in ("nginx", "openssl"):
        if not shutil.which(tool):
            message = f"{tool} is not installed (make system-deps)"
            pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    tmp = tmp_path_factory.mktemp("deploy")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    processes: list[subprocess.Popen[bytes]] = []
    with fresh_postgres_database() as database_url:
        # Everything started is stopped again, a start that never got ready included (its nginx outlived a run).
        try:
            https_port, http_port = free_port(), free_port()
            env = unit_env(
                DATABASE_URL=database_url,
                REDIS_URL=REDIS_URL,
                ALLOWED_HOSTS="localhost",
                CSRF_TRUSTED_ORIGINS=f"https://localhost:{https_port}",
                HOOKBRIDGE_PUBLIC_URL=f"https://localhost:{https_port}",
                HOOKBRIDGE_MCP_ALLOWED_HOSTS="localhost",  # nginx forwards $host: the name without the port
                HOOKBRIDGE_MCP_ALLOWED_ORIGINS=f"https://localhost:{https_port}",
                HOOKBRIDGE_PROGRESS_INTERVAL="0.3",
                SECRET_KEY=secrets.token_urlsafe(50),  # as docs/deploy.md says: the example's is refused
            )
            for command in unit_commands("hookbridge-migrate.service"):
                subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
            helper = LiveServer(env_overrides={k: v for k, v in env.items() if k.isupper()}, prepare=False)
            for name, scope in (("agent-a", "agent"), ("answer-bot", "answer")):
                output = helper.manage("create_token", name, "--scope", scope)
                helper.tokens[name] = output.strip().splitlines()[-1]
            helper.manage(
                "shell",
                "-c",
                "from django.contrib.auth.models import User; "
                f"User.objects.create_user('alice', password='{PASSWORD}')",
            )

            workers = [free_port(), free_port()]
            for port in workers:
                (command,) = unit_commands("hookbridge@.service", str(port))
                log = (tmp / f"worker-{port}.log").open("wb")
                processes.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
            (tmp / "logs").mkdir()
            (tmp / "nginx.conf").write_text(
                f"pid {tmp}/nginx.pid;\nerror_log {tmp}/logs/error.log;\nevents {{}}\n"
                f"http {{\n  access_log {tmp}/logs/access.log;\n  client_body_temp_path {tmp}/body;\n"
                f"  proxy_temp_path {tmp}/proxy;\n  include /etc/nginx/mime.types;\n"
                f"{nginx_site(workers, http_port, https_port, cert, key)}\n}}\n"
            )
            tested = subprocess.run(
                ["nginx", "-t", "-c", str(tmp / "nginx.conf"), "-p", str(tmp)], capture_output=True, text=True
            )
            assert tested.returncode == 0, tested.stderr
            processes.append(
                subprocess.Popen(["nginx", "-c", str(tmp / "nginx.conf"), "-p", str(tmp), "-g", "daemon off;"])
            )
            url = f"https://localhost:{https_port}"
            # nginx answering from a worker (it fails over to the other if one is not up): a worker still starting
            # on a loaded machine made nginx answer 502 to the first test's first request. A process that exited
            # is said at once, with what the workers wrote.
            deadline = time.monotonic() + 90
            while True:
                logs = "\n".join(path.read_text(errors="replace")[-1500:] for path in tmp.glob("worker-*.log"))
                exited = [process.args for process in processes if process.poll() is not None]
                assert not exited, f"{exited} exited; the workers said:\n{logs}"
                try:
                    if httpx2.get(f"{url}/accounts/login/", verify=False).status_code < 500:
                        break
                except httpx2.HTTPError:
                    pass
                assert time.monotonic() < deadline, f"nginx found no worker within 90 s; the workers said:\n{logs}"
                time.sleep(0.2)
            yield {"url": url, "http_url": f"http://localhost:{http_port}", "tokens": helper.tokens, "tmp": tmp}
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(15)


async def log_in(http: httpx2.AsyncClient, url: str) -> None:
    page = await http.get("/accounts/login/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert csrf
    # Over HTTPS Django's CSRF check also wants a Referer from the same origin.
    response = await http.post(
        "/accounts/login/",
        data={"username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": csrf.group(1)},
        headers={"Referer": f"{url}/accounts/login/"},
    )
    assert response.status_code == 302, response.text
    http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
    http.headers["Referer"] = f"{url}/"


async def test_plain_http_is_sent_to_https(stack: dict[str, Any]) -> None:
    async with httpx2.AsyncClient(timeout=60) as http:
        response = await http.get(f"{stack['http_url']}/")
    assert response.status_code == 301
    assert response.headers["location"].startswith("https://")


async def test_sse_websockets_and_answers_all_go_through_nginx(stack: dict[str, Any]) -> None:
    url, tokens = stack["url"], stack["tokens"]
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    agent = httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['agent-a']}"}, verify=False, timeout=60)
    async with httpx2.AsyncClient(base_url=url, verify=False, timeout=60) as browser:
        await log_in(browser, url)
        cookie = "; ".join(f"{k}={v}" for k, v in browser.cookies.items())
        async with websockets.connect(
            f"wss://localhost:{url.rsplit(':', 1)[1]}/ws/dashboard/",
            additional_headers={"Cookie": cookie},
            origin=Origin(url),
            ssl=context,
        ) as dashboard:
            await receive_until(dashboard, 'id="question-list"')
            async with agent, Client(streamable_http_client(f"{url}/mcp", http_client=agent), mode="legacy") as client:
                call = asyncio.create_task(
                    client.call_tool("ask_question", {"question": "Through the proxy?"}, progress_callback=on_progress)
                )
                pushed = await receive_until(dashboard, "Through the proxy?")
                question_id = re.search(r'id="question-([0-9a-f-]{36})"', pushed).group(1)  # type: ignore[union-attr]
                for _ in range(300):  # the first progress goes out at once; a loaded machine may take its time
                    if seen:
                        break
                    await asyncio.sleep(0.1)
                assert seen, "progress notifications must stream through nginx unbuffered"
                answered = await browser.post(f"/questions/{question_id}/answer", data={"answer": "yes, via nginx"})
                assert answered.status_code == 200, answered.text
                result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "yes, via nginx"}

    answerer = {"Authorization": f"Bearer {tokens['answer-bot']}"}
    async with httpx2.AsyncClient(headers=answerer, verify=False, timeout=60) as api:
        (stored,) = [q for q in (await api.get(f"{url}/api/questions")).json()["questions"] if q["id"] == question_id]
    assert stored["answer"]["answeredBy"] == "alice"


def test_the_worker_and_weekly_units_pass_systemd_analyze(tmp_path: Path) -> None:
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed")
    targets = []
    for unit in ("hookbridge@.service", "hookbridge-migrate.service", "hookbridge-suggest.service",
                 "hookbridge-suggest.timer"):  # fmt: skip
        text = (DEPLOY / "systemd" / unit).read_text().replace("/srv/hookbridge/.venv/bin/", f"{VENV_BIN}/")
        target = tmp_path / unit.replace("@.", "@8001.")
        target.write_text(text)
        targets.append(target)
    # Both units on the search path, so the worker's Requires= on the migrate unit resolves.
    env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{tmp_path}:"}
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *map(str, targets)], capture_output=True, text=True, env=env
    )
    ours = [line for line in result.stderr.splitlines() if any(t.name in line for t in targets)]
    # The hookbridge user exists only on a real server.
    problems = [line for line in ours if "User" not in line and "hookbridge" in line]
    assert not problems, result.stderr
