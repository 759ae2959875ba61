// mma.sync m16n8k16 (sm_80 and later) for the CUDA printer's "warp" fragments (tir/matrix_ops.py), in
// PTX's register layouts: lane l holds A's rows l/4 and l/4 + 8 at columns 2 (l%4) + {0, 1} and those + 8
// (ldmatrix.x4 of the row-major 16x16 tile), B's column l/4 at rows 2 (l%4) + {0, 1} and those + 8
// (ldmatrix.x2.trans of the K x N row-major 16x8 tile), C's rows l/4 and l/4 + 8 at columns 2 (l%4) + {0, 1}.
__device__ __forceinline__ unsigned tir_lane() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }
template <class T>  // half or __nv_bfloat16: ldmatrix moves 16-bit elements
__device__ __forceinline__ void tir_ldmatrix_a(unsigned (&a)[4], const T* tile, int stride) {
  const unsigned l = tir_lane();
  const unsigned address = (unsigned)__cvta_generic_to_shared(tile + (l % 16) * stride + (l / 16) * 8);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(address));
}
template <class T>
__device__ __forceinline__ void tir_ldmatrix_b_trans(unsigned (&b)[2], const T* tile, int stride) {
  const unsigned address = (unsigned)__cvta_generic_to_shared(tile + (tir_lane() % 16) * stride);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(address));
}
__device__ __forceinline__ void tir_mma_fill(float (&c)[4], float value) { c[0] = c[1] = c[2] = c[3] = value; }
__device__ __forceinline__ void tir_mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const float (&c)[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void tir_mma_m16n8k16_bf16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const float (&c)[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void tir_mma_store(const float (&c)[4], float* tile, int stride) {
  const unsigned l = tir_lane(), row = l / 4, col = 2 * (l % 4);
  tile[row * stride + col] = c[0];
  tile[row * stride + col + 1] = c[1];
  tile[(row + 8) * stride + col] = c[2];
  tile[(row + 8) * stride + col + 1] = c[3];
}
