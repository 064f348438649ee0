"""The report's Jinja2 environment reads ``view.name`` on a plain dict as its key directly (an
exception per lookup saved, millions at 10,000 transcripts) and gives what Jinja2's own lookup
gives in every case: dict methods stay methods, a missing name is still an error, other
objects and dict subclasses are looked up as before."""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace

import pytest
from jinja2 import Environment, StrictUndefined, UndefinedError

from toolreplay.report.templating import page_environment

CASES = [
    ("{{ d.role }}", {"d": {"role": "tool"}}),
    ("{{ d.items() | list | length }}", {"d": {"items": 3, "a": 1}}),  # the method, as Jinja2
    ("{{ d.get('a') }}", {"d": {"get": "key", "a": 1}}),
    ("{{ d.keys() | list | join(',') }}", {"d": {"x": 1, "y": 2}}),
    ("{{ d.x.y }}", {"d": {"x": {"y": "<b>"}}}),  # escaped
    ("{{ d.x }}", {"d": OrderedDict(x="sub")}),  # a dict subclass
    ("{{ d.x }}", {"d": SimpleNamespace(x="attr")}),
    ("{{ d.__class__.__name__ }}", {"d": {"__class__": "key"}}),
]


@pytest.mark.parametrize(("source", "context"), CASES)
def test_the_same_as_jinja2s_own_lookup(source: str, context: dict) -> None:
    plain = Environment(autoescape=True, undefined=StrictUndefined)
    ours = page_environment()
    assert ours.from_string(source).render(**context) == plain.from_string(source).render(**context)


def test_a_missing_key_is_still_an_error() -> None:
    with pytest.raises(UndefinedError):
        page_environment().from_string("{{ d.nope }}").render(d={"role": "x"})
