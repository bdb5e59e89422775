/* TF.js graph-model loader: parses model.json, reads and dequantises weight shards, builds the node table. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <cjson/cJSON.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "graph/ir.h"
#include "session/kcache.h"

static const char *const op_names[] = {
#define HR__OPN(e, s) s,
  HR_OP_LIST(HR__OPN)
#undef HR__OPN
};

const char *hr__op_name(hr__op op) { return (unsigned)op < HR_OP__COUNT ? op_names[op] : "?"; }

int hr__op_from_name(const char *s) {
  for (int i = 0; i < HR_OP__COUNT; i++)
    if (strcmp(op_names[i], s) == 0) return i;
  return -1;
}

typedef struct loadctx {
  char *err; size_t err_len;
  const char *file;
} loadctx;

static hr_status fail(loadctx *c, hr_status st, const char *fmt, ...) {
  if (c->err && c->err_len) {
    int n = snprintf(c->err, c->err_len, "%s: ", c->file ? c->file : "model");
    if (n < 0) n = 0;
    if ((size_t)n < c->err_len) {
      va_list ap; va_start(ap, fmt);
      vsnprintf(c->err + n, c->err_len - n, fmt, ap);
      va_end(ap);
    }
  }
  return st;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return NULL; }
  long n = ftell(f);
  if (n < 0) { fclose(f); return NULL; }
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
  fclose(f);
  if (buf) { buf[n] = 0; *len = (size_t)n; }
  return buf;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

/* ---- name -> node index hash (open addressing) ---- */
typedef struct namemap { int cap; int *slot; const hr__node *nodes; } namemap;
static uint32_t strhash(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n && s[i]; i++) { h ^= (uint8_t)s[i]; h *= 16777619u; }
  return h;
}
static int map_find(const namemap *m, const char *s, size_t n) {
  uint32_t h = strhash(s, n) & (m->cap - 1);
  for (;;) {
    int v = m->slot[h];
    if (v < 0) return -1;
    const char *nm = m->nodes[v].name;
    if (strncmp(nm, s, n) == 0 && nm[n] == 0) return v;
    h = (h + 1) & (m->cap - 1);
  }
}

int hr__model_find_node(const hr_model *m, const char *name) {
  for (int i = 0; i < m->n_nodes; i++)
    if (strcmp(m->nodes[i].name, name) == 0) return i;
  return -1;
}

/* ---- attribute parsing ---- */
static const cJSON *attr(const cJSON *node, const char *k) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(node, "attr");
  return a ? cJSON_GetObjectItemCaseSensitive(a, k) : NULL;
}
static long long jint(const cJSON *v) { /* ints are JSON strings or numbers */
  if (cJSON_IsString(v)) return strtoll(v->valuestring, NULL, 10);
  if (cJSON_IsNumber(v)) return (long long)v->valuedouble;
  return 0;
}
static int attr_ints(const cJSON *node, const char *k, int *out, int max) {
  const cJSON *a = attr(node, k);
  const cJSON *l = a ? cJSON_GetObjectItemCaseSensitive(a, "list") : NULL;
  const cJSON *i = l ? cJSON_GetObjectItemCaseSensitive(l, "i") : NULL;
  int n = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, i) { if (n < max) out[n] = (int)jint(e); n++; }
  return n;
}
static long long attr_int(const cJSON *node, const char *k, long long def) {
  const cJSON *a = attr(node, k);
  const cJSON *i = a ? cJSON_GetObjectItemCaseSensitive(a, "i") : NULL;
  return i ? jint(i) : def;
}
static int attr_bool(const cJSON *node, const char *k, int def) {
  const cJSON *a = attr(node, k);
  const cJSON *b = a ? cJSON_GetObjectItemCaseSensitive(a, "b") : NULL;
  return b ? cJSON_IsTrue(b) : def;
}
static const unsigned char b64tab[256] = {
  ['A']=0,['B']=1,['C']=2,['D']=3,['E']=4,['F']=5,['G']=6,['H']=7,['I']=8,['J']=9,['K']=10,['L']=11,['M']=12,
  ['N']=13,['O']=14,['P']=15,['Q']=16,['R']=17,['S']=18,['T']=19,['U']=20,['V']=21,['W']=22,['X']=23,['Y']=24,
  ['Z']=25,['a']=26,['b']=27,['c']=28,['d']=29,['e']=30,['f']=31,['g']=32,['h']=33,['i']=34,['j']=35,['k']=36,
  ['l']=37,['m']=38,['n']=39,['o']=40,['p']=41,['q']=42,['r']=43,['s']=44,['t']=45,['u']=46,['v']=47,['w']=48,
  ['x']=49,['y']=50,['z']=51,['0']=52,['1']=53,['2']=54,['3']=55,['4']=56,['5']=57,['6']=58,['7']=59,['8']=60,
  ['9']=61,['+']=62,['/']=63};
static void b64dec(const char *s, char *out, size_t max) {
  size_t o = 0; uint32_t acc = 0; int bits = 0;
  for (; *s && *s != '='; s++) {
    acc = (acc << 6) | b64tab[(unsigned char)*s]; bits += 6;
    if (bits >= 8) { bits -= 8; if (o + 1 < max) out[o++] = (char)((acc >> bits) & 0xff); }
  }
  out[o] = 0;
}
static void attr_str(const cJSON *node, const char *k, char *out, size_t max) {
  out[0] = 0;
  const cJSON *a = attr(node, k);
  const cJSON *s = a ? cJSON_GetObjectItemCaseSensitive(a, "s") : NULL;
  if (cJSON_IsString(s)) b64dec(s->valuestring, out, max);
}
static hr__dtype parse_dtype_str(const char *s) {
  if (!strcmp(s, "DT_INT32")) return HR_DT_INT32;
  if (!strcmp(s, "DT_BOOL")) return HR_DT_BOOL;
  return HR_DT_FLOAT;
}

static hr_status parse_attrs(loadctx *c, const cJSON *jn, hr__node *n) {
  hr__attrs *a = &n->a;
  for (int i = 0; i < 4; i++) a->strides[i] = a->dilations[i] = a->ksize[i] = 1;
  attr_ints(jn, "strides", a->strides, 4);
  attr_ints(jn, "dilations", a->dilations, 4);
  attr_ints(jn, "ksize", a->ksize, 4);
  attr_ints(jn, "explicit_paddings", a->explicit_pad, 8);
  for (int i = 0; i < 4; i++)
    if (a->strides[i] < 1 || a->dilations[i] < 1 || a->ksize[i] < 1 || a->strides[i] > 4096 || a->dilations[i] > 4096 ||
        a->ksize[i] > 65536)
      return fail(c, HR_ECORRUPT, "node '%s' (%s): strides/dilations/ksize must be >= 1 (got %d/%d/%d)", n->name,
                  hr__op_name(n->op), a->strides[i], a->dilations[i], a->ksize[i]);
  for (int i = 0; i < 8; i++)
    if (a->explicit_pad[i] < 0 || a->explicit_pad[i] > 65536)
      return fail(c, HR_ECORRUPT, "node '%s' (%s): explicit padding %d out of range", n->name, hr__op_name(n->op), a->explicit_pad[i]);
  char buf[64];
  attr_str(jn, "padding", buf, sizeof buf);
  a->padding = !strcmp(buf, "SAME") ? HR_PAD_SAME : !strcmp(buf, "EXPLICIT") ? HR_PAD_EXPLICIT : HR_PAD_VALID;
  attr_str(jn, "data_format", buf, sizeof buf);
  if (buf[0] && strcmp(buf, "NHWC") != 0)
    return fail(c, HR_ENOTSUP, "node '%s' (%s): data_format %s not supported (NHWC only)", n->name, hr__op_name(n->op), buf);
  /* fused_ops: list of base64 strings */
  const cJSON *fo = attr(jn, "fused_ops");
  const cJSON *fl = fo ? cJSON_GetObjectItemCaseSensitive(fo, "list") : NULL;
  const cJSON *fs = fl ? cJSON_GetObjectItemCaseSensitive(fl, "s") : NULL;
  const cJSON *e;
  cJSON_ArrayForEach(e, fs) {
    if (!cJSON_IsString(e)) continue;
    b64dec(e->valuestring, buf, sizeof buf);
    if (!strcmp(buf, "BiasAdd")) a->fused_bias = 1;
    else if (!strcmp(buf, "Relu")) a->act = HR_ACT_RELU;
    else if (!strcmp(buf, "Relu6")) a->act = HR_ACT_RELU6;
    else return fail(c, HR_ENOTSUP, "node '%s' (%s): fused op '%s' not supported", n->name, hr__op_name(n->op), buf);
  }
  a->keep_dims = attr_bool(jn, "keep_dims", 0);
  a->num_split = (int)attr_int(jn, "num_split", 1);
  a->axis = (int)attr_int(jn, "axis", 0);
  a->half_pixel = attr_bool(jn, "half_pixel_centers", 0);
  a->align_corners = attr_bool(jn, "align_corners", 0);
  a->begin_mask = (int)attr_int(jn, "begin_mask", 0);
  a->end_mask = (int)attr_int(jn, "end_mask", 0);
  a->ellipsis_mask = (int)attr_int(jn, "ellipsis_mask", 0);
  a->new_axis_mask = (int)attr_int(jn, "new_axis_mask", 0);
  a->shrink_axis_mask = (int)attr_int(jn, "shrink_axis_mask", 0);
  a->n_squeeze = attr_ints(jn, "squeeze_dims", a->squeeze_dims, HR_MAX_RANK);
  a->transpose_a = attr_bool(jn, "transpose_a", 0);
  a->transpose_b = attr_bool(jn, "transpose_b", 0);
  const cJSON *dt = attr(jn, "DstT");
  const cJSON *ty = dt ? cJSON_GetObjectItemCaseSensitive(dt, "type") : NULL;
  a->dst_type = cJSON_IsString(ty) ? parse_dtype_str(ty->valuestring) : HR_DT_FLOAT;
  return HR_OK;
}

static float half_to_float(uint16_t h) {
  uint32_t s = (h >> 15) & 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 0x400), (int)e - 25);
  return s ? -v : v;
}

static void model_free_partial(hr_model *m) {
  if (!m) return;
  for (int i = 0; i < m->n_nodes; i++) { free(m->nodes[i].name); free(m->nodes[i].in); free(m->nodes[i].ctrl); }
  free(m->nodes);
  for (int i = 0; i < m->n_inputs; i++) { free(m->inputs[i].key); free(m->inputs[i].tensor); }
  for (int i = 0; i < m->n_outputs; i++) { free(m->outputs[i].key); free(m->outputs[i].tensor); }
  free(m->inputs); free(m->outputs);
  free(m->weights); free(m->path); free(m->name);
  hr__kcache_destroy(m->kcache);
  free(m);
}

void hr_model_destroy(hr_model *m) {
  if (!m) return;
  model_free_partial(m);
}

/* Resolve "name", "name:1" to an edge. */
static int parse_edge(const namemap *map, const char *s, hr__edge *e) {
  const char *colon = strrchr(s, ':');
  size_t n = strlen(s);
  e->port = 0;
  if (colon) {
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end == 0 && end != colon + 1) {
      if (p < 0 || p >= HR_MAX_OUT) return 0; /* no op here has more outputs */
      n = (size_t)(colon - s); e->port = (int)p;
    }
  }
  e->node = map_find(map, s, n);
  return e->node >= 0;
}

static hr_status resolve_json_path(loadctx *c, const char *path, char **json_path) {
  struct stat st;
  if (stat(path, &st) != 0) return fail(c, HR_EIO, "cannot open: %s", strerror(errno));
  if (!S_ISDIR(st.st_mode)) {
    *json_path = strdup(path);
    return *json_path ? HR_OK : fail(c, HR_ENOMEM, "out of memory for the model path");
  }
  DIR *d = opendir(path);
  if (!d) return fail(c, HR_EIO, "cannot open folder: %s", strerror(errno));
  struct dirent *de; char *found = NULL; int count = 0;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (l > 5 && !strcmp(de->d_name + l - 5, ".json")) {
      count++;
      if (!found) { found = malloc(strlen(path) + l + 2); if (found) sprintf(found, "%s/%s", path, de->d_name); }
    }
  }
  closedir(d);
  if (count != 1) { free(found); return fail(c, HR_EINVAL, "folder holds %d .json files; name the model file", count); }
  *json_path = found;
  return found ? HR_OK : fail(c, HR_ENOMEM, "out of memory for the model path");
}

hr_status hr_model_load(const char *path, hr_model **out, char *err, size_t err_len) {
  loadctx c = {err, err_len, path};
  if (err && err_len) err[0] = 0;
  if (!out || !path) return fail(&c, HR_EINVAL, "NULL argument");
  *out = NULL;
  char *json_path = NULL;
  hr_status st = resolve_json_path(&c, path, &json_path);
  if (st) return st;
  c.file = json_path;
  size_t jlen = 0;
  char *jtext = read_file(json_path, &jlen);
  cJSON *root = NULL;
  hr_model *m = NULL;
  char *bins = NULL;
  int *map_slots = NULL;
  if (!jtext) { st = fail(&c, HR_EIO, "cannot read: %s", strerror(errno)); goto done; }
  root = cJSON_ParseWithLength(jtext, jlen);
  if (!root) {
    const char *ep = cJSON_GetErrorPtr();
    st = fail(&c, HR_ECORRUPT, "not valid JSON (near byte %ld)", ep ? (long)(ep - jtext) : -1L);
    goto done;
  }
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
  const cJSON *topo = cJSON_GetObjectItemCaseSensitive(root, "modelTopology");
  const cJSON *jnodes = topo ? cJSON_GetObjectItemCaseSensitive(topo, "node") : NULL;
  const cJSON *manifest = cJSON_GetObjectItemCaseSensitive(root, "weightsManifest");
  if (cJSON_IsString(fmt) && strcmp(fmt->valuestring, "graph-model") != 0) {
    st = fail(&c, HR_ENOTSUP, "format '%s' is not a TF.js graph-model", fmt->valuestring); goto done;
  }
  if (!cJSON_IsArray(jnodes) || !cJSON_IsArray(manifest)) {
    st = fail(&c, HR_ECORRUPT, "missing modelTopology.node or weightsManifest"); goto done;
  }
  m = calloc(1, sizeof *m);
  if (m) m->kcache = hr__kcache_create();
  if (!m || !m->kcache) { st = fail(&c, HR_ENOMEM, "out of memory"); goto done; }
  m->path = strdup(json_path);
  {
    const char *b = strrchr(json_path, '/'); b = b ? b + 1 : json_path;
    m->name = strdup(b);
    char *dot = m->name ? strrchr(m->name, '.') : NULL;
    if (dot) *dot = 0;
  }
  if (!m->path || !m->name) { st = fail(&c, HR_ENOMEM, "out of memory"); goto done; }
  m->fingerprint = fnv1a(1469598103934665603ull, jtext, jlen);
  {
    int nn = cJSON_GetArraySize(jnodes);
    m->nodes = calloc((size_t)nn + 1, sizeof *m->nodes);
    if (!m->nodes) { st = fail(&c, HR_ENOMEM, "out of memory for %d nodes", nn); goto done; }
    m->n_nodes = nn;
  }
  /* pass 1: names, ops */
  char unsupported[2048]; unsupported[0] = 0;
  int n_unsup = 0, n_unsup_kinds = 0, n_unlisted = 0;
  {
    int i = 0; const cJSON *jn;
    cJSON_ArrayForEach(jn, jnodes) {
      const cJSON *nm = cJSON_GetObjectItemCaseSensitive(jn, "name");
      const cJSON *op = cJSON_GetObjectItemCaseSensitive(jn, "op");
      if (!cJSON_IsString(nm) || !cJSON_IsString(op)) { st = fail(&c, HR_ECORRUPT, "node %d has no name or op", i); goto done; }
      hr__node *n = &m->nodes[i];
      n->name = strdup(nm->valuestring);
      if (!n->name) { st = fail(&c, HR_ENOMEM, "out of memory"); goto done; }
      int o = hr__op_from_name(op->valuestring);
      if (o < 0 || o >= HR_OP_HARDSWISH) {
        /* list every distinct unsupported op name once (exact match), counting what does not fit */
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) {
          const cJSON *ok = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(jnodes, k), "op");
          seen = cJSON_IsString(ok) && !strcmp(ok->valuestring, op->valuestring);
        }
        if (!seen) {
          n_unsup_kinds++;
          if (strlen(unsupported) + strlen(op->valuestring) + 3 < sizeof unsupported - 32) {
            if (unsupported[0]) strcat(unsupported, ", ");
            strcat(unsupported, op->valuestring);
          } else {
            n_unlisted++;
          }
        }
        n_unsup++;
        o = HR_OP_NOOP;
      }
      n->op = (hr__op)o;
      m->op_count[o]++;
      i++;
    }
  }
  if (n_unsup) {
    st = fail(&c, HR_ENOTSUP, "%d node(s), %d distinct unsupported ops: %s%s", n_unsup, n_unsup_kinds, unsupported,
              n_unlisted ? ", ... (list cut)" : "");
    goto done;
  }
  /* name map */
  namemap map = {16, NULL, m->nodes};
  while (map.cap < m->n_nodes * 2) map.cap <<= 1;
  map_slots = malloc(sizeof(int) * (size_t)map.cap);
  if (!map_slots) { st = fail(&c, HR_ENOMEM, "out of memory"); goto done; }
  map.slot = map_slots;
  for (int i = 0; i < map.cap; i++) map.slot[i] = -1;
  for (int i = 0; i < m->n_nodes; i++) {
    if (map_find(&map, m->nodes[i].name, strlen(m->nodes[i].name)) >= 0) {
      st = fail(&c, HR_ECORRUPT, "duplicate node name '%s'", m->nodes[i].name); goto done;
    }
    uint32_t h = strhash(m->nodes[i].name, (size_t)-1) & (map.cap - 1);
    while (map.slot[h] >= 0) h = (h + 1) & (map.cap - 1);
    map.slot[h] = i;
  }
  /* pass 2: inputs and attrs */
  {
    int i = 0; const cJSON *jn;
    cJSON_ArrayForEach(jn, jnodes) {
      hr__node *n = &m->nodes[i];
      const cJSON *ins = cJSON_GetObjectItemCaseSensitive(jn, "input");
      int cnt = cJSON_GetArraySize(ins);
      n->in = calloc((size_t)cnt + 1, sizeof *n->in);
      n->ctrl = calloc((size_t)cnt + 1, sizeof *n->ctrl);
      if (!n->in || !n->ctrl) { st = fail(&c, HR_ENOMEM, "out of memory"); goto done; }
      const cJSON *e;
      cJSON_ArrayForEach(e, ins) {
        if (!cJSON_IsString(e)) { st = fail(&c, HR_ECORRUPT, "node '%s': input is not a string", n->name); goto done; }
        const char *s = e->valuestring;
        if (s[0] == '^') {
          int t = map_find(&map, s + 1, strlen(s + 1));
          if (t < 0) { st = fail(&c, HR_ECORRUPT, "node '%s': control input '%s' does not exist", n->name, s + 1); goto done; }
          n->ctrl[n->n_ctrl++] = t;
        } else {
          hr__edge ed;
          if (!parse_edge(&map, s, &ed)) { st = fail(&c, HR_ECORRUPT, "node '%s': input '%s' does not exist", n->name, s); goto done; }
          n->in[n->n_in++] = ed;
        }
      }
      if ((st = parse_attrs(&c, jn, n))) goto done;
      if (n->op == HR_OP_CONST || n->op == HR_OP_PLACEHOLDER) {
        const cJSON *dt = attr(jn, "dtype");
        const cJSON *ty = dt ? cJSON_GetObjectItemCaseSensitive(dt, "type") : NULL;
        n->value.dt = cJSON_IsString(ty) ? parse_dtype_str(ty->valuestring) : HR_DT_FLOAT;
        n->value.rank = -1; /* Const: filled from the manifest */
      }
      i++;
    }
  }
  /* weights: concatenated shards of each group, in manifest order */
  {
    const char *slash = strrchr(json_path, '/');
    size_t dirlen = slash ? (size_t)(slash - json_path + 1) : 0;
    size_t total_float = 0;
    /* first pass: sizes */
    const cJSON *grp;
    cJSON_ArrayForEach(grp, manifest) {
      const cJSON *ws = cJSON_GetObjectItemCaseSensitive(grp, "weights"); const cJSON *w;
      cJSON_ArrayForEach(w, ws) {
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(w, "shape"); const cJSON *d;
        size_t ne = 1;
        cJSON_ArrayForEach(d, shape) {
          long long v = jint(d);
          if (v < 0 || v > ((long long)1 << 30) || (v && ne > ((size_t)1 << 30) / (size_t)v)) {
            const cJSON *wn = cJSON_GetObjectItemCaseSensitive(w, "name");
            st = fail(&c, HR_ECORRUPT, "weight '%s': bad shape (too large or negative)", cJSON_IsString(wn) ? wn->valuestring : "?");
            goto done;
          }
          ne *= (size_t)v;
        }
        total_float += ne * 4 + 16;
        if (total_float > ((size_t)1 << 32)) { st = fail(&c, HR_ECORRUPT, "weights total more than 4 GB"); goto done; }
      }
    }
    m->weights = calloc(1, total_float + 64);
    if (!m->weights) { st = fail(&c, HR_ENOMEM, "out of memory for %zu bytes of weights", total_float); goto done; }
    size_t wofs = 0;
    cJSON_ArrayForEach(grp, manifest) {
      const cJSON *paths = cJSON_GetObjectItemCaseSensitive(grp, "paths");
      size_t blen = 0; const cJSON *p;
      char shards[1024]; shards[0] = 0;
      free(bins); bins = NULL;
      cJSON_ArrayForEach(p, paths) {
        if (!cJSON_IsString(p)) { st = fail(&c, HR_ECORRUPT, "weightsManifest path is not a string"); goto done; }
        char sp[4096];
        snprintf(sp, sizeof sp, "%.*s%s", (int)dirlen, json_path, p->valuestring);
        size_t sl = 0;
        char *sb = read_file(sp, &sl);
        if (!sb) { c.file = NULL; st = fail(&c, HR_EIO, "weight shard %s listed in %s is missing or unreadable (%s)", sp, json_path, strerror(errno)); goto done; }
        m->fingerprint = fnv1a(m->fingerprint, sb, sl);
        if (strlen(shards) + strlen(sp) + 3 < sizeof shards) { if (shards[0]) strcat(shards, ", "); strcat(shards, sp); }
        char *nb = realloc(bins, blen + sl + 1);
        if (!nb) { free(sb); st = fail(&c, HR_ENOMEM, "out of memory reading %s", sp); goto done; }
        bins = nb; memcpy(bins + blen, sb, sl); blen += sl; free(sb);
      }
      size_t bofs = 0;
      const cJSON *ws = cJSON_GetObjectItemCaseSensitive(grp, "weights"); const cJSON *w;
      cJSON_ArrayForEach(w, ws) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(w, "name");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(w, "shape");
        const cJSON *dts = cJSON_GetObjectItemCaseSensitive(w, "dtype");
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(w, "quantization");
        if (!cJSON_IsString(nm) || !cJSON_IsString(dts)) { st = fail(&c, HR_ECORRUPT, "weight entry without name/dtype"); goto done; }
        int ni = map_find(&map, nm->valuestring, strlen(nm->valuestring));
        hr__tensor t = {0};
        const cJSON *d; size_t ne = 1;
        cJSON_ArrayForEach(d, shape) {
          long long v = jint(d);
          if (v < 0 || t.rank >= HR_MAX_RANK) { st = fail(&c, HR_ECORRUPT, "weight '%s': bad shape", nm->valuestring); goto done; }
          t.dims[t.rank++] = v; ne *= (size_t)v;
        }
        if (!strcmp(dts->valuestring, "float32")) t.dt = HR_DT_FLOAT;
        else if (!strcmp(dts->valuestring, "int32")) t.dt = HR_DT_INT32;
        else if (!strcmp(dts->valuestring, "bool")) t.dt = HR_DT_BOOL;
        else { st = fail(&c, HR_ENOTSUP, "weight '%s': dtype %s not supported", nm->valuestring, dts->valuestring); goto done; }
        const char *qdt = NULL; double qmin = 0, qscale = 1;
        if (q) {
          const cJSON *qd = cJSON_GetObjectItemCaseSensitive(q, "dtype");
          qdt = cJSON_IsString(qd) ? qd->valuestring : "?";
          const cJSON *qm = cJSON_GetObjectItemCaseSensitive(q, "min");
          const cJSON *qs = cJSON_GetObjectItemCaseSensitive(q, "scale");
          if (cJSON_IsNumber(qm)) qmin = qm->valuedouble;
          if (cJSON_IsNumber(qs)) qscale = qs->valuedouble;
        }
        size_t esz = qdt ? (!strcmp(qdt, "uint8") ? 1 : (!strcmp(qdt, "float16") || !strcmp(qdt, "uint16")) ? 2 : 0)
                         : hr__dtsize(t.dt);
        if (!esz) { st = fail(&c, HR_ENOTSUP, "weight '%s': quantization dtype %s not supported", nm->valuestring, qdt); goto done; }
        if (bofs + ne * esz > blen) {
          c.file = NULL;
          st = fail(&c, HR_ECORRUPT, "%s: too short for %s: weight '%s' needs bytes %zu..%zu, the file holds %zu (truncated?)",
                    shards, json_path, nm->valuestring, bofs, bofs + ne * esz, blen);
          goto done;
        }
        const uint8_t *src = (const uint8_t *)bins + bofs;
        void *dst = (char *)m->weights + wofs;
        if (!qdt) memcpy(dst, src, ne * esz);
        else if (!strcmp(qdt, "uint8")) { float *f = dst; for (size_t k = 0; k < ne; k++) f[k] = (float)(qmin + qscale * src[k]); }
        else if (!strcmp(qdt, "uint16")) { float *f = dst; for (size_t k = 0; k < ne; k++) { uint16_t v; memcpy(&v, src + 2 * k, 2); f[k] = (float)(qmin + qscale * v); } }
        else { float *f = dst; for (size_t k = 0; k < ne; k++) { uint16_t v; memcpy(&v, src + 2 * k, 2); f[k] = half_to_float(v); } }
        if (t.dt == HR_DT_INT32 && qdt) { /* quantized int32: round back */
          float *f = dst; int32_t *o = dst; for (size_t k = 0; k < ne; k++) o[k] = (int32_t)lrintf(f[k]);
        }
        bofs += ne * esz;
        if (ni >= 0 && m->nodes[ni].op == HR_OP_CONST) {
          if (t.dt != m->nodes[ni].value.dt) {
            st = fail(&c, HR_ECORRUPT, "weight '%s': dtype in manifest differs from its Const node", nm->valuestring); goto done;
          }
          t.data = dst;
          m->nodes[ni].value = t;
          if (t.dt == HR_DT_FLOAT) m->n_params += (int64_t)ne;
        }
        wofs += (ne * 4 + 15) & ~(size_t)15;
      }
      if (bofs != blen) {
        c.file = NULL;
        st = fail(&c, HR_ECORRUPT, "%s: holds %zu bytes, the manifest describes %zu (in %s)", shards, blen, bofs, json_path);
        goto done;
      }
    }
    m->weights_size = wofs;
  }
  for (int i = 0; i < m->n_nodes; i++)
    if (m->nodes[i].op == HR_OP_CONST && m->nodes[i].value.rank < 0) {
      st = fail(&c, HR_ECORRUPT, "Const node '%s' has no entry in weightsManifest", m->nodes[i].name); goto done;
    }
  /* signature */
  {
    const cJSON *sig = cJSON_GetObjectItemCaseSensitive(root, "signature");
    const char *which[2] = {"inputs", "outputs"};
    for (int w = 0; w < 2; w++) {
      const cJSON *o = sig ? cJSON_GetObjectItemCaseSensitive(sig, which[w]) : NULL;
      int n = cJSON_GetArraySize(o);
      hr__sig *arr = calloc((size_t)n + 1, sizeof *arr);
      if (!arr) { st = fail(&c, HR_ENOMEM, "out of memory"); goto done; }
      if (w == 0) { m->inputs = arr; m->n_inputs = 0; } else { m->outputs = arr; m->n_outputs = 0; }
      const cJSON *e;
      cJSON_ArrayForEach(e, o) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsString(nm)) continue;
        hr__edge ed;
        if (!parse_edge(&map, nm->valuestring, &ed)) {
          st = fail(&c, HR_ECORRUPT, "signature %s '%s' names a tensor that does not exist", which[w], nm->valuestring); goto done;
        }
        hr__sig *s = &arr[w == 0 ? m->n_inputs : m->n_outputs];
        if (w == 0) m->n_inputs++; else m->n_outputs++; /* counted first: freed on any error below */
        s->key = strdup(e->string ? e->string : ""); s->tensor = strdup(nm->valuestring);
        if (!s->key || !s->tensor) { st = fail(&c, HR_ENOMEM, "out of memory"); goto done; }
        s->node = ed.node; s->port = ed.port;
      }
    }
    if (m->n_inputs == 0 || m->n_outputs == 0) { st = fail(&c, HR_ECORRUPT, "signature has no inputs or outputs"); goto done; }
  }
  /* roles */
  m->in_src = m->in_ratio = -1; m->out_alpha = m->out_fgr = -1;
  for (int i = 0; i < m->n_inputs; i++) {
    const char *k = m->inputs[i].key; hr__node *n = &m->nodes[m->inputs[i].node];
    if (!strncmp(k, "downsample_ratio", 16)) m->in_ratio = i;
    else if (k[0] == 'r' && k[1] >= '1' && k[1] <= '8' && k[2] == 'i') {
      int idx = k[1] - '1';
      m->state_in[idx] = i;
      if (idx + 1 > m->n_state) m->n_state = idx + 1;
    } else if (m->in_src < 0) m->in_src = i;
    (void)n;
  }
  for (int s = 0; s < m->n_state; s++) {
    m->state_out[s] = -1;
    for (int i = 0; i < m->n_outputs; i++) {
      const char *k = m->outputs[i].key;
      if (k[0] == 'r' && k[1] == '1' + s && k[2] == 'o') m->state_out[s] = i;
    }
    if (m->state_out[s] < 0) { st = fail(&c, HR_ECORRUPT, "state input r%di has no matching output r%do", s + 1, s + 1); goto done; }
  }
  for (int i = 0; i < m->n_outputs; i++) {
    const char *k = m->outputs[i].key;
    if (!strcmp(k, "pha")) m->out_alpha = i;
    else if (!strcmp(k, "fgr")) m->out_fgr = i;
  }
  if (m->out_alpha < 0) {
    for (int i = 0; i < m->n_outputs; i++) {
      const char *k = m->outputs[i].key;
      if (!(k[0] == 'r' && k[1] >= '1' && k[1] <= '8' && k[2] == 'o')) { m->out_alpha = i; break; }
    }
  }
  if (m->in_src < 0) { st = fail(&c, HR_ECORRUPT, "no image input in the signature"); goto done; }
  {
    const cJSON *jn = cJSON_GetArrayItem(jnodes, m->inputs[m->in_src].node);
    const cJSON *shp = attr(jn, "shape");
    const cJSON *sh = shp ? cJSON_GetObjectItemCaseSensitive(shp, "shape") : NULL;
    const cJSON *dims = sh ? cJSON_GetObjectItemCaseSensitive(sh, "dim") : NULL;
    if (cJSON_GetArraySize(dims) == 4) {
      long long h = jint(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(dims, 1), "size"));
      long long w = jint(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(dims, 2), "size"));
      if (h > 0 && w > 0) { m->fixed_h = (int)h; m->fixed_w = (int)w; }
    }
  }
  *out = m; m = NULL; st = HR_OK;
done:
  if (m) hr_model_destroy(m);
  cJSON_Delete(root);
  free(jtext); free(bins); free(map_slots); free(json_path);
#ifdef __GLIBC__
  malloc_trim(0); /* the JSON tree and shard buffers were transient: give their pages back */
#endif
  return st;
}

void hr_model_get_info(const hr_model *m, hr_model_info *info) {
  memset(info, 0, sizeof *info);
  info->name = m->name;
  info->n_nodes = m->n_nodes;
  info->n_inputs = m->n_inputs; info->n_outputs = m->n_outputs;
  info->n_state = m->n_state;
  info->n_params = m->n_params;
  info->weight_bytes = m->n_params * 4;
  info->has_ratio = m->in_ratio >= 0;
  info->fixed_width = m->fixed_w; info->fixed_height = m->fixed_h;
}

const char *hr_model_input_name(const hr_model *m, int i) { return i >= 0 && i < m->n_inputs ? m->inputs[i].key : NULL; }
const char *hr_model_output_name(const hr_model *m, int i) { return i >= 0 && i < m->n_outputs ? m->outputs[i].key : NULL; }

const char *hr_model_op_hist(const hr_model *m, int i, int *count) {
  for (int o = 0; o < HR_OP__COUNT; o++) {
    if (!m->op_count[o]) continue;
    if (i-- == 0) { if (count) *count = m->op_count[o]; return hr__op_name((hr__op)o); }
  }
  return NULL;
}
