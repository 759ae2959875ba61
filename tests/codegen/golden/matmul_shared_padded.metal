#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  threadgroup float A_shared[2304];
  threadgroup float B_shared[544];
  float C_local[64];
  for (int k_0 = 0; k_0 < 128; ++k_0) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma unroll
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 2; ++ax0_ax1_fused_0) {
      *(threadgroup float4*)(A_shared + ax0_ax1_fused_0 * 1152 + threadIdx_x / 2 * 36 + threadIdx_x % 2 * 4) = *(device const float4*)(A + blockIdx_x * 65536 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 2 * 1024 + k_0 * 8 + threadIdx_x % 2 * 4);
    }
    #pragma unroll
    for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 2; ++ax0_ax1_fused_0_1) {
      *(threadgroup float4*)(B_shared + ax0_ax1_fused_0_1 * 272 + threadIdx_x / 16 * 68 + threadIdx_x % 16 * 4) = *(device const float4*)(B + k_0 * 8192 + ax0_ax1_fused_0_1 * 4096 + threadIdx_x / 16 * 1024 + blockIdx_y * 64 + threadIdx_x % 16 * 4);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma unroll
    for (int k_1 = 0; k_1 < 8; ++k_1) {
      #pragma unroll
      for (int i_2 = 0; i_2 < 8; ++i_2) {
        #pragma unroll
        for (int j_2 = 0; j_2 < 8; ++j_2) {
          if (k_0 == 0 && k_1 == 0) {
            C_local[i_2 * 8 + j_2] = 0.0f;
          }
          C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A_shared[threadIdx_x / 8 * 288 + i_2 * 36 + k_1] * B_shared[k_1 * 68 + threadIdx_x % 8 * 8 + j_2];
        }
      }
    }
  }
  #pragma unroll
  for (int ax0 = 0; ax0 < 8; ++ax0) {
    #pragma unroll
    for (int ax1 = 0; ax1 < 8; ++ax1) {
      C[blockIdx_x * 65536 + threadIdx_x / 8 * 8192 + ax0 * 1024 + blockIdx_y * 64 + threadIdx_x % 8 * 8 + ax1] = C_local[ax0 * 8 + ax1];
    }
  }
}
