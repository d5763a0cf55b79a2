"""CMake conversion, construct by construct: (CUDA CMake, expected HIP CMake, codes) pairs.

Every pair is also converted a second time to check that output is a fixed point.
"""

from __future__ import annotations

import textwrap

import pytest

from hipport.options import Options
from hipport.rewrite.buildfiles import kind_of, transform

OPTS = Options(apply_fixes=True)


def convert(src: str, path: str = "CMakeLists.txt", options: Options = OPTS):
    new, findings, rewrites = transform(textwrap.dedent(src).encode(), path, options)
    return new.decode(), findings


def codes(findings) -> list[str]:
    return [f.code for f in findings]


CASES = [
    pytest.param(
        "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\n",
        "cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX HIP)\n",
        [], id="project-languages-and-minimum"),
    pytest.param(
        "cmake_minimum_required(VERSION 3.10...3.20)\nproject(p CXX CUDA)\n",
        "cmake_minimum_required(VERSION 3.21)\nproject(p CXX HIP)\n",
        [], id="minimum-range-below"),
    pytest.param(
        "cmake_minimum_required(VERSION 3.18...3.28)\nenable_language(CUDA)\n",
        "cmake_minimum_required(VERSION 3.21...3.28)\nenable_language(HIP)\n",
        [], id="minimum-range-kept-high"),
    pytest.param(
        "cmake_minimum_required(VERSION 3.25)\nproject(CUDA_demo VERSION 1.0 DESCRIPTION CUDA LANGUAGES CUDA)\n",
        "cmake_minimum_required(VERSION 3.25)\nproject(CUDA_demo VERSION 1.0 DESCRIPTION CUDA LANGUAGES HIP)\n",
        [], id="project-keyword-values-kept"),
    pytest.param(
        "include(CheckLanguage)\ncheck_language(CUDA)\nif(CMAKE_CUDA_COMPILER)\n  enable_language(CUDA)\nendif()\n",
        "include(CheckLanguage)\ncheck_language(HIP)\nif(CMAKE_HIP_COMPILER)\n  enable_language(HIP)\nendif()\n",
        [], id="check-language"),
    pytest.param(
        "set(CMAKE_CUDA_STANDARD 17)\nset(CMAKE_CUDA_STANDARD_REQUIRED ON)\n"
        "set(CMAKE_CUDA_FLAGS_RELEASE \"${CMAKE_CUDA_FLAGS_RELEASE} -O3\")\n",
        "set(CMAKE_HIP_STANDARD 17)\nset(CMAKE_HIP_STANDARD_REQUIRED ON)\n"
        "set(CMAKE_HIP_FLAGS_RELEASE \"${CMAKE_HIP_FLAGS_RELEASE} -O3\")\n",
        [], id="language-variables"),
    pytest.param(
        "if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)\n  set(CMAKE_CUDA_ARCHITECTURES 70)\n"
        "  list(APPEND CMAKE_CUDA_ARCHITECTURES 86-real 90-virtual)\n  list(APPEND CMAKE_CUDA_ARCHITECTURES ${MORE})\nendif()\n",
        "if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)\n  set(CMAKE_HIP_ARCHITECTURES gfx942)\n"
        "  list(APPEND CMAKE_HIP_ARCHITECTURES ${MORE})\nendif()\n",
        ["HP601", "HP601", "HP601"], id="architectures-appended"),
    pytest.param(
        'file(GLOB SRCS "k/*.cu")\nlist(APPEND ALL ${SRCS} extra.cu)\nadd_library(m other.cu)\n'
        "set_source_files_properties(${ALL} PROPERTIES LANGUAGE CXX)\n"
        "set_source_files_properties(other.cu PROPERTIES COMPILE_OPTIONS -x;musa LANGUAGE CXX)\n",
        'file(GLOB SRCS "k/*.cu")\nlist(APPEND ALL ${SRCS} extra.cu)\nadd_library(m other.cu)\n'
        "set_source_files_properties(${ALL} PROPERTIES LANGUAGE CXX)\n"
        "set_source_files_properties(other.cu PROPERTIES COMPILE_OPTIONS -x;musa LANGUAGE CXX)\n",
        [], id="sources-the-file-gives-a-language-itself"),
    pytest.param(
        "set(CMAKE_CUDA_ARCHITECTURES 70 75 80)\n",
        "set(CMAKE_HIP_ARCHITECTURES gfx942)\n",
        ["HP601"], id="architectures-variable"),
    pytest.param(
        'set(CMAKE_CUDA_ARCHITECTURES "80;86" CACHE STRING "GPUs")\n',
        'set(CMAKE_HIP_ARCHITECTURES "gfx942" CACHE STRING "GPUs")\n',
        ["HP601"], id="architectures-cache"),
    pytest.param(
        "set_target_properties(k PROPERTIES CUDA_ARCHITECTURES native CUDA_STANDARD 17)\n",
        "set_target_properties(k PROPERTIES HIP_ARCHITECTURES gfx942 HIP_STANDARD 17)\n",
        ["HP601"], id="architectures-property"),
    pytest.param(
        "set(CMAKE_CUDA_ARCHITECTURES ${MY_ARCHS})\n",
        "set(CMAKE_HIP_ARCHITECTURES ${MY_ARCHS})\n",
        ["HP601"], id="architectures-from-variable-reported"),
    pytest.param(
        "set_target_properties(k PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n",
        "set_target_properties(k PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n",
        ["HP602"], id="separable-compilation"),
    pytest.param(
        "add_executable(app main.cpp kernel.cu)\n",
        "add_executable(app main.cpp kernel.cu)\nset_source_files_properties(kernel.cu PROPERTIES LANGUAGE HIP)\n",
        [], id="cu-source-language"),
    pytest.param(
        "if(X)\n  add_library(k STATIC a.cu b.cu) # the kernels\nendif()\n",
        "if(X)\n  add_library(k STATIC a.cu b.cu) # the kernels\n"
        "  set_source_files_properties(a.cu b.cu PROPERTIES LANGUAGE HIP)\nendif()\n",
        [], id="cu-source-indented-after-comment"),
    pytest.param(
        "file(GLOB KERNELS src/*.cu)\nadd_library(k ${KERNELS})\n",
        "file(GLOB KERNELS src/*.cu)\nset_source_files_properties(${KERNELS} PROPERTIES LANGUAGE HIP)\n"
        "add_library(k ${KERNELS})\n",
        [], id="cu-glob"),
    pytest.param(
        "file(GLOB SRC src/*.cpp src/*.cu)\n",
        "file(GLOB SRC src/*.cpp src/*.cu)\n",
        ["HP609"], id="cu-glob-mixed-reported"),
    pytest.param(
        "find_package(CUDAToolkit 11.4 REQUIRED)\n"
        "target_link_libraries(app PRIVATE CUDA::cudart CUDA::cublas CUDA::cusparse)\n",
        "find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)\nfind_package(hipsparse REQUIRED)\n"
        "target_link_libraries(app PRIVATE hip::host roc::hipblas roc::hipsparse)\n",
        [], id="find-package-and-targets"),
    pytest.param(
        "target_link_libraries(app PRIVATE CUDA::curand)\n",
        "find_package(hiprand REQUIRED)\ntarget_link_libraries(app PRIVATE hip::hiprand)\n",
        [], id="target-without-find-package-here"),
    pytest.param(
        "find_package(CUDAToolkit)\ntarget_link_libraries(app PRIVATE CUDA::nvml CUDA::cupti)\n",
        "find_package(hip)\ntarget_link_libraries(app PRIVATE CUDA::nvml CUDA::cupti)\n",
        ["HP605", "HP605"], id="targets-without-counterpart"),
    pytest.param(
        "add_library(k x.cpp)\n\ntarget_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)\n\nset(A 1)\n",
        "add_library(k x.cpp)\n\nset(A 1)\n",
        [], id="genex-all-dropped-command-goes"),
    pytest.param(
        "target_compile_options(k PRIVATE -O2 $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)\n",
        "target_compile_options(k PRIVATE -O2)\n",
        [], id="genex-dropped-others-kept"),
    pytest.param(
        "target_compile_features(k PRIVATE cxx_std_17 cuda_std_17)\n"
        "target_compile_definitions(k PRIVATE $<$<COMPILE_FEATURES:cuda_std_20>:HAS20>)\n",
        "target_compile_features(k PRIVATE cxx_std_17 hip_std_17)\n"
        "target_compile_definitions(k PRIVATE $<$<COMPILE_FEATURES:hip_std_20>:HAS20>)\n",
        [], id="compile-features"),
    pytest.param(
        "target_compile_options(k PRIVATE\n  $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>\n  -Wall)\n",
        "target_compile_options(k PRIVATE\n  -Wall)\n",
        [], id="genex-line-dropped"),
    pytest.param(
        'target_compile_options(k PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-lineinfo;-Xcompiler=-fPIC,-Wall>")\n',
        'target_compile_options(k PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:-gline-tables-only;-fPIC;-Wall>")\n',
        [], id="genex-list-flags"),
    pytest.param(
        'target_compile_options(k PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-Xcompiler -fopenmp>")\n',
        'target_compile_options(k PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:SHELL:-fopenmp>")\n',
        [], id="genex-shell"),
    pytest.param(
        'string(APPEND CMAKE_CUDA_FLAGS " -gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90")\n',
        'string(APPEND CMAKE_HIP_FLAGS " --offload-arch=gfx942")\n',
        ["HP601", "HP601"], id="gencode-in-flags-string"),
    pytest.param(
        "target_compile_options(k PRIVATE -maxrregcount=64 -G --use_fast_math)\n",
        "target_compile_options(k PRIVATE -g;-O0 -ffast-math)\n",
        ["HP603", "HP603", "HP608"], id="flags-unmapped-and-fast-math"),
    pytest.param(
        "target_compile_options(k PRIVATE $<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:-O3>)\n",
        "target_compile_options(k PRIVATE $<$<COMPILE_LANG_AND_ID:HIP,Clang>:-O3>)\n",
        [], id="genex-lang-and-id"),
    pytest.param(
        "execute_process(COMMAND cmake -G Ninja -t x)\n",
        "execute_process(COMMAND cmake -G Ninja -t x)\n",
        [], id="no-flag-context"),
    pytest.param(
        "#[[ set(CMAKE_CUDA_ARCHITECTURES 70) ]]\n# project(x CUDA)\nmessage([=[CUDA::cublas -lineinfo]=])\n",
        "#[[ set(CMAKE_CUDA_ARCHITECTURES 70) ]]\n# project(x CUDA)\nmessage([=[CUDA::cublas -lineinfo]=])\n",
        [], id="comments-and-brackets-untouched"),
    pytest.param(
        "find_package(CUDA REQUIRED)\ncuda_add_executable(app main.cu)\ncuda_add_cublas_to_target(app)\n"
        "target_link_libraries(app ${CUDA_LIBRARIES})\n",
        "enable_language(HIP)\nfind_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)\nadd_executable(app main.cu)\n"
        "set_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)\n"
        "target_link_libraries(app roc::hipblas)\ntarget_link_libraries(app hip::host)\n",
        [], id="legacy-findcuda"),
    pytest.param(
        "cuda_add_library(k a.cu OPTIONS -lineinfo)\nlist(APPEND CUDA_NVCC_FLAGS --use_fast_math)\n",
        "add_library(k a.cu)\ntarget_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-gline-tables-only>)\n"
        "set_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\n"
        'string(APPEND CMAKE_HIP_FLAGS " -ffast-math")\n',
        ["HP606", "HP606", "HP608"], id="legacy-options-and-nvcc-flags-moved"),
    pytest.param(
        "cuda_add_library(k a.cu b.cpp STATIC OPTIONS -Xcompiler -fPIC RELEASE --use_fast_math DEBUG -G)\n",
        "add_library(k STATIC a.cu b.cpp)\n"
        "target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fPIC> "
        "$<$<AND:$<COMPILE_LANGUAGE:HIP>,$<CONFIG:Release>>:-ffast-math> "
        "$<$<AND:$<COMPILE_LANGUAGE:HIP>,$<CONFIG:Debug>>:-g> $<$<AND:$<COMPILE_LANGUAGE:HIP>,$<CONFIG:Debug>>:-O0>)\n"
        "set_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\n",
        ["HP603", "HP606", "HP608"], id="legacy-per-config-options-and-late-type-keyword"),
    pytest.param(
        "cuda_add_executable(app\n  main.cu\n  OPTIONS --expt-relaxed-constexpr)\n",
        "add_executable(app\n  main.cu\n)\nset_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)\n",
        ["HP606"], id="legacy-options-all-dropped"),
    pytest.param(
        "set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS} -gencode arch=compute_80,code=sm_80)\n"
        'set(CUDA_NVCC_FLAGS_RELEASE "${CUDA_NVCC_FLAGS_RELEASE} -O3")\n'
        "list(APPEND CUDA_NVCC_FLAGS --expt-extended-lambda)\n"
        'string(APPEND CUDA_NVCC_FLAGS " ${EXTRA}")\n',
        'string(APPEND CMAKE_HIP_FLAGS " --offload-arch=gfx942")\n'
        'string(APPEND CMAKE_HIP_FLAGS_RELEASE " -O3")\n'
        'string(APPEND CMAKE_HIP_FLAGS " ${EXTRA}")\n',
        ["HP601", "HP606", "HP606", "HP606", "HP606", "HP606"], id="nvcc-flags-forms-moved"),
    pytest.param(
        "list(REMOVE_ITEM CUDA_NVCC_FLAGS -G)\nset(CUDA_NVCC_FLAGS \"-O2\" CACHE STRING \"\")\n"
        "list(APPEND CUDA_NVCC_FLAGS $<$<CONFIG:Debug>:-G>)\n",
        "list(REMOVE_ITEM CUDA_NVCC_FLAGS -G)\nset(CUDA_NVCC_FLAGS \"-O2\" CACHE STRING \"\")\n"
        "list(APPEND CUDA_NVCC_FLAGS $<$<CONFIG:Debug>:-G>)\n",
        ["HP606", "HP606", "HP606"], id="nvcc-flags-not-moved-surely"),
    pytest.param(
        "if(CUDAToolkit_VERSION VERSION_LESS 11)\nendif()\nset(CMAKE_CUDA_HOST_COMPILER g++)\n",
        "if(CUDAToolkit_VERSION VERSION_LESS 11)\nendif()\nset(CMAKE_CUDA_HOST_COMPILER g++)\n",
        ["HP604", "HP604"], id="variables-without-counterpart"),
    pytest.param(
        "cmake_minimum_required(VERSION 3.18)\r\nproject(p CUDA)\r\nadd_executable(a a.cu)\r\n",
        "cmake_minimum_required(VERSION 3.21)\r\nproject(p HIP)\r\nadd_executable(a a.cu)\r\n"
        "set_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\r\n",
        [], id="crlf"),
]


@pytest.mark.parametrize("src,expected,want", CASES)
def test_cmake_construct(src: str, expected: str, want: list[str]) -> None:
    out, findings = convert(src)
    assert out == expected
    assert sorted(codes(findings)) == sorted(want)
    again, _ = convert(out)
    assert again == out, "converting the output again must change nothing"


def test_offload_arch_list_is_written_as_a_cmake_list() -> None:
    opts = Options(apply_fixes=True)
    try:
        opts = opts.with_(offload_arch="gfx90a,gfx942")
    except TypeError:
        pytest.skip("no global --offload-arch option yet")
    out, _ = convert("set(CMAKE_CUDA_ARCHITECTURES 80)\n", options=opts)
    assert out == 'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")\n'


def test_roc_option_links_the_roc_libraries() -> None:
    out, _ = convert("target_link_libraries(a CUDA::cublas CUDA::curand)\n", options=OPTS.with_(roc=True))
    assert out == ("find_package(rocblas REQUIRED)\nfind_package(rocrand REQUIRED)\n"
                   "target_link_libraries(a roc::rocblas roc::rocrand)\n")


def test_suppression_comment_and_ignore() -> None:
    src = "# hipport: ignore[HP604]\nset(CMAKE_CUDA_HOST_COMPILER g++)\ntarget_link_libraries(a CUDA::nvml)\n"
    _, findings = convert(src)
    assert codes(findings) == ["HP605"]
    _, findings = convert(src, options=OPTS.with_(ignore=frozenset({"HP6XX"})))
    assert findings == []


def test_findings_name_file_and_line() -> None:
    _, findings = convert("project(p CUDA)\n\ntarget_compile_options(k PRIVATE -maxrregcount=32)\n",
                          path="src/CMakeLists.txt")
    (f,) = findings
    assert (f.path, f.line, f.col, f.code) == ("src/CMakeLists.txt", 3, 34, "HP603")
    assert "__launch_bounds__" in f.suggestion


def test_kind_of_names() -> None:
    from pathlib import PurePath

    assert kind_of(PurePath("a/CMakeLists.txt")) == "cmake"
    assert kind_of(PurePath("cmake/FindFoo.cmake")) == "cmake"
    assert kind_of(PurePath("main.cu")) is None
