/* kdc-plugin/router/interpose.c - the definitions mpc_crypto_router.so puts in front of
 * libk5crypto's (and libkrb5's): one per row of interposers.h, each in the shape its row
 * names.
 *
 * Loaded into krb5kdc with LD_PRELOAD, the router receives these calls from krb5kdc,
 * libkrb5, libkdb5, plugins, and libk5crypto itself (its internal calls go through its PLT
 * and its provider tables). A call whose key is not a handle candidate (route.h) goes to the
 * original untouched; a candidate goes to the router's routing (route.h), or is refused
 * where the router never routes one (the deprecated API, libk5crypto's internal primitives).
 * Calls without a key answer for the protected krbtgt key's private types (private_types.h)
 * and pass every other value to the original.
 *
 * Reads nothing itself; the first call in a process image resolves the originals
 * (originals.h), opens the trace (router_log.h) and sets up the routing state (route.h). The
 * configuration is read on the first handle (route_state.h, router_config.c).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <krb5/krb5.h>

#include "interposers.h"
#include "originals.h"
#include "private_types.h"
#include "route.h"
#include "router_log.h"

#define EXPORT __attribute__((visibility("default")))
#define CALLER __builtin_return_address(0)

/* The key of the deprecated checksum functions is their seed: its bytes (the enctype is
 * implied by the checksum type). */
#define ROUTER_SEED_KEY(seed, seed_length)                                                  \
    (&(krb5_keyblock){ .length = (seed_length) > UINT32_MAX ? 0 : (unsigned int)(seed_length), \
                       .contents = (krb5_octet *)(seed) })

static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static const struct router_originals *originals;

static void
init_process(void)
{
    originals = router_originals();
    router_log_init();
    route_init();
}

/* The originals; on the first call in the process image, everything the router sets up
 * once. */
static const struct router_originals *
libk5crypto(void)
{
    pthread_once(&process_once, init_process);
    return originals;
}

static krb5_error_code
missing_original(krb5_context ctx, enum router_fn fn)
{
    char why[ROUTER_MSG_LEN];

    snprintf(why, sizeof(why), "the real %s@%s not found (are libk5crypto and libkrb5 "
             "loaded?)", router_fn_name(fn), router_fn_version(fn));
    return router_refuse(ctx, fn, KRB5_CRYPTO_INTERNAL, why);
}

/* The keyblock of a krb5_key, copied (libk5crypto keeps krb5_key opaque): 0 and *out
 * (freed by the caller with krb5_free_keyblock; NULL for no key), or an error. */
static krb5_error_code
key_view(const struct router_originals *orig, krb5_key key, krb5_keyblock **out)
{
    *out = NULL;
    if (key == NULL)
        return 0;
    if (orig->krb5_k_key_keyblock == NULL)
        return KRB5_CRYPTO_INTERNAL;
    return orig->krb5_k_key_keyblock(NULL, key, out);
}

static krb5_error_code
refuse_old_api(krb5_context ctx, enum router_fn fn, const krb5_keyblock *kb, const void *caller)
{
    router_trace(fn, caller, "refused", kb, NULL);
    return router_refuse(ctx, fn, KRB5_CRYPTO_INTERNAL, "protected keys are not served through "
                         "the deprecated krb5_encrypt_block API");
}

/* The entry points already stop every handle; one arriving at an internal primitive means a
 * path the router does not know. These have no krb5_context. */
static krb5_error_code
refuse_internal(enum router_fn fn, const krb5_keyblock *kb, const void *caller)
{
    router_trace(fn, caller, "refused", kb, NULL);
    return router_refuse(NULL, fn, KRB5_CRYPTO_INTERNAL,
                         "a key handle reached a libk5crypto primitive by a path the router "
                         "does not route; refused");
}

/* ---- the shapes --------------------------------------------------------------------- */

#define DEFINE_KEYBLOCK(rtype, name, params, args, op, op_args)                             \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        const route_call call = { ctx, ROUTER_FN_##name, CALLER };                          \
        rtype ret;                                                                          \
                                                                                            \
        if (orig->name == NULL) {                                                           \
            ret = missing_original(ctx, ROUTER_FN_##name);                                  \
        } else if (!route_is_candidate(key)) {                                              \
            router_trace(ROUTER_FN_##name, call.caller, "real", key, NULL);                 \
            ret = orig->name args;                                                          \
        } else {                                                                            \
            ret = route_##op(&call, key, ROUTER_ARGS op_args);                              \
        }                                                                                   \
        return ret;                                                                         \
    }

#define DEFINE_KEY(rtype, name, params, args, op, op_args)                                  \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        const route_call call = { ctx, ROUTER_FN_##name, CALLER };                          \
        krb5_keyblock *kb = NULL;                                                           \
        rtype ret;                                                                          \
                                                                                            \
        if (orig->name == NULL) {                                                           \
            ret = missing_original(ctx, ROUTER_FN_##name);                                  \
        } else if ((ret = key_view(orig, key, &kb)) != 0) {                                 \
            ret = router_refuse(ctx, ROUTER_FN_##name, ret,                                 \
                                "cannot read the key of a krb5_key");                       \
        } else if (!route_is_candidate(kb)) {                                               \
            router_trace(ROUTER_FN_##name, call.caller, "real", kb, NULL);                  \
            krb5_free_keyblock(NULL, kb);                                                   \
            kb = NULL;                                                                      \
            ret = orig->name args;                                                          \
        } else {                                                                            \
            ret = route_##op(&call, kb, ROUTER_ARGS op_args);                               \
        }                                                                                   \
        krb5_free_keyblock(NULL, kb);                                                       \
        return ret;                                                                         \
    }

#define DEFINE_KEYBLOCK_PAIR(rtype, name, params, args, op, op_args)                        \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        const route_call call = { ctx, ROUTER_FN_##name, CALLER };                          \
        rtype ret;                                                                          \
                                                                                            \
        if (orig->name == NULL) {                                                           \
            ret = missing_original(ctx, ROUTER_FN_##name);                                  \
        } else if (!route_is_candidate(k1) && !route_is_candidate(k2)) {                    \
            router_trace(ROUTER_FN_##name, call.caller, "real", k1, k2);                    \
            ret = orig->name args;                                                          \
        } else {                                                                            \
            ret = route_##op(&call, ROUTER_ARGS op_args);                                   \
        }                                                                                   \
        return ret;                                                                         \
    }

#define DEFINE_DEPRECATED(rtype, name, params, args, key_expr)                              \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        const krb5_keyblock *kb = key_expr;                                                 \
        rtype ret;                                                                          \
                                                                                            \
        if (orig->name == NULL) {                                                           \
            ret = missing_original(ctx, ROUTER_FN_##name);                                  \
        } else if (route_is_candidate(kb)) {                                                \
            ret = refuse_old_api(ctx, ROUTER_FN_##name, kb, CALLER);                        \
        } else {                                                                            \
            router_trace(ROUTER_FN_##name, CALLER, "real", kb, NULL);                       \
            ret = orig->name args;                                                          \
        }                                                                                   \
        return ret;                                                                         \
    }

#define DEFINE_INTERNAL(rtype, name, params, args, key_arg)                                 \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        krb5_keyblock *kb = NULL;                                                           \
        rtype ret;                                                                          \
                                                                                            \
        if (orig->name == NULL) {                                                           \
            ret = missing_original(NULL, ROUTER_FN_##name);                                 \
        } else if ((ret = key_view(orig, key_arg, &kb)) != 0) {                             \
            ret = router_refuse(NULL, ROUTER_FN_##name, ret,                                \
                                "cannot read the key of a krb5_key");                       \
        } else if (route_is_candidate(kb)) {                                                \
            ret = refuse_internal(ROUTER_FN_##name, kb, CALLER);                            \
        } else {                                                                            \
            router_trace(ROUTER_FN_##name, CALLER, "real", kb, NULL);                       \
            krb5_free_keyblock(NULL, kb);                                                   \
            kb = NULL;                                                                      \
            ret = orig->name args;                                                          \
        }                                                                                   \
        krb5_free_keyblock(NULL, kb);                                                       \
        return ret;                                                                         \
    }

#define DEFINE_INTERNAL_KEYBLOCK(rtype, name, params, args, key_arg)                        \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        rtype ret;                                                                          \
                                                                                            \
        if (orig->name == NULL) {                                                           \
            ret = missing_original(NULL, ROUTER_FN_##name);                                 \
        } else if (route_is_candidate(key_arg)) {                                           \
            ret = refuse_internal(ROUTER_FN_##name, key_arg, CALLER);                       \
        } else {                                                                            \
            router_trace(ROUTER_FN_##name, CALLER, "real", key_arg, NULL);                  \
            ret = orig->name args;                                                          \
        }                                                                                   \
        return ret;                                                                         \
    }

#define DEFINE_KEYLESS(rtype, name, params, args, ctx_expr, is_private)                     \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        rtype ret;                                                                          \
                                                                                            \
        if (orig->name == NULL)                                                             \
            ret = missing_original(ctx_expr, ROUTER_FN_##name);                             \
        else if (!(is_private))                                                             \
            ret = orig->name args;                                                          \
        else                                                                                \
            ret = private_##name args;                                                      \
        return ret;                                                                         \
    }

#define DEFINE_KEYLESS_BOOL(rtype, name, params, args, is_private, if_missing)              \
    EXPORT rtype KRB5_CALLCONV name params                                                  \
    {                                                                                       \
        const struct router_originals *orig = libk5crypto();                                \
        rtype answer;                                                                       \
                                                                                            \
        if (is_private)                                                                     \
            answer = private_##name args;                                                   \
        else if (orig->name == NULL)                                                        \
            answer = if_missing;                                                            \
        else                                                                                \
            answer = (orig->name args) != 0;                                                \
        return answer;                                                                      \
    }

/* ---- one declaration and one definition per row ------------------------------------- */

/* Declared first: checked against krb5.h where it declares the function, and the
 * prototype of the krb5int_* functions, which no installed header declares. */
#define DECLARE_ROW(shape, version, rtype, name, params, ...)                               \
    EXPORT rtype KRB5_CALLCONV name params;
ROUTER_INTERPOSERS(DECLARE_ROW)
#undef DECLARE_ROW

#define DEFINE_ROW(shape, version, rtype, name, params, args, ...)                          \
    DEFINE_##shape(rtype, name, params, args, __VA_ARGS__)
ROUTER_INTERPOSERS(DEFINE_ROW)
#undef DEFINE_ROW
