/* Frame-source library: shared helpers (placeholder until the sources land). */
#include "headroom.h"
int hr__io_placeholder(void) { return 0; }
