extern "C" __global__ void __launch_bounds__(128) main_kernel0(const float* __restrict__ A, float* __restrict__ B) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  __shared__ float A_shared[130];
  #pragma unroll
  for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
    if (ax0_0 * 128 + threadIdx_x < 130) {
      A_shared[ax0_0 * 128 + threadIdx_x] = A[blockIdx_x * 128 + ax0_0 * 128 + threadIdx_x];
    }
  }
  __syncthreads();
  B[blockIdx_x * 128 + threadIdx_x] = A_shared[threadIdx_x] + A_shared[threadIdx_x + 1] + A_shared[threadIdx_x + 2];
}
