extern "C" __global__ void __launch_bounds__(128) main_kernel0(const float* __restrict__ A, float* __restrict__ B) {
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  __shared__ float A_max_shared[1];
  __shared__ float A_sum_shared[1];
  __shared__ float red_buf_A_max_shared[4];
  float in_thread_A_max_shared[1];
  float cross_thread_A_max_shared[1];
  in_thread_A_max_shared[0] = -3.4028234663852886e+38f;
  #pragma unroll
  for (int ax0_0 = 0; ax0_0 < 8; ++ax0_0) {
    in_thread_A_max_shared[0] = fmaxf(in_thread_A_max_shared[0], A[blockIdx_x * 1024 + ax0_0 * 128 + threadIdx_x]);
  }
  float red_A_max_shared_other[1];
  float red_A_max_shared[1];
  red_A_max_shared[0] = in_thread_A_max_shared[0];
  red_A_max_shared_other[0] = __shfl_down_sync(4294967295u, red_A_max_shared[0], 16, 32);
  red_A_max_shared[0] = fmaxf(red_A_max_shared[0], red_A_max_shared_other[0]);
  red_A_max_shared_other[0] = __shfl_down_sync(4294967295u, red_A_max_shared[0], 8, 32);
  red_A_max_shared[0] = fmaxf(red_A_max_shared[0], red_A_max_shared_other[0]);
  red_A_max_shared_other[0] = __shfl_down_sync(4294967295u, red_A_max_shared[0], 4, 32);
  red_A_max_shared[0] = fmaxf(red_A_max_shared[0], red_A_max_shared_other[0]);
  red_A_max_shared_other[0] = __shfl_down_sync(4294967295u, red_A_max_shared[0], 2, 32);
  red_A_max_shared[0] = fmaxf(red_A_max_shared[0], red_A_max_shared_other[0]);
  red_A_max_shared_other[0] = __shfl_down_sync(4294967295u, red_A_max_shared[0], 1, 32);
  red_A_max_shared[0] = fmaxf(red_A_max_shared[0], red_A_max_shared_other[0]);
  if (threadIdx_x % 32 == 0) {
    red_buf_A_max_shared[threadIdx_x / 32] = red_A_max_shared[0];
  }
  __syncthreads();
  red_A_max_shared[0] = red_buf_A_max_shared[0];
  #pragma unroll
  for (int A_max_shared_warp = 1; A_max_shared_warp < 4; ++A_max_shared_warp) {
    red_A_max_shared[0] = fmaxf(red_A_max_shared[0], red_buf_A_max_shared[A_max_shared_warp]);
  }
  __syncthreads();
  cross_thread_A_max_shared[0] = red_A_max_shared[0];
  A_max_shared[0] = cross_thread_A_max_shared[0];
  __syncthreads();
  __shared__ float red_buf_A_sum_shared[4];
  float in_thread_A_sum_shared[1];
  float cross_thread_A_sum_shared[1];
  in_thread_A_sum_shared[0] = 0.0f;
  #pragma unroll
  for (int ax0_0_1 = 0; ax0_0_1 < 8; ++ax0_0_1) {
    in_thread_A_sum_shared[0] = in_thread_A_sum_shared[0] + expf(A[blockIdx_x * 1024 + ax0_0_1 * 128 + threadIdx_x] - A_max_shared[0]);
  }
  float red_A_sum_shared_other[1];
  float red_A_sum_shared[1];
  red_A_sum_shared[0] = in_thread_A_sum_shared[0];
  red_A_sum_shared_other[0] = __shfl_down_sync(4294967295u, red_A_sum_shared[0], 16, 32);
  red_A_sum_shared[0] = red_A_sum_shared[0] + red_A_sum_shared_other[0];
  red_A_sum_shared_other[0] = __shfl_down_sync(4294967295u, red_A_sum_shared[0], 8, 32);
  red_A_sum_shared[0] = red_A_sum_shared[0] + red_A_sum_shared_other[0];
  red_A_sum_shared_other[0] = __shfl_down_sync(4294967295u, red_A_sum_shared[0], 4, 32);
  red_A_sum_shared[0] = red_A_sum_shared[0] + red_A_sum_shared_other[0];
  red_A_sum_shared_other[0] = __shfl_down_sync(4294967295u, red_A_sum_shared[0], 2, 32);
  red_A_sum_shared[0] = red_A_sum_shared[0] + red_A_sum_shared_other[0];
  red_A_sum_shared_other[0] = __shfl_down_sync(4294967295u, red_A_sum_shared[0], 1, 32);
  red_A_sum_shared[0] = red_A_sum_shared[0] + red_A_sum_shared_other[0];
  if (threadIdx_x % 32 == 0) {
    red_buf_A_sum_shared[threadIdx_x / 32] = red_A_sum_shared[0];
  }
  __syncthreads();
  red_A_sum_shared[0] = red_buf_A_sum_shared[0];
  #pragma unroll
  for (int A_sum_shared_warp = 1; A_sum_shared_warp < 4; ++A_sum_shared_warp) {
    red_A_sum_shared[0] = red_A_sum_shared[0] + red_buf_A_sum_shared[A_sum_shared_warp];
  }
  __syncthreads();
  cross_thread_A_sum_shared[0] = red_A_sum_shared[0];
  A_sum_shared[0] = cross_thread_A_sum_shared[0];
  __syncthreads();
  for (int j_0 = 0; j_0 < 8; ++j_0) {
    B[blockIdx_x * 1024 + j_0 * 128 + threadIdx_x] = expf(A[blockIdx_x * 1024 + j_0 * 128 + threadIdx_x] - A_max_shared[0]) / A_sum_shared[0];
  }
}
