/* Governor: profile parsing (every name, bad strings), cgroup discovery on fake v1/v2 trees, cgroup
 * value parsing and ballast spec parsing. */
#include "headroom/gov.h"
#include "headroom/testing.h"
#include "hr_test.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define MB HR_GOV_MB

static char g_root[256];

static void put(const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", g_root, rel);
  /* mkdir -p the parent */
  for (char *p = path + strlen(g_root) + 1; *p; p++)
    if (*p == '/') { *p = '\0'; mkdir(path, 0755); *p = '/'; }
  FILE *f = fopen(path, "w");
  if (!f) { perror(path); exit(1); }
  fputs(text, f);
  fclose(f);
}

static void fresh_root(const char *tag) {
  snprintf(g_root, sizeof g_root, "/tmp/hr_gov_test_%d_%s", (int)getpid(), tag);
  mkdir(g_root, 0755);
}

static void rm_root(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", g_root);
}

static hr_gov_cgroup find(void) {
  char proc[300], fs[300];
  snprintf(proc, sizeof proc, "%s/proc_cgroup", g_root);
  snprintf(fs, sizeof fs, "%s/fs", g_root);
  hr_gov_cgroup cg;
  CHECK(hr_gov_cgroup_find_at(proc, fs, &cg) == HR_OK);
  return cg;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void test_parse_value(void) {
  uint64_t v = 7;
  CHECK(hr_gov_cgroup_parse_value("max\n", &v) == HR_OK && v == 0);
  CHECK(hr_gov_cgroup_parse_value("max", &v) == HR_OK && v == 0);
  CHECK(hr_gov_cgroup_parse_value("440401920\n", &v) == HR_OK && v == 440401920);
  CHECK(hr_gov_cgroup_parse_value(" 42 ", &v) == HR_OK && v == 42);
  CHECK(hr_gov_cgroup_parse_value("0\n", &v) == HR_OK && v == 0);
  CHECK(hr_gov_cgroup_parse_value("9223372036854771712\n", &v) == HR_OK && v == 0); /* v1 unlimited */
  CHECK(hr_gov_cgroup_parse_value("", &v) == HR_ECORRUPT);
  CHECK(hr_gov_cgroup_parse_value("\n", &v) == HR_ECORRUPT);
  CHECK(hr_gov_cgroup_parse_value("abc", &v) == HR_ECORRUPT);
  CHECK(hr_gov_cgroup_parse_value("12a", &v) == HR_ECORRUPT);
  CHECK(hr_gov_cgroup_parse_value("-1", &v) == HR_ECORRUPT);
  CHECK(hr_gov_cgroup_parse_value("99999999999999999999", &v) == HR_ECORRUPT);
  CHECK(hr_gov_cgroup_parse_value(NULL, &v) == HR_EINVAL);
}

static void test_cgroup_find(void) {
  hr_gov_cgroup cg;
  /* v2: the limit sits on the parent slice; own cgroup says "max". */
  fresh_root("v2");
  put("proc_cgroup", "0::/user.slice/app.scope\n");
  put("fs/cgroup.controllers", "cpu io memory pids\n");
  put("fs/user.slice/memory.max", "1073741824\n");
  put("fs/user.slice/app.scope/memory.max", "max\n");
  put("fs/user.slice/app.scope/memory.current", "1000\n");
  cg = find();
  CHECK_EQ_INT(cg.version, 2);
  CHECK(ends_with(cg.dir, "/fs/user.slice/app.scope"));
  CHECK(ends_with(cg.limit_dir, "/fs/user.slice"));
  CHECK_EQ_INT(cg.limit_bytes, 1073741824);
  /* Own limit smaller than the parent's binds. */
  put("fs/user.slice/app.scope/memory.max", "440401920\n");
  cg = find();
  CHECK_EQ_INT(cg.limit_bytes, 440401920);
  CHECK(ends_with(cg.limit_dir, "/fs/user.slice/app.scope"));
  /* No limit anywhere. */
  put("fs/user.slice/memory.max", "max\n");
  put("fs/user.slice/app.scope/memory.max", "max\n");
  cg = find();
  CHECK_EQ_INT(cg.version, 2);
  CHECK_EQ_INT(cg.limit_bytes, 0);
  CHECK_EQ_INT(cg.limit_dir[0], 0);
  rm_root();

  /* v2 inside a cgroup namespace: the path is "/" and the mount root is the container. */
  fresh_root("v2ns");
  put("proc_cgroup", "0::/\n");
  put("fs/cgroup.controllers", "memory\n");
  put("fs/memory.max", "524288000\n");
  put("fs/memory.current", "1\n");
  cg = find();
  CHECK_EQ_INT(cg.version, 2);
  CHECK_EQ_INT(cg.limit_bytes, 524288000);
  rm_root();

  /* v1 (as on this project's build machine): memory controller line among others; the limit
   * is on an ancestor; the own cgroup and the root report v1's "unlimited". */
  fresh_root("v1");
  put("proc_cgroup", "12:pids:/\n4:memory:/docker/abc\n3:cpu,cpuacct:/x\n0::/\n");
  put("fs/memory/memory.limit_in_bytes", "9223372036854771712\n");
  put("fs/memory/docker/memory.limit_in_bytes", "440401920\n");
  put("fs/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
  put("fs/memory/docker/abc/memory.usage_in_bytes", "4096\n");
  cg = find();
  CHECK_EQ_INT(cg.version, 1);
  CHECK(ends_with(cg.dir, "/fs/memory/docker/abc"));
  CHECK(ends_with(cg.limit_dir, "/fs/memory/docker"));
  CHECK_EQ_INT(cg.limit_bytes, 440401920);
  rm_root();

  /* v1 with a combined controller list and a namespace-style root path. */
  fresh_root("v1ns");
  put("proc_cgroup", "7:cpu,memory:/\n");
  put("fs/memory/memory.limit_in_bytes", "209715200\n");
  cg = find();
  CHECK_EQ_INT(cg.version, 1);
  CHECK_EQ_INT(cg.limit_bytes, 209715200);
  rm_root();

  /* v1 path that is not visible under the mount (namespace): fall back to the mount root. */
  fresh_root("v1gone");
  put("proc_cgroup", "4:memory:/not/here\n");
  put("fs/memory/memory.limit_in_bytes", "104857600\n");
  cg = find();
  CHECK_EQ_INT(cg.version, 1);
  CHECK_EQ_INT(cg.limit_bytes, 104857600);
  rm_root();

  /* Hybrid without a v1 memory controller: unified has no memory files -> none. */
  fresh_root("hyb");
  put("proc_cgroup", "1:name=systemd:/\n0::/\n");
  put("fs/unified/cgroup.controllers", "\n");
  cg = find();
  CHECK_EQ_INT(cg.version, 0);
  CHECK_EQ_INT(cg.limit_bytes, 0);
  rm_root();

  /* No /proc/self/cgroup at all. */
  CHECK(hr_gov_cgroup_find_at("/nonexistent/hr/cgroup", "/nonexistent", &cg) == HR_OK);
  CHECK_EQ_INT(cg.version, 0);
  CHECK(hr_gov_cgroup_find_at(NULL, NULL, NULL) == HR_EINVAL);
  /* The real machine: must not fail. */
  CHECK(hr_gov_cgroup_find(&cg) == HR_OK);
  printf("this machine: cgroup v%d dir=%s limit=%.1f MB\n", cg.version, cg.dir, (double)cg.limit_bytes / MB);
}

static void test_profiles(void) {
  hr_gov_profile p;
  char err[300];
  hr_gov_cgroup none = {0}, lim = {.version = 2, .dir = "/sys/fs/cgroup/x", .limit_dir = "/sys/fs/cgroup/x",
                                   .limit_bytes = 1000 * MB};
  hr_gov_cgroup unl = {.version = 1, .dir = "/sys/fs/cgroup/memory/y"};
  static const struct { const char *in, *name; uint64_t safe, kill; } ok[] = {
    {"a14", "a14", 380, 420}, {"A14", "a14", 380, 420}, {"a15", "a15", 500, 560},
    {"a16", "a16", 650, 720}, {"a17", "a16", 650, 720}, {"none", "none", 0, 0},
    {"380:420", "custom", 380, 420}, {"420:420", "custom", 420, 420}, {"1:100000", "custom", 1, 100000},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    CHECKF(hr_gov_profile_parse_cg(ok[i].in, &none, &p, err, sizeof err) == HR_OK, "%s: %s", ok[i].in, err);
    CHECKF(!strcmp(p.name, ok[i].name), "%s -> %s", ok[i].in, p.name);
    CHECK_EQ_INT(p.safe_bytes, ok[i].safe * MB);
    CHECK_EQ_INT(p.kill_bytes, ok[i].kill * MB);
    CHECK_EQ_INT(err[0], 0);
  }
  /* m1: termination is dynamic (the cgroup's limit, or none). */
  CHECK(hr_gov_profile_parse_cg("m1", &none, &p, err, sizeof err) == HR_OK);
  CHECK(!strcmp(p.name, "m1") && p.safe_bytes == 900 * MB && p.kill_bytes == 0);
  CHECK(hr_gov_profile_parse_cg("M2", &lim, &p, err, sizeof err) == HR_OK);
  CHECK(!strcmp(p.name, "m1") && p.safe_bytes == 900 * MB && p.kill_bytes == 1000 * MB);
  CHECK(hr_gov_profile_parse_cg("m1", NULL, &p, err, sizeof err) == HR_OK && p.kill_bytes == 0);
  /* cgroup: 90% unless given. */
  CHECK(hr_gov_profile_parse_cg("cgroup", &lim, &p, err, sizeof err) == HR_OK);
  CHECK(!strcmp(p.name, "cgroup") && p.kill_bytes == 1000 * MB && p.safe_bytes == 900 * MB);
  CHECK(hr_gov_profile_parse_cg("cgroup:800", &lim, &p, err, sizeof err) == HR_OK && p.safe_bytes == 800 * MB);

  /* Errors: status, message naming the input, *out untouched. */
  const struct { const char *in; const hr_gov_cgroup *cg; hr_status st; const char *needle; } bad[] = {
    {"a13", &none, HR_EINVAL, "expected a14, a15"},
    {"", &none, HR_EINVAL, "unknown"},
    {"foo", &none, HR_EINVAL, "cgroup[:SAFE_MB]"},
    {"420:380", &none, HR_EINVAL, "safe 420 MB exceeds the termination limit 380 MB"},
    {"0:420", &none, HR_EINVAL, "whole numbers"},
    {"380:", &none, HR_EINVAL, "whole numbers"},
    {"380:4x0", &none, HR_EINVAL, "whole numbers"},
    {"1.5:420", &none, HR_EINVAL, "whole numbers"},
    {"380:420:5", &none, HR_EINVAL, "whole numbers"},
    {"99999999999:100", &none, HR_EINVAL, "whole numbers"},
    {":420", &none, HR_EINVAL, "unknown"},
    {"cgroup", &none, HR_ENOTSUP, "no memory cgroup found"},
    {"cgroup", &unl, HR_ENOTSUP, "has no limit"},
    {"cgroup", NULL, HR_ENOTSUP, "no memory cgroup"},
    {"cgroup:", &lim, HR_EINVAL, "SAFE after 'cgroup:'"},
    {"cgroup:abc", &lim, HR_EINVAL, "SAFE after 'cgroup:'"},
    {"cgroup:2000", &lim, HR_EINVAL, "exceeds the cgroup limit 1000.0 MB"},
    {"cgroupx", &lim, HR_EINVAL, "unknown"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hr_gov_profile keep = {.name = "keep", .safe_bytes = 1, .kill_bytes = 2};
    hr_status st = hr_gov_profile_parse_cg(bad[i].in, bad[i].cg, &keep, err, sizeof err);
    CHECKF(st == bad[i].st, "'%s': got %s", bad[i].in, hr_status_name(st));
    CHECKF(strstr(err, bad[i].needle) != NULL, "'%s': message '%s' lacks '%s'", bad[i].in, err, bad[i].needle);
    CHECKF(strstr(err, "profile '") == err, "'%s': message '%s' does not name the input", bad[i].in, err);
    CHECK(!strcmp(keep.name, "keep") && keep.safe_bytes == 1 && keep.kill_bytes == 2);
  }
  printf("example error: %s\n", (hr_gov_profile_parse_cg("a13", &none, &p, err, sizeof err), err));
  CHECK(hr_gov_profile_parse_cg(NULL, &none, &p, err, sizeof err) == HR_EINVAL);
  CHECK(hr_gov_profile_parse_cg("a14", &none, NULL, NULL, 0) == HR_EINVAL);
  CHECK(hr_gov_profile_parse_cg("zzz", &none, &p, NULL, 0) == HR_EINVAL); /* NULL err is fine */
  char tiny[8];
  CHECK(hr_gov_profile_parse_cg("zzz", &none, &p, tiny, sizeof tiny) == HR_EINVAL && strlen(tiny) == 7);
  /* The real entry point reads this machine's cgroup; device names never depend on it. */
  CHECK(hr_gov_profile_parse("a15", &p, err, sizeof err) == HR_OK && p.kill_bytes == 560 * MB);
  hr_status st = hr_gov_profile_parse("cgroup", &p, err, sizeof err);
  CHECK(st == HR_OK || st == HR_ENOTSUP);
  printf("profile 'cgroup' here: %s %s\n", hr_status_name(st), st ? err : p.name);
}

static void test_ballast_parse(void) {
  hr_ballast_params bp;
  char err[200];
  CHECK(hr_ballast_parse("50:300", &bp, err, sizeof err) == HR_OK && bp.rate_mb_s == 50 && bp.max_mb == 300);
  CHECK(hr_ballast_parse("12.5", &bp, err, sizeof err) == HR_OK && bp.rate_mb_s == 12.5 && bp.max_mb == 65536);
  CHECK(hr_ballast_parse("0:10", &bp, err, sizeof err) == HR_OK && bp.rate_mb_s == 0 && bp.max_mb == 10 && bp.hold_s == 0);
  CHECK(hr_ballast_parse("50:300:1.5", &bp, err, sizeof err) == HR_OK && bp.max_mb == 300 && bp.hold_s == 1.5);
  const char *bad[] = {"", "abc", "50:", "50:0", "-1", "50:x", "50:-3", "50:300:", "50:300:-1", "50:300:x", "nan", "inf:5", "50x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECKF(hr_ballast_parse(bad[i], &bp, err, sizeof err) == HR_EINVAL, "'%s' accepted", bad[i]);
    CHECKF(strstr(err, "ballast '") == err, "'%s': '%s'", bad[i], err);
  }
  CHECK(hr_ballast_parse(NULL, &bp, err, sizeof err) == HR_EINVAL);
}

int main(void) {
  test_parse_value();
  test_cgroup_find();
  test_profiles();
  test_ballast_parse();
  return hr_test_finish("test_gov_profile");
}
