"""--roc element types (``[[roc_types]]`` of mappings/arguments.toml): written the ROC way
where the file cannot notice, else left HIP with one HP119 finding; byte for byte."""

from __future__ import annotations

from hipport.options import Options
from hipport.pipeline import transform
from hipport.versions import parse_version

ROC = {"6.3": Options(rocm=parse_version("6.3"), apply_fixes=True, roc=True),
       "7.2.1": Options(apply_fixes=True, roc=True)}


def conv(src: str, options: Options) -> tuple[str, list[tuple[str, int, str]]]:
    out, findings, _ = transform(src.encode(), "t.cu", options)
    return out.decode(), sorted((f.code, f.line, f.message) for f in findings)


POINTERS = """#include <cublas_v2.h>
void axpy(cublasHandle_t h, int n, __half* A, const __half* alpha) {
  cuComplex* x;
  cuComplex* y;
  cudaMalloc(&x, n * sizeof(cuComplex));
  cuComplex a = {1.0f, 0.0f};
  cublasCaxpy(h, n, &a, x, 1, y, 1);
  cublasZscal(h, n, reinterpret_cast<const cuDoubleComplex*>(&a), (cuDoubleComplex*)x, 1);
  cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, alpha, A, 4, A, 4, alpha, A, 4);
}
"""

POINTERS_ROC = """#include <hip/hip_runtime.h>
#include <rocblas/rocblas.h>
void axpy(rocblas_handle h, int n, rocblas_half* A, const rocblas_half* alpha) {
  rocblas_float_complex* x;
  rocblas_float_complex* y;
  hipMalloc(&x, n * sizeof(rocblas_float_complex));
  rocblas_float_complex a = {1.0f, 0.0f};
  rocblas_caxpy(h, n, &a, x, 1, y, 1);
  rocblas_zscal(h, n, reinterpret_cast<const rocblas_double_complex*>(&a), (rocblas_double_complex*)x, 1);
  rocblas_hgemm(h, rocblas_operation_none, rocblas_operation_none, 4, 4, 4, alpha, A, 4, A, 4, alpha, A, 4);
}
"""


def test_types_the_file_only_passes_around_are_written_the_rocblas_way() -> None:
    for options in ROC.values():
        out, found = conv(POINTERS, options)
        assert out == POINTERS_ROC
        assert [f for f in found if f[0] == "HP119"] == []


def test_without_roc_the_types_stay_hip() -> None:
    out, _ = conv(POINTERS, Options(apply_fixes=True))
    assert "hipComplex* x;" in out and "__half* A" in out and "rocblas" not in out


def test_a_helper_or_a_member_read_keeps_the_hip_type_and_is_one_finding() -> None:
    src = ("#include <cublas_v2.h>\nvoid f(cublasHandle_t h, int n, cuComplex* x, cuComplex* y) {\n"
           "  cuComplex a = make_cuComplex(2.0f, 0.0f);\n  cublasCaxpy(h, n, &a, x, 1, y, 1);\n}\n")
    for options in ROC.values():
        out, found = conv(src, options)
        assert "hipComplex* x, hipComplex* y" in out and "make_hipComplex" in out
        hp119 = [(line, msg) for code, line, msg in found if code == "HP119"]
        assert [line for line, _ in hp119] == [2, 4]  # the type once, the call
        assert "make_cuComplex" in hp119[0][1]
    src = src.replace("make_cuComplex(2.0f, 0.0f)", "{2.0f, 0.0f}").replace("  cublasCaxpy", "  float r = x[0].x;\n  cublasCaxpy")
    out, found = conv(src, ROC["7.2.1"])
    assert "hipComplex a" in out
    assert any(code == "HP119" and "`x`'s members" in msg for code, _, msg in found)


def test_a_half_value_is_not_a_rocblas_half() -> None:
    src = ("#include <cublas_v2.h>\nvoid f(cublasHandle_t h, __half* A) {\n  __half one;\n"
           "  cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A, 4, A, 4, &one, A, 4);\n}\n")
    out, found = conv(src, ROC["7.2.1"])
    assert "__half* A" in out and "rocblas_half" not in out
    assert any(code == "HP119" and "`one` holds a value" in msg for code, _, msg in found)


def test_rocblas_and_rocsparse_in_one_file_keep_the_hip_type() -> None:
    src = ("#include <cublas_v2.h>\n#include <cusparse.h>\nvoid f(cublasHandle_t h, cusparseHandle_t s, int n, cuComplex* x) {\n"
           "  cublasCscal(h, n, x, x, 1);\n  cusparseCaxpyi(s, n, x, x, nullptr, x, CUSPARSE_INDEX_BASE_ZERO);\n}\n")
    out, found = conv(src, ROC["7.2.1"])
    assert "hipComplex* x" in out
    assert any(code == "HP119" and "rocBLAS and rocSPARSE" in msg for code, _, msg in found)


def test_a_file_without_roc_calls_keeps_the_hip_type_silently() -> None:
    src = "#include <cuComplex.h>\ncuComplex twice(cuComplex a) { return cuCaddf(a, a); }\n"
    out, found = conv(src, ROC["7.2.1"])
    assert out == "#include <hip/hip_runtime.h>\n#include <hip/hip_complex.h>\nhipComplex twice(hipComplex a) { return hipCaddf(a, a); }\n"
    assert [f for f in found if f[0] == "HP119"] == []
