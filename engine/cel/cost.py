"""The static cost estimate of a CRD validation rule, as kube-apiserver v1.37.2 computes it (pure).

A port of cel-go v0.29.2 `checker/cost.go` with the size estimator of k8s.io/apiextensions-apiserver
pkg/apiserver/schema/cel (sizes from the schema's `maxItems`, `maxProperties`, `maxLength`) and the call costs of
k8s.io/apiserver pkg/cel/library/cost.go. It covers literals, `self`/`oldSelf` and field selection, `has()`,
indexing, the operators, `size()`, conversions, `type()` and type names, the macros `all`, `exists`, `exists_one`,
`map`, `filter` (nested, over lists and maps), the string functions (`contains`, `startsWith`, `endsWith`,
`matches`, `find`, `findAll`, `lowerAscii`, `upperAscii`, `trim`, `substring`, `replace`, `split`, `join`,
`indexOf`, `lastIndexOf`, `charAt`, `format`), the list functions `isSorted`, `sum`, `min`, `max`, and `quantity`,
`semver`, `url`, `ip`, `cidr` with their methods, timestamps and durations (`date-time`, `duration` fields) with
their getters; `oldSelf` of an `optionalOldSelf` rule is an optional with `hasValue()`, `value()` and `orValue()`.
Anything else (optional selection and the rest of the optional library, the lists and sets extensions, a type only
known at run time where the overload decides the cost) is `Unsupported`: no estimate, so no refusal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from engine.cel.decls import Decl, simple
from engine.cel.fields import unescape
from engine.cel.syntax import (
    ACCUMULATOR,
    Call,
    Comprehension,
    Expr,
    Ident,
    ListExpr,
    Literal,
    MapExpr,
    Select,
    Unsupported,
    parse,
)

__all__ = ["MAX", "Unsupported", "estimate"]

MAX = 2**64 - 1
STRING_FACTOR, REGEX_FACTOR = 0.1, 0.25
LIST_BASE, MAP_BASE = 10, 30
DYN = simple("dyn")


@dataclass(frozen=True)
class Size:
    """SizeEstimate and CostEstimate (the same arithmetic), saturating at 2^64-1."""

    min: int
    max: int

    def add(self, other: Size) -> Size:
        return Size(min(self.min + other.min, MAX), min(self.max + other.max, MAX))

    def times(self, other: Size) -> Size:
        return Size(min(self.min * other.min, MAX), min(self.max * other.max, MAX))

    def factor(self, by: float) -> Size:
        return Size(_by_factor(self.min, by), _by_factor(self.max, by))

    def union(self, other: Size) -> Size:
        return Size(min(self.min, other.min), max(self.max, other.max))


UNKNOWN = Size(0, MAX)
ONE = Size(1, 1)
ZERO = Size(0, 0)


def _by_factor(x: int, y: float) -> int:
    value = float(x)
    if value > 0 and y > 0 and value > float(MAX) / y:
        return MAX
    ceil = math.ceil(value * y)
    return MAX if ceil >= 2**64 else int(ceil)


def fixed(n: int) -> Size:
    return Size(n, n)


@dataclass(frozen=True)
class Entries:
    """entrySizeEstimate: the key and value sizes of a literal list or map."""

    container: str
    key: Size
    val: Size

    def union(self, other: Entries | None) -> Entries | None:
        return None if other is None else Entries(self.container, self.key.union(other.key),
                                                  self.val.union(other.val))


class GoPath:
    """A Go `[]string` path: appending within its capacity writes into the array it shares with the slice it came
    from. cel-go's coster appends to the paths of iteration variables this way, so a selection inside a macro can
    rewrite the path of the macro's range (`o.tags.all(t, o.name != '')` sizes `o.tags` as `o.name`); kube-apiserver
    estimates with that, and so does this port."""

    __slots__ = ("array", "cap", "length")

    def __init__(self, array: list[str], length: int, cap: int) -> None:
        self.array, self.length, self.cap = array, length, cap

    def items(self) -> list[str]:
        return self.array[:self.length]

    def append(self, name: str) -> GoPath:
        if self.length < self.cap:
            self.array[self.length] = name
            return GoPath(self.array, self.length + 1, self.cap)
        cap = max(1, 2 * self.cap)  # growslice doubles small slices (16-byte strings: size classes are powers of 2)
        return GoPath([*self.items(), name, *[""] * (cap - self.length - 1)], self.length + 1, cap)


NIL = GoPath([], 0, 0)


@dataclass
class _Local:
    path: GoPath
    size: Size | None
    entries: Entries | None
    type: Decl


@dataclass
class _Node:
    """AstNode: what a function estimator sees of an argument."""

    path: list[str]
    type: Decl
    expr: Expr | None
    size: Size | None


_BOOL = {"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in", "!_", "_&&_", "_||_", "@not_strictly_false",
         "matches", "contains", "startsWith", "endsWith", "isSorted", "isQuantity", "isSemver", "isURL", "isIP",
         "isCIDR", "isInteger", "isGreaterThan", "isLessThan", "bool"}
_RESULTS = {**{f: "bool" for f in _BOOL},
            **{f: "int" for f in ("size", "int", "indexOf", "lastIndexOf", "sign", "asInteger", "compareTo",
                                  "major", "minor", "patch")},
            **{f: "string" for f in ("string", "lowerAscii", "upperAscii", "trim", "substring", "replace",
                                     "charAt", "join", "format", "find", "getScheme", "getHostname", "getHost",
                                     "getPort", "getEscapedPath")},
            "double": "double", "asApproximateFloat": "double", "uint": "uint", "bytes": "bytes",
            "quantity": "quantity", "add": "quantity", "sub": "quantity", "url": "url", "semver": "semver",
            "ip": "ip", "cidr": "cidr", "masked": "cidr", "family": "int", "prefixLength": "int",
            **{f: "bool" for f in ("isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
                                   "isGlobalUnicast", "containsIP", "containsCIDR")}}
_RESULTS.update({"type": "type", "timestamp": "timestamp", "duration": "duration",
                 **{f: "int" for f in ("getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate",
                                       "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds")}})
_SETS = {"sets.contains": 1.0, "sets.intersects": 1.0, "sets.equivalent": 2.0}
_RESULTS.update(dict.fromkeys(_SETS, "bool"))
_TYPE_NAMES = ("bool", "bytes", "double", "int", "list", "map", "null_type", "string", "type", "uint")
_COMPARISONS = ("_<_", "_<=_", "_>_", "_>=_")
_ARITHMETIC = ("_+_", "_-_", "_*_", "_/_", "_%_")
_SCALARS = ("bool", "double", "duration", "int", "timestamp", "uint")
_LIBRARY_TYPES = ("quantity", "semver", "ip", "cidr")


class _Coster:
    def __init__(self, variables: Mapping[str, Decl]) -> None:
        self.variables = variables
        self.paths: dict[int, GoPath] = {}
        self.sizes: dict[int, Size] = {}
        self.entries: dict[int, Entries] = {}
        self.types: dict[int, Decl] = {}
        self.locals: dict[str, list[_Local]] = {}

    # sizes and paths ------------------------------------------------------------------------------------------

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def path(self, e: Expr) -> GoPath:
        if isinstance(e, Ident) and (found := self.local(e.name)) is not None:
            return found.path
        return self.paths.get(id(e), NIL)

    def type(self, e: Expr) -> Decl:
        return self.types.get(id(e), DYN)

    def schema_size(self, path: list[str]) -> Size | None:
        """sizeEstimator.EstimateSize: the bound of the schema node a path reaches from the rule's node."""
        if not path:
            return None
        node: Decl | None = self.variables.get("self")
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            else:
                node = node.fields.get(unescape(name)) if node.kind == "object" else None
        return None if node is None else Size(0, node.max_elements)

    def size(self, e: Expr) -> Size | None:
        if id(e) in self.sizes:
            return self.sizes[id(e)]
        if (literal := _literal_size(e)) is not None:
            return literal
        if (found := self.schema_size(self.path(e).items())) is not None:
            self.sizes[id(e)] = found
            return found
        if self.type(e).kind in _SCALARS:
            return ONE
        if isinstance(e, Ident) and (var := self.local(e.name)) is not None and var.size is not None:
            return var.size
        return None

    def size_or_unknown(self, e: Expr | _Node) -> Size:
        found = e.size if isinstance(e, _Node) else self.size(e)
        return UNKNOWN if found is None else found

    def entry(self, e: Expr) -> Entries | None:
        if id(e) in self.entries:
            return self.entries[id(e)]
        if isinstance(e, Ident) and (var := self.local(e.name)) is not None:
            return var.entries
        return None

    def set_size(self, e: Expr, size: Size | None) -> None:
        if size is not None:
            self.sizes[id(e)] = size

    def set_entry(self, e: Expr, entries: Entries | None) -> None:
        if entries is not None:
            self.entries[id(e)] = entries

    def node(self, e: Expr) -> _Node:
        path = self.path(e).items()
        if path and path[0] == ACCUMULATOR:
            path = []
        return _Node(path, self.type(e), e, self.size(e))

    def library_size(self, n: _Node) -> Size:
        """library.CostEstimator.sizeEstimate."""
        if n.size is not None:
            return n.size
        return self.schema_size(n.path) or UNKNOWN

    # costs ----------------------------------------------------------------------------------------------------

    def cost(self, e: Expr) -> Size:
        if isinstance(e, Literal):
            self.types[id(e)] = simple(e.kind)
            return ZERO
        if isinstance(e, Ident):
            return self.ident(e)
        if isinstance(e, Select):
            return self.select(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, ListExpr):
            return self.create_list(e)
        if isinstance(e, MapExpr):
            return self.create_map(e)
        if isinstance(e, Comprehension):
            return self.comprehension(e)
        raise Unsupported(type(e).__name__)

    def ident(self, e: Ident) -> Size:
        var = self.local(e.name)
        if var is not None:
            self.paths[id(e)], self.types[id(e)] = var.path, var.type
        elif e.name in self.variables:
            self.paths[id(e)], self.types[id(e)] = GoPath([e.name], 1, 1), self.variables[e.name]
        elif e.name in _TYPE_NAMES:
            self.paths[id(e)], self.types[id(e)] = GoPath([e.name], 1, 1), simple("type")
        else:
            raise Unsupported(f"identifier {e.name}")
        return ONE

    def select(self, e: Select) -> Size:
        total = self.cost(e.operand)
        operand = self.type(e.operand)
        if e.test_only:  # PresenceTestHasCost(false)
            self.types[id(e)] = simple("bool")
            return total
        if operand.kind == "object":
            total = total.add(ONE)
            field = operand.fields.get(unescape(e.field))
            if field is None:
                raise Unsupported(f"field {e.field}")
            self.types[id(e)] = field
        elif operand.kind == "map":
            total = total.add(ONE)
            self.types[id(e)] = operand.elem or DYN
        elif operand.kind == "dyn":
            self.types[id(e)] = DYN
        else:
            raise Unsupported(f"selection on {operand.kind}")
        self.paths[id(e)] = self.path(e.operand).append(e.field)
        return total

    def create_list(self, e: ListExpr) -> Size:
        total, item = ZERO, Size(0 if not e.elements else MAX, 0)
        for element in e.elements:
            total = total.add(self.cost(element))
            item = item.union(self.size_or_unknown(element))
        self.set_entry(e, Entries("list", ONE, item))
        kinds = {self.type(x).kind for x in e.elements}
        self.types[id(e)] = simple("list", self.type(e.elements[0]) if len(kinds) == 1 else DYN)
        return total.add(fixed(LIST_BASE))

    def create_map(self, e: MapExpr) -> Size:
        total = ZERO
        key = Size(0 if not e.entries else MAX, 0)
        val = key
        for k, v in e.entries:
            total = total.add(self.cost(k)).add(self.cost(v))
            key, val = key.union(self.size_or_unknown(k)), val.union(self.size_or_unknown(v))
        self.set_entry(e, Entries("map", key, val))
        kinds = {self.type(v).kind for _, v in e.entries}
        self.types[id(e)] = simple("map", self.type(e.entries[0][1]) if len(kinds) == 1 else DYN)
        return total.add(fixed(MAP_BASE))

    def comprehension(self, e: Comprehension) -> Size:
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        accu = _Local(self.path(e.accu_init), self.size(e.accu_init), self.entry(e.accu_init),
                      self.type(e.accu_init))
        self.locals.setdefault(e.accu_var, []).append(accu)
        self.push_iter(e.iter_var, e.iter_range)
        loop = self.cost(e.condition)
        step = self.cost(e.step)
        if accu.type.kind == "list" and self.type(e.step).kind == "list":
            accu.type = self.type(e.step)
        self.locals[e.iter_var].pop()
        total = total.add(self.cost(e.result))
        self.types[id(e)] = self.type(e.result)
        self.locals[e.accu_var].pop()
        count = self.size_or_unknown(e.iter_range)
        total = total.add(count.times(step.add(loop)))
        if isinstance(e.accu_init, Literal):
            self.set_size(e, self.size(e.accu_init))
        elif isinstance(e.accu_init, ListExpr | MapExpr):
            self.set_size(e, count)
            self.set_entry(e, self.entry(e.step))
        return total

    def push_iter(self, name: str, over: Expr) -> None:
        """pushIterSingle: a list's items, a map's keys."""
        entries = self.entry(over)
        container = entries.container if entries is not None else self.type(over).kind
        kind = self.type(over)
        if container == "list":
            size, sub, typed = (entries.val if entries else None), "@items", kind.elem or DYN
        elif container == "map":
            size, sub, typed = (entries.key if entries else None), "@keys", kind.key or DYN
        else:
            raise Unsupported(f"comprehension over {container}")
        self.locals.setdefault(name, []).append(_Local(self.path(over).append(sub), size, None, typed))

    def call(self, e: Call) -> Size:
        if e.function == "dyn" and e.target is None and len(e.args) == 1:
            cost = self.cost(e.args[0])
            self.set_size(e, self.size(e.args[0]))
            self.set_entry(e, self.entry(e.args[0]))
            self.types[id(e)] = DYN
            return ONE.add(cost)
        costs = [self.cost(a) for a in e.args]
        nodes = [self.node(a) for a in e.args]
        total, target = ZERO, None
        if e.target is not None:
            total = self.cost(e.target)
            target = self.node(e.target)
        overload = self.overload(e, target, nodes)
        self.types[id(e)] = self.result_type(e, target, nodes)
        fn_cost, result = self.function_cost(e, overload, target, nodes, costs)
        if overload in ("index_list", "index_map"):
            over = self.entry(e.args[0])
            result = None if over is None else over.val
            self.paths[id(e)] = self.path(e.args[0]).append("@items" if overload == "index_list" else "@values")
        if result is None:
            result = self.size(e)
        self.set_size(e, result)
        return total.add(fn_cost)

    def overload(self, e: Call, target: _Node | None, args: list[_Node]) -> str:
        """The overload whose cost rule applies; Unsupported where the checker would keep several that differ."""
        fn, kinds = e.function, [a.type.kind for a in args]
        if fn in ("_==_", "_!=_"):
            return fn
        if fn in _COMPARISONS or fn == "_+_":
            if "string" in kinds or "bytes" in kinds:
                return f"{fn}{'bytes' if 'bytes' in kinds else 'string'}"
            if fn == "_+_" and "list" in kinds:
                return "add_list"
            if kinds.count("dyn") == 2 or (fn == "_+_" and "dyn" in kinds):
                raise Unsupported(f"{fn} of dyn")
            return fn
        if fn == "@in":
            if kinds[1] not in ("list", "map"):
                raise Unsupported("in of dyn")
            return f"in_{kinds[1]}"
        if fn == "_[_]":
            if kinds[0] not in ("list", "map"):
                raise Unsupported(f"index of {kinds[0]}")
            return f"index_{kinds[0]}"
        if fn not in _RESULTS and fn not in ("@not_strictly_false", "_?_:_", "-_", "sum", "min", "max", "split",
                                             "findAll", "value", "orValue", "hasValue", "reverse", "distinct",
                                             "slice", "flatten", "lists.range", *_ARITHMETIC):
            raise Unsupported(f"function {fn}")
        if fn in ("string", "bytes", "int", "uint", "double", "bool") and "dyn" in kinds:
            raise Unsupported(f"{fn}() of dyn")  # the checker keeps every conversion, BytesToString's size among them
        if (fn, kinds) in (("string", ["bytes"]), ("bytes", ["string"])):
            return f"{fn}_conversion"
        if target is not None and fn in ("contains", "startsWith", "endsWith", "matches", "lowerAscii",
                                         "upperAscii", "trim", "substring", "replace", "split", "charAt",
                                         "format", "find", "findAll") and target.type.kind not in ("string",
                                                                                                   "dyn"):
            raise Unsupported(f"{fn} on {target.type.kind}")
        return fn

    def result_type(self, e: Call, target: _Node | None, args: list[_Node]) -> Decl:
        fn = e.function
        if fn in ("split", "findAll"):
            return simple("list", simple("string"))
        if fn in ("sum", "min", "max"):
            if target is None or target.type.elem is None:
                raise Unsupported(f"{fn} of a non-list")
            return target.type.elem
        if fn in ("reverse", "distinct", "slice") and target is not None and target.type.kind == "list":
            return target.type
        if fn == "flatten" and target is not None and target.type.elem is not None:
            return target.type.elem if target.type.elem.kind == "list" and not args else simple("list", DYN)
        if fn == "lists.range":
            return simple("list", simple("int"))
        if fn in ("value", "orValue", "hasValue"):
            if target is None or target.type.kind != "optional" or target.type.elem is None:
                raise Unsupported(f"{fn} of a non-optional")
            return simple("bool") if fn == "hasValue" else target.type.elem
        if fn in ("add", "sub") and (target is None or target.type.kind != "quantity"):
            raise Unsupported(fn)
        if fn in _RESULTS:
            return simple(_RESULTS[fn])
        if fn == "_[_]":
            return args[0].type.elem or DYN
        if fn == "_?_:_":
            return args[1].type if args[1].type.kind != "dyn" else args[2].type
        first = args[0].type
        if fn == "_+_" and first.kind == "list" and (first.elem is None or first.elem.kind == "dyn"):
            return args[1].type
        return first if first.kind != "dyn" or len(args) < 2 else args[1].type

    def function_cost(self, e: Call, overload: str, target: _Node | None, args: list[_Node],
                      costs: list[Size]) -> tuple[Size, Size | None]:
        arg_sum = ZERO
        for c in costs:
            arg_sum = arg_sum.add(c)
        extension = self.extension_cost(e.function, target, args)
        if extension is not None:
            return extension[0].add(arg_sum), extension[1]
        library = self.library_cost(e.function, target, args)
        if library is not None:
            return library[0].add(arg_sum), library[1]
        size = self.size_or_unknown
        if overload in ("string_conversion", "bytes_conversion"):
            length = size(args[0])
            result = Size(length.min // 4, length.max) if overload == "string_conversion" else \
                Size(length.min, min(length.max * 4, MAX))
            return length.factor(STRING_FACTOR).add(arg_sum), result
        if overload == "format" and target is not None:
            return size(target).factor(STRING_FACTOR).add(arg_sum), None
        if overload in ("startsWith", "endsWith") and len(args) == 1:
            return size(args[0]).factor(STRING_FACTOR).add(arg_sum), None
        if overload == "in_list":
            return size(args[1]).factor(1).add(arg_sum), None
        if overload == "matches":
            text, regex = (target, args[0]) if target is not None else (args[0], args[1])
            text_cost = size(text).add(ONE).factor(STRING_FACTOR)
            return text_cost.times(size(regex).factor(REGEX_FACTOR)).add(arg_sum), None
        if overload == "contains" and target is not None:
            return size(target).factor(STRING_FACTOR).times(size(args[0]).factor(STRING_FACTOR)).add(arg_sum), None
        if overload in ("_||_", "_&&_"):
            return Size(costs[0].min, costs[0].add(costs[1]).max), None
        if overload == "_?_:_":
            result = size(args[1]).union(size(args[2]))
            left = self.entry(e.args[1])
            self.set_entry(e, left.union(self.entry(e.args[2])) if left is not None else None)
            return costs[0].add(costs[1].union(costs[2])), result
        if overload in ("_+_string", "_+_bytes", "add_list"):
            result = size(args[0]).add(size(args[1]))
            left = self.entry(e.args[0])
            self.set_entry(e, left.union(self.entry(e.args[1])) if left is not None else None)
            if overload == "add_list":
                return ONE.add(arg_sum), result
            return result.factor(STRING_FACTOR).add(arg_sum), result
        if overload in ("_==_", "_!=_") or (overload.endswith(("string", "bytes")) and
                                             overload.startswith(_COMPARISONS)):
            smallest = min(size(args[0]).max, size(args[1]).max)
            return Size(1 if smallest > 0 else 0, smallest).factor(STRING_FACTOR).add(arg_sum), None
        return ONE.add(arg_sum), None

    def extension_cost(self, fn: str, target: _Node | None, args: list[_Node]) -> tuple[Size, Size | None] | None:
        """The estimators cel-go's sets and lists (version 3) extensions register for their overloads."""
        size = self.library_size
        if fn in _SETS and len(args) == 2:
            return size(args[0]).times(size(args[1])).factor(_SETS[fn]).add(ONE), None
        if target is None and fn == "lists.range" and len(args) == 1:
            return _allocating(1, fixed(_literal_uint(args[0], MAX)))
        if target is None or fn not in ("reverse", "distinct", "slice", "flatten"):
            return None
        if fn == "reverse" and not args:
            return _allocating(1, size(target))
        if fn == "distinct" and not args:
            return _allocating(2, size(target).times(size(target)))
        if fn == "slice" and len(args) == 2:
            start, end = _literal_uint(args[0], 0), _literal_uint(args[1], size(target).max)
            return _allocating(1, fixed((end - start) % 2**64))
        if fn == "flatten" and len(args) <= 1:
            return _allocating(_literal_uint(args[0], MAX) if args else 1, size(target))
        return None

    def library_cost(self, fn: str, target: _Node | None, args: list[_Node]) -> tuple[Size, Size | None] | None:
        """library.CostEstimator.EstimateCallCost (None: the checker's own rules apply)."""
        size = self.library_size
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes") and target is not None:
            element = self.element(target)
            if element is None:
                return size(target).factor(STRING_FACTOR), None
            each = ONE
            if element.type.kind in ("string", "bytes"):
                each = each.add(size(element).factor(STRING_FACTOR))
            return size(target).times(each), None
        if fn == "url" and len(args) == 1:
            return size(args[0]).factor(STRING_FACTOR), size(args[0])
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            return size(target).factor(STRING_FACTOR), size(target)
        if fn == "replace" and target is not None and len(args) >= 2:
            return self.replace_cost(size(target), size(args[0]), size(args[1]))
        if fn == "split" and target is not None:
            text, most = size(target), size(target).max
            if len(args) > 1 and isinstance(args[1].expr, Literal) and args[1].expr.kind == "int":
                most = int(args[1].expr.value) % 2**64  # type: ignore[call-overload]
            return text.factor(2 * STRING_FACTOR), Size(0, most)
        if fn == "join" and target is not None:
            return self.join_cost(target, args)
        if fn in ("find", "findAll") and target is not None and args:
            text = size(target).add(ONE).factor(STRING_FACTOR)
            return text.times(size(args[0]).factor(REGEX_FACTOR)), Size(0, size(target).max)
        if fn in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver") and args:
            return size(args[0]).factor(STRING_FACTOR), None
        if fn == "ip":
            if target is not None and target.type.kind == "cidr":
                return ONE, None
            if args:
                return size(args[0]).factor(STRING_FACTOR), None
        if fn in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
                  "isLinkLocalUnicast", "isGlobalUnicast", "sign", "asInteger", "isInteger", "asApproximateFloat",
                  "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch", "getScheme",
                  "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery"):
            return ONE, None
        if fn in ("containsIP", "containsCIDR") and target is not None and args:
            address = Size(4, 16)
            compared = address.add(address).factor(STRING_FACTOR)
            if fn == "containsCIDR":
                compared = compared.add(address.factor(STRING_FACTOR)).add(ONE)
            if args[0].type.kind == "string":
                compared = compared.add(size(args[0]).factor(STRING_FACTOR))
            return compared, None
        if fn == "_==_" and len(args) == 2 and args[0].type.kind == args[1].type.kind in _LIBRARY_TYPES:
            return ONE, None
        if fn == "_==_" and len(args) == 2 and args[0].type.kind == args[1].type.kind == "url":
            return Size(1, 1).factor(STRING_FACTOR) if args[1].size is None else \
                Size(1, args[1].size.max).factor(STRING_FACTOR), None
        return None

    def element(self, target: _Node) -> _Node | None:
        """listElementNode: the items of a list (no size of its own)."""
        if target.type.kind != "list" and target.type.kind != "map":
            return None
        elem = target.type.elem if target.type.kind == "list" else target.type.key
        return _Node([*target.path, "@items"] if target.path else [], elem or DYN, None, None)

    def join_cost(self, target: _Node, args: list[_Node]) -> tuple[Size, Size | None]:
        count = self.library_size(target)
        result = ZERO
        element = self.element(target)
        if element is not None:
            result = count.times(self.library_size(element))
        if args:
            separators = Size(max(count.min - 1, 0), max(count.max - 1, 0))
            result = result.add(self.library_size(args[0]).times(separators))
        return result.factor(STRING_FACTOR), result

    @staticmethod
    def replace_cost(text: Size, old: Size, new: Size) -> tuple[Size, Size | None]:
        count_max, count_min, kept_max, kept_min = 0, 0, 0, 0
        if old.min == 0:
            count_max, kept_max = (text.max + 1 if text.max < MAX else text.max), text.max
        elif new.max <= old.min:
            kept_max = text.max
        else:
            count_max = _go_ceil_div(text.max, old.min)
        if old.max == 0:
            count_min, kept_min = (text.min + 1 if text.min < MAX else text.min), text.min
        elif old.max <= new.min:
            kept_min = text.min
        else:
            count_min = _go_ceil_div(text.min, old.max)
        result = Size(count_min, count_max).times(new).add(Size(kept_min, kept_max))
        return text.factor(2 * STRING_FACTOR), result


def _allocating(factor: float, count: Size) -> tuple[Size, Size]:
    """estimateAllocatingListCall."""
    return count.factor(factor).add(ONE).add(fixed(LIST_BASE)), count


def _literal_uint(node: _Node, default: int) -> int:
    """nodeAsUintValue."""
    if isinstance(node.expr, Literal) and node.expr.kind == "int" and isinstance(node.expr.value, int):
        return max(node.expr.value, 0)
    return default


def _go_ceil_div(a: int, b: int) -> int:
    value = math.ceil(float(a) / float(b))
    return MAX if value >= 2**64 else int(value)


def _literal_size(e: Expr) -> Size | None:
    """computeExprSize."""
    if isinstance(e, Literal):
        if e.kind == "string":
            return fixed(len(str(e.value)))
        if e.kind == "bytes":
            return fixed(len(e.value))  # type: ignore[arg-type]
        return ONE
    if isinstance(e, ListExpr):
        return fixed(len(e.elements))
    if isinstance(e, MapExpr):
        return fixed(len(e.entries))
    return None


def estimate(source: str, variables: Mapping[str, Decl]) -> Size:
    """The estimated cost (min, max) of an expression whose variables have these types; raises Unsupported."""
    return _Coster(variables).cost(parse(source))
