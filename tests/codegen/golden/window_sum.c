#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

void tir_main(float* __restrict__ A, float* __restrict__ B) {
  #pragma omp parallel for
  for (int i_0 = 0; i_0 < 8; ++i_0) {
    float A_shared[130];
    for (int i_1 = 0; i_1 < 128; ++i_1) {
      for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
        for (int ax0_1 = 0; ax0_1 < 128; ++ax0_1) {
          if (ax0_0 * 128 + ax0_1 < 130) {
            A_shared[ax0_0 * 128 + ax0_1] = A[i_0 * 128 + ax0_0 * 128 + ax0_1];
          }
        }
      }
      B[i_0 * 128 + i_1] = A_shared[i_1] + A_shared[i_1 + 1] + A_shared[i_1 + 2];
    }
  }
}
