"""Makefile conversion, construct by construct: (CUDA Makefile, expected HIP Makefile, codes).

Every pair is also converted a second time to check that output is a fixed point.
"""

from __future__ import annotations

import pytest

from hipport.options import Options
from hipport.rewrite.buildfiles import transform

OPTS = Options(apply_fixes=True)


def convert(src: str, path: str = "Makefile", options: Options = OPTS):
    new, findings, _ = transform(src.encode(), path, options)
    return new.decode(), findings


CASES = [
    pytest.param(
        "NVCC ?= nvcc\napp: main.cu\n\t$(NVCC) -O3 -arch=sm_80 -o $@ $<\n",
        "NVCC ?= hipcc\napp: main.cu\n\t$(NVCC) -O3 --offload-arch=gfx942 -o $@ $<\n",
        ["HP601"], id="nvcc-variable-and-arch"),
    pytest.param(
        "app: main.cu\n\tnvcc -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 -o app main.cu\n",
        "app: main.cu\n\thipcc --offload-arch=gfx942 -o app main.cu\n",
        ["HP601", "HP601"], id="gencode-pairs-become-one-offload-arch"),
    pytest.param(
        "CUDA_PATH ?= /usr/local/cuda-12.2\nNVCC := $(CUDA_PATH)/bin/nvcc\n"
        "LDFLAGS += -L$(CUDA_PATH)/lib64 -lcudart -lcublas -lcurand\nINC := -I${CUDA_PATH}/include\n",
        "ROCM_PATH ?= /opt/rocm\nNVCC := $(ROCM_PATH)/bin/hipcc\n"
        "LDFLAGS += -L$(ROCM_PATH)/lib -lamdhip64 -lhipblas -lhiprand\nINC := -I${ROCM_PATH}/include\n",
        [], id="root-paths-and-libraries"),
    pytest.param(
        "NVCCFLAGS = -O3 --use_fast_math \\\n\t-Xcompiler -fPIC --expt-relaxed-constexpr -lineinfo\n",
        "NVCCFLAGS = -O3 -ffast-math \\\n\t-fPIC -gline-tables-only\n",
        ["HP608"], id="flag-variable-by-name"),
    pytest.param(
        "OPTS = -O2 -G -maxrregcount=32\nk.o: k.cu\n\tnvcc $(OPTS) -c k.cu\n",
        "OPTS = -O2 -g -O0\nk.o: k.cu\n\thipcc $(OPTS) -c k.cu\n",
        ["HP603", "HP603"], id="flag-variable-used-by-nvcc"),
    pytest.param(
        "CFLAGS = -O2 -G -arch x86_64\nmain.o: main.c\n\t$(CC) $(CFLAGS) -c main.c\n",
        "CFLAGS = -O2 -G -arch x86_64\nmain.o: main.c\n\t$(CC) $(CFLAGS) -c main.c\n",
        [], id="other-compilers-untouched"),
    pytest.param(
        "SMS ?= 70 80\n$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode arch=compute_$(sm),code=sm_$(sm)))\n",
        "SMS ?= 70 80\n$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += --offload-arch=gfx942))\n",
        ["HP601"], id="gencode-in-eval"),
    pytest.param(
        "# nvcc -arch=sm_80 -lcudart /usr/local/cuda\ndefine RULE\nnvcc -arch=sm_80\nendef\n",
        "# nvcc -arch=sm_80 -lcudart /usr/local/cuda\ndefine RULE\nnvcc -arch=sm_80\nendef\n",
        [], id="comments-and-define-untouched"),
    pytest.param(
        "INC = -I$(CUDA_HOME)/extras/CUPTI/include\nLIBS = -lnvidia-ml\n",
        "INC = -I$(ROCM_PATH)/extras/CUPTI/include\nLIBS = -lnvidia-ml\n",
        ["HP605", "HP607"], id="unmapped-path-and-library"),
    pytest.param(
        "k.o: k.cu\n\t$(NVCC) -x cu -rdc=true -c $< -o $@\nNVCC = nvcc\n",
        "k.o: k.cu\n\t$(NVCC) -x hip -fgpu-rdc -c $< -o $@\nNVCC = hipcc\n",
        ["HP602"], id="language-and-rdc"),
    pytest.param(
        "ifneq ($(CUDA_PATH),)\nLIBS := $(shell echo -lcudart)\nendif\n",
        "ifneq ($(ROCM_PATH),)\nLIBS := $(shell echo -lamdhip64)\nendif\n",
        [], id="conditionals-and-shell"),
]


@pytest.mark.parametrize("src,expected,want", CASES)
def test_make_construct(src: str, expected: str, want: list[str]) -> None:
    out, findings = convert(src)
    assert out == expected
    assert sorted(f.code for f in findings) == sorted(want)
    again, _ = convert(out)
    assert again == out, "converting the output again must change nothing"


def test_make_kinds() -> None:
    from pathlib import PurePath

    from hipport.rewrite.buildfiles import kind_of

    for name in ("Makefile", "makefile", "GNUmakefile", "rules.mk", "Makefile.linux"):
        assert kind_of(PurePath(name)) == "make", name


def test_crlf_and_findings_position() -> None:
    out, findings = convert("k: k.cu\r\n\tnvcc -maxrregcount 32 -c k.cu\r\n")
    assert out == "k: k.cu\r\n\thipcc -c k.cu\r\n"
    (f,) = findings
    assert (f.line, f.col, f.code) == (2, 7, "HP603")
