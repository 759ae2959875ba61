#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void __launch_bounds__(128) main_kernel0(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C) {
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  const int threadIdx_y = threadIdx.y;
  __shared__ __align__(32) half A_shared[2048];
  __shared__ __align__(32) half B_shared[2048];
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> C_wmma_accumulator[4];
  #pragma unroll
  for (int i_0_2_init = 0; i_0_2_init < 2; ++i_0_2_init) {
    #pragma unroll
    for (int j_0_2_init = 0; j_0_2_init < 2; ++j_0_2_init) {
      wmma::fill_fragment(C_wmma_accumulator[i_0_2_init * 2 + j_0_2_init], 0.0f);
    }
  }
  for (int k_0_0 = 0; k_0_0 < 4; ++k_0_0) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> A_wmma_matrix_a[4];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> B_wmma_matrix_b[4];
    for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 8; ++ax0_ax1_fused_0) {
      *(half2*)(A_shared + ax0_ax1_fused_0 * 256 + threadIdx_y * 64 + threadIdx_x * 2) = *(const half2*)(A + blockIdx_y * 8192 + ax0_ax1_fused_0 * 1024 + threadIdx_y * 256 + threadIdx_x / 16 * 128 + k_0_0 * 32 + threadIdx_x % 16 * 2);
    }
    __syncthreads();
    #pragma unroll
    for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
      #pragma unroll
      for (int ax1_0 = 0; ax1_0 < 2; ++ax1_0) {
        wmma::load_matrix_sync(A_wmma_matrix_a[ax0_0 * 2 + ax1_0], &A_shared[threadIdx_y / 2 * 1024 + ax0_0 * 512 + ax1_0 * 16], 32);
      }
    }
    for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 8; ++ax0_ax1_fused_0_1) {
      *(half2*)(B_shared + ax0_ax1_fused_0_1 * 256 + threadIdx_y * 64 + threadIdx_x * 2) = *(const half2*)(B + k_0_0 * 4096 + ax0_ax1_fused_0_1 * 512 + threadIdx_y * 128 + blockIdx_x * 64 + threadIdx_x * 2);
    }
    __syncthreads();
    #pragma unroll
    for (int ax0_0_1 = 0; ax0_0_1 < 2; ++ax0_0_1) {
      #pragma unroll
      for (int ax1_0_1 = 0; ax1_0_1 < 2; ++ax1_0_1) {
        wmma::load_matrix_sync(B_wmma_matrix_b[ax0_0_1 * 2 + ax1_0_1], &B_shared[ax0_0_1 * 1024 + threadIdx_y % 2 * 32 + ax1_0_1 * 16], 64);
      }
    }
    #pragma unroll
    for (int i_0_2 = 0; i_0_2 < 2; ++i_0_2) {
      #pragma unroll
      for (int j_0_2 = 0; j_0_2 < 2; ++j_0_2) {
        #pragma unroll
        for (int k_0_1 = 0; k_0_1 < 2; ++k_0_1) {
          wmma::mma_sync(C_wmma_accumulator[i_0_2 * 2 + j_0_2], A_wmma_matrix_a[i_0_2 * 2 + k_0_1], B_wmma_matrix_b[k_0_1 * 2 + j_0_2], C_wmma_accumulator[i_0_2 * 2 + j_0_2]);
        }
      }
    }
  }
  #pragma unroll
  for (int ax0_0_2 = 0; ax0_0_2 < 2; ++ax0_0_2) {
    #pragma unroll
    for (int ax1_0_2 = 0; ax1_0_2 < 2; ++ax1_0_2) {
      wmma::store_matrix_sync(&C[blockIdx_y * 8192 + threadIdx_y / 2 * 4096 + ax0_0_2 * 2048 + blockIdx_x * 64 + threadIdx_y % 2 * 32 + ax1_0_2 * 16], C_wmma_accumulator[ax0_0_2 * 2 + ax1_0_2], 128, wmma::mem_row_major);
    }
  }
}
