#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void __launch_bounds__(32) main_kernel0(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> C_wmma_accumulator[4];
  #pragma unroll
  for (int i_1_init = 0; i_1_init < 2; ++i_1_init) {
    #pragma unroll
    for (int j_1_init = 0; j_1_init < 2; ++j_1_init) {
      wmma::fill_fragment(C_wmma_accumulator[i_1_init * 2 + j_1_init], 0.0f);
    }
  }
  for (int k_0 = 0; k_0 < 4; ++k_0) {
    __shared__ __align__(32) half A_shared[512];
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> A_shared_wmma_matrix_a[2];
    __shared__ __align__(32) half B_shared[512];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> B_shared_wmma_matrix_b[2];
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 16; ++ax0_ax1_fused_0) {
      A_shared[ax0_ax1_fused_0 * 32 + threadIdx_x] = A[blockIdx_y * 2048 + ax0_ax1_fused_0 * 128 + threadIdx_x / 16 * 64 + k_0 * 16 + threadIdx_x % 16];
    }
    __syncthreads();
    #pragma unroll
    for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
      wmma::load_matrix_sync(A_shared_wmma_matrix_a[ax0_0], &A_shared[ax0_0 * 256], 16);
    }
    for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 16; ++ax0_ax1_fused_0_1) {
      B_shared[ax0_ax1_fused_0_1 * 32 + threadIdx_x] = B[k_0 * 1024 + ax0_ax1_fused_0_1 * 64 + blockIdx_x * 32 + threadIdx_x];
    }
    __syncthreads();
    #pragma unroll
    for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
      wmma::load_matrix_sync(B_shared_wmma_matrix_b[ax1_0], &B_shared[ax1_0 * 16], 32);
    }
    #pragma unroll
    for (int i_1 = 0; i_1 < 2; ++i_1) {
      #pragma unroll
      for (int j_1 = 0; j_1 < 2; ++j_1) {
        wmma::mma_sync(C_wmma_accumulator[i_1 * 2 + j_1], A_shared_wmma_matrix_a[i_1], B_shared_wmma_matrix_b[j_1], C_wmma_accumulator[i_1 * 2 + j_1]);
      }
    }
  }
  #pragma unroll
  for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
    #pragma unroll
    for (int ax1_0_1 = 0; ax1_0_1 < 2; ++ax1_0_1) {
      wmma::store_matrix_sync(&C[blockIdx_y * 2048 + ax0_0_1 * 1024 + blockIdx_x * 32 + ax1_0_1 * 16], C_wmma_accumulator[ax0_0_1 * 2 + ax1_0_1], 64, wmma::mem_row_major);
    }
  }
}
