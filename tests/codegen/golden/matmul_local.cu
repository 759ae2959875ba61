extern "C" __global__ void __launch_bounds__(64) main_kernel0(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  const int threadIdx_y = threadIdx.y;
  float C_local[64];
  #pragma unroll
  for (int i_2_init = 0; i_2_init < 8; ++i_2_init) {
    #pragma unroll
    for (int j_2_init = 0; j_2_init < 8; ++j_2_init) {
      C_local[i_2_init * 8 + j_2_init] = 0.0f;
    }
  }
  for (int k_0 = 0; k_0 < 256; ++k_0) {
    #pragma unroll
    for (int i_2 = 0; i_2 < 8; ++i_2) {
      #pragma unroll
      for (int j_2 = 0; j_2 < 8; ++j_2) {
        C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A[blockIdx_x * 65536 + threadIdx_x * 8192 + i_2 * 1024 + k_0 * 4] * B[k_0 * 4096 + blockIdx_y * 64 + threadIdx_y * 8 + j_2];
      }
    }
    #pragma unroll
    for (int i_2_1 = 0; i_2_1 < 8; ++i_2_1) {
      #pragma unroll
      for (int j_2_1 = 0; j_2_1 < 8; ++j_2_1) {
        C_local[i_2_1 * 8 + j_2_1] = C_local[i_2_1 * 8 + j_2_1] + A[blockIdx_x * 65536 + threadIdx_x * 8192 + i_2_1 * 1024 + k_0 * 4 + 1] * B[k_0 * 4096 + blockIdx_y * 64 + threadIdx_y * 8 + j_2_1 + 1024];
      }
    }
    #pragma unroll
    for (int i_2_2 = 0; i_2_2 < 8; ++i_2_2) {
      #pragma unroll
      for (int j_2_2 = 0; j_2_2 < 8; ++j_2_2) {
        C_local[i_2_2 * 8 + j_2_2] = C_local[i_2_2 * 8 + j_2_2] + A[blockIdx_x * 65536 + threadIdx_x * 8192 + i_2_2 * 1024 + k_0 * 4 + 2] * B[k_0 * 4096 + blockIdx_y * 64 + threadIdx_y * 8 + j_2_2 + 2048];
      }
    }
    #pragma unroll
    for (int i_2_3 = 0; i_2_3 < 8; ++i_2_3) {
      #pragma unroll
      for (int j_2_3 = 0; j_2_3 < 8; ++j_2_3) {
        C_local[i_2_3 * 8 + j_2_3] = C_local[i_2_3 * 8 + j_2_3] + A[blockIdx_x * 65536 + threadIdx_x * 8192 + i_2_3 * 1024 + k_0 * 4 + 3] * B[k_0 * 4096 + blockIdx_y * 64 + threadIdx_y * 8 + j_2_3 + 3072];
      }
    }
  }
  #pragma unroll
  for (int ax0 = 0; ax0 < 8; ++ax0) {
    #pragma unroll
    for (int ax1 = 0; ax1 < 8; ++ax1) {
      C[blockIdx_x * 65536 + threadIdx_x * 8192 + ax0 * 1024 + blockIdx_y * 64 + threadIdx_y * 8 + ax1] = C_local[ax0 * 8 + ax1];
    }
  }
}
