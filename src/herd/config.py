"""Settings, read from arguments, ``HERD_*`` environment variables and defaults.

Nothing is read at import time: callers build a :class:`Settings` with
:func:`load_settings` and pass it down (the app, the engine and the CLI each
receive it explicitly).

A :class:`Settings` refuses a bad configuration itself, when it is built: each field's range,
and the combinations no process should start with (:meth:`Settings._coherent`: ``auth: none``
on an address other hosts reach, ``auth: keystone`` without Keystone, an engine declared dead
between two of its own heartbeats, ...). ``herd`` commands print the reason in one line and
exit 2 (``cli/server.py``'s ``settings_or_exit``).
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class RegionConfig(BaseModel):
    """One region and the backend that holds its regional copies."""

    name: str
    backend: Literal["sim"] = "sim"
    #: where the region's store lives (for the ``sim`` backend: a SQLite file or URL)
    url: str | None = None
    #: simulated latency of the ``sim`` backend: seconds it takes to delete a regional copy
    delete_latency: float = Field(default=0.0, ge=0)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HERD_", extra="ignore")

    data_dir: Path = Path("herd-data")
    db_url: str | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8778, ge=0, le=65535)
    auth: Literal["none", "token", "keystone"] = "none"
    default_project: str = "default"
    #: ``auth: keystone``: Keystone's identity URL (``http://host:5000/v3``) and herd's
    #: service user, with which keystonemiddleware validates the callers' tokens
    keystone_auth_url: str | None = None
    keystone_username: str = "herd"
    keystone_password: SecretStr | None = None
    keystone_project_name: str = "service"
    keystone_user_domain_name: str = "Default"
    keystone_project_domain_name: str = "Default"
    keystone_region_name: str | None = None
    #: seconds a validated token is believed without asking Keystone again (a revoked
    #: token works that long): keystonemiddleware's token_cache_time
    keystone_token_cache_time: int = Field(default=300, ge=0)
    #: ``auth: keystone``: an oslo.policy file (YAML or JSON) whose rules replace herd's
    #: defaults (docs/api.md lists the rules)
    policy_file: Path | None = None
    run_engine: bool = True
    #: ``text`` (human-readable lines) or ``json`` (one JSON object per line)
    log_format: Literal["text", "json"] = "text"
    #: ``herd engine`` only: serve the engine's /metrics on this port (None: no endpoint)
    engine_metrics_port: int | None = Field(default=None, ge=0, le=65535)
    #: ``herd serve``: API worker processes (the parent runs the one engine beside them)
    api_workers: int = Field(default=1, ge=1)
    #: run the API's hot reads and mark batches in a thread pool instead of on the event
    #: loop (for a database far away, where a round trip would hold up the loop)
    api_database_threads: bool = False
    #: seconds an idle HTTP connection stays open. Longer than clients and load balancers
    #: keep theirs (an ALB's default is 60 s), so the server is never the side that closes
    #: a connection just as a request is sent on it (the client would see a reset).
    api_keep_alive: int = Field(default=75, gt=0)
    #: SQLite's ``PRAGMA synchronous`` under WAL: NORMAL survives process crashes, FULL
    #: also the last transactions on a power loss or an OS crash (docs/configuration.md)
    sqlite_synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    #: cluster members each process keeps in memory between decisions (0: none), checked
    #: against the cluster's member revision on every use (docs/configuration.md)
    member_cache_members: int = Field(default=1_000_000, ge=0)

    #: the largest request body (bytes) the API reads; a larger one is a 413, refused
    #: while it streams in (docs/security.md). ``POST /v1/relocation-plans`` takes up to
    #: 32 MiB whatever this says (Ganeti's iallocator requests are large).
    max_request_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    #: what one ``metadata`` map of a request may hold: keys, key length (characters) and
    #: each value's size as JSON (bytes); more is a 400 naming the limit
    max_metadata_keys: int = Field(default=256, ge=1)
    max_metadata_key_length: int = Field(default=255, ge=1)
    max_metadata_value_bytes: int = Field(default=65536, ge=16)
    #: clusters one project may have (Senlin's ``max_clusters_per_project``); more is a 403
    max_clusters_per_project: int = Field(default=100, ge=0)
    #: nodes one project may have, in clusters or orphans (herd's; 0: no limit)
    max_nodes_per_project: int = Field(default=0, ge=0)

    engine_workers: int = Field(default=16, ge=1)
    engine_poll_interval: float = Field(default=0.05, gt=0)
    engine_heartbeat_interval: float = Field(default=2.0, gt=0)
    #: an engine whose heartbeat is older than this is dead; its locks are taken over
    #: (more than one heartbeat interval, or live engines would be taken for dead)
    engine_dead_after: float = Field(default=10.0, gt=0)
    default_action_timeout: int = Field(default=3600, gt=0)
    #: Senlin's default; benches and big-cluster tests raise it (HERD_MAX_NODES_PER_CLUSTER)
    max_nodes_per_cluster: int = Field(default=1000, ge=1)
    lock_retry_times: int = Field(default=3, ge=0)
    lock_retry_interval: float = Field(default=1.0, ge=0)
    #: the ``signal`` operation may send SIGKILL and SIGSTOP (refused by default)
    allow_uncatchable_signals: bool = False
    #: keep ``herd.sim`` servers in ``<data_dir>/sim-servers.sqlite``, shared by every engine
    #: on this data directory, instead of in each process's memory
    sim_shared_state: bool = False

    #: ``os.nova.server``: the clouds.yaml entry herd talks to (unset: ``OS_CLOUD`` or the
    #: other ``OS_*`` variables, as the ``openstack`` CLI reads them)
    nova_cloud: str | None = None
    #: requests to the cloud in flight at once (per engine or API process)
    nova_max_concurrent_calls: int = Field(default=10, ge=1)
    #: seconds a server may take to become ACTIVE, or to be gone after a delete
    nova_timeout: float = Field(default=600.0, gt=0)
    #: retries of a request Nova answered 409, 429 or 503 (with exponential back-off)
    nova_retries: int = Field(default=5, ge=0)
    #: seconds one request to the cloud may take (openstacksdk's ``api_timeout``): a cloud
    #: that stops answering fails the call (retried as a lost connection) instead of holding
    #: a thread for ever
    nova_request_timeout: float = Field(default=60.0, gt=0, le=3600)
    #: what marks this herd's servers (a Nova tag derived from it); by default
    #: ``herd@<host>:<data_dir>``, so two herds on one cloud never take each other's
    nova_owner: str | None = None
    #: the message bus of Nova's versioned notifications (``amqp://user:pass@host:5672/``),
    #: for LIFECYCLE_EVENTS health detection; unset: none (polling still works)
    nova_notifications_url: SecretStr | None = None
    #: ``auth: keystone`` only: act for each user on the cloud through a Keystone trust from
    #: that user to herd's service user (``keystone_*``), made when the user creates a
    #: cluster or node, instead of with the clouds.yaml credentials (docs/drivers.md)
    nova_trusts: bool = False
    #: ``os.heat.stack``: the clouds.yaml entry of the cloud whose Heat makes the stacks
    #: (unset: ``nova_cloud``'s); the ``nova_*`` limits, timeout and trusts apply to it too
    heat_cloud: str | None = None

    #: run the health manager in every engine (it checks clusters that have a health policy)
    health_manager: bool = True
    #: seconds between two passes of the health manager's scheduler (events wake it at once)
    health_tick: float = Field(default=0.5, gt=0)
    #: recovery back-off per node: ``base * 2**(n-1)`` seconds after the n-th recovery in a
    #: row, at most ``max``; a node that held up ``reset`` seconds starts a new series
    health_backoff_base: float = Field(default=10.0, ge=0)
    health_backoff_max: float = Field(default=600.0, ge=0)
    health_backoff_reset: float = Field(default=600.0, ge=0)
    #: threads that probe nodes (driver checks, poll URLs and their retries)
    health_probe_workers: int = Field(default=16, ge=1)

    #: Zaqar v2 endpoint used by ``type: zaqar`` lifecycle hooks
    zaqar_url: str | None = None
    webhook_timeout: float = Field(default=5.0, gt=0)
    webhook_retries: int = Field(default=3, ge=0)
    #: base of the URLs receivers hand out (``<base>/v1/webhooks/...``), e.g. the address
    #: Prometheus' Alertmanager reaches herd at; by default the address a request came to
    webhook_base_url: str | None = None
    #: the key receivers' webhook secrets are derived from (api/webhook_key.py); by default
    #: ``<data_dir>/webhook.key``, made on first start. Every API process must share it.
    webhook_key: SecretStr | None = None

    #: the outbound guard (engine/outbound.py, docs/security.md): CIDRs or host names a
    #: tenant's poll URL or hook URL may reach although the guard refuses them otherwise
    #: (loopback, link-local, private, ...), e.g. ``["127.0.0.0/8", "::1"]`` when the nodes
    #: are local processes. Environment: a JSON list.
    outbound_allow: list[str] = Field(default_factory=list)
    #: refuse private addresses (10/8, 172.16/12, 192.168/16, fc00::/7, ...) in tenant URLs
    outbound_refuse_private: bool = True

    regions: list[RegionConfig] = Field(default_factory=list)
    #: a deletion older than this (seconds) may be purged by an admin
    deletion_stuck_after: float = Field(default=3600.0, ge=0)
    #: seconds between two reconciliation passes of ``herd agent``
    agent_interval: float = Field(default=1.0, ge=0)

    def sim_state_file(self) -> Path | None:
        """Where ``herd.sim`` keeps its servers when they are shared (None: in memory)."""
        return self.data_dir / "sim-servers.sqlite" if self.sim_shared_state else None

    @field_validator("data_dir", mode="before")
    @classmethod
    def _data_dir_not_empty(cls, value: object) -> object:
        # An empty HERD_DATA_DIR= would silently mean the current directory.
        if isinstance(value, str) and not value.strip():
            raise ValueError("must not be empty (unset it to use ./herd-data)")
        return value

    @field_validator("webhook_key")
    @classmethod
    def _key_not_empty(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value():
            raise ValueError("must not be empty (unset it to use <data_dir>/webhook.key)")
        return value

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        """Refuse combinations of settings no process should start with."""
        if self.auth == "none" and not is_loopback(self.host):
            raise ValueError(
                f"Refusing to serve with auth 'none' on {self.host}: without tokens every "
                "caller is an administrator. Listen on 127.0.0.1, or use --auth token "
                "(HERD_AUTH=token) and create tokens with 'herd token create'."
            )
        if self.auth == "keystone":
            missing = [
                name
                for name, given in (
                    ("HERD_KEYSTONE_AUTH_URL", self.keystone_auth_url),
                    ("HERD_KEYSTONE_PASSWORD", self.keystone_password),
                )
                if not given
            ]
            if missing:
                raise ValueError(
                    f"auth 'keystone' needs {', '.join(missing)}: Keystone's URL and the "
                    "password of herd's service user, which validates the callers' tokens."
                )
        if self.policy_file is not None and self.auth != "keystone":
            raise ValueError(
                f"policy_file (HERD_POLICY_FILE) applies to auth 'keystone' only, not to "
                f"auth '{self.auth}', whose roles are fixed (docs/api.md)."
            )
        if self.engine_dead_after <= self.engine_heartbeat_interval:
            raise ValueError(
                f"engine_dead_after ({self.engine_dead_after} s) must be longer than "
                f"engine_heartbeat_interval ({self.engine_heartbeat_interval} s): every live "
                "engine would be taken for dead between two of its heartbeats."
            )
        if self.health_backoff_max < self.health_backoff_base:
            raise ValueError(
                f"health_backoff_max ({self.health_backoff_max} s) must not be shorter than "
                f"health_backoff_base ({self.health_backoff_base} s)."
            )
        return self

    def webhook_key_file(self) -> Path:
        """Where the webhook key is kept when ``webhook_key`` is not set."""
        return self.data_dir / "webhook.key"

    def database_url(self) -> str:
        if self.db_url:
            return self.db_url
        return f"sqlite:///{(self.data_dir / 'herd.db').resolve()}"


# untyped: the overrides go to pydantic-settings' constructor, whose keywords are typed per field
def load_settings(**overrides: Any) -> Settings:
    """Build settings from the environment, with explicit overrides (None means unset)."""
    given = {key: value for key, value in overrides.items() if value is not None}
    return Settings(**given)


def is_loopback(host: str) -> bool:
    """True when ``host`` only listens on the local machine (a name: all its addresses)."""
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses
    )
