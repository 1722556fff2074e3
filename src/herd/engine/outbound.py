"""The outbound guard: every URL herd calls for a tenant goes through here.

A tenant names URLs herd calls on its behalf (a health policy's ``poll_url``, a
deletion policy's lifecycle hook ``url``). Left alone, herd would be a proxy into
its own network: 127.0.0.1, the cloud's metadata service at 169.254.169.254, the
database next door. So:

* only ``http`` and ``https``, checked when the policy is created (400 naming the
  field) and again on every call;
* the host is resolved (``socket.getaddrinfo``, which also reads the numeric IPv4
  spellings ``2130706433``, ``0x7f000001`` and ``0177.0.0.1``) and EVERY address it
  resolves to is checked; an IPv6-mapped IPv4 address is checked as the IPv4 one;
* loopback, link-local, unspecified, multicast and reserved addresses are refused,
  and private ones too unless ``outbound_refuse_private`` is off;
* herd connects to the address it checked (the URL's host is kept in the ``Host``
  header and as the TLS server name), so a second DNS answer cannot swap it
  (DNS rebinding);
* redirects are followed by hand, each hop checked the same way.

The operator's ``outbound_allow`` (CIDRs or host names) lets chosen destinations
through, e.g. ``127.0.0.0/8`` when nodes are local processes. Admins are not exempt:
with ``auth: none`` every caller is an admin, so an exemption would switch the
guard off on the installs that need it most; the allow-list is the operator's word.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from herd.config import Settings
from herd.errors import OutboundRefused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]

SCHEMES = ("http", "https")
MAX_REDIRECTS = 5
_DEFAULT_PORTS = {"http": 80, "https": 443}


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (the C library also reads numeric IPv4 forms)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _unmapped(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def refusal(address: IPAddress, *, refuse_private: bool) -> str | None:
    """Why ``address`` may not be called (None: it may), before any allow-list."""
    address = _unmapped(address)
    for kind, refused in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("unspecified", address.is_unspecified),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
    ):
        if refused:
            return f"{address} is a {kind} address"
    if refuse_private and (address.is_private or not address.is_global):
        return f"{address} is a private address"
    return None


class OutboundGuard:
    """Decides whether herd may call a tenant's URL, and calls it if so."""

    def __init__(
        self,
        allow: Iterable[str] = (),
        *,
        refuse_private: bool = True,
        resolver: Resolver = system_resolver,
        max_redirects: int = MAX_REDIRECTS,
    ) -> None:
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for entry in allow:
            try:
                networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                hosts.add(entry.strip().lower().rstrip("."))
        self.networks = tuple(networks)
        self.hosts = frozenset(hosts)
        self.refuse_private = refuse_private
        self.resolver = resolver
        self.max_redirects = max_redirects

    @classmethod
    def from_settings(cls, settings: Settings) -> OutboundGuard:
        return cls(settings.outbound_allow, refuse_private=settings.outbound_refuse_private)

    # -- deciding ----------------------------------------------------------------------

    def address_refusal(self, address: IPAddress) -> str | None:
        if any(_unmapped(address) in net or address in net for net in self.networks):
            return None
        return refusal(address, refuse_private=self.refuse_private)

    def checked_addresses(self, host: str, port: int, field: str) -> list[str]:
        """The addresses of ``host``, all checked; raises :class:`OutboundRefused`."""
        name = host.strip("[]").lower().rstrip(".")
        try:
            addresses = self.resolver(name, port)
        except (OSError, UnicodeError) as exc:
            raise OutboundRefused(
                f"{field}: the host '{host}' could not be resolved ({exc})", field=field
            ) from None
        if not addresses:
            raise OutboundRefused(f"{field}: the host '{host}' has no address", field=field)
        if name in self.hosts:
            return addresses
        for text in addresses:
            why = self.address_refusal(ipaddress.ip_address(text.split("%", 1)[0]))
            if why:
                raise OutboundRefused(
                    f"{field}: herd does not call '{host}' for a tenant: {why} "
                    "(outbound policy; an operator may allow it with outbound_allow)",
                    field=field,
                )
        return addresses

    def check_url(self, url: str, field: str, *, resolve: bool = True) -> None:
        """Check a URL as a tenant gave it (at create time).

        The scheme must be http(s) and the URL must name a host. When the host is a
        template (``{nodename}``) it can only be checked when it is called.

        Raises:
            OutboundRefused: naming ``field`` and the reason.
        """
        parts = urlsplit(url.strip())
        if parts.scheme.lower() not in SCHEMES or not parts.netloc:
            raise OutboundRefused(
                f"{field}: only http and https URLs with a host are allowed, got '{url}'",
                field=field,
            )
        host = parts.hostname or ""
        if not host:
            raise OutboundRefused(f"{field}: the URL '{url}' names no host", field=field)
        if resolve and "{" not in host and "}" not in host:
            try:
                port = parts.port or _DEFAULT_PORTS[parts.scheme.lower()]
            except ValueError:  # a templated port: the address alone decides
                port = _DEFAULT_PORTS[parts.scheme.lower()]
            try:
                self.checked_addresses(host, port, field)
            except OutboundRefused as exc:
                # A name that does not resolve today may tomorrow: it is checked on each call.
                if "could not be resolved" not in exc.message:
                    raise

    # -- calling -----------------------------------------------------------------------

    def request(
        self,
        client: httpx.Client,
        method: str,
        url: str,
        *,
        field: str = "url",
        **kwargs: Any,
    ) -> httpx.Response:
        """Call ``url`` through ``client`` (which must not follow redirects itself).

        Each hop is checked and connected to by the address that was checked.

        Raises:
            OutboundRefused: a hop is not allowed (or there are too many).
            httpx.HTTPError: the call itself failed.
        """
        target = httpx.URL(url)
        for _hop in range(self.max_redirects + 1):
            scheme = target.scheme.lower()
            if scheme not in SCHEMES or not target.host:
                raise OutboundRefused(
                    f"{field}: only http and https URLs with a host are allowed", field=field
                )
            port = target.port or _DEFAULT_PORTS[scheme]
            address = self.checked_addresses(target.host, port, field)[0]
            headers = httpx.Headers(kwargs.pop("headers", None))
            headers["Host"] = target.netloc.decode("ascii")
            extensions = {"sni_hostname": target.host} if scheme == "https" else {}
            response = client.request(
                method,
                target.copy_with(host=address),
                headers=headers,
                extensions=extensions,
                follow_redirects=False,
                **kwargs,
            )
            location = response.headers.get("Location")
            if not response.is_redirect or not location:
                return response
            response.close()
            target = target.join(location)
            kwargs["headers"] = headers
            if response.status_code == 303 or (
                response.status_code in (301, 302) and method != "GET"
            ):
                method = "GET"
                for body in ("json", "content", "data"):
                    kwargs.pop(body, None)
        raise OutboundRefused(f"{field}: more than {self.max_redirects} redirects", field=field)


def check_urls(guard: OutboundGuard, urls: Sequence[tuple[str, str]]) -> None:
    """Check each ``(field, url)`` a new spec names (raises :class:`OutboundRefused`)."""
    for field, url in urls:
        guard.check_url(url, field)
