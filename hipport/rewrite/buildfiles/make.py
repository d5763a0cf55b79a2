"""Makefiles (``Makefile``, ``GNUmakefile``, ``*.mk``) from nvcc to hipcc.

Parsed with tree-sitter's Make grammar, so comments and ``define`` bodies are never
touched, and each word of a variable's value or a recipe line is known with its bytes:

* ``nvcc`` (a word, or a path ending in ``/nvcc``) → ``hipcc``;
* the CUDA root — ``/usr/local/cuda[-X.Y]`` and the variables that hold it (``CUDA_PATH``,
  ``CUDA_HOME`` …) — → ``/opt/rocm`` and ``ROCM_PATH``, with ``lib64`` → ``lib``;
* ``-lcudart -lcublas …`` → ``-lamdhip64 -lhipblas …`` (the library table);
* nvcc flags → hipcc's (the flag table), where they are given to nvcc: on a recipe line
  that runs nvcc, in a variable that line uses, or in a variable named for nvcc/CUDA;
* with ``--rename``, ``.cu`` names and patterns → ``.hip`` (``rename``).
"""

from __future__ import annotations

import re
from functools import lru_cache

import tree_sitter
import tree_sitter_make

from hipport.parse import walk
from hipport.rewrite.buildfiles import BuildContext
from hipport.rewrite.buildfiles.flags import Word, apply
from hipport.rewrite.buildfiles.maps import load
from hipport.rewrite.buildfiles.rename import extension_word, rename_range

Node = tree_sitter.Node

_TEXT_TYPES = frozenset({"text", "shell_text", "shell_command"})
_ASSIGN_RE = re.compile(rb"[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::{1,3}=|[+?!]?=)")
_REF_RE = re.compile(r"^\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]$")


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_make.language()))


def convert(ctx: BuildContext) -> None:
    tree = _parser().parse(ctx.src)
    nodes = list(walk(tree.root_node))
    texts = [n for n in nodes if n.type in _TEXT_TYPES]
    nvcc_vars, flag_vars = _survey(ctx, nodes, texts)
    root_vars = root_variables()
    for n in nodes:
        if n.type == "variable_assignment":
            name = n.child_by_field_name("name") or n.children[0]
            _rename_root(ctx, name.start_byte, name.end_byte, root_vars)
        elif n.type == "shell_text":  # a tab-indented assignment in a conditional parses as one
            m = _ASSIGN_RE.match(ctx.src, n.start_byte, n.end_byte)
            if m:
                _rename_root(ctx, m.start(1), m.end(1), root_vars)
        elif n.type == "variable_reference":
            word = next((c for c in n.children if c.type == "word"), None)
            if word is not None:
                _rename_root(ctx, word.start_byte, word.end_byte, root_vars)
    if ctx.options.rename:
        _rename(ctx, nodes, texts)
    for t in texts:
        words = list(_words(ctx.src, t))
        paths_and_tools(ctx, words, root_vars)
        libraries(ctx, words)
        if _is_flag_context(ctx, t, words, nvcc_vars, flag_vars):
            apply(ctx, words, " ", False, t.start_byte, t.end_byte)


def _rename(ctx: BuildContext, nodes: list[Node], texts: list[Node]) -> None:
    """``--rename``: every ``.cu`` name outside comments (rules, patterns, variables,
    recipes) → ``.hip``; a ``cu`` word held apart from its name is reported."""
    pos = 0
    for c in (n for n in nodes if n.type == "comment"):
        rename_range(ctx, pos, c.start_byte)
        pos = c.end_byte
    rename_range(ctx, pos, len(ctx.src))
    for t in texts:
        previous = ""
        for w in _split(ctx.src, t.start_byte, t.end_byte):
            extension_word(ctx, w.text, previous, w.start, w.end)
            previous = w.text


#: Make functions whose first arguments are names or patterns, not words of a command:
#: how many (``$(foreach v,LIST,TEXT)``: only TEXT holds flags).
_LEADING_ARGS = {"foreach": 2, "patsubst": 2, "subst": 2, "if": 1, "call": 1, "filter": 1, "filter-out": 1}


def _words(src: bytes, text: Node):
    """Words of a text node, with nested function calls left to their own text nodes."""
    holes = [(c.start_byte, c.end_byte) for c in text.children
             if c.type in ("function_call", "shell_function")]
    pos = _skip_leading_args(src, text)
    for start, end in [*holes, (text.end_byte, text.end_byte)]:
        yield from (w for w in _split(src, pos, start) if w.text != "\\")
        pos = end


def _skip_leading_args(src: bytes, text: Node) -> int:
    """Where the words of ``text`` start: after the name/pattern arguments of a function."""
    args = text.parent
    call = args.parent if args is not None and args.type == "arguments" else None
    if call is None or call.type != "function_call" or len(call.children) < 3:
        return text.start_byte
    fn = src[call.children[2].start_byte:call.children[2].end_byte].decode("utf-8", "replace")
    skip = _LEADING_ARGS.get(fn, 0)
    pos, depth = text.start_byte, 0
    while skip and pos < text.end_byte:
        c = src[pos:pos + 1]
        depth += c in (b"(", b"{")
        depth -= c in (b")", b"}")
        if c == b"," and depth == 0:
            skip -= 1
        pos += 1
    return pos


def _split(src: bytes, start: int, end: int):
    from hipport.rewrite.buildfiles.words import split

    return split(src, start, end, b" \t\r\n")


def _assigned(n: Node, src: bytes) -> str | None:
    """The variable a text node is (part of) the value of, also inside ``$(eval X += …)``."""
    m = _ASSIGN_RE.match(src, n.start_byte, n.end_byte)
    if m:
        return m.group(1).decode()
    parent = n.parent
    while parent is not None and parent.type not in ("variable_assignment", "recipe_line"):
        parent = parent.parent
    if parent is not None and parent.type == "variable_assignment":
        name = parent.child_by_field_name("name") or parent.children[0]
        return src[name.start_byte:name.end_byte].decode("utf-8", "replace")
    return None


def _runs_nvcc(word: str, nvcc_vars: set[str]) -> bool:
    m = _REF_RE.match(word)
    return word == "nvcc" or word.endswith("/nvcc") or (m is not None and m.group(1) in nvcc_vars)


def _survey(ctx: BuildContext, nodes: list[Node], texts: list[Node]) -> tuple[set[str], set[str]]:
    """Variables that name nvcc, and variables used on nvcc command lines (their flags)."""
    src = ctx.src
    nvcc_vars: set[str] = set()
    for t in texts:
        name = _assigned(t, src)
        if name and any(w.text == "nvcc" or w.text.endswith("/nvcc") for w in _words(src, t)):
            nvcc_vars.add(name)
    flag_vars: set[str] = set()
    for t in texts:
        words = list(_words(src, t))
        if words and t.type != "text" and _runs_nvcc(words[0].text, nvcc_vars):
            for w in words[1:]:
                for m in re.finditer(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]", w.text):
                    flag_vars.add(m.group(1))
    return nvcc_vars, flag_vars


def _is_flag_context(ctx: BuildContext, t: Node, words: list[Word], nvcc_vars: set[str],
                     flag_vars: set[str]) -> bool:
    if t.type != "text" and words and _runs_nvcc(words[0].text, nvcc_vars):
        return True
    name = _assigned(t, ctx.src)
    if name is None or name in load().raw["paths"]["root_variables"]:
        return False
    return name in nvcc_vars or name in flag_vars or re.search(load().raw["make"]["flag_variable_pattern"], name) is not None


def root_variables() -> frozenset[str]:
    """The variables that hold the CUDA root (CUDA_PATH, CUDA_HOME …)."""
    return frozenset(load().raw["paths"]["root_variables"])


def _rename_root(ctx: BuildContext, start: int, end: int, root_vars: frozenset[str]) -> None:
    if ctx.src[start:end].decode("utf-8", "replace") in root_vars:
        ctx.edit(start, end, load().raw["paths"]["root_variable"])


def paths_and_tools(ctx: BuildContext, words: list[Word], root_vars: frozenset[str]) -> None:
    paths = load().raw["paths"]
    root_re = _root_re()
    for w in words:
        if w.text == "nvcc" or w.text.endswith("/nvcc"):
            ctx.edit(w.end - 4, w.end, "hipcc")
        for m in root_re.finditer(w.text):
            at = w.start + len(w.text[:m.start()].encode())
            if m.group("literal"):
                ctx.edit(at, at + len(m.group("literal").encode()), paths["rocm_root"])
            sub = m.group("sub")
            if not sub:
                continue
            sub_at = at + len(m.group(0)[:m.start("sub") - m.start()].encode())
            new = _subdir(sub)
            if new is None:
                ctx.report("HP607", sub_at, sub_at + len(sub.encode()),
                           f"{m.group(0)}: a part of the CUDA toolkit ROCm lays out differently",
                           "point it at the ROCm component or the project's own copy")
            elif new != sub:
                ctx.edit(sub_at, sub_at + len(sub.encode()), new)


def _subdir(sub: str) -> str | None:
    """The ROCm form of a path under the CUDA root (``/lib64`` → ``/lib``), or None."""
    table = load().raw["paths"]["subdirs"]
    rel = sub.lstrip("/")
    for cuda, rocm in sorted(table.items(), key=lambda kv: -len(kv[0])):
        if rel == cuda or rel.startswith(cuda + "/"):
            return "/" + rocm + rel[len(cuda):]
    first = rel.split("/", 1)[0]
    return sub if first in load().raw["paths"]["same_subdirs"] else None


@lru_cache(maxsize=1)
def _root_re() -> re.Pattern[str]:
    paths = load().raw["paths"]
    literal = "|".join(re.escape(r) + r"(?:-[0-9][0-9.]*)?" for r in paths["roots"])
    refs = "|".join(re.escape(v) for v in paths["root_variables"])  # not ROCM_PATH: the HIP side
    ref = rf"\$(?:[({{](?:{refs})[)}}]|(?:{refs})(?![A-Za-z0-9_]))"  # $(X) ${X}, and $X in shell
    return re.compile(rf"(?:(?P<literal>{literal})|{ref})(?P<sub>/[A-Za-z0-9_./+-]+)?")


def libraries(ctx: BuildContext, words: list[Word]) -> None:
    for w in words:
        if not w.text.startswith("-l") or len(w.text) < 3:
            continue
        lib = load().library_for_lib(w.text[2:], ctx.options.roc)
        if lib is None:
            continue
        if lib.none or not lib.lib:
            ctx.report("HP605", w.start, w.end, f"{w.text}: {lib.none}", "remove it or link the ROCm library by hand")
        else:
            ctx.edit(w.start, w.end, "-l" + lib.lib)
