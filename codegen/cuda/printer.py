"""CUDA C++ spellings for the C-family printer (``build(mod, "cuda")``).

Kernels are ``extern "C" __global__`` with ``__launch_bounds__`` set to the
threads per block, so NVRTC and nvcc know the register budget; buffers are
``T* __restrict__`` (``const T* __restrict__`` when the kernel only reads
them, so loads may go through the read-only cache); shared buffers
are ``__shared__`` arrays (16-byte aligned when read or written as float4), or, in a
kernel over the static 48 KB, pointers into one ``extern __shared__`` allocation that the
launch requests (codegen/kernels.py places them);
``__syncthreads()`` is the barrier. CUDA's vector types have no arithmetic
operators, so the source defines the ones it uses. float16 is ``half``
(cuda_fp16.h) and bfloat16 is ``__nv_bfloat16`` (cuda_bf16.h, whose arithmetic
operators round after each operation on sm_80 and later); the host holds
bfloat16 as uint16 bit patterns, the same bytes. ``wmma.*`` fragments are arrays
of ``wmma::fragment`` (the WMMA functions), ``warp`` fragments arrays of registers
for mma.sync (tir/matrix_ops.py; the helpers in mma_helpers.cuh). Asynchronous copies of software
pipelines (tir/transform/inject_software_pipeline.py) become ``cp.async`` (sm_80+):
one 16-byte ``cp.async.cg`` (or 8-byte ``.ca``) per contiguous aligned vector, 4 or 8
bytes per element otherwise, with ``cp.async.commit_group`` / ``wait_group n``.
"""

from __future__ import annotations

from pathlib import Path

from tir import dtype as _dt
from tir.buffer import Buffer
from tir.expr import BufferLoad, Call, PrimExpr
from tir.stmt import BufferStore
from tir.transform.inject_software_pipeline import ASYNC_COMMIT, ASYNC_COPY
from tir.transform.lower_thread_allreduce import SHUFFLE, SHUFFLE_DOWN

from ..c_family import UNARY, CFamilyPrinter, Code, check_helpers, integer_helpers
from ..errors import BuildError
from ..lanes import lane

# Bytes one cp.async instruction may copy.
CP_ASYNC_BYTES = (4, 8, 16)
# A kernel over the static shared-memory limit takes one dynamic allocation (requested at launch).
DYNAMIC_SHARED_NAME = "tir_dynamic_shared"
DYNAMIC_SHARED_DECLARATION = f"extern __shared__ __align__(128) unsigned char {DYNAMIC_SHARED_NAME}[];"
# Bytes of a plain vector copy -> the unsigned type that moves them in one access.
RAW_COPY_TYPES = {4: "unsigned", 8: "uint2", 16: "uint4"}

VECTOR_TYPES = {
    f"{dtype}x{lanes}": f"{ctype}{lanes}"
    for dtype, ctype in (("float32", "float"), ("int32", "int"), ("uint32", "uint"), ("float64", "double"))
    for lanes in (2, 4)
    if not (dtype == "float64" and lanes == 4)
} | {"float16x2": "half2"}


# Fragment scope -> (WMMA fragment kind, layout argument); operands are row major.
WMMA_FRAGMENTS = {
    "wmma.matrix_a": ("matrix_a", ", wmma::row_major"),
    "wmma.matrix_b": ("matrix_b", ", wmma::row_major"),
    "wmma.accumulator": ("accumulator", ""),
}
# The header that defines each 16-bit float type.
HALF_HEADERS = {"float16": "cuda_fp16.h", "bfloat16": "cuda_bf16.h"}


class CUDAPrinter(CFamilyPrinter):
    types = CFamilyPrinter.types | {"bfloat16": "__nv_bfloat16"}
    vector_types = VECTOR_TYPES
    inf, nan = "__int_as_float(0x7f800000)", "__int_as_float(0x7fffffff)"
    barrier = "__syncthreads();"
    has_rsqrt = True

    def __init__(self, target):
        super().__init__(target)
        self.dynamic_shared: dict[Buffer, int] = {}  # the kernel's buffers in dynamic shared memory

    def kernel_source(self, kernel) -> str:
        """As every C-family kernel; one whose shared memory is over the static limit declares
        the dynamic allocation first and each shared buffer as a pointer into it."""
        self.dynamic_shared = kernel.dynamic_shared
        source = super().kernel_source(kernel)
        if not kernel.dynamic_shared:
            return source
        signature, _, body = source.partition("\n")
        return f"{signature}\n{self.indent_unit}{DYNAMIC_SHARED_DECLARATION}\n{body}"

    def kernel_signature(self, kernel) -> str:
        params = ", ".join(self.param_declaration(p) for p in kernel.params)
        threads = kernel.block[0] * kernel.block[1] * kernel.block[2]
        return f'extern "C" __global__ void __launch_bounds__({threads}) {kernel.name}({params})'

    def declare_array(self, buffer: Buffer, size: int) -> str:
        if buffer.scope == "warp":  # mma.sync registers: 4 (A), 2 (B) packed half pairs, 4 floats (C)
            self.needs.add("mma")
            role = self.fragment_roles.get(buffer)
            if role is None or (role == "c") != (buffer.dtype == "float32"):
                raise BuildError(f"warp fragment {buffer.name} ({buffer.dtype}) is not an mma.sync operand")
            element, registers = ("float", 4) if role == "c" else ("unsigned", 4 if role == "a" else 2)
            return f"{element} {self.name_of(buffer)}[{size}][{registers}];"
        if buffer.scope in WMMA_FRAGMENTS:
            self.needs.update(("wmma", "header:mma.h"))
            kind, layout = WMMA_FRAGMENTS[buffer.scope]
            element = self.type_of(buffer.dtype)
            return (
                f"wmma::fragment<wmma::{kind}, 16, 16, 16, {element}{layout}> {self.name_of(buffer)}[{size}];"
            )
        if buffer in self.dynamic_shared:
            element = self.type_of(buffer.dtype)
            offset = self.dynamic_shared[buffer]
            return f"{element}* {self.name_of(buffer)} = ({element}*)({DYNAMIC_SHARED_NAME} + {offset});"
        align = "__align__(16) " if buffer in self.vector_buffers else ""
        if buffer in self.tile_buffers:  # WMMA loads and stores need 256-bit alignment
            align = "__align__(32) "
        shared = "__shared__ " if buffer.scope == "shared" else ""
        return f"{shared}{align}{self.type_of(buffer.dtype)} {self.name_of(buffer)}[{size}];"

    def warp_intrinsic(self, node: Call) -> Code:
        """``__shfl_down_sync(mask, v, offset, 32)`` and ``__shfl_sync(mask, v, lane, 32)``."""
        name = {SHUFFLE_DOWN: "__shfl_down_sync", SHUFFLE: "__shfl_sync"}.get(node.op)
        if name is None:
            return super().warp_intrinsic(node)
        mask, value, lane = (self.expr(a).text for a in node.args)
        return Code(f"{name}({mask}, {value}, {lane}, {self.target.warp_size})")

    def matrix_op(self, kind: str, node: Call) -> str:
        """WMMA: ``wmma::load_matrix_sync(F[i], &A[x], stride)``, ``store_matrix_sync``,
        ``fill_fragment``, ``mma_sync(D, A, B, C)``."""
        if node.op.startswith("mma_"):
            return self._mma_op(kind, node)
        frag = self.fragment(node.args[0])
        if kind == "fill":
            return f"wmma::fill_fragment({frag}, {self.expr(node.args[1]).text});"
        if kind == "load":
            pointer, stride = self.tile_pointer(node.args[1])
            return f"wmma::load_matrix_sync({frag}, {pointer}, {stride});"
        if kind == "store":
            pointer, stride = self.tile_pointer(node.args[1])
            return f"wmma::store_matrix_sync({pointer}, {frag}, {stride}, wmma::mem_row_major);"
        d, a, b, c = (self.fragment(arg) for arg in node.args)
        return f"wmma::mma_sync({d}, {a}, {b}, {c});"

    def _mma_op(self, kind: str, node: Call) -> str:
        """mma.sync m16n8k16 through the prelude's helpers (PTX ldmatrix, mma, the C layout)."""
        frag = self.fragment(node.args[0])
        if kind == "fill":
            return f"tir_mma_fill({frag}, {self.expr(node.args[1]).text});"
        if kind in ("load", "store"):
            pointer, stride = self.tile_pointer(node.args[1])
            helper = {"mma_ldmatrix_a": "tir_ldmatrix_a", "mma_ldmatrix_b": "tir_ldmatrix_b_trans"}
            return f"{helper.get(node.op, 'tir_mma_store')}({frag}, {pointer}, {stride});"
        d, a, b, c = (self.fragment(arg) for arg in node.args)
        suffix = "_bf16" if node.args[1].args[0].buffer.dtype == "bfloat16" else ""
        return f"tir_mma_m16n8k16{suffix}({d}, {a}, {b}, {c});"

    def stmt_BufferStore(self, store: BufferStore) -> None:
        if isinstance(store.value, Call) and store.value.op == ASYNC_COPY:
            self.async_copy(store.buffer, store.indices[0], store.value.args[0])
            return
        if self.raw_copy(store):
            return
        super().stmt_BufferStore(store)

    def raw_copy(self, store: BufferStore) -> bool:
        """A contiguous aligned vector copy with no CUDA vector type (8 halfs: 16 bytes) as one
        access of the unsigned type of its size (``uint4``); whether it was one."""
        value, (index,) = store.value, store.indices
        lanes = _dt.lanes_of(value.dtype)
        if lanes == 1 or not isinstance(value, BufferLoad) or self.vector_native(value):
            return False
        size = lanes * _dt.bytes_of(store.buffer.dtype)
        raw = RAW_COPY_TYPES.get(size)
        if raw is None or value.buffer.dtype != store.buffer.dtype:
            return False
        if not (self.is_aligned_run(index) and self.is_aligned_run(value.indices[0])):
            return False
        source = self.address(value.buffer, value.indices[0].base)
        self.emit(f"*({raw}*){self.address(store.buffer, index.base)} = *(const {raw}*){source};")
        return True

    def async_copy(self, buffer: Buffer, index: PrimExpr, source: BufferLoad) -> None:
        """``buffer[index] = source`` with cp.async: whole vectors where both sides are contiguous
        and aligned, else element by element (synchronously if an element is not 4 or 8 bytes)."""
        lanes, element = _dt.lanes_of(source.dtype), _dt.bytes_of(source.buffer.dtype)
        (source_index,) = source.indices
        whole = (
            lanes > 1
            and lanes * element in CP_ASYNC_BYTES
            and self.is_aligned_run(index)
            and self.is_aligned_run(source_index)
        )
        if whole:
            self.emit_cp_async(buffer, index.base, source.buffer, source_index.base, lanes * element)
        elif element in CP_ASYNC_BYTES:
            for i in range(lanes):
                self.emit_cp_async(buffer, lane(index, i), source.buffer, lane(source_index, i), element)
        else:
            super().stmt_BufferStore(BufferStore(buffer, source, (index,)))

    def emit_cp_async(
        self, buffer: Buffer, index: PrimExpr, source: Buffer, source_index: PrimExpr, size: int
    ):
        self.needs.add(f"cp_async:{size}")
        self.emit(
            f"tir_cp_async_{size}({self.address(buffer, index)}, {self.address(source, source_index)});"
        )

    def address(self, buffer: Buffer, index: PrimExpr) -> str:
        return f"&{self.name_of(buffer)}[{self.expr(index).text}]"

    def async_group(self, node: Call) -> None:
        if node.op == ASYNC_COMMIT:
            self.emit('asm volatile("cp.async.commit_group;\\n" ::: "memory");')
        else:
            self.emit(f'asm volatile("cp.async.wait_group {node.args[0].value};\\n" ::: "memory");')

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

    def math_call(self, op: str, dtype: str, args: list[PrimExpr]) -> Code:
        """16-bit floats: the float function, rounded back (``(half)expf(x)``); CUDA's own half and
        bfloat16 overloads are partial and ``fmax(half, half)`` is ambiguous."""
        if _dt.lanes_of(dtype) == 1 and dtype in HALF_HEADERS:
            return Code(f"({self.type_of(dtype)}){self.call(op + 'f', args).text}", UNARY)
        return super().math_call(op, dtype, args)

    def type_of(self, dtype: str) -> str:
        name = super().type_of(dtype)
        if _dt.element_of(dtype) in HALF_HEADERS:
            self.needs.add(f"header:{HALF_HEADERS[_dt.element_of(dtype)]}")
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
    for need in sorted(needs):
        kind, _, rest = need.partition(":")
        if kind == "header":
            parts.append(f"#include <{rest}>")
        elif kind == "vector_op":
            vtype, op = rest.split(":")
            lanes = int(vtype[-1])
            fields = ", ".join(f"a.{f} {op} b.{f}" for f in _LANES[:lanes])
            parts.append(
                f"__device__ __forceinline__ {vtype} operator{op}({vtype} a, {vtype} b) "
                f"{{ return make_{vtype}({fields}); }}"
            )
    if "wmma" in needs:
        parts.append("using namespace nvcuda;")
    if "mma" in needs:
        parts.append(MMA_HELPERS)
    qualifier = "__device__ __forceinline__"
    parts.extend(_cp_async_helper(need, qualifier) for need in sorted(needs) if need.startswith("cp_async:"))
    helpers = [*integer_helpers(needs, qualifier), *check_helpers(needs, qualifier, "long long")]
    return "\n".join([*parts, *helpers])


# mma.sync's helpers (PTX ldmatrix and mma, the accumulator's layout), pasted into sources that use them.
MMA_HELPERS = (Path(__file__).parent / "mma_helpers.cuh").read_text().strip()


def _cp_async_helper(need: str, qualifier: str) -> str:
    """``tir_cp_async_<n>(dst, src)``: copy n bytes global -> shared without waiting (sm_80+);
    16-byte copies bypass L1 (``.cg``), smaller ones may only use ``.ca``. The shared address
    is converted in PTX (``cvta.to.shared``), so the helper needs no header under NVRTC."""
    size = int(need.partition(":")[2])
    cache = "cg" if size == 16 else "ca"
    return (
        f"{qualifier} void tir_cp_async_{size}(void* dst, const void* src) {{\n"
        '  asm volatile("{ .reg .u64 d64; .reg .u32 d32; cvta.to.shared.u64 d64, %0; cvt.u32.u64 d32, d64; '
        f'cp.async.{cache}.shared.global [d32], [%1], {size}; }}\\n" :: "l"(dst), "l"(src) : "memory");\n}}'
    )
