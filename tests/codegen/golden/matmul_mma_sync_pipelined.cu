#include <cuda_fp16.h>
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
__device__ __forceinline__ void tir_cp_async_16(void* dst, const void* src) {
  asm volatile("{ .reg .u64 d64; .reg .u32 d32; cvta.to.shared.u64 d64, %0; cvt.u32.u64 d32, d64; cp.async.cg.shared.global [d32], [%1], 16; }\n" :: "l"(dst), "l"(src) : "memory");
}

extern "C" __global__ void __launch_bounds__(128) main_kernel0(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  const int threadIdx_y = threadIdx.y;
  __shared__ __align__(32) half A_shared[7680];
  __shared__ __align__(32) half B_shared[6912];
  float C_warp[8][4];
  #pragma unroll
  for (int i_0_2_init = 0; i_0_2_init < 2; ++i_0_2_init) {
    #pragma unroll
    for (int j_0_2_init = 0; j_0_2_init < 4; ++j_0_2_init) {
      tir_mma_fill(C_warp[i_0_2_init * 4 + j_0_2_init], 0.0f);
    }
  }
  unsigned A_warp[4][4];
  unsigned B_warp[8][2];
  __syncthreads();
  for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 2; ++ax0_ax1_fused_0) {
    tir_cp_async_16(&A_shared[ax0_ax1_fused_0 * 1280 + threadIdx_y * 320 + threadIdx_x / 4 * 40 + threadIdx_x % 4 * 8], &A[blockIdx_y * 8192 + ax0_ax1_fused_0 * 4096 + threadIdx_y * 1024 + threadIdx_x / 4 * 128 + threadIdx_x % 4 * 8]);
  }
  for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 2; ++ax0_ax1_fused_0_1) {
    tir_cp_async_16(&B_shared[ax0_ax1_fused_0_1 * 1152 + threadIdx_y * 288 + threadIdx_x / 8 * 72 + threadIdx_x % 8 * 8], &B[ax0_ax1_fused_0_1 * 2048 + threadIdx_y * 512 + threadIdx_x / 8 * 128 + blockIdx_x * 64 + threadIdx_x % 8 * 8]);
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  __syncthreads();
  for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 2; ++ax0_ax1_fused_0) {
    tir_cp_async_16(&A_shared[ax0_ax1_fused_0 * 1280 + threadIdx_y * 320 + threadIdx_x / 4 * 40 + threadIdx_x % 4 * 8 + 2560], &A[blockIdx_y * 8192 + ax0_ax1_fused_0 * 4096 + threadIdx_y * 1024 + threadIdx_x / 4 * 128 + threadIdx_x % 4 * 8 + 32]);
  }
  for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 2; ++ax0_ax1_fused_0_1) {
    tir_cp_async_16(&B_shared[ax0_ax1_fused_0_1 * 1152 + threadIdx_y * 288 + threadIdx_x / 8 * 72 + threadIdx_x % 8 * 8 + 2304], &B[ax0_ax1_fused_0_1 * 2048 + threadIdx_y * 512 + threadIdx_x / 8 * 128 + blockIdx_x * 64 + threadIdx_x % 8 * 8 + 4096]);
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  for (int k_0_0 = 2; k_0_0 < 4; ++k_0_0) {
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    __syncthreads();
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 2; ++ax0_ax1_fused_0) {
      tir_cp_async_16(&A_shared[k_0_0 % 3 * 2560 + ax0_ax1_fused_0 * 1280 + threadIdx_y * 320 + threadIdx_x / 4 * 40 + threadIdx_x % 4 * 8], &A[blockIdx_y * 8192 + ax0_ax1_fused_0 * 4096 + threadIdx_y * 1024 + threadIdx_x / 4 * 128 + k_0_0 * 32 + threadIdx_x % 4 * 8]);
    }
    for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 2; ++ax0_ax1_fused_0_1) {
      tir_cp_async_16(&B_shared[k_0_0 % 3 * 2304 + ax0_ax1_fused_0_1 * 1152 + threadIdx_y * 288 + threadIdx_x / 8 * 72 + threadIdx_x % 8 * 8], &B[k_0_0 * 4096 + ax0_ax1_fused_0_1 * 2048 + threadIdx_y * 512 + threadIdx_x / 8 * 128 + blockIdx_x * 64 + threadIdx_x % 8 * 8]);
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    #pragma unroll
    for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
      #pragma unroll
      for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
        tir_ldmatrix_a(A_warp[ax0_0 * 2 + ax1_0], &A_shared[k_0_0 * 2560 + threadIdx_y / 2 * 1280 + ax0_0 * 640 + ax1_0 * 16 - 5120], 40);
      }
    }
    #pragma unroll
    for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
      #pragma unroll
      for (int ax1_0_1 = 0; ax1_0_1 < 4; ++ax1_0_1) {
        tir_ldmatrix_b_trans(B_warp[ax0_0_1 * 4 + ax1_0_1], &B_shared[k_0_0 * 2304 + ax0_0_1 * 1152 + threadIdx_y % 2 * 32 + ax1_0_1 * 8 - 4608], 72);
      }
    }
    #pragma unroll
    for (int i_0_2 = 0; i_0_2 < 2; ++i_0_2) {
      #pragma unroll
      for (int j_0_2 = 0; j_0_2 < 4; ++j_0_2) {
        #pragma unroll
        for (int k_0_1 = 0; k_0_1 < 2; ++k_0_1) {
          tir_mma_m16n8k16(C_warp[i_0_2 * 4 + j_0_2], A_warp[i_0_2 * 2 + k_0_1], B_warp[k_0_1 * 4 + j_0_2], C_warp[i_0_2 * 4 + j_0_2]);
        }
      }
    }
  }
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  __syncthreads();
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  #pragma unroll
  for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
    #pragma unroll
    for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
      tir_ldmatrix_a(A_warp[ax0_0 * 2 + ax1_0], &A_shared[threadIdx_y / 2 * 1280 + ax0_0 * 640 + ax1_0 * 16 + 5120], 40);
    }
  }
  #pragma unroll
  for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
    #pragma unroll
    for (int ax1_0_1 = 0; ax1_0_1 < 4; ++ax1_0_1) {
      tir_ldmatrix_b_trans(B_warp[ax0_0_1 * 4 + ax1_0_1], &B_shared[ax0_0_1 * 1152 + threadIdx_y % 2 * 32 + ax1_0_1 * 8 + 4608], 72);
    }
  }
  #pragma unroll
  for (int i_0_2 = 0; i_0_2 < 2; ++i_0_2) {
    #pragma unroll
    for (int j_0_2 = 0; j_0_2 < 4; ++j_0_2) {
      #pragma unroll
      for (int k_0_1 = 0; k_0_1 < 2; ++k_0_1) {
        tir_mma_m16n8k16(C_warp[i_0_2 * 4 + j_0_2], A_warp[i_0_2 * 2 + k_0_1], B_warp[k_0_1 * 4 + j_0_2], C_warp[i_0_2 * 4 + j_0_2]);
      }
    }
  }
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  __syncthreads();
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  #pragma unroll
  for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
    #pragma unroll
    for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
      tir_ldmatrix_a(A_warp[ax0_0 * 2 + ax1_0], &A_shared[threadIdx_y / 2 * 1280 + ax0_0 * 640 + ax1_0 * 16], 40);
    }
  }
  #pragma unroll
  for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
    #pragma unroll
    for (int ax1_0_1 = 0; ax1_0_1 < 4; ++ax1_0_1) {
      tir_ldmatrix_b_trans(B_warp[ax0_0_1 * 4 + ax1_0_1], &B_shared[ax0_0_1 * 1152 + threadIdx_y % 2 * 32 + ax1_0_1 * 8], 72);
    }
  }
  #pragma unroll
  for (int i_0_2 = 0; i_0_2 < 2; ++i_0_2) {
    #pragma unroll
    for (int j_0_2 = 0; j_0_2 < 4; ++j_0_2) {
      #pragma unroll
      for (int k_0_1 = 0; k_0_1 < 2; ++k_0_1) {
        tir_mma_m16n8k16(C_warp[i_0_2 * 4 + j_0_2], A_warp[i_0_2 * 2 + k_0_1], B_warp[k_0_1 * 4 + j_0_2], C_warp[i_0_2 * 4 + j_0_2]);
      }
    }
  }
  #pragma unroll
  for (int ax0_0_2 = 0; ax0_0_2 < 2; ++ax0_0_2) {
    #pragma unroll
    for (int ax1_0_2 = 0; ax1_0_2 < 4; ++ax1_0_2) {
      tir_mma_store(C_warp[ax0_0_2 * 4 + ax1_0_2], &C[blockIdx_y * 8192 + threadIdx_y / 2 * 4096 + ax0_0_2 * 2048 + blockIdx_x * 64 + threadIdx_y % 2 * 32 + ax1_0_2 * 8], 128);
    }
  }
}
