"""A real HTTP receiver on 127.0.0.1 that answers with recorded Senlin-shaped bodies."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class FakeApi:
    """Routes ``(METHOD, path)`` to a queue of answers; the last one repeats."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Answer]] = {}
        self.requests: list[Recorded] = []
        self.url = ""

    def on(self, method: str, path: str, *answers: Answer) -> None:
        self.routes[(method, path)] = list(answers)

    def answer(self, method: str, path: str) -> Answer:
        queue = self.routes.get((method, path))
        if not queue:
            return Answer(
                404,
                {
                    "code": 404,
                    "title": "Not Found",
                    "explanation": "x",
                    "error": {
                        "code": 404,
                        "message": f"The resource '{path}' could not be found.",
                        "type": "ResourceNotFound",
                    },
                },
            )
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def sent(self, method: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if method is None or r.method == method]


def handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            api.requests.append(
                Recorded(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                )
            )
            answer = api.answer(self.command, parts.path)
            payload = b"" if answer.body is None else json.dumps(answer.body).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in answer.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
