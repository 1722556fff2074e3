"""FinishedRequestMiddleware: every hook hears of every request, even when one fails."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Scope

from herd.api.finished_request import FinishedRequestMiddleware


async def _teapot(_request: Request) -> PlainTextResponse:
    return PlainTextResponse("short and stout", status_code=418)


def _get(hooks: list[object]) -> httpx.Response:
    app = FinishedRequestMiddleware(Starlette(routes=[Route("/pot", _teapot)]), hooks)  # type: ignore[arg-type]

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://herd") as client:
            return await client.get("/pot")

    return asyncio.run(call())


def test_each_hook_hears_the_status_and_a_duration() -> None:
    heard: list[tuple[str, int, float]] = []
    answer = _get([lambda scope, status, seconds: heard.append((scope["path"], status, seconds))])
    assert answer.status_code == 418 and answer.text == "short and stout"
    assert [(path, status) for path, status, _ in heard] == [("/pot", 418)]
    assert 0 < heard[0][2] < 60


def test_a_hook_that_raises_is_logged_and_the_later_ones_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[int] = []

    def broken(_scope: Scope, _status: int, _seconds: float) -> None:
        raise ValueError("label cardinality exceeded")

    answer = _get([broken, lambda _scope, status, _seconds: heard.append(status)])
    assert answer.status_code == 418  # the answer had gone out: it stays as it was
    assert heard == [418]
    failed = [r for r in caplog.records if r.name == "herd.api.finished_request"]
    assert len(failed) == 1 and failed[0].exc_info is not None
    assert "label cardinality exceeded" in str(failed[0].exc_info[1])
