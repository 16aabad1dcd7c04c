/* fp8lab/linear_c.h from plain C (C99, -pedantic): the header compiles as C and a C program
 * links libfp8lab_linear.so alone. Exit 0 when the version matches and a bad argument comes
 * back as a status with a message naming it, after a forward and backward on the CPU ran. */
#include <stdio.h>
#include <string.h>

#include "fp8lab/linear_c.h"

enum { ROWS = 16, IN = 32, OUT = 48 };

static int fail(const char* what) {
  fprintf(stderr, "linear_c_from_c: %s (last error: %s)\n", what, fp8lab_linear_last_error());
  return 1;
}

int main(void) {
  static uint16_t x[ROWS * IN], w[OUT * IN], y[ROWS * OUT], dy[ROWS * OUT], dx[ROWS * IN];
  static float dw[OUT * IN];
  fp8lab_linear* linear = NULL;
  fp8lab_linear_saved* saved = NULL;
  float scales[FP8LAB_LINEAR_STATS_LEN];
  int i;
  if (fp8lab_linear_abi_version() != FP8LAB_LINEAR_ABI_VERSION) return fail("ABI version");
  if (fp8lab_linear_create("cpu", "mxfp8", IN, OUT, &linear) != FP8LAB_LINEAR_E_INVALID_ARGUMENT)
    return fail("an unknown recipe was accepted");
  if (strstr(fp8lab_linear_last_error(), "'mxfp8'") == NULL) return fail("message without it");
  for (i = 0; i < ROWS * IN; ++i) x[i] = (uint16_t)(0x3F80 + (i % 7)); /* 1.0 .. 1.05 */
  for (i = 0; i < OUT * IN; ++i) w[i] = (uint16_t)(0x3C00 + (i % 5));  /* ~0.0078 */
  for (i = 0; i < ROWS * OUT; ++i) dy[i] = 0x3A80;                      /* ~0.001 */
  if (fp8lab_linear_create("cpu", "tensorwise", IN, OUT, &linear) != FP8LAB_LINEAR_OK)
    return fail("create");
  if (fp8lab_linear_forward(linear, ROWS, x, FP8LAB_LINEAR_BF16, w, FP8LAB_LINEAR_BF16, y,
                            FP8LAB_LINEAR_BF16, NULL, &saved) != FP8LAB_LINEAR_OK)
    return fail("forward");
  if (fp8lab_linear_backward(linear, saved, ROWS, dy, FP8LAB_LINEAR_BF16, dx, FP8LAB_LINEAR_BF16,
                             dw, FP8LAB_LINEAR_F32, 0, NULL) != FP8LAB_LINEAR_OK)
    return fail("backward");
  if (fp8lab_linear_scales(saved, scales, FP8LAB_LINEAR_STATS_LEN) != FP8LAB_LINEAR_OK)
    return fail("scales");
  if (scales[0] <= 1.0f || scales[0] > 1.1f) return fail("x's amax is not that of x");
  fp8lab_linear_saved_destroy(saved);
  fp8lab_linear_destroy(linear);
  printf("linear_c_from_c: ok (x amax %g)\n", scales[0]);
  return 0;
}
