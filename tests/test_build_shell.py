"""Shell build scripts: only the lines that run nvcc are ported."""

from __future__ import annotations

from hipport.options import Options
from hipport.rewrite.buildfiles import transform


def convert(src: str) -> tuple[str, list[str]]:
    new, findings, _ = transform(src.encode(), "build.sh", Options(apply_fixes=True))
    return new.decode(), [f.code for f in findings]


def test_nvcc_lines_are_ported_and_others_left() -> None:
    src = ("#!/bin/sh\n# nvcc -arch=sm_80 stays in a comment\nset -e\n"
           "nvcc -O3 -arch=sm_80 --use_fast_math -I$CUDA_HOME/include \\\n"
           "  -o app main.cu -L/usr/local/cuda/lib64 -lcudart -lcublas\n"
           "gcc -arch x86_64 -G -o tool tool.c\n")
    out, codes = convert(src)
    assert out == ("#!/bin/sh\n# nvcc -arch=sm_80 stays in a comment\nset -e\n"
                   "hipcc -O3 --offload-arch=gfx942 -ffast-math -I$ROCM_PATH/include \\\n"
                   "  -o app main.cu -L/opt/rocm/lib -lamdhip64 -lhipblas\n"
                   "gcc -arch x86_64 -G -o tool tool.c\n")
    assert sorted(codes) == ["HP601", "HP608"]
    assert convert(out)[0] == out


def test_nvcc_from_a_variable() -> None:
    out, codes = convert('"$NVCC" -maxrregcount=32 -c k.cu\n${NVCC} -G -c k.cu\n')
    assert out == '"$NVCC" -c k.cu\n${NVCC} -g -O0 -c k.cu\n'
    assert codes == ["HP603", "HP603"]
