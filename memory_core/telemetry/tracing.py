"""Spans through the OpenTelemetry API, and nothing when there is no API or no tracer provider.

The library only ever uses ``opentelemetry-api``; the host decides whether spans go anywhere by
configuring (or not) a tracer provider. :class:`Telemetry` is built once per service from the
telemetry settings and, optionally, an explicit provider (tests pass their own; ``None`` means
the global one). Three promises hold whatever the host configured:

- **cheap when unused**: without the API, with ``telemetry.enabled`` off, or with no provider
  configured, an operation costs one ``start_span`` call on the API's no-op tracer and no
  attribute is ever built (:attr:`Scope.recording` is False, children are the shared no-op);
- **never breaks an operation**: a span processor or exporter that raises is logged and ignored;
  the operation's own exception always propagates unchanged;
- **no text leaves by accident**: attribute values are built by :mod:`.attributes` from counts,
  ids, enums and timings; text goes on a span only through :meth:`Scope.set_content`, which does
  nothing unless ``telemetry.record_content`` is on. An error sets the span's status to the
  error's structured code, never its message (a message may quote the input).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace as otel_trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError:  # the otel extra is not installed: tracing is simply off
    otel_trace = None

log = logging.getLogger(__name__)

TRACER_NAME = "agent_memory"
ERROR_TYPE = "error.type"
FAILED_STAGE = "agent_memory.failed_stage"

AttributeSource = Mapping[str, Any] | Callable[[], Mapping[str, Any]]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-memory")
    except PackageNotFoundError:
        return "0"


def error_code(exc: BaseException) -> str:
    """The structured code of a library error (``invalid_input``, ...), else the exception's class name."""
    code = getattr(type(exc), "code", None)
    return code if isinstance(code, str) and code else type(exc).__qualname__


def clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """``attributes`` without the None values (the API refuses them)."""
    return {k: v for k, v in attributes.items() if v is not None}


class NoScope:
    """The scope of an operation that is not being recorded: every method does nothing."""

    __slots__ = ()
    recording = False

    def __enter__(self) -> "NoScope":
        return self

    def __exit__(self, *exc: object) -> bool:
        return False

    def set(self, attributes: AttributeSource) -> None:
        pass

    def set_content(self, key: str, value: Callable[[], Any]) -> None:
        pass

    def on_exit(self, attributes: AttributeSource) -> None:
        pass

    def error(self, code: str) -> None:
        pass

    def fail(self, exc: BaseException, stage: str | None = None) -> None:
        pass

    def child(self, name: str, attributes: AttributeSource | None = None) -> "NoScope":
        return self


NO_SCOPE = NoScope()


class Scope:
    """One recording span, current while its ``with`` block runs; ended (and detached) on exit."""

    __slots__ = ("_telemetry", "_span", "_token", "_on_exit")
    recording = True

    def __init__(self, telemetry: "Telemetry", span: Any) -> None:
        self._telemetry = telemetry
        self._span = span
        self._token = None
        self._on_exit: AttributeSource | None = None

    def __enter__(self) -> "Scope":
        try:
            self._token = otel_context.attach(otel_trace.set_span_in_context(self._span))
        except Exception:  # pragma: no cover - the API's context never raises in practice
            log.debug("could not make a span current", exc_info=True)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if self._on_exit is not None:
                self.set(self._on_exit)
            if exc is not None:
                self.fail(exc)
            self._span.end()
        except Exception:
            log.warning("telemetry: ending a span failed; the operation is unaffected", exc_info=True)
        finally:
            if self._token is not None:
                try:
                    otel_context.detach(self._token)
                except Exception:  # pragma: no cover
                    log.debug("could not detach a span's context", exc_info=True)
        return False  # the operation's exception propagates unchanged

    def set(self, attributes: AttributeSource) -> None:
        """Add attributes (a mapping, or a function returning one: it runs only here, when recording)."""
        try:
            values = attributes() if callable(attributes) else attributes
            self._span.set_attributes(clean(values))
        except Exception:
            log.warning("telemetry: building span attributes failed; the operation is unaffected", exc_info=True)

    def on_exit(self, attributes: AttributeSource) -> None:
        """Attributes to add when the block ends, whether it ended normally or by an exception."""
        self._on_exit = attributes

    def set_content(self, key: str, value: Callable[[], Any]) -> None:
        """Put memory text on the span under ``key`` only when ``telemetry.record_content`` is on."""
        if self._telemetry.record_content:
            self.set(lambda: {key: value()})

    def fail(self, exc: BaseException, stage: str | None = None) -> None:
        """Error status with the exception's structured code (never its message: it may quote the input),
        and ``stage``, the stage it stopped in, when the caller knows it."""
        self.error(error_code(exc))
        if isinstance(stage, str):
            self.set({FAILED_STAGE: stage})

    def error(self, code: str) -> None:
        """Mark the span failed with ``code`` as its ``error.type`` and status description."""
        try:
            self._span.set_attribute(ERROR_TYPE, code)
            self._span.set_status(Status(StatusCode.ERROR, code))
        except Exception:
            log.warning("telemetry: setting a span's error failed; the operation is unaffected", exc_info=True)

    def child(self, name: str, attributes: AttributeSource | None = None) -> "Scope | NoScope":
        """A span under this one (use it as a ``with`` block)."""
        return self._telemetry.span(name, attributes)


class Telemetry:
    """Where the library's spans go: the host's tracer provider, or nowhere."""

    def __init__(self, settings: Any = None, tracer_provider: Any = None, *, store_id: str | None = None) -> None:
        enabled = otel_trace is not None and (settings is None or settings.enabled)
        self.enabled = enabled
        self.record_content = bool(settings is not None and settings.record_content)
        key = getattr(settings, "user_hash_key", None)
        self.user_hash_key = key.get_secret_value().encode() if key is not None else None
        self.store_id = store_id
        self._tracer = None
        if enabled:
            try:
                self._tracer = otel_trace.get_tracer(TRACER_NAME, _version(), tracer_provider=tracer_provider)
            except Exception:
                log.warning("telemetry: no tracer could be had; tracing is off", exc_info=True)
                self.enabled = False

    def span(self, name: str, attributes: AttributeSource | None = None) -> Scope | NoScope:
        """Start span ``name`` (use it as a ``with`` block); :data:`NO_SCOPE` when nothing records it.

        ``attributes`` may be a function, called only when the span records.
        """
        if self._tracer is None:
            return NO_SCOPE
        try:
            span = self._tracer.start_span(name, kind=SpanKind.INTERNAL)
        except Exception:
            log.warning("telemetry: starting a span failed; the operation is unaffected", exc_info=True)
            return NO_SCOPE
        if not span.is_recording():
            if span.get_span_context().is_valid:
                # sampled out: still made current, so what runs inside is not parented elsewhere
                return _Unsampled(span)
            return NO_SCOPE
        scope = Scope(self, span)
        if attributes is not None:
            scope.set(attributes)
        return scope


class _Unsampled(NoScope):
    """A span the sampler dropped: current while it runs (its children are dropped with it), no attributes."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: Any) -> None:
        self._span = span
        self._token = None

    def __enter__(self) -> "_Unsampled":
        try:
            self._token = otel_context.attach(otel_trace.set_span_in_context(self._span))
        except Exception:  # pragma: no cover
            pass
        return self

    def __exit__(self, *exc: object) -> bool:
        try:
            self._span.end()
            if self._token is not None:
                otel_context.detach(self._token)
        except Exception:  # pragma: no cover
            log.debug("could not end an unsampled span", exc_info=True)
        return False


class _Off:
    enabled = False
    record_content = False
    user_hash_key = None


NO_TELEMETRY = Telemetry(_Off())
"""What a component uses when it was given no telemetry: never records anything."""
