/* Inside the FFmpeg module (headroom-io-ffmpeg.so): the host's helpers by their usual names, through
 * the table the host gave hr__ffmod_entry (the module links nothing of headroom). */
#ifndef HR_IO_FFM_H
#define HR_IO_FFM_H
#include "../ffmod.h"

extern const hr__ffmod_host *hr__ffm_host;
#define hr__source_fail (hr__ffm_host->source_fail)
#define hr__errf (hr__ffm_host->errf)
#define hr__pool_init (hr__ffm_host->pool_init)
#define hr__pool_take (hr__ffm_host->pool_take)
#define hr__frame_packed (hr__ffm_host->frame_packed)
#define hr__basename (hr__ffm_host->basename)
#define hr_pixfmt_name (hr__ffm_host->pixfmt_name)

hr_status hr__ffm_video_open(hr_source *s, const char *path, char *err, size_t err_len);
#endif
