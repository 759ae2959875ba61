#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

void tir_main(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {
  #pragma omp parallel for
  for (int i_0 = 0; i_0 < 8; ++i_0) {
    for (int i_1 = 0; i_1 < 128; ++i_1) {
      C[i_0 * 128 + i_1] = A[i_0 * 128 + i_1] + B[i_0 * 128 + i_1];
    }
  }
}
