#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
typedef float float4 __attribute__((vector_size(16), aligned(4)));

void tir_main(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {
  #pragma omp parallel for
  for (int i_0 = 0; i_0 < 16; ++i_0) {
    for (int j_0 = 0; j_0 < 16; ++j_0) {
      float A_shared[512] __attribute__((aligned(64)));
      float B_shared[512] __attribute__((aligned(64)));
      for (int i_1_j_1_fused = 0; i_1_j_1_fused < 64; ++i_1_j_1_fused) {
        float C_local[64];
        for (int k_0 = 0; k_0 < 128; ++k_0) {
          for (int ax0_ax1_fused_0 = 0; ax0_ax1_fused_0 < 2; ++ax0_ax1_fused_0) {
            for (int ax0_ax1_fused_1 = 0; ax0_ax1_fused_1 < 64; ++ax0_ax1_fused_1) {
              *(float4*)(A_shared + ax0_ax1_fused_0 * 256 + ax0_ax1_fused_1 * 4) = *(float4*)(A + i_0 * 65536 + ax0_ax1_fused_0 * 32768 + ax0_ax1_fused_1 / 2 * 1024 + k_0 * 8 + ax0_ax1_fused_1 % 2 * 4);
            }
          }
          for (int ax0_ax1_fused_0_1 = 0; ax0_ax1_fused_0_1 < 2; ++ax0_ax1_fused_0_1) {
            for (int ax0_ax1_fused_1_1 = 0; ax0_ax1_fused_1_1 < 64; ++ax0_ax1_fused_1_1) {
              *(float4*)(B_shared + ax0_ax1_fused_0_1 * 256 + ax0_ax1_fused_1_1 * 4) = *(float4*)(B + k_0 * 8192 + ax0_ax1_fused_0_1 * 4096 + ax0_ax1_fused_1_1 / 16 * 1024 + j_0 * 64 + ax0_ax1_fused_1_1 % 16 * 4);
            }
          }
          for (int k_1 = 0; k_1 < 8; ++k_1) {
            for (int i_2 = 0; i_2 < 8; ++i_2) {
              for (int j_2 = 0; j_2 < 8; ++j_2) {
                if (k_0 == 0 && k_1 == 0) {
                  C_local[i_2 * 8 + j_2] = 0.0f;
                }
                C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A_shared[i_1_j_1_fused / 8 * 64 + i_2 * 8 + k_1] * B_shared[k_1 * 64 + i_1_j_1_fused % 8 * 8 + j_2];
              }
            }
          }
        }
        for (int ax0 = 0; ax0 < 8; ++ax0) {
          for (int ax1 = 0; ax1 < 8; ++ax1) {
            C[i_0 * 65536 + i_1_j_1_fused / 8 * 8192 + ax0 * 1024 + j_0 * 64 + i_1_j_1_fused % 8 * 8 + ax1] = C_local[ax0 * 8 + ax1];
          }
        }
      }
    }
  }
}
