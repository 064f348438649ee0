"""The Jinja2 environment the report's pages are rendered with: autoescaping, strict
undefined names, the ``block`` and ``inline`` text filters (:mod:`toolreplay.report.text`),
and attribute access on the views' plain dicts that reads the key first."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from toolreplay.report.text import block_html, inline_html

#: The attributes a plain dict has: ``d.items`` in a template is the method, as Jinja2 says.
_DICT_ATTRIBUTES = frozenset(dir({}))


class _PageEnvironment(Environment):
    """Jinja2's environment, reading ``view.name`` on a plain dict as its key without first
    failing to find an attribute (an exception per lookup: millions at 10,000 transcripts).
    The same value as Jinja2's own lookup: a plain dict has no attribute but ``dict``'s, so
    for any other name Jinja2 would come to the key too."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


@cache
def page_environment() -> Environment:
    """The environment (one per process), loading the templates of ``toolreplay.report``."""
    env = _PageEnvironment(
        loader=PackageLoader("toolreplay.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["block"] = block_html
    env.filters["inline"] = inline_html
    return env
