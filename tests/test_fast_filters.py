"""Pre-filters rewritten for speed answer exactly as the forms they replaced."""

from __future__ import annotations

import random
import re

from hypothesis import given, strategies as st

from hipport.rules.warp.shuffles import _SHFL_RE, _spells_shfl


@given(st.binary(max_size=64) | st.lists(st.sampled_from([b"s", b"S", b"h", b"H", b"f", b"F", b"l", b"L",
                                                           b"\xc5", b"\n", b"x"]), max_size=24).map(b"".join))
def test_spells_shfl_is_the_case_blind_search(src: bytes) -> None:
    assert _spells_shfl(src) == (_SHFL_RE.search(src) is not None)


def test_spells_shfl_on_every_casing() -> None:
    rng = random.Random(0)
    for i in range(16):
        word = bytes(c - 32 if i >> k & 1 else c for k, c in enumerate(b"shfl"))
        pad = bytes(rng.choice(b"ab \n") for _ in range(8))
        assert _spells_shfl(pad + word + pad), word
        assert not _spells_shfl(pad + word[:3] + b"_" + word[3:]), word


# -- warpSize aliases: found from the spellings, as file_facts' macros would give them -------

_LINES = [b"#define W warpSize", b"#define W (warpSize)", b"#define V ( warpSize ) // x", b"#define W /*c*/ warpSize",
          b"#define F() warpSize", b"#define W \\\n  warpSize", b"int x = warpSize;", b"#define warpSize 64",
          b"#if 1", b"#else", b"#endif", b"void f(){", b"}", b"#define W warpSize*2", b"#define Y XwarpSize",
          b"#define W warpSize /* warpSize */", b"struct {", b"#define W2 warpSize", b"k<<<1, warpSize>>>();",
          b"#undef W", b'const char* s = "#define Q warpSize";', b"/* #define C warpSize */"]


def _aliases_both_ways(src: bytes) -> tuple[frozenset[str], frozenset[str]]:
    from hipport import facts
    from hipport.analyze import mapping_view
    from hipport.context import Context
    from hipport.options import Options
    from hipport.parse import parse
    from hipport.rules.warp.warpsize import _defined_as_warp_size

    o = Options()
    ctx = Context(path="x.cu", src=src, tree=parse(src), options=o,
                  view=mapping_view(o.rocm, o.roc, o.experimental, o.mappings))
    reference = frozenset(name for name, defs in facts.file_facts(ctx).macros.items()
                          if any(body.strip("() ") == "warpSize" for body, _ in defs))
    return _defined_as_warp_size(ctx), reference


@given(st.lists(st.sampled_from(_LINES), max_size=12))
def test_warp_size_aliases_are_file_facts_macros_defined_as_warp_size(lines: list[bytes]) -> None:
    found, reference = _aliases_both_ways(b"\n".join(lines) + b"\n")
    assert found == reference


def test_warp_size_aliases_examples() -> None:
    assert _aliases_both_ways(b"#define W (warpSize)\n#define F() warpSize\n#define X warpSize*2\n")[0] == {"W"}
    assert _aliases_both_ways(b"void f() {\n#define W \\\n  warpSize\n}\n")[0] == {"W"}


# -- directive starts: the '#'-driven search finds what the multi-line regex found ----------

_DIRECTIVE_START = re.compile(rb"^[ \t]*#[ \t]*([A-Za-z_]\w*)?", re.M)


@given(st.lists(st.sampled_from([b"#", b" ", b"\t", b"\n", b"\r", b"define", b"if", b"x", b"1", b"_a", b"\\", b"/*"]),
                max_size=40).map(b"".join))
def testdirective_starts_are_the_multiline_regex_matches(src: bytes) -> None:
    from hipport.preprocessor.directives import directive_starts

    expected = [(m.start(), src.index(b"#", m.start()), m.end(), m.group(1)) for m in _DIRECTIVE_START.finditer(src)]
    assert list(directive_starts(src)) == expected


def testdirective_starts_stay_linear_on_a_long_line_of_hashes() -> None:
    from hipport.preprocessor.directives import directive_starts

    src = b"x" + b"#" * 2_000_000 + b"\n  # define A\n"
    assert [name for *_, name in directive_starts(src)] == [b"define"]


_OLD_INCLUDER = re.compile(rb'^[ \t]*#[ \t]*(if|ifdef|ifndef|endif|include)\b[ \t]*(?:"([^"\n]+)")?', re.M)


@given(st.lists(st.sampled_from([b"#", b" ", b"\t", b"\n", b"if", b"ifdef", b"endif", b"include", b"def", b'"a.h"',
                                 b'"', b"<b.h>", b"x", b"/*"]), max_size=40).map(b"".join))
def test_own_includes_read_the_directives_the_line_regex_read(src: bytes) -> None:
    from hipport.preprocessor.includers import own_includes

    # the reference: the multi-line regex this replaced, with every include compiled
    depth, expected = 0, []
    for m in _OLD_INCLUDER.finditer(src):
        if m.group(1) == b"include":
            if m.group(2) is not None:
                expected.append((m.group(2).decode("utf-8", "replace"), depth == 0))
        elif m.group(1) == b"endif":
            depth = max(depth - 1, 0)
        else:
            depth += 1

    class NeverCompiled:  # every conditional include is "never compiled": its place is checked
        def never_compiled(self, offset: int) -> bool:
            return True

    assert list(own_includes(src, NeverCompiled)) == (expected if b"include" in src else [])


# -- the file pre-filter: plain searches give what the one alternation gave -----------------

_OLD_CUDA_HINT = re.compile(
    rb"cuda|CUDA|cu[A-Z]|CU_|__global__|__device__|__shared__|__constant__|__managed__"
    rb"|__forceinline__|__launch_bounds__|<<<|threadIdx|blockIdx|blockDim|gridDim"
    rb"|[wW]arp|WARP|__shfl|__ballot|__activemask|__any|__all|__popc|__ffs|__clz|__brev"
    rb"|__sync|__reduce|__match|__ldg|__threadfence|__trap|__nanosleep|__prof|clock"
    rb"|__AMDGCN|asm|cub|thrust|nvcuda|nvrtc|nccl|nvtx|Nv[A-Z]|nvinfer|cutlass|cute"
    rb"|cublas|curand|cufft|cusparse|cusolver|cudnn|cutensor|cufile|cooperative_groups"
    rb"|texture|surf[0-9A-Z]|tex[0-9A-Z]|half|__nv_|bfloat16|fp8|mma|__half|__float"
    rb"|_types\.h|device_functions|device_launch_parameters|math_constants|host_defines"
    rb"|channel_descriptor|sm_[0-9]+_|_functions\.h|host_config|nvToolsExt|nvml|cupti")
_PIECES = [m.replace(b"\\.", b".") for m in _OLD_CUDA_HINT.pattern.split(b"|")] + [
    b"cuX", b"cux", b"NvA", b"surf9", b"surfx", b"texQ", b"tex_", b"sm_80_", b"sm__", b"sm_8", b"types.h", b"Warp",
    b"wArp", b"x", b" ", b"\n", b"_", b"c", b"u"]


@given(st.lists(st.sampled_from(_PIECES), max_size=6).map(b"".join))
def test_looks_like_cuda_is_the_old_alternation(data: bytes) -> None:
    from hipport.files import looks_like_cuda

    assert looks_like_cuda(data) == (_OLD_CUDA_HINT.search(data) is not None)


def test_every_header_the_tables_name_passes_the_pre_filter() -> None:
    """A host file whose only CUDA is ``#include <cupti.h>`` (or nvml.h, nvToolsExt.h) is
    still read, so HP333 can say the header has no counterpart (the blind recall corpus's
    CUPTI tracer got no finding at all)."""
    from hipport.files import looks_like_cuda
    from hipport.mapping import load_table

    table = load_table()
    names = list(table.headers) + [h.cuda for h in table._prefix_headers]
    assert "cupti" in names and "nvml.h" in names
    assert [n for n in names if not looks_like_cuda(b"#include <%s>\nvoid f() {}\n" % n.encode())] == []


def test_looks_like_cuda_on_each_alternative() -> None:
    from hipport.files import looks_like_cuda

    for piece in _PIECES:
        for text in (piece, b"int x; " + piece + b" y;", piece[:-1]):
            assert looks_like_cuda(text) == (_OLD_CUDA_HINT.search(text) is not None), text
