/* tests/unit/kdc-plugin/router_calls.h - what the parts of router_calls_test share: the
 * libk5crypto and libkrb5 internals it calls, the CHECK counter, the context and the
 * libraries' handles, the helpers, and each part's entry (router_calls_test.c runs them). */
#ifndef ROUTER_CALLS_H
#define ROUTER_CALLS_H

#include <stddef.h>
#include <sys/types.h>

#include <krb5/krb5.h>

struct krb5_enc_provider;
struct krb5_hash_provider;
krb5_error_code krb5_encrypt_data(krb5_context, krb5_keyblock *, krb5_pointer, krb5_data *,
                                  krb5_enc_data *);
krb5_error_code krb5int_aes_encrypt(krb5_key, const krb5_data *, krb5_crypto_iov *, size_t);
krb5_error_code krb5int_aes_decrypt(krb5_key, const krb5_data *, krb5_crypto_iov *, size_t);
krb5_error_code krb5int_camellia_encrypt(krb5_key, const krb5_data *, krb5_crypto_iov *,
                                         size_t);
krb5_error_code krb5int_cmac_checksum(const struct krb5_enc_provider *, krb5_key,
                                      const krb5_crypto_iov *, size_t, krb5_data *);
krb5_error_code krb5int_hmac(const struct krb5_hash_provider *, krb5_key,
                             const krb5_crypto_iov *, size_t, krb5_data *);
krb5_error_code krb5int_derive_key(const struct krb5_enc_provider *,
                                   const struct krb5_hash_provider *, krb5_key, krb5_key *,
                                   const krb5_data *, int);
krb5_error_code krb5int_derive_random(const struct krb5_enc_provider *,
                                      const struct krb5_hash_provider *, krb5_key,
                                      krb5_data *, const krb5_data *, int);
krb5_error_code krb5int_arcfour_gsscrypt(const krb5_keyblock *, krb5_keyusage,
                                         const krb5_data *, krb5_crypto_iov *, size_t);
krb5_error_code krb5int_c_mandatory_cksumtype(krb5_context, krb5_enctype, krb5_cksumtype *);
krb5_boolean krb5int_c_weak_enctype(krb5_enctype);
krb5_boolean krb5int_c_deprecated_enctype(krb5_enctype);
krb5_boolean krb5_is_permitted_enctype(krb5_context, krb5_enctype);
krb5_error_code krb5_decrypt_tkt_part(krb5_context, const krb5_keyblock *, krb5_ticket *);

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        checks++;                                                                         \
        if (!(cond)) {                                                                    \
            failures++;                                                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                          \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
        }                                                                                 \
    } while (0)


/* Pointers to libk5crypto's own entry points (direct()) and predicates. */
typedef krb5_boolean (*etype_pred_fn)(krb5_enctype);
typedef krb5_boolean (*cksum_pred_fn)(krb5_cksumtype);
typedef krb5_error_code (*c_encrypt_fn)(krb5_context, const krb5_keyblock *, krb5_keyusage,
                                        const krb5_data *, const krb5_data *, krb5_enc_data *);
typedef krb5_error_code (*c_decrypt_fn)(krb5_context, const krb5_keyblock *, krb5_keyusage,
                                        const krb5_data *, const krb5_enc_data *, krb5_data *);
typedef krb5_error_code (*c_mk_fn)(krb5_context, krb5_cksumtype, const krb5_keyblock *,
                                   krb5_keyusage, const krb5_data *, krb5_checksum *);
typedef krb5_error_code (*c_prf_fn)(krb5_context, const krb5_keyblock *, krb5_data *,
                                    krb5_data *);
typedef krb5_error_code (*c_prfplus_fn)(krb5_context, const krb5_keyblock *, const krb5_data *,
                                        krb5_data *);
typedef krb5_error_code (*c_cf2_fn)(krb5_context, const krb5_keyblock *, const char *,
                                    const krb5_keyblock *, const char *, krb5_keyblock **);
typedef krb5_error_code (*c_dprf_fn)(krb5_context, const krb5_keyblock *, const krb5_data *,
                                     krb5_enctype, krb5_keyblock **);


extern krb5_context ctx;
extern void *k5crypto;
extern void *k5krb5;
extern int failures;
extern int checks;

/* libk5crypto's own definition of name, bypassing the router. */
void *direct(const char *name);
/* A refused call: KRB5_CRYPTO_INTERNAL and, given a context, a message containing want. */
void expect_refused(const char *what, krb5_error_code ret, const char *want);
/* An error code with the router's message containing want. */
void expect_error(const char *what, krb5_error_code ret, krb5_error_code code, const char *want);
void write_file(const char *path, const void *data, size_t len, mode_t mode);
int data_eq(const krb5_data *a, const krb5_data *b);
int all_zero(const void *p, size_t n);

/* The parts: each calls the router's entry points with one kind of key. */
void real_key(const krb5_keyblock *kb);
void one_handle(const krb5_keyblock *hk, const char *want);
void keyless(void);
void user_handle(const krb5_keyblock *uk, const krb5_keyblock *clear);
void private_handle(const krb5_keyblock *gk);

#endif
