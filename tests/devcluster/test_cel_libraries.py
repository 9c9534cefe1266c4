"""The Kubernetes CEL libraries in CRD validation rules: lists, strings, regex, url, ip/cidr, semver, sets and
quantities hold on objects' values as on the real server, and functions the server does not offer are refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine.devcluster.backends import Cluster

from .test_cel_rules import CRDS, crd, create, create_crd, gizmo, go_rule, refused, rule_path

RULES = (
    "self.tags.indexOf('b') == 1", "self.tags.lastIndexOf('a') == 2", "!self.tags.isSorted()",
    "self.sizes.sum() == 6", "self.sizes.min() == 1", "self.sizes.max() == 3", "self.sizes.isSorted()",
    "self.word.charAt(1) == 'e'", "self.word.indexOf('l') == 2", "self.word.lastIndexOf('l') == 3",
    "self.word.upperAscii() == 'HELLO' && 'ABC'.lowerAscii() == 'abc'", "self.word.replace('l', 'L') == 'heLLo'",
    "self.word.replace('l', 'L', 1) == 'heLlo'", "'a,b,c'.split(',') == ['a', 'b', 'c']",
    "'a,b,c'.split(',', 2) == ['a', 'b,c']", "self.word.substring(1) == 'ello' && self.word.substring(1, 3) == 'el'",
    "' x '.trim() == 'x'", "self.tags.join() == 'aba' && self.tags.join('-') == 'a-b-a'",
    "'%s is %d'.format([self.word, 5]) == 'hello is 5'", "'%.2f'.format([1.5]) == '1.50'",
    "'%x'.format([255]) == 'ff'", "self.word.find('l+') == 'll'", "'a1b2'.findAll('[0-9]') == ['1', '2']",
    "'a1b2'.findAll('[0-9]', 1) == ['1']", "self.word.matches('^h')",
    "isURL(self.url) && url(self.url).getScheme() == 'https'", "url(self.url).getHost() == 'example.com:8443'",
    "url(self.url).getHostname() == 'example.com' && url(self.url).getPort() == '8443'",
    "url(self.url).getEscapedPath() == '/a%20b'", "url(self.url).getQuery() == {'x': ['1', '2']}",
    "!isURL('not a url')",
    "isIP(self.ip) && ip(self.ip).family() == 4", "!isIP('10.0.0.300')", "ip.isCanonical('2001:db8::1')",
    "!ip(self.ip).isLoopback() && ip('127.0.0.1').isLoopback()", "ip(self.ip).isGlobalUnicast()",
    "ip('fe80::1').isLinkLocalUnicast()", "ip('0.0.0.0').isUnspecified()",
    "isCIDR(self.cidr) && cidr(self.cidr).containsIP(ip(self.ip)) && cidr(self.cidr).containsIP('10.1.2.3')",
    "cidr(self.cidr).prefixLength() == 8 && cidr(self.cidr).ip() == ip('10.0.0.0')",
    "cidr('10.1.0.0/8').masked() == cidr('10.0.0.0/8')", "cidr(self.cidr).containsCIDR('10.1.0.0/16')",
    "isSemver(self.version) && semver(self.version).major() == 1 && semver(self.version).minor() == 2",
    "semver(self.version).patch() == 3 && semver(self.version).isLessThan(semver('1.10.0'))",
    "semver('1.2.3-rc.1').isLessThan(semver('1.2.3')) && semver('1.2.3').compareTo(semver('1.2.3')) == 0",
    "isSemver('v1.2', true) && semver('v1.2', true).minor() == 2 && !isSemver('v1.2')",
    "sets.contains(self.tags, ['b']) && sets.equivalent(['a', 'b'], self.tags) && sets.intersects(self.tags, ['b'])",
    "lists.range(3) == [0, 1, 2] && self.tags.sort() == ['a', 'a', 'b'] && self.tags.distinct() == ['a', 'b']",
    "[[1], [2, 3]].flatten() == [1, 2, 3] && self.sizes.slice(0, 2) == [1, 2] && self.sizes.reverse() == [3, 2, 1]",
    "quantity(self.memory).isGreaterThan(quantity('1G')) && quantity(self.memory).compareTo(quantity('1Gi')) == 0",
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"spec": {
        "type": "object",
        "x-kubernetes-validations": [{"rule": rule, "message": f"rule {i}"} for i, rule in enumerate(RULES)],
        "properties": {
            "tags": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 8}},
            "sizes": {"type": "array", "maxItems": 4, "items": {"type": "integer"}},
            **{name: {"type": "string", "maxLength": 64}
               for name in ("word", "url", "ip", "cidr", "version", "memory")},
        },
    }},
}
VALUES = {"tags": ["a", "b", "a"], "sizes": [1, 2, 3], "word": "hello", "url": "https://example.com:8443/a%20b?x=1&x=2",
          "ip": "10.0.0.1", "cidr": "10.0.0.0/8", "version": "1.2.3", "memory": "1Gi"}


@pytest.fixture(scope="module")
def group(devcluster: Cluster) -> Iterator[str]:
    name = f"l{uuid.uuid4().hex[:8]}.example.com"
    create_crd(devcluster, name, SCHEMA)
    yield name
    devcluster.request("DELETE", f"{CRDS}/gizmos.{name}")


def test_every_library_function_holds_on_the_object(devcluster: Cluster, group: str, namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, **VALUES))
    assert code == 201, answer


@pytest.mark.parametrize(("changed", "failing"), [
    ({"url": "http://example.com:8443/a%20b?x=1&x=2"}, [25]),
    ({"ip": "10.0.0.2", "cidr": "11.0.0.0/8"}, [38, 39, 41]),
    ({"version": "1.2.4"}, [43]),
])
def test_a_library_rule_that_does_not_hold_is_reported(devcluster: Cluster, group: str, namespace: str,
                                                       changed: dict[str, str], failing: list[int]) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, **{**VALUES, **changed}))
    assert code == 422, answer
    refused(answer, "g1", group, *[("FieldValueInvalid", "spec", f"Invalid value: rule {i}")
                                   for i in failing])


@pytest.mark.parametrize(("rule", "detail"), [
    ("math.greatest(1, 2) == 2", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'math' (in "
                                 "container '')\n | math.greatest(1, 2) == 2\n | ^\nERROR: <input>:1:14: undeclared "
                                 "reference to 'greatest' (in container '')\n | math.greatest(1, 2) == 2\n"
                                 " | .............^"),
    ("'abc'.reverse() == 'cba'", "compilation failed: ERROR: <input>:1:14: found no matching overload for 'reverse' "
                                 "applied to 'string.()'\n | 'abc'.reverse() == 'cba'\n | .............^"),
    ("cel.bind(x, 1, x + 1) == 2", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'cel' (in "
                                   "container '')\n | cel.bind(x, 1, x + 1) == 2\n | ^\nERROR: <input>:1:9: "
                                   "undeclared reference to 'bind' (in container '')\n | cel.bind(x, 1, x + 1) == 2\n"
                                   " | ........^\nERROR: <input>:1:10: undeclared reference to 'x' (in container '')"
                                   "\n | cel.bind(x, 1, x + 1) == 2\n | .........^\nERROR: <input>:1:16: undeclared "
                                   "reference to 'x' (in container '')\n | cel.bind(x, 1, x + 1) == 2\n"
                                   " | ...............^"),
])
def test_functions_the_server_does_not_offer_are_refused(devcluster: Cluster, rule: str, detail: str) -> None:
    name = f"b{uuid.uuid4().hex[:8]}.example.com"
    spec = {"type": "object", "x-kubernetes-validations": [{"rule": rule}]}
    schema = {"type": "object", "properties": {"spec": spec}}
    code, answer = devcluster.request("POST", CRDS, body=crd(name, schema), query={"dryRun": "All"})
    assert (code, answer["reason"]) == (422, "Invalid"), answer
    body = f"Invalid value: {go_rule(rule)}: {detail}"
    assert answer["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": body,
                                            "field": f"{rule_path()}.rule"}]
