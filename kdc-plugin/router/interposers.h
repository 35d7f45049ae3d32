/* kdc-plugin/router/interposers.h - the one list of the entry points the crypto router
 * interposes: their symbol versions, their signatures, and how each is routed.
 *
 * Everything that names an interposed function follows from this list, so that a function
 * added or removed here is added or removed everywhere:
 *   - interpose.c defines each one (the shapes below), exported with default visibility;
 *   - originals.c resolves libk5crypto's (libkrb5's) own definition of each with
 *     dlvsym(RTLD_NEXT, name, version), falling back to dlsym(RTLD_NEXT, name);
 *   - router_fn.h numbers them (enum router_fn) for the log and the trace;
 *   - mpc_crypto_router.exports.in, run through the C preprocessor by CMake, makes the
 *     linker version script that exports each one under its version node.
 * tests/unit/kdc-plugin/check_router_exports.cmake checks the built module against it: every
 * symbol it defines is in the version script, and every interposed name is defined under the
 * same version by libk5crypto or libkrb5 (a definition under any other version name would
 * catch no call).
 *
 * Only preprocessor definitions: the version script includes this file.
 *
 * A row is X(SHAPE, VERSION, RETURN, NAME, (PARAMETERS), (ARGUMENTS), ...), where VERSION is
 * K5CRYPTO or KRB5 (the node names below), PARAMETERS the signature of krb5 1.20.1 (krb5.h
 * for the public functions, lib/crypto for the krb5int_* ones) and ARGUMENTS the same names
 * in a call. The shapes, and what they add:
 *
 *   KEYBLOCK(..., op, (op args))   a krb5_keyblock named `key`. Not a handle candidate:
 *       traced "real" and passed to the original. A candidate: route_<op>(call, key, op
 *       args...) (route.h) verifies it and sends it to the engine or refuses it; a
 *       candidate never reaches the original.
 *   KEY(..., op, (op args))        the same for a krb5_key named `key`, seen through its
 *       keyblock (krb5_k_key_keyblock).
 *   KEYBLOCK_PAIR(..., op, (op args))  two krb5_keyblocks named k1 and k2; routed when
 *       either is a candidate (route_<op>(call, op args...)).
 *   DEPRECATED(..., key)           the krb5_encrypt_block API: never routed; a candidate
 *       is refused. `key` is an expression giving the krb5_keyblock (or NULL).
 *   INTERNAL(..., key)             a libk5crypto primitive reached through its PLT and its
 *       provider tables, with the krb5_key `key`: a backstop, a candidate arriving there
 *       came by a path the router does not route and is refused.
 *   INTERNAL_KEYBLOCK(..., key)    the same with the krb5_keyblock `key`.
 *   KEYLESS(..., ctx, private)     no key, an error code returned: when the expression
 *       `private` holds (the private enctype or checksum type of the protected krbtgt key,
 *       kdb/protected_key.h), private_<name> (private_types.h) answers; otherwise the
 *       original does. `ctx` is the context for the message when the original is missing.
 *   KEYLESS_BOOL(..., private, missing)  the same for a krb5_boolean answer; `missing` is
 *       the answer when the original cannot be found.
 */
#ifndef MPC_ROUTER_INTERPOSERS_H
#define MPC_ROUTER_INTERPOSERS_H

/* The version nodes, as libk5crypto.so.3 and libkrb5.so.3 name them (objdump -T). */
#define ROUTER_VERSION_NODE_K5CRYPTO k5crypto_3_MIT
#define ROUTER_VERSION_NODE_KRB5 krb5_3_MIT

/* Expands a parenthesised argument list without its parentheses. */
#define ROUTER_ARGS(...) __VA_ARGS__

#define ROUTER_INTERPOSERS(X)                                                                 \
    /* ---- computations with a krb5_keyblock ---- */                                         \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_encrypt,                                    \
      (krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,                       \
       const krb5_data *cipher_state, const krb5_data *input, krb5_enc_data *output),         \
      (ctx, key, usage, cipher_state, input, output),                                         \
      encrypt, (usage, cipher_state, input, output))                                          \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_decrypt,                                    \
      (krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,                       \
       const krb5_data *cipher_state, const krb5_enc_data *input, krb5_data *output),         \
      (ctx, key, usage, cipher_state, input, output),                                         \
      decrypt, (usage, cipher_state, input, output))                                          \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_encrypt_iov,                                \
      (krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,                       \
       const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data),               \
      (ctx, key, usage, cipher_state, data, num_data),                                        \
      encrypt_iov, (usage, cipher_state, data, num_data))                                     \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_decrypt_iov,                                \
      (krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,                       \
       const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data),               \
      (ctx, key, usage, cipher_state, data, num_data),                                        \
      decrypt_iov, (usage, cipher_state, data, num_data))                                     \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_make_checksum,                              \
      (krb5_context ctx, krb5_cksumtype cksumtype, const krb5_keyblock *key,                  \
       krb5_keyusage usage, const krb5_data *input, krb5_checksum *cksum),                   \
      (ctx, cksumtype, key, usage, input, cksum),                                             \
      make_checksum, (cksumtype, usage, input, cksum))                                        \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_verify_checksum,                            \
      (krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,                       \
       const krb5_data *data, const krb5_checksum *cksum, krb5_boolean *valid),              \
      (ctx, key, usage, data, cksum, valid),                                                  \
      verify_checksum, (usage, data, cksum, valid))                                           \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_make_checksum_iov,                          \
      (krb5_context ctx, krb5_cksumtype cksumtype, const krb5_keyblock *key,                  \
       krb5_keyusage usage, krb5_crypto_iov *data, size_t num_data),                          \
      (ctx, cksumtype, key, usage, data, num_data),                                           \
      make_checksum_iov, (cksumtype, usage, data, num_data))                                  \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_verify_checksum_iov,                        \
      (krb5_context ctx, krb5_cksumtype cksumtype, const krb5_keyblock *key,                  \
       krb5_keyusage usage, const krb5_crypto_iov *data, size_t num_data,                     \
       krb5_boolean *valid),                                                                  \
      (ctx, cksumtype, key, usage, data, num_data, valid),                                    \
      verify_checksum_iov, (cksumtype, usage, data, num_data, valid))                         \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_prf,                                        \
      (krb5_context ctx, const krb5_keyblock *key, krb5_data *input, krb5_data *output),     \
      (ctx, key, input, output),                                                              \
      prf, (input, output))                                                                   \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_prfplus,                                    \
      (krb5_context ctx, const krb5_keyblock *key, const krb5_data *input,                    \
       krb5_data *output),                                                                    \
      (ctx, key, input, output),                                                              \
      prfplus, (input, output))                                                               \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_derive_prfplus,                             \
      (krb5_context ctx, const krb5_keyblock *key, const krb5_data *input,                    \
       krb5_enctype enctype, krb5_keyblock **out),                                            \
      (ctx, key, input, enctype, out),                                                        \
      derive_prfplus, (input, enctype, out))                                                  \
    X(KEYBLOCK_PAIR, K5CRYPTO, krb5_error_code, krb5_c_fx_cf2_simple,                         \
      (krb5_context ctx, const krb5_keyblock *k1, const char *pepper1,                        \
       const krb5_keyblock *k2, const char *pepper2, krb5_keyblock **out),                    \
      (ctx, k1, pepper1, k2, pepper2, out),                                                   \
      cf2, (k1, pepper1, k2, pepper2, out))                                                   \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_init_state,                                 \
      (krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,                       \
       krb5_data *new_state),                                                                 \
      (ctx, key, usage, new_state),                                                           \
      init_state, (usage, new_state))                                                         \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_c_free_state,                                 \
      (krb5_context ctx, const krb5_keyblock *key, krb5_data *state),                         \
      (ctx, key, state),                                                                      \
      free_state, (state))                                                                    \
    X(KEYBLOCK, K5CRYPTO, krb5_error_code, krb5_k_create_key,                                 \
      (krb5_context ctx, const krb5_keyblock *key, krb5_key *out),                            \
      (ctx, key, out),                                                                        \
      create_key, (out))                                                                      \
    /* ---- computations with a krb5_key ---- */                                              \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_encrypt,                                         \
      (krb5_context ctx, krb5_key key, krb5_keyusage usage, const krb5_data *cipher_state,    \
       const krb5_data *input, krb5_enc_data *output),                                        \
      (ctx, key, usage, cipher_state, input, output),                                         \
      encrypt, (usage, cipher_state, input, output))                                          \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_decrypt,                                         \
      (krb5_context ctx, krb5_key key, krb5_keyusage usage, const krb5_data *cipher_state,    \
       const krb5_enc_data *input, krb5_data *output),                                        \
      (ctx, key, usage, cipher_state, input, output),                                         \
      decrypt, (usage, cipher_state, input, output))                                          \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_encrypt_iov,                                     \
      (krb5_context ctx, krb5_key key, krb5_keyusage usage, const krb5_data *cipher_state,    \
       krb5_crypto_iov *data, size_t num_data),                                               \
      (ctx, key, usage, cipher_state, data, num_data),                                        \
      encrypt_iov, (usage, cipher_state, data, num_data))                                     \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_decrypt_iov,                                     \
      (krb5_context ctx, krb5_key key, krb5_keyusage usage, const krb5_data *cipher_state,    \
       krb5_crypto_iov *data, size_t num_data),                                               \
      (ctx, key, usage, cipher_state, data, num_data),                                        \
      decrypt_iov, (usage, cipher_state, data, num_data))                                     \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_make_checksum,                                   \
      (krb5_context ctx, krb5_cksumtype cksumtype, krb5_key key, krb5_keyusage usage,         \
       const krb5_data *input, krb5_checksum *cksum),                                         \
      (ctx, cksumtype, key, usage, input, cksum),                                             \
      make_checksum, (cksumtype, usage, input, cksum))                                        \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_verify_checksum,                                 \
      (krb5_context ctx, krb5_key key, krb5_keyusage usage, const krb5_data *data,            \
       const krb5_checksum *cksum, krb5_boolean *valid),                                      \
      (ctx, key, usage, data, cksum, valid),                                                  \
      verify_checksum, (usage, data, cksum, valid))                                           \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_make_checksum_iov,                               \
      (krb5_context ctx, krb5_cksumtype cksumtype, krb5_key key, krb5_keyusage usage,         \
       krb5_crypto_iov *data, size_t num_data),                                               \
      (ctx, cksumtype, key, usage, data, num_data),                                           \
      make_checksum_iov, (cksumtype, usage, data, num_data))                                  \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_verify_checksum_iov,                             \
      (krb5_context ctx, krb5_cksumtype cksumtype, krb5_key key, krb5_keyusage usage,         \
       const krb5_crypto_iov *data, size_t num_data, krb5_boolean *valid),                    \
      (ctx, cksumtype, key, usage, data, num_data, valid),                                    \
      verify_checksum_iov, (cksumtype, usage, data, num_data, valid))                         \
    X(KEY, K5CRYPTO, krb5_error_code, krb5_k_prf,                                             \
      (krb5_context ctx, krb5_key key, krb5_data *input, krb5_data *output),                  \
      (ctx, key, input, output),                                                              \
      prf, (input, output))                                                                   \
    /* ---- the deprecated krb5_encrypt_block API ---- */                                     \
    X(DEPRECATED, K5CRYPTO, krb5_error_code, krb5_encrypt,                                    \
      (krb5_context ctx, krb5_const_pointer inptr, krb5_pointer outptr, size_t size,          \
       krb5_encrypt_block *eblock, krb5_pointer ivec),                                        \
      (ctx, inptr, outptr, size, eblock, ivec),                                               \
      eblock != NULL ? eblock->key : NULL)                                                    \
    X(DEPRECATED, K5CRYPTO, krb5_error_code, krb5_decrypt,                                    \
      (krb5_context ctx, krb5_const_pointer inptr, krb5_pointer outptr, size_t size,          \
       krb5_encrypt_block *eblock, krb5_pointer ivec),                                        \
      (ctx, inptr, outptr, size, eblock, ivec),                                               \
      eblock != NULL ? eblock->key : NULL)                                                    \
    X(DEPRECATED, K5CRYPTO, krb5_error_code, krb5_encrypt_data,                               \
      (krb5_context ctx, krb5_keyblock *key, krb5_pointer ivec, krb5_data *data,              \
       krb5_enc_data *enc_data),                                                              \
      (ctx, key, ivec, data, enc_data),                                                       \
      key)                                                                                    \
    X(DEPRECATED, K5CRYPTO, krb5_error_code, krb5_calculate_checksum,                         \
      (krb5_context ctx, krb5_cksumtype ctype, krb5_const_pointer in, size_t in_length,       \
       krb5_const_pointer seed, size_t seed_length, krb5_checksum *outcksum),                 \
      (ctx, ctype, in, in_length, seed, seed_length, outcksum),                               \
      ROUTER_SEED_KEY(seed, seed_length))                                                     \
    X(DEPRECATED, K5CRYPTO, krb5_error_code, krb5_verify_checksum,                            \
      (krb5_context ctx, krb5_cksumtype ctype, const krb5_checksum *cksum,                    \
       krb5_const_pointer in, size_t in_length, krb5_const_pointer seed,                      \
       size_t seed_length),                                                                   \
      (ctx, ctype, cksum, in, in_length, seed, seed_length),                                  \
      ROUTER_SEED_KEY(seed, seed_length))                                                     \
    X(DEPRECATED, K5CRYPTO, krb5_error_code, krb5_init_random_key,                            \
      (krb5_context ctx, const krb5_encrypt_block *eblock, const krb5_keyblock *keyblock,     \
       krb5_pointer *ptr),                                                                    \
      (ctx, eblock, keyblock, ptr),                                                           \
      keyblock)                                                                               \
    /* ---- libk5crypto's exported internal primitives: a backstop ---- */                    \
    X(INTERNAL, K5CRYPTO, krb5_error_code, krb5int_aes_encrypt,                               \
      (krb5_key key, const krb5_data *ivec, krb5_crypto_iov *data, size_t num_data),         \
      (key, ivec, data, num_data),                                                            \
      key)                                                                                    \
    X(INTERNAL, K5CRYPTO, krb5_error_code, krb5int_aes_decrypt,                               \
      (krb5_key key, const krb5_data *ivec, krb5_crypto_iov *data, size_t num_data),         \
      (key, ivec, data, num_data),                                                            \
      key)                                                                                    \
    X(INTERNAL, K5CRYPTO, krb5_error_code, krb5int_camellia_encrypt,                          \
      (krb5_key key, const krb5_data *ivec, krb5_crypto_iov *data, size_t num_data),         \
      (key, ivec, data, num_data),                                                            \
      key)                                                                                    \
    X(INTERNAL, K5CRYPTO, krb5_error_code, krb5int_cmac_checksum,                             \
      (const struct krb5_enc_provider *enc, krb5_key key, const krb5_crypto_iov *data,        \
       size_t num_data, krb5_data *output),                                                   \
      (enc, key, data, num_data, output),                                                     \
      key)                                                                                    \
    X(INTERNAL, K5CRYPTO, krb5_error_code, krb5int_hmac,                                      \
      (const struct krb5_hash_provider *hash, krb5_key key, const krb5_crypto_iov *data,      \
       size_t num_data, krb5_data *output),                                                   \
      (hash, key, data, num_data, output),                                                    \
      key)                                                                                    \
    X(INTERNAL, K5CRYPTO, krb5_error_code, krb5int_derive_key,                                \
      (const struct krb5_enc_provider *enc, const struct krb5_hash_provider *hash,            \
       krb5_key inkey, krb5_key *outkey, const krb5_data *in_constant, int alg),              \
      (enc, hash, inkey, outkey, in_constant, alg),                                           \
      inkey)                                                                                  \
    X(INTERNAL, K5CRYPTO, krb5_error_code, krb5int_derive_random,                             \
      (const struct krb5_enc_provider *enc, const struct krb5_hash_provider *hash,            \
       krb5_key inkey, krb5_data *outrnd, const krb5_data *in_constant, int alg),             \
      (enc, hash, inkey, outrnd, in_constant, alg),                                           \
      inkey)                                                                                  \
    X(INTERNAL_KEYBLOCK, K5CRYPTO, krb5_error_code, krb5int_arcfour_gsscrypt,                 \
      (const krb5_keyblock *keyblock, krb5_keyusage usage, const krb5_data *kd_data,          \
       krb5_crypto_iov *data, size_t num_data),                                               \
      (keyblock, usage, kd_data, data, num_data),                                             \
      keyblock)                                                                               \
    /* ---- keyless: what an enctype or checksum type is ---- */                              \
    X(KEYLESS_BOOL, K5CRYPTO, krb5_boolean, krb5_c_valid_enctype,                             \
      (krb5_enctype ktype), (ktype),                                                          \
      router_is_private_enctype(ktype), FALSE)                                                \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_c_enctype_compare,                             \
      (krb5_context ctx, krb5_enctype e1, krb5_enctype e2, krb5_boolean *similar),            \
      (ctx, e1, e2, similar),                                                                 \
      ctx, router_is_private_enctype(e1) || router_is_private_enctype(e2))                    \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_c_encrypt_length,                              \
      (krb5_context ctx, krb5_enctype enctype, size_t inputlen, size_t *length),              \
      (ctx, enctype, inputlen, length),                                                       \
      ctx, router_is_private_enctype(enctype))                                                \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_c_crypto_length,                               \
      (krb5_context ctx, krb5_enctype enctype, krb5_cryptotype type, unsigned int *size),     \
      (ctx, enctype, type, size),                                                             \
      ctx, router_is_private_enctype(enctype))                                                \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_c_padding_length,                              \
      (krb5_context ctx, krb5_enctype enctype, size_t data_length, unsigned int *size),       \
      (ctx, enctype, data_length, size),                                                      \
      ctx, router_is_private_enctype(enctype))                                                \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_c_block_size,                                  \
      (krb5_context ctx, krb5_enctype enctype, size_t *blocksize),                            \
      (ctx, enctype, blocksize),                                                              \
      ctx, router_is_private_enctype(enctype))                                                \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_c_keylengths,                                  \
      (krb5_context ctx, krb5_enctype enctype, size_t *keybytes, size_t *keylength),          \
      (ctx, enctype, keybytes, keylength),                                                    \
      ctx, router_is_private_enctype(enctype))                                                \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5int_c_mandatory_cksumtype,                      \
      (krb5_context ctx, krb5_enctype etype, krb5_cksumtype *cksumtype),                      \
      (ctx, etype, cksumtype),                                                                \
      ctx, router_is_private_enctype(etype))                                                  \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_c_checksum_length,                             \
      (krb5_context ctx, krb5_cksumtype cksumtype, size_t *length),                           \
      (ctx, cksumtype, length),                                                               \
      ctx, router_is_private_cksumtype(cksumtype))                                            \
    X(KEYLESS_BOOL, K5CRYPTO, krb5_boolean, krb5_c_is_keyed_cksum,                            \
      (krb5_cksumtype ctype), (ctype),                                                        \
      router_is_private_cksumtype(ctype), FALSE)                                              \
    X(KEYLESS_BOOL, K5CRYPTO, krb5_boolean, krb5_c_is_coll_proof_cksum,                       \
      (krb5_cksumtype ctype), (ctype),                                                        \
      router_is_private_cksumtype(ctype), FALSE)                                              \
    X(KEYLESS_BOOL, K5CRYPTO, krb5_boolean, krb5_c_valid_cksumtype,                           \
      (krb5_cksumtype ctype), (ctype),                                                        \
      router_is_private_cksumtype(ctype), FALSE)                                              \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_enctype_to_name,                               \
      (krb5_enctype enctype, krb5_boolean shortest, char *buffer, size_t buflen),             \
      (enctype, shortest, buffer, buflen),                                                    \
      NULL, router_is_private_enctype(enctype))                                               \
    X(KEYLESS, K5CRYPTO, krb5_error_code, krb5_cksumtype_to_string,                           \
      (krb5_cksumtype cksumtype, char *buffer, size_t buflen),                                \
      (cksumtype, buffer, buflen),                                                            \
      NULL, router_is_private_cksumtype(cksumtype))                                           \
    /* libk5crypto calls an enctype it cannot look up deprecated */                           \
    X(KEYLESS_BOOL, K5CRYPTO, krb5_boolean, krb5int_c_deprecated_enctype,                     \
      (krb5_enctype etype), (etype),                                                          \
      router_is_private_enctype(etype), TRUE)                                                 \
    X(KEYLESS_BOOL, K5CRYPTO, krb5_boolean, krb5int_c_weak_enctype,                           \
      (krb5_enctype etype), (etype),                                                          \
      router_is_private_enctype(etype), FALSE)                                                \
    /* libkrb5's: libkrb5 (decrypt_tk.c) and libkdb5 (krb5_dbe_def_search_enctype) call it */ \
    X(KEYLESS_BOOL, KRB5, krb5_boolean, krb5_is_permitted_enctype,                            \
      (krb5_context ctx, krb5_enctype etype), (ctx, etype),                                   \
      router_is_private_enctype(etype), FALSE)

#endif /* MPC_ROUTER_INTERPOSERS_H */
