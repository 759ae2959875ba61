extern "C" __global__ void __launch_bounds__(128) main_kernel0(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  C[blockIdx_x * 128 + threadIdx_x] = A[blockIdx_x * 128 + threadIdx_x] + B[blockIdx_x * 128 + threadIdx_x];
}
