/* XNNPACK's memory: the accounting allocator every XNNPACK allocation goes through, and the
 * model-wide kernel cache that lets sessions share operators' packed weights and shape tables. */
#ifndef HR_SESSION_KCACHE_H
#define HR_SESSION_KCACHE_H
#include <stddef.h>
#include <stdint.h>
#include <xnnpack.h>
#include "headroom/core.h"

/* ---- allocator ------------------------------------------------------------------------------ */
const struct xnn_allocator *hr__xnn_allocator(void);
/* Charge XNNPACK allocations made by this thread to *acc until _end (bytes, net of frees). */
void hr__xnn_account_begin(int64_t *acc);
void hr__xnn_account_end(void);
int64_t hr__xnn_live_bytes(void);

/* ---- kernel cache ----------------------------------------------------------------------------
 * XNNPACK 2022 has no weights cache: every operator packs its own weights at create, and builds
 * its indirection buffer (or resize tables) at the first setup of a shape. Both depend only on the
 * operator's parameters and shapes, never on the data pointers, and are read-only afterwards (at
 * a later setup of the same shape XNNPACK only records the offset of the new input pointer).
 *
 * So one *template* operator is made per (model, descriptor): created, then set up once at the
 * descriptor's shapes with placeholder pointers; it is never run. A session gets a *clone*: a
 * byte copy of the template's operator struct (its own, writable, about 2 KB) that points at the
 * template's packed weights, zero buffer and indirection buffer. The session sets its clone up
 * with its own pointers and runs it; nothing shared is written. The allocator knows the template's
 * blocks, so XNNPACK freeing a clone frees only the clone. The template lives while a clone does:
 * the last release frees it, so shedding a plan still gives its memory back.
 *
 * The key is the caller's descriptor of everything create and setup depend on (parameters,
 * shapes, weight pointers into the model's immutable weights). Only operators whose setup writes
 * nothing but the operator struct may be cached: convolution, fully connected, bilinear resize.
 * Deconvolution is not (its setup writes output pointers into an operator-owned buffer; the test
 * test_session_kcache watches that).
 * hr__kcache_protect makes templates read-only pages, so a write to shared memory faults; the
 * tests run whole models under it. */
typedef struct hr__kcache hr__kcache;
typedef struct hr__kshare hr__kshare;

/* Build a template: create the operator and set it up at the key's shapes (placeholder pointers). */
typedef hr_status (*hr__kbuild_fn)(const void *key, xnn_operator_t *op);

hr__kcache *hr__kcache_create(void);
/* All shares must have been released (sessions destroyed before their model). */
void hr__kcache_destroy(hr__kcache *kc);
/* A clone of the template for key (built by build() on first use). The clone's struct is the
 * caller's (charged to the thread's allocation account); the template's memory is the cache's,
 * and *shared_bytes says how much it is. The clone must be set up by the caller before it runs,
 * deleted with xnn_delete_operator, then its share released. Thread-safe. */
hr_status hr__kcache_acquire(hr__kcache *kc, const void *key, size_t key_len, hr__kbuild_fn build, xnn_operator_t *clone,
                             hr__kshare **share, int64_t *shared_bytes);
void hr__kcache_release(hr__kcache *kc, hr__kshare *share);
/* A block of our kernels' prepared data for key (wino.h's transformed weights): `bytes` zeroed bytes
 * the cache allocates and fill() writes on first use, shared the same way: never written again,
 * under hr__kcache_protect in read-only pages, freed at the last release. The key must not be an
 * operator's descriptor (give it a tag of its own). */
typedef void (*hr__kblob_fill_fn)(const void *key, void *data);
hr_status hr__kcache_acquire_blob(hr__kcache *kc, const void *key, size_t key_len, size_t bytes, hr__kblob_fill_fn fill, void **data,
                                  hr__kshare **share, int64_t *shared_bytes);
/* Memory held by templates now, and how many there are. */
int64_t hr__kcache_bytes(hr__kcache *kc, int *n_templates);
/* Tests: templates built from now on live in read-only pages (a write to them faults). */
void hr__kcache_protect(int on);
#endif
