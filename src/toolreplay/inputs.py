"""Reading input files without trusting them: one checked reader for every file toolreplay reads.

An input file (eval file, cassette, manifest, shard file, results file, phrasing corpus,
publication journal) is read by :func:`read_checked`, which

1. reads at most ``limit`` bytes, and only from a regular file (a FIFO or a device would block
   or never end), refusing a larger file unread (:func:`read_input_bytes`);
2. decodes UTF-8, naming line, column and byte of the first byte that is not
   (:func:`decode_input`);
3. parses it as asked: ``"text"`` (no parsing), ``"json"`` (nesting bounded by ``depth``
   levels, when given; a key given twice in one object refused, ``PATH:LINE: duplicate key``:
   :func:`toolreplay.strict_json.load_json`) or ``"yaml"`` (the safe loader, libyaml's when
   available, checking as it loads, in one pass (:class:`OnePassChecks`): nesting bounded
   while composing, a key given twice in a mapping refused (:class:`DuplicateKeyError`),
   anchors and aliases refused unless ``aliases=True`` (:class:`AliasError`); of the
   ``python/…`` tags only multidict's ``istr`` is read, as a plain string:
   :mod:`toolreplay.yaml_tags`).

Every refusal is one :class:`InputFileError` whose message is one line starting with the path
(a YAML or JSON error's own text follows ``not valid YAML:`` / ``not valid JSON:``); callers
turn it into their own error class (``EvalFileError``, ``CassetteError``, ``ResultsError``...),
most of them with the message as it is, and a missing file (:attr:`InputFileError.missing`)
with their own hint. :func:`parse_checked` does steps 2 and 3 on bytes already read (a
cassette is hashed before it is parsed); :func:`load_yaml` parses YAML text given by a caller.
"""

from __future__ import annotations

import errno
import gc
import inspect
import os
import stat
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml

from toolreplay.strict_json import DuplicateJsonKeyError, json_error_message, load_json
from toolreplay.yaml_tags import ISTR_TAGS, construct_istr

#: What :func:`read_checked` makes of a file's text.
Parse = Literal["text", "json", "yaml"]

YAML_DEPTH_LIMIT = 200
"""How deep collections in a YAML input (eval file, cassette) may nest."""

#: The safe loader, libyaml's when available (~10x faster than PyYAML's own).
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class InputFileError(ValueError):
    """An input file cannot be read: missing (``missing`` is True), a folder, not a regular
    file, not readable, too large, not UTF-8, or (from :func:`read_checked` /
    :func:`parse_checked`) not valid JSON or YAML, nested too deeply, or a YAML file using
    aliases. The message starts with the path and says where and what is wrong (for bad
    UTF-8: line, column and byte offset)."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words (``"a device"``, ``"a FIFO"``,
    ``"a socket"``, ``"a folder"``, else ``"not a regular file"``), for messages."""
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _place(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column} (byte {offset})"


def read_input_bytes(path: Path, what: str, limit: int) -> bytes:
    """The bytes of input file ``path`` (at most ``limit`` bytes); :class:`InputFileError`
    naming it as ``what`` (e.g. ``"eval file"``) when it is missing, a folder, not a regular
    file, unreadable or larger than ``limit``."""
    path = Path(path)
    try:
        # A FIFO or a device would block or never end: only regular files (or links to one)
        # are opened. O_NONBLOCK: a FIFO swapped in after the check does not block the open.
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
            kind = file_kind(info.st_mode)
            raise InputFileError(f"{path}: is {kind}; the {what} must be a regular file")
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InputFileError(f"{path}: the {what} must be a regular file")
            # Read at the file's size, not into a buffer of the limit (a cassette is read per
            # episode); a file that grew meanwhile is read on, up to the limit.
            data = f.read(min(info.st_size, limit) + 1)
            if info.st_size + 1 == len(data) <= limit:
                data += f.read(limit + 1 - len(data))
    except FileNotFoundError:
        raise InputFileError(f"{path}: {what} not found", missing=True) from None
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a folder; expected the {what} itself") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputFileError(
            f"{path}: {what} larger than {limit:,} bytes; refusing to read it (not one of ours?)"
        )
    return data


def decode_input(path: Path, data: bytes, what: str) -> str:
    """``data`` (read from ``path``) as UTF-8 text; :class:`InputFileError` giving line,
    column and byte of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"{path}: {what} is not UTF-8 text: byte 0x{data[exc.start]:02x} at "
            f"{_place(data, exc.start)}"
        ) from None


class AliasError(yaml.YAMLError):
    """A YAML document uses an anchor and alias where they are refused (cassettes: a few lines
    of aliases can expand to gigabytes when a body is turned back into JSON)."""


class DuplicateKeyError(yaml.YAMLError):
    """A YAML mapping holds the same key twice (the second would silently win, hiding the first
    from whoever reads the file). One line: the key, where it is repeated and where it was first
    given."""


def _nest_error(limit: int) -> yaml.YAMLError:
    return yaml.YAMLError(f"collections nest deeper than {limit} levels")


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML syntax error in one line, placed by line and column of the file (not PyYAML's
    ``in "<unicode string>"``): ``line 14, column 11: did not find expected ',' or ']' (while
    parsing a flow sequence at line 13, column 10)``; any other error's own words."""
    mark = getattr(exc, "problem_mark", None)
    if not isinstance(exc, yaml.MarkedYAMLError) or mark is None or not exc.problem:
        return str(exc)
    context, at = exc.context, exc.context_mark
    within = f" ({context} at {_where(at)})" if context and at is not None else ""
    return f"{_where(mark)}: {exc.problem}{within}"


def _refuse_shared_nodes(root: yaml.Node) -> None:
    """Walk the composed node graph; an alias makes a node reachable twice (or a cycle), so
    the first node seen again is refused (:class:`AliasError` naming where it is anchored).
    Walked only once the loader has counted more meetings than nodes (a document without
    aliases is never walked twice)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            mark = node.start_mark
            raise AliasError(
                f"YAML alias to the node anchored at line {mark.line + 1}, column "
                f"{mark.column + 1}: cassettes may not use anchors or aliases"
            )
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((value, key))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))


_STR, _SEQ, _MAP = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "seq", "map"))
#: Mapping keys that change how a mapping is built (``<<`` merges, ``=``): left to PyYAML.
_SPECIAL_KEYS = {"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"}


#: The base of the mixin below (its methods call the loader's own).
_Loader: Any = object


class OnePassChecks(_Loader):
    """Mixed into a PyYAML safe loader (:func:`checked_loader`): the checks made in the pass
    that loads (no parse of its own for them, no walk over the composed nodes):

    - nesting is bounded while the parser composes: the composer announces every node it
      enters (``descend_resolver``, before composing the node's children, so a deep document
      stops at level ``YAML_DEPTH_LIMIT + 2`` and never recurses further) and asks for the
      tag of every untagged collection (``resolve``), where a collection at level
      ``YAML_DEPTH_LIMIT + 1`` is refused: "collections nest deeper than 200 levels";
    - the nodes are then made into values by one recursive pass (at most ``YAML_DEPTH_LIMIT``
      deep) that counts the nodes it meets: an alias makes no node of its own, so meeting more
      nodes than the composer made means an alias, refused (unless ``aliases``) before it is
      expanded further (:class:`AliasError`, naming where the node is anchored); a key given
      twice in one mapping is refused (:class:`DuplicateKeyError`). Strings, sequences and
      mappings are made here; every other tag by PyYAML's safe constructor (the same values:
      ints, floats, booleans, null, ``!!binary``, timestamps; sets, ordered maps, ``<<``
      merges; its errors for the rest);
    - the tags of plain scalars are PyYAML's (its implicit resolvers, looked up by first
      character as PyYAML does), without building a list per scalar."""

    aliases = False
    _depth = 0  # how deep the composer is now (the root is level 1)
    _nodes = 0  # how many nodes the composer made (an alias makes none)
    _resolvers: ClassVar[dict[str, tuple[tuple[str, Any], ...]]] = {}
    _wildcard: ClassVar[tuple[tuple[str, Any], ...]] = ()
    _scalars: ClassVar[dict[str, Any]] = {}
    _plain_tags: ClassVar[dict[str, str]] = {}  # plain scalar → tag, short scalars seen before

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table = cls.yaml_implicit_resolvers
        cls._wildcard = tuple(table.get(None, ()))
        cls._resolvers = {k: tuple(v) + cls._wildcard for k, v in table.items() if k is not None}
        cls._plain_tags = {}
        # the tags PyYAML makes from a scalar by a plain function (not a generator)
        cls._scalars = {
            tag: make
            for tag, make in cls.yaml_constructors.items()
            if tag is not None and tag != _STR and not inspect.isgeneratorfunction(make)
        }

    def descend_resolver(self, parent: Any, index: Any) -> None:
        self._nodes += 1
        self._depth += 1
        if self._depth > YAML_DEPTH_LIMIT + 1:  # the parent, a collection, is level 201
            raise _nest_error(YAML_DEPTH_LIMIT)

    def ascend_resolver(self) -> None:
        self._depth -= 1

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR
            tag: str | None = self._plain_tags.get(value)
            if tag is None:
                tag = _STR
                for candidate, regexp in self._resolvers.get(value[:1], self._wildcard):
                    if regexp.match(value):
                        tag = candidate
                        break
                if len(value) <= 64 and len(self._plain_tags) < 8192:
                    self._plain_tags[value] = tag  # keys and words recur in every cassette
            return tag
        if self._depth > YAML_DEPTH_LIMIT:
            raise _nest_error(YAML_DEPTH_LIMIT)
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def construct_document(self, node: Any) -> Any:
        self._root = node
        self._visits = 1
        self._made: dict[int, Any] = {}
        try:
            return self._value(node)
        finally:
            self._made = {}
            self.constructed_objects: dict[Any, Any] = {}
            self.recursive_objects: dict[Any, Any] = {}

    def _count(self, more: int) -> None:
        """``more`` nodes met; more meetings than nodes composed means one node was met twice:
        an alias, refused (unless ``aliases``) before it is expanded any further."""
        self._visits += more
        if self._visits > self._nodes and not self.aliases:
            _refuse_shared_nodes(self._root)
            raise AliasError("YAML alias: cassettes may not use anchors or aliases")

    def _value(self, node: Any) -> Any:
        kind, tag = type(node), node.tag
        if kind is yaml.ScalarNode:
            if tag == _STR:
                return node.value
            make = self._scalars.get(tag)
            return make(self, node) if make is not None else self._by_pyyaml(node)
        if self.aliases and id(node) in self._made:
            return self._made[id(node)]
        if kind is yaml.SequenceNode and tag == _SEQ:
            self._count(len(node.value))
            items: list[Any] = []
            if self.aliases:  # an alias to it is this very list (PyYAML's values, cycles too)
                self._made[id(node)] = items
            for item in node.value:
                is_str = type(item) is yaml.ScalarNode and item.tag == _STR
                items.append(item.value if is_str else self._value(item))
            return items
        if kind is not yaml.MappingNode or tag != _MAP:
            return self._by_pyyaml(node)
        start = self._visits
        self._count(2 * len(node.value))
        mapping: dict[Any, Any] = {}
        if self.aliases:
            self._made[id(node)] = mapping
        for key_node, value_node in node.value:
            if type(key_node) is yaml.ScalarNode and key_node.tag == _STR:
                key = key_node.value
            elif key_node.tag in _SPECIAL_KEYS:  # a merge: PyYAML builds the whole mapping
                self._visits = start
                return self._by_pyyaml(node)
            else:
                key = self._value(key_node)
            try:
                repeated = key in mapping
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                ) from None
            if repeated:
                self._duplicate(node, key_node, key)
            is_str = type(value_node) is yaml.ScalarNode and value_node.tag == _STR
            mapping[key] = value_node.value if is_str else self._value(value_node)
        return mapping

    def _duplicate(self, node: Any, key_node: Any, name: Any) -> None:
        first = next(k for k, _ in node.value if k is key_node or self._scalar(k) == name)
        raise DuplicateKeyError(
            f"duplicate key {name!r} at {_where(key_node.start_mark)} (first at "
            f"{_where(first.start_mark)}): a mapping's keys must differ"
        )

    def _scalar(self, node: Any) -> Any:
        """The value of scalar ``node`` made again (to name the first of two equal keys); a
        key made by PyYAML (an ``istr``) as it was made."""
        if id(node) in self._made:
            return self._made[id(node)]
        if not isinstance(node, yaml.ScalarNode) or node.tag not in self._scalars:
            return node.value if isinstance(node, yaml.ScalarNode) else None
        return self._scalars[node.tag](self, node)

    def _by_pyyaml(self, node: Any) -> Any:
        """``node`` made by PyYAML's safe constructor; when aliases are refused, the nodes
        under it are counted first, so an alias into or out of it is still refused."""
        stack = [] if self.aliases else [node]
        while stack:
            item = stack.pop()
            if isinstance(item, yaml.MappingNode):
                self._count(2 * len(item.value))
                for key_node, value_node in item.value:
                    stack.extend((value_node, key_node))
            elif isinstance(item, yaml.SequenceNode):
                self._count(len(item.value))
                stack.extend(item.value)
        value = self.construct_object(node, deep=True)
        self._made[id(node)] = value
        return value


_CHECKED_LOADERS: dict[tuple[type, bool], type] = {}


def checked_loader(base: type = SAFE_LOADER, *, aliases: bool = False) -> type:
    """The PyYAML safe loader ``base`` (libyaml's ``CSafeLoader`` by default, or the pure
    Python ``SafeLoader``) with :class:`OnePassChecks`: nesting bounded, duplicate keys
    refused and, unless ``aliases``, anchors and aliases refused, all in the one pass that
    loads. Of the ``python/…`` tags it reads only multidict's ``istr``, as a plain string
    (:mod:`toolreplay.yaml_tags`); the others stay refused, as the safe loader refuses them.
    The class is made once per ``(base, aliases)``."""
    if (base, aliases) not in _CHECKED_LOADERS:
        name = f"Checked{base.__name__}{'' if aliases else 'NoAlias'}"
        own: dict[str, Any] = getattr(base, "yaml_constructors", {})
        constructors = {**own, **dict.fromkeys(ISTR_TAGS, construct_istr)}
        _CHECKED_LOADERS[base, aliases] = type(
            name, (OnePassChecks, base), {"aliases": aliases, "yaml_constructors": constructors}
        )
    return _CHECKED_LOADERS[base, aliases]


def load_yaml(text: str, *, aliases: bool = False) -> Any:
    """Parse one YAML document ``text`` with the safe loader (libyaml's when available), in
    one pass that bounds nesting (``YAML_DEPTH_LIMIT`` levels of collections), refuses a key
    given twice in a mapping (:class:`DuplicateKeyError`) and, unless ``aliases``, anchors
    and aliases (:class:`AliasError`): see :class:`OnePassChecks`. Raises
    ``yaml.YAMLError`` (the parser's own message for a syntax error)."""
    # Nothing loaded is garbage until the load ends (the nodes are all reachable), yet the
    # collector would scan the young objects every 700 allocations: paused, a 2 MB cassette
    # loads about 3x faster. Re-enabled by whoever paused it (a program that turned the
    # collector off keeps it off).
    paused = gc.isenabled()
    gc.disable()
    try:
        return yaml.load(text, Loader=checked_loader(SAFE_LOADER, aliases=aliases))
    finally:
        if paused:
            gc.enable()


def json_depth(value: Any) -> int:
    """How deeply ``value`` (parsed JSON) nests: 0 for a scalar, 1 for a flat list..."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def parse_checked(
    path: Path,
    data: bytes,
    *,
    what: str,
    parse: Parse = "text",
    aliases: bool = False,
    depth: int | None = None,
) -> Any:
    """``data`` (the bytes of input file ``path``, a ``what``) decoded and parsed as
    :func:`read_checked` does; :class:`InputFileError` naming ``path`` otherwise."""
    text = decode_input(path, data, what)
    if parse == "yaml":
        try:
            return load_yaml(text, aliases=aliases)
        except yaml.YAMLError as exc:
            raise InputFileError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None
    if parse == "json":
        try:
            value = load_json(text)
        except RecursionError:
            if depth is None:
                raise InputFileError(f"{path}: nested beyond reason; not a {what}") from None
            raise InputFileError(f"{path}: {what} nests deeper than {depth} levels") from None
        except ValueError as exc:  # a repeated key as PATH:LINE: duplicate key ...
            raise InputFileError(json_error_message(path, exc)) from None
        if depth is not None and json_depth(value) > depth:
            raise InputFileError(f"{path}: {what} nests deeper than {depth} levels")
        return value
    return text


def read_checked(
    path: Path,
    *,
    what: str,
    limit: int,
    parse: Parse = "text",
    aliases: bool = False,
    depth: int | None = None,
) -> Any:
    """The input file ``path`` (a ``what``: ``"eval file"``, ``"cassette"``...) read, bounded
    and parsed (see the module docstring): its text (``parse="text"``), or the value it holds
    (``"json"``, ``"yaml"``).

    ``limit``: the largest size accepted, in bytes. ``aliases``: YAML anchors and aliases
    allowed (refused by default). ``depth``: for JSON, the deepest nesting accepted (None:
    whatever the parser manages). Raises :class:`InputFileError` (one line, starting with
    ``path``; ``missing`` set when there is no file)."""
    data = read_input_bytes(path, what, limit)
    return parse_checked(path, data, what=what, parse=parse, aliases=aliases, depth=depth)


__all__ = [
    "YAML_DEPTH_LIMIT",
    "AliasError",
    "DuplicateJsonKeyError",
    "DuplicateKeyError",
    "InputFileError",
    "OnePassChecks",
    "Parse",
    "checked_loader",
    "decode_input",
    "file_kind",
    "json_depth",
    "load_json",
    "load_yaml",
    "parse_checked",
    "read_checked",
    "read_input_bytes",
]
