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
  const int threadIdx_y = threadIdx.y;
  threadgroup float A_shared[512];
  threadgroup float B_shared[512];
  simdgroup_float8x8 C_metal_simdgroup[4];
  #pragma unroll
  for (int i_0_2_init = 0; i_0_2_init < 2; ++i_0_2_init) {
    #pragma unroll
    for (int j_0_2_init = 0; j_0_2_init < 2; ++j_0_2_init) {
      C_metal_simdgroup[i_0_2_init * 2 + j_0_2_init] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
  }
  for (int k_0_0 = 0; k_0_0 < 4; ++k_0_0) {
    simdgroup_float8x8 A_metal_simdgroup[4];
    simdgroup_float8x8 B_metal_simdgroup[4];
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 2; ++ax0_ax1_fused_0) {
      *(threadgroup float2*)(A_shared + ax0_ax1_fused_0 * 256 + threadIdx_y * 64 + threadIdx_x * 2) = *(device const float2*)(A + blockIdx_y * 2048 + ax0_ax1_fused_0 * 1024 + threadIdx_y * 256 + threadIdx_x / 8 * 64 + k_0_0 * 16 + threadIdx_x % 8 * 2);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma unroll
    for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
      #pragma unroll
      for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
        simdgroup_load(A_metal_simdgroup[ax0_0 * 2 + ax1_0], &A_shared[threadIdx_y / 2 * 256 + ax0_0 * 128 + ax1_0 * 8], 16);
      }
    }
    for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 2; ++ax0_ax1_fused_0_1) {
      *(threadgroup float2*)(B_shared + ax0_ax1_fused_0_1 * 256 + threadIdx_y * 64 + threadIdx_x * 2) = *(device const float2*)(B + k_0_0 * 1024 + ax0_ax1_fused_0_1 * 512 + threadIdx_y * 128 + threadIdx_x / 16 * 64 + blockIdx_x * 32 + threadIdx_x % 16 * 2);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma unroll
    for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
      #pragma unroll
      for (int ax1_0_1 = 0; ax1_0_1 < 2; ++ax1_0_1) {
        simdgroup_load(B_metal_simdgroup[ax0_0_1 * 2 + ax1_0_1], &B_shared[ax0_0_1 * 256 + threadIdx_y % 2 * 16 + ax1_0_1 * 8], 32);
      }
    }
    #pragma unroll
    for (int i_0_2 = 0; i_0_2 < 2; ++i_0_2) {
      #pragma unroll
      for (int j_0_2 = 0; j_0_2 < 2; ++j_0_2) {
        #pragma unroll
        for (int k_0_1 = 0; k_0_1 < 2; ++k_0_1) {
          simdgroup_multiply_accumulate(C_metal_simdgroup[i_0_2 * 2 + j_0_2], A_metal_simdgroup[i_0_2 * 2 + k_0_1], B_metal_simdgroup[k_0_1 * 2 + j_0_2], C_metal_simdgroup[i_0_2 * 2 + j_0_2]);
        }
      }
    }
  }
  #pragma unroll
  for (int ax0_0_2 = 0; ax0_0_2 < 2; ++ax0_0_2) {
    #pragma unroll
    for (int ax1_0_2 = 0; ax1_0_2 < 2; ++ax1_0_2) {
      simdgroup_store(C_metal_simdgroup[ax0_0_2 * 2 + ax1_0_2], &C[blockIdx_y * 2048 + threadIdx_y / 2 * 1024 + ax0_0_2 * 512 + blockIdx_x * 32 + threadIdx_y % 2 * 16 + ax1_0_2 * 8], 64);
    }
  }
}
