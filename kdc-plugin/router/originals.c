/* kdc-plugin/router/originals.c - finds libk5crypto's and libkrb5's own definitions of the
 * interposed functions (originals.h).
 *
 * Reads nothing but the dynamic linker's tables.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "originals.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#define ROUTER_STRING(x) #x
#define ROUTER_NODE_NAME(node) ROUTER_STRING(node)

static const char *const fn_names[ROUTER_FN_COUNT] = {
#define FN_NAME(shape, version, ret, name, ...) #name,
    ROUTER_INTERPOSERS(FN_NAME)
#undef FN_NAME
};

static const char *const fn_versions[ROUTER_FN_COUNT] = {
#define FN_VERSION(shape, version, ret, name, ...) ROUTER_NODE_NAME(ROUTER_VERSION_NODE_##version),
    ROUTER_INTERPOSERS(FN_VERSION)
#undef FN_VERSION
};

static struct router_originals originals;
static pthread_once_t originals_once = PTHREAD_ONCE_INIT;

/* The next definition of name after this module's, under version, else unversioned. */
static void *
next_definition(const char *name, const char *version)
{
    void *sym = dlvsym(RTLD_NEXT, name, version);

    if (sym == NULL)
        sym = dlsym(RTLD_NEXT, name);
    return sym;
}

static void
resolve(void)
{
    void *sym;

    /* memcpy: ISO C has no conversion from void * to a function pointer; POSIX guarantees
     * the representations agree. */
#define RESOLVE(shape, version, ret, name, ...)                                             \
    sym = next_definition(#name, ROUTER_NODE_NAME(ROUTER_VERSION_NODE_##version));          \
    memcpy(&originals.name, &sym, sizeof(sym));
    ROUTER_INTERPOSERS(RESOLVE)
    RESOLVE(, K5CRYPTO, , krb5_k_key_keyblock, )
#undef RESOLVE
}

const struct router_originals *
router_originals(void)
{
    pthread_once(&originals_once, resolve);
    return &originals;
}

const char *
router_fn_name(enum router_fn fn)
{
    return (unsigned)fn < ROUTER_FN_COUNT ? fn_names[fn] : "?";
}

const char *
router_fn_version(enum router_fn fn)
{
    return (unsigned)fn < ROUTER_FN_COUNT ? fn_versions[fn] : "?";
}
