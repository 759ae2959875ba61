#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  threadgroup float A_shared[3168];
  threadgroup float B_shared[3072];
  alignas(16) float C_local[64];
  #pragma unroll
  for (int i_2_init = 0; i_2_init < 8; ++i_2_init) {
    #pragma unroll
    for (int j_2_init = 0; j_2_init < 8; ++j_2_init) {
      C_local[i_2_init * 8 + j_2_init] = 0.0f;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  #pragma unroll
  for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 4; ++ax0_ax1_fused_0) {
    A_shared[threadIdx_x % 8 * 132 + threadIdx_x % 64 / 32 * 64 + ax0_ax1_fused_0 * 16 + threadIdx_x / 64 * 4 + threadIdx_x % 32 / 8] = A[blockIdx_x / 8 * 131072 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 8 * 1024 + threadIdx_x % 8];
  }
  *(threadgroup float4*)(B_shared + threadIdx_x / 32 * 128 + threadIdx_x % 2 * 64 + threadIdx_x % 32 / 2 * 4) = *(device const float4*)(B + threadIdx_x / 32 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 32 * 4);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  #pragma unroll
  for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 4; ++ax0_ax1_fused_0) {
    A_shared[threadIdx_x % 8 * 132 + threadIdx_x % 64 / 32 * 64 + ax0_ax1_fused_0 * 16 + threadIdx_x / 64 * 4 + threadIdx_x % 32 / 8 + 1056] = A[blockIdx_x / 8 * 131072 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 8 * 1024 + threadIdx_x % 8 + 8];
  }
  *(threadgroup float4*)(B_shared + threadIdx_x / 32 * 128 + threadIdx_x % 2 * 64 + threadIdx_x % 32 / 2 * 4 + 1024) = *(device const float4*)(B + threadIdx_x / 32 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 32 * 4 + 8192);
  for (int k_0 = 2; k_0 < 128; ++k_0) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma unroll
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 4; ++ax0_ax1_fused_0) {
      A_shared[k_0 % 3 * 1056 + threadIdx_x % 8 * 132 + threadIdx_x % 64 / 32 * 64 + ax0_ax1_fused_0 * 16 + threadIdx_x / 64 * 4 + threadIdx_x % 32 / 8] = A[blockIdx_x / 8 * 131072 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 8 * 1024 + k_0 * 8 + threadIdx_x % 8];
    }
    *(threadgroup float4*)(B_shared + k_0 % 3 * 1024 + threadIdx_x / 32 * 128 + threadIdx_x % 2 * 64 + threadIdx_x % 32 / 2 * 4) = *(device const float4*)(B + k_0 * 8192 + threadIdx_x / 32 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 32 * 4);
    #pragma unroll
    for (int k_1 = 0; k_1 < 8; ++k_1) {
      alignas(16) float A_shared_local[8];
      alignas(16) float B_shared_local[8];
      #pragma unroll
      for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
        *(thread float4*)(A_shared_local + ax0_0 * 4) = *(threadgroup float4*)(A_shared + (k_0 + 1) % 3 * 1056 + k_1 * 132 + ax0_0 * 64 + threadIdx_x / 16 * 4);
      }
      #pragma unroll
      for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
        *(thread float4*)(B_shared_local + ax0_0_1 * 4) = *(threadgroup float4*)(B_shared + (k_0 + 1) % 3 * 1024 + k_1 * 128 + ax0_0_1 * 64 + threadIdx_x % 16 * 4);
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
  threadgroup_barrier(mem_flags::mem_threadgroup);
  #pragma unroll
  for (int k_1 = 0; k_1 < 8; ++k_1) {
    {
      alignas(16) float A_shared_local[8];
      {
        alignas(16) float B_shared_local[8];
        #pragma unroll
        for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
          *(thread float4*)(A_shared_local + ax0_0 * 4) = *(threadgroup float4*)(A_shared + k_1 * 132 + ax0_0 * 64 + threadIdx_x / 16 * 4);
        }
        #pragma unroll
        for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
          *(thread float4*)(B_shared_local + ax0_0_1 * 4) = *(threadgroup float4*)(B_shared + k_1 * 128 + ax0_0_1 * 64 + threadIdx_x % 16 * 4);
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
  threadgroup_barrier(mem_flags::mem_threadgroup);
  #pragma unroll
  for (int k_1 = 0; k_1 < 8; ++k_1) {
    {
      alignas(16) float A_shared_local[8];
      {
        alignas(16) float B_shared_local[8];
        #pragma unroll
        for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
          *(thread float4*)(A_shared_local + ax0_0 * 4) = *(threadgroup float4*)(A_shared + k_1 * 132 + ax0_0 * 64 + threadIdx_x / 16 * 4 + 1056);
        }
        #pragma unroll
        for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
          *(thread float4*)(B_shared_local + ax0_0_1 * 4) = *(threadgroup float4*)(B_shared + k_1 * 128 + ax0_0_1 * 64 + threadIdx_x % 16 * 4 + 1024);
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
      *(device float4*)(C + blockIdx_x / 8 * 131072 + threadIdx_x / 16 * 8192 + ax0 * 1024 + blockIdx_x % 8 * 128 + threadIdx_x % 16 * 8 + ax1_0 * 4) = *(thread float4*)(C_local + ax0 * 8 + ax1_0 * 4);
    }
  }
}
