/* Status names and messages, generated from the one table in core.h. */
#include "headroom.h"

const char *hr_status_name(hr_status s) {
  switch (s) {
#define HR__NAME(name, val, msg) case name: return #name;
    HR_STATUS_LIST(HR__NAME)
#undef HR__NAME
  }
  return "HR_UNKNOWN";
}

const char *hr_status_str(hr_status s) {
  switch (s) {
#define HR__MSG(name, val, msg) case name: return msg;
    HR_STATUS_LIST(HR__MSG)
#undef HR__MSG
  }
  return "unknown status";
}
