"""A deliberate 32-lane logical warp: code that writes down the physical wave of 64 elsewhere.

llama.cpp's ggml-cuda runs on CDNA with ``#define WARP_SIZE 32`` in common.cuh, beside::

    static constexpr __device__ int ggml_cuda_get_physical_warp_size() {
    #if defined(GGML_USE_HIP) && (defined(__GFX9__) || defined(__GFX8__))
        return 64;
    ...

Its WARP_SIZE is a logical warp of 32 lanes, passed as every shuffle's width (a width-32
shuffle works within 32-lane groups of a 64-lane wave); the physical wave is the other
name. A project that spells a wave size of 64 under a warp- or wave-size name (a macro, a
constant, or a function returning it) knows waves can be 64, so its separate 32 is the
author's choice, not the 32-lane assumption HP209 and HP214 look for. A file that never
writes such a 64 (the rules' fixtures, a CUDA-only kernel) keeps its findings. The file
and the project headers a HIP pass surely compiles are read (``Branches.header_texts``),
only when a candidate finding asks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.parse import call_arguments, call_name, function_qualifiers, walk
from hipport.preprocessor.includers import HEADER_SUFFIXES
from hipport.rules.warp.instances import template_values
from hipport.rules.warp.offsets import spelled_below_32
from hipport.rules.warp.syntax import small_constant, step_of, strip, writes_of
from hipport.rules.warp.vocab import SHUFFLES, WAVE_WIDE, XOR_SHUFFLES, is_warp_size_name

if TYPE_CHECKING:
    from hipport.context import Context
    from hipport.options import Options
    from hipport.parse import Node

#: A warp- or wave-size name (``WARP_SIZE``, ``physical_warp_size``, ``kWaveSize``,
#: ``WAVEFRONT_SIZE``, ``warp_lanes``…), as the regexes below spell it.
_SIZE_NAME = rb"\w*(?:[Ww]arp|WARP|[Ww]ave|WAVE)(?:front|FRONT)?_?(?:[Ss]ize|SIZE|[Ww]idth|WIDTH|[Ll]anes|LANES)\w*"
#: AMD's name for the wave size: ``__AMDGCN_WAVEFRONT_SIZE``, ``ROCM_WAVEFRONT_SIZE``…
_WAVEFRONT_NAME = rb"\w*(?:WAVEFRONT|[Ww]avefront)_?(?:SIZE|[Ss]ize)\w*"
_WAVE64 = re.compile(
    rb"#[ \t]*define[ \t]+" + _SIZE_NAME + rb"[ \t]+\(?64\)?[ \t]*\r?(?:$|//|/\*)"  # #define WAVE_SIZE 64
    rb"|\b" + _SIZE_NAME + rb"[ \t]*=[ \t]*64\b"  # constexpr int kWaveSize = 64
    rb"|\b" + _SIZE_NAME + rb"[ \t]*\([ \t]*(?:void)?[ \t]*\)[^;{}]*\{[^{}]*?\breturn[ \t]+64[ \t]*;",  # f() { return 64; }
    re.M)
#: A warp-size name given AMD's wavefront size, whatever its value (DeepSpeed's
#: ``constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;``, its build's ``-D`` of the GPU's
#: wave, beside ``#define WARP_SIZE 32``): the project knows the wave differs from 32.
_WAVEFRONT_VALUE = re.compile(
    rb"#[ \t]*define[ \t]+" + _SIZE_NAME + rb"[ \t]+\(?" + _WAVEFRONT_NAME + rb"\)?[ \t]*\r?(?:$|//|/\*)"
    rb"|\b" + _SIZE_NAME + rb"[ \t]*=[ \t]*\(?" + _WAVEFRONT_NAME + rb"\)?[ \t]*;", re.M)


class _Known:
    """Per file: whether the project spells a wave of 64 (None: not asked yet), its
    project headers' bytes, and the functions and blocks ``logical_group_function`` and
    ``logical_group_block`` judged."""

    def __init__(self) -> None:
        self.wave64: bool | None = None
        self.headers: list[bytes] | None = None
        self.groups: dict[int, bool] = {}  # function start -> ``logical_group_function``
        self.blocks: dict[int, bool] = {}  # block start -> ``_group_preserving``
        #: (line, col, name): ``for_wave64_includers``; name the constant HP209 found, else ""
        self.for_includers: list[tuple[int, int, str]] = []


def _headers(ctx: Context) -> list[bytes]:
    known = ctx.state(_Known)
    if known.headers is None:
        known.headers = ctx.branches.header_texts()
    return known.headers


#: Where ``_WAVE64`` is tried: a 64 standing alone (not ``int64_t``), with the text before it
#: on its line and up to ``_BACK`` bytes above (a function's head before ``return 64;``).
_SIXTY_FOUR = re.compile(rb"(?<![\w.])64(?![\w.])")
_BACK = 400


#: What every ``_SIZE_NAME`` contains: a text (or a window of it) without one of these
#: has no match, and is not searched (the regex's leading ``\w*`` retries at each word).
_SIZE_NAME_PARTS = (b"arp", b"ARP", b"ave", b"AVE")


def _names_wave64(text: bytes) -> bool:
    if not any(part in text for part in _SIZE_NAME_PARTS):
        return False  # both regexes need a _SIZE_NAME
    if b"avefront" in text or b"AVEFRONT" in text:
        if _WAVEFRONT_VALUE.search(text):
            return True
    for m in _SIXTY_FOUR.finditer(text):
        start, end = max(0, m.start() - _BACK), text.find(b"\n", m.end())
        end = len(text) if end < 0 else end
        if any(text.find(part, start, end) >= 0 for part in _SIZE_NAME_PARTS) \
                and _WAVE64.search(text, start, end):
            return True
    return False


def knows_wave64(ctx: Context) -> bool:
    """The file, or a project header a HIP pass surely compiles, names a wave size of 64
    (or gives a warp-size name AMD's wavefront size)."""
    known = ctx.state(_Known)
    if known.wave64 is None:
        known.wave64 = any(_names_wave64(text) for text in (ctx.src, *_headers(ctx)))
    return known.wave64


#: A ``#define`` body of 32: ``32``, ``32u``, ``(32)``.
_BODY_32 = re.compile(r"\(?32[uU]?\)?")


def defined_as_32(ctx: Context, name: str) -> bool:
    """``#define name 32`` where a HIP pass surely compiles it, in the file or a project
    header (the width of ``__shfl_xor_sync(…, WARP_SIZE)`` in quantize.cu is common.cuh's);
    not one only a CUDA build compiles (vLLM's ``#define WARP_SIZE 32`` in the ``#else`` of
    ``#ifdef USE_ROCM``, whose HIP side is ``Utils::get_warp_size()``, 64 on GFX9)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return False
    bodies = ctx.branches.defines(name)
    if bodies is None:  # no conditional anywhere: every #define of the file is compiled
        define = re.compile(rb"#[ \t]*define[ \t]+" + name.encode() + rb"[ \t]+" + _BODY_32.pattern.encode()
                            + rb"[ \t]*\r?(?:$|//|/\*)", re.M)
        return bool(define.search(ctx.src))
    return any(_BODY_32.fullmatch(body) for body in bodies)


def _spells_32(ctx: Context, spelled: str) -> bool:
    """A width or tile size of 32: the literal (``32``, ``32u``) or a name ``defined_as_32``."""
    return spelled.rstrip("uU") == "32" or defined_as_32(ctx, spelled)


def logical_width(ctx: Context, width: Node | None) -> bool:
    """A shuffle's explicit ``width`` of 32 (literal, or a macro defined as 32) in a project
    that knows waves can be 64: the 32-lane group is meant."""
    if width is None:
        return False
    spelled = ctx.text(width).strip("() ")
    if not _spells_32(ctx, spelled):
        return False
    return knows_wave64(ctx)


def logical_group_function(ctx: Context, func: Node | None) -> bool:
    """``func`` works in 32-lane groups a wave64-aware project chose (``knows_wave64``): it
    votes on no wave (no ballot, activemask, any/all, match, reduce), each shuffle it
    makes passes an explicit width of 32, and each cooperative-groups tile it names has 32
    lanes (``tiled_partition<WARP_SIZE>`` with WARP_SIZE 32), or a template parameter's
    number of lanes that every instantiation the file spells makes 32 or fewer
    (``instances.template_values``: DeepSpeed's ``attn_softmax<2 … 32, …>``): such tiles
    shuffle within their own lanes on a wave of 64 as on a warp of 32. Then ``threadIdx.x / 32`` there is its group and
    ``% 32`` the lane in it, which a 64-lane wave runs as two groups (vLLM's cache kernels:
    one 32-thread group per head)."""
    if func is None:
        return False
    known = ctx.state(_Known)
    found = known.groups.get(func.start_byte)
    if found is None:
        found = known.groups[func.start_byte] = _logical_groups(ctx, func)
    return found


#: A cooperative-groups tile of the function: its size is the group its lanes work in.
_TILE = re.compile(rb"\b(?:tiled_partition|thread_block_tile)[ \t]*<[ \t]*([^<>;]+?)[ \t]*>")


def _logical_groups(ctx: Context, func: Node, shuffles: bool = True, wave64: bool | None = None) -> bool:
    """``logical_group_function``'s test; with ``shuffles`` False, all but the shuffles';
    ``wave64`` given instead of ``knows_wave64`` (an includer's, ``for_wave64_includers``)."""
    if WAVE_WIDE.search(ctx.src, func.start_byte, func.end_byte) \
            or not (knows_wave64(ctx) if wave64 is None else wave64):
        return False
    for m in _TILE.finditer(ctx.src, func.start_byte, func.end_byte):
        size = m.group(1).decode("utf-8", "replace").strip("() ")
        if not _spells_32(ctx, size) \
                and not all(0 < v <= 32 for v in template_values(ctx, func, size) or (0,)):
            return False  # a tile of the wave (DeepSpeed's tiled_partition<hw_warp_size>) or unknown
    if not shuffles:
        return True
    if not ctx.may_contain(b"shfl", within=func):
        return True  # no shuffle to look at
    for n in walk(func):
        if n.type == "call_expression" and (name := call_name(ctx.src, n)) in SHUFFLES:
            args, at = call_arguments(n), SHUFFLES[name][1]
            if len(args) <= at or not logical_width(ctx, args[at]):
                return False
    return True


def logical_tile(ctx: Context, call: Node, func: Node | None) -> bool:
    """``call`` is a shuffle member of a cooperative-groups tile of 32 lanes that ``func``
    declares (``cg::thread_block_tile<WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(b)``
    with WARP_SIZE 32, then ``g.shfl_down(sum, i)``), in a wave64-aware project: HIP's tile
    shuffles within its 32 lanes (width = the tile's size) on a wave of 64 too, so a ladder
    up to 32 reduces the whole tile, the group the code chose. DeepSpeed's
    transformer/normalize_kernels.cu, built for ROCm (its op builder links no curand there),
    whose ds_kernel_utils.h gives hw_warp_size AMD's wavefront size."""
    fn = call.child_by_field_name("function")
    if func is None or fn is None or fn.type != "field_expression" or not knows_wave64(ctx):
        return False
    obj, member = fn.child_by_field_name("argument"), fn.child_by_field_name("field")
    if obj is None or obj.type != "identifier" or member is None or "shfl" not in ctx.text(member):
        return False
    name = re.escape(ctx.text(obj).encode())
    tile = re.compile(rb"\bthread_block_tile[ \t]*<[ \t]*([^<>;]+?)[ \t]*>[ \t]*(?:const[ \t]*)?&?[ \t]*" + name
                      + rb"\b|\b" + name + rb"[ \t]*=[ \t]*(?:\w+[ \t]*::[ \t]*)*tiled_partition[ \t]*<[ \t]*([^<>;]+?)[ \t]*>")
    sizes = [m.group(1) or m.group(2) for m in tile.finditer(ctx.src, func.start_byte, func.end_byte)]
    return bool(sizes) and all(
        _spells_32(ctx, s.decode("utf-8", "replace").strip("() "))
        for s in sizes)


def logical_group_block(ctx: Context, node: Node, func: Node | None) -> bool:
    """``node`` (32-lane arithmetic) stands in a block of ``func`` whose shuffles all stay
    inside 32-lane groups, in a wave64-aware project, and ``func`` votes on no wave. The
    block is the innermost one around ``node`` holding a shuffle (none: not this case);
    a shuffle keeps to the group with an explicit width of 32 (``logical_width``) or as an
    xor whose offset is under 32: ``lane ^ m`` keeps bit 5, so on a wave of 64 each half
    exchanges within itself, as a 32-lane warp does. vLLM's rocm/skinny_gemms.cu reduces a
    row over the wave (``mask = WARP_SIZE / 2``), then pairs 16-lane rows with
    ``mask = 16 / 2 …`` and ``__shfl_xor(v, 16)`` and lets ``lane % 32 == 0`` write:
    right on wave64. A ``__shfl_down`` without a width crosses from one half into the
    other (lane 31 reads lane 47): it keeps the finding, as an unbounded offset does."""
    if func is None or not knows_wave64(ctx) or WAVE_WIDE.search(ctx.src, func.start_byte, func.end_byte):
        return False
    block = node.parent
    while block is not None and block.start_byte >= func.start_byte:
        if block.type == "compound_statement" and ctx.may_contain(b"shfl", within=block):
            known = ctx.state(_Known).blocks
            found = known.get(block.start_byte)
            if found is None:
                found = known[block.start_byte] = _group_preserving(ctx, block)
            return found
        block = block.parent
    return False


def _group_preserving(ctx: Context, block: Node) -> bool:
    src, calls = ctx.src, 0
    for n in walk(block):
        if n.type != "call_expression" or (name := call_name(src, n)) not in SHUFFLES:
            continue
        calls += 1
        args = call_arguments(n)
        delta_at, width_at = SHUFFLES[name]
        if len(args) > width_at and logical_width(ctx, args[width_at]):
            continue
        if name not in XOR_SHUFFLES or delta_at is None or len(args) <= delta_at \
                or not _below_32(ctx, args[delta_at], n):
            return False
    return calls > 0


def _below_32(ctx: Context, offset: Node, call: Node) -> bool:
    """``offset`` is surely in 0..31: a constant (``16``, ``16 / 2``), a value built from the
    kernel's arguments that each launch the file spells keeps under 32 (``offsets.spelled_below_32``),
    or the variable of a ``for`` around ``call`` that starts at such a constant, halves each
    step and stops at 0 or above (``for (int m = 16 / 2; m >= 1; m /= 2)``)."""
    src = ctx.src
    value = small_constant(src, offset)
    if value is not None:
        return 0 <= value < 32
    if spelled_below_32(ctx, offset, call):
        return True  # under 32 at every launch the file spells (offsets.py)
    offset = strip(offset)
    if offset.type != "identifier":
        return False
    var = ctx.text(offset)
    loop = call.parent
    while loop is not None and loop.type != "for_statement":
        loop = loop.parent
    if loop is None:
        return False
    init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
    decl = init.child_by_field_name("declarator") if init is not None and init.type == "declaration" else None
    if decl is None or decl.type != "init_declarator" or update is None \
            or ctx.text(decl.child_by_field_name("declarator")) != var:
        return False
    start = decl.child_by_field_name("value")
    first = small_constant(src, start) if start is not None else None
    # halving from 0..31 never leaves it, whatever the condition; nothing else may assign it
    body = loop.child_by_field_name("body")
    assigned = body is not None and writes_of(var).search(src[body.start_byte:body.end_byte])
    return first is not None and 0 <= first < 32 and step_of(src, update, var) == "down" and not assigned


#: An identifier: the warp-size names a function may spell (``_wave_blind``).
_WORD = re.compile(rb"[A-Za-z_]\w*")


def wave_blind_function(ctx: Context, func: Node | None) -> bool:
    """Kernel ``func`` behaves on a 64-lane wave as two 32-lane warps, in a wave64-aware
    project: it votes on no wave, each shuffle stays in its 32-lane group (``_group_preserving``:
    an xor by an offset under 32, or a width of 32), each tile has 32 lanes, and it spells
    neither ``warpSize`` nor any warp-size name, so no index depends on the wave's width. Then an xor ladder from 16 reduces each group, as CUDA
    reduces each warp (vLLM's cache_kernels.cu ``indexer_k_quant_and_cache_kernel``: an
    amax over the 32 threads of a row of its (32, 4) block, each thread then using it)."""
    if func is None or "__global__" not in function_qualifiers(ctx.src, func) \
            or not _logical_groups(ctx, func, shuffles=False):
        return False  # a __device__ helper's callers, elsewhere, decide what its sums mean
    body = func.child_by_field_name("body")
    if body is None or not _group_preserving(ctx, body):
        return False
    for m in _WORD.finditer(ctx.src, body.start_byte, body.end_byte):
        word = m.group().decode()
        if word == "warpSize" or is_warp_size_name(word):
            return False  # even one #defined as 32: vLLM's WARP_SIZE is 32 only for CUDA
    return True


def for_wave64_includers(ctx: Context, func: Node | None) -> bool:
    """A header that names no 64-lane wave itself, where ``func`` would be a logical group
    function if it did: the files that include it decide (vLLM's concat_mla_q.cuh, one
    32-thread group per (token, head) doing vector copies, is included by cache_kernels.cu
    after core/cuda_compat.h). Only a function with no shuffle at all: a width of 32 is
    ``logical_width``'s to judge, with the wave known."""
    if func is None or not header_for_includers(ctx) or ctx.may_contain(b"shfl", within=func):
        return False
    return _logical_groups(ctx, func, wave64=True)


def header_for_includers(ctx: Context) -> bool:
    """A header that names no 64-lane wave itself, whose warp-size constant of 32 (HP209) the
    files that include it decide: each that names the 64 makes it a logical warp, as in
    one file. DeepSpeed's csrc/includes/context.h (``#define WARP_SIZE 32``, its transformer
    ops' cooperative-groups tile) is included by custom_cuda_layers.h after
    ds_kernel_utils.h, which gives hw_warp_size AMD's wavefront size."""
    return ctx.path.endswith(HEADER_SUFFIXES) and not knows_wave64(ctx)


#: The name of a deferred finding that holds only where another file of the run includes its
#: file (``instances.never_instantiated``): with none, ``pipeline.collect`` drops it.
UNLESS_INCLUDED = "<unless included>"


def defer_to_includers(ctx: Context, name: str = "") -> None:
    """The finding just reported is one ``for_wave64_includers`` leaves to the includers.
    ``name``: the warp-size constant it defines (HP209), which an includer that never
    spells it cannot be changed by (``pipeline._drop_logical_in_wave64_includers``), or
    ``UNLESS_INCLUDED``."""
    finding = ctx.findings[-1]
    ctx.state(_Known).for_includers.append((finding.line, finding.col, name))


def deferred_to_includers(ctx: Context) -> tuple[tuple[int, int, str], ...]:
    """(line, col, name) of the file's findings that hold only if no includer names a 64-lane wave
    (``pipeline.collect`` drops them when every file including the header does)."""
    known = ctx.states.get(_Known)
    return tuple(known.for_includers) if known is not None else ()


def includer_knows_wave64(src: bytes, path: str, options: Options) -> bool:
    """``knows_wave64`` of a file read anew: it, or a project header a HIP pass of it
    surely compiles, names a wave size of 64."""
    from hipport.preprocessor import model

    return _names_wave64(src) or any(_names_wave64(t) for t in model(src, path, options).header_texts())
