"""Revision 0006: receivers made when the secret was stored keep their URLs working."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import finish_actions, make_cluster, make_profile, services

from herd.config import Settings
from herd.store import receivers
from herd.store.database import Database
from herd.store.models import ReceiverRow

OLD_SECRET = "an-old-secret-stored-as-it-was-before-0006-xx"
RID = "8d6c6a1e-6f43-4b0c-9a45-2f1b3c4d5e6f"


def _old_receiver(db_url: str) -> None:
    database = Database(db_url)
    try:
        database.migrate("0005")
        base = f"http://herd.example/v1/webhooks/{RID}"
        with database.write_engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO receivers (id, name, type, cluster_id, action, actor, params,"
                    ' channel, secret, "user", project, domain, created_at)'
                    " VALUES (:id, 'old', 'webhook', 'gone', 'CLUSTER_SCALE_OUT', '{}', '{}',"
                    " :channel, :secret, 'admin', 'default', '', 1.0)"
                ),
                {
                    "id": RID,
                    "secret": OLD_SECRET,
                    "channel": (
                        f'{{"alarm_url": "{base}/trigger?V=2&secret={OLD_SECRET}",'
                        f' "alertmanager_url": "{base}/alertmanager?secret={OLD_SECRET}"}}'
                    ),
                },
            )
    finally:
        database.dispose()


def test_an_old_receiver_keeps_working_and_shows_urls_once_rotated(
    unmigrated_url: str, tmp_path: Path, api_client: ApiClientFactory
) -> None:
    _old_receiver(unmigrated_url)
    settings = Settings(data_dir=tmp_path / "data", db_url=unmigrated_url, run_engine=False)
    client = api_client(settings)  # migrates to the newest revision
    with services(client).database.read() as session:
        row = session.get(ReceiverRow, RID)
        assert row is not None
        assert (row.webhook_base, row.secret_salt) == ("http://herd.example", None)
        assert receivers.secret_matches(row.secret_hash, OLD_SECRET)
        columns = session.execute(sa.select(ReceiverRow.__table__)).one()
        assert not [value for value in columns if OLD_SECRET in str(value)]
    # herd cannot derive that secret, so it shows no URL, but the old one still triggers
    assert client.get(f"/v1/receivers/{RID}").json()["receiver"]["channel"] == {}
    cluster = make_cluster(client, make_profile(client), "web")
    finish_actions(client)
    with services(client).database.write() as session:
        session.execute(
            sa.update(ReceiverRow).where(ReceiverRow.id == RID).values(cluster_id=cluster)
        )
    old_url = f"/v1/webhooks/{RID}/trigger?V=2&secret={OLD_SECRET}"
    assert client.post(old_url).status_code == 202
    finish_actions(client)
    rotated = client.patch(
        f"/v1/receivers/{RID}",
        json={"receiver": {"rotate_secret": True}},
        headers={"OpenStack-API-Version": "clustering 1.7"},
    )
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["receiver"]["channel"]["alarm_url"].startswith("http://testserver/")
    assert client.post(old_url).status_code == 404
