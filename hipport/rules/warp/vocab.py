"""The CUDA warp vocabulary the HP2xx rules read: builtins, mask types, index names."""

from __future__ import annotations

import re

#: Warp-sync builtins HIP gates behind HIP_ENABLE_WARP_SYNC_BUILTINS before 7.0.
SYNC_BUILTINS = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
    "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync",
})
#: Warp-sync builtins that do not exist at all before ROCm 7.0.
NEW_IN_7 = frozenset({
    "__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
})
#: Builtins whose first argument is a lane mask.
MASKED = SYNC_BUILTINS | NEW_IN_7
#: Builtins that return a lane mask (64 bits on HIP).
BALLOTS = frozenset({"__ballot", "__ballot_sync", "__activemask", "__match_any_sync", "__match_all_sync"})
#: 32-bit bit operations and their 64-bit counterparts.
BIT_OPS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll", "__brev": "__brevll"}
#: Shuffles: index of the lane-offset argument and of the optional ``width`` argument.
SHUFFLES: dict[str, tuple[int | None, int]] = {
    "__shfl": (None, 2), "__shfl_up": (1, 2), "__shfl_down": (1, 2), "__shfl_xor": (1, 2),
    "__shfl_sync": (None, 3), "__shfl_up_sync": (2, 3), "__shfl_down_sync": (2, 3),
    "__shfl_xor_sync": (2, 3),
}
#: Warp operations over the physical wave whatever the code's group size: votes and masks
#: (``logical.logical_group_function``: a function making one works on no 32-lane group).
WAVE_WIDE = re.compile(rb"__ballot|__activemask|__any|__all|__match_|__reduce_|__uni_sync|__lanemask")
#: The xor (butterfly) shuffles: ``lane ^ offset`` stays in a 32-lane group for offsets under 32.
XOR_SHUFFLES = frozenset({"__shfl_xor", "__shfl_xor_sync"})
assert XOR_SHUFFLES <= set(SHUFFLES)
#: Types of 32 bits a mask must not be stored in.
MASK32_TYPES = frozenset({
    "unsigned", "unsigned int", "uint32_t", "std::uint32_t", "int", "int32_t", "uint", "signed",
})
#: Names that, in device code, hold a thread index.
THREAD_NAMES = frozenset({"tid", "tidx", "thread_id", "threadId", "thread_idx", "threadIdx_x", "ltid"})
AMDGCN_MACROS = frozenset({"__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"})

_WARP_SIZE_NAME = re.compile(
    r"(?:^|_)(?:k_?)?warp(?:_?(?:size|sz|threads|lanes|width|len))?$|(?:threads|lanes)_?per_?warp$", re.I
)
WARP_LOG_NAME = re.compile(r"log2?_?warp|warp_?(?:size_?)?log", re.I)
#: Both warp-size name patterns need "warp" in the name: the text pre-filter of their visitors.
WARP_WORD = re.compile(rb"warp", re.I)
assert all("warp" in p.pattern for p in (_WARP_SIZE_NAME, WARP_LOG_NAME))

FULL_MASK_64 = b"0xffffffffffffffffull"


def is_warp_size_name(name: str) -> bool:
    """``WARP_SIZE``, ``kWarpSize``, ``threads_per_warp``… (not ``warpSize`` itself)."""
    return name != "warpSize" and bool(_WARP_SIZE_NAME.search(name))

#: Bytes one of which a function's text contains when it calls a MASKED or BALLOTS builtin.
WARP_CALL_HINTS = (b"_sync", b"__ballot", b"__activemask")
assert all(any(h.decode() in n for h in WARP_CALL_HINTS) for n in MASKED | BALLOTS | SYNC_BUILTINS)
#: Bytes one of which a function's text contains when the facts can find it device-like
#: without qualifiers: every MASKED and BALLOTS name, and the thread builtins.
DEVICE_LIKE_HINTS = (b"_sync", b"__ballot", b"__activemask", b"threadIdx", b"blockDim")
assert all(any(h.decode() in n for h in DEVICE_LIKE_HINTS) for n in MASKED | BALLOTS | {"threadIdx", "blockDim"})
