"""What herd calls of openstacksdk's orchestration proxy (``conn.orchestration``), as Protocols.

As :mod:`herd.drivers.nova.sdk` does for Nova: only what herd uses, with the arguments it
passes, so that a wrong call is a mypy error. A real ``openstack.connection.Connection``
fits :class:`HeatConnection`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class HeatStack(Protocol):
    """A stack as openstacksdk returns it (Heat's ``stack`` body)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str | None: ...

    @property
    def status(self) -> str | None: ...

    @property
    def status_reason(self) -> str | None: ...

    @property
    def outputs(self) -> list[dict[str, object]] | None: ...

    @property
    def parameters(self) -> dict[str, object] | None: ...

    @property
    def tags(self) -> list[str] | None: ...

    @property
    def timeout_mins(self) -> int | None: ...

    @property
    def is_rollback_disabled(self) -> bool | None: ...


class JsonAnswer(Protocol):
    """An HTTP answer (keystoneauth's, a ``requests.Response``)."""

    @property
    def status_code(self) -> int: ...

    def json(self) -> object: ...


class OrchestrationProxy(Protocol):
    """``conn.orchestration`` (Heat's API v1)."""

    def create_stack(self, **attrs: object) -> HeatStack:
        """``preview=True`` among ``attrs`` previews instead (nothing is made)."""
        ...

    def get_stack(self, stack: str, resolve_outputs: bool = ...) -> HeatStack: ...

    def update_stack(self, stack: str, **attrs: object) -> object: ...

    def delete_stack(self, stack: str, ignore_missing: bool = ...) -> None: ...

    def stacks(self, **query: object) -> Iterable[HeatStack]: ...

    def get(self, url: str) -> JsonAnswer:
        """A raw GET on Heat's API (the proxy is a keystoneauth Adapter)."""
        ...


class HeatConnection(Protocol):
    """An openstacksdk ``Connection`` seen as a Heat client."""

    @property
    def orchestration(self) -> OrchestrationProxy: ...

    def has_service(self, service_type: str) -> bool: ...
