/* Minimal test harness: CHECK macros that report file:line and count failures; exit 77 = skip
 * (only for a piece of the environment that is missing), FATAL = the test cannot go on (exit 1). */
#ifndef HR_TEST_H
#define HR_TEST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static int hr_test_failures = 0;
static int hr_test_checks = 0;

#define CHECK(cond) do { hr_test_checks++; if (!(cond)) { hr_test_failures++; \
  fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECKF(cond, ...) do { hr_test_checks++; if (!(cond)) { hr_test_failures++; \
  fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
  fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define CHECK_EQ_INT(a, b) do { long long _a = (long long)(a), _b = (long long)(b); hr_test_checks++; \
  if (_a != _b) { hr_test_failures++; fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
  __FILE__, __LINE__, #a, #b, _a, _b); } } while (0)
#define CHECK_NEAR(a, b, tol) do { double _a = (a), _b = (b); hr_test_checks++; \
  if (!(fabs(_a - _b) <= (tol))) { hr_test_failures++; fprintf(stderr, "%s:%d: |%s - %s| <= %g failed: %g vs %g\n", \
  __FILE__, __LINE__, #a, #b, (double)(tol), _a, _b); } } while (0)

/* Skip the whole test with a reason (ctest shows it as skipped). */
#define SKIP(...) do { fprintf(stderr, "SKIP: "); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(77); } while (0)

/* Fail the whole test at once with a reason: for what must work and did not (a model that does
 * not load, a frame source that does not open). Never a skip: a broken library is a failure. */
#define FATAL(...) do { fprintf(stderr, "%s:%d: FATAL: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
  fputc('\n', stderr); exit(1); } while (0)

/* Path from an environment variable joined with a suffix, or NULL if the variable is unset. */
static inline const char *hr_test_path(const char *env, const char *suffix, char *buf, size_t n) {
  const char *d = getenv(env);
  if (!d || !*d) return NULL;
  snprintf(buf, n, "%s/%s", d, suffix);
  return buf;
}

/* The Vulkan tests' device: lavapipe ("llvmpipe") unless HR_VULKAN_DEVICE names another; with
 * validate, under the Khronos validation layer (vulkan-validationlayers, which scripts/setup.sh
 * installs), where the backend counts every message it gives as a failure. Without the layer the
 * test fails (until 2026-12-05 it went on unvalidated, silently: setup did not install it), unless
 * HR_TEST_NO_VALIDATION=1 says to go on without it. */
static inline void hr_test_vulkan_env(int validate) {
  setenv("HR_VULKAN_DEVICE", "llvmpipe", 0);
  if (!validate) return;
  const char *no = getenv("HR_TEST_NO_VALIDATION");
  FILE *layer = fopen("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json", "r");
  if (layer) { fclose(layer); setenv("HR_VULKAN_VALIDATION", "1", 0); return; }
  if (no && *no == '1') { fprintf(stderr, "the Khronos validation layer is not installed: running without it (HR_TEST_NO_VALIDATION=1)\n"); return; }
  fprintf(stderr, "FAIL: the Khronos validation layer is not installed (apt-get install vulkan-validationlayers, as "
                  "scripts/setup.sh does; HR_TEST_NO_VALIDATION=1 runs without it)\n");
  exit(1);
}

static inline int hr_test_finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, hr_test_checks, hr_test_failures);
  return hr_test_failures ? 1 : 0;
}
#endif
