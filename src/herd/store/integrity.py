"""A database constraint's refusal, turned into herd's error by the constraint's name.

A constraint catches what a request's own checks could not see: a concurrent change (a
profile deleted, on PostgreSQL, between a cluster create's check and its INSERT). Each
constraint a request can meet has an entry in :data:`CONSTRAINTS` saying what it means,
in Senlin's words; any other refusal is a bug in herd's checks, and is an internal error
(500, logged with the database's text), never a 409 that would tell the client to retry.

PostgreSQL names the constraint (``diag.constraint_name``, its default names:
``<table>_<column>_fkey``, ``<table>_<columns>_key``) and the key's value
(``diag.message_detail``). SQLite names a unique constraint by its columns (mapped to the
same names below) and a foreign key not at all; on SQLite every write transaction holds the
database from its first statement (``Database.write``), so no concurrent change can reach a
foreign key there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlalchemy.exc import IntegrityError

from herd import errors

_UNIQUE = "23505"
_FOREIGN_KEY = "23503"
#: SQLite's unique constraints, by table and columns, under PostgreSQL's names for them
_SQLITE_UNIQUE = {
    "cluster_policies.cluster_id, cluster_policies.policy_id": (
        "cluster_policies_cluster_id_policy_id_key"
    ),
    "deleting_resources.resource_type, deleting_resources.resource_id": "uq_deleting",
    "receiver_alerts.receiver_id, receiver_alerts.alert_key": "uq_receiver_alert",
}
_SQLITE_UNIQUE_TEXT = re.compile(r"UNIQUE constraint failed: (?P<columns>.+)$")
#: PostgreSQL's detail: ``Key (profile_id)=(8c1e...) is not present in table "profiles".``
_KEY_DETAIL = re.compile(r"Key \((?P<columns>[^)]*)\)=\((?P<values>.*)\)")


@dataclass(frozen=True)
class Violation:
    """Which constraint refused the change, and the key it refused (where the database says)."""

    constraint: str | None
    key: Mapping[str, str] = field(default_factory=dict)


def violation_of(exc: IntegrityError) -> Violation:
    """The constraint behind ``exc`` (None: the database did not say)."""
    orig = exc.orig
    diag = getattr(orig, "diag", None)
    if diag is not None:  # psycopg: PostgreSQL's own fields
        key: dict[str, str] = {}
        found = _KEY_DETAIL.search(getattr(diag, "message_detail", None) or "")
        if found:
            columns = [c.strip() for c in found["columns"].split(",")]
            values = [v.strip() for v in found["values"].split(",")]
            if len(columns) == len(values):
                key = dict(zip(columns, values, strict=True))
        return Violation(getattr(diag, "constraint_name", None), key)
    found = _SQLITE_UNIQUE_TEXT.search(str(orig))
    if found:
        return Violation(_SQLITE_UNIQUE.get(found["columns"].strip()))
    return Violation(None)


def _missing(
    kind: str, column: str, error: type[errors.HerdError]
) -> Callable[[Violation], errors.HerdError]:
    def build(violation: Violation) -> errors.HerdError:
        name = violation.key.get(column, "")
        specified = "specified " if error is errors.InvalidRequest else ""
        return error(f"The {specified}{kind} '{name}' could not be found.", field=column)

    return build


#: What a constraint's refusal means to the caller, in Senlin's texts: a reference to a
#: row a concurrent request removed is Senlin's answer for that row not found (400
#: "specified" for a reference in the body, 404 for the resource in the path); the same
#: policy attached twice is Senlin's "already attached".
CONSTRAINTS: dict[str, Callable[[Violation], errors.HerdError]] = {
    "clusters_profile_id_fkey": _missing("profile", "profile_id", errors.InvalidRequest),
    "nodes_profile_id_fkey": _missing("profile", "profile_id", errors.InvalidRequest),
    "cluster_policies_policy_id_fkey": _missing("policy", "policy_id", errors.InvalidRequest),
    "cluster_policies_cluster_id_fkey": _missing("cluster", "cluster_id", errors.NotFound),
    "cluster_policies_cluster_id_policy_id_key": lambda _: errors.Conflict(
        "Policy already attached."
    ),
    "uq_deleting": lambda _: errors.ResourceDeleting(
        "The resource is already being deleted; read it again."
    ),
}


def as_error(exc: IntegrityError) -> errors.HerdError:
    """herd's error for a constraint's refusal (:data:`CONSTRAINTS`; else an internal error)."""
    violation = violation_of(exc)
    build = CONSTRAINTS.get(violation.constraint or "")
    if build is not None:
        return build(violation)
    return errors.InternalError(
        "The database refused the change "
        f"({violation.constraint or 'an unnamed constraint'}); this is a bug in herd's checks."
    )
