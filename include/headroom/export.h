/* HR_API marks a declaration as part of headroom's public ABI. The shared library is built with
 * -fvisibility=hidden, so only HR_API symbols are exported; internals (hr__*) never are. */
#ifndef HEADROOM_EXPORT_H
#define HEADROOM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define HR_API __attribute__((visibility("default")))
#else
#define HR_API
#endif

#endif
