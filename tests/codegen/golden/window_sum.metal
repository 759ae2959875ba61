#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device float* B [[buffer(1)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  threadgroup float A_shared[130];
  #pragma unroll
  for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
    if (ax0_0 * 128 + threadIdx_x < 130) {
      A_shared[ax0_0 * 128 + threadIdx_x] = A[blockIdx_x * 128 + ax0_0 * 128 + threadIdx_x];
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  B[blockIdx_x * 128 + threadIdx_x] = A_shared[threadIdx_x] + A_shared[threadIdx_x + 1] + A_shared[threadIdx_x + 2];
}
