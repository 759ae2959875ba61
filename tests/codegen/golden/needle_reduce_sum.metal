#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  if (blockIdx_x * 128 + threadIdx_x < 150) {
    out[blockIdx_x * 128 + threadIdx_x] = 0.0f;
  }
  #pragma unroll
  for (int k = 0; k < 33; ++k) {
    if (blockIdx_x * 128 + threadIdx_x < 150) {
      out[blockIdx_x * 128 + threadIdx_x] = out[blockIdx_x * 128 + threadIdx_x] + A[blockIdx_x * 4224 + threadIdx_x * 33 + k];
    }
  }
}
