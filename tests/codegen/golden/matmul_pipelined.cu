__device__ __forceinline__ void tir_cp_async_16(void* dst, const void* src) {
  asm volatile("{ .reg .u64 d64; .reg .u32 d32; cvta.to.shared.u64 d64, %0; cvt.u32.u64 d32, d64; cp.async.cg.shared.global [d32], [%1], 16; }\n" :: "l"(dst), "l"(src) : "memory");
}

extern "C" __global__ void __launch_bounds__(256) main_kernel0(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  __shared__ __align__(16) float A_shared[3072];
  __shared__ __align__(16) float B_shared[3072];
  float C_local[16];
  #pragma unroll
  for (int i_2_init = 0; i_2_init < 4; ++i_2_init) {
    #pragma unroll
    for (int j_2_init = 0; j_2_init < 4; ++j_2_init) {
      C_local[i_2_init * 4 + j_2_init] = 0.0f;
    }
  }
  __syncthreads();
  tir_cp_async_16(&A_shared[threadIdx_x * 4], &A[blockIdx_x / 16 * 65536 + threadIdx_x / 4 * 1024 + threadIdx_x % 4 * 4]);
  tir_cp_async_16(&B_shared[threadIdx_x * 4], &B[threadIdx_x / 16 * 1024 + blockIdx_x % 16 * 64 + threadIdx_x % 16 * 4]);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  __syncthreads();
  tir_cp_async_16(&A_shared[threadIdx_x * 4 + 1024], &A[blockIdx_x / 16 * 65536 + threadIdx_x / 4 * 1024 + threadIdx_x % 4 * 4 + 16]);
  tir_cp_async_16(&B_shared[threadIdx_x * 4 + 1024], &B[threadIdx_x / 16 * 1024 + blockIdx_x % 16 * 64 + threadIdx_x % 16 * 4 + 16384]);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  for (int k_0 = 2; k_0 < 64; ++k_0) {
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    __syncthreads();
    tir_cp_async_16(&A_shared[k_0 % 3 * 1024 + threadIdx_x * 4], &A[blockIdx_x / 16 * 65536 + threadIdx_x / 4 * 1024 + k_0 * 16 + threadIdx_x % 4 * 4]);
    tir_cp_async_16(&B_shared[k_0 % 3 * 1024 + threadIdx_x * 4], &B[k_0 * 16384 + threadIdx_x / 16 * 1024 + blockIdx_x % 16 * 64 + threadIdx_x % 16 * 4]);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    #pragma unroll
    for (int k_1 = 0; k_1 < 16; ++k_1) {
      #pragma unroll
      for (int i_2 = 0; i_2 < 4; ++i_2) {
        #pragma unroll
        for (int j_2 = 0; j_2 < 4; ++j_2) {
          C_local[i_2 * 4 + j_2] = C_local[i_2 * 4 + j_2] + A_shared[(k_0 + 1) % 3 * 1024 + threadIdx_x / 16 * 64 + i_2 * 16 + k_1] * B_shared[(k_0 + 1) % 3 * 1024 + k_1 * 64 + threadIdx_x % 16 * 4 + j_2];
        }
      }
    }
  }
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  __syncthreads();
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  #pragma unroll
  for (int k_1 = 0; k_1 < 16; ++k_1) {
    #pragma unroll
    for (int i_2 = 0; i_2 < 4; ++i_2) {
      #pragma unroll
      for (int j_2 = 0; j_2 < 4; ++j_2) {
        C_local[i_2 * 4 + j_2] = C_local[i_2 * 4 + j_2] + A_shared[threadIdx_x / 16 * 64 + i_2 * 16 + k_1 + 2048] * B_shared[k_1 * 64 + threadIdx_x % 16 * 4 + j_2 + 2048];
      }
    }
  }
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  __syncthreads();
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  #pragma unroll
  for (int k_1 = 0; k_1 < 16; ++k_1) {
    #pragma unroll
    for (int i_2 = 0; i_2 < 4; ++i_2) {
      #pragma unroll
      for (int j_2 = 0; j_2 < 4; ++j_2) {
        C_local[i_2 * 4 + j_2] = C_local[i_2 * 4 + j_2] + A_shared[threadIdx_x / 16 * 64 + i_2 * 16 + k_1] * B_shared[k_1 * 64 + threadIdx_x % 16 * 4 + j_2];
      }
    }
  }
  #pragma unroll
  for (int ax0 = 0; ax0 < 4; ++ax0) {
    #pragma unroll
    for (int ax1 = 0; ax1 < 4; ++ax1) {
      C[blockIdx_x / 16 * 65536 + threadIdx_x / 16 * 4096 + ax0 * 1024 + blockIdx_x % 16 * 64 + threadIdx_x % 16 * 4 + ax1] = C_local[ax0 * 4 + ax1];
    }
  }
}
