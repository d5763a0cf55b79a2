"""CMake edits that add commands: ``LANGUAGE HIP`` for ``.cu`` sources, and new lines
before or after a command, indented like it, with the file's line ending.

A ``.cu`` source is compiled by CMake's CUDA language whatever the project enables; in a
HIP build each needs the source property ``LANGUAGE HIP``. Sources named in a command get
it on the next line; a glob of ``.cu`` files alone gets it for its variable; a glob that
mixes them with other sources is reported (HP609). Where the file gives them a LANGUAGE
itself (directly, or to a list they are appended to), nothing is added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter

from hipport.rewrite.buildfiles import BuildContext

if TYPE_CHECKING:
    from hipport.rewrite.buildfiles.cmake import Arg, State

Node = tree_sitter.Node


def has_language(st: "State", name: str) -> bool:
    """Whether the file gives ``name`` (a source, or a ``${VAR}``) a LANGUAGE itself, also
    through a list it is appended to: ``list(APPEND ALL ${SRCS})`` then ``ALL``'s LANGUAGE."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in st.hip_sources:
            return True
        seen.add(n)
        todo += [m for m in st.appended.get(n, ()) if m not in seen]
    return False


def cu_sources(ctx: BuildContext, cmd: Node, name: str, args: list["Arg"], st: "State") -> None:
    if name in ("set", "list") and args:
        var = args[0].text if name == "set" else args[1].text if len(args) > 1 else ""
        if has_language(st, f"${{{var}}}"):
            return
    names = [a.text for a in args[1:] if a.kind != "bracket_argument" and a.text.endswith(".cu")
             and "$<" not in a.text and not has_language(st, a.text)]
    if name == "set":
        names = [n for n in names if ";" not in n]
    if names:
        st.hip_sources.update(names)
        insert_after(ctx, cmd, f"set_source_files_properties({' '.join(names)} PROPERTIES LANGUAGE HIP)")


def cu_glob(ctx: BuildContext, cmd: Node, args: list["Arg"], st: "State") -> None:
    patterns = [a.text for a in args[2:] if a.text not in ("CONFIGURE_DEPENDS", "LIST_DIRECTORIES",
                                                            "FOLLOW_SYMLINKS", "RELATIVE", "true", "false")]
    if len(args) < 2 or not any(p.endswith(".cu") for p in patterns):
        return
    var = f"${{{args[1].text}}}"
    if has_language(st, var) or _next_sets_language(ctx, cmd, var):
        return
    if all(p.endswith((".cu", ".cuh")) for p in patterns):
        insert_after(ctx, cmd, f"set_source_files_properties({var} PROPERTIES LANGUAGE HIP)")
    else:
        ctx.report("HP609", cmd.start_byte, cmd.end_byte,
                   f"file({args[0].text} {args[1].text} …): the .cu files among these need LANGUAGE HIP",
                   f"set_source_files_properties(<the .cu files of {var}> PROPERTIES LANGUAGE HIP), or glob them apart")


def _next_sets_language(ctx: BuildContext, cmd: Node, var: str) -> bool:
    """True when the command after ``cmd`` already gives ``var``'s files LANGUAGE HIP."""
    from hipport.rewrite.buildfiles.cmake import args_of, name_of  # cmake imports this module

    nxt = cmd.next_named_sibling
    while nxt is not None and nxt.type in ("line_comment", "bracket_comment"):
        nxt = nxt.next_named_sibling
    if nxt is None or nxt.type != "normal_command" or name_of(ctx.src, nxt) != "set_source_files_properties":
        return False
    words = [a.text for a in args_of(ctx.src, nxt)]
    return words[:1] == [var] and "LANGUAGE" in words and "HIP" in words


def insert_after(ctx: BuildContext, cmd: Node, text: str) -> None:
    """A new command on its own line after ``cmd``'s line, indented like it."""
    src = ctx.src
    nl = src.find(b"\n", cmd.end_byte)
    rest = src[cmd.end_byte:nl if nl >= 0 else len(src)]
    eol = b"\r\n" if src[max(0, nl - 1):nl] == b"\r" else b"\n"
    at = cmd.end_byte
    if not rest.strip() or rest.lstrip().startswith(b"#"):
        at = nl - (1 if eol == b"\r\n" else 0) if nl >= 0 else len(src)
    line_start = src.rfind(b"\n", 0, cmd.start_byte) + 1
    indent = src[line_start:cmd.start_byte]
    indent = indent if not indent.strip() else b""
    ctx.edit(at, at, (eol + indent).decode("utf-8", "surrogateescape") + text)


def insert_before(ctx: BuildContext, cmd: Node, text: str) -> None:
    """A new command on its own line before ``cmd``'s line, indented like it."""
    src = ctx.src
    at = src.rfind(b"\n", 0, cmd.start_byte) + 1
    indent = src[at:cmd.start_byte]
    indent = indent if not indent.strip() else b""
    line_end = src.find(b"\n", at)
    eol = "\r\n" if src[line_end - 1:line_end] == b"\r" else "\n"
    ctx.edit(at, at, indent.decode("utf-8", "surrogateescape") + text + eol)
