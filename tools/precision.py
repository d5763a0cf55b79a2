"""Precision per rule on the labelled set (tests/precision/): real-code excerpts, every
finding hipport reports on them judged true or false by hand once, in ``<project>.labels``.

    python tools/precision.py            # the table, per project and overall
    python tools/precision.py --json     # the same as data

``tests/test_precision_set.py`` runs the same measurement: a finding without a label fails
it (judge it, then add the line), and so does a true finding that is no longer reported.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "tests" / "precision"

#: What torch.utils.cpp_extension defines for a ROCm extension build (COMMON_HIP_FLAGS,
#: COMMON_HIPCC_FLAGS of torch 2.13), for projects built that way.
_TORCH_HIP_DEFINES = ("__HIP_PLATFORM_AMD__=1", "USE_ROCM=1", "HIPBLAS_V2", "CUDA_HAS_FP16=1",
                      "__HIP_NO_HALF_OPERATORS__=1", "__HIP_NO_HALF_CONVERSIONS__=1",
                      "HIP_ENABLE_WARP_SYNC_BUILTINS=1")

#: Each project of the set: its directory and how it is scanned (as its HIP build would be).
PROJECTS: dict[str, dict] = {
    "llama.cpp": {"hip_guards": ("GGML_USE_HIP",)},  # ggml-cuda: ported, its HIP build defines it
    "cub": {"hip_guards": ()},  # NVIDIA CUB: CUDA-only, scanned as it is
    # DeepSpeed: ported by __HIP_PLATFORM_AMD__ branches, named as its HIP build's guard; its op
    # builders pass -I csrc/includes and the op's includes/ (op_builder/transformer_inference.py
    # include_paths) and, on ROCm, the -D/-U of op_builder/builder.py (a gfx942 wave of 64, ROCm 7.2)
    "deepspeed": {"hip_guards": ("__HIP_PLATFORM_AMD__",), "include_dirs": ("includes",),
                  "defines": ("ROCM_WAVEFRONT_SIZE=64", "ROCM_VERSION_MAJOR=7", "ROCM_VERSION_MINOR=2",
                              "BF16_AVAILABLE"),
                  "undefines": ("__HIP_NO_HALF_OPERATORS__", "__HIP_NO_HALF_CONVERSIONS__",
                                "__HIP_NO_HALF2_OPERATORS__")},
    "vllm": {"hip_guards": ("USE_ROCM",)},  # vLLM csrc: its HIP build defines USE_ROCM, named
    # Built for ROCm by torch's cpp_extension (hipify, then hipcc): its COMMON_HIP_FLAGS and
    # COMMON_HIPCC_FLAGS (torch 2.13) define these; mamba-ssm also passes -I csrc/selective_scan
    **{name: {"hip_guards": ("USE_ROCM",), "include_dirs": dirs, "defines": _TORCH_HIP_DEFINES}
       for name, dirs in (("exllamav2", ()), ("auto-gptq", ()), ("mamba-ssm", (".",)))},
    # torch-scatter, torch-sparse: the same build; their setup.py adds WITH_CUDA (and USE_ROCM)
    **{name: {"hip_guards": ("USE_ROCM",), "defines": (*_TORCH_HIP_DEFINES, "WITH_CUDA")}
       for name in ("torch-scatter", "torch-sparse")},
    # mmcv 1.x: the same build; its setup.py adds MMCV_WITH_HIP (its HIP guard), MMCV_WITH_CUDA
    # and -I mmcv/ops/csrc/{pytorch,common,common/cuda}
    "mmcv": {"hip_guards": ("MMCV_WITH_HIP",), "include_dirs": ("common/cuda",),
             "defines": (*_TORCH_HIP_DEFINES, "MMCV_WITH_HIP", "MMCV_WITH_CUDA")},
}


@dataclass
class Measure:
    project: str
    labels: dict[tuple[str, int, str], bool]
    found: set[tuple[str, int, str]] = field(default_factory=set)

    @property
    def unlabelled(self) -> list[tuple[str, int, str]]:
        return sorted(self.found - set(self.labels))

    @property
    def missed(self) -> list[tuple[str, int, str]]:
        """True findings no longer reported: lost recall."""
        return sorted(k for k, v in self.labels.items() if v and k not in self.found)

    def per_rule(self) -> dict[str, tuple[int, int]]:
        """Rule -> (true findings reported, findings reported)."""
        true, seen = Counter(), Counter()
        for k in self.found:
            seen[k[2]] += 1
            true[k[2]] += bool(self.labels.get(k))
        return {code: (true[code], seen[code]) for code in sorted(seen)}


def read_labels(path: Path) -> dict[tuple[str, int, str], bool]:
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        at, code, verdict, *_ = line.split()
        file, _, number = at.rpartition(":")
        if verdict not in ("true", "false"):
            raise ValueError(f"{path}:{n}: verdict must be true or false, not {verdict!r}")
        out[(file, int(number), code)] = verdict == "true"
    return out


def measure(project: str) -> Measure:
    from hipport.options import DEFAULT_HIP_GUARDS, Options
    from hipport.pipeline import collect, scan_paths

    root = HERE / project
    how = PROJECTS[project]
    opts = Options(jobs=1, hip_guards=DEFAULT_HIP_GUARDS + how["hip_guards"],
                   include_dirs=tuple(root / d for d in how.get("include_dirs", ())),
                   defines=how.get("defines", ()), undefines=how.get("undefines", ()))
    m = Measure(project, read_labels(HERE / f"{project}.labels"))
    # through collect, as scan reports: it drops the findings of CUDA-build-only headers
    for f in collect(scan_paths([root], opts), opts, "scan", with_rules=False).findings:
        m.found.add((Path(f.path).relative_to(root).as_posix(), f.line, f.code))
    return m


def _ratio(true: int, seen: int) -> str:
    return f"{true}/{seen} = {100 * true / seen:.0f}%" if seen else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    measures = [measure(p) for p in PROJECTS]
    if args.json:
        print(json.dumps({m.project: m.per_rule() for m in measures}, indent=2))
        return 0
    total = Counter()
    for m in measures:
        print(f"{m.project}: precision per rule (true reported / reported)")
        for code, (true, seen) in m.per_rule().items():
            print(f"  {code}  {_ratio(true, seen)}")
            total[code, 0] += true
            total[code, 1] += seen
        rows = m.per_rule().values()
        print(f"  all    {_ratio(sum(a for a, _ in rows), sum(b for _, b in rows))}")
        for k in m.unlabelled:
            print(f"  UNLABELLED {k}")
        for k in m.missed:
            print(f"  MISSED {k}")
    codes = sorted({c for c, _ in total})
    print("overall")
    for code in codes:
        print(f"  {code}  {_ratio(total[code, 0], total[code, 1])}")
    return 1 if any(m.unlabelled or m.missed for m in measures) else 0


if __name__ == "__main__":
    sys.exit(main())
