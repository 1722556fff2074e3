"""The log formats: JSON lines that always parse and carry the context fields; text by default."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator

import pytest

from herd.observability import context, logs


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    stream = io.StringIO()
    try:
        yield stream
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_every_json_line_parses_and_names_its_action_and_request(captured: io.StringIO) -> None:
    logs.configure("json", stream=captured)
    log = logging.getLogger("herd.test")
    log.info("outside")
    with context.bound(request_id="req-1"):
        log.warning("in a request: %s", 'quoted "text"\nwith a newline')
        with context.bound(action_id="a-1", cluster_id="c-1"):
            log.error("in an action", extra={"attempt": 2})
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("failed")
    records = lines(captured)
    assert len(records) == len(captured.getvalue().splitlines()) == 4
    for record in records:
        assert {"timestamp", "level", "logger", "message"} <= set(record)
        assert str(record["timestamp"]).endswith("Z") and record["logger"] == "herd.test"
    outside, request, action, failed = records
    assert "request_id" not in outside and "action_id" not in outside
    assert request["request_id"] == "req-1" and request["level"] == "WARNING"
    assert request["message"] == 'in a request: quoted "text"\nwith a newline'
    assert action["action_id"] == "a-1" and action["cluster_id"] == "c-1"
    assert action["request_id"] == "req-1" and action["attempt"] == 2
    assert "ValueError: boom" in str(failed["exception"]) and "action_id" not in failed


def test_context_follows_copied_contexts_into_threads(captured: io.StringIO) -> None:
    import contextvars

    logs.configure("json", stream=captured)
    log = logging.getLogger("herd.test")
    with context.bound(action_id="a-2", cluster_id="c-2"):
        copied = contextvars.copy_context()
    thread = threading.Thread(target=copied.run, args=(log.info, "from a driver thread"))
    thread.start()
    thread.join()
    (record,) = lines(captured)
    assert record["action_id"] == "a-2" and record["cluster_id"] == "c-2"


def test_text_format_is_the_default_and_appends_the_context(captured: io.StringIO) -> None:
    logs.configure(stream=captured)
    log = logging.getLogger("herd.test")
    with context.bound(action_id="a-3", request_id="req-3"):
        log.info("hello")
    (line,) = captured.getvalue().splitlines()
    assert line.endswith("INFO herd.test: hello [action=a-3 request=req-3]")
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


def test_uvicorn_loggers_go_through_the_same_handler(captured: io.StringIO) -> None:
    uvicorn_error = logging.getLogger("uvicorn.error")
    uvicorn_error.addHandler(logging.StreamHandler(io.StringIO()))
    uvicorn_error.disabled = True  # as a dictConfig with disable_existing_loggers leaves it
    uvicorn_error.setLevel(logging.WARNING)  # as uvicorn's own config may leave it
    logs.configure("json", stream=captured)
    uvicorn_error.info("Uvicorn running", extra={"color_message": "\x1b[1mUvicorn\x1b[0m"})
    (record,) = lines(captured)
    assert record["logger"] == "uvicorn.error" and "color_message" not in record
    assert uvicorn_error.handlers == [] and uvicorn_error.propagate and not uvicorn_error.disabled
