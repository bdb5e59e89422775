/* headroom health API: filled in by its subsystem. Included by headroom.h. */
#ifndef HEADROOM_HEALTH_H
#define HEADROOM_HEALTH_H
#include "headroom/core.h"
#endif
