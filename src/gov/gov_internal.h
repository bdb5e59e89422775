/* Internal helpers shared by the governor's files: fd reads without allocation, MB formatting. */
#ifndef HR_GOV_INTERNAL_H
#define HR_GOV_INTERNAL_H
#include "headroom/gov.h"

/* pread() the whole (small) file at fd from offset 0 into buf (NUL-terminated). HR_EIO on error. */
hr_status hr__gov_pread_text(int fd, char *buf, size_t len);
/* Parse /proc/<pid>/statm text: the second field (resident pages). HR_ECORRUPT if malformed. */
hr_status hr__gov_parse_statm_resident(const char *text, uint64_t *pages);
/* Read a file by path into buf (create time only). HR_EIO if it cannot be opened/read. */
hr_status hr__gov_read_path(const char *path, char *buf, size_t len);
/* Building rung k beside the running plan (a replan's transient, rung_build_bytes[k]) leaves the
 * headroom h at or above critical + hysteresis: the ladder's own step up and the stream's budget
 * changes ask the same (gov.h). True for h = INT64_MAX (no ceiling). */
bool hr__gov_build_fits(const hr_gov_ladder *l, int64_t h, int k);
/* Bytes as MB with one decimal. */
static inline double hr__gov_mb(double bytes) { return bytes / (double)HR_GOV_MB; }
#endif
