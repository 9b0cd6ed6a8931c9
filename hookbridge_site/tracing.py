"""OpenTelemetry spans for every HTTP request (pages, /mcp, the hooks endpoints, the API), exported over OTLP/HTTP
when OTEL_EXPORTER_OTLP_ENDPOINT is set and the optional extra is installed (`pip install 'hookbridge[otel]'`);
off, and not even imported, otherwise.

The ASGI middleware wraps the whole router, so /mcp and the hooks endpoints, which never pass through Django's
middleware, are traced too. It continues the caller's W3C `traceparent`; a request that brought none gets the
span's new trace id, and that id is the one its audit entries and log lines carry (core.acting).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)


def wrap(app: Any) -> Any:
    """`app` inside OpenTelemetry's ASGI middleware when tracing is set up; `app` itself when it is not."""
    if not settings.OTEL_EXPORTER_OTLP_ENDPOINT:
        return app
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        logger.warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set, but OpenTelemetry is not installed: no spans are exported. "
            "Install it with: pip install 'hookbridge[otel]'"
        )
        return app
    provider = TracerProvider(resource=Resource.create({"service.name": settings.OTEL_SERVICE_NAME}))
    # The exporter reads the endpoint (and OTEL_EXPORTER_OTLP_HEADERS, …) from the environment, as OpenTelemetry
    # documents; the batch processor sends from a thread of its own, never from the event loop.
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return OpenTelemetryMiddleware(app, tracer_provider=provider)


def current_trace_id() -> str:
    """The trace id of the span this request runs in (32 hex digits), or "" without tracing."""
    if not settings.OTEL_EXPORTER_OTLP_ENDPOINT:
        return ""
    try:
        from opentelemetry import trace
    except ImportError:
        return ""
    context = trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}" if context.is_valid else ""
