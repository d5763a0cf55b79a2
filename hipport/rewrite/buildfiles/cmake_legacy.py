"""FindCUDA's per-target options and flag lists, moved into CMake's HIP language.

``cuda_add_executable(t a.cu OPTIONS -lineinfo RELEASE --use_fast_math)`` becomes
``add_executable(t a.cu)`` and, on the next line, ``target_compile_options(t PRIVATE
$<$<COMPILE_LANGUAGE:HIP>:-gline-tables-only> $<$<AND:$<COMPILE_LANGUAGE:HIP>,$<CONFIG:Release>>:-ffast-math>)``:
the same flags (through the nvcc flag table), for the same target, language and
configurations. FindCUDA lets ``STATIC``/``EXCLUDE_FROM_ALL``… stand anywhere among the
sources; ``add_library`` wants them after the name, so they move there.

``CUDA_NVCC_FLAGS[_<CONFIG>]`` (``set``, ``list(APPEND)``, ``string(APPEND)``) becomes
``string(APPEND CMAKE_HIP_FLAGS[_<CONFIG>] " …")``: CMake's HIP language reads no
FindCUDA variable. Always appended — ``CMAKE_HIP_FLAGS`` also carries the toolchain's and
the user's flags, which an overwrite would lose. What cannot be moved surely is left and
reported (HP606): a cache or parent-scope variable, a generator expression (flags
variables take none), any other use of the list.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.rewrite.buildfiles import BuildContext
from hipport.rewrite.buildfiles.cmake_sources import insert_after
from hipport.rewrite.buildfiles.flags import Word, translated
from hipport.rewrite.buildfiles.words import split

if TYPE_CHECKING:
    import tree_sitter

    from hipport.rewrite.buildfiles.cmake import Arg

_KEYWORDS = ("STATIC", "SHARED", "MODULE", "WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL")
_CONFIGS = {"RELEASE": "Release", "DEBUG": "Debug", "MINSIZEREL": "MinSizeRel",
            "RELWITHDEBINFO": "RelWithDebInfo"}
NVCC_FLAGS_RE = re.compile(r"CUDA_NVCC_FLAGS(?:_(RELEASE|DEBUG|MINSIZEREL|RELWITHDEBINFO))?")


def legacy_target(ctx: BuildContext, cmd: "tree_sitter.Node", new_name: str, args: list["Arg"]) -> None:
    """``cuda_add_executable``/``cuda_add_library`` → ``add_executable``/``add_library``,
    its ``OPTIONS`` → ``target_compile_options`` for HIP."""
    head = cmd.children[0]
    ctx.edit(head.start_byte, head.end_byte, new_name)
    if not args:
        return
    texts = [a.text for a in args]
    opt = texts.index("OPTIONS") if "OPTIONS" in texts else len(args)
    _keywords_first(ctx, args[:opt])
    if opt == len(args):
        return
    groups: dict[str | None, list[Word]] = {}
    config = None
    for a in args[opt + 1:]:
        if a.kind == "unquoted_argument" and a.text in _CONFIGS:
            config = _CONFIGS[a.text]
            continue
        groups.setdefault(config, []).extend(split(ctx.src, a.start, a.end, b" \t\r\n;"))
    ctx.remove(args[opt].node.start_byte, args[-1].node.end_byte, args[opt - 1].node.end_byte)
    items = []
    for config, words in groups.items():
        cond = "$<COMPILE_LANGUAGE:HIP>" if config is None else \
            f"$<AND:$<COMPILE_LANGUAGE:HIP>,$<CONFIG:{config}>>"
        items += [f"$<{cond}:{flag}>" for flag in translated(ctx, words) if flag]
    if items:
        insert_after(ctx, cmd, f"target_compile_options({args[0].text} PRIVATE {' '.join(items)})")
    ctx.report("HP606", cmd.start_byte, cmd.end_byte,
               f"{head.text.decode()}(… OPTIONS …): the nvcc options moved to target_compile_options "
               "for the HIP language", "", fixed=True)


def _keywords_first(ctx: BuildContext, args: list["Arg"]) -> None:
    """``cuda_add_library(k a.cu STATIC)`` → ``add_library(k STATIC a.cu)``."""
    late = []
    seen_source = False
    for a in args[1:]:
        if a.kind == "unquoted_argument" and a.text in _KEYWORDS:
            if seen_source:
                late.append(a)
        else:
            seen_source = True
    if not late:
        return
    for a in late:
        ctx.remove(a.node.start_byte, a.node.end_byte, args[0].node.end_byte)
    at = args[0].node.end_byte
    ctx.edit(at, at, "".join(f" {a.text}" for a in sorted(late, key=lambda a: _KEYWORDS.index(a.text))))


def nvcc_flags_list(ctx: BuildContext, cmd: "tree_sitter.Node", name: str, args: list["Arg"]) -> bool:
    """``CUDA_NVCC_FLAGS`` set or appended → ``string(APPEND CMAKE_HIP_FLAGS " …")``.
    True when moved; False (nothing done) when it cannot be moved surely."""
    texts = [a.text for a in args]
    if name == "set" and texts:
        var, values = texts[0], args[1:]
    elif name in ("list", "string") and texts[:1] == ["APPEND"] and len(texts) > 1:
        var, values = texts[1], args[2:]
    else:
        return False
    m = NVCC_FLAGS_RE.fullmatch(var)
    if m is None or any(t in ("CACHE", "PARENT_SCOPE") for t in texts) or any("$<" in a.text for a in values):
        return False
    words = [w for a in values for w in split(ctx.src, a.start, a.end, b" \t\r\n;")
             if w.text != f"${{{var}}}"]
    for w in words:
        if "${" in w.text:
            ctx.report("HP606", w.start, w.end,
                       f"{w.text}: moved to CMAKE_HIP_FLAGS as written; hipport cannot see whether it holds nvcc flags",
                       "check that the variable holds clang flags")
    flags = translated(ctx, words)
    target = "CMAKE_HIP_FLAGS" + (f"_{m.group(1)}" if m.group(1) else "")
    if flags:
        ctx.edit(cmd.start_byte, cmd.end_byte, f'string(APPEND {target} " {" ".join(flags)}")')
    else:
        ctx.remove(cmd.start_byte, cmd.end_byte)
    ctx.report("HP606", cmd.start_byte, cmd.end_byte,
               f"{var}: FindCUDA's nvcc flags moved to {target} (appended: it also holds the toolchain's flags)",
               "", fixed=True)
    return True
