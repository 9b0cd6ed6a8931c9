"""Django's own middleware, run on the event loop under ASGI.

Django's MiddlewareMixin is "async-capable" only by running each process_request and
process_response in a thread (sync_to_async): two thread hops per middleware per request,
about a dozen for this chain, each a cross-thread wake-up of the loop. Yet these hooks are
plain computations on the request and response (headers, cookies, a lazy user); the only
database work among them is saving a modified session or stored messages. So here they run
inline on the loop, and only a response that saves something goes to a thread.

Under WSGI (the test client, a management command) they behave exactly as Django's own.
core/tests/test_async_chain.py checks that Django adapts nothing in the ASGI chain and that a
request crosses to a thread only for its view's database work.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from csp.middleware import CSPMiddleware
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.middleware.security import SecurityMiddleware

from core import acting
from tokens.auth import client_address


class OnTheLoop:
    """Mixed in before a MiddlewareMixin subclass: its hooks run inline in async mode."""

    get_response: Any

    def saves_something(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        """Whether process_response writes to the database this time (then it runs in a thread)."""
        return False

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase | None = None
        process_request = getattr(self, "process_request", None)
        if process_request is not None:
            response = process_request(request)
        response = response or await self.get_response(request)
        process_response = getattr(self, "process_response", None)
        if process_response is not None:
            if self.saves_something(request, response):
                response = await sync_to_async(process_response, thread_sensitive=True)(request, response)
            else:
                response = process_response(request, response)
        assert response is not None
        return response


class Security(OnTheLoop, SecurityMiddleware):
    pass


class Session(OnTheLoop, SessionMiddleware):
    def saves_something(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        session = getattr(request, "session", None)
        return session is not None and (session.modified or settings.SESSION_SAVE_EVERY_REQUEST)


class Common(OnTheLoop, CommonMiddleware):
    pass


class Csrf(OnTheLoop, CsrfViewMiddleware):
    def __init__(self, get_response: Any) -> None:
        super().__init__(get_response)
        if self.async_mode:
            # Django adapts a sync process_view to a thread in async mode; this one reads
            # cookies, headers and the body already in memory, so it may run on the loop.
            sync_process_view = super().process_view

            async def process_view(request: HttpRequest, *args: Any) -> HttpResponseBase | None:
                return sync_process_view(request, *args)

            self.process_view = process_view  # type: ignore[method-assign,assignment]


class Authentication(OnTheLoop, AuthenticationMiddleware):
    # The user is lazy: a sync view loads it in its thread, an async one awaits request.auser().
    pass


class Messages(OnTheLoop, MessageMiddleware):
    def saves_something(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        # Storing messages may read or write the session; untouched storage does nothing.
        storage = getattr(request, "_messages", None)
        return storage is not None and bool(storage.used or storage.added_new)


class FrameOptions(OnTheLoop, XFrameOptionsMiddleware):
    pass


class ContentSecurityPolicy(OnTheLoop, CSPMiddleware):
    pass


class Acting:
    """Who acts in a page request, and from where, for the audit record (core.acting): its signed-in person,
    looked up only if something is recorded; its address, agent and trace id. Reset after the response, so a
    thread serving requests one after another (the test client, WSGI) never lends one request's to the next."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def _set(self, request: HttpRequest) -> tuple[Any, Any]:
        user = getattr(request, "user", None)

        def who() -> acting.Actor:
            return acting.person(user) if user is not None and user.is_authenticated else acting.SYSTEM

        # Under ASGI the router made the request's origin already (with its span's trace id); elsewhere (WSGI, the
        # test client) it is made here.
        where = acting.origin_now.get(None) if isinstance(request, ASGIRequest) else None
        if where is None:
            headers = request.headers
            where = acting.origin_of(
                client_address(request) or "", headers.get("User-Agent", ""), headers.get("traceparent", "")
            )
        return acting.actor_now.set(who), acting.origin_now.set(where)

    @staticmethod
    def _reset(tokens: tuple[Any, Any]) -> None:
        acting.actor_now.reset(tokens[0])
        acting.origin_now.reset(tokens[1])

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self.__acall__(request)
        tokens = self._set(request)
        try:
            return self.get_response(request)
        finally:
            self._reset(tokens)

    async def __acall__(self, request: HttpRequest) -> Any:
        tokens = self._set(request)
        try:
            return await self.get_response(request)
        finally:
            self._reset(tokens)
