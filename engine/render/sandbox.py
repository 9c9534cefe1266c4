"""The sandboxed Jinja2 environment templates render in, with kplan's filters and render budget."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.environment import Template
from jinja2.loaders import FunctionLoader
from jinja2.runtime import Context, LoopContext, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import _PassArg, missing

from engine.render import gofuncs, kudoshape, plainscalars
from engine.render.cache import CompiledTemplates
from engine.render.guardedfilters import BoundFilters
from engine.render.guards import check_binop, check_format, check_method
from engine.render.includes import Cycle, include_cycle
from engine.render.limits import DEFAULT_LIMITS, Budget, Clock, LimitExceeded, Limits, measure
from engine.render.values import Values, wrap

__all__ = ["KplanEnvironment", "KplanUndefined", "borrowed_environment", "environment"]

# Jinja2 built-ins left out (`random`, a filter, is left out by `guardedfilters`): `lipsum` is a text
# generator of no use in manifests and an easy way to burn the budget.
_DROPPED_GLOBALS = frozenset({"lipsum"})
_SIZED = frozenset({list, tuple, range, str, dict})
_LOOP_FIELDS = frozenset(
    {"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth", "depth0", "previtem", "nextitem"}
)


class KplanUndefined(StrictUndefined):
    """StrictUndefined whose messages name the variable, or the `Params.x` path that lacks a key."""

    __slots__ = ()

    @property
    def _undefined_message(self) -> str:
        if not self._undefined_hint and self._undefined_obj is missing:
            return f"undefined variable {self._undefined_name!r}"
        if not self._undefined_hint and isinstance(self._undefined_obj, Values):
            what = "attribute" if isinstance(self._undefined_name, str) else "element"
            return f"{self._undefined_obj.label!r} has no {what} {self._undefined_name!r}"
        message: str = super()._undefined_message
        return message


class KplanCodeGenerator(CodeGenerator):
    """Compiles loops and `~` so that they go through the environment's budget: the iterable of
    every `{% for %}` loop is compiled as `environment.iterate(<iterable>)`.

    It also checks the plain scalars of the template's output (`plainscalars`): its constant text here, each
    `{{ }}` value as it is output (by the writer of its slot, `environment.writers[slot]`, where it stands).
    The module it writes says in `PLAIN_SCALARS_CHECKED` whether that covers all the output; it does not when the
    template yields output any other way (includes, blocks, extends, call and filter blocks, recursive loops).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loop_iterables: set[int] = set()
        self._positional: dict[str, str] = {}  # filter name -> the module's global of its positional form
        self._writers: dict[str, str] = {}  # slot -> the module's global of its writer, for the slots output uses
        self._checked = True  # whether every output is checked so far

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        super().visit_Template(node, frame)
        self.writeline(f"{CHECKED_NAME} = {self._checked!r}")
        for where, name in self._writers.items():  # only those used: each binding costs the module's compile
            self.writeline(f"{name} = environment.writers[{where!r}]")
        for filter_name, name in self._positional.items():
            self.writeline(f"{name} = environment.filters.positional_form({filter_name!r})")

    def start_write(self, frame: Frame, node: nodes.Node | None = None) -> None:
        if frame.buffer is None:
            self._checked = False  # a call block, filter block or recursive loop yields output unchecked
        super().start_write(frame, node)

    def visit_Block(self, node: nodes.Block, frame: Frame) -> None:
        self._checked = False
        super().visit_Block(node, frame)

    def visit_Extends(self, node: nodes.Extends, frame: Frame) -> None:
        self._checked = False
        super().visit_Extends(node, frame)

    def visit_Include(self, node: nodes.Include, frame: Frame) -> None:
        self._checked = False
        super().visit_Include(node, frame)

    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
        if id(node) not in self._loop_iterables:
            return super().visit(node, *args, **kwargs)
        self.write("environment.iterate(")
        super().visit(node, *args, **kwargs)
        self.write(")")
        return None

    @optimizeconst
    def visit_Filter(self, node: nodes.Filter, frame: Frame) -> None:
        """A filter given no keyword arguments is called in its positional form (`BoundFilters.positional_form`,
        bound to a global of the module); any other as Jinja2 calls it."""
        filters = self.environment.filters
        positional = filters.positional_form(node.name) if isinstance(filters, BoundFilters) else None
        if positional is None or node.node is None or node.kwargs or node.dyn_kwargs is not None:
            super().visit_Filter(node, frame)
            return
        name = self._positional.setdefault(node.name, f"{POSITIONAL_PREFIX}{len(self._positional)}")
        self.write(f"{name}(")
        pass_arg = _PassArg.from_obj(positional)
        if pass_arg is not None:
            self.write(f"{_PASSING[pass_arg]}, ")
        self.visit(node.node, frame)
        self.signature(node, frame)
        self.write(")")

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        self._loop_iterables.add(id(node.iter))
        super().visit_For(node, frame)

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        """As Jinja2 compiles output, but where it yields each piece of a run of text and `{{ }}` values, yield
        them joined, up to `_JOINED` pieces at a time (each value is within the size limit already, so a chunk
        stays within `_JOINED` times it)."""
        if frame.buffer is not None or (frame.require_output_check and self.has_known_extends):
            self._checked = self._checked and frame.buffer is not None  # buffered output is output as a value
            super().visit_Output(node, frame)
            return
        if frame.require_output_check:
            self.writeline("if parent_template is None:")
            self.indent()
        pieces = _output_pieces(self, node, frame)
        constants = [piece if isinstance(piece, str) else None for piece in pieces]
        self._checked = self._checked and plainscalars.constants_alike(constants)
        for at in range(0, len(pieces), _JOINED):
            group = pieces[at:at + _JOINED]
            joined = len(group) > 1
            if joined:
                self.writeline("yield ''.join((")
                self.indent()
            for offset, piece in enumerate(group):  # each on its own line, which maps back to its template line
                if isinstance(piece, str):
                    self.writeline(("" if joined else "yield ") + repr(piece))
                else:
                    self.writeline("" if joined else "yield ", piece)
                    self._output_write_pre(piece, pieces, at + offset, frame)
                    self.visit(piece, frame)
                    self._output_write_post(piece, frame)
                if joined:
                    self.write(",")
            if joined:
                self.outdent()
                self.writeline("))")
        if frame.require_output_check:
            self.outdent()

    def _output_write_pre(self, node: nodes.Expr, pieces: list[str | nodes.Expr], at: int, frame: Frame) -> None:
        """Where autoescape is off, a `{{ }}` value goes through the writer of its slot (`KplanEnvironment.writers`,
        bound to a global of the module); else as Jinja2 outputs it, its scalars unchecked."""
        if frame.eval_ctx.volatile or frame.eval_ctx.autoescape:
            self._checked = False
            super()._output_child_pre(node, frame, self._make_finalize())
            return
        before, after = pieces[at - 1] if at > 0 else None, pieces[at + 1] if at + 1 < len(pieces) else None
        where = plainscalars.slot(before if isinstance(before, str) else None,
                                  after if isinstance(after, str) else None)
        self.write(f"{self._writers.setdefault(where, WRITERS[where])}(")

    def _output_write_post(self, node: nodes.Expr, frame: Frame) -> None:
        if frame.eval_ctx.volatile or frame.eval_ctx.autoescape:
            super()._output_child_post(node, frame, self._make_finalize())
        else:
            self.write(")")

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if frame.eval_ctx.volatile or frame.eval_ctx.autoescape:
            super()._output_child_pre(node, frame, finalize)
        else:  # `str(environment.finalize(...))` in one call (`KplanEnvironment.finalize_text`)
            self.write("environment.finalize_text(")

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if frame.eval_ctx.volatile or frame.eval_ctx.autoescape:
            super()._output_child_post(node, frame, finalize)
        else:
            self.write(")")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_values((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


_JOINED = 8  # pieces of output joined into one chunk
CHECKED_NAME = "PLAIN_SCALARS_CHECKED"  # the compiled module's global: whether its output's scalars are checked
POSITIONAL_PREFIX = "kplan_filter_"  # the compiled module's globals bound to filters' positional forms
_PASSING = {_PassArg.context: "context", _PassArg.eval_context: "context.eval_ctx", _PassArg.environment: "environment"}
# the compiled module's globals bound to the environment's writers, by slot
WRITERS = {where: f"kplan_write_{index}" for index, where in enumerate(plainscalars.SLOTS)}


def _output_pieces(generator: CodeGenerator, node: nodes.Output, frame: Frame) -> list[str | nodes.Expr]:
    """The pieces of an output node as Jinja2 compiles them: runs of constant text (folded at compile time, as
    its `visit_Output` folds them) and the expressions to evaluate."""
    finalize = generator._make_finalize()
    pieces: list[str | nodes.Expr] = []
    for child in node.nodes:
        try:
            if not (finalize.const or isinstance(child, nodes.TemplateData)):
                raise nodes.Impossible()
            const = str(generator._output_child_to_const(child, frame, finalize))
        except (nodes.Impossible, Exception):
            pieces.append(child)
            continue
        if pieces and isinstance(pieces[-1], str):
            pieces[-1] += const
        else:
            pieces.append(const)
    return pieces


class KplanEnvironment(ImmutableSandboxedEnvironment):
    """An immutable sandbox with StrictUndefined, kplan's filters and a render budget.

    Templates are served only from `templates` (the package's own), so `include`, `import`
    and `extends` cannot reach files; `cache` keeps their compiled code between renders.
    See `engine.render.limits` for how the budget works; `budget.restart()` starts the
    budget of a new render.
    """

    code_generator_class = KplanCodeGenerator
    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(
        self,
        limits: Limits = DEFAULT_LIMITS,
        clock: Clock = time.monotonic,
        templates: Mapping[str, str] | None = None,
        cache: CompiledTemplates | None = None,
    ) -> None:
        self.budget = Budget(limits, clock)
        sources = dict(templates or {})
        self.sources: Mapping[str, str] = sources
        self._cycles: dict[str, Cycle | None] = {}
        super().__init__(
            undefined=KplanUndefined,
            autoescape=False,
            keep_trailing_newline=True,
            finalize=self.finalize_output,
            loader=FunctionLoader(lambda name: _source(sources, name)),
            auto_reload=False,
            bytecode_cache=cache,
        )
        # `str(finalize_output(value))`, for a `{{ }}` value where autoescape is off
        self.finalize_text: Callable[[Any], str] = self.budget.output_text
        # a `{{ }}` value as text, charged, measured and its plain scalars checked, by where it stands
        # (`plainscalars.slot`); the compiled module binds each to a global of its own (`WRITERS`)
        self.writers = {where: self._writer(where) for where in plainscalars.SLOTS}
        self.scalars_unsure = False  # whether a value output since `start_output` was not found alike
        self.filters = BoundFilters(self.budget, self)  # with each one's positional form (`visit_Filter`)
        for name in _DROPPED_GLOBALS:
            self.globals.pop(name, None)
        self.globals["range"] = _capped_range(self.budget)
        self.globals.update(_SHARED_GLOBALS)

    def start_output(self) -> None:
        """Begin a render's checks of the scalars of its output."""
        self.scalars_unsure = False

    def scalars_checked(self, template: Template) -> bool:
        """Whether every plain scalar of `template`'s output since `start_output` was found to read alike in
        yaml-rs and PyYAML (`plainscalars`)."""
        return not self.scalars_unsure and template.root_render_func.__globals__.get(CHECKED_NAME) is True

    def _writer(self, where: str) -> Callable[[Any], str]:
        """`finalize_text` and the check of the plain scalars of its text, standing at `where`, in one call (the
        common case, a string, counted inline as `Budget.output_text` counts it)."""
        budget, seen, output_text = self.budget, _ALIKE_TEXTS[where], self.budget.output_text
        keep, limit = seen.add, self.budget.limits.max_output

        def write(value: Any) -> str:
            text: str = value
            if type(value) is str:
                budget.operations += 1
                if budget.operations >= budget.next_look:
                    budget.look()
                if len(text) > limit:
                    budget.check_text(len(text))
            else:
                text = output_text(value)
            if text not in seen:
                if plainscalars.slot_alike(text, where):
                    if len(seen) >= _ALIKE_TEXTS_SIZE:
                        seen.clear()
                    keep(text)
                else:
                    self.scalars_unsure = True
            return text

        return write

    def include_cycle(self, name: str) -> Cycle | None:
        """A cycle of includes (imports, extends) that rendering the template `name` would run into."""
        if name not in self._cycles:
            self._cycles[name] = include_cycle(self.sources, name)
        return self._cycles[name]

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.budget.charge()
        if isinstance(obj, LoopContext) and args:  # `loop(children)` in a recursive for loop
            args = (self.iterate(args[0]), *args[1:])
        args = check_method(self.budget, obj, args, kwargs)
        return self.budget.check_result(super().call(context, obj, *args, **kwargs))

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        self.budget.charge()
        check_binop(self.budget, operator, left, right)
        return self.budget.check_result(super().call_binop(context, operator, left, right))

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is Values and attribute in obj:  # Values has no subclasses (and an ABC's isinstance costs a call)
            return obj[attribute]
        if type(obj) is LoopContext and attribute in _LOOP_FIELDS:
            return getattr(obj, attribute)  # plain data, which the sandbox's checks would let through
        return super().getattr(obj, attribute)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        check_format(self.budget, value.__self__)

        def checked(*args: Any, **kwargs: Any) -> str:
            measure([*args, *kwargs.values()], self.budget)
            return wrapper(*args, **kwargs)

        return checked

    def iterate(self, iterable: Iterable[Any]) -> Iterable[Any]:
        """The items of a loop, charging one operation each: all at once for a list, tuple, range, string or
        dict (their length is known), else one by one as they come."""
        if type(iterable) in _SIZED:
            self.budget.charge(len(iterable))  # type: ignore[arg-type]
            return iterable
        return self._charged(iterable)

    def _charged(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            self.budget.charge()
            yield item

    def join_values(self, values: tuple[Any, ...]) -> str:
        """The `~` operator: the values as text, joined, within the size limit."""
        self.budget.charge()
        self.budget.check_text(sum(len(v) if isinstance(v, str) else measure(v, self.budget) for v in values))
        return "".join(str(v) for v in values)

    def finalize_output(self, value: Any) -> Any:
        """Every `{{ }}` value passes here before it becomes text."""
        if isinstance(value, str):
            self.budget.charge_text(len(value))
        else:
            self.budget.charge()
            measure(value, self.budget)
        return value

    def concat(self, parts: Iterable[str]) -> str:
        """Join template output (blocks, macros, `{% set %}` blocks) within the size limit."""
        chunks, size = [], 0
        for part in parts:
            size += len(part)
            self.budget.check_text(size, "template output")
            chunks.append(part)
        return "".join(chunks)


def environment(
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock = time.monotonic,
    templates: Mapping[str, str] | None = None,
    cache: CompiledTemplates | None = None,
) -> KplanEnvironment:
    """A fresh environment serving `templates` (one per render: it holds the render's budget)."""
    return KplanEnvironment(limits, clock, templates, cache)


@contextmanager
def borrowed_environment(
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock = time.monotonic,
    templates: Mapping[str, str] | None = None,
    cache: CompiledTemplates | None = None,
) -> Iterator[KplanEnvironment]:
    """An environment serving `templates` for this caller alone: with `cache`, one of its idle environments
    that serves the same templates under the same limits and clock (with the templates it loaded before),
    given back afterwards; without, a fresh one. Each render restarts its budget."""
    if cache is None:
        yield environment(limits, clock, templates)
        return
    key = (limits, clock, tuple((templates or {}).items()))
    found = cache.take_environment(key)
    env = found if isinstance(found, KplanEnvironment) else environment(limits, clock, templates, cache)
    try:
        yield env
    finally:
        cache.keep_environment(key, env)


def _source(sources: Mapping[str, str], name: str) -> tuple[str, str, Callable[[], bool]] | None:
    source = sources.get(name)
    return None if source is None else (source, name, lambda: True)


def _capped_range(budget: Budget) -> Callable[..., range]:
    def capped_range(*args: int) -> range:
        numbers = range(*args)
        try:
            size = len(numbers)
        except OverflowError:
            size = budget.limits.max_range + 1
        if size > budget.limits.max_range:
            raise LimitExceeded(f"range() of {size} items exceeds the limit of {budget.limits.max_range}")
        return numbers

    return capped_range


# Output texts found alike, by their bounds, so a text that comes back render after render is checked once (shared:
# a text is added only once checked, and a lost race only checks it again).
_ALIKE_TEXTS: dict[str, set[str]] = {where: set() for where in plainscalars.SLOTS}
_ALIKE_TEXTS_SIZE = 16384

# Built once: every environment serves the same read-only globals.
_SHARED_GLOBALS: Mapping[str, Any] = {
    # Go's and sprig's functions, and KUDO's object shaping, for packages converted from KUDO
    "go": wrap("go", gofuncs.FUNCTIONS),
    "kudo": wrap("kudo", kudoshape.FUNCTIONS),
}
