#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         constant float& val [[buffer(1)]],
                         device float* out [[buffer(2)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  if (blockIdx_x * 128 + threadIdx_x < 145) {
    out[blockIdx_x * 128 + threadIdx_x] = pow(A[blockIdx_x * 128 + threadIdx_x], val);
  }
}
