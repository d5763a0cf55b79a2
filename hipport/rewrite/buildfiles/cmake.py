"""CMake (``CMakeLists.txt``, ``*.cmake``) from the CUDA language to CMake's HIP language.

Parsed with tree-sitter's CMake grammar: commands and their arguments, so a comment or a
bracket argument (``[=[ … ]=]``) is never touched, and a flag is rewritten only where
CMake passes it to the compiler (the flag commands, the flag variables, the value of a
``$<COMPILE_LANGUAGE:CUDA>`` expression). What this does, in order of a typical file:

* ``cmake_minimum_required`` raised to 3.21 (CMake's HIP language) where lower;
* ``project(… CUDA)`` / ``enable_language(CUDA)`` → HIP; ``CMAKE_CUDA_*`` variables and
  ``CUDA_*`` properties → their HIP names; ``CMAKE_CUDA_ARCHITECTURES`` values → the
  ``--offload-arch`` GPUs; ``$<COMPILE_LANGUAGE:CUDA>`` → HIP;
* ``.cu`` sources named in a command get ``set_source_files_properties(… LANGUAGE HIP)``,
  or with ``--rename`` are named ``.hip`` (``rename``), which CMake compiles as HIP;
* ``find_package(CUDAToolkit|CUDA)`` → ``find_package(hip)``, ``CUDA::x`` targets → the
  ROCm library's own target, with one ``find_package`` per library used;
* legacy FindCUDA commands rewritten where mechanical; everything else a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter
import tree_sitter_cmake

from hipport.parse import walk
from hipport.rewrite.buildfiles import BuildContext, removal_span
from hipport.rewrite.buildfiles.cmake_legacy import NVCC_FLAGS_RE, legacy_target, nvcc_flags_list
from hipport.rewrite.buildfiles.cmake_flags import bytes_len, flags, genex_flags, genex_names
from hipport.rewrite.buildfiles.cmake_sources import cu_glob, cu_sources, insert_after, insert_before
from hipport.rewrite.buildfiles.maps import arch_list, load
from hipport.rewrite.buildfiles.rename import extension_word, rename_range
from hipport.versions import parse_version

Node = tree_sitter.Node

_TARGET_RE = re.compile(r"CUDA::\w+")
_FLAG_SETTERS = {"set": 0, "string": 1, "list": 1}
_STOP = frozenset({"CACHE", "PARENT_SCOPE", "FORCE"})
_COMMANDS = frozenset({"normal_command", "if_command", "elseif_command", "while_command"})


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cmake.language()))


@dataclass
class Arg:
    node: Node
    kind: str  # unquoted_argument | quoted_argument | bracket_argument
    text: str
    start: int  # of the content (inside the quotes)
    end: int


@dataclass
class State:
    """What one pass over a file learns and what it inserts at the end."""

    found_packages: dict[str, list[int]] = field(default_factory=dict)  # name → offsets
    hip_sources: set[str] = field(default_factory=set)  # given a LANGUAGE (names, ${vars})
    appended: dict[str, set[str]] = field(default_factory=dict)  # ${V} → ${X} of list(APPEND X ${V})
    needed: dict[str, int] = field(default_factory=dict)  # package → offset of first use
    cuda_find: Node | None = None  # the first find_package(CUDAToolkit|CUDA)
    cuda_find_flags: str = " REQUIRED"
    enables_hip: bool = False
    minimum: Node | None = None  # the cmake_minimum_required command


def convert(ctx: BuildContext) -> None:
    tree = _parser().parse(ctx.src)
    commands, refs = [], []
    for n in walk(tree.root_node):
        if n.type in _COMMANDS:
            commands.append((n, args_of(ctx.src, n)))
        elif n.type == "variable_ref":
            refs.append(n)
    st = State()
    for cmd, args in commands:
        _survey(ctx, cmd, args, st)
    for cmd, args in commands:
        _command(ctx, cmd, args, st)
    for var in refs:
        _variable_ref(ctx, var, st)
    _insert_packages(ctx, st)
    if st.enables_hip and st.minimum is not None:
        _raise_minimum(ctx, st.minimum)


def name_of(src: bytes, cmd: Node) -> str:
    head = cmd.children[0]
    return src[head.start_byte:head.end_byte].decode("utf-8", "replace").lower()


def args_of(src: bytes, cmd: Node) -> list[Arg]:
    out = []
    for al in (c for c in cmd.children if c.type == "argument_list"):
        for a in (c for c in al.children if c.type == "argument"):
            inner = a.children[0] if a.children else a
            s, e = a.start_byte, a.end_byte
            if inner.type == "quoted_argument":
                s, e = s + 1, e - 1
            out.append(Arg(a, inner.type, src[s:e].decode("utf-8", "surrogateescape"), s, e))
    return out


# -- the first pass: what is there already ------------------------------------------

def _survey(ctx: BuildContext, cmd: Node, args: list[Arg], st: State) -> None:
    name = name_of(ctx.src, cmd)
    words = [a.text for a in args]
    if name == "find_package" and words:
        st.found_packages.setdefault(words[0], []).append(cmd.start_byte)
        if words[0] in ("CUDAToolkit", "CUDA") and st.cuda_find is None:
            st.cuda_find = cmd
            st.cuda_find_flags = "".join(f" {w}" for w in words[1:] if w in ("REQUIRED", "QUIET"))
    elif name == "set_source_files_properties" and "PROPERTIES" in words:
        i = words.index("PROPERTIES")
        if "LANGUAGE" in words[i + 1::2]:  # HIP, CUDA (HIP once converted) or another: the file's choice
            st.hip_sources.update(words[:i])
    elif name == "list" and words[:1] == ["APPEND"] and len(words) > 2:
        for w in words[2:]:
            st.appended.setdefault(w, set()).add(f"${{{words[1]}}}")
    elif name == "cmake_minimum_required":
        st.minimum = cmd
    elif name in ("project", "enable_language") and "HIP" in words:
        st.enables_hip = True


# -- the second pass: each command -----------------------------------------------------

def _command(ctx: BuildContext, cmd: Node, args: list[Arg], st: State) -> None:
    m = load().cmake
    src = ctx.src
    name = name_of(src, cmd)
    texts = [a.text for a in args]
    if name in m["language_commands"]:
        _languages(ctx, name, args, st)
    if name == "find_package" and texts and texts[0] in ("CUDAToolkit", "CUDA"):
        _find_cuda(ctx, args)
        if texts[0] == "CUDA" and not st.enables_hip:  # FindCUDA needed no CUDA language
            insert_before(ctx, cmd, "enable_language(HIP)")
            st.enables_hip = True
    legacy = m["legacy_commands"]
    if name in legacy:
        if name.startswith("cuda_add_"):
            legacy_target(ctx, cmd, legacy[name], args)
        else:
            head = cmd.children[0]
            ctx.edit(head.start_byte, head.end_byte, legacy[name])
    elif name in ("cuda_add_cublas_to_target", "cuda_add_cufft_to_target") and args:
        _legacy_link(ctx, cmd, name, args, st)
    elif name.startswith("cuda_") and name not in ("cuda_select_nvcc_arch_flags",):
        ctx.report("HP606", cmd.start_byte, cmd.end_byte,
                   f"{name}(): a FindCUDA command with no mechanical HIP counterpart",
                   "build the sources with CMake's HIP language (add_library/add_executable and LANGUAGE HIP)")
    elif name == "cuda_select_nvcc_arch_flags":
        ctx.report("HP601", cmd.start_byte, cmd.end_byte,
                   "cuda_select_nvcc_arch_flags(): CUDA architectures chosen by FindCUDA",
                   "set CMAKE_HIP_ARCHITECTURES to the AMD GPUs instead")
    if name == "include" and texts[:1] == ["FindCUDA"]:
        ctx.report("HP606", cmd.start_byte, cmd.end_byte, "include(FindCUDA): the legacy CUDA module",
                   "use enable_language(HIP) and find_package(hip)")
    _architectures(ctx, cmd, name, args)
    moved = name in _FLAG_SETTERS and nvcc_flags_list(ctx, cmd, name, args)
    flag_ctx = None if moved else _flag_context(name, texts)
    sep_is_space = name in ("set", "string") and len(texts) > 1 and texts[_FLAG_SETTERS[name]].startswith("CMAKE_")
    arch_done = False
    before = len(ctx.edits)
    for k, a in enumerate(args):
        if a.kind == "bracket_argument":
            continue
        if a.kind == "unquoted_argument":
            _bare_name(ctx, a, texts, k)
        _targets(ctx, a, st)
        if name == "target_compile_features" or "COMPILE_FEATURES" in a.text:
            _features(ctx, a)
        genex_names(ctx, a)
        if flag_ctx is not None and k >= flag_ctx:
            arch_done = flags(ctx, a, sep_is_space and a.kind == "quoted_argument", arch_done)
        else:
            genex_flags(ctx, a)
    if flag_ctx is not None and name.endswith("_options"):
        _drop_if_emptied(ctx, cmd, args[flag_ctx:], before)
    if ctx.options.rename:  # x.cu is x.hip now, which CMake's HIP language compiles as HIP
        for k, a in enumerate(args):
            if a.kind != "bracket_argument":
                rename_range(ctx, a.start, a.end)
                extension_word(ctx, a.text, texts[k - 1] if k else "", a.start, a.end)
    elif name in m["source_commands"] or name in ("set", "list"):
        cu_sources(ctx, cmd, name, args, st)
    elif name == "file" and texts[:1] in (["GLOB"], ["GLOB_RECURSE"]):
        cu_glob(ctx, cmd, args, st)
    if name == "target_link_libraries" or name == "link_libraries":
        _plain_libs(ctx, args, st)
    if not moved and name in _FLAG_SETTERS and any(NVCC_FLAGS_RE.fullmatch(t) for t in texts[:2]):
        ctx.report("HP606", cmd.start_byte, cmd.end_byte,
                   "CUDA_NVCC_FLAGS: FindCUDA's nvcc flags, which CMake's HIP language does not read "
                   "(this use of the list cannot be moved surely)",
                   "put the flags in target_compile_options(<target> PRIVATE $<$<COMPILE_LANGUAGE:HIP>:…>) "
                   "or string(APPEND CMAKE_HIP_FLAGS \" …\")")


_SCOPES = frozenset({"PRIVATE", "PUBLIC", "INTERFACE", "BEFORE"})


def _drop_if_emptied(ctx: BuildContext, cmd: Node, items: list[Arg], before: int) -> None:
    """A ``target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)``
    whose every option was dropped goes whole, rather than stay as ``(t PRIVATE)``."""
    removed = [e for e in ctx.edits[before:] if not e.text]
    items = [a for a in items if a.text not in _SCOPES]
    if items and all(any(e.start <= a.node.start_byte and a.node.end_byte <= e.end for e in removed)
                     for a in items):
        start, end = removal_span(ctx.src, cmd.start_byte, cmd.end_byte, 0, len(ctx.src))
        if ctx.src[end:end + 1] == b"\n" and ctx.src[max(0, start - 2):start] in (b"\n\n", b""):
            end += 1  # a blank line on each side: keep one
        ctx.edit(start, end, "")


def _features(ctx: BuildContext, a: Arg) -> None:
    """``cuda_std_17`` → ``hip_std_17``: a CUDA feature asks nothing of the HIP compiler."""
    for cuda, hip in load().cmake["feature_prefixes"].items():
        for m in re.finditer(rf"\b{re.escape(cuda)}(?=[0-9])", a.text):
            at = a.start + bytes_len(a.text[:m.start()])
            ctx.edit(at, at + len(cuda), hip)


def _flag_context(name: str, texts: list[str]) -> int | None:
    """Index of the first argument that is a compiler flag, or None for no flag context."""
    if name in load().cmake["flag_commands"]:
        return 1 if name.startswith("target_") else 0
    k = _FLAG_SETTERS.get(name)
    if k is None or len(texts) <= k:
        return None
    if name != "set" and texts[0] not in ("APPEND", "PREPEND", "INSERT"):
        return None
    if load().is_flag_variable(texts[k]):
        return k + 1 + (1 if name == "list" and texts[0] == "INSERT" else 0)
    return None


def _languages(ctx: BuildContext, name: str, args: list[Arg], st: State) -> None:
    skip_next = False
    for k, a in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if name == "project" and (k == 0 or a.text in ("VERSION", "DESCRIPTION", "HOMEPAGE_URL")):
            skip_next = k > 0
            continue
        if a.kind == "unquoted_argument" and a.text == "CUDA":
            if name in ("set_source_files_properties", "set_property") and \
                    (k == 0 or args[k - 1].text not in ("LANGUAGE", "LINKER_LANGUAGE")):
                continue
            ctx.edit(a.start, a.end, "HIP")
            if name in ("project", "enable_language"):
                st.enables_hip = True


def _find_cuda(ctx: BuildContext, args: list[Arg]) -> None:
    """``find_package(CUDAToolkit 11.0 REQUIRED COMPONENTS …)`` → ``find_package(hip REQUIRED)``."""
    ctx.edit(args[0].start, args[0].end, "hip")
    dropping = False
    for k, a in enumerate(args[1:], 1):
        if k == 1 and re.fullmatch(r"[0-9][0-9.]*", a.text) or a.text in ("EXACT",):
            ctx.remove(a.node.start_byte, a.node.end_byte, args[0].end)
        elif a.text in ("COMPONENTS", "OPTIONAL_COMPONENTS"):
            dropping = True
        if dropping:
            ctx.remove(a.node.start_byte, a.node.end_byte, args[0].end)


def _legacy_link(ctx: BuildContext, cmd: Node, name: str, args: list[Arg], st: State) -> None:
    key = "cublas" if "cublas" in name else "cufft"
    lib = next(lib for lib in load().libraries(ctx.options.roc) if lib.key == key)
    ctx.edit(cmd.start_byte, cmd.end_byte, f"target_link_libraries({args[0].text} {lib.target})")
    st.needed.setdefault(lib.package, cmd.start_byte)


def _architectures(ctx: BuildContext, cmd: Node, name: str, args: list[Arg]) -> None:
    """The values given to CMAKE_CUDA_ARCHITECTURES / the CUDA_ARCHITECTURES property."""
    names = ("CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES")
    texts = [a.text for a in args]
    if name == "set" and texts[:1] == ["CMAKE_CUDA_ARCHITECTURES"]:
        values = [a for a in args[1:]]
        values = values[:next((i for i, a in enumerate(values) if a.text in _STOP), len(values))]
    elif name in ("set_target_properties", "set_source_files_properties") and "CUDA_ARCHITECTURES" in texts:
        i = texts.index("CUDA_ARCHITECTURES")
        values = args[i + 1:i + 2]
    elif name == "set_property" and "CUDA_ARCHITECTURES" in texts:
        values = args[texts.index("CUDA_ARCHITECTURES") + 1:]
    elif name == "list" and texts[1:2] == ["CMAKE_CUDA_ARCHITECTURES"] and \
            texts[0] in ("APPEND", "PREPEND", "INSERT") and len(args) > 2:
        _appended_architectures(ctx, cmd, args[3 if texts[0] == "INSERT" else 2:])
        return
    else:
        return
    if not values:
        return
    arch = arch_list(ctx.options)
    shown = " ".join(a.text for a in values)
    if any("${" in a.text for a in values):
        ctx.report("HP601", values[0].node.start_byte, values[-1].node.end_byte,
                   f"{names[0] if name == 'set' else names[1]} {shown}: CUDA architectures from a variable",
                   f"give it AMD GPUs ({';'.join(arch)})")
        return
    new = ";".join(arch)
    if len(arch) > 1 or any(a.kind == "quoted_argument" for a in values):
        new = f'"{new}"'
    ctx.edit(values[0].node.start_byte, values[-1].node.end_byte, new)
    ctx.report("HP601", values[0].node.start_byte, values[-1].node.end_byte,
               f"CUDA architectures {shown} → {';'.join(arch)} (from --offload-arch)",
               "build for every AMD GPU you ship for: --offload-arch gfx90a,gfx942 (or CMAKE_HIP_ARCHITECTURES)",
               fixed=True)


def _appended_architectures(ctx: BuildContext, cmd: Node, values: list[Arg]) -> None:
    """``list(APPEND CMAKE_CUDA_ARCHITECTURES 86-real 90-virtual)``: NVIDIA GPUs added to a
    list whose AMD GPUs the converted ``set()`` already gives; the command goes."""
    shown = " ".join(a.text for a in values)
    if any("${" in a.text for a in values):
        ctx.report("HP601", values[0].node.start_byte, values[-1].node.end_byte,
                   f"CMAKE_CUDA_ARCHITECTURES += {shown}: CUDA architectures from a variable",
                   f"append AMD GPUs ({';'.join(arch_list(ctx.options))}) or nothing")
        return
    ctx.remove(cmd.start_byte, cmd.end_byte)
    ctx.report("HP601", cmd.start_byte, cmd.end_byte,
               f"CUDA architectures {shown} appended: removed (the AMD GPUs come from --offload-arch)",
               "build for every AMD GPU you ship for: --offload-arch gfx90a,gfx942 (or CMAKE_HIP_ARCHITECTURES)",
               fixed=True)


def _bare_name(ctx: BuildContext, a: Arg, texts: list[str], k: int) -> None:
    """An argument that is exactly a variable or property name (``if(CMAKE_CUDA_COMPILER)``)."""
    new, note = hip_name(a.text)
    if new:
        ctx.edit(a.start, a.end, new)
    elif note:
        code = "HP602" if "SEPARABLE" in a.text or "RESOLVE_DEVICE" in a.text else "HP604"
        ctx.report(code, a.start, a.end, f"{a.text}: {note}", _SUGGEST.get(code, ""))


_SUGGEST = {
    "HP602": "target_compile_options(<t> PRIVATE -fgpu-rdc) and target_link_options(<t> PRIVATE -fgpu-rdc --hip-link)",
    "HP604": "remove it, or test the HIP counterpart named in the message",
}


def hip_name(name: str) -> tuple[str, str]:
    """(new name, "") for a CUDA variable or property with a plain HIP name; ("", note)
    for one with none; ("", "") for a name this does not know."""
    m = load().cmake
    if name in m["variables"]:
        value = m["variables"][name]
        if value and "::" not in value and not value.startswith("@"):
            return value, ""
        if not value:
            return "", m["variable_notes"].get(name) or m["property_notes"].get(name, "no HIP counterpart")
        return "", ""
    if name in m["property_notes"]:
        return "", m["property_notes"][name]
    if name.startswith("CMAKE_CUDA_"):
        suffix = name[len("CMAKE_CUDA_"):]
        if suffix in m["lang_variable_suffixes"] or any(
                s.endswith("_") and suffix.startswith(s) for s in m["lang_variable_suffixes"]):
            return "CMAKE_HIP_" + suffix, ""
    if name.startswith("CUDA_") and name[5:] in m["properties"]:
        return "HIP_" + name[5:], ""
    return "", ""


def _variable_ref(ctx: BuildContext, ref: Node, st: State) -> None:
    var = next((c for c in walk(ref) if c.type == "variable"), None)
    if var is None or ref.children and ref.children[0].type == "env_var":
        return
    name = ctx.src[var.start_byte:var.end_byte].decode("utf-8", "surrogateescape")
    value = load().cmake["variables"].get(name)
    if value and ("::" in value or value.startswith("@")):
        target = value
        if value.startswith("@"):
            lib = next(lib for lib in load().libraries(ctx.options.roc) if lib.key == value[1:])
            target, package = lib.target, lib.package
        else:
            package = "hip"
        ctx.edit(ref.start_byte, ref.end_byte, target)
        st.needed.setdefault(package, ref.start_byte)
        return
    new, note = hip_name(name)
    if new:
        ctx.edit(var.start_byte, var.end_byte, new)
    elif note:
        code = "HP602" if "SEPARABLE" in name or "RESOLVE_DEVICE" in name else "HP604"
        ctx.report(code, ref.start_byte, ref.end_byte, f"${{{name}}}: {note}", _SUGGEST.get(code, ""))


def _targets(ctx: BuildContext, a: Arg, st: State) -> None:
    for m in _TARGET_RE.finditer(a.text):
        _map_target(ctx, m.group(), a.start + bytes_len(a.text[:m.start()]), st)


def _map_target(ctx: BuildContext, name: str, at: int, st: State) -> None:
    end = at + len(name)
    lib = load().library_for_target(name, ctx.options.roc)
    if lib is None or lib.none or not lib.target:
        why = lib.none if lib is not None else "not a CUDA library hipport knows a ROCm counterpart of"
        ctx.report("HP605", at, end, f"{name}: {why}", "remove the target or link the ROCm library by hand")
        return
    ctx.edit(at, end, lib.target)
    st.needed.setdefault(lib.package, at)


def _plain_libs(ctx: BuildContext, args: list[Arg], st: State) -> None:
    """``target_link_libraries(t cudart cublas)``: plain CUDA library names."""
    for a in args[1:]:
        if a.kind != "unquoted_argument":
            continue
        lib = load().library_for_lib(a.text, ctx.options.roc)
        if lib is None:
            continue
        if lib.none or not lib.target:
            ctx.report("HP605", a.start, a.end, f"{a.text}: {lib.none}", "remove it or link the ROCm library by hand")
            continue
        ctx.edit(a.start, a.end, lib.target)
        st.needed.setdefault(lib.package, a.start)


def _insert_packages(ctx: BuildContext, st: State) -> None:
    if st.cuda_find is not None:
        st.found_packages.setdefault("hip", []).append(st.cuda_find.start_byte)
    missing = [p for p, use in st.needed.items() if not _in_scope(st.found_packages.get(p, ()), use)]
    if "hip" in missing:
        missing.remove("hip")
        missing.insert(0, "hip")
    if not missing:
        return
    src = ctx.src
    if st.cuda_find is not None:
        for p in (p for p in missing if p != "hip"):
            insert_after(ctx, st.cuda_find, f"find_package({p}{st.cuda_find_flags})")
        return
    for p in missing:
        at = src.rfind(b"\n", 0, st.needed[p]) + 1
        line_end = src.find(b"\n", at)
        indent = re.match(rb"[ \t]*", src[at:line_end if line_end >= 0 else len(src)]).group()
        eol = "\r\n" if src[line_end - 1:line_end] == b"\r" else "\n"
        ctx.edit(at, at, f"{indent.decode('utf-8', 'surrogateescape')}find_package({p} REQUIRED){eol}")


def _in_scope(finds, use: int) -> bool:
    """True when one of ``finds`` comes before ``use``. An if() is no scope in CMake (an
    imported target is visible in the whole directory once found), and which branch runs
    is not known here: a find_package earlier in the file counts wherever it is."""
    return any(at < use for at in finds)


def _raise_minimum(ctx: BuildContext, cmd: Node) -> None:
    args = args_of(ctx.src, cmd)
    texts = [a.text for a in args]
    if "VERSION" not in texts or texts.index("VERSION") + 1 >= len(args):
        return
    a = args[texts.index("VERSION") + 1]
    low, dots, high = a.text.partition("...")
    need = load().cmake["minimum_version"]
    try:
        if parse_version(low) >= parse_version(need):
            return
        keep_high = dots and parse_version(high) >= parse_version(need)
    except ValueError:
        return
    ctx.edit(a.start, a.end, need + (f"...{high}" if keep_high else ""))
