"""SQLAlchemy 2.0 table mappings, one module per table family.

Times are stored as epoch seconds (floats): they compare and sort the same on
SQLite and PostgreSQL, and the API formats them. JSON columns hold the free-form
maps Senlin exposes (metadata, data, spec, inputs, outputs).

Every mapped class is importable from here (``from herd.store.models import NodeRow``);
importing the package registers every table on ``Base.metadata`` and the delete
listeners that keep tombstones and node checks with their rows.
"""

from herd.store.models.actions import ActionRow, DependencyRow, HookDeliveryRow
from herd.store.models.base import ID, Base, OwnedMixin
from herd.store.models.coordination import (
    ApiServiceRow,
    ClusterLockRow,
    EngineRow,
    HealthLeaseRow,
    NodeLockRow,
)
from herd.store.models.credentials import CredentialRow
from herd.store.models.health import NodeCheckRow
from herd.store.models.history import ClusterSizeRow, EventRow
from herd.store.models.members import MemberChangeRow, MemberRevisionRow
from herd.store.models.receivers import ReceiverAlertRow, ReceiverRow
from herd.store.models.resources import BindingRow, ClusterRow, NodeRow, PolicyRow, ProfileRow
from herd.store.models.tokens import TokenRow
from herd.store.models.tombstones import TombstoneRow

__all__ = [
    "ID",
    "ActionRow",
    "ApiServiceRow",
    "Base",
    "BindingRow",
    "ClusterLockRow",
    "ClusterRow",
    "ClusterSizeRow",
    "CredentialRow",
    "DependencyRow",
    "EngineRow",
    "EventRow",
    "HealthLeaseRow",
    "HookDeliveryRow",
    "MemberChangeRow",
    "MemberRevisionRow",
    "NodeCheckRow",
    "NodeLockRow",
    "NodeRow",
    "OwnedMixin",
    "PolicyRow",
    "ProfileRow",
    "ReceiverAlertRow",
    "ReceiverRow",
    "TokenRow",
    "TombstoneRow",
]
