#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device const float* bias [[buffer(2)]],
                         device float* D [[buffer(3)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  float C_local_1[16];
  float C_local[16];
  #pragma unroll
  for (int i_2_init = 0; i_2_init < 4; ++i_2_init) {
    #pragma unroll
    for (int j_2_init = 0; j_2_init < 4; ++j_2_init) {
      C_local[i_2_init * 4 + j_2_init] = 0.0f;
    }
  }
  for (int k = 0; k < 1024; ++k) {
    #pragma unroll
    for (int i_2 = 0; i_2 < 4; ++i_2) {
      #pragma unroll
      for (int j_2 = 0; j_2 < 4; ++j_2) {
        C_local[i_2 * 4 + j_2] = C_local[i_2 * 4 + j_2] + A[blockIdx_x / 64 * 16384 + threadIdx_x / 4 * 4096 + i_2 * 1024 + k] * B[k * 1024 + blockIdx_x % 64 * 16 + threadIdx_x % 4 * 4 + j_2];
      }
    }
  }
  #pragma unroll
  for (int ax0 = 0; ax0 < 4; ++ax0) {
    #pragma unroll
    for (int ax1 = 0; ax1 < 4; ++ax1) {
      C_local_1[ax0 * 4 + ax1] = C_local[ax0 * 4 + ax1];
    }
  }
  #pragma unroll
  for (int ax0_1 = 0; ax0_1 < 4; ++ax0_1) {
    #pragma unroll
    for (int ax1_1 = 0; ax1_1 < 4; ++ax1_1) {
      D[blockIdx_x / 64 * 16384 + threadIdx_x / 4 * 4096 + ax0_1 * 1024 + blockIdx_x % 64 * 16 + threadIdx_x % 4 * 4 + ax1_1] = max(C_local_1[ax0_1 * 4 + ax1_1] + bias[blockIdx_x % 64 * 16 + threadIdx_x % 4 * 4 + ax1_1], 0.0f);
    }
  }
}
