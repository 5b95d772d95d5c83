"""Where the platform may send an agency's credentials: the insurer hosts operations allowed.

Whoever may edit an insurer could point its address at a server of their own, or at one inside
the network (a metadata service, an internal admin page), and collect every agency's credentials
there with the next quote. So an insurer's host must be on the allow-list the deployment sets
(`INSURER_ALLOWED_HOSTS`: exact names, or `.domain` for a domain and its subdomains), and no
address may be private, link-local or otherwise not public outside DEBUG. This machine itself
(loopback, where the sandbox insurers run) only where the settings say so (`INSURER_ALLOW_LOOPBACK`:
the test and local settings) or under DEBUG.

Checked twice: where the address is saved (`Insurer.clean_fields`, the admin form) and where a
call is made (`integrations.calling.channel`), against the name in the address and against the
address the name resolved to, so a name that resolves inside the network is refused too.
Messages are Turkish and name the field (servis adresi): an admin reads them on the form, an
agent or on-call engineer on a refused call.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings

__all__ = ["insurer_host_problem", "insurer_ip_problem"]


def insurer_host_problem(host: str | None) -> str:
    """Why the platform may not send credentials to `host` (an address's host name or IP), in
    Turkish; "" when it may."""
    return _host_problem(
        (host or "").strip().lower().rstrip("."),
        settings.DEBUG,
        bool(getattr(settings, "INSURER_ALLOW_LOOPBACK", False)),
        tuple(getattr(settings, "INSURER_ALLOWED_HOSTS", ()) or ()),
    )


def insurer_ip_problem(address: str) -> str:
    """Why the platform may not send credentials to the IP `address` a host name resolved to; ""
    when it may. The allow-list is of names: here only the ranges count."""
    ip = _ip(address)
    if ip is None:
        return ""
    return _range_problem(ip, address, settings.DEBUG, bool(getattr(settings, "INSURER_ALLOW_LOOPBACK", False)))


@lru_cache(maxsize=256)
def _host_problem(host: str, debug: bool, allow_loopback: bool, allowed: tuple[str, ...]) -> str:
    """Cached: the channel asks on every exchange, and the answer only changes with the settings."""
    if not host:
        return "Servis adresinde sunucu adı yok."
    if host == "localhost" or host.endswith(".localhost"):
        return "" if debug or allow_loopback else _loopback_message(host)
    ip = _ip(host)
    if ip is not None:
        problem = _range_problem(ip, host, debug, allow_loopback)
        if problem or _is_loopback(ip):
            return problem  # a sandbox on this machine, allowed by the settings: no insurer lists it
    if not allowed:
        if debug:
            return ""  # a developer's machine without an allow-list talks to whatever it is told
        return (
            "Servis adresi kullanılamaz: izin verilen sigorta şirketi sunucuları tanımlanmamış "
            "(sunucu ayarı INSURER_ALLOWED_HOSTS)."
        )
    if any(_matches(host, entry) for entry in allowed):
        return ""
    return (
        f"Servis adresi ({host}) izin verilen sigorta şirketi sunucuları arasında değil; "
        "izin listesi sunucu ayarlarındadır (INSURER_ALLOWED_HOSTS)."
    )


_IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def _is_loopback(ip: _IP) -> bool:
    return (getattr(ip, "ipv4_mapped", None) or ip).is_loopback


def _range_problem(ip: _IP, shown: str, debug: bool, allow_loopback: bool) -> str:
    """Loopback only where allowed; nothing that is not a public address outside DEBUG (private,
    link-local such as the cloud metadata service, shared, reserved, multicast, unspecified)."""
    ip = getattr(ip, "ipv4_mapped", None) or ip
    if ip.is_loopback:
        return "" if debug or allow_loopback else _loopback_message(shown)
    if debug:
        return ""
    if not ip.is_global or ip.is_multicast:
        return f"Servis adresi iç ağdaki ya da genel olmayan bir adrese ({shown}) yönlendirilemez."
    return ""


def _loopback_message(shown: str) -> str:
    return f"Servis adresi bu sunucunun kendisine ({shown}) yönlendirilemez."


def _ip(host: str) -> _IP | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _matches(host: str, entry: str) -> bool:
    """`entry` is an exact host, or `.domain` for the domain and every name under it."""
    entry = entry.strip().lower().rstrip(".")
    if not entry:
        return False
    if entry.startswith("."):
        return host == entry[1:] or host.endswith(entry)
    return host == entry
