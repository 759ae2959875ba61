#include <metal_stdlib>
using namespace metal;

kernel void main_kernel0(device const float* A [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint3 blockIdx [[threadgroup_position_in_grid]],
                         uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int threadIdx_x = threadIdx.x;
  out[threadIdx_x] = -3.4028234663852886e+38f;
  #pragma unroll
  for (int k = 0; k < 19; ++k) {
    out[threadIdx_x] = max(out[threadIdx_x], A[threadIdx_x * 19 + k]);
  }
}
