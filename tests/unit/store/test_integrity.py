"""A constraint's refusal becomes herd's error by the constraint's name, on both databases.

Real violations of herd's migrated schema: a foreign key to a missing row (PostgreSQL names
it; SQLite does not), the same policy attached twice, and a constraint no request meets.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from herd import errors
from herd.store import bindings, clusters, integrity
from herd.store.database import Database
from herd.store.models import PolicyRow, ProfileRow


@pytest.fixture
def database(db_url: str) -> Iterator[Database]:
    found = Database(db_url)
    found.migrate()
    try:
        yield found
    finally:
        found.dispose()


def _refusal(database: Database, write: object) -> IntegrityError:
    with pytest.raises(IntegrityError) as caught, database.write() as session:
        write(session)  # type: ignore[operator]
    return caught.value


def _profile_and_policy(database: Database) -> tuple[str, str]:
    now = time.time()
    profile = ProfileRow(id=str(uuid.uuid4()), name="p", type="herd.sim-1.0", spec={},
                         meta_data={}, project="x", created_at=now)  # fmt: skip
    policy = PolicyRow(id=str(uuid.uuid4()), name="q", type="senlin.policy.deletion-1.1",
                       spec={}, data={}, project="x", created_at=now)  # fmt: skip
    with database.write() as session:
        session.add_all([profile, policy])
    return profile.id, policy.id


def _cluster(session: object, profile_id: str) -> str:
    row = clusters.add_new(
        session,  # type: ignore[arg-type]
        name="c", profile_id=profile_id, min_size=0, max_size=-1, desired_capacity=0,
        timeout=60, metadata={}, config={}, user="u", project="x", now=time.time(),
    )  # fmt: skip
    return row.id


def test_the_same_policy_attached_twice_is_senlins_conflict(database: Database) -> None:
    profile_id, policy_id = _profile_and_policy(database)
    with database.write() as session:
        cluster_id = _cluster(session, profile_id)
        session.flush()  # the cluster first: no relationship orders the two INSERTs
        bindings.add(session, cluster_id, policy_id, enabled=True, priority=1)

    def again(session: object) -> None:
        bindings.add(session, cluster_id, policy_id, enabled=True, priority=2)  # type: ignore[arg-type]

    error = integrity.as_error(_refusal(database, again))
    assert type(error) is errors.Conflict and error.message == "Policy already attached."


def test_a_missing_profile_is_senlins_not_found(database: Database, db_url: str) -> None:
    error = integrity.as_error(_refusal(database, lambda s: _cluster(s, "no-such-profile")))
    if db_url.startswith("postgresql"):
        assert type(error) is errors.InvalidRequest
        assert error.message == "The specified profile 'no-such-profile' could not be found."
    else:  # SQLite does not say which key; on SQLite no concurrent change reaches one
        assert type(error) is errors.InternalError


def test_a_constraint_no_request_meets_is_an_internal_error_not_a_409(database: Database) -> None:
    def same_token(session: object) -> None:
        for _ in range(2):
            session.execute(  # type: ignore[attr-defined]
                text(
                    "INSERT INTO tokens (id, token_hash, name, project, role, created_at) "
                    "VALUES (:id, 'h', '', 'p', 'admin', 0)"
                ),
                {"id": str(uuid.uuid4())},
            )

    error = integrity.as_error(_refusal(database, same_token))
    assert type(error) is errors.InternalError
    assert "bug in herd's checks" in error.message


def test_every_named_constraint_exists_in_the_schema(database: Database, db_url: str) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite keeps no constraint names; its unique ones are mapped by columns")
    with database.read() as session:
        names = set(session.execute(text("SELECT conname FROM pg_constraint")).scalars())
    assert set(integrity.CONSTRAINTS) <= names
