"""The trust store: one trust per (user, project), and whose trust acts for a node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from herd.config import Settings
from herd.drivers.nova.trusts import NodeTrust, TrustedConnections
from herd.errors import InvalidRequest
from herd.store import clusters, credentials, nodes, spec_rows
from herd.store.database import Database, Session
from herd.store.models import ProfileRow


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'herd.db'}")
    db.migrate()
    yield db
    db.dispose()


def test_a_trust_is_stored_per_user_and_project_and_replaced(database: Database) -> None:
    with database.write() as session:
        assert credentials.get_trust(session, "u", "p") is None
        credentials.save_trust(session, "u", "p", "t1", 1.0)
        credentials.save_trust(session, "u", "q", "t2", 1.0)
    with database.write() as session:
        assert credentials.get_trust(session, "u", "p") == "t1"
        assert credentials.get_trust(session, "u", "q") == "t2"
        assert credentials.get_trust(session, "v", "p") is None
        credentials.save_trust(session, "u", "p", "t3", 2.0)
    with database.write() as session:
        assert credentials.get_trust(session, "u", "p") == "t3"
        credentials.forget_trust(session, "u", "p")
        credentials.forget_trust(session, "nobody", "p")  # nothing to forget: no error
    with database.read() as session:
        assert credentials.get_trust(session, "u", "p") is None
        assert credentials.get_trust(session, "u", "q") == "t2"


def _node(session: Session, profile_id: str, cluster_id: str | None, user: str) -> str:
    row = nodes.add_new(
        session,
        name="n",
        profile_id=profile_id,
        user=user,
        project="p",
        now=1.0,
        cluster_id=cluster_id,
    )
    return row.id


def test_members_act_for_the_cluster_owner_and_lone_nodes_for_their_creator(
    database: Database,
) -> None:
    with database.write() as session:
        credentials.save_trust(session, "owner", "p", "owner-trust", 1.0)
        credentials.save_trust(session, "other", "p", "other-trust", 1.0)
        profile = spec_rows.new_spec_row(
            ProfileRow,
            stored=True,
            name="prof",
            type_name="os.nova.server-1.0",
            spec={},
            user="owner",
            project="p",
            now=1.0,
            meta_data={},
        )
        spec_rows.add(session, profile)
        session.flush()
        cluster = clusters.add_new(
            session,
            name="c",
            profile_id=profile.id,
            min_size=0,
            max_size=-1,
            desired_capacity=0,
            timeout=60,
            metadata={},
            config={},
            user="owner",
            project="p",
            now=1.0,
        )
        session.flush()
        # a member a different user's scale-out made: still the owner's trust
        member = _node(session, profile.id, cluster.id, "other")
        lone = _node(session, profile.id, None, "other")
        stranger = _node(session, profile.id, None, "nobody")
    source = credentials.StoredTrusts(database)
    assert source.trust_for_node(member) == NodeTrust("owner", "p", "owner-trust")
    assert source.trust_for_node(lone) == NodeTrust("other", "p", "other-trust")
    assert source.trust_for_node(stranger) == NodeTrust("nobody", "p", None)
    assert source.trust_for_node("no-such-node") == NodeTrust("", "", None)


def test_trusts_are_off_by_default_and_need_keystone(tmp_path: Path, database: Database) -> None:
    assert credentials.trusted_connections(Settings(data_dir=tmp_path), database) is None
    with pytest.raises(InvalidRequest, match="nova_trusts needs auth 'keystone'") as caught:
        credentials.trusted_connections(Settings(data_dir=tmp_path, nova_trusts=True), database)
    assert caught.value.field == "nova_trusts"
    settings = Settings(
        data_dir=tmp_path,
        nova_trusts=True,
        auth="keystone",
        keystone_auth_url="http://127.0.0.1:5000/v3",
        keystone_password="pw",
    )
    made = credentials.trusted_connections(settings, database)
    assert isinstance(made, TrustedConnections)
    assert made.auth.username == "herd" and "pw" not in repr(made.auth)
