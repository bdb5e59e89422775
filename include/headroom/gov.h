/* headroom gov API: filled in by its subsystem. Included by headroom.h. */
#ifndef HEADROOM_GOV_H
#define HEADROOM_GOV_H
#include "headroom/core.h"
#endif
