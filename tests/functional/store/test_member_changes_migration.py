"""Revision 0013: the member change log packed; what was logged before it is read no more."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from herd.store.database import MIGRATIONS_DIR, Database

CLUSTER = "5b0f3a52-0c1e-4a8e-9f0e-111111111111"
NODE = "5b0f3a52-0c1e-4a8e-9f0e-222222222222"


def _columns(database: Database) -> list[str]:
    return [c["name"] for c in sa.inspect(database.write_engine).get_columns("member_changes")]


def test_the_old_log_is_dropped_and_every_reader_reads_its_members_once(
    unmigrated_url: str,
) -> None:
    database = Database(unmigrated_url)
    try:
        database.migrate("0012")
        with database.write_engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO member_revisions (cluster_id, revision, horizon) "
                    "VALUES (:c, 70, 64)"
                ),
                {"c": CLUSTER},
            )
            connection.execute(
                sa.text(
                    "INSERT INTO member_changes (cluster_id, revision, node_id, fields) "
                    "VALUES (:c, 70, :n, 'row')"
                ),
                {"c": CLUSTER, "n": NODE},
            )
        database.migrate()
        assert _columns(database) == [
            "cluster_id", "revision", "part", "fields", "status", "health", "count", "node_ids"
        ]  # fmt: skip
        with database.write_engine.connect() as connection:
            assert connection.execute(sa.text("SELECT count(*) FROM member_changes")).scalar() == 0
            # A process holding the members at revision 64 to 69 would have patched them from
            # the old log: now below the horizon, it reads them all again.
            revision = connection.execute(
                sa.text("SELECT revision, horizon FROM member_revisions")
            ).one()
        assert tuple(revision) == (70, 70)
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        with database.write_engine.connect() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0012")
            connection.commit()
        assert _columns(database) == [
            "cluster_id", "revision", "node_id", "fields", "status", "health"
        ]  # fmt: skip
    finally:
        database.dispose()
