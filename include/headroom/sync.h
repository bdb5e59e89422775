/* headroom sync API: filled in by its subsystem. Included by headroom.h. */
#ifndef HEADROOM_SYNC_H
#define HEADROOM_SYNC_H
#include "headroom/core.h"
#endif
