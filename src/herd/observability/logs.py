"""Log formats: human-readable lines by default, one JSON object per line on request.

``configure(fmt)`` installs one handler on the root logger (stderr) and routes
uvicorn's loggers through it, so ``herd serve --log-format json`` writes
nothing but JSON lines. Both formats add the context fields of
:mod:`herd.observability.context` (action, cluster, request) when they are set.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Literal, TextIO

from herd.observability import context

LogFormat = Literal["text", "json"]

#: attributes every LogRecord has; anything else was passed with ``extra=`` and is kept
#: (but uvicorn's ``color_message``, the same message with terminal colours)
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",
}


def _timestamp(created: float) -> str:
    return (
        datetime.fromtimestamp(created, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


#: one encoder for every line: ``json.dumps`` with keywords builds a new one per call
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: timestamp, level, logger, message, context, extras."""

    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, object] = {
            "timestamp": _timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        body.update(context.current())
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_") and key not in body:
                body[key] = value if _jsonable(value) else repr(value)
        if record.exc_info:
            body["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            body["stack"] = self.formatStack(record.stack_info)
        # One line whatever the message holds: json.dumps escapes newlines.
        return _ENCODER.encode(body)


def _jsonable(value: object) -> bool:
    return isinstance(value, str | int | float | bool | type(None) | list | dict)


class TextFormatter(logging.Formatter):
    """``time level logger: message [action=.. cluster=.. request=..]``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = context.current()
        if not fields:
            return line
        tail = " ".join(f"{k.removesuffix('_id')}={v}" for k, v in fields.items())
        head, newline, rest = line.partition("\n")
        return f"{head} [{tail}]{newline}{rest}"


def formatter(fmt: LogFormat) -> logging.Formatter:
    """The formatter for ``fmt`` (``text`` or ``json``)."""
    return JsonFormatter() if fmt == "json" else TextFormatter()


UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")
#: HTTP client loggers: httpx writes one INFO line per request, and herd's health manager
#: probes members every few seconds (issue 26: 213 of 253 lines were probes)
CLIENT_LOGGERS = ("httpx", "httpcore")


class DemoteToDebug(logging.Filter):
    """Turns a logger's records into DEBUG ones, dropped unless the root logger wants DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.INFO:
            return True  # a client's warnings and errors keep their level
        record.levelno = logging.DEBUG
        record.levelname = "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)


_DEMOTE = DemoteToDebug()


def configure(
    fmt: LogFormat = "text", level: int = logging.INFO, stream: TextIO | None = None
) -> None:
    """Send every log record to one stderr handler in the given format.

    Replaces the root logger's handlers (so it can be called again) and makes
    uvicorn's loggers propagate to it instead of using their own handlers.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in UVICORN_LOGGERS:
        named = logging.getLogger(name)
        for old in list(named.handlers):
            named.removeHandler(old)
        named.propagate = True
        # An earlier dictConfig (disable_existing_loggers) may have switched them off, or
        # given them a level of their own: they follow the root's level from here on.
        named.disabled = False
        named.setLevel(logging.NOTSET)
    for name in CLIENT_LOGGERS:
        named = logging.getLogger(name)
        named.removeFilter(_DEMOTE)
        named.addFilter(_DEMOTE)
