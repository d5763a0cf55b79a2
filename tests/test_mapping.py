"""hipport.mapping: status per target on real HIPIFY rows, --roc, headers, namespaces,
macros, reverse lookup, the load cache, and ``hipport map``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main
from hipport.mapping import MappingTable, Status, load_table
from hipport.versions import parse_version

REPO = Path(__file__).resolve().parent.parent
V63, V721 = parse_version("6.3"), parse_version("7.2.1")


@pytest.fixture(scope="module")
def table() -> MappingTable:
    return load_table()


def resolve(table: MappingTable, name: str, rocm: str, **kw):
    res = table.view(parse_version(rocm), **kw).resolve(name)
    assert res is not None, name
    return res


def test_versions_compare_as_numbers() -> None:
    assert parse_version("7.10.0") > parse_version("7.2.1")
    assert parse_version("7.2") == (7, 2, 0)


def test_newer_on_63_mapped_on_721(table: MappingTable) -> None:
    old = resolve(table, "cudaStreamCopyAttributes", "6.3")
    assert (old.status, old.apply, old.target) == (Status.NEWER, False, "hipStreamCopyAttributes")
    assert old.detail == "hipStreamCopyAttributes exists from ROCm 7.2; target is 6.3"
    new = resolve(table, "cudaStreamCopyAttributes", "7.2.1")
    assert (new.status, new.apply) == (Status.MAPPED, True)


def test_the_launch_kernel_ex_template_maps_from_7_0(table: MappingTable) -> None:
    """cuda_runtime.h's C++ template is no row of HIPIFY's tables (only cudaLaunchKernelExC
    is): the call stayed cudaLaunchKernelEx, undeclared against the 7.1 headers, with no
    finding. HIP 7.0 added the same template (hipLaunchKernelEx); HIP 6.2 has none."""
    old = resolve(table, "cudaLaunchKernelEx", "6.3")
    assert (old.status, old.apply, old.target) == (Status.NEWER, False, "hipLaunchKernelEx")
    new = resolve(table, "cudaLaunchKernelEx", "7.2.1")
    assert (new.status, new.apply, new.target) == (Status.MAPPED, True, "hipLaunchKernelEx")


def test_710_is_newer_than_721(table: MappingTable) -> None:
    # hipblasHerkEx is added in 7.10.0: string comparison would call it available on 7.2.1.
    # The joint CUBLAS table lacks it (README); the separate HIP table must have won.
    res = resolve(table, "cublasCherkEx", "7.2.1")
    assert (res.status, res.target) == (Status.NEWER, "hipblasHerkEx")
    assert resolve(table, "cublasCherkEx", "7.10").status is Status.MAPPED


def test_removed(table: MappingTable) -> None:
    assert resolve(table, "cutensorContraction", "6.3").status is Status.MAPPED
    res = resolve(table, "cutensorContraction", "7.2.1")
    assert (res.status, res.apply) == (Status.REMOVED, False)
    assert "removed in ROCm 7.0" in res.detail


def test_deprecated_is_applied(table: MappingTable) -> None:
    res = resolve(table, "cuCtxCreate", "6.3")
    assert (res.status, res.apply, res.target) == (Status.DEPRECATED, True, "hipCtxCreate")
    assert "deprecated since ROCm 1.9" in res.detail


def test_experimental_needs_the_flag(table: MappingTable) -> None:
    name = "cudaOccupancyMaxPotentialClusterSize"  # A 7.13.0, E 7.14.0
    assert resolve(table, name, "7.2.1", experimental=True).status is Status.NEWER
    off = resolve(table, name, "7.14")
    assert (off.status, off.apply) == (Status.EXPERIMENTAL, False)
    assert "--experimental" in off.detail
    on = resolve(table, name, "7.14", experimental=True)
    assert (on.status, on.apply, on.target) == (Status.EXPERIMENTAL, True, "hipOccupancyMaxPotentialClusterSize")
    # Exists from 7.13 and is marked in 7.14: treated as experimental on 7.13 too.
    assert resolve(table, name, "7.13").status is Status.EXPERIMENTAL


def test_unsupported(table: MappingTable) -> None:
    res = resolve(table, "cudaDeviceFlushGPUDirectRDMAWrites", "7.2.1")
    assert (res.status, res.target, res.apply) == (Status.UNSUPPORTED, None, False)


def test_unsupported_cuda_versions_are_in_the_detail(table: MappingTable) -> None:
    res = resolve(table, "cudaMemAdvise", "7.2.1")
    assert res.status is Status.MAPPED and "CUDA 13.0" in res.detail
    assert res.entry.hip_unsupported_cuda == ((13, 0, 0),)


def test_same_name_is_mapped_without_change(table: MappingTable) -> None:
    res = resolve(table, "__shfl_sync", "6.3")
    assert (res.status, res.target, res.apply) == (Status.MAPPED, "__shfl_sync", True)


def test_roc_names_and_roc_versions(table: MappingTable) -> None:
    assert resolve(table, "cublasSgemm", "7.2.1").target == "hipblasSgemm"
    assert resolve(table, "cublasSgemm", "7.2.1", roc=True).target == "rocblas_sgemm"
    # rocSPARSE deprecated rocsparse_cbsrmv in 5.4.0; hipSPARSE did not deprecate its name.
    assert resolve(table, "cusparseCbsrmv", "6.3").status is Status.MAPPED
    assert resolve(table, "cusparseCbsrmv", "6.3", roc=True).status is Status.DEPRECATED
    assert resolve(table, "cublasCherkEx", "7.2.1", roc=True).target == "rocblas_herk_ex"


def test_roc_falls_back_to_the_hip_name(table: MappingTable) -> None:
    res = resolve(table, "CUBLAS_COMPUTE_16F", "7.2.1", roc=True)
    assert res.target == "HIPBLAS_COMPUTE_16F" and "no rocBLAS equivalent" in res.detail


def test_a_name_only_the_roc_library_has_names_that_route(table: MappingTable) -> None:
    """cublasGetStatusString: the tables' hipBLAS column is empty, rocBLAS has
    rocblas_status_to_string; "no hipBLAS equivalent" claimed more than the tables know."""
    res = resolve(table, "cublasGetStatusString", "7.2.1")
    assert (res.status, res.target) == (Status.UNSUPPORTED, None)
    assert "rocblas_status_to_string" in res.detail and "equivalent" not in res.detail
    assert resolve(table, "cublasGetStatusString", "7.2.1", roc=True).target == "rocblas_status_to_string"
    assert "has no hipBLAS equivalent" in resolve(table, "cublasGetStatusName", "7.2.1").detail


def test_cudnn_needs_roc(table: MappingTable) -> None:
    res = resolve(table, "cudnnCreate", "7.2.1")
    assert (res.status, res.target) == (Status.UNSUPPORTED, None)
    assert "MIOpen" in res.detail and res.entry.hip == "hipdnnCreate"
    roc = resolve(table, "cudnnCreate", "7.2.1", roc=True)
    assert (roc.status, roc.target, roc.apply) == (Status.MAPPED, "miopenCreate", True)


def test_unknown_names_and_caching(table: MappingTable) -> None:
    view = table.view(V721)
    assert view.resolve("printf") is None
    assert view.resolve("hipMalloc") is None  # a HIP name is not a CUDA name
    assert view.resolve("cudaMalloc") is view.resolve("cudaMalloc")


def test_name_in_two_families_prefers_a_target(table: MappingTable) -> None:
    entry = table.lookup("libraryPropertyType")
    assert entry is not None and (entry.family, entry.hip) == ("runtime", "hipLibraryPropertyType")


def test_entries_mapping(table: MappingTable) -> None:
    assert "cudaMalloc" in table.entries and "hipMalloc" not in table.entries
    assert table.entries["cudaMalloc"].hip == "hipMalloc"
    assert len(table.entries) == len(set(table.entries))
    with pytest.raises(KeyError):
        table.entries["nope"]


def test_reverse_lookup(table: MappingTable) -> None:
    cuda = [e.cuda for e in table.find_by_target("hipMalloc")]
    assert "cudaMalloc" in cuda and "cuMemAlloc" in cuda
    assert [e.cuda for e in table.find_by_target("rocblas_sgemm")] == ["cublasSgemm", "cublasSgemm_v2"]


def test_curated_macro_rule_beats_the_table(table: MappingTable) -> None:
    res = resolve(table, "__CUDA_ARCH__", "7.2.1") if table.lookup("__CUDA_ARCH__") else None
    assert res is None or not res.apply
    res = resolve(table, "__CUDACC__", "7.2.1")  # in both; both rewrite it, with a finding
    assert res.target == "__HIPCC__" and res.apply
    rule = table.view(V721).macro("__CUDACC__")
    assert rule is not None and (rule.action, rule.target, rule.inform) == ("rewrite", "__HIPCC__", True)
    assert table.view(V721).macro("__CUDA_RUNTIME_H__").target == "HIP_INCLUDE_HIP_HIP_RUNTIME_H"
    # cuda.h becomes hip/hip_runtime.h, so its guard becomes that header's
    assert table.view(V721).macro("__cuda_cuda_h__").target == "HIP_INCLUDE_HIP_HIP_RUNTIME_H"
    # curand.h's guard: hiprand.h's, or rocrand.h's where --roc maps the header there
    assert table.view(V721).macro("CURAND_H_").target == "HIPRAND_H_"
    assert table.view(V721, roc=True).macro("CURAND_H_").target == "ROCRAND_H_"
    assert table.view(V721, roc=True).macro("__cuda_cuda_h__").target == "HIP_INCLUDE_HIP_HIP_RUNTIME_H"


def test_macro_rules_that_overlap_the_tables_are_known(table: MappingTable) -> None:
    # A new overlap needs a comment in macros.toml saying why it differs from HIPIFY.
    assert {m for m in table.macros if table.lookup(m) is not None} == {"__CUDACC__"}


@pytest.mark.parametrize(("path", "action", "target", "apply"), [
    ("cuda_runtime.h", "map", "hip/hip_runtime.h", True),
    ("device_launch_parameters.h", "drop", "hip/hip_runtime.h", True),
    ("cub/cub.cuh", "map", "hipcub/hipcub.hpp", True),
    ("cub/block/block_reduce.cuh", "map", "hipcub/hipcub.hpp", True),
    ("thrust/device_vector.h", "keep", None, False),
    ("cuda/std/atomic", "none", None, False),
    ("cuda/pipeline", "none", None, False),
    ("cutlass/gemm/device/gemm.h", "none", None, False),
    ("NvInferRuntime.h", "none", None, False),
    ("cudnn.h", "none", None, False),
    ("cufft.h", "map", "hipfft/hipfft.h", True),
    ("curand_kernel.h", "map", "hiprand/hiprand_kernel.h", True),
    ("nccl.h", "map", "rccl/rccl.h", True),
    ("cufile.h", "map", "hipfile.h", False),  # hipFile exists from 7.2.0
    ("vector_functions.h", "map", "hip/hip_vector_types.h", True),
    ("builtin_types.h", "map", "hip/hip_runtime_api.h", True),
    ("math_functions.h", "drop", "hip/hip_runtime.h", True),
    ("cuda_egl_interop.h", "none", None, False),
])
def test_headers_on_63(table: MappingTable, path: str, action: str, target: str | None, apply: bool) -> None:
    h = table.view(V63).header(path)
    assert h is not None and (h.action, h.target, h.apply) == (action, target, apply)


def test_header_prefix_and_exact_entries(table: MappingTable) -> None:
    view = table.view(V721)
    assert "cuda::pipeline" in view.header("cuda/pipeline").note  # exact beats the cuda/ prefix
    assert view.header("cufile.h").apply
    assert view.header("my_cuda_utils.h") is None
    assert view.header("cudaX.h") is None  # "cuda/" is a directory prefix, not a string one


def test_header_roc_variant(table: MappingTable) -> None:
    roc = table.view(V721, roc=True)
    assert roc.header("cublas_v2.h").target == "rocblas/rocblas.h"
    assert roc.header("cudnn.h").target == "miopen/miopen.h" and roc.header("cudnn.h").apply
    assert roc.header("cufft.h").target == "hipfft/hipfft.h"  # no roc variant


def test_namespaces(table: MappingTable) -> None:
    view = table.view(V721)
    assert view.namespace("cub") == "hipcub"
    assert view.namespace("thrust") is None and view.namespace("std") is None
    assert view.namespace("nvcuda") is None and view.namespace_rule("nvcuda").action == "none"


def test_curated_data_is_consistent(table: MappingTable) -> None:
    for rule in table.headers.values():
        if rule.action in ("map", "drop"):
            assert rule.hip or rule.roc, rule.cuda
        if rule.action == "none":
            assert rule.note, rule.cuda
    for rule in table.macros.values():
        assert rule.note, rule.name
        if rule.action == "rewrite":
            assert rule.target, rule.name


def test_json_cache_is_used_and_survives_corruption(tmp_path: Path) -> None:
    api, data = REPO / "mappings" / "api", REPO / "mappings"
    first = MappingTable.from_dir(api, data, cache_dir=tmp_path)
    caches = list(tmp_path.glob("mappings-*.json"))
    assert len(caches) == 1 and not list(tmp_path.glob("*.pickle"))
    second = MappingTable.from_dir(api, data, cache_dir=tmp_path)
    assert second.lookup("cudaMalloc") == first.lookup("cudaMalloc")
    caches[0].write_bytes(b"not an entry")
    third = MappingTable.from_dir(api, data, cache_dir=tmp_path)
    assert third.lookup("cudaMalloc") == first.lookup("cudaMalloc")


def test_cache_key_follows_the_data(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for p in (REPO / "mappings").glob("*.toml"):
        (data / p.name).write_bytes(p.read_bytes())
    cache = tmp_path / "cache"
    MappingTable.from_dir(REPO / "mappings" / "api", data, cache_dir=cache)
    with (data / "namespaces.toml").open("a") as f:
        f.write('\n[namespaces.mylib]\naction = "map"\ntarget = "myhiplib"\n')
    table = MappingTable.from_dir(REPO / "mappings" / "api", data, cache_dir=cache)
    assert table.view(V721).namespace("mylib") == "myhiplib"
    assert len(list(cache.glob("mappings-*.json"))) == 1  # the new entry; the stale one removed


# -- hipport map ------------------------------------------------------------------------

def run(*args: str):
    return CliRunner().invoke(main, ["map", *args])


def test_cli_map_text() -> None:
    r = run("cudaStreamCopyAttributes", "--rocm", "7.14")
    assert r.exit_code == 0, r.output
    assert "cudaStreamCopyAttributes  runtime function  (Stream Management)" in r.output
    assert "6.3:   newer (hipStreamCopyAttributes exists from ROCm 7.2; target is 6.3)" in r.output
    assert "7.2.1: mapped → hipStreamCopyAttributes" in r.output
    assert "7.14:" in r.output


def test_cli_map_json_and_roc() -> None:
    r = run("cublasSgemm", "--roc", "-f", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    (entry,) = doc["entries"]
    assert entry["family"] == "blas" and entry["roc"] == "rocblas_sgemm"
    assert entry["targets"]["7.2.1"] == {"status": "mapped", "target": "rocblas_sgemm",
                                         "apply": True, "detail": "cublasSgemm → rocblas_sgemm"}


def test_cli_map_reverse_macro_header() -> None:
    r = run("hipStreamCopyAttributes")
    assert r.exit_code == 0
    assert "HIP/ROC name for: cuStreamCopyAttributes, cudaStreamCopyAttributes" in r.output
    r = run("CUDART_VERSION")
    assert r.exit_code == 0 and "macro CUDART_VERSION: report" in r.output
    r = run("thrust/sort.h")
    assert r.exit_code == 0 and "keep" in r.output


def test_cli_map_unknown_exits_2_with_suggestions() -> None:
    r = CliRunner().invoke(main, ["map", "cudaMallocc"])
    assert r.exit_code == 2
    assert "did you mean: cudaMalloc" in r.output


def test_cli_map_bad_version() -> None:
    assert run("cudaMalloc", "--rocm", "seven").exit_code == 2
