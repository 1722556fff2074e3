"""A small typed HTTP client for the herd (Senlin v1) API.

Every request carries the microversion header and, when given, the
``X-Auth-Token``. Errors come back as :class:`ApiError` built from Senlin's
error body, so callers never see an httpx exception or a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx

MICROVERSION = "clustering 1.14"
DEFAULT_URL = "http://127.0.0.1:8778"

JSONObject = dict[str, object]
QueryValue = str | int | float | bool | None


class ApiError(Exception):
    """A failed call: an HTTP error answer, or no answer at all (status 0)."""

    def __init__(self, message: str, *, status: int = 0, error_type: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type

    def describe(self) -> str:
        if not self.status:
            return self.message
        kind = f" {self.error_type}" if self.error_type else ""
        return f"{self.message} (HTTP {self.status}{kind})"


@dataclass(frozen=True)
class Reply:
    """A successful answer: status, decoded JSON body (or {}), and Location."""

    status: int
    body: JSONObject = field(default_factory=dict)
    location: str | None = None

    @property
    def action_id(self) -> str | None:
        """The action id of a 202 answer (Location header, else ``{"action": id}``)."""
        if self.location and "/actions/" in self.location:
            return self.location.rstrip("/").rsplit("/", 1)[-1]
        action = self.body.get("action")
        return action if isinstance(action, str) else None


def path(*segments: str) -> str:
    """Join URL path segments under ``/v1``, quoting names given by users."""
    return "/v1/" + "/".join(quote(segment, safe="") for segment in segments)


def _error_from(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return ApiError(
                str(error["message"]),
                status=response.status_code,
                error_type=str(error.get("type", "")),
            )
        for key in ("explanation", "detail", "message"):
            if isinstance(body.get(key), str):
                return ApiError(str(body[key]), status=response.status_code)
    text = response.text.strip() or response.reason_phrase
    return ApiError(text, status=response.status_code)


class HerdClient:
    """Talks to one herd API endpoint."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"OpenStack-API-Version": MICROVERSION, "Accept": "application/json"}
        if token:
            headers["X-Auth-Token"] = token
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url,
            headers=headers,
            timeout=timeout,
            transport=transport,
            # plain http never uses TLS; skip loading the CA bundle (~60 ms per command)
            verify=not self.url.startswith("http://"),
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HerdClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, QueryValue] | None = None,
        json: object = None,
    ) -> Reply:
        query = {
            key: ("true" if value else "false") if isinstance(value, bool) else value
            for key, value in (params or {}).items()
            if value is not None
        }
        try:
            response = self._http.request(method, url, params=query or None, json=json)
        except httpx.HTTPError as exc:
            raise ApiError(f"cannot reach {self.url}: {exc}") from exc
        if response.status_code >= 400:
            raise _error_from(response)
        body: JSONObject = {}
        if response.content:
            try:
                decoded = response.json()
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                body = decoded
        return Reply(response.status_code, body, response.headers.get("location"))

    def get(self, url: str, params: Mapping[str, QueryValue] | None = None) -> Reply:
        return self.request("GET", url, params=params)

    def post(self, url: str, json: object = None) -> Reply:
        return self.request("POST", url, json=json)

    def patch(
        self, url: str, json: object = None, params: Mapping[str, QueryValue] | None = None
    ) -> Reply:
        return self.request("PATCH", url, json=json, params=params)

    def delete(
        self, url: str, json: object = None, params: Mapping[str, QueryValue] | None = None
    ) -> Reply:
        return self.request("DELETE", url, json=json, params=params)

    def cluster_action(self, cluster: str, name: str, params: Mapping[str, object]) -> Reply:
        """``POST /v1/clusters/<cluster>/actions`` with one top-level key."""
        return self.post(path("clusters", cluster, "actions"), {name: params})

    def node_action(self, node: str, name: str, params: Mapping[str, object]) -> Reply:
        return self.post(path("nodes", node, "actions"), {name: params})
