"""Findings learnt by compiling conversions against the released HIP 6.2 and 7.1 headers.

Each rule here answers a compile error that ``hipport verify`` saw on real programs and no
other rule predicted; the facts (which functions, which architectures, which argument
counts) are data in ``mappings/released_headers.toml``, each checked against both header
sets. Codes follow the families: HP12x API calls, HP217 warp masks, HP33x device code.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from hipport import facts, gpus
from hipport.context import Context
from hipport.datafiles import mappings
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, enclosing_function, function_qualifiers, text
from hipport.preprocessor.directives import declares
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.deep.pasted_names import ApiNameBuiltByMacro
from hipport.rules.warp import widen
from hipport.rules.warp.template_masks import narrow_instantiation

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class _Data(NamedTuple):
    image: frozenset[str]
    surface: dict[str, int]
    void_pointer: dict[str, tuple[int, tuple[int, ...]]]
    device: dict[str, dict[str, str]]
    mask_functions: frozenset[str]
    narrow_types: frozenset[str]
    headers_elsewhere: frozenset[str]
    pasted_prefixes: tuple[str, ...]


@lru_cache(maxsize=1)
def raw_data() -> dict:
    """``mappings/released_headers.toml`` as parsed, once a process: this module's rules and
    released_host's read the same file."""
    return tomllib.loads(mappings().joinpath("released_headers.toml").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _data() -> _Data:
    raw = raw_data()
    return _Data(
        frozenset(raw["image"]["functions"]), dict(raw["surface"]),
        {k: (v["arg"], tuple(v["majors"])) for k, v in raw["void_pointer"].items()},
        dict(raw["device"]), frozenset(raw["mask"]["functions"]),
        frozenset(raw["mask"]["narrow_types"]),
        frozenset(raw["no_counterpart"]["left_to_other_rules"]), tuple(raw["token_paste"]["prefixes"]))


# --------------------------------------------------------------------------- rules


@REGISTRY.rule
class OverloadCollapse:
    """Two CUDA overloads that become one function after mapping

    ## Why
    Overloads that differ only in CUDA types HIP merges — `cudaError_t` and `CUresult` both
    become `hipError_t` — turn into two definitions of the same function: "redefinition of
    `_cudaGetErrorEnum`" (the CUDA samples' `helper_cuda.h`).

    ## Example

    ```cuda
    static const char *_cudaGetErrorEnum(cudaError_t error) { ... }
    static const char *_cudaGetErrorEnum(CUresult error) { ... }   // same as the first on HIP
    ```
    becomes
    ```cuda
    static const char *_cudaGetErrorEnum(hipError_t error) { ... }
    #ifndef __HIP_PLATFORM_AMD__
    static const char *_cudaGetErrorEnum(hipError_t error) { ... }
    #endif
    ```

    ## Fix

    `hipport convert` keeps the second definition for CUDA only (`#ifndef
    __HIP_PLATFORM_AMD__`): on HIP every call, with either error type, reaches the first.
    A definition that shares its lines with other code is reported, not changed.
    """

    code = "HP120"
    slug = "overload-collapse"
    severity = Severity.HIGH
    effort = Effort.NONE


@REGISTRY.rule
class VoidPointerArgument:
    """A typed pointer passed where the HIP function takes `void**`

    ## Why
    CUDA's `cuda_runtime.h` adds `template <class T> f(T **ptr, ...)` overloads; HIP's
    `hipHostGetDevicePointer`, `hipGetSymbolAddress`, `hipIpcOpenMemHandle` (and, in 6.x,
    `hipHostAlloc` and `hipMallocPitch`) take `void**` only, so `&typed_pointer` does not
    compile ("no matching function"). `hipport convert` casts the argument.

    ## Example

    ```cuda
    float *d; cudaHostGetDevicePointer(&d, host, 0);
    ```
    becomes
    ```cuda
    float *d; hipHostGetDevicePointer(reinterpret_cast<void**>(&d), host, 0);
    ```

    ## Fix
    `hipport convert` adds the `reinterpret_cast<void**>`; by hand, cast the argument or
    pass a `void*` variable and convert after the call.
    """

    code = "HP121"
    slug = "void-pointer-argument"
    severity = Severity.MEDIUM
    effort = Effort.NONE


@REGISTRY.rule
class SyncMaskNarrowCall:
    """A 32-bit variable passed as the mask of a `*_sync` builtin: a compile error

    ## Why
    HIP's `*_sync` warp functions `static_assert` that the mask is a 64-bit integer (HIP 6.2
    and 7.1 headers: "The mask must be a 64-bit integer"), so a call whose mask is an
    `unsigned` variable does not compile. Reported at the call, where the compiler stops;
    HP202 is the same variable's declaration.

    ## Example
    ```cuda
    unsigned active = __activemask();
    v += __shfl_up_sync(active, v, 1);          // error on HIP
    ```
    becomes
    ```cuda
    unsigned long long active = __activemask();
    v += __shfl_up_sync(active, v, 1);
    ```

    ## Fix
    Declare the mask `unsigned long long` (and use `__popcll`/`__ffsll` on it).
    """

    code = "HP217"
    slug = "sync-mask-narrow-call"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class ImageApiUnavailable(SaysWhatItIs):
    """Texture or surface fetch in device code: no image support on MI300 / MI350

    ## Why
    HIP declares its texture and surface functions unavailable where the GPU has no image
    instructions (`__HIP_NO_IMAGE_SUPPORT`: gfx940–942 in HIP 6.2, gfx942 and gfx950 in 7.1),
    so for those targets every `tex1Dfetch`, `tex2D`, `surf2Dwrite`… is a compile error.
    Texture and surface objects work on gfx90a and RDNA: reported only when an
    `--offload-arch` target (default gfx942) lacks image support (`mappings/gpus.toml`).

    ## Example

    ```cuda
    float v = tex1Dfetch<float>(tex, i);
    ```
    becomes, for gfx942,
    ```cuda
    float v = buffer[i];   // the array the texture object was created on
    ```

    ## Fix
    For gfx942 and gfx950, read the underlying buffer directly (with the texture's
    addressing and filtering done by hand where it mattered), or keep the fetch behind a
    check for targets that have image instructions.
    """

    code = "HP330"
    slug = "image-api-unavailable"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class SurfaceSignature(SaysWhatItIs):
    """Surface call in a form HIP does not have

    ## Why
    HIP's surface functions take no boundary-mode argument (only `surf1Dread` does), and
    reads return through a pointer: CUDA's `surf2Dwrite(v, s, x, y, cudaBoundaryModeZero)`
    and `T v = surf2Dread<T>(s, x, y)` do not compile (HIP 6.2 and 7.1
    `amd_surface_functions.h`).

    ## Example

    ```cuda
    surf2Dwrite(v, surf, x * 4, y, cudaBoundaryModeZero);
    float r = surf2Dread<float>(surf, x * 4, y);
    ```
    becomes
    ```cuda
    surf2Dwrite(v, surf, x * 4, y);
    float r; surf2Dread(&r, surf, x * 4, y);
    ```

    ## Fix

    Drop the boundary mode (out-of-range accesses are then not trapped or clamped: check
    the coordinates if the code relied on it); read with `surf2Dread(&v, s, x, y)`.
    """

    code = "HP331"
    slug = "surface-signature"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class DeviceFunctionMissing(SaysWhatItIs):
    """A CUDA device function HIP's headers do not declare

    ## Why
    Block-scope atomics (`atomicAdd_block`…) and system-scope `atomicInc_system` /
    `atomicDec_system` are in no HIP header and in no mapping table. A block-scope atomic
    becomes the device-scope one, which orders more, never less; the system-scope increment
    and decrement need a CAS loop.

    ## Example

    ```cuda
    atomicAdd_block(&count, 1);
    ```
    becomes
    ```cuda
    atomicAdd(&count, 1);
    ```

    ## Fix
    Use the device-scope atomic for `*_block` (`hipport convert` does), and write
    `atomicInc_system` / `atomicDec_system` as an `atomicCAS_system` loop.
    """

    code = "HP332"
    slug = "device-function-missing"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class HeaderWithoutCounterpart(SaysWhatItIs):
    """A CUDA header HIP has no counterpart for

    ## Why
    `mappings/headers.toml` lists CUDA headers with no HIP (or ROCm library) header:
    EGL, VDPAU and Direct3D interop, `cuda_occupancy.h`, `cufftw.h`, NVML, libcu++. The
    include is left as written and the compile stops there ("file not found"). Reported at
    the include when no other rule already explains that line or that header (wmma,
    pipelines, cuDNN… have their own).

    ## Example

    ```cuda
    #include <cudaEGL.h>
    ```
    becomes
    ```cuda
    // EGL interop has no HIP counterpart: keep this code path CUDA-only
    #ifndef __HIP_PLATFORM_AMD__
    #include <cudaEGL.h>
    #endif
    ```

    ## Fix
    Keep the code that needs the header CUDA-only behind `#ifndef __HIP_PLATFORM_AMD__`,
    or port that part to the ROCm library that covers it, if one does.
    """

    code = "HP333"
    slug = "header-without-counterpart"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


# --------------------------------------------------------------------------- checks


def _names() -> frozenset[str]:
    d = _data()
    return d.image | frozenset(d.surface) | frozenset(d.void_pointer) | frozenset(d.device) \
        | d.mask_functions


_CALLED = any_word_of(_names())
_VOID_CAST = re.compile(r"^\(\s*void\s*\*\s*\*\s*\)|^reinterpret_cast\s*<\s*void\s*\*\s*\*\s*>")


@REGISTRY.visits("call_expression", names=_CALLED, codes=(
    VoidPointerArgument, SyncMaskNarrowCall, ImageApiUnavailable, SurfaceSignature, DeviceFunctionMissing))
def _call(node: Node, ctx: Context) -> None:
    fn = node.child_by_field_name("function")
    if fn is None:
        return
    templated = fn.type == "template_function"
    name_node = fn.child_by_field_name("name") if templated else fn
    if name_node is None or name_node.type != "identifier":
        return
    name, d = ctx.text(name_node), _data()
    args = call_arguments(node)
    if name in d.mask_functions and args:
        _check_mask(ctx, node, name, args[0])
    if name in d.image and (lacking := gpus.without_images(gpus.archs_of(ctx.options))):
        ctx.report(ImageApiUnavailable, node,
                   f"`{name}` is unavailable on {', '.join(lacking)}: HIP has no image support there",
                   "read the buffer the texture or surface was made on with plain loads "
                   "(interpolate in code), or build for gfx90a / RDNA only")
    if name in d.surface:
        _check_surface(ctx, node, name, args, templated, d.surface[name])
    if name in d.void_pointer:
        _check_void_pointer(ctx, node, name, args, *d.void_pointer[name])
    if name in d.device:
        _report_device(ctx, name_node, name, d.device[name])


def _check_mask(ctx: Context, call: Node, name: str, mask: Node) -> None:
    if ctx.options.rocm < (7, 0, 0) and (name == "__syncwarp" or name.startswith("__reduce_")):
        return  # not in HIP 6.x at all: the warp rules say so
    while mask.type == "parenthesized_expression" and mask.named_child_count == 1:
        mask = mask.named_children[0]
    if mask.type != "identifier":
        return
    var = ctx.text(mask)
    declared = _declared_type(ctx, call, var)
    if declared in _data().narrow_types:
        ctx.report(SyncMaskNarrowCall, call,
                   f"`{var}` (`{declared}`, 32 bits or less) is the mask of `{name}`: HIP's "
                   "*_sync functions static_assert a 64-bit mask, so this does not compile",
                   f"declare `{var}` as `unsigned long long`", fix=widen.variable_edits(ctx, call, var))
    elif found := narrow_instantiation(ctx, call, var, declared, _data().narrow_types):
        param, instance, line = found
        ctx.report(SyncMaskNarrowCall, call,
                   f"`{var}` (template type `{param}`) is the mask of `{name}`, and `{instance}` "
                   f"(line {line}) makes it 32 bits: HIP's *_sync functions static_assert a 64-bit "
                   "mask, so that instantiation does not compile",
                   f"instantiate with `unsigned long long`, or convert `{var}` to it at the call")


def _check_surface(ctx: Context, call: Node, name: str, args: list[Node], templated: bool,
                   hip_count: int) -> None:
    if name.endswith("read") and templated and args and not ctx.text(args[0]).startswith("&"):
        ctx.report(SurfaceSignature, call, f"`{name}<T>(surface, ...)` returns the value in CUDA; "
                   f"HIP's {name} only writes through a pointer first argument",
                   f"T v; {name}(&v, surface, ...)")
    elif len(args) == hip_count + 1:
        ctx.report(SurfaceSignature, call, f"`{name}` takes no boundary-mode argument in HIP "
                   f"(`{ctx.text(args[-1])}` here)",
                   "drop it; HIP neither traps nor clamps out-of-range coordinates there")


def _check_void_pointer(ctx: Context, call: Node, name: str, args: list[Node], index: int,
                        majors: tuple[int, ...]) -> None:
    if ctx.options.rocm[0] not in majors or len(args) <= index:
        return
    arg = args[index]
    arg_text = ctx.text(arg)
    if _VOID_CAST.match(arg_text) or _points_to_void(ctx, call, arg):
        return
    edits = [Edit(arg.start_byte, arg.start_byte, b"reinterpret_cast<void**>("),
             Edit(arg.end_byte, arg.end_byte, b")")]
    hip = name.replace("cuda", "hip", 1)
    ctx.report(VoidPointerArgument, arg,
               f"`{arg_text}` passed to {hip}, which takes void** in the HIP "
               f"{ctx.options.rocm[0]}.x headers (CUDA's T** overload is not there)",
               f"reinterpret_cast<void**>({arg_text})", fix=edits)


def _points_to_void(ctx: Context, call: Node, arg: Node) -> bool:
    """``&p`` where ``p`` is declared ``void*`` in the function: already void**."""
    if arg.type != "pointer_expression" or not ctx.text(arg).startswith("&"):
        return False
    inner = arg.child_by_field_name("argument")
    return inner is not None and inner.type == "identifier" and \
        _declared_type(ctx, call, ctx.text(inner), pointer=True) == "void*"


def _report_device(ctx: Context, where: Node, name: str, facts: dict) -> None:
    """Rename to the HIP spelling the data gives, or report the route. A name the project
    defines itself is its own function; a device-only spelling is not applied where the
    call may run on the host."""
    if ctx.branches.provides(name) or _defined_here(ctx, name):
        return
    fix = facts.get("fix")
    if fix is None:
        ctx.report(DeviceFunctionMissing, where, f"`{name}` is not in HIP", facts["route"])
    elif facts.get("device_only") and not _device_only(ctx, where):
        ctx.report(DeviceFunctionMissing, where,
                   f"`{name}` is not in HIP; `{fix}` ({facts['why']}) is device-only and this "
                   "code may run on the host", f"`{fix}` in a device-only function; on the host, the "
                   "standard library's (with the arguments cast to CUDA's parameter type)")
    else:
        ctx.report(DeviceFunctionMissing, where, f"`{name}` is not in HIP: `{fix}` does the same "
                   f"({facts['why']})", fix, fix=[Edit(where.start_byte, where.end_byte, fix.encode())])


def _defined_here(ctx: Context, name: str) -> bool:
    """The file defines ``name`` itself (a function or a macro): its own, not CUDA's."""
    cache = ctx.scratch.setdefault("released_headers.defined", {})
    if name not in cache:
        cache[name] = bool(declares(ctx.src, (), name)) or re.search(
            rb"#[ \t]*define[ \t]+" + re.escape(name.encode()) + rb"\b", ctx.src) is not None
    return cache[name]


def _device_only(ctx: Context, node: Node) -> bool:
    """Inside a ``__global__`` or ``__device__`` function that is not also ``__host__``."""
    func = facts.enclosing_function(ctx, node)
    if func is None:
        return False
    quals = function_qualifiers(ctx.src, func)
    return "__host__" not in quals and bool(quals & {"__global__", "__device__"})


@REGISTRY.visits("preproc_function_def", codes=(ApiNameBuiltByMacro,))
def _pasting_macro(node: Node, ctx: Context) -> None:
    """``#define RT(name) cuda##name``: the names the macro builds are never written, so
    never rewritten. The deep engine reports each use; this reports the definition, where
    the compiler's "expanded from macro" note points."""
    value = node.child_by_field_name("value")
    if value is None or b"##" not in ctx.src[value.start_byte:value.end_byte]:
        return
    m = _pasted_prefix().search(ctx.text(value))
    if m is not None:
        name = node.child_by_field_name("name")
        macro = ctx.text(name) if name is not None else "?"
        ctx.report(ApiNameBuiltByMacro, node.child_by_field_name("name") or node,
                   f"macro `{macro}` pastes the CUDA prefix `{m[1]}` onto its argument: the names it "
                   "builds are not rewritten, so the HIP build still uses the CUDA ones",
                   f"write the names out, or paste the HIP prefix in a HIP branch of `{macro}`")


@lru_cache(maxsize=1)
def _pasted_prefix() -> re.Pattern[str]:
    prefixes = sorted(_data().pasted_prefixes, key=len, reverse=True)
    return re.compile(r"(?<![\w])(" + "|".join(map(re.escape, prefixes)) + r")\s*##")


@REGISTRY.visits("preproc_include")
def _include(node: Node, ctx: Context) -> None:
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return
    header = ctx.text(path)[1:-1].strip()
    res = ctx.view.header(header)
    if res is not None and res.action == "none" and header not in _data().headers_elsewhere:
        ctx.scratch.setdefault("released_headers.none", []).append((node, header, res))


@REGISTRY.visits_file(codes=(HeaderWithoutCounterpart,))
def _report_headers(ctx: Context) -> None:
    """After the walk, so that a line another rule already explains is left to it."""
    explained = {f.line for f in ctx.findings}
    for node, header, res in ctx.scratch.get("released_headers.none", ()):
        if ctx.position(node.start_byte)[0] not in explained:
            ctx.report(HeaderWithoutCounterpart, node, f"`#include <{header}>`: {res.library} has "
                       f"no HIP counterpart" + (f" ({res.note})" if res.note else ""),
                       "keep this code CUDA-only (#ifndef __HIP_PLATFORM_AMD__) or port it")


@dataclass
class _Definitions:
    """Per file: every function definition, in walk order, and how often each name is
    defined. Only a name defined twice can collapse, so only those are judged (mapping
    every parameter of every definition was a visible share of convert)."""

    found: list[tuple[Node, Node, str, bool]] = field(default_factory=list)  # (def, declarator, name, in macro)
    names: collections.Counter = field(default_factory=collections.Counter)


@REGISTRY.visits("function_definition", codes=(OverloadCollapse,))
def _definition(node: Node, ctx: Context) -> None:
    """Note each definition's name; ``_overloads`` judges them once the walk is over."""
    func = node.child_by_field_name("declarator")
    while func is not None and func.type != "function_declarator":
        func = func.child_by_field_name("declarator")
    if func is None or (name_node := func.child_by_field_name("declarator")) is None:
        return
    name = ctx.text(name_node)
    state = ctx.state(_Definitions)
    state.found.append((node, func, name, ctx.in_macro_body))
    state.names[name] += 1


@REGISTRY.visits_file(codes=(OverloadCollapse,))
def _overloads(ctx: Context) -> None:
    """Remember each definition's mapped signature; a second with the same one collapses."""
    state = ctx.states.get(_Definitions)
    if state is None:
        return
    seen: dict[tuple, tuple[tuple[str, ...], int]] = {}
    for node, func, name, in_macro in state.found:
        if state.names[name] > 1:
            _judge_definition(ctx, node, func, name, in_macro, seen)


def _judge_definition(ctx: Context, node: Node, func: Node, name: str, in_macro: bool,
                      seen: dict[tuple, tuple[tuple[str, ...], int]]) -> None:
    params = func.child_by_field_name("parameters")
    written = tuple(_parameter_type(ctx, p) for p in (params.named_children if params else ())
                    if p.type in ("parameter_declaration", "optional_parameter_declaration"))
    mapped = tuple(_WORD.sub(lambda m: _hip_name(ctx, m[0]), t) for t in written)
    if mapped == written:
        return
    key = (_scope(ctx, node), name, mapped)
    if key not in seen:
        seen[key] = (written, ctx.position(node.start_byte)[0])
        return
    first, line = seen[key]
    if first != written:
        ctx.report(OverloadCollapse, func,
                   f"`{name}({', '.join(written)})` and `{name}({', '.join(first)})` (line {line}) "
                   f"both become `{name}({', '.join(mapped)})` on HIP: a redefinition",
                   "the second is kept for CUDA only (#ifndef __HIP_PLATFORM_AMD__): on HIP "
                   "every call reaches the first", fix=[] if in_macro else _cuda_only(ctx, node))


def _cuda_only(ctx: Context, node: Node) -> list[Edit]:
    """Edits that put a definition (with its ``template <…>``) under
    ``#ifndef __HIP_PLATFORM_AMD__``; none when it does not stand on lines of its own."""
    if node.parent is not None and node.parent.type == "template_declaration":
        node = node.parent
    src = ctx.src
    start = src.rfind(b"\n", 0, node.start_byte) + 1
    end = src.find(b"\n", node.end_byte)
    end = len(src) if end < 0 else end
    rest = src[node.end_byte:end].strip()
    if src[start:node.start_byte].strip() or (rest and not rest.startswith(b"//")):
        return []
    newline = b"\r\n" if b"\r\n" in src else b"\n"
    return [Edit(start, start, b"#ifndef __HIP_PLATFORM_AMD__" + newline),
            Edit(node.end_byte, node.end_byte, newline + b"#endif")]


_WORD = re.compile(r"[A-Za-z_]\w*")


def _hip_name(ctx: Context, word: str) -> str:
    res = ctx.view.resolve(word)
    return res.target if res is not None and res.apply and res.target else word


def _parameter_type(ctx: Context, param: Node) -> str:
    """A parameter's text without its name or default: ``const CUresult &e`` → ``const CUresult &``."""
    out = ctx.text(param)
    default = param.child_by_field_name("default_value")
    if default is not None:
        out = ctx.src[param.start_byte:default.start_byte].decode("utf-8", "replace").rstrip(" =")
    node = param.child_by_field_name("declarator")
    while node is not None and node.type != "identifier":
        node = node.child_by_field_name("declarator") or (
            node.named_children[-1] if node.named_children else None)
    if node is not None:
        cut_from, cut_to = node.start_byte - param.start_byte, node.end_byte - param.start_byte
        raw = ctx.text(param)
        out = (raw[:cut_from] + raw[cut_to:])[:len(out) - (cut_to - cut_from)] \
            if cut_to <= len(out) else out
    return " ".join(out.replace("*", " * ").replace("&", " & ").split())


def _scope(ctx: Context, node: Node) -> tuple[str, ...]:
    """The namespaces and classes around a definition, outermost last."""
    out = []
    parent = node.parent
    while parent is not None:
        if parent.type in ("namespace_definition", "class_specifier", "struct_specifier"):
            named = parent.child_by_field_name("name")
            out.append(ctx.text(named) if named is not None else f"@{parent.start_byte}")
        parent = parent.parent
    return tuple(out)


# --------------------------------------------------------------------------- declarations

_DECLARATIONS = ("declaration", "parameter_declaration")


def _declared_type(ctx: Context, at: Node, name: str, pointer: bool = False) -> str | None:
    """The type ``name`` is declared with in the function holding ``at`` (a parameter or a
    declaration before it), normalised (``unsigned  int`` → ``unsigned int``); with
    ``pointer``, a ``*`` declarator adds ``*``. None when not declared there."""
    func = enclosing_function(at)
    if func is None:
        return None
    found: str | None = None
    stack = [func]
    while stack:
        node = stack.pop()
        if node.start_byte >= at.start_byte and node.type != "function_definition":
            continue
        if node.type in _DECLARATIONS:
            t = _type_of(ctx, node, name, pointer)
            if t is not None:
                found = t
        stack.extend(node.named_children)
    return found


def _type_of(ctx: Context, decl: Node, name: str, pointer: bool) -> str | None:
    type_node = decl.child_by_field_name("type")
    if type_node is None:
        return None
    quals = [ctx.text(c) for c in decl.named_children
             if c.type in ("type_qualifier", "sized_type_specifier") and c != type_node]
    base = " ".join([*(q for q in quals if q != "const"), ctx.text(type_node)])
    for declarator in decl.children_by_field_name("declarator"):
        node, stars = declarator, ""
        while node is not None and node.type in ("init_declarator", "pointer_declarator",
                                                 "reference_declarator"):
            if node.type == "pointer_declarator":
                stars += "*"
            node = node.child_by_field_name("declarator") or (
                node.named_children[0] if node.named_children else None)
        if node is not None and node.type == "identifier" and ctx.text(node) == name:
            if stars and not pointer:
                return None
            return " ".join(base.split()) + (stars if pointer else "")
    return None
