"""Microsoft Teams (the Bot Framework): an Adaptive Card per question, sent to a channel's conversation and
replaced in place once the question ends; its Allow, Deny and options are `Action.Execute` buttons.

Out: a token for the bot (the client-credentials grant of HOOKBRIDGE_TEAMS_APP_ID and its password, at
HOOKBRIDGE_TEAMS_LOGIN_URL's tenant, scope `https://api.botframework.com/.default`), kept until a few minutes
before it expires; the card is posted to `{service URL}/v3/conversations/{conversation}/activities` and put back
there by its id. In: every request to /integrations/teams/messages carries a token the Bot Framework signed
(`Authorization: Bearer …`), checked here before anything is read (`verified`): signed by a key of the
OpenID metadata's JWKS (HOOKBRIDGE_TEAMS_OPENID_METADATA_URL, the Bot Framework's by default), issued by
`https://api.botframework.com`, for this app, not expired, and for the service URL the activity names.

Microsoft's own Python packages (botframework-connector) are not used: they bring msrest (archived by
Microsoft) and azure-core for two REST calls, and read their metadata address from class constants; the checks
are these few, and joserfc, already here for OpenID Connect, makes them.
"""

from __future__ import annotations

import html
import time
from typing import Any

import requests
from django.conf import settings
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry

from core.errors import Refused
from notify import presses, runtime
from notify.sending import Failed, Posted
from questions import links
from questions.models import Question

TIMEOUT_SECONDS = 10.0
ISSUER = "https://api.botframework.com"
SCOPE = "https://api.botframework.com/.default"
CARD = "application/vnd.microsoft.card.adaptive"
# Keys are fetched again at most this often, also when a token names one not known (Microsoft rotates them).
KEYS_SECONDS = 24 * 3600
KEYS_AGAIN_SECONDS = 300
LEEWAY_SECONDS = 300


def configured() -> bool:
    return bool(settings.HOOKBRIDGE_TEAMS_APP_ID and settings.HOOKBRIDGE_TEAMS_APP_PASSWORD)


def _json(method: str, url: str, **kw: Any) -> Any:
    """One request; its JSON, or Failed (permanent when the request itself is wrong)."""
    try:
        with requests.Session() as session:
            response = session.request(method, url, timeout=TIMEOUT_SECONDS, allow_redirects=False, **kw)
    except requests.RequestException as exc:
        raise Failed(f"Teams could not be reached ({type(exc).__name__})", permanent=False) from None
    try:
        found = response.json() if response.content else {}
    except ValueError:
        found = {}
    if 200 <= response.status_code < 300:
        return found
    said = found.get("error") if isinstance(found, dict) else None
    said = said.get("message") or said.get("code") if isinstance(said, dict) else found.get("error_description", said)
    reason = f"Teams said {response.status_code}: {said or 'no reason given'}"
    raise Failed(reason, permanent=response.status_code not in (408, 429) and response.status_code < 500)


def token() -> str:
    """The bot's access token for the Bot Connector service, fetched again a few minutes before it expires."""
    cached = runtime.teams_token
    if cached is not None and cached[1] > time.time() + 300:
        return cached[0]
    tenant = settings.HOOKBRIDGE_TEAMS_TENANT_ID or "botframework.com"
    url = f"{settings.HOOKBRIDGE_TEAMS_LOGIN_URL.rstrip('/')}/{tenant}/oauth2/v2.0/token"
    form = {"grant_type": "client_credentials", "client_id": settings.HOOKBRIDGE_TEAMS_APP_ID,
            "client_secret": settings.HOOKBRIDGE_TEAMS_APP_PASSWORD, "scope": SCOPE}  # fmt: skip
    found = _json("POST", url, data=form)
    if not isinstance(found, dict) or not isinstance(found.get("access_token"), str):
        raise Failed("Teams' sign-in gave no access token", permanent=False)
    expires_in = found.get("expires_in")
    runtime.teams_token = (found["access_token"], time.time() + (expires_in if isinstance(expires_in, int) else 3600))
    return str(found["access_token"])


def _connector(method: str, path: str, body: dict[str, Any]) -> Any:
    url = settings.HOOKBRIDGE_TEAMS_SERVICE_URL.rstrip("/") + path
    return _json(method, url, json=body, headers={"Authorization": f"Bearer {token()}"})


def card(question: Question, step_id: int) -> dict[str, Any]:
    """The question's Adaptive Card: who asks, the question, its buttons (Action.Execute), and its link."""
    where = f" · {question.session.project_name}" if question.session and question.session.project_name else ""
    body = str(question.payload.get("title") or question.text) or "(no text)"
    actions: list[dict[str, Any]] = [
        {"type": "Action.Execute", "title": label[:80], "verb": "hookbridge.answer",
         "data": {"hb": presses.button_data(step_id, data)}}
        for label, data in presses.choices(question)
    ]  # fmt: skip
    link = links.url(question.pk, "teams")
    actions.append({"type": "Action.OpenUrl", "title": "Open…" if actions else "Answer…", "url": link})
    return {
        "type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": f"{question.asker_name} asks{where}", "weight": "Bolder", "wrap": True},
            {"type": "TextBlock", "text": body[:3000], "wrap": True},
        ],
        "actions": actions,
    }  # fmt: skip


def ended_card(question: Question) -> dict[str, Any]:
    body = str(question.payload.get("title") or question.text) or "(no text)"
    return {
        "type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": f"{question.asker_name} asked", "weight": "Bolder", "wrap": True},
            {"type": "TextBlock", "text": body[:3000], "wrap": True},
            {"type": "TextBlock", "text": presses.outcome(question)[:500], "wrap": True, "isSubtle": True},
        ],
    }  # fmt: skip


def activity(shown: dict[str, Any], summary: str) -> dict[str, Any]:
    return {"type": "message", "summary": summary[:200], "attachments": [{"contentType": CARD, "content": shown}]}


def post(conversation: str, shown: dict[str, Any], summary: str) -> Posted:
    made = _connector("POST", f"/v3/conversations/{conversation}/activities", activity(shown, summary))
    if not isinstance(made, dict) or not isinstance(made.get("id"), str):
        raise Failed("Teams' answer to the post named no activity", permanent=False)
    return Posted(conversation, made["id"])


def update(conversation: str, activity_id: str, shown: dict[str, Any], summary: str) -> None:
    _connector("PUT", f"/v3/conversations/{conversation}/activities/{activity_id}", activity(shown, summary))


def say(conversation: str, reply_to: str, text: str) -> None:
    """A plain reply in a conversation (the bot's answer to a person linking their account)."""
    path = f"/v3/conversations/{conversation}/activities" + (f"/{reply_to}" if reply_to else "")
    _connector("POST", path, {"type": "message", "text": html.escape(text[:2000])})


def _keys(refresh: bool) -> KeySet:
    cached = runtime.teams_keys
    if cached is not None and not refresh and cached[1] > time.time():
        return cached[0]
    if cached is not None and refresh and cached[1] - KEYS_SECONDS + KEYS_AGAIN_SECONDS > time.time():
        return cached[0]  # fetched a moment ago: a token naming an unknown key is not worth another fetch
    try:
        metadata = _json("GET", settings.HOOKBRIDGE_TEAMS_OPENID_METADATA_URL)
        found = _json("GET", str(metadata["jwks_uri"]))
        keys = KeySet.import_key_set({"keys": [key for key in found["keys"] if key.get("kty") == "RSA"]})
    except (Failed, KeyError, TypeError, ValueError, JoseError) as exc:
        if cached is not None:
            return cached[0]
        raise Refused(f"the Bot Framework's signing keys could not be read: {exc}", 503) from None
    runtime.teams_keys = (keys, time.time() + KEYS_SECONDS)
    return keys


def verified(authorization: str, service_url: str) -> dict[str, Any]:
    """The claims of the Bot Framework's token on a request; Refused (401) unless it holds for this app."""
    if not configured():
        raise Refused("Teams is not set up here (HOOKBRIDGE_TEAMS_APP_ID)", 404)
    scheme, _, raw = authorization.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip() or len(raw) > 8000:
        raise Refused("Authorization: the Bot Framework's bearer token is missing", 401)
    try:
        try:
            found = jwt.decode(raw.strip(), _keys(refresh=False), algorithms=["RS256"])
        except JoseError:
            found = jwt.decode(raw.strip(), _keys(refresh=True), algorithms=["RS256"])
        JWTClaimsRegistry(
            iss={"essential": True, "value": ISSUER},
            aud={"essential": True, "value": settings.HOOKBRIDGE_TEAMS_APP_ID},
            exp={"essential": True}, leeway=LEEWAY_SECONDS,
        ).validate(found.claims)  # fmt: skip
    except (JoseError, ValueError) as exc:
        raise Refused(f"Authorization: not a token the Bot Framework signed for this app ({exc})", 401) from None
    named = found.claims.get("serviceurl") or found.claims.get("serviceUrl")
    if named and service_url and str(named).rstrip("/") != service_url.rstrip("/"):
        raise Refused("Authorization: the token is for another service URL than the activity's", 401)
    return dict(found.claims)
