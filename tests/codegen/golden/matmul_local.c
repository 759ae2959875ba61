#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

void tir_main(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {
  #pragma omp parallel for
  for (int i_0 = 0; i_0 < 16; ++i_0) {
    for (int j_0 = 0; j_0 < 16; ++j_0) {
      for (int i_1 = 0; i_1 < 8; ++i_1) {
        for (int j_1 = 0; j_1 < 8; ++j_1) {
          float C_local[64];
          for (int i_2_init = 0; i_2_init < 8; ++i_2_init) {
            for (int j_2_init = 0; j_2_init < 8; ++j_2_init) {
              C_local[i_2_init * 8 + j_2_init] = 0.0f;
            }
          }
          for (int k_0 = 0; k_0 < 256; ++k_0) {
            for (int i_2 = 0; i_2 < 8; ++i_2) {
              for (int j_2 = 0; j_2 < 8; ++j_2) {
                C_local[i_2 * 8 + j_2] = C_local[i_2 * 8 + j_2] + A[i_0 * 65536 + i_1 * 8192 + i_2 * 1024 + k_0 * 4] * B[k_0 * 4096 + j_0 * 64 + j_1 * 8 + j_2];
              }
            }
            for (int i_2_1 = 0; i_2_1 < 8; ++i_2_1) {
              for (int j_2_1 = 0; j_2_1 < 8; ++j_2_1) {
                C_local[i_2_1 * 8 + j_2_1] = C_local[i_2_1 * 8 + j_2_1] + A[i_0 * 65536 + i_1 * 8192 + i_2_1 * 1024 + k_0 * 4 + 1] * B[k_0 * 4096 + j_0 * 64 + j_1 * 8 + j_2_1 + 1024];
              }
            }
            for (int i_2_2 = 0; i_2_2 < 8; ++i_2_2) {
              for (int j_2_2 = 0; j_2_2 < 8; ++j_2_2) {
                C_local[i_2_2 * 8 + j_2_2] = C_local[i_2_2 * 8 + j_2_2] + A[i_0 * 65536 + i_1 * 8192 + i_2_2 * 1024 + k_0 * 4 + 2] * B[k_0 * 4096 + j_0 * 64 + j_1 * 8 + j_2_2 + 2048];
              }
            }
            for (int i_2_3 = 0; i_2_3 < 8; ++i_2_3) {
              for (int j_2_3 = 0; j_2_3 < 8; ++j_2_3) {
                C_local[i_2_3 * 8 + j_2_3] = C_local[i_2_3 * 8 + j_2_3] + A[i_0 * 65536 + i_1 * 8192 + i_2_3 * 1024 + k_0 * 4 + 3] * B[k_0 * 4096 + j_0 * 64 + j_1 * 8 + j_2_3 + 3072];
              }
            }
          }
          for (int ax0 = 0; ax0 < 8; ++ax0) {
            for (int ax1 = 0; ax1 < 8; ++ax1) {
              C[i_0 * 65536 + i_1 * 8192 + ax0 * 1024 + j_0 * 64 + j_1 * 8 + ax1] = C_local[ax0 * 8 + ax1];
            }
          }
        }
      }
    }
  }
}
