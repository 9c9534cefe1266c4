"""More of the Kubernetes CEL libraries: `url()`, `ip()`/`cidr()`, `semver()`, `sets.*`, the lists extension and
the lists' `indexOf`/`lastIndexOf` (k8s.io/apiserver pkg/cel/library urls.go, ip.go, cidr.go, semverlib.go,
cel-go ext/sets.go and ext/lists.go).

Like quantities, each value is carried as a one-entry map naming its kind (`{"net.IP": "10.0.0.1"}`): the
runtime has no opaque types, and `==` then compares them as the server does.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import SplitResult, parse_qs, urlsplit

from cel_expr_python import cel

__all__ = ["SEMVER_KEY", "LibraryError", "extension", "function", "member", "parses", "semver_key"]

T = cel.Type
OPAQUE = T.Map(T.STRING, T.STRING)
URL_KEY, IP_KEY, CIDR_KEY, SEMVER_KEY = "kubernetes.URL", "net.IP", "net.CIDR", "kubernetes.Semver"
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
LOOSE_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


class LibraryError(ValueError):
    """An error a library function reports (the words of its Go counterpart)."""


def parses(parse: Callable[..., Any]) -> Callable[..., bool]:
    """The `isX()` of a conversion: whether `parse` accepts its arguments."""
    def check(*args: Any) -> bool:
        try:
            parse(*args)
        except LibraryError:
            return False
        return True
    return check


# url -------------------------------------------------------------------------------------------------------------


def _parse_url(text: str) -> SplitResult:
    """url.ParseRequestURI: an absolute URL or an absolute path."""
    parts = urlsplit(text)
    if " " in text or not (parts.scheme or text.startswith("/")):
        raise LibraryError(f"URL parse error during conversion from string: parse \"{text}\": invalid URI for request")
    return parts


def _url(text: str) -> dict[str, str]:
    _parse_url(text)
    return {URL_KEY: text}


def _url_parts(value: Any) -> SplitResult:
    return urlsplit(str(value[URL_KEY]))


def _hostname(value: Any) -> str:
    host = _url_parts(value).netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1:host.find("]")]
    return host.partition(":")[0]


def _port(value: Any) -> str:
    host = _url_parts(value).netloc.rpartition("@")[2]
    tail = host[host.find("]") + 1:] if host.startswith("[") else host
    return tail.partition(":")[2]


def _query(value: Any) -> dict[str, list[str]]:
    return parse_qs(_url_parts(value).query, keep_blank_values=True)


# ip and cidr -----------------------------------------------------------------------------------------------------


def _parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    try:
        address = ipaddress.ip_address(text)
    except ValueError as e:
        raise LibraryError(f"IP Address {text!r} parse error during conversion from string: ParseAddr({text!r}): "
                           "unable to parse IP") from e
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise LibraryError("IPv4-mapped IPv6 address is not allowed")
    if "%" in text:
        raise LibraryError("IP address with zone value is not allowed")
    return address


def _ip(text: str) -> dict[str, str]:
    return {IP_KEY: str(_parse_ip(text))}


def _as_ip(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(str(value[IP_KEY]))


def _parse_cidr(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    try:
        network = ipaddress.ip_interface(text)
    except ValueError as e:
        raise LibraryError(f"network address {text!r} parse error during conversion from string: "
                           f"netip.ParsePrefix({text!r}): bad prefix") from e
    if "/" not in text:
        raise LibraryError(f"network address {text!r} parse error during conversion from string: "
                           f"netip.ParsePrefix({text!r}): no '/'")
    return network


def _cidr(text: str) -> dict[str, str]:
    return {CIDR_KEY: str(_parse_cidr(text))}


def _as_cidr(value: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(str(value[CIDR_KEY]))


def _contains_ip(value: Any, address: Any) -> bool:
    found = _parse_ip(address) if isinstance(address, str) else _as_ip(address)
    return found in _as_cidr(value).network


def _contains_cidr(value: Any, other: Any) -> bool:
    inner = (_parse_cidr(other) if isinstance(other, str) else _as_cidr(other)).network
    outer = _as_cidr(value).network
    return inner.version == outer.version and inner.subnet_of(outer)  # type: ignore[arg-type]


# semver ----------------------------------------------------------------------------------------------------------


def _parse_semver(text: str, normalize: bool = False) -> tuple[int, int, int, str]:
    found = (LOOSE_SEMVER if normalize else SEMVER).match(text)
    if found is None:
        raise LibraryError(f"Semver parse error during conversion from string: {_semver_problem(text)}")
    major, minor, patch, pre = found.groups()
    return int(major), int(minor or 0), int(patch or 0), pre or ""


def _semver_problem(text: str) -> str:
    parts = text.split(".", 2)
    return "No Major.Minor.Patch elements found" if len(parts) != 3 else f"Invalid character(s) found in {text}"


def _semver(text: str, normalize: bool = False) -> dict[str, str]:
    major, minor, patch, pre = _parse_semver(text, normalize)
    return {SEMVER_KEY: f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "")}


def semver_key(value: Any) -> tuple[int, int, int, int, tuple[tuple[int, Any], ...]]:
    """A sort key of a semver value: a pre-release sorts before its release."""
    major, minor, patch, pre = _parse_semver(str(value[SEMVER_KEY]))
    ids = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else ()
    return major, minor, patch, 0 if pre else 1, ids


def _semver_part(index: int) -> Callable[[Any], int]:
    return lambda value: _parse_semver(str(value[SEMVER_KEY]))[:3][index]


# sets and lists --------------------------------------------------------------------------------------------------


def _contains_all(items: Sequence[Any], wanted: Sequence[Any]) -> bool:
    return all(w in items for w in wanted)


def _index_of(items: Sequence[Any], wanted: Any) -> int:
    return next((i for i, item in enumerate(items) if item == wanted), -1)


def _last_index_of(items: Sequence[Any], wanted: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if items[i] == wanted), -1)


def _flatten(items: Sequence[Any], depth: int = 1) -> list[Any]:
    if depth < 0:
        raise LibraryError("level must be non-negative")
    flat = list(items)
    for _ in range(depth):
        flat = list(itertools.chain.from_iterable(i if isinstance(i, list) else [i] for i in flat))
    return flat


def _distinct(items: Sequence[Any]) -> list[Any]:
    unique: list[Any] = []
    for item in items:
        if item not in unique:
            unique.append(item)
    return unique


def _slice(items: Sequence[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise LibraryError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise LibraryError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise LibraryError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return list(items[start:end])


def _sort(items: Sequence[Any]) -> list[Any]:
    try:
        return sorted(items)
    except TypeError as e:
        raise LibraryError("list elements must have the same type") from e


# declarations ----------------------------------------------------------------------------------------------------


def member(overload: str, result: Any, params: Sequence[Any], impl: Callable[..., Any]) -> cel.Overload:
    return cel.Overload(overload, result, list(params), is_member=True, impl=impl)


def function(overload: str, result: Any, params: Sequence[Any], impl: Callable[..., Any]) -> cel.Overload:
    return cel.Overload(overload, result, list(params), impl=impl)


def _fn(name: str, *overloads: cel.Overload) -> cel.FunctionDecl:
    return cel.FunctionDecl(name, list(overloads))


def _url_decls() -> list[cel.FunctionDecl]:
    getters: dict[str, Callable[[Any], Any]] = {
        "getScheme": lambda v: _url_parts(v).scheme, "getHost": lambda v: _url_parts(v).netloc.rpartition("@")[2],
        "getHostname": _hostname, "getPort": _port, "getEscapedPath": lambda v: _url_parts(v).path}
    decls = [_fn(name, member(f"url_{name}", T.STRING, [OPAQUE], impl)) for name, impl in getters.items()]
    return [*decls, _fn("getQuery", member("url_get_query", T.Map(T.STRING, T.List(T.STRING)), [OPAQUE], _query)),
            _fn("url", function("string_to_url", OPAQUE, [T.STRING], _url)),
            _fn("isURL", function("is_url_string", T.BOOL, [T.STRING], parses(_parse_url)))]


def _network_decls() -> list[cel.FunctionDecl]:
    checks: dict[str, Callable[[Any], bool]] = {
        "isUnspecified": lambda v: _as_ip(v).is_unspecified, "isLoopback": lambda v: _as_ip(v).is_loopback,
        "isLinkLocalMulticast": lambda v: (_as_ip(v).is_multicast and _as_ip(v).is_link_local)
        or str(_as_ip(v)).startswith("224.0.0."),
        "isLinkLocalUnicast": lambda v: _as_ip(v).is_link_local and not _as_ip(v).is_multicast,
        "isGlobalUnicast": lambda v: not (_as_ip(v).is_multicast or _as_ip(v).is_loopback or _as_ip(v).is_link_local
                                          or _as_ip(v).is_unspecified or str(_as_ip(v)) == "255.255.255.255")}
    decls = [_fn(name, member(f"ip_{name}", T.BOOL, [OPAQUE], impl)) for name, impl in checks.items()]
    return [*decls,
            _fn("ip", function("string_to_ip", OPAQUE, [T.STRING], _ip),
                member("cidr_ip", OPAQUE, [OPAQUE], lambda v: {IP_KEY: str(_as_cidr(v).ip)})),
            _fn("isIP", function("is_ip", T.BOOL, [T.STRING], parses(_parse_ip))),
            _fn("ip.isCanonical", function("ip_is_canonical", T.BOOL, [T.STRING],
                                          lambda s: str(_parse_ip(s)) == s)),
            _fn("family", member("ip_family", T.INT, [OPAQUE], lambda v: _as_ip(v).version)),
            _fn("cidr", function("string_to_cidr", OPAQUE, [T.STRING], _cidr)),
            _fn("isCIDR", function("is_cidr", T.BOOL, [T.STRING], parses(_parse_cidr))),
            _fn("containsIP", member("cidr_contains_ip_string", T.BOOL, [OPAQUE, T.STRING], _contains_ip),
                member("cidr_contains_ip_ip", T.BOOL, [OPAQUE, OPAQUE], _contains_ip)),
            _fn("containsCIDR", member("cidr_contains_cidr_string", T.BOOL, [OPAQUE, T.STRING], _contains_cidr),
                member("cidr_contains_cidr", T.BOOL, [OPAQUE, OPAQUE], _contains_cidr)),
            _fn("prefixLength", member("cidr_prefix_length", T.INT, [OPAQUE],
                                        lambda v: _as_cidr(v).network.prefixlen)),
            _fn("masked", member("cidr_masked", OPAQUE, [OPAQUE], lambda v: {CIDR_KEY: str(_as_cidr(v).network)}))]


def _semver_decls() -> list[cel.FunctionDecl]:
    return [_fn("semver", function("string_to_semver", OPAQUE, [T.STRING], _semver),
                function("string_bool_to_semver", OPAQUE, [T.STRING, T.BOOL], _semver)),
            _fn("isSemver", function("is_semver", T.BOOL, [T.STRING], parses(_parse_semver)),
                function("is_semver_normalize", T.BOOL, [T.STRING, T.BOOL], parses(_parse_semver))),
            *(_fn(name, member(f"semver_{name}", T.INT, [OPAQUE], _semver_part(i)))
              for i, name in enumerate(("major", "minor", "patch")))]


def _list_decls() -> list[cel.FunctionDecl]:
    dyn_list = T.List(T.DYN)
    return [_fn("indexOf", member("list_index_of", T.INT, [dyn_list, T.DYN], _index_of)),
            _fn("lastIndexOf", member("list_last_index_of", T.INT, [dyn_list, T.DYN], _last_index_of)),
            _fn("sets.contains", function("list_sets_contains_list", T.BOOL, [dyn_list, dyn_list], _contains_all)),
            _fn("sets.equivalent", function("list_sets_equivalent_list", T.BOOL, [dyn_list, dyn_list],
                                           lambda a, b: _contains_all(a, b) and _contains_all(b, a))),
            _fn("sets.intersects", function("list_sets_intersects_list", T.BOOL, [dyn_list, dyn_list],
                                           lambda a, b: any(x in a for x in b))),
            _fn("lists.range", function("lists_range", T.List(T.INT), [T.INT], lambda n: list(range(n)))),
            _fn("sort", member("list_sort", dyn_list, [dyn_list], _sort)),
            _fn("flatten", member("list_flatten", dyn_list, [dyn_list], _flatten),
                member("list_flatten_int", dyn_list, [dyn_list, T.INT], _flatten)),
            _fn("distinct", member("list_distinct", dyn_list, [dyn_list], _distinct)),
            _fn("slice", member("list_slice", dyn_list, [dyn_list, T.INT, T.INT], _slice)),
            _fn("reverse", member("list_reverse", dyn_list, [dyn_list], lambda items: list(reversed(items))))]


def extension() -> cel.CelExtension:
    """The declarations as one extension (so `indexOf` adds list overloads to the strings extension's)."""
    return cel.CelExtension("kplan.kubernetes", [*_url_decls(), *_network_decls(), *_semver_decls(),
                                                 *_list_decls()])
