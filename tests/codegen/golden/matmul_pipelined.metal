#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  threadgroup float A_shared[3072];
  threadgroup float B_shared[3072];
  float C_local[16];
  #pragma unroll
  for (int i_2_init = 0; i_2_init < 4; ++i_2_init) {
    #pragma unroll
    for (int j_2_init = 0; j_2_init < 4; ++j_2_init) {
      C_local[i_2_init * 4 + j_2_init] = 0.0f;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  *(threadgroup float4*)(A_shared + threadIdx_x * 4) = *(device const float4*)(A + blockIdx_x / 16 * 65536 + threadIdx_x / 4 * 1024 + threadIdx_x % 4 * 4);
  *(threadgroup float4*)(B_shared + threadIdx_x * 4) = *(device const float4*)(B + threadIdx_x / 16 * 1024 + blockIdx_x % 16 * 64 + threadIdx_x % 16 * 4);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  *(threadgroup float4*)(A_shared + threadIdx_x * 4 + 1024) = *(device const float4*)(A + blockIdx_x / 16 * 65536 + threadIdx_x / 4 * 1024 + threadIdx_x % 4 * 4 + 16);
  *(threadgroup float4*)(B_shared + threadIdx_x * 4 + 1024) = *(device const float4*)(B + threadIdx_x / 16 * 1024 + blockIdx_x % 16 * 64 + threadIdx_x % 16 * 4 + 16384);
  for (int k_0 = 2; k_0 < 64; ++k_0) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    *(threadgroup float4*)(A_shared + k_0 % 3 * 1024 + threadIdx_x * 4) = *(device const float4*)(A + blockIdx_x / 16 * 65536 + threadIdx_x / 4 * 1024 + k_0 * 16 + threadIdx_x % 4 * 4);
    *(threadgroup float4*)(B_shared + k_0 % 3 * 1024 + threadIdx_x * 4) = *(device const float4*)(B + k_0 * 16384 + threadIdx_x / 16 * 1024 + blockIdx_x % 16 * 64 + threadIdx_x % 16 * 4);
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
  threadgroup_barrier(mem_flags::mem_threadgroup);
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
  threadgroup_barrier(mem_flags::mem_threadgroup);
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
