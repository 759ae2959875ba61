"""CUDA C++ spellings for the C-family printer (``build(mod, "cuda")``).

Kernels are ``extern "C" __global__`` with ``__launch_bounds__`` set to the
threads per block, so NVRTC and nvcc know the register budget; buffers are
``T* __restrict__`` (``const T* __restrict__`` when the kernel only reads
them, so loads may go through the read-only cache); shared buffers
are ``__shared__`` arrays (16-byte aligned when read or written as float4);
``__syncthreads()`` is the barrier. CUDA's vector types have no arithmetic
operators, so the source defines the ones it uses.
"""

from __future__ import annotations

from tir import dtype as _dt
from tir.buffer import Buffer
from tir.expr import Call
from tir.transform.lower_thread_allreduce import SHUFFLE, SHUFFLE_DOWN

from ..c_family import CFamilyPrinter, Code, check_helpers, integer_helpers
from ..errors import BuildError

VECTOR_TYPES = {
    f"{dtype}x{lanes}": f"{ctype}{lanes}"
    for dtype, ctype in (("float32", "float"), ("int32", "int"), ("uint32", "uint"), ("float64", "double"))
    for lanes in (2, 4)
    if not (dtype == "float64" and lanes == 4)
} | {"float16x2": "half2"}


class CUDAPrinter(CFamilyPrinter):
    vector_types = VECTOR_TYPES
    inf, nan = "__int_as_float(0x7f800000)", "__int_as_float(0x7fffffff)"
    barrier = "__syncthreads();"
    has_rsqrt = True

    def kernel_signature(self, kernel) -> str:
        params = ", ".join(self.param_declaration(p) for p in kernel.params)
        threads = kernel.block[0] * kernel.block[1] * kernel.block[2]
        return f'extern "C" __global__ void __launch_bounds__({threads}) {kernel.name}({params})'

    def declare_array(self, buffer: Buffer, size: int) -> str:
        align = "__align__(16) " if buffer in self.vector_buffers else ""
        shared = "__shared__ " if buffer.scope == "shared" else ""
        return f"{shared}{align}{self.type_of(buffer.dtype)} {self.name_of(buffer)}[{size}];"

    def warp_intrinsic(self, node: Call) -> Code:
        """``__shfl_down_sync(mask, v, offset, 32)`` and ``__shfl_sync(mask, v, lane, 32)``."""
        name = {SHUFFLE_DOWN: "__shfl_down_sync", SHUFFLE: "__shfl_sync"}.get(node.op)
        if name is None:
            return super().warp_intrinsic(node)
        mask, value, lane = (self.expr(a).text for a in node.args)
        return Code(f"{name}({mask}, {value}, {lane}, {self.target.warp_size})")

    def vector_literal(self, dtype: str, parts: list[str]) -> str:
        return f"make_{self.type_of(dtype)}({', '.join(parts)})"

    def broadcast(self, dtype: str, value: str) -> str:
        return self.vector_literal(dtype, [value] * _dt.lanes_of(dtype))

    def binary(self, node, op: str, prec: int) -> Code:
        if _dt.lanes_of(node.dtype) > 1:
            self.needs.add(f"vector_op:{self.type_of(node.dtype)}:{op}")
        return super().binary(node, op, prec)

    def reinterpret(self, value, dtype: str) -> Code:
        """CUDA's bit-cast intrinsics (``__float_as_int``, ...); other pairs are a BuildError."""
        function = _BIT_CASTS.get((value.dtype, dtype))
        if function is None:
            raise BuildError(f"T.reinterpret of {value.dtype} as {dtype} has no CUDA spelling here")
        return Code(f"{function}({self.expr(value).text})")

    def type_of(self, dtype: str) -> str:
        name = super().type_of(dtype)
        if _dt.element_of(dtype) == "float16":
            self.needs.add("half")
        return name


_LANES = "xyzw"
_BIT_CASTS = {
    ("float32", "int32"): "__float_as_int",
    ("int32", "float32"): "__int_as_float",
    ("float32", "uint32"): "__float_as_uint",
    ("uint32", "float32"): "__uint_as_float",
    ("float64", "int64"): "__double_as_longlong",
    ("int64", "float64"): "__longlong_as_double",
    ("float16", "int16"): "__half_as_short",
    ("int16", "float16"): "__short_as_half",
    ("float16", "uint16"): "__half_as_ushort",
    ("uint16", "float16"): "__ushort_as_half",
}


def cuda_prelude(needs: set[str]) -> str:
    """Includes and helpers the kernels use, in a fixed order."""
    parts = []
    if "half" in needs:
        parts.append("#include <cuda_fp16.h>")
    for need in sorted(needs):
        kind, _, rest = need.partition(":")
        if kind == "vector_op":
            vtype, op = rest.split(":")
            lanes = int(vtype[-1])
            fields = ", ".join(f"a.{f} {op} b.{f}" for f in _LANES[:lanes])
            parts.append(
                f"__device__ __forceinline__ {vtype} operator{op}({vtype} a, {vtype} b) "
                f"{{ return make_{vtype}({fields}); }}"
            )
    qualifier = "__device__ __forceinline__"
    helpers = [*integer_helpers(needs, qualifier), *check_helpers(needs, qualifier, "long long")]
    return "\n".join([*parts, *helpers])
