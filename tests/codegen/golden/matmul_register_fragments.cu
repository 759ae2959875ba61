__device__ __forceinline__ void tir_cp_async_16(void* dst, const void* src) {
  asm volatile("{ .reg .u64 d64; .reg .u32 d32; cvta.to.shared.u64 d64, %0; cvt.u32.u64 d32, d64; cp.async.cg.shared.global [d32], [%1], 16; }\n" :: "l"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void tir_cp_async_4(void* dst, const void* src) {
  asm volatile("{ .reg .u64 d64; .reg .u32 d32; cvta.to.shared.u64 d64, %0; cvt.u32.u64 d32, d64; cp.async.ca.shared.global [d32], [%1], 4; }\n" :: "l"(dst), "l"(src) : "memory");
}

extern "C" __global__ void __launch_bounds__(256) main_kernel0(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  __shared__ __align__(16) float A_shared[3168];
  __shared__ __align__(16) float B_shared[3072];
  __align__(16) float C_local[64];
  #pragma unroll
  for (int i_2_init = 0; i_2_init < 8; ++i_2_init) {
    #pragma unroll
    for (int j_2_init = 0; j_2_init < 8; ++j_2_init) {
      C_local[i_2_init * 8 + j_2_init] = 0.0f;
    }
  }
  __syncthreads();
  #pragma unroll
  for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 4; ++ax0_ax1_fused_0) {
    tir_cp_async_4(&A_shared[threadIdx_x % 8 * 132 + threadIdx_x % 64 / 32 * 64 + ax0_ax1_fused_0 * 16 + threadIdx_x / 64 * 4 + threadIdx_x % 32 / 8], &A[blockIdx_x / 8 * 131072 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 8 * 1024 + threadIdx_x % 8]);
  }
  tir_cp_async_16(&B_shared[threadIdx_x / 32 * 128 + threadIdx_x % 2 * 64 + threadIdx_x % 32 / 2 * 4], &B[threadIdx_x / 32 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 32 * 4]);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  __syncthreads();
  #pragma unroll
  for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 4; ++ax0_ax1_fused_0) {
    tir_cp_async_4(&A_shared[threadIdx_x % 8 * 132 + threadIdx_x % 64 / 32 * 64 + ax0_ax1_fused_0 * 16 + threadIdx_x / 64 * 4 + threadIdx_x % 32 / 8 + 1056], &A[blockIdx_x / 8 * 131072 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 8 * 1024 + threadIdx_x % 8 + 8]);
  }
  tir_cp_async_16(&B_shared[threadIdx_x / 32 * 128 + threadIdx_x % 2 * 64 + threadIdx_x % 32 / 2 * 4 + 1024], &B[threadIdx_x / 32 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 32 * 4 + 8192]);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  for (int k_0 = 2; k_0 < 128; ++k_0) {
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    __syncthreads();
    #pragma unroll
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 4; ++ax0_ax1_fused_0) {
      tir_cp_async_4(&A_shared[k_0 % 3 * 1056 + threadIdx_x % 8 * 132 + threadIdx_x % 64 / 32 * 64 + ax0_ax1_fused_0 * 16 + threadIdx_x / 64 * 4 + threadIdx_x % 32 / 8], &A[blockIdx_x / 8 * 131072 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 8 * 1024 + k_0 * 8 + threadIdx_x % 8]);
    }
    tir_cp_async_16(&B_shared[k_0 % 3 * 1024 + threadIdx_x / 32 * 128 + threadIdx_x % 2 * 64 + threadIdx_x % 32 / 2 * 4], &B[k_0 * 8192 + threadIdx_x / 32 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 32 * 4]);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    #pragma unroll
    for (int k_1 = 0; k_1 < 8; ++k_1) {
      __align__(16) float A_shared_local[8];
      __align__(16) float B_shared_local[8];
      #pragma unroll
      for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
        *(float4*)(A_shared_local + ax0_0 * 4) = *(float4*)(A_shared + (k_0 + 1) % 3 * 1056 + k_1 * 132 + ax0_0 * 64 + threadIdx_x / 16 * 4);
      }
      #pragma unroll
      for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
        *(float4*)(B_shared_local + ax0_0_1 * 4) = *(float4*)(B_shared + (k_0 + 1) % 3 * 1024 + k_1 * 128 + ax0_0_1 * 64 + threadIdx_x % 16 * 4);
      }
      #pragma unroll
      for (int i_2 = 0; i_2 < 8; ++i_2) {
        #pragma unroll
        for (int j_2 = 0; j_2 < 8; ++j_2) {
          C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A_shared_local[i_2] * B_shared_local[j_2];
        }
      }
    }
  }
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  __syncthreads();
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  #pragma unroll
  for (int k_1 = 0; k_1 < 8; ++k_1) {
    {
      __align__(16) float A_shared_local[8];
      {
        __align__(16) float B_shared_local[8];
        #pragma unroll
        for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
          *(float4*)(A_shared_local + ax0_0 * 4) = *(float4*)(A_shared + k_1 * 132 + ax0_0 * 64 + threadIdx_x / 16 * 4);
        }
        #pragma unroll
        for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
          *(float4*)(B_shared_local + ax0_0_1 * 4) = *(float4*)(B_shared + k_1 * 128 + ax0_0_1 * 64 + threadIdx_x % 16 * 4);
        }
        #pragma unroll
        for (int i_2 = 0; i_2 < 8; ++i_2) {
          #pragma unroll
          for (int j_2 = 0; j_2 < 8; ++j_2) {
            C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A_shared_local[i_2] * B_shared_local[j_2];
          }
        }
      }
    }
  }
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  __syncthreads();
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  #pragma unroll
  for (int k_1 = 0; k_1 < 8; ++k_1) {
    {
      __align__(16) float A_shared_local[8];
      {
        __align__(16) float B_shared_local[8];
        #pragma unroll
        for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
          *(float4*)(A_shared_local + ax0_0 * 4) = *(float4*)(A_shared + k_1 * 132 + ax0_0 * 64 + threadIdx_x / 16 * 4 + 1056);
        }
        #pragma unroll
        for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
          *(float4*)(B_shared_local + ax0_0_1 * 4) = *(float4*)(B_shared + k_1 * 128 + ax0_0_1 * 64 + threadIdx_x % 16 * 4 + 1024);
        }
        #pragma unroll
        for (int i_2 = 0; i_2 < 8; ++i_2) {
          #pragma unroll
          for (int j_2 = 0; j_2 < 8; ++j_2) {
            C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A_shared_local[i_2] * B_shared_local[j_2];
          }
        }
      }
    }
  }
  #pragma unroll
  for (int ax0 = 0; ax0 < 8; ++ax0) {
    #pragma unroll
    for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
      *(float4*)(C + blockIdx_x / 8 * 131072 + threadIdx_x / 16 * 8192 + ax0 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 16 * 8 + ax1_0 * 4) = *(float4*)(C_local + ax0 * 8 + ax1_0 * 4);
    }
  }
}
