"""The YAML tags of Python objects that cassettes hold and the safe loader reads anyway, as
the plain values they wrap, constructing nothing: multidict's case-insensitive ``istr``
(aiohttp's header names), which PyYAML's unsafe dumper wrote as
``? !!python/object/apply:multidict._multidict.istr [Accept]`` in cassettes vcrpy recorded
from aiohttp before it stored header names as ``str`` (``…/new:…`` from newer multidict,
``multidict._multidict_py`` from its pure-Python build). vcrpy loads those only because its
loader is unsafe. Every other ``python/…`` tag stays refused by the safe loader
(:func:`toolreplay.inputs.checked_loader` adds these constructors to its own table)."""

from __future__ import annotations

from typing import Any

import yaml

#: The tags read as the string they wrap (:func:`construct_istr`).
ISTR_TAGS = frozenset(
    f"tag:yaml.org,2002:python/object/{how}:{module}.istr"
    for how in ("apply", "new")
    for module in ("multidict._multidict", "multidict._multidict_py", "multidict")
)


def construct_istr(loader: Any, node: yaml.Node) -> str:
    """A node of an :data:`ISTR_TAGS` tag read as the plain string it wraps: the one string
    of its argument list (``[Accept]``, or ``{args: [Accept]}``);
    ``yaml.constructor.ConstructorError`` for any other shape."""
    args: Any = node
    if isinstance(node, yaml.MappingNode) and len(node.value) == 1:
        key, args = node.value[0]
        if not (isinstance(key, yaml.ScalarNode) and key.value == "args"):
            args = None
    if (
        isinstance(args, yaml.SequenceNode)
        and len(args.value) == 1
        and isinstance(args.value[0], yaml.ScalarNode)
    ):
        return str(args.value[0].value)
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"expected the tag {node.tag!r} on a list of one string (multidict's istr)",
        node.start_mark,
    )


__all__ = ["ISTR_TAGS", "construct_istr"]
