/* Lowering passes applied to a plan's op list before liveness and arena planning. */
#ifndef HR_PLAN_LOWER_H
#define HR_PLAN_LOWER_H
#include "plan/plan.h"
/* allow_virtual_src: frames arrive at the model's input size, so the image input may be read in place. */
void hr__plan_lower(hr__plan *p, int allow_virtual_src);
#endif
