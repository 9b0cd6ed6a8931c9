"""Hook Bridge settings: everything a user configures comes from the environment.

Every variable is read through the typed helpers in core.env, which
raise at start-up on a value of the wrong type or range. Reading settings writes
nothing: the folders the embedded default needs are made by SiteConfig.ready(),
and the local secret key is kept by `serve` (core.local_secret).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

import django_stubs_ext
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from core import channel_layers, local_secret
from core.env import (
    env_bool,
    env_choice,
    env_db_url,
    env_directory,
    env_email_url,
    env_int,
    env_list,
    env_seconds,
    env_seconds_or_none,
    env_str,
    env_url,
    required_seconds,
)
from hookbridge_site import paths

# Lets Django's generic classes be subscripted at run time (admin.ModelAdmin[Question]), as strict mypy wants.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


# The SQLite database, the generated secret key and the local login and token live here (hookbridge_site.paths).
HOOKBRIDGE_DATA_DIR = paths.data_dir()
HOOKBRIDGE_LOCAL_CREDENTIALS = paths.local_credentials()

DEBUG = env_bool("DEBUG", False)

ALLOWED_HOSTS: list[str] = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env_list("CSRF_TRUSTED_ORIGINS", [])
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LOCAL_ONLY = set(ALLOWED_HOSTS) <= _LOOPBACK_HOSTS

# Local use needs no SECRET_KEY: `serve` keeps a generated one in this file, so logins survive
# a restart without the user having to invent a secret (core.local_secret).
HOOKBRIDGE_SECRET_KEY_FILE = HOOKBRIDGE_DATA_DIR / "secret_key"
SECRET_KEY = env_str("SECRET_KEY")
# Keys published with Hook Bridge (deploy/env.example): anyone can sign a session cookie with them.
PUBLISHED_SECRET_KEYS = frozenset({"change-me-to-a-long-random-string-of-at-least-fifty-characters-0123456789"})
if SECRET_KEY in PUBLISHED_SECRET_KEYS:
    raise ImproperlyConfigured(
        "SECRET_KEY is the example's from deploy/env.example, which anyone can read; make one with "
        'python -c "import secrets; print(secrets.token_urlsafe(50))" and put it in the environment'
    )
if not SECRET_KEY:
    if not (DEBUG or LOCAL_ONLY):
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DEBUG is off and ALLOWED_HOSTS names a non-loopback host"
        )
    SECRET_KEY = local_secret.read(HOOKBRIDGE_SECRET_KEY_FILE) or local_secret.generate()

# Not "daphne": its app only swaps in an ASGI runserver, and imports Twisted (0.4 s) into every process, the
# stdio server's included; `serve` and `python -m daphne` run the server themselves (issue 39).
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "django_htmx",
    "csp",
    "servestatic",
    "template_partials",
    "oauth2_provider",
    # Bottom to top (docs/architecture.md); import-linter holds the order.
    "core.apps.CoreConfig",
    "audit",
    "projects",
    "tokens",
    "lifecycle",
    "hooks",
    "questions",
    "approvals",
    "hosts",
    "identity",
    "notify",
    "dashboard",
    "mcpapi",
    "hookbridge_site.apps.SiteConfig",
]

# Every one runs on the event loop under ASGI (hookbridge_site.middleware says how): a sync-only
# middleware would make Django run the whole chain and every view in threads.
MIDDLEWARE = [
    "hookbridge_site.middleware.Security",
    "servestatic.middleware.ServeStaticMiddleware",
    "hookbridge_site.middleware.Session",
    "hookbridge_site.middleware.Common",
    "hookbridge_site.middleware.Csrf",
    "hookbridge_site.middleware.Authentication",
    "hookbridge_site.middleware.Acting",
    "hookbridge_site.middleware.Messages",
    "hookbridge_site.middleware.FrameOptions",
    "django_htmx.middleware.HtmxMiddleware",
    "hookbridge_site.middleware.ContentSecurityPolicy",
]

# Django looks for its security, CSRF and clickjacking middleware by dotted path; ours subclass
# them, and hookbridge_site.checks runs those checks again for them.
SILENCED_SYSTEM_CHECKS = ["security.W001", "security.W002", "security.W003"]
# django-oauth-toolkit allows http redirect addresses for all hosts or none; native clients (Claude
# Code, the SDKs) receive their code on http://127.0.0.1:<port> (RFC 8252 7.3), so http stays on
# and tokens.oauth_views refuses plaintext to any other host.
SILENCED_SYSTEM_CHECKS += ["oauth2_provider.W008"]

# Every page: scripts, styles and images from this server only (htmx is vendored), so markup an
# agent slips into a question can neither run nor make viewers' browsers fetch anything.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        # blob: the previews of images a person pastes into an answer, made in their own browser.
        "img-src": [SELF, "data:", "blob:"],
        "connect-src": [SELF],  # the pages' WebSockets: same host, ws: or wss:
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}


def _templates_dir() -> Path:
    """The site's templates: templates/ in a checkout; where the wheel's data files went once installed."""
    here = BASE_DIR / "templates"
    if here.is_dir():
        return here
    try:
        files = importlib.metadata.files("hookbridge") or []
    except importlib.metadata.PackageNotFoundError:
        return here
    for file in files:
        if file.name == "base.html" and file.parent.name == "templates":
            return Path(str(file.locate())).parent
    return here


ROOT_URLCONF = "hookbridge_site.urls"
ASGI_APPLICATION = "hookbridge_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # templates/ at the top, as the design card says; an installed wheel carries them as data files.
        "DIRS": [_templates_dir()],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "identity.views.sso_context",
            ],
        },
    },
]

DATABASES = {
    "default": env_db_url("DATABASE_URL", f"sqlite:///{HOOKBRIDGE_DATA_DIR / 'hookbridge.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several async tasks write from the thread pool at once; WAL plus a busy
    # timeout turns "database is locked" into a short wait. synchronous=NORMAL: in
    # WAL mode a commit then waits for no fsync (a crash of the program loses
    # nothing; a power cut may lose the last commits), which made answers 15% faster.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
        }
    )

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # An unreachable server fails a request within seconds instead of hanging it.
    _connect_timeout = env_int("HOOKBRIDGE_DB_CONNECT_TIMEOUT", 5)
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", _connect_timeout)
    # A pool of connections (psycopg_pool): opening one per request cost more than the
    # rest of a tool call (docs/performance.md). Each is checked before use, so one that a
    # restarted server dropped is replaced. A request that cannot get one in 3 s (at most
    # the connect timeout) fails with the same clear error: with the server gone, the pool
    # waits out its whole timeout, where a lone connection was refused at once.
    # HOOKBRIDGE_DB_POOL_SIZE=0 turns it off (behind PgBouncer, say).
    _pool_size = env_int("HOOKBRIDGE_DB_POOL_SIZE", 20, minimum=0)
    if _pool_size:
        DATABASES["default"]["OPTIONS"]["pool"] = {
            "min_size": 1,
            "max_size": _pool_size,
            "timeout": min(_connect_timeout, 3),
        }
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    # What one worker learns about a client connection (its MCP log level) is read by whichever
    # worker serves its next request.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    # The core layer, chosen with the figures in docs/deploy.md (bench/wakeup_layers.py): the pub/sub
    # layer wakes a call 2-4x sooner (both well under 5 ms at p99), but it cannot even open a waiting
    # call's channel while Redis is down, and the core layer rides out a Redis restart.
    _layer = env_str("HOOKBRIDGE_CHANNEL_LAYER", channel_layers.CORE_LAYER)
    CHANNEL_LAYERS = {"default": channel_layers.redis_channel_layer(REDIS_URL, _layer)}
else:
    # In memory, and shared with the other processes on the same database (serve and mcp_stdio):
    # core/local_layer.py. Capacity as on Redis: the default 100 queued messages per
    # channel overflowed under a burst of 100 agents (bench/), and a full channel drops pushes silently.
    CHANNEL_LAYERS = {"default": {"BACKEND": "core.local_layer.LocalChannelLayer", "CONFIG": {"capacity": 1000}}}
    # One web process (the embedded default): logins are read from its memory, not the
    # database, on every dashboard request. Several workers keep sessions in the database
    # alone, so a logout on one is a logout on all.
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Every password a person or admin sets (`user create`, changepassword, the admin) meets Django's own checks.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# A password sign-in is refused under HOOKBRIDGE_OIDC_ONLY, but for the break-glass people (identity.backends).
AUTHENTICATION_BACKENDS = ["identity.backends.PasswordUnlessOidcOnly"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:index"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = HOOKBRIDGE_DATA_DIR / "staticfiles"
# Without collectstatic (local use) ServeStatic serves straight from the finders.
SERVESTATIC_USE_FINDERS = True

# Hook Bridge knobs (seconds).
# Hosts reset their call timeout on a progress notification; some time out after 30 s,
# SDK clients after 60 s. A first notification goes out at once, then one per interval.
HOOKBRIDGE_PROGRESS_INTERVAL = required_seconds("HOOKBRIDGE_PROGRESS_INTERVAL", 10.0)
# A call without a progress token waits until answered, as the seed servers' do (the SSE stream's
# keep-alive comments keep proxies open). Opt in to a hold limit: when it runs out the call returns
# "still pending" naming the question, and the question is marked as left (its re-attach window starts).
HOOKBRIDGE_MAX_HOLD = env_seconds("HOOKBRIDGE_MAX_HOLD", None)
# Questions as MCP tasks (mcpapi.tasks): "off", every ask blocks as the seed servers' do; "auto", a 2026-07-28
# client that declares the Tasks extension gets a task handle at once and polls for the answer; "allowed", only
# the agents of tokens marked "may ask in the background". Never approvals.
HOOKBRIDGE_TASKS = env_choice("HOOKBRIDGE_TASKS", "off", ("off", "allowed", "auto"))
# A task's question also offered in the agent's own client (a form it shows), for a client that takes forms:
# the first answer, there or on the team's pages, wins.
HOOKBRIDGE_ANSWER_IN_CLIENT = env_bool("HOOKBRIDGE_ANSWER_IN_CLIENT", False)
HOOKBRIDGE_QUESTION_TIMEOUT = env_seconds("HOOKBRIDGE_QUESTION_TIMEOUT", None)
# How long a question stays answerable after its agent stopped waiting (its own timeout,
# a dropped connection, a restart): agents usually ask again, and the re-ask gets the answer.
HOOKBRIDGE_REATTACH_WINDOW = required_seconds("HOOKBRIDGE_REATTACH_WINDOW", 1800.0)
# How long "<name> is answering" shows on every dashboard after the person's last keystroke in the card.
HOOKBRIDGE_CLAIM_SECONDS = required_seconds("HOOKBRIDGE_CLAIM_SECONDS", 180.0)
# The Ask-Me set times out as the original server does; "none" falls back to the server default.
HOOKBRIDGE_ASKME_TIMEOUT = env_seconds_or_none("HOOKBRIDGE_ASKME_TIMEOUT", 300.0, none=HOOKBRIDGE_QUESTION_TIMEOUT)
# Slack-compatible incoming webhook told of every new question (empty: none).
HOOKBRIDGE_WEBHOOK_URL = env_url("HOOKBRIDGE_WEBHOOK_URL", "")
# Signs each webhook post (X-HookBridge-Signature, notify.webhook) so its receiver can check it.
HOOKBRIDGE_WEBHOOK_SECRET = env_str("HOOKBRIDGE_WEBHOOK_SECRET", "")
# Prometheus metrics at /metrics (dashboard.metrics), for a scraper sending `Authorization: Bearer <this>`;
# empty, the default: no /metrics at all.
HOOKBRIDGE_METRICS_TOKEN = env_str("HOOKBRIDGE_METRICS_TOKEN", "")
# Reaching people (notify): the escalation every project without its own follows (channel@delay, in order),
# Slack's bot token, signing secret, default channel and Web API address (tests point it at a fake), and
# e-mail (EMAIL_URL in django-environ's form, smtp://user:password@host:587, sets Django's mail settings).
HOOKBRIDGE_NOTIFY = env_str("HOOKBRIDGE_NOTIFY", "push@0s,slack@0s,email@10m")
HOOKBRIDGE_SLACK_BOT_TOKEN = env_str("HOOKBRIDGE_SLACK_BOT_TOKEN", "")
HOOKBRIDGE_SLACK_SIGNING_SECRET = env_str("HOOKBRIDGE_SLACK_SIGNING_SECRET", "")
HOOKBRIDGE_SLACK_CHANNEL = env_str("HOOKBRIDGE_SLACK_CHANNEL", "")
HOOKBRIDGE_SLACK_API_URL = env_url("HOOKBRIDGE_SLACK_API_URL", "https://slack.com/api/")
# A button press answers only as a Hook Bridge person (found by the Slack user's e-mail) who may answer the
# question's project; on: whoever is in the channel may (the channel's membership decides).
HOOKBRIDGE_SLACK_CHANNEL_DECIDES = env_bool("HOOKBRIDGE_SLACK_CHANNEL_DECIDES", False)
# Telegram (notify.telegram, docs/notify.md): the bot's token from @BotFather, the chat its messages go to (a
# project's policy may name its own), the Bot API's address (tests point it at a fake), the secret Telegram sends
# with each webhook update (X-Telegram-Bot-Api-Secret-Token; `manage.py telegram set-webhook` registers it), and
# the bot's @username, for the link a person opens to link their account.
HOOKBRIDGE_TELEGRAM_BOT_TOKEN = env_str("HOOKBRIDGE_TELEGRAM_BOT_TOKEN", "")
HOOKBRIDGE_TELEGRAM_CHAT_ID = env_str("HOOKBRIDGE_TELEGRAM_CHAT_ID", "")
HOOKBRIDGE_TELEGRAM_API_URL = env_url("HOOKBRIDGE_TELEGRAM_API_URL", "https://api.telegram.org")
HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET = env_str("HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET", "")
HOOKBRIDGE_TELEGRAM_BOT_USERNAME = env_str("HOOKBRIDGE_TELEGRAM_BOT_USERNAME", "")
# For a server Telegram cannot reach: read the presses with getUpdates instead of a webhook (delete the webhook
# first: `manage.py telegram delete-webhook`).
HOOKBRIDGE_TELEGRAM_POLL = env_bool("HOOKBRIDGE_TELEGRAM_POLL", False)
# Discord (notify.discord): the application's public key (Ed25519, hex) that signs each interaction, the bot's
# token, the channel its messages go to (a project's policy may name its own), and the REST API's address.
HOOKBRIDGE_DISCORD_PUBLIC_KEY = env_str("HOOKBRIDGE_DISCORD_PUBLIC_KEY", "")
HOOKBRIDGE_DISCORD_BOT_TOKEN = env_str("HOOKBRIDGE_DISCORD_BOT_TOKEN", "")
HOOKBRIDGE_DISCORD_CHANNEL_ID = env_str("HOOKBRIDGE_DISCORD_CHANNEL_ID", "")
HOOKBRIDGE_DISCORD_API_URL = env_url("HOOKBRIDGE_DISCORD_API_URL", "https://discord.com/api/v10")
# Microsoft Teams (notify.teams): the bot's Microsoft app id and password (client secret), its tenant (empty: a
# multi-tenant bot), the Bot Connector's service URL for the team's region and the channel conversation its cards
# go to (a project's policy may name its own); where its tokens come from and where the Bot Framework's signing
# keys are published (tests point both at a fake).
HOOKBRIDGE_TEAMS_APP_ID = env_str("HOOKBRIDGE_TEAMS_APP_ID", "")
HOOKBRIDGE_TEAMS_APP_PASSWORD = env_str("HOOKBRIDGE_TEAMS_APP_PASSWORD", "")
HOOKBRIDGE_TEAMS_TENANT_ID = env_str("HOOKBRIDGE_TEAMS_TENANT_ID", "")
HOOKBRIDGE_TEAMS_SERVICE_URL = env_url("HOOKBRIDGE_TEAMS_SERVICE_URL", "https://smba.trafficmanager.net/teams/")
HOOKBRIDGE_TEAMS_CONVERSATION_ID = env_str("HOOKBRIDGE_TEAMS_CONVERSATION_ID", "")
HOOKBRIDGE_TEAMS_LOGIN_URL = env_url("HOOKBRIDGE_TEAMS_LOGIN_URL", "https://login.microsoftonline.com")
HOOKBRIDGE_TEAMS_OPENID_METADATA_URL = env_url(
    "HOOKBRIDGE_TEAMS_OPENID_METADATA_URL", "https://login.botframework.com/v1/.well-known/openidconfiguration"
)
# Web Push to the browsers people turned it on in (notify.push). The VAPID key that signs every push: given
# here (PEM, or base64url of the raw private key) for servers on several machines, else generated once into
# HOOKBRIDGE_VAPID_KEY_FILE. The subject push services may write to about it (mailto: or https:).
HOOKBRIDGE_VAPID_PRIVATE_KEY = env_str("HOOKBRIDGE_VAPID_PRIVATE_KEY", "")
HOOKBRIDGE_VAPID_KEY_FILE = HOOKBRIDGE_DATA_DIR / "vapid_private_key.pem"

# The audit record (audit/, docs/audit.md): its checkpoints are signed with this Ed25519 key (32 bytes,
# base64; `python -m audit.signing` makes one), else one generated once into the data folder. A checkpoint
# every this many entries, and at the first entry this many minutes after the last checkpoint.
HOOKBRIDGE_AUDIT_SIGNING_KEY = env_str("HOOKBRIDGE_AUDIT_SIGNING_KEY")
HOOKBRIDGE_AUDIT_SIGNING_KEY_FILE = HOOKBRIDGE_DATA_DIR / "audit_signing_key"
# Every worker of a team server signs with the same key: set HOOKBRIDGE_AUDIT_SIGNING_KEY on each. After a
# rotation, the old public keys (base64, comma-separated) still verify the checkpoints they signed.
HOOKBRIDGE_AUDIT_PREVIOUS_KEYS = env_list("HOOKBRIDGE_AUDIT_PREVIOUS_KEYS", [])
HOOKBRIDGE_AUDIT_CHECKPOINT_EVERY = env_int("HOOKBRIDGE_AUDIT_CHECKPOINT_EVERY", 100, minimum=1)
HOOKBRIDGE_AUDIT_CHECKPOINT_MINUTES = env_int("HOOKBRIDGE_AUDIT_CHECKPOINT_MINUTES", 60, minimum=1)
# Verify the record this often (hours; 0: only when asked), and mail the admins when it fails (notify.audit_watch).
HOOKBRIDGE_AUDIT_VERIFY_HOURS = env_int("HOOKBRIDGE_AUDIT_VERIFY_HOURS", 24, minimum=0)
# Stream every entry, as it is written, to a SIEM's HTTP collector (notify.audit_stream), signed as the webhook
# is with this secret (X-HookBridge-Signature).
HOOKBRIDGE_AUDIT_STREAM_URL = env_url("HOOKBRIDGE_AUDIT_STREAM_URL", "")
HOOKBRIDGE_AUDIT_STREAM_SECRET = env_str("HOOKBRIDGE_AUDIT_STREAM_SECRET", "")
# OpenTelemetry (hookbridge_site.tracing; the `otel` extra): spans of every request exported over OTLP/HTTP to this
# endpoint, under this service name. Unset: no tracing. OpenTelemetry's own OTEL_* variables apply too.
OTEL_EXPORTER_OTLP_ENDPOINT = env_str("OTEL_EXPORTER_OTLP_ENDPOINT", "")
OTEL_SERVICE_NAME = env_str("OTEL_SERVICE_NAME", "hookbridge")
HOOKBRIDGE_VAPID_SUBJECT = env_str("HOOKBRIDGE_VAPID_SUBJECT", "")
# The push services a subscription's endpoint may be on: a host (https), "*.host" for its subdomains, or a
# whole origin. Only these: the server posts to an endpoint a browser gave it, and a free URL would let anyone
# make it post anywhere. The default is the services of Chrome and Edge's Chromium, Firefox, Safari and Edge.
HOOKBRIDGE_PUSH_SERVICES = env_list(
    "HOOKBRIDGE_PUSH_SERVICES",
    ["fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com", "*.notify.windows.com"],
)
HOOKBRIDGE_EMAIL_FROM = env_str("HOOKBRIDGE_EMAIL_FROM", "hookbridge@localhost")
HOOKBRIDGE_EMAIL_TO = env_list("HOOKBRIDGE_EMAIL_TO", [])
HOOKBRIDGE_EMAIL_CONFIGURED = bool(env_str("EMAIL_URL"))
if HOOKBRIDGE_EMAIL_CONFIGURED:
    globals().update(env_email_url("EMAIL_URL"))
# A session with no activity for this long shows as idle on the overview.
HOOKBRIDGE_IDLE_AFTER = required_seconds("HOOKBRIDGE_IDLE_AFTER", 300.0)
# The tool sets /mcp serves; /mcp/<set>+<set> picks others (validated when the app loads).
HOOKBRIDGE_DEFAULT_TOOLSETS = env_str("HOOKBRIDGE_DEFAULT_TOOLSETS", "maxsim")
# How long one wait on the channel layer lasts before the row is read again: the
# most a lost wake-up message can delay an answer.
HOOKBRIDGE_WAIT_SLICE = required_seconds("HOOKBRIDGE_WAIT_SLICE", 2.0)
# Row re-reads per second that a worker's waiting calls aim at together: past
# HOOKBRIDGE_WAIT_SLICE x this many waiting calls, each one's slice grows. The re-read only
# catches a wake-up the layer lost without saying so; at 200 a second, a worker taking 100
# new calls a second spent most of its time re-reading and sent response headers seconds
# late (bench/agents.py: p50 2.2 s -> 32 ms at 2,000 calls with 50).
HOOKBRIDGE_REREADS_PER_SECOND = env_int("HOOKBRIDGE_REREADS_PER_SECOND", 50)
# What has lived a second leaves the cycle collector's scans (core.collector); 0 keeps Python's own.
HOOKBRIDGE_GC_FREEZE = env_bool("HOOKBRIDGE_GC_FREEZE", True)
HOOKBRIDGE_MAX_QUESTION_LENGTH = env_int("HOOKBRIDGE_MAX_QUESTION_LENGTH", 20_000)
HOOKBRIDGE_MAX_ANSWER_LENGTH = env_int("HOOKBRIDGE_MAX_ANSWER_LENGTH", 20_000)
HOOKBRIDGE_MAX_OPTIONS = env_int("HOOKBRIDGE_MAX_OPTIONS", 20)
# Cards on the dashboard's first page (and each "more" page): the rest load on scroll. A page is also
# cut to fit one message (core.limits), however many cards that leaves.
HOOKBRIDGE_QUEUE_PAGE = env_int("HOOKBRIDGE_QUEUE_PAGE", 50)
HOOKBRIDGE_MAX_BODY_BYTES = env_int("HOOKBRIDGE_MAX_BODY_BYTES", 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = HOOKBRIDGE_MAX_BODY_BYTES
# Images a person may give with an answer (a screenshot pasted on the dashboard, or sent to the JSON API):
# how many, and how large each. The answer routes take a body that large (questions.images).
HOOKBRIDGE_MAX_IMAGES = env_int("HOOKBRIDGE_MAX_IMAGES", 4)
# Signed one-question links (questions.links): how long one works, and whether its holder must log in too.
HOOKBRIDGE_LINK_MAX_AGE = env_int("HOOKBRIDGE_LINK_MAX_AGE", 24 * 3600)
HOOKBRIDGE_LINKS_NEED_LOGIN = env_bool("HOOKBRIDGE_LINKS_NEED_LOGIN", False)
HOOKBRIDGE_MAX_IMAGE_BYTES = env_int("HOOKBRIDGE_MAX_IMAGE_BYTES", 5 * 1024 * 1024)
# New questions one token may ask per minute (re-attaching to an earlier one does not count); 0: no limit.
# What one token (or person) may hold open on one server process at once: calls waiting for a person,
# and live WebSockets. One agent must never stall another; the error names the setting to raise.
HOOKBRIDGE_MAX_WAITING_PER_TOKEN = env_int("HOOKBRIDGE_MAX_WAITING_PER_TOKEN", 100)
# Asks of one token handed to the database and not yet written, per process: past it, the next is refused at once.
HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN = env_int("HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN", 20)
# Every token's asks together, per process: past it an ask is refused at once (503, Retry-After), not queued.
HOOKBRIDGE_QUEUED_ASKS = env_int("HOOKBRIDGE_QUEUED_ASKS", 200)
HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN = env_int("HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN", 20)
# How often each worker checks again that its open sockets' people and tokens still have access (tokens.standing).
HOOKBRIDGE_ACCESS_CHECK_SECONDS = env_seconds("HOOKBRIDGE_ACCESS_CHECK_SECONDS", 3.0)
# Projects and roles (issue 31). A new account joins the default project with this role ("none": with
# none; an admin adds them); the very first account is its admin.
_ROLES = ("viewer", "answerer", "admin")
HOOKBRIDGE_NEW_USER_ROLE = env_choice("HOOKBRIDGE_NEW_USER_ROLE", "answerer", (*_ROLES, "none")).replace("none", "")
# The role, in some project, a person needs to make agent tokens on their own page (superusers always may).
HOOKBRIDGE_TOKEN_ROLE = env_choice("HOOKBRIDGE_TOKEN_ROLE", "answerer", _ROLES)
# Redis connections a worker's channel layer shares: past this, a send waits for a free one.
HOOKBRIDGE_REDIS_MAX_CONNECTIONS = env_int("HOOKBRIDGE_REDIS_MAX_CONNECTIONS", 50)
HOOKBRIDGE_QUESTIONS_PER_MINUTE = env_int("HOOKBRIDGE_QUESTIONS_PER_MINUTE", 60, minimum=0)
# Every request a token makes (tool calls, re-asks, hook calls, API reads and answers), per server process, in
# bursts of a tenth: one token's flood is turned away (429) before it slows anyone else's answers. 0: no limit.
HOOKBRIDGE_REQUESTS_PER_MINUTE = env_int("HOOKBRIDGE_REQUESTS_PER_MINUTE", 1200, minimum=0)

# Sign-in with the company's identity provider (identity.oidc; docs/sign-in-and-projects.md). The issuer's
# /.well-known/openid-configuration says the rest; the redirect address to register is <origin>/sso/callback.
HOOKBRIDGE_OIDC_ISSUER = env_str("HOOKBRIDGE_OIDC_ISSUER").rstrip("/")
HOOKBRIDGE_OIDC_CLIENT_ID = env_str("HOOKBRIDGE_OIDC_CLIENT_ID")
HOOKBRIDGE_OIDC_CLIENT_SECRET = env_str("HOOKBRIDGE_OIDC_CLIENT_SECRET")
HOOKBRIDGE_OIDC_NAME = env_str("HOOKBRIDGE_OIDC_NAME", "your identity provider")
HOOKBRIDGE_OIDC_SCOPES = env_str("HOOKBRIDGE_OIDC_SCOPES", "openid email profile groups")
# GROUP=PROJECT:ROLE, comma-separated: the groups (in this claim of the ID token or userinfo) that give roles.
HOOKBRIDGE_OIDC_ROLES = env_str("HOOKBRIDGE_OIDC_ROLES")
HOOKBRIDGE_OIDC_GROUPS_CLAIM = env_str("HOOKBRIDGE_OIDC_GROUPS_CLAIM", "groups")
# Roles given by hand are dropped at each sign-in or SCIM change: the directory alone says who is where.
HOOKBRIDGE_OIDC_ROLES_ONLY = env_bool("HOOKBRIDGE_OIDC_ROLES_ONLY", False)
# No local passwords, but for these usernames (a way in when the identity provider is down).
HOOKBRIDGE_OIDC_ONLY = env_bool("HOOKBRIDGE_OIDC_ONLY", False)
HOOKBRIDGE_BREAK_GLASS_USERS = env_list("HOOKBRIDGE_BREAK_GLASS_USERS", [])
# How far the provider's clock may be from ours when its ID token's times are checked.
HOOKBRIDGE_OIDC_LEEWAY = required_seconds("HOOKBRIDGE_OIDC_LEEWAY", 60.0)
# Agents of the company get MCP tokens for the person the provider's ID-JAG names, with no consent screen
# (identity.idjag: MCP's enterprise-managed authorization). Off unless the company wants it.
HOOKBRIDGE_ID_JAG = env_bool("HOOKBRIDGE_ID_JAG", False)
# SCIM 2.0 at /scim/v2 (identity.scim): the bearer token the directory sends; more are made in the admin.
HOOKBRIDGE_SCIM_TOKEN = env_str("HOOKBRIDGE_SCIM_TOKEN")


# The hooks tool set (/mcp/hooks): plugins whose han-config.json describe the team's
# checks, and the folder they run in (the server's working directory by default).
HOOKBRIDGE_PLUGINS_DIR = env_directory("HOOKBRIDGE_PLUGINS_DIR", None)
HOOKBRIDGE_WORKSPACE = env_directory("HOOKBRIDGE_WORKSPACE", Path.cwd().resolve())
# As han does: also the plugins Claude Code has enabled (its user and workspace settings), beside the folder.
HOOKBRIDGE_CLAUDE_PLUGINS = env_bool("HOOKBRIDGE_CLAUDE_PLUGINS", True)
# A hook's default timeout (its config may set its own); the whole process group is killed then.
HOOKBRIDGE_HOOK_TIMEOUT = required_seconds("HOOKBRIDGE_HOOK_TIMEOUT", 600.0)
# Output kept per directory of a run (stdout and stderr together); the rest is cut and the cut stated.
HOOKBRIDGE_HOOK_OUTPUT_LIMIT = env_int("HOOKBRIDGE_HOOK_OUTPUT_LIMIT", 64 * 1024, minimum=1024)
# Hook runs at once, across every worker: maxConcurrent counts per folder, so without these
# one token naming many folders could start a process per folder.
HOOKBRIDGE_HOOK_MAX_RUNS = env_int("HOOKBRIDGE_HOOK_MAX_RUNS", 2 * (os.cpu_count() or 1))
HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN = env_int("HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN", os.cpu_count() or 1)

# An approval's shell command containing one of these (case and spacing aside) carries a plain warning on its
# card: what cannot be taken back. Comma-separated; empty: no warnings.
HOOKBRIDGE_DESTRUCTIVE_COMMANDS = env_list(
    "HOOKBRIDGE_DESTRUCTIVE_COMMANDS",
    [
        "rm -rf", "rm -fr", "rm -r", "git push --force", "git push -f", "git reset --hard", "git clean -f",
        "git branch -D", "DROP TABLE", "DROP DATABASE", "TRUNCATE", "DELETE FROM", "mkfs", "dd if=",
        "chmod -R", "chown -R", "kubectl delete", "terraform destroy", "shutdown", "reboot",
    ],
)  # fmt: skip
# Claude Code's approvals (/hooks/claude): the server answers "no decision" after this long, so the host
# asks at the terminal instead of failing the hook at its own timeout (600 s unless the settings say otherwise).
HOOKBRIDGE_APPROVAL_TIMEOUT = required_seconds("HOOKBRIDGE_APPROVAL_TIMEOUT", 590.0)
# A rule made from an approval ("Allow and make a rule") stops deciding after this many days (approvals.models).
HOOKBRIDGE_RULE_DAYS = env_int("HOOKBRIDGE_RULE_DAYS", 30)
# "Allow for this session": the same tool and command prefix in that session is allowed at once this long (approvals).
HOOKBRIDGE_GRANT_MINUTES = env_int("HOOKBRIDGE_GRANT_MINUTES", 30)

# The public URL of the dashboard, used in messages that tell an agent where to answer.
HOOKBRIDGE_PUBLIC_URL = env_url("HOOKBRIDGE_PUBLIC_URL", "http://127.0.0.1:8000")
# Host headers and origins that /mcp accepts (the SDK's DNS-rebinding protection).
HOOKBRIDGE_MCP_ALLOWED_HOSTS: list[str] = env_list(
    "HOOKBRIDGE_MCP_ALLOWED_HOSTS", ["127.0.0.1:*", "localhost:*", "[::1]:*"]
)
HOOKBRIDGE_MCP_ALLOWED_ORIGINS: list[str] = env_list(
    "HOOKBRIDGE_MCP_ALLOWED_ORIGINS",
    ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)

# Signing in the MCP way (tokens.oauth): django-oauth-toolkit is the authorization server.
# Clients register themselves (RFC 7591: Claude Code and the SDKs do, with no secret), send
# people to the login and consent pages, and get tokens bound to this server's /mcp (RFC 8707).
OAUTH2_PROVIDER = {
    "SCOPES": {"mcp": "Ask questions, wait for answers and report progress, as you"},
    "DEFAULT_SCOPES": ["mcp"],
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,  # S256 only, never "plain"
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,  # the code comes back with `iss` (RFC 9207)
    "ACCESS_TOKEN_EXPIRE_SECONDS": env_int("HOOKBRIDGE_OAUTH_ACCESS_SECONDS", 3600, minimum=60),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env_int("HOOKBRIDGE_OAUTH_REFRESH_SECONDS", 30 * 86400, minimum=60),
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    # Native clients listen on a loopback port of their own choosing (RFC 8252 7.3).
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    # Or the client_id is an https address of the client's own metadata (Client ID Metadata
    # Documents, the MCP specification's first choice): fetched by the library's SSRF-safe fetcher
    # (public addresses only, size- and time-bounded, cached). 0 for a server that must not fetch.
    "CIMD_ENABLED": env_bool("HOOKBRIDGE_OAUTH_CLIENT_DOCUMENTS", True),
    "CIMD_METADATA_FETCHER": "tokens.client_documents.ReportingFetcher",  # keeps why a document failed
    "REQUEST_APPROVAL_PROMPT": "force",  # every grant is a person's deliberate act on the consent page
    # The metadata lists exactly what is served: a person's consent, then refreshes, for public (PKCE) clients
    # too; no implicit, password, machine (client_credentials) or device grants.
    "OAUTH2_GRANT_TYPES_SUPPORTED": [
        "authorization_code",
        "refresh_token",
        *(["urn:ietf:params:oauth:grant-type:jwt-bearer"] if HOOKBRIDGE_ID_JAG and HOOKBRIDGE_OIDC_ISSUER else []),
    ],
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
}
# Open registration (RFC 7591), limited per address: past this many clients in an hour, a 429 with Retry-After.
HOOKBRIDGE_OAUTH_REGISTRATIONS_PER_HOUR = env_int("HOOKBRIDGE_OAUTH_REGISTRATIONS_PER_HOUR", 20)
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"

# Behind a TLS-terminating proxy (docs/deploy.md): trust its X-Forwarded-Proto and X-Forwarded-For.
HOOKBRIDGE_TRUST_PROXY_HEADERS = env_bool("HOOKBRIDGE_TRUST_PROXY_HEADERS", False)
if HOOKBRIDGE_TRUST_PROXY_HEADERS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# HTTPS settings. A server that answers only loopback hosts (local use) runs on plain
# HTTP; a team server is behind TLS, and these default on (each can be turned off).
_served_over_tls = not LOCAL_ONLY
SECURE_SSL_REDIRECT = env_bool("HOOKBRIDGE_SSL_REDIRECT", _served_over_tls)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("HOOKBRIDGE_SECURE_COOKIES", _served_over_tls)
SECURE_HSTS_SECONDS = env_int("HOOKBRIDGE_HSTS_SECONDS", 31_536_000 if _served_over_tls else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HOOKBRIDGE_HSTS_INCLUDE_SUBDOMAINS", _served_over_tls)
SECURE_HSTS_PRELOAD = env_bool("HOOKBRIDGE_HSTS_PRELOAD", _served_over_tls)
X_FRAME_OPTIONS = "DENY"

LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
# Debug lines for every tool call and wake-up (stderr, like every log line).
# ASK_ME_MCP_DEBUG is Ask-Me's name for it, so its users' configurations keep working.
HOOKBRIDGE_DEBUG = env_bool("HOOKBRIDGE_DEBUG", False) or env_bool("ASK_ME_MCP_DEBUG", False)
# The agent token `manage.py mcp_stdio` asks with when --token is not given (empty: the OS user asks).
HOOKBRIDGE_TOKEN = env_str("HOOKBRIDGE_TOKEN")
# Open the question in the browser when it arrives and nobody is watching: off for `serve`
# unless --open, on for `mcp_stdio` (as Ask-Me did) unless --no-open or this is set to 0.
HOOKBRIDGE_OPEN_BROWSER = env_bool("HOOKBRIDGE_OPEN_BROWSER", False)
HOOKBRIDGE_STDIO_OPEN_BROWSER = env_bool("HOOKBRIDGE_OPEN_BROWSER", True)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s%(trace)s: %(message)s"}},
    # A line logged while serving a request names its trace (the W3C traceparent's, else the request's own id).
    "filters": {"trace": {"()": "core.acting.TraceIdFilter"}},
    # stderr only: the stdio MCP transport owns stdout.
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "stream": sys.stderr, "formatter": "plain", "filters": ["trace"]}
    },
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        "mcp": {"level": env_str("MCP_LOG_LEVEL", "WARNING").upper()},
        "httpx": {"level": "WARNING"},
        **{
            app: {"level": "DEBUG"}
            for app in ("mcpapi", "questions", "lifecycle", "hooks", "hosts", "dashboard")
            if HOOKBRIDGE_DEBUG
        },
    },
}
