"""Turn whatever a render raised into a RenderError naming the template file and line."""

from __future__ import annotations

from types import TracebackType

from jinja2.exceptions import (
    SecurityError,
    TemplateNotFound,
    TemplatesNotFound,
    TemplateSyntaxError,
    UndefinedError,
)

from engine.errors import RenderError
from engine.render.filters import RequiredValueMissing
from engine.render.gofmt import GoError
from engine.render.limits import LimitExceeded

__all__ = ["as_render_error"]


def as_render_error(exc: BaseException, file: str) -> RenderError:
    """The RenderError for `exc`, raised while rendering `file` (or a template it includes)."""
    if isinstance(exc, RenderError):
        return exc
    if isinstance(exc, TemplateSyntaxError):
        return RenderError(exc.name or file, exc.lineno, f"syntax error: {_sentence(exc.message or exc)}")
    where, line = _innermost_template_frame(exc.__traceback__, file)
    return RenderError(where, line, _reason(exc))


def _innermost_template_frame(tb: TracebackType | None, file: str) -> tuple[str, int | None]:
    """Jinja2 rewrites the frames of template code to point at the template file and line."""
    where, line = file, None
    while tb is not None:
        if "__jinja_exception__" in tb.tb_frame.f_globals:
            where, line = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    return where, line


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SecurityError):
        return f"not allowed in a template: {_sentence(exc)}"
    if isinstance(exc, LimitExceeded):
        return f"render budget exceeded: {exc}"
    if isinstance(exc, TemplatesNotFound):
        return f"none of the templates {list(exc.templates)!r} is in the package"
    if isinstance(exc, TemplateNotFound):
        return f"template {exc.name!r} is not in the package"
    if isinstance(exc, UndefinedError | RequiredValueMissing | GoError):
        return _sentence(exc)
    if isinstance(exc, RecursionError):
        return "recursion is too deep"
    if isinstance(exc, MemoryError):
        return "out of memory"
    return f"{type(exc).__name__}: {_sentence(exc)}"


def _sentence(exc: BaseException | str) -> str:
    return str(exc).strip().rstrip(".") or type(exc).__name__
