/* Tests on real frames: RVM and the first frames of the sam2 bedroom clip, read into a source's
 * pool (the frames stay valid until the source is destroyed). Kept apart from hr_test.h, which
 * does not pull in the io library. */
#ifndef HR_TEST_FRAMES_H
#define HR_TEST_FRAMES_H
#include <stdio.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test.h"

/* Load $HR_MODEL_DIR/rvm.json into *m and read nf frames of $HR_DATA_DIR/sam2-bedroom/frames into
 * fr (pool of nf). Returns 1 when all is there; otherwise 0 with the reason printed and counted as
 * a failed check (*m and *src may be set: destroy them). */
static inline int hr_test_rvm_frames(hr_model **m, hr_source **src, hr_frame *fr, int nf) {
  char mp[1024], ap[1024], err[512] = "";
  *m = NULL; *src = NULL;
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp) || !hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", ap, sizeof ap)) {
    fprintf(stderr, "FAIL: HR_MODEL_DIR / HR_DATA_DIR unset\n");
    hr_test_failures++;
    return 0;
  }
  CHECK_EQ_INT(hr_model_load(mp, m, err, sizeof err), HR_OK);
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.pool_size = nf;
  if (*m) CHECK_EQ_INT(hr_source_open(ap, &sp, src, err, sizeof err), HR_OK);
  if (!*m || !*src) { printf("%s\n", err); return 0; }
  for (int i = 0; i < nf; i++)
    if (hr_source_read(*src, &fr[i]) != HR_OK) { CHECKF(0, "reading frame %d of %s", i, ap); return 0; }
  return 1;
}
#endif
