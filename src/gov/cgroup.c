/* Finding this process's memory cgroup (v2 or v1) and parsing its limit and usage files. */
#include "gov/gov_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

hr_status hr__gov_pread_text(int fd, char *buf, size_t len) {
  if (fd < 0 || !buf || len < 2) return HR_EINVAL;
  ssize_t got;
  do {
    got = pread(fd, buf, len - 1, 0);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) { buf[0] = '\0'; return HR_EIO; }
  buf[got] = '\0';
  return HR_OK;
}

hr_status hr__gov_read_path(const char *path, char *buf, size_t len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return HR_EIO;
  hr_status st = hr__gov_pread_text(fd, buf, len);
  close(fd);
  return st;
}

hr_status hr__gov_parse_statm_resident(const char *text, uint64_t *pages) {
  if (!text || !pages) return HR_EINVAL;
  const char *p = text;
  char *end;
  errno = 0;
  (void)strtoull(p, &end, 10);                 /* size */
  if (end == p || errno) return HR_ECORRUPT;
  p = end;
  unsigned long long res = strtoull(p, &end, 10);  /* resident */
  if (end == p || errno) return HR_ECORRUPT;
  *pages = res;
  return HR_OK;
}

/* The n characters at p as a decimal number: digits only, at least one, below 2^64. */
static bool dec_u64(const char *p, size_t n, uint64_t *v) {
  uint64_t x = 0;
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return false;
    unsigned d = (unsigned)(p[i] - '0');
    if (x > (UINT64_MAX - d) / 10) return false;
    x = x * 10 + d;
  }
  *v = x;
  return true;
}

hr_status hr_gov_cgroup_parse_value(const char *text, uint64_t *bytes) {
  if (!text || !bytes) return HR_EINVAL;
  const char *p = text;
  while (*p == ' ' || *p == '\t') p++;
  const char *e = p + strlen(p);
  while (e > p && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
  size_t n = (size_t)(e - p);
  if (n == 3 && memcmp(p, "max", 3) == 0) { *bytes = 0; return HR_OK; }
  uint64_t v;
  if (n > 20 || !dec_u64(p, n, &v)) return HR_ECORRUPT;
  /* v1 reports "unlimited" as PAGE_COUNTER_MAX x page size (~2^63); anything past 2^62 bytes is no
   * limit in practice. */
  *bytes = v >= ((uint64_t)1 << 62) ? 0 : v;
  return HR_OK;
}

hr_status hr_gov_cgroup_parse_stat(const char *text, int version, uint64_t *bytes) {
  if (!text || !bytes || (version != 1 && version != 2)) return HR_EINVAL;
  *bytes = 0;
  /* v1's limit may bind at an ancestor: its hierarchical total_ counters cover the children. The
   * first two (the file LRU) must be there; the rest (pinned for now) count 0 when absent. */
  static const char *const keys[2][5] = {
      {"total_inactive_file", "total_active_file", "total_mapped_file", "total_dirty", "total_writeback"},
      {"inactive_file", "active_file", "file_mapped", "file_dirty", "file_writeback"}};
  const char *const *k = keys[version - 1];
  uint64_t v[5] = {0};
  bool seen[5] = {false};
  for (const char *p = text; *p;) {  /* one pass over the lines "key value" */
    const char *sp = strchr(p, ' '), *nl = strchr(p, '\n');
    if (sp && (!nl || sp < nl)) {
      for (int i = 0; i < 5; i++) {
        if (seen[i] || strlen(k[i]) != (size_t)(sp - p) || memcmp(p, k[i], (size_t)(sp - p)) != 0) continue;
        if (!dec_u64(sp + 1, strcspn(sp + 1, "\n"), &v[i])) return HR_ECORRUPT;   /* the rest of the line */
        seen[i] = true;
      }
    }
    if (!nl) break;
    p = nl + 1;
  }
  if (!seen[0] || !seen[1]) return HR_ECORRUPT;
  uint64_t lru = v[0] + v[1], pinned = v[2] + v[3] + v[4];
  *bytes = lru > pinned ? lru - pinned : 0;
  return HR_OK;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Reads dir/file as a cgroup value; false if absent or malformed. */
static bool read_value(const char *dir, const char *file, uint64_t *v) {
  char path[512], buf[64];
  if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) return false;
  if (hr__gov_read_path(path, buf, sizeof buf) != HR_OK) return false;
  return hr_gov_cgroup_parse_value(buf, v) == HR_OK;
}

/* Walks from dir up to base (inclusive), keeping the smallest limit in file. */
static void find_binding(const char *base, const char *dir, const char *file, hr_gov_cgroup *out) {
  char cur[256];
  snprintf(cur, sizeof cur, "%s", dir);
  size_t blen = strlen(base);
  for (;;) {
    uint64_t v;
    if (read_value(cur, file, &v) && v > 0 && (out->limit_bytes == 0 || v < out->limit_bytes)) {
      out->limit_bytes = v;
      snprintf(out->limit_dir, sizeof out->limit_dir, "%s", cur);
    }
    size_t n = strlen(cur);
    if (n <= blen) break;
    char *slash = strrchr(cur, '/');
    if (!slash || (size_t)(slash - cur) < blen) break;
    *slash = '\0';
  }
}

/* Picks the process's directory under base: base + path, or base itself when path is not there
 * (inside a cgroup namespace the mount root is the process's own cgroup). */
static bool locate(const char *base, const char *path, const char *probe, char *dir, size_t n) {
  char p[512];
  if (strcmp(path, "/") != 0) {
    if (snprintf(dir, n, "%s%s", base, path) < (int)n) {
      snprintf(p, sizeof p, "%s/%s", dir, probe);
      if (file_exists(p)) return true;
    }
  }
  snprintf(dir, n, "%s", base);
  snprintf(p, sizeof p, "%s/%s", dir, probe);
  return file_exists(p);
}

hr_status hr_gov_cgroup_find_at(const char *proc_cgroup, const char *fs_root, hr_gov_cgroup *out) {
  if (!out) return HR_EINVAL;
  memset(out, 0, sizeof *out);
  if (!proc_cgroup) proc_cgroup = "/proc/self/cgroup";
  if (!fs_root) fs_root = "/sys/fs/cgroup";
  FILE *f = fopen(proc_cgroup, "re");
  if (!f) return HR_OK;
  char line[1024], v1path[512] = "", v2path[512] = "";
  bool have_v1 = false, have_v2 = false;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':');
    if (!c1) continue;
    char *c2 = strchr(c1 + 1, ':');
    if (!c2) continue;
    *c1 = '\0';
    *c2 = '\0';
    const char *id = line, *ctrl = c1 + 1, *path = c2 + 1;
    if (strcmp(id, "0") == 0 && *ctrl == '\0') {
      snprintf(v2path, sizeof v2path, "%s", path);
      have_v2 = true;
      continue;
    }
    /* v1: the controller list is comma separated; look for the "memory" token. */
    for (const char *t = ctrl; *t;) {
      size_t k = strcspn(t, ",");
      if (k == 6 && memcmp(t, "memory", 6) == 0) {
        snprintf(v1path, sizeof v1path, "%s", path);
        have_v1 = true;
      }
      t += k;
      if (*t == ',') t++;
    }
  }
  fclose(f);

  char base[256], dir[256];
  if (have_v1 && snprintf(base, sizeof base, "%s/memory", fs_root) < (int)sizeof base &&
      locate(base, v1path, "memory.limit_in_bytes", dir, sizeof dir)) {
    out->version = 1;
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    find_binding(base, dir, "memory.limit_in_bytes", out);
    return HR_OK;
  }
  if (have_v2) {
    /* Pure v2 is mounted at fs_root; hybrid systems mount it at fs_root/unified (which seldom has
     * the memory controller). The root cgroup has no memory.max; a non-root one has it. */
    const char *roots[2] = {"", "/unified"};
    for (int i = 0; i < 2; i++) {
      char probe[512];
      if (snprintf(base, sizeof base, "%s%s", fs_root, roots[i]) >= (int)sizeof base) continue;
      snprintf(probe, sizeof probe, "%s/cgroup.controllers", base);
      if (!file_exists(probe)) continue;
      if (!locate(base, v2path, "memory.max", dir, sizeof dir)) {
        if (snprintf(dir, sizeof dir, "%s%s", base, strcmp(v2path, "/") ? v2path : "") >= (int)sizeof dir)
          continue;
        snprintf(probe, sizeof probe, "%s/memory.current", dir);
        if (!file_exists(probe)) continue;  /* no memory controller here */
      }
      out->version = 2;
      snprintf(out->dir, sizeof out->dir, "%s", dir);
      find_binding(base, dir, "memory.max", out);
      return HR_OK;
    }
  }
  return HR_OK;
}

hr_status hr_gov_cgroup_find(hr_gov_cgroup *out) { return hr_gov_cgroup_find_at(NULL, NULL, out); }
