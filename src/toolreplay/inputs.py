"""Reading input files without trusting them: one checked reader for every file toolreplay reads.

An input file (eval file, cassette, manifest, shard file, results file, phrasing corpus,
publication journal) is read by :func:`read_checked`, which

1. reads at most ``limit`` bytes, and only from a regular file (a FIFO or a device would block
   or never end), refusing a larger file unread (:func:`read_input_bytes`);
2. decodes UTF-8, naming line, column and byte of the first byte that is not
   (:func:`decode_input`);
3. parses it as asked: ``"text"`` (no parsing), ``"json"`` (nesting bounded by ``depth``
   levels, when given) or ``"yaml"`` (the safe loader, libyaml's when available; nesting
   checked on the parser's event stream before anything is composed, :func:`check_yaml_depth`;
   anchors and aliases refused unless ``aliases=True``, :class:`AliasError`).

Every refusal is one :class:`InputFileError` whose message is one line starting with the path
(a YAML or JSON error's own text follows ``not valid YAML:`` / ``not valid JSON:``); callers
turn it into their own error class (``EvalFileError``, ``CassetteError``, ``ResultsError``...),
most of them with the message as it is, and a missing file (:attr:`InputFileError.missing`)
with their own hint. :func:`parse_checked` does steps 2 and 3 on bytes already read (a
cassette is hashed before it is parsed); :func:`load_yaml` parses YAML text given by a caller.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any, Literal

import yaml

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


class AliasError(yaml.YAMLError):
    """A YAML document uses an anchor and alias where they are refused (cassettes: a few lines
    of aliases can expand to gigabytes when a body is turned back into JSON)."""


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


def check_yaml_depth(text: str, loader: Any = SAFE_LOADER, limit: int = YAML_DEPTH_LIMIT) -> None:
    """``yaml.YAMLError`` when ``text`` nests collections deeper than ``limit`` levels.

    Read from the parser's event stream (libyaml's, with ``loader`` a ``CSafeLoader``),
    which does not recurse: composing such a document recurses once per level and, in some
    PyYAML builds (6.0, 6.0.1), overflows the C stack (a crash, not an exception). A YAML
    syntax error found on the way is raised as PyYAML raises it."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > limit:
                raise yaml.YAMLError(f"collections nest deeper than {limit} levels")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _refuse_shared_nodes(root: yaml.Node) -> None:
    """Walk the composed node graph once; an alias makes a node reachable twice (or a cycle),
    so the first node seen again is refused, before anything is constructed or expanded."""
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


_NO_ALIAS_LOADERS: dict[type, type] = {}


def no_alias_loader(base: type = SAFE_LOADER) -> type:
    """``base`` (a PyYAML safe loader, libyaml's by default) with a compose-time check that
    refuses aliases (:class:`AliasError`)."""
    if base not in _NO_ALIAS_LOADERS:

        def get_single_node(self: Any) -> Any:
            node = base.get_single_node(self)  # type: ignore[attr-defined]
            if node is not None:
                _refuse_shared_nodes(node)
            return node

        _NO_ALIAS_LOADERS[base] = type(
            f"NoAlias{base.__name__}", (base,), {"get_single_node": get_single_node}
        )
    return _NO_ALIAS_LOADERS[base]


def load_yaml(text: str, *, aliases: bool = False) -> Any:
    """Parse one YAML document ``text`` with the safe loader, nesting bounded
    (:func:`check_yaml_depth`) and, unless ``aliases``, anchors and aliases refused
    (:class:`AliasError`). Raises ``yaml.YAMLError`` (the parser's own message)."""
    check_yaml_depth(text, SAFE_LOADER)
    return yaml.load(text, Loader=SAFE_LOADER if aliases else no_alias_loader(SAFE_LOADER))


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
            raise InputFileError(f"{path}: not valid YAML: {exc}") from None
    if parse == "json":
        try:
            value = json.loads(text)
        except RecursionError:
            if depth is None:
                raise InputFileError(f"{path}: nested beyond reason; not a {what}") from None
            raise InputFileError(f"{path}: {what} nests deeper than {depth} levels") from None
        except ValueError as exc:
            raise InputFileError(f"{path}: not valid JSON: {exc}") from None
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
    "InputFileError",
    "Parse",
    "check_yaml_depth",
    "decode_input",
    "file_kind",
    "json_depth",
    "load_yaml",
    "no_alias_loader",
    "parse_checked",
    "read_checked",
    "read_input_bytes",
]
