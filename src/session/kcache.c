/* XNNPACK's memory: the accounting allocator, and the model-wide kernel cache (see kcache.h). */
#include <assert.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "session/kcache.h"

/* ---- allocator ------------------------------------------------------------------------------
 * Every block XNNPACK allocates is charged to the thread's account (the session being created)
 * and to a process total. While a template is being built on a thread (tl_building), its blocks
 * are also entered in a registry: they belong to the template, and a clone's free of one of them
 * (XNNPACK deleting a clone frees what its struct points at) is ignored. The template's own
 * deletion marks its blocks dying first, so those frees go through. */
static _Thread_local int64_t *tl_account;
static _Thread_local const hr__kshare *tl_building;
static _Atomic int64_t live_total;
static _Atomic int protect_on;

typedef struct sblock {
  void *p;
  size_t size, align;      /* as XNNPACK asked */
  int64_t charged;         /* bytes accounted for it */
  const hr__kshare *owner;
  unsigned char mapped;    /* read-only-capable pages (hr__kcache_protect) rather than the heap */
  unsigned char dying;     /* its template is being deleted: frees are real */
} sblock;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static sblock *reg;
static int n_reg, cap_reg;
static _Atomic int reg_live; /* n_reg, readable without the lock: frees skip the lookup when 0 */

static void charge(int64_t n) {
  live_total += n;
  if (tl_account) *tl_account += n;
}

static size_t page_round(size_t n) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  return (n + pg - 1) / pg * pg;
}

/* Index of p in the registry, or -1. Caller holds reg_mu. */
static int reg_find(const void *p) {
  for (int i = n_reg - 1; i >= 0; i--)
    if (reg[i].p == p) return i;
  return -1;
}

static void reg_remove(int i) {
  reg[i] = reg[--n_reg];
  reg_live = n_reg;
}

static void block_release(const sblock *b) {
  live_total -= b->charged; /* not the thread's account: a template's memory was the cache's */
  if (b->mapped) munmap(b->p, page_round(b->size));
  else free(b->p);
}

/* Allocate a block: from the heap, or (a template under protection) as whole pages. A template's
 * block is registered; failing to register is failing to allocate. */
static void *block_alloc(size_t align, size_t n) {
  const hr__kshare *owner = tl_building;
  int mapped = owner && protect_on;
  void *p = NULL;
  int64_t charged;
  if (mapped) {
    p = mmap(NULL, page_round(n ? n : 1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    charged = (int64_t)page_round(n ? n : 1);
  } else {
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n ? n : 1)) return NULL;
    charged = (int64_t)malloc_usable_size(p);
  }
  if (owner) {
    pthread_mutex_lock(&reg_mu);
    if (n_reg == cap_reg) {
      int cap = cap_reg ? cap_reg * 2 : 256;
      sblock *g = realloc(reg, sizeof *g * (size_t)cap);
      if (!g) {
        pthread_mutex_unlock(&reg_mu);
        if (mapped) munmap(p, page_round(n ? n : 1)); else free(p);
        return NULL;
      }
      reg = g; cap_reg = cap;
    }
    reg[n_reg++] = (sblock){p, n, align, charged, owner, (unsigned char)mapped, 0};
    reg_live = n_reg;
    pthread_mutex_unlock(&reg_mu);
  }
  charge(charged);
  return p;
}

/* Free a block XNNPACK is done with. A template's block that a clone lets go of stays. */
static void block_free(void *p) {
  if (!p) return;
  if (reg_live) {
    pthread_mutex_lock(&reg_mu);
    int i = reg_find(p);
    if (i >= 0) {
      sblock b = reg[i];
      int real = b.dying || b.owner == tl_building;
      if (real) reg_remove(i);
      pthread_mutex_unlock(&reg_mu);
      if (real) {
        if (tl_account && b.owner == tl_building) *tl_account -= b.charged;
        block_release(&b);
      }
      return;
    }
    pthread_mutex_unlock(&reg_mu);
  }
  charge(-(int64_t)malloc_usable_size(p));
  free(p);
}

/* Size of a live block as XNNPACK knows it (registered: as asked; heap: usable size). */
static size_t block_size(void *p) {
  if (reg_live) {
    pthread_mutex_lock(&reg_mu);
    int i = reg_find(p);
    size_t n = i >= 0 ? reg[i].size : 0;
    pthread_mutex_unlock(&reg_mu);
    if (i >= 0) return n;
  }
  return malloc_usable_size(p);
}

static void *xa_alloc(void *ctx, size_t n) { (void)ctx; return block_alloc(16, n); }
static void *xa_aligned(void *ctx, size_t align, size_t n) { (void)ctx; return block_alloc(align, n); }
static void xa_free(void *ctx, void *p) { (void)ctx; block_free(p); }
/* Reallocation is allocate + copy + free: a template's block is never resized in place (a clone
 * resizing one gets its own copy, and the template keeps the original). */
static void *xa_realloc(void *ctx, void *p, size_t n) {
  (void)ctx;
  void *q = block_alloc(16, n);
  if (!q || !p) return q;
  size_t old = block_size(p);
  memcpy(q, p, old < n ? old : n);
  block_free(p);
  return q;
}

static const struct xnn_allocator xnn_alloc = {NULL, xa_alloc, xa_realloc, xa_free, xa_aligned, xa_free};

const struct xnn_allocator *hr__xnn_allocator(void) { return &xnn_alloc; }
void hr__xnn_account_begin(int64_t *acc) { tl_account = acc; }
void hr__xnn_account_end(void) { tl_account = NULL; }
int64_t hr__xnn_live_bytes(void) { return live_total; }
void hr__kcache_protect(int on) { protect_on = on; }

/* ---- kernel cache ------------------------------------------------------------------------------ */
struct hr__kshare {
  hr__kshare *next;
  uint64_t hash;
  xnn_operator_t tmpl;     /* created and set up with placeholder pointers; never run */
  void *blob;              /* or a block of our kernels' data (hr__kcache_acquire_blob) */
  size_t blob_size;        /* its bytes; mapped pages (protection mode) when blob_mapped */
  int blob_mapped;
  size_t op_size, op_align;
  int64_t bytes;           /* everything the template allocated */
  int refs;                /* live clones */
  size_t key_len;
  unsigned char key[];
};

struct hr__kcache {
  pthread_mutex_t mu;
  hr__kshare *head;
};

hr__kcache *hr__kcache_create(void) {
  hr__kcache *kc = calloc(1, sizeof *kc);
  if (kc) pthread_mutex_init(&kc->mu, NULL);
  return kc;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Free whatever of the template's blocks is still registered (XNNPACK already freed the rest). */
static void drop_blocks(const hr__kshare *e) {
  pthread_mutex_lock(&reg_mu);
  for (int i = n_reg - 1; i >= 0; i--)
    if (reg[i].owner == e) {
      sblock b = reg[i];
      reg_remove(i);
      block_release(&b); /* munmap needs no write access to sealed pages */
    }
  pthread_mutex_unlock(&reg_mu);
}

/* Delete a template operator: its blocks become freeable, then XNNPACK frees them. */
static void discard(hr__kshare *e) {
  pthread_mutex_lock(&reg_mu);
  for (int i = 0; i < n_reg; i++)
    if (reg[i].owner == e) {
      if (reg[i].mapped) mprotect(reg[i].p, page_round(reg[i].size), PROT_READ | PROT_WRITE);
      reg[i].dying = 1;
    }
  pthread_mutex_unlock(&reg_mu);
  int64_t *acc = tl_account;
  tl_account = NULL; /* the template's memory was never the calling session's */
  if (e->tmpl) xnn_delete_operator(e->tmpl);
  tl_account = acc;
  drop_blocks(e);
  if (e->blob && e->blob_mapped) munmap(e->blob, page_round(e->blob_size));
  else free(e->blob);
}

/* Unlink a template from the cache and delete it. Caller holds kc->mu. */
static void drop_share(hr__kcache *kc, hr__kshare *e) {
  hr__kshare **pp = &kc->head;
  while (*pp && *pp != e) pp = &(*pp)->next;
  if (*pp) *pp = e->next;
  discard(e);
  free(e);
}

/* Make the template's pages read-only (protection mode). */
static void seal(const hr__kshare *e) {
  pthread_mutex_lock(&reg_mu);
  for (int i = 0; i < n_reg; i++)
    if (reg[i].owner == e && reg[i].mapped) mprotect(reg[i].p, page_round(reg[i].size), PROT_READ);
  pthread_mutex_unlock(&reg_mu);
}

/* Build the template for key; on success e->tmpl, op_size, op_align and bytes are set. */
static hr_status build_template(hr__kshare *e, hr__kbuild_fn build) {
  const hr__kshare *prev_building = tl_building;
  int64_t *prev_acc = tl_account;
  tl_building = e;
  tl_account = &e->bytes;
  hr_status st = build(e->key, &e->tmpl);
  tl_building = prev_building;
  tl_account = prev_acc;
  if (st) {
    if (e->tmpl) discard(e); else drop_blocks(e);
    e->tmpl = NULL;
    return st;
  }
  /* the operator struct is one of the template's blocks: its size is what a clone copies */
  pthread_mutex_lock(&reg_mu);
  int i = reg_find(e->tmpl);
  if (i >= 0) { e->op_size = reg[i].size; e->op_align = reg[i].align; }
  pthread_mutex_unlock(&reg_mu);
  if (i < 0) { /* not allocated through us: it cannot be cloned */
    discard(e);
    e->tmpl = NULL;
    return HR_ENOTSUP;
  }
  if (protect_on) seal(e);
  return HR_OK;
}

/* The cache's entry for key, or a new one (*fresh = 1: zeroed but for its key and hash, not in the
 * list yet; the caller fills it, then links it or frees it). NULL: out of memory. Caller holds kc->mu. */
static hr__kshare *find_or_new(hr__kcache *kc, const void *key, size_t key_len, int *fresh) {
  const uint64_t h = fnv1a(key, key_len);
  hr__kshare *e = kc->head;
  while (e && !(e->hash == h && e->key_len == key_len && !memcmp(e->key, key, key_len))) e = e->next;
  *fresh = !e;
  if (e) return e;
  e = calloc(1, sizeof *e + key_len);
  if (!e) return NULL;
  memcpy(e->key, key, key_len);
  e->key_len = key_len;
  e->hash = h;
  return e;
}

hr_status hr__kcache_acquire(hr__kcache *kc, const void *key, size_t key_len, hr__kbuild_fn build, xnn_operator_t *clone,
                             hr__kshare **share, int64_t *shared_bytes) {
  *clone = NULL;
  *share = NULL;
  if (shared_bytes) *shared_bytes = 0;
  pthread_mutex_lock(&kc->mu);
  int fresh;
  hr__kshare *e = find_or_new(kc, key, key_len, &fresh);
  if (!e) { pthread_mutex_unlock(&kc->mu); return HR_ENOMEM; }
  if (fresh) {
    hr_status st = build_template(e, build);
    if (st) { free(e); pthread_mutex_unlock(&kc->mu); return st; }
    e->next = kc->head;
    kc->head = e;
  }
  /* the clone: the caller's own copy of the operator struct (charged to the caller's account) */
  void *c = block_alloc(e->op_align, e->op_size);
  if (c) {
    memcpy(c, e->tmpl, e->op_size);
    e->refs++;
  } else if (!e->refs) {
    drop_share(kc, e); /* built for this call alone */
    e = NULL;
  }
  if (c) {
    *clone = c;
    *share = e;
    if (shared_bytes) *shared_bytes = e->bytes;
  }
  pthread_mutex_unlock(&kc->mu);
  return c ? HR_OK : HR_ENOMEM;
}

hr_status hr__kcache_acquire_blob(hr__kcache *kc, const void *key, size_t key_len, size_t bytes, hr__kblob_fill_fn fill, void **data,
                                  hr__kshare **share, int64_t *shared_bytes) {
  *data = NULL;
  *share = NULL;
  if (shared_bytes) *shared_bytes = 0;
  pthread_mutex_lock(&kc->mu);
  int fresh;
  hr__kshare *e = find_or_new(kc, key, key_len, &fresh);
  if (!e) { pthread_mutex_unlock(&kc->mu); return HR_ENOMEM; }
  if (fresh) {
    e->blob_size = bytes ? bytes : 1;
    if (protect_on) {   /* whole pages, sealed once filled (a write to them faults) */
      void *p = mmap(NULL, page_round(e->blob_size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      e->blob = p == MAP_FAILED ? NULL : p;
      e->blob_mapped = 1;
      e->bytes = (int64_t)page_round(e->blob_size);
    } else {
      e->blob = calloc(1, e->blob_size);
      e->bytes = e->blob ? (int64_t)malloc_usable_size(e->blob) : 0;
    }
    if (!e->blob) { free(e); pthread_mutex_unlock(&kc->mu); return HR_ENOMEM; }
    fill(e->key, e->blob);
    if (e->blob_mapped) mprotect(e->blob, page_round(e->blob_size), PROT_READ);
    e->next = kc->head;
    kc->head = e;
  }
  e->refs++;
  *data = e->blob;
  *share = e;
  if (shared_bytes) *shared_bytes = e->bytes;
  pthread_mutex_unlock(&kc->mu);
  return HR_OK;
}

void hr__kcache_release(hr__kcache *kc, hr__kshare *share) {
  if (!kc || !share) return;
  pthread_mutex_lock(&kc->mu);
  assert(share->refs > 0);
  if (--share->refs == 0) drop_share(kc, share);
  pthread_mutex_unlock(&kc->mu);
}

int64_t hr__kcache_bytes(hr__kcache *kc, int *n_templates) {
  int64_t b = 0;
  int n = 0;
  if (kc) {
    pthread_mutex_lock(&kc->mu);
    for (hr__kshare *e = kc->head; e; e = e->next) { b += e->bytes; n++; }
    pthread_mutex_unlock(&kc->mu);
  }
  if (n_templates) *n_templates = n;
  return b;
}

void hr__kcache_destroy(hr__kcache *kc) {
  if (!kc) return;
  /* a template left means a session outlived its model: the caller's bug */
  assert(!kc->head && "hr_model_destroy: sessions of this model are still alive");
  while (kc->head) drop_share(kc, kc->head);
  pthread_mutex_destroy(&kc->mu);
  free(kc);
}
