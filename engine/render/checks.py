"""Static checks of template source for package verification: syntax and the parameters it uses."""

from __future__ import annotations

from jinja2 import nodes

from engine.errors import RenderError
from engine.render.cache import CompiledTemplates
from engine.render.failures import as_render_error
from engine.render.sandbox import environment

__all__ = ["check_template", "referenced_params"]

_MAPPING_METHODS = frozenset({"items", "keys", "values"})


def check_template(file: str, source: str, *, name: str | None = None,
                   cache: CompiledTemplates | None = None) -> RenderError | None:
    """The syntax error of `source` (also unknown filters and tests), or None when it compiles.

    With `cache` and `name` (the template's name in its package, as renders load it), the code compiled for the
    check is kept in `cache` for the renders of the template, which then do not compile it again (and a source
    found there compiles); a template that does not compile is compiled again as `file`, for the error as before.
    """
    if cache is not None and name is not None and compiled(name, source, cache):
        return None
    try:
        environment().compile(source, name=file, filename=file)
    except Exception as exc:
        return as_render_error(exc, file)
    return None


def compiled(name: str, source: str, cache: CompiledTemplates) -> bool:
    """Whether `source` compiles as the template `name`; its code is then in `cache`, as a render's loader keeps it
    (the loader compiles `source` as `name`, its file named `name` too)."""
    env = environment(cache=cache)
    bucket = cache.get_bucket(env, name, name, source)
    if bucket.code is not None:
        return True
    try:
        bucket.code = env.compile(source, name, name)
    except Exception:
        return False
    cache.set_bucket(bucket)
    return True


def referenced_params(source: str) -> set[str]:
    """Names used as `Params.x`, `Params["x"]` or `Params.get("x")` (empty when `source` does not parse). A source
    without the name `Params` uses none (it is not parsed: each template of a package is checked when it loads)."""
    if "Params" not in source:
        return set()
    try:
        tree = environment().parse(source)
    except Exception:
        return set()
    called = {id(node.node) for node in tree.find_all(nodes.Call)}
    names: set[str] = set()
    for node in tree.find_all(nodes.Getattr):
        if not _is_params(node.node):
            continue
        if id(node) not in called or (node.attr not in _MAPPING_METHODS and node.attr != "get"):
            names.add(node.attr)
    for call in tree.find_all(nodes.Call):
        target = call.node
        if isinstance(target, nodes.Getattr) and _is_params(target.node) and target.attr == "get":
            names.update(_const_str(arg) for arg in call.args[:1] if _const_str(arg))
    for item in tree.find_all(nodes.Getitem):
        if _is_params(item.node) and _const_str(item.arg):
            names.add(_const_str(item.arg))
    return names


def _is_params(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Name) and node.name == "Params"


def _const_str(node: nodes.Node) -> str:
    return node.value if isinstance(node, nodes.Const) and isinstance(node.value, str) else ""
