"""Concurrent ``GET /v1/nodes/<id>`` share one statement on PostgreSQL and each gets the
answer it would get alone (``herd.api.services.node_batches``); SQLite reads one by one.

The GETs are sent together on one event loop (``httpx.AsyncClient`` on the app), as
uvicorn hands the requests of one turn of its loop to the app.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event
from tests.conftest import ApiClientFactory
from tests.functional.conformance.conftest import Api
from tests.functional.member_health.conftest import engine_settings
from tests.functional.member_health.test_mark_batches import services_of

from herd.api.app import create_app
from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import APIVersion
from herd.api.services.node_batches import BATCHER, batched_read, visible
from herd.store import node_reads
from herd.types import Role

V = {"OpenStack-API-Version": "clustering 1.14"}
STRANGER = RequestContext("someone", "elsewhere", (Role.MEMBER.value,), APIVersion(1, 14))


@pytest.fixture
def app(api_client: ApiClientFactory, tmp_path: Path, db_url: str) -> Iterator[TestClient]:
    settings = engine_settings(tmp_path, db_url)
    with TestClient(create_app(settings, start_engine=True)) as builder:
        Api(builder).cluster(4, name="c", one_by_one=False)
    yield api_client(settings, start_engine=False)


def get_together(client: TestClient, paths: list[str]) -> list[httpx.Response]:
    async def send() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=client.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as together:
            return list(await asyncio.gather(*(together.get(p, headers=V) for p in paths)))

    return asyncio.run(send())


def test_concurrent_gets_answer_as_one_at_a_time(app: TestClient) -> None:
    api, services = Api(app), services_of(app)
    members = api.member_ids(api.get_cluster("c")["id"])
    name = app.get(f"/v1/nodes/{members[0]}", headers=V).json()["node"]["name"]
    missing = str(uuid.uuid4())
    paths = [f"/v1/nodes/{m}" for m in members] + [
        f"/v1/nodes/{missing}",  # a full id that is no node: 404 (after the name lookup)
        f"/v1/nodes/{name}",  # a name: read alone
        f"/v1/nodes/{members[1]}?show_details=true",
    ]
    alone = [app.get(p, headers=V) for p in paths]
    with reads(services) as counted:
        together = get_together(app, paths)
    got = [(r.status_code, r.json()) for r in together]
    assert got == [(r.status_code, r.json()) for r in alone]
    assert [code for code, _ in got] == [200, 200, 200, 200, 404, 200, 200]
    batched = [s for s in counted if "ANY" in s]
    if services.database.is_sqlite:
        assert not batched and len(counted) >= len(paths)  # one by one
    else:
        # The six reads by full id in one statement; the missing one is then read alone
        # (by id, by name, by short id: a 36-character name is a name), as is the name.
        assert len(batched) == 1, counted
        assert len(counted) == 1 + 2 + 1, counted


@contextmanager
def reads(services: Services) -> Iterator[list[str]]:
    """Every statement the reads send while the block runs."""
    counted: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "api_services" not in statement and not statement.startswith("BEGIN"):
            counted.append(statement)

    engine = services.database.read_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield counted
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_row_of_another_project_is_not_answered_from_the_batch(app: TestClient) -> None:
    api, services = Api(app), services_of(app)
    member = api.member_ids(api.get_cluster("c")["id"])[0]
    with services.database.read_connection() as connection:
        found: Any = node_reads.read_nodes_by_id(connection, [member])[member]
    assert not visible(STRANGER, found)  # the stranger's one-by-one read then says 404
    assert batched_read(services, STRANGER, "short") is None
    batcher = batched_read(services, STRANGER, member)
    assert batcher is (None if services.database.is_sqlite else services.extra[BATCHER])
