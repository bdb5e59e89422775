/* The capture side of `headroom run`: a thread that reads the source into a newest-frame-wins
 * mailbox (hr_flow), losslessly or paced like a camera (--realtime). */
#ifndef HR_CLI_CAPTURE_H
#define HR_CLI_CAPTURE_H
#include <pthread.h>
#include "headroom.h"
#include "headroom/io.h"

#define CAPTURE_POOL 3  /* source frames kept valid at once (lossless: capture back-pressure protects the
                         * held one); --realtime: the capture's own frame copies (3 are ever allocated) */

typedef struct capture_slot { hr_frame f; int64_t index; double t_cap; } capture_slot;

typedef struct capture {
  hr_source *src;
  hr_flow *flow;
  int realtime;
  int64_t start;           /* source frames skipped first */
  capture_slot slots[CAPTURE_POOL];
  pthread_t thread;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t held;            /* index of the frame the consumer holds, -1 none */
  int64_t read;            /* frames read from the source (incl. skipped) */
  int stop;
  hr_status error;
  char errmsg[512];
} capture;

/* Start reading src into flow on a thread of its own. 0 on success. */
int capture_start(capture *c, hr_source *src, hr_flow *flow, int realtime, int64_t start);
/* The consumer takes the next frame (waits at most timeout_ms; NULL on timeout or at the end:
 * hr_flow_take's status in *st) and marks it held until capture_release. */
capture_slot *capture_take(capture *c, int64_t timeout_ms, hr_status *st);
void capture_release(capture *c);
/* Stop and join the thread (NULL-safe on a capture never started). */
void capture_stop(capture *c);
#endif
