extern "C" __global__ void __launch_bounds__(64) main_kernel0(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  __shared__ __align__(16) float A_shared[2304];
  __shared__ __align__(16) float B_shared[544];
  float C_local[64];
  for (int k_0 = 0; k_0 < 128; ++k_0) {
    __syncthreads();
    #pragma unroll
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 2; ++ax0_ax1_fused_0) {
      *(float4*)(A_shared + ax0_ax1_fused_0 * 1152 + threadIdx_x / 2 * 36 + threadIdx_x % 2 * 4) = *(const float4*)(A + blockIdx_x * 65536 + ax0_ax1_fused_0 * 32768 + threadIdx_x / 2 * 1024 + k_0 * 8 + threadIdx_x % 2 * 4);
    }
    #pragma unroll
    for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 2; ++ax0_ax1_fused_0_1) {
      *(float4*)(B_shared + ax0_ax1_fused_0_1 * 272 + threadIdx_x / 16 * 68 + threadIdx_x % 16 * 4) = *(const float4*)(B + k_0 * 8192 + ax0_ax1_fused_0_1 * 4096 + threadIdx_x / 16 * 1024 + blockIdx_y * 64 + threadIdx_x % 16 * 4);
    }
    __syncthreads();
    #pragma unroll
    for (int k_1 = 0; k_1 < 8; ++k_1) {
      #pragma unroll
      for (int i_2 = 0; i_2 < 8; ++i_2) {
        #pragma unroll
        for (int j_2 = 0; j_2 < 8; ++j_2) {
          if (k_0 == 0 && k_1 == 0) {
            C_local[i_2 * 8 + j_2] = 0.0f;
          }
          C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A_shared[threadIdx_x / 8 * 288 + i_2 * 36 + k_1] * B_shared[k_1 * 68 + threadIdx_x % 8 * 8 + j_2];
        }
      }
    }
  }
  #pragma unroll
  for (int ax0 = 0; ax0 < 8; ++ax0) {
    #pragma unroll
    for (int ax1 = 0; ax1 < 8; ++ax1) {
      C[blockIdx_x * 65536 + threadIdx_x / 8 * 8192 + ax0 * 1024 + blockIdx_y * 64 + threadIdx_x % 8 * 8 + ax1] = C_local[ax0 * 8 + ax1];
    }
  }
}
