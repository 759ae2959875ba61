#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  simdgroup_float8x8 C_metal_simdgroup[4];
  #pragma unroll
  for (int i_1_init = 0; i_1_init < 2; ++i_1_init) {
    #pragma unroll
    for (int j_1_init = 0; j_1_init < 2; ++j_1_init) {
      C_metal_simdgroup[i_1_init * 2 + j_1_init] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
  }
  for (int k_0 = 0; k_0 < 8; ++k_0) {
    threadgroup float A_shared[128];
    simdgroup_float8x8 A_shared_metal_simdgroup[2];
    threadgroup float B_shared[128];
    simdgroup_float8x8 B_shared_metal_simdgroup[2];
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 4; ++ax0_ax1_fused_0) {
      A_shared[ax0_ax1_fused_0 * 32 + threadIdx_x] = A[blockIdx_y * 1024 + ax0_ax1_fused_0 * 256 + threadIdx_x / 8 * 64 + k_0 * 8 + threadIdx_x % 8];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma unroll
    for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
      simdgroup_load(A_shared_metal_simdgroup[ax0_0], &A_shared[ax0_0 * 64], 8);
    }
    for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 4; ++ax0_ax1_fused_0_1) {
      B_shared[ax0_ax1_fused_0_1 * 32 + threadIdx_x] = B[k_0 * 512 + ax0_ax1_fused_0_1 * 128 + threadIdx_x / 16 * 64 + blockIdx_x * 16 + threadIdx_x % 16];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma unroll
    for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
      simdgroup_load(B_shared_metal_simdgroup[ax1_0], &B_shared[ax1_0 * 8], 16);
    }
    #pragma unroll
    for (int i_1 = 0; i_1 < 2; ++i_1) {
      #pragma unroll
      for (int j_1 = 0; j_1 < 2; ++j_1) {
        simdgroup_multiply_accumulate(C_metal_simdgroup[i_1 * 2 + j_1], A_shared_metal_simdgroup[i_1], B_shared_metal_simdgroup[j_1], C_metal_simdgroup[i_1 * 2 + j_1]);
      }
    }
  }
  #pragma unroll
  for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
    #pragma unroll
    for (int ax1_0_1 = 0; ax1_0_1 < 2; ++ax1_0_1) {
      simdgroup_store(C_metal_simdgroup[ax0_0_1 * 2 + ax1_0_1], &C[blockIdx_y * 1024 + ax0_0_1 * 512 + blockIdx_x * 16 + ax1_0_1 * 8], 64);
    }
  }
}
