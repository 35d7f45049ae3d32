/* tests/unit/kdc-plugin/router_calls_keyless.c - every keyless entry point with real and
 * private types, against libk5crypto's (libkrb5's) answers. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <krb5/krb5.h>

#include "handle.h"
#include "protected_key.h"

#include "router_calls.h"

/* Every keyless entry point: libk5crypto's answer for real types (known and unknown),
 * the private format's for the private types. */
void
keyless(void)
{
    static const krb5_enctype etypes[] = {
        ENCTYPE_AES256_CTS_HMAC_SHA1_96, ENCTYPE_AES128_CTS_HMAC_SHA1_96,
        ENCTYPE_AES256_CTS_HMAC_SHA384_192, ENCTYPE_CAMELLIA256_CTS_CMAC,
        ENCTYPE_ARCFOUR_HMAC, ENCTYPE_DES3_CBC_SHA1, ENCTYPE_DES_CBC_CRC, ENCTYPE_NULL, 9999,
        -1, MPC_KDC_ENCTYPE_AES256_GCM + 1, MPC_KDC_ENCTYPE_AES256_GCM - 1
    };
    static const krb5_cksumtype ctypes[] = {
        CKSUMTYPE_HMAC_SHA1_96_AES256, CKSUMTYPE_HMAC_SHA384_192_AES256, CKSUMTYPE_CRC32,
        CKSUMTYPE_SHA1, CKSUMTYPE_RSA_MD5, CKSUMTYPE_HMAC_MD5_ARCFOUR, CKSUMTYPE_CMAC_CAMELLIA128,
        0, 9999, -1, MPC_KDC_CKSUMTYPE_GMAC + 1
    };
    static const krb5_cryptotype cryptotypes[] = {
        KRB5_CRYPTO_TYPE_EMPTY, KRB5_CRYPTO_TYPE_HEADER, KRB5_CRYPTO_TYPE_DATA,
        KRB5_CRYPTO_TYPE_SIGN_ONLY, KRB5_CRYPTO_TYPE_PADDING, KRB5_CRYPTO_TYPE_TRAILER,
        KRB5_CRYPTO_TYPE_CHECKSUM, 99
    };
    const krb5_enctype g = MPC_KDC_ENCTYPE_AES256_GCM;
    const krb5_cksumtype c = MPC_KDC_CKSUMTYPE_GMAC;
    krb5_error_code (*d_compare)(krb5_context, krb5_enctype, krb5_enctype, krb5_boolean *) =
        direct("krb5_c_enctype_compare");
    krb5_error_code (*d_enclen)(krb5_context, krb5_enctype, size_t, size_t *) =
        direct("krb5_c_encrypt_length");
    krb5_error_code (*d_cryptolen)(krb5_context, krb5_enctype, krb5_cryptotype,
                                   unsigned int *) = direct("krb5_c_crypto_length");
    krb5_error_code (*d_padlen)(krb5_context, krb5_enctype, size_t, unsigned int *) =
        direct("krb5_c_padding_length");
    krb5_error_code (*d_block)(krb5_context, krb5_enctype, size_t *) =
        direct("krb5_c_block_size");
    krb5_error_code (*d_keylen)(krb5_context, krb5_enctype, size_t *, size_t *) =
        direct("krb5_c_keylengths");
    krb5_error_code (*d_mandatory)(krb5_context, krb5_enctype, krb5_cksumtype *) =
        direct("krb5int_c_mandatory_cksumtype");
    krb5_error_code (*d_cklen)(krb5_context, krb5_cksumtype, size_t *) =
        direct("krb5_c_checksum_length");
    krb5_error_code (*d_ename)(krb5_enctype, krb5_boolean, char *, size_t) =
        direct("krb5_enctype_to_name");
    krb5_error_code (*d_cname)(krb5_cksumtype, char *, size_t) =
        direct("krb5_cksumtype_to_string");
    etype_pred_fn d_valid = direct("krb5_c_valid_enctype");
    etype_pred_fn d_deprecated = direct("krb5int_c_deprecated_enctype");
    etype_pred_fn d_weak = direct("krb5int_c_weak_enctype");
    cksum_pred_fn d_keyed = direct("krb5_c_is_keyed_cksum");
    cksum_pred_fn d_coll = direct("krb5_c_is_coll_proof_cksum");
    cksum_pred_fn d_cvalid = direct("krb5_c_valid_cksumtype");
    krb5_boolean (*d_permitted)(krb5_context, krb5_enctype) =
        dlvsym(k5krb5, "krb5_is_permitted_enctype", "krb5_3_MIT");
    size_t i, j, a1, a2, b1, b2;
    unsigned int u1, u2;
    krb5_boolean s1, s2;
    krb5_cksumtype k1, k2;
    krb5_error_code r1, r2;
    char n1[64], n2[64];

    CHECK(d_permitted != NULL, "libkrb5 has no krb5_is_permitted_enctype@krb5_3_MIT");
    for (i = 0; i < sizeof(etypes) / sizeof(etypes[0]); i++) {
        krb5_enctype e = etypes[i];

        CHECK(krb5_c_valid_enctype(e) == d_valid(e), "valid_enctype(%d)", (int)e);
        CHECK(krb5int_c_deprecated_enctype(e) == d_deprecated(e), "deprecated(%d)", (int)e);
        CHECK(krb5int_c_weak_enctype(e) == d_weak(e), "weak(%d)", (int)e);
        if (d_permitted != NULL)
            CHECK(krb5_is_permitted_enctype(ctx, e) == d_permitted(ctx, e), "permitted(%d)",
                  (int)e);
        for (j = 0; j < sizeof(etypes) / sizeof(etypes[0]); j++) {
            s1 = s2 = 2;
            r1 = krb5_c_enctype_compare(ctx, e, etypes[j], &s1);
            r2 = d_compare(ctx, e, etypes[j], &s2);
            CHECK(r1 == r2 && (r1 != 0 || s1 == s2), "enctype_compare(%d, %d)", (int)e,
                  (int)etypes[j]);
        }
        a1 = a2 = 7;
        r1 = krb5_c_encrypt_length(ctx, e, 100, &a1);
        r2 = d_enclen(ctx, e, 100, &a2);
        CHECK(r1 == r2 && a1 == a2, "encrypt_length(%d)", (int)e);
        for (j = 0; j < sizeof(cryptotypes) / sizeof(cryptotypes[0]); j++) {
            u1 = u2 = 7;
            r1 = krb5_c_crypto_length(ctx, e, cryptotypes[j], &u1);
            r2 = d_cryptolen(ctx, e, cryptotypes[j], &u2);
            CHECK(r1 == r2 && u1 == u2, "crypto_length(%d, %d)", (int)e, (int)cryptotypes[j]);
        }
        u1 = u2 = 7;
        r1 = krb5_c_padding_length(ctx, e, 17, &u1);
        r2 = d_padlen(ctx, e, 17, &u2);
        CHECK(r1 == r2 && u1 == u2, "padding_length(%d)", (int)e);
        a1 = a2 = 7;
        r1 = krb5_c_block_size(ctx, e, &a1);
        r2 = d_block(ctx, e, &a2);
        CHECK(r1 == r2 && a1 == a2, "block_size(%d)", (int)e);
        a1 = a2 = b1 = b2 = 7;
        r1 = krb5_c_keylengths(ctx, e, &a1, &b1);
        r2 = d_keylen(ctx, e, &a2, &b2);
        CHECK(r1 == r2 && a1 == a2 && b1 == b2, "keylengths(%d)", (int)e);
        k1 = k2 = 7;
        r1 = krb5int_c_mandatory_cksumtype(ctx, e, &k1);
        r2 = d_mandatory(ctx, e, &k2);
        CHECK(r1 == r2 && k1 == k2, "mandatory_cksumtype(%d)", (int)e);
        memset(n1, 0, sizeof(n1));
        memset(n2, 0, sizeof(n2));
        r1 = krb5_enctype_to_name(e, FALSE, n1, sizeof(n1));
        r2 = d_ename(e, FALSE, n2, sizeof(n2));
        CHECK(r1 == r2 && strcmp(n1, n2) == 0, "enctype_to_name(%d)", (int)e);
        r1 = krb5_enctype_to_name(e, TRUE, n1, 3);
        r2 = d_ename(e, TRUE, n2, 3);
        CHECK(r1 == r2, "enctype_to_name(%d) into 3 bytes", (int)e);
    }
    for (i = 0; i < sizeof(ctypes) / sizeof(ctypes[0]); i++) {
        krb5_cksumtype t = ctypes[i];

        CHECK(krb5_c_is_keyed_cksum(t) == d_keyed(t), "is_keyed(%d)", (int)t);
        CHECK(krb5_c_is_coll_proof_cksum(t) == d_coll(t), "coll_proof(%d)", (int)t);
        CHECK(krb5_c_valid_cksumtype(t) == d_cvalid(t), "valid_cksumtype(%d)", (int)t);
        a1 = a2 = 7;
        r1 = krb5_c_checksum_length(ctx, t, &a1);
        r2 = d_cklen(ctx, t, &a2);
        CHECK(r1 == r2 && a1 == a2, "checksum_length(%d)", (int)t);
        memset(n1, 0, sizeof(n1));
        memset(n2, 0, sizeof(n2));
        r1 = krb5_cksumtype_to_string(t, n1, sizeof(n1));
        r2 = d_cname(t, n2, sizeof(n2));
        CHECK(r1 == r2 && strcmp(n1, n2) == 0, "cksumtype_to_string(%d)", (int)t);
    }

    /* The private types: known, permitted, neither weak nor deprecated, and the format
     * of kdc-plugin/kdb/protected_key.h. libk5crypto itself knows neither. */
    CHECK(!d_valid(g) && !d_cvalid(c), "libk5crypto knows the private types?");
    CHECK(krb5_c_valid_enctype(g), "valid_enctype(private)");
    CHECK(krb5_is_permitted_enctype(ctx, g), "permitted(private)");
    CHECK(!krb5int_c_deprecated_enctype(g) && !krb5int_c_weak_enctype(g),
          "private enctype deprecated or weak");
    CHECK(krb5_c_enctype_compare(ctx, g, g, &s1) == 0 && s1, "compare(private, private)");
    CHECK(krb5_c_enctype_compare(ctx, g, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &s1) == 0 && !s1 &&
          krb5_c_enctype_compare(ctx, ENCTYPE_AES256_CTS_HMAC_SHA1_96, g, &s1) == 0 && !s1,
          "compare(private, aes256)");
    CHECK(krb5_c_enctype_compare(ctx, g, 9999, &s1) == KRB5_BAD_ENCTYPE,
          "compare(private, unknown)");
    CHECK(krb5_c_encrypt_length(ctx, g, 0, &a1) == 0 && a1 == 28 &&
          krb5_c_encrypt_length(ctx, g, 1000, &a1) == 0 && a1 == 1028, "encrypt_length(private)");
    CHECK(krb5_c_crypto_length(ctx, g, KRB5_CRYPTO_TYPE_HEADER, &u1) == 0 && u1 == 12 &&
          krb5_c_crypto_length(ctx, g, KRB5_CRYPTO_TYPE_TRAILER, &u1) == 0 && u1 == 16 &&
          krb5_c_crypto_length(ctx, g, KRB5_CRYPTO_TYPE_PADDING, &u1) == 0 && u1 == 0 &&
          krb5_c_crypto_length(ctx, g, KRB5_CRYPTO_TYPE_CHECKSUM, &u1) == 0 && u1 == 28 &&
          krb5_c_crypto_length(ctx, g, KRB5_CRYPTO_TYPE_SIGN_ONLY, &u1) == 0 && u1 == 0 &&
          krb5_c_crypto_length(ctx, g, KRB5_CRYPTO_TYPE_DATA, &u1) == 0 && u1 == ~0u &&
          krb5_c_crypto_length(ctx, g, 99, &u1) == EINVAL, "crypto_length(private)");
    CHECK(krb5_c_padding_length(ctx, g, 17, &u1) == 0 && u1 == 0, "padding_length(private)");
    CHECK(krb5_c_block_size(ctx, g, &a1) == 0 && a1 == 1, "block_size(private)");
    CHECK(krb5_c_keylengths(ctx, g, &a1, &b1) == 0 && a1 == 32 && b1 == 32 &&
          krb5_c_keylengths(ctx, g, NULL, NULL) == EINVAL, "keylengths(private)");
    CHECK(krb5int_c_mandatory_cksumtype(ctx, g, &k1) == 0 && k1 == c, "mandatory(private)");
    CHECK(krb5_c_checksum_length(ctx, c, &a1) == 0 && a1 == 28, "checksum_length(private)");
    CHECK(krb5_c_is_keyed_cksum(c) && krb5_c_is_coll_proof_cksum(c) && krb5_c_valid_cksumtype(c),
          "private checksum type predicates");
    CHECK(krb5_enctype_to_name(g, FALSE, n1, sizeof(n1)) == 0 &&
          strcmp(n1, MPC_KDC_ENCTYPE_NAME) == 0 &&
          krb5_enctype_to_name(g, TRUE, n1, sizeof(n1)) == 0 &&
          strcmp(n1, MPC_KDC_ENCTYPE_NAME) == 0 &&
          krb5_enctype_to_name(g, FALSE, n1, strlen(MPC_KDC_ENCTYPE_NAME)) == ENOMEM,
          "enctype_to_name(private)");
    CHECK(krb5_cksumtype_to_string(c, n1, sizeof(n1)) == 0 &&
          strcmp(n1, MPC_KDC_CKSUMTYPE_NAME) == 0 &&
          krb5_cksumtype_to_string(c, n1, 4) == ENOMEM, "cksumtype_to_string(private)");
}
