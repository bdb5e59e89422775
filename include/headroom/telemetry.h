/* headroom telemetry API: filled in by its subsystem. Included by headroom.h. */
#ifndef HEADROOM_TELEMETRY_H
#define HEADROOM_TELEMETRY_H
#include "headroom/core.h"
#endif
