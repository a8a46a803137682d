"""Where the service may POST: outbound webhooks never reach an internal address (SSRF).

An agent registers a webhook URL and an admin sets a project's Slack-compatible URL; both are posted to by
the worker, which sits inside the network. A URL whose host is, or resolves to, a loopback, private,
link-local (169.254.169.254: the cloud metadata service), shared, reserved or multicast address is refused:

- at registration (`check_url`: a 400 `webhook_address_forbidden`, or `webhook_host_unresolvable` when the
  name cannot be checked), and
- at every send (`post_pinned`): the name is resolved again (DNS may have changed since), every address is
  checked, and the connection goes to the address that was checked, never to a second lookup, so a name
  that rebinds between the check and the connection cannot slip through. Redirects are not followed.

HARNESS_WEBHOOK_ALLOW_PRIVATE=1 allows every address (local development, the test suite's receivers on
127.0.0.1); production leaves it off.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3
from django.conf import settings

from harness.http.errors import ValidationFailed

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class AddressRefused(Exception):
    """The URL's host is or resolves to an address the service must not reach."""


class HostUnresolvable(Exception):
    """The URL's host has no address (now)."""


@dataclass(frozen=True)
class Reply:
    status_code: int
    text: str


def forbidden_reason(address: IpAddress) -> str | None:
    """Why the service must not connect to `address`, or None when it is a public one."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv4 address carried in IPv6 (::ffff:127.0.0.1, 64:ff9b::a9fe:a9fe) is judged as that address.
        embedded = address.ipv4_mapped or (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
                                           if address in _NAT64 else None)
        if embedded is not None:
            return forbidden_reason(embedded)
    for name in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
        if getattr(address, f"is_{name}"):
            return name.replace("_", "-")
    if not address.is_global:
        return "not global"  # 100.64/10 (carrier-grade NAT) and other special-purpose ranges
    return None


def _host_and_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationFailed("A webhook URL is http(s) with a host.", code="invalid")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ValidationFailed("The webhook URL's port is not a number from 0 to 65535.", code="invalid") from None
    return parts.hostname, port


def _getaddrinfo(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to (an IP literal resolves to itself). Tests replace this to play DNS."""
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def resolve_checked(host: str, port: int) -> IpAddress:
    """The address to connect to: every address `host` resolves to is checked, and the first is returned.

    AddressRefused when any of them is internal (a name with one public and one internal address is refused:
    which one a client would reach is the resolver's choice), HostUnresolvable when there is none.
    """
    try:
        found = _getaddrinfo(host, port)
    except (OSError, UnicodeError) as exc:
        raise HostUnresolvable(f"{host} does not resolve: {exc}") from None
    addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in dict.fromkeys(found)]
    if not addresses:
        raise HostUnresolvable(f"{host} does not resolve.")
    if not settings.HARNESS_WEBHOOK_ALLOW_PRIVATE:
        for address in addresses:
            reason = forbidden_reason(address)
            if reason is not None:
                raise AddressRefused(f"{host} resolves to {address} ({reason}).")
    return addresses[0]


def check_url(url: str) -> None:
    """Refuse (400) a webhook URL that the sender would refuse: one whose host is or resolves to an internal
    address. Nothing is checked with HARNESS_WEBHOOK_ALLOW_PRIVATE on."""
    host, port = _host_and_port(url)
    if settings.HARNESS_WEBHOOK_ALLOW_PRIVATE:
        return
    try:
        resolve_checked(host, port)
    except AddressRefused as exc:
        raise ValidationFailed(f"The webhook URL may not point at an internal address: {exc}",
                               code="webhook_address_forbidden") from None
    except HostUnresolvable as exc:
        raise ValidationFailed(f"The webhook URL's host cannot be checked: {exc}",
                               code="webhook_host_unresolvable") from None


def post_pinned(url: str, *, data: bytes, headers: dict[str, str], timeout: float) -> Reply:
    """POST `data` to `url`, connected to the address checked just now (`resolve_checked`).

    The Host header, TLS's server name and the certificate check keep the URL's name; only the TCP
    connection is pinned to the checked address. No redirect is followed (a 3xx is the answer), no retry
    is made here (the delivery's backoff is the retry). Raises AddressRefused, HostUnresolvable, or
    urllib3.exceptions.HTTPError for a network failure.
    """
    parts = urlsplit(url)
    host, port = _host_and_port(url)
    address = str(resolve_checked(host, port))
    default_port = 443 if parts.scheme == "https" else 80
    host_header = (f"[{host}]" if ":" in host else host) + ("" if port == default_port else f":{port}")
    pool: urllib3.HTTPConnectionPool
    if parts.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(address, port, server_hostname=host, assert_hostname=host,
                                           cert_reqs="CERT_REQUIRED", ca_certs=certifi.where(), maxsize=1)
    else:
        pool = urllib3.HTTPConnectionPool(address, port, maxsize=1)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        response = pool.urlopen("POST", path, body=data, headers={**headers, "Host": host_header},
                                redirect=False, retries=False, timeout=urllib3.Timeout(total=timeout),
                                preload_content=True)
        return Reply(response.status, response.data.decode("utf-8", "replace"))
    finally:
        pool.close()
