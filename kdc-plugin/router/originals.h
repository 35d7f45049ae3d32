/* kdc-plugin/router/originals.h - libk5crypto's and libkrb5's own definitions of the functions
 * the crypto router interposes (interposers.h), and their names and versions.
 *
 * router_originals() resolves every original once per process image (pthread_once; the
 * addresses survive fork) with dlvsym(RTLD_NEXT, name, version), falling back to
 * dlsym(RTLD_NEXT, name) for a library built without symbol versions. A field is NULL when
 * neither finds it (libk5crypto or libkrb5 not loaded): the interposer then refuses, naming
 * the missing function.
 *
 * The router calls an original directly (never its own interposed name) wherever it needs
 * libk5crypto itself: for an ordinary key, and for the clear half of a KRB-FX-CF2.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_ORIGINALS_H
#define MPC_ROUTER_ORIGINALS_H

#include <krb5/krb5.h>

#include "interposers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libk5crypto's provider tables, opaque here (krb5 1.20.1 lib/crypto/krb/crypto_int.h). */
struct krb5_enc_provider;
struct krb5_hash_provider;

/* Every interposed function, numbered in the order of the list. */
enum router_fn {
#define ROUTER_FN_ID(shape, version, ret, name, ...) ROUTER_FN_##name,
    ROUTER_INTERPOSERS(ROUTER_FN_ID)
#undef ROUTER_FN_ID
    ROUTER_FN_COUNT
};

/* Pointers to the originals: one field per row of the list, named after the function,
 * typed from its signature; and krb5_k_key_keyblock, which the router calls (to see the
 * keyblock of a krb5_key) without interposing it. */
struct router_originals {
#define ROUTER_ORIGINAL_FIELD(shape, version, ret, name, params, ...)                      \
    ret(KRB5_CALLCONV *name) params;
    ROUTER_INTERPOSERS(ROUTER_ORIGINAL_FIELD)
#undef ROUTER_ORIGINAL_FIELD
    krb5_error_code(KRB5_CALLCONV *krb5_k_key_keyblock)(krb5_context context, krb5_key key,
                                                        krb5_keyblock **key_out);
};

/* The originals, resolved on the first call in the process image. Never NULL; the table is
 * immutable afterwards and is not freed. */
const struct router_originals *router_originals(void);

/* The symbol name of fn ("krb5_c_encrypt") and the version node it is interposed under
 * ("k5crypto_3_MIT"); static strings. */
const char *router_fn_name(enum router_fn fn);
const char *router_fn_version(enum router_fn fn);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_ORIGINALS_H */
