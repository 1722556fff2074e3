"""Identifiers and enumerations shared by every layer.

This module is a leaf: it imports nothing from herd. The string values are
Senlin's wire values, so that stored rows and API bodies read the same.
"""

from __future__ import annotations

from enum import StrEnum


class ActionName(StrEnum):
    CLUSTER_CREATE = "CLUSTER_CREATE"
    CLUSTER_DELETE = "CLUSTER_DELETE"
    CLUSTER_UPDATE = "CLUSTER_UPDATE"
    CLUSTER_SCALE_OUT = "CLUSTER_SCALE_OUT"
    CLUSTER_SCALE_IN = "CLUSTER_SCALE_IN"
    CLUSTER_RESIZE = "CLUSTER_RESIZE"
    CLUSTER_ADD_NODES = "CLUSTER_ADD_NODES"
    CLUSTER_DEL_NODES = "CLUSTER_DEL_NODES"
    CLUSTER_REPLACE_NODES = "CLUSTER_REPLACE_NODES"
    CLUSTER_REPLACE_UNHEALTHY = "CLUSTER_REPLACE_UNHEALTHY"
    CLUSTER_CHECK = "CLUSTER_CHECK"
    CLUSTER_RECOVER = "CLUSTER_RECOVER"
    CLUSTER_ATTACH_POLICY = "CLUSTER_ATTACH_POLICY"
    CLUSTER_DETACH_POLICY = "CLUSTER_DETACH_POLICY"
    CLUSTER_UPDATE_POLICY = "CLUSTER_UPDATE_POLICY"
    CLUSTER_OPERATION = "CLUSTER_OPERATION"
    NODE_CREATE = "NODE_CREATE"
    NODE_DELETE = "NODE_DELETE"
    NODE_JOIN = "NODE_JOIN"
    NODE_LEAVE = "NODE_LEAVE"
    NODE_UPDATE = "NODE_UPDATE"
    NODE_CHECK = "NODE_CHECK"
    NODE_RECOVER = "NODE_RECOVER"
    NODE_OPERATION = "NODE_OPERATION"
    PROFILE_DELETE = "PROFILE_DELETE"
    POLICY_DELETE = "POLICY_DELETE"
    #: herd: an administrator clears a stuck deletion (docs/deletion.md)
    DELETION_PURGE = "DELETION_PURGE"

    @property
    def is_cluster_action(self) -> bool:
        return self.value.startswith("CLUSTER_")


class ActionStatus(StrEnum):
    INIT = "INIT"
    WAITING = "WAITING"
    READY = "READY"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    WAITING_LIFECYCLE_COMPLETION = "WAITING_LIFECYCLE_COMPLETION"

    @property
    def is_final(self) -> bool:
        return self in (ActionStatus.SUCCEEDED, ActionStatus.FAILED, ActionStatus.CANCELLED)


ACTIVE_ACTION_STATUSES = (
    ActionStatus.READY,
    ActionStatus.WAITING,
    ActionStatus.RUNNING,
    ActionStatus.WAITING_LIFECYCLE_COMPLETION,
)


class ActionControl(StrEnum):
    """What a running action is asked to do (its ``control`` column), read at its cancel
    checks: every value stops it."""

    #: a user's cancel (``PATCH /v1/actions``) or a purge's
    CANCEL = "CANCEL"
    #: a forced delete took its locks (``store/locks.py``): it ends CANCELLED with the
    #: reason written then, whatever the rest of its run did
    FORCED_OUT = "FORCED_OUT"


class ActionCause(StrEnum):
    RPC = "RPC Request"
    DERIVED = "Derived Action"
    DERIVED_LCH = "Derived Action with Lifecycle Hook"


class ClusterStatus(StrEnum):
    INIT = "INIT"
    ACTIVE = "ACTIVE"
    CREATING = "CREATING"
    UPDATING = "UPDATING"
    RESIZING = "RESIZING"
    DELETING = "DELETING"
    CHECKING = "CHECKING"
    RECOVERING = "RECOVERING"
    CRITICAL = "CRITICAL"
    ERROR = "ERROR"
    WARNING = "WARNING"
    OPERATING = "OPERATING"


class NodeStatus(StrEnum):
    INIT = "INIT"
    ACTIVE = "ACTIVE"
    ERROR = "ERROR"
    WARNING = "WARNING"
    CREATING = "CREATING"
    UPDATING = "UPDATING"
    DELETING = "DELETING"
    RECOVERING = "RECOVERING"
    OPERATING = "OPERATING"


class HealthStatus(StrEnum):
    """Health of a member as seen by checks and by applications (Heat's CHECK_* states)."""

    UNKNOWN = "UNKNOWN"
    CHECK_COMPLETE = "CHECK_COMPLETE"
    CHECK_FAILED = "CHECK_FAILED"


class Phase(StrEnum):
    BEFORE = "BEFORE"
    AFTER = "AFTER"


class CheckStatus(StrEnum):
    OK = "OK"
    ERROR = "ERROR"
    NONE = "NONE"


class AdjustmentType(StrEnum):
    EXACT_CAPACITY = "EXACT_CAPACITY"
    CHANGE_IN_CAPACITY = "CHANGE_IN_CAPACITY"
    CHANGE_IN_PERCENTAGE = "CHANGE_IN_PERCENTAGE"


class Criteria(StrEnum):
    OLDEST_FIRST = "OLDEST_FIRST"
    OLDEST_PROFILE_FIRST = "OLDEST_PROFILE_FIRST"
    YOUNGEST_FIRST = "YOUNGEST_FIRST"
    RANDOM = "RANDOM"


class Role(StrEnum):
    ADMIN = "admin"
    MEMBER = "member"
    AGENT = "agent"


class ResourceType(StrEnum):
    CLUSTER = "cluster"
    NODE = "node"
    PROFILE = "profile"
    POLICY = "policy"


class TombstoneStatus(StrEnum):
    """A deletion in progress (``deleting_resources.status``)."""

    DELETING = "DELETING"
    ERROR = "ERROR"
    #: an administrator's purge is running (its DELETION_PURGE action is ``action_id``)
    PURGING = "PURGING"


class LockScope(StrEnum):
    CLUSTER = "CLUSTER"  # exclusive
    NODE = "NODE"  # shared among node-scoped actions


class DetectionType(StrEnum):
    """How the health manager finds out that a member failed (Senlin's detection types)."""

    NODE_STATUS_POLLING = "NODE_STATUS_POLLING"
    NODE_STATUS_POLL_URL = "NODE_STATUS_POLL_URL"
    LIFECYCLE_EVENTS = "LIFECYCLE_EVENTS"
    HYPERVISOR_STATUS_POLLING = "HYPERVISOR_STATUS_POLLING"


class RecoveryConditional(StrEnum):
    ANY_FAILED = "ANY_FAILED"
    ALL_FAILED = "ALL_FAILED"


class RecoveryOperation(StrEnum):
    """What recovering a node does to its resource."""

    RECREATE = "RECREATE"  # a new resource, same node id, name and index
    REBOOT = "REBOOT"  # stop and start the same resource
    REBUILD = "REBUILD"  # rebuild the resource in place, where the driver can


# Priorities of the built-in policy families (lower runs first), as in Senlin.
POLICY_PRIORITY = {
    "scaling": 100,
    "region_placement": 200,
    "zone_placement": 300,
    "deletion": 400,
    "loadbalance": 500,
    "health": 600,
}


#: action data key: the engine waits for a busy lock instead of failing after
#: ``lock_retry_times`` (actions a receiver queued on a busy cluster)
WAIT_FOR_LOCK = "wait_for_lock"
