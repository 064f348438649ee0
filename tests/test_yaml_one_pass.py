"""YAML inputs are loaded and checked in one pass (toolreplay.inputs.OnePassChecks): nesting
bounded while the parser composes, aliases and duplicate keys refused while the values are made,
with the refusals and the values PyYAML's safe loader gives; libyaml's loader and PyYAML's own."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

import toolreplay.inputs as inputs
from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.store import load_cassette
from toolreplay.evals import EvalFileError, load_eval
from toolreplay.inputs import (
    AliasError,
    DuplicateKeyError,
    OnePassChecks,
    checked_loader,
    load_yaml,
)

from .conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]
C_LOADER = getattr(yaml, "CSafeLoader", None)
BASES = [yaml.SafeLoader] + ([C_LOADER] if C_LOADER is not None else [])


def load(text: str, base: type, aliases: bool = False):
    return yaml.load(text, Loader=checked_loader(base, aliases=aliases))


def committed_yaml() -> list[Path]:
    """Every YAML file of the repository's cassettes, eval files and examples."""
    found = [*REPO.glob("cassettes/**/*.yaml"), *REPO.glob("evals/*.yaml")]
    found += [p for p in REPO.glob("examples/**/*.yaml") if "node_modules" not in p.parts]
    return sorted(found)


def test_every_committed_yaml_file_loads_to_exactly_what_pyyaml_makes():
    # repr: the same types (1 is not 1.0 is not True), values and key order
    safe = C_LOADER or yaml.SafeLoader
    files = committed_yaml()
    assert len(files) > 400  # the reference set alone holds 200 cassettes
    for path in files:
        text = path.read_text(encoding="utf-8")
        expected = repr(yaml.load(text, Loader=safe))
        assert repr(load_yaml(text)) == expected, path
        if "cassettes" not in path.parts:  # eval files are read with aliases allowed
            assert repr(load_yaml(text, aliases=True)) == expected, path


@pytest.mark.parametrize("base", BASES, ids=lambda b: b.__name__)
def test_pyyamls_own_loader_makes_the_same_values(base):
    files = [*sorted(REFERENCE.glob("loop+atomic/*/trial-1.yaml"))[:5], REPO / "evals/weather.yaml"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert repr(load(text, base, aliases=True)) == repr(yaml.safe_load(text)), path
    odd = (
        "a: [1, 1.5, -0x1f, 0o17, 017, 1_000, 1:20, .inf, yes, No, ~, '', null, 2026-09-17]\n"
        "b: !!binary aGk=\nc: !!set {x, y}\nd: !!omap [{k: 1}]\ne: {<<: {m: 1}, n: 2}\n"
        "f: 2026-09-17T15:30\ng: !!str 12\nh: {=: 1, '<<': 2}\n"
    )
    for aliases in (False, True):
        assert repr(load(odd, base, aliases)) == repr(yaml.load(odd, Loader=base))


@pytest.mark.parametrize("base", BASES, ids=lambda b: b.__name__)
def test_every_refusal_is_the_one_pyyaml_or_the_checks_gave(base):
    def error(text: str, aliases: bool = False) -> str:
        with pytest.raises(yaml.YAMLError) as info:
            load(text, base, aliases)
        return str(info.value)

    alias = "alias to the node anchored at line 1, column 4: cassettes may not use anchors"
    assert alias in error("a: &x 1\nb: *x\n")
    assert alias in error("a: &x [1]\nb: [*x]\n")
    assert alias in error("a: &a [*a]\n")  # a cycle
    assert alias in error("a: &x {k: v}\nb: {<<: *x}\n")  # a merge
    assert "nest deeper than 200 levels" in error("[" * 201 + "]" * 201)
    assert load("[" * 200 + "]" * 200, base) is not None  # 200 levels are fine
    assert "nest deeper than 200 levels" in error("a: " + "{b: " * 201 + "1" + "}" * 201)
    block = "a:\n" + "".join(" " * i + "- \n" for i in range(0, 600, 2))
    assert "nest deeper than 200 levels" in error(block)
    deep_tagged = "!!seq [" * 201 + "1" + "]" * 201  # explicit tags: no resolver asked
    assert "nest deeper than 200 levels" in error(deep_tagged)
    assert error("a: 1\nb: 2\na: 3\n", aliases=True) == (
        "duplicate key 'a' at line 3, column 1 (first at line 1, column 1): a mapping's keys "
        "must differ"
    )
    assert "duplicate key 1 at line 2, column 1 (first at line 1" in error("1: a\n0x1: b\n")
    assert "could not determine a constructor" in error("x: !!python/object:os.system x")
    assert "expected a sequence node, but found mapping" in error("- !!seq {a: 1}")
    assert "found unhashable key" in error("? [1]\n: x\n")
    assert "expected a single document" in error("--- 1\n--- 2\n")
    assert "while parsing" in error("a: [\n") or "while scanning" in error("a: [\n")
    # allowed when asked (eval files): aliases, merges, cycles
    assert load("a: &x {k: v}\nb: {<<: *x, c: 1}\n", base, True) == {
        "a": {"k": "v"},
        "b": {"k": "v", "c": 1},
    }
    cycle = load("a: &a [*a]\n", base, True)
    assert cycle["a"][0] is cycle["a"]
    shared = load("a: &x [1]\nb: *x\n", base, True)
    assert shared["a"] is shared["b"]  # one object, as PyYAML makes it


def test_a_bomb_is_refused_before_it_expands():
    levels = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    started = time.process_time()
    with pytest.raises(AliasError, match=r"anchored at line \d+, column 5: cassettes may not"):
        load_yaml("\n".join(levels))
    assert time.process_time() - started < 2  # 9**12 strings if it were expanded


def test_one_parse_one_composition_and_no_walk(monkeypatch):
    text = (REFERENCE / "loop+atomic" / "ningde" / "trial-1.yaml").read_text(encoding="utf-8")
    expected = yaml.load(text, Loader=C_LOADER or yaml.SafeLoader)
    composed = []
    loader = checked_loader()
    real = OnePassChecks.descend_resolver

    def descend(self, parent, index):  # called once for each node the composer makes
        composed.append(index)
        return real(self, parent, index)

    def refuse(*args, **kwargs):
        raise AssertionError("a second parse or a walk over the nodes")

    monkeypatch.setattr(OnePassChecks, "descend_resolver", descend)
    monkeypatch.setattr(yaml, "parse", refuse)  # the old depth check parsed the text again
    monkeypatch.setattr(yaml, "compose", refuse)
    monkeypatch.setattr(inputs, "_refuse_shared_nodes", refuse)  # the old alias walk
    made = []
    real_make = loader.construct_document

    def construct_document(self, node):
        made.append(node)
        return real_make(self, node)

    monkeypatch.setattr(loader, "construct_document", construct_document)
    assert load_yaml(text) == expected
    assert len(made) == 1  # the nodes were made into values once
    monkeypatch.undo()
    count = sum(1 for _ in _nodes(yaml.compose(text, Loader=C_LOADER or yaml.SafeLoader)))
    assert len(composed) == count  # each node composed once: one pass over the text


def _nodes(root):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, yaml.MappingNode):
            stack.extend(x for pair in node.value for x in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def test_a_duplicate_key_in_a_cassette_or_an_eval_file_is_one_line_naming_it(tmp_path):
    source = REFERENCE / "loop+atomic" / "ningde" / "trial-1.yaml"
    text = source.read_text(encoding="utf-8")
    at = text.index("\n        content: 宁德时代") + 1  # the question, said twice
    line = text.count("\n", 0, at) + 1
    cassette = tmp_path / "c.yaml"
    cassette.write_text(text[:at] + "        content: hidden\n" + text[at:], encoding="utf-8")
    with pytest.raises(CassetteError) as info:
        load_cassette(cassette)
    assert str(info.value) == (
        f"{cassette}: not valid YAML: duplicate key 'content' at line {line + 1}, column 9 "
        f"(first at line {line}, column 9): a mapping's keys must differ"
    )
    eval_file = tmp_path / "e.yaml"
    eval_file.write_text("name: a\nquestions: []\nname: b\n", encoding="utf-8")
    with pytest.raises(EvalFileError, match=r"e.yaml: not valid YAML: duplicate key 'name' at "
                                            r"line 3, column 1 \(first at line 1"):  # fmt: skip
        load_eval(eval_file)


def test_duplicate_key_error_is_a_yaml_error():
    assert issubclass(DuplicateKeyError, yaml.YAMLError)
    assert issubclass(AliasError, yaml.YAMLError)


def test_the_collector_is_paused_only_while_loading():
    import gc

    assert gc.isenabled()
    load_yaml("a: [1]\n")
    assert gc.isenabled()
    with pytest.raises(AliasError):
        load_yaml("a: &x 1\nb: *x\n")
    assert gc.isenabled()  # re-enabled after a refusal too
    gc.disable()
    try:
        load_yaml("a: [1]\n")
        assert not gc.isenabled()  # a program that turned it off keeps it off
    finally:
        gc.enable()
