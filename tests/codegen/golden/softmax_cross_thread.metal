#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device float* B [[buffer(1)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  threadgroup float A_max_shared[1];
  threadgroup float A_sum_shared[1];
  threadgroup float red_buf_A_max_shared[4];
  float in_thread_A_max_shared[1];
  float cross_thread_A_max_shared[1];
  in_thread_A_max_shared[0] = -3.4028234663852886e+38f;
  #pragma unroll
  for (int ax0_0 = 0; ax0_0 < 8; ++ax0_0) {
    in_thread_A_max_shared[0] = max(in_thread_A_max_shared[0], A[blockIdx_x * 1024 + ax0_0 * 128 + threadIdx_x]);
  }
  float red_A_max_shared[1];
  red_A_max_shared[0] = in_thread_A_max_shared[0];
  red_A_max_shared[0] = simd_max(red_A_max_shared[0]);
  if (threadIdx_x % 32 == 0) {
    red_buf_A_max_shared[threadIdx_x / 32] = red_A_max_shared[0];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  red_A_max_shared[0] = red_buf_A_max_shared[0];
  #pragma unroll
  for (int A_max_shared_warp = 1; A_max_shared_warp < 4; ++A_max_shared_warp) {
    red_A_max_shared[0] = max(red_A_max_shared[0], red_buf_A_max_shared[A_max_shared_warp]);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  cross_thread_A_max_shared[0] = red_A_max_shared[0];
  A_max_shared[0] = cross_thread_A_max_shared[0];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  threadgroup float red_buf_A_sum_shared[4];
  float in_thread_A_sum_shared[1];
  float cross_thread_A_sum_shared[1];
  in_thread_A_sum_shared[0] = 0.0f;
  #pragma unroll
  for (int ax0_0_1 = 0; ax0_0_1 < 8; ++ax0_0_1) {
    in_thread_A_sum_shared[0] = in_thread_A_sum_shared[0] + exp(A[blockIdx_x * 1024 + ax0_0_1 * 128 + threadIdx_x] - A_max_shared[0]);
  }
  float red_A_sum_shared[1];
  red_A_sum_shared[0] = in_thread_A_sum_shared[0];
  red_A_sum_shared[0] = simd_sum(red_A_sum_shared[0]);
  if (threadIdx_x % 32 == 0) {
    red_buf_A_sum_shared[threadIdx_x / 32] = red_A_sum_shared[0];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  red_A_sum_shared[0] = red_buf_A_sum_shared[0];
  #pragma unroll
  for (int A_sum_shared_warp = 1; A_sum_shared_warp < 4; ++A_sum_shared_warp) {
    red_A_sum_shared[0] = red_A_sum_shared[0] + red_buf_A_sum_shared[A_sum_shared_warp];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  cross_thread_A_sum_shared[0] = red_A_sum_shared[0];
  A_sum_shared[0] = cross_thread_A_sum_shared[0];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (int j_0 = 0; j_0 < 8; ++j_0) {
    B[blockIdx_x * 1024 + j_0 * 128 + threadIdx_x] = exp(A[blockIdx_x * 1024 + j_0 * 128 + threadIdx_x] - A_max_shared[0]) / A_sum_shared[0];
  }
}
