"""herd's error tree.

Every error carries a class-level ``code`` (the Senlin exception type name that
appears in API error bodies) and a human message. Every error class herd raises on
purpose is defined here (a driver's own, e.g. the Nova driver's ``ServerFailed``, is a
``DriverError`` kept with its driver). Only ``herd.api.errors`` maps these classes to HTTP
statuses; nothing else in herd knows about HTTP. A database constraint's refusal is turned
into one of them by ``herd.store.integrity``, by the constraint's name.
"""

from __future__ import annotations


class HerdError(Exception):
    """Base of every error herd raises on purpose."""

    code: str = "HerdError"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields

    def __str__(self) -> str:
        return self.message


class InvalidRequest(HerdError):
    """The request body or a parameter is wrong (400)."""

    code = "BadRequest"

    def __init__(self, message: str, *, field: str | None = None, **fields: object) -> None:
        super().__init__(message, field=field, **fields)
        self.field = field


class InvalidSpec(InvalidRequest):
    """A profile or policy spec is wrong (400)."""

    code = "InvalidSpec"


class NotFound(HerdError):
    """A resource does not exist or is not visible to the caller (404)."""

    code = "ResourceNotFound"

    def __init__(self, resource_type: str, resource_id: str, message: str | None = None) -> None:
        super().__init__(
            message or f"The {resource_type} '{resource_id}' could not be found.",
            resource_type=resource_type,
            resource_id=resource_id,
        )
        self.resource_type = resource_type
        self.resource_id = resource_id


class MultipleChoices(InvalidRequest):
    """A short id or name matched more than one resource (400, as Senlin)."""

    code = "MultipleChoices"


class Forbidden(HerdError):
    code = "Forbidden"


class Unauthorized(HerdError):
    code = "Unauthorized"


class ServiceUnavailable(HerdError):
    """A service herd depends on (Keystone, for ``auth: keystone``) did not answer (503)."""

    code = "ServiceUnavailable"


class Conflict(HerdError):
    """The request conflicts with the current state (409)."""

    code = "Conflict"


class ResourceLocked(Conflict):
    code = "ResourceIsLocked"


class ActionInProgress(Conflict):
    code = "ActionInProgress"


class ActionConflict(Conflict):
    code = "ActionConflict"


class ActionCooldown(Conflict):
    code = "ActionCooldown"


class ResourceInUse(Conflict):
    code = "ResourceInUse"


class ResourceDeleting(Conflict):
    """The resource (or one it refers to) has a tombstone: it is being deleted."""

    code = "ResourceIsDeleting"


class PolicyRejected(HerdError):
    """A policy check stopped an action; the engine records it as the action's reason."""

    code = "PolicyRejected"

    def __init__(self, policy: str, reason: str) -> None:
        super().__init__(f"Failed policy '{policy}': {reason}", policy=policy, reason=reason)
        self.policy = policy
        self.reason = reason


class FeatureNotSupported(Conflict):
    """Senlin's FeatureNotSupported (409)."""

    code = "FeatureNotSupported"


class ActionImmutable(Conflict):
    """Senlin's ActionImmutable (409): the action has ended and cannot be changed."""

    code = "ActionImmutable"


class OverQuota(Forbidden):
    """Senlin's OverQuota: the project has as many as it may (403)."""

    code = "OverQuota"


class MalformedRequest(InvalidRequest):
    """The iallocator input cannot be understood."""

    code = "MalformedIAllocatorRequest"


class OutboundRefused(InvalidSpec):
    """herd will not call this URL for a tenant (400 at create time; a reason at call time)."""

    code = "InvalidSpec"


class DriverError(HerdError):
    """A driver failed to create, delete or inspect a real resource."""

    code = "DriverError"

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message, retryable=retryable)
        self.retryable = retryable


class VersionNotSupported(HerdError):
    """The requested API microversion is outside the supported range (406)."""

    code = "NotAcceptable"


class InternalError(HerdError):
    code = "InternalError"


class DatabaseUnavailable(HerdError):
    """The database URL is wrong, or the database cannot be reached or opened."""

    code = "DatabaseUnavailable"
