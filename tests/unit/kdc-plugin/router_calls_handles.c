/* tests/unit/kdc-plugin/router_calls_handles.c - a real key against libk5crypto's own
 * definitions, handles of an enctype the engine does not serve or forged (refused), and the
 * protected krbtgt key's handle of the private enctype with no reachable engine. */

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

/* Real key: the router's answer equals libk5crypto's own. */
void
real_key(const krb5_keyblock *kb)
{
    krb5_data in = { 0, 5, "hello" }, pin = { 0, 3, "prf" }, out = { 0, 0, NULL };
    krb5_data a = { 0, 0, NULL }, b = { 0, 0, NULL };
    char abuf[64], bbuf[64];
    krb5_enc_data enc;
    krb5_checksum c1, c2;
    krb5_keyblock *k1 = NULL, *k2 = NULL;
    krb5_key key = NULL;
    krb5_boolean valid = FALSE;
    size_t len = 0;

    memset(&enc, 0, sizeof(enc));
    CHECK(krb5_c_encrypt_length(ctx, kb->enctype, in.length, &len) == 0, "encrypt_length");
    enc.ciphertext.data = malloc(len);
    enc.ciphertext.length = (unsigned int)len;
    /* Router encrypts, libk5crypto decrypts directly, and the other way. */
    CHECK(krb5_c_encrypt(ctx, kb, 2, NULL, &in, &enc) == 0, "router encrypt");
    out.data = malloc(len);
    out.length = (unsigned int)len;
    CHECK(((c_decrypt_fn)direct("krb5_c_decrypt"))(ctx, kb, 2, NULL, &enc, &out) == 0 &&
          data_eq(&out, &in), "direct decrypt of router ciphertext");
    CHECK(((c_encrypt_fn)direct("krb5_c_encrypt"))(ctx, kb, 3, NULL, &in, &enc) == 0,
          "direct encrypt");
    out.length = (unsigned int)len;
    CHECK(krb5_c_decrypt(ctx, kb, 3, NULL, &enc, &out) == 0 && data_eq(&out, &in),
          "router decrypt of direct ciphertext");
    CHECK(krb5_c_decrypt(ctx, kb, 4, NULL, &enc, &out) == KRB5KRB_AP_ERR_BAD_INTEGRITY,
          "wrong usage must fail integrity through the router too");
    CHECK(krb5_k_create_key(ctx, kb, &key) == 0, "create_key");
    out.length = (unsigned int)len;
    CHECK(krb5_k_decrypt(ctx, key, 3, NULL, &enc, &out) == 0 && data_eq(&out, &in),
          "k_decrypt");

    CHECK(krb5_c_make_checksum(ctx, 0, kb, 17, &in, &c1) == 0, "router checksum");
    CHECK(((c_mk_fn)direct("krb5_c_make_checksum"))(ctx, 0, kb, 17, &in, &c2) == 0 &&
          c1.length == c2.length && memcmp(c1.contents, c2.contents, c1.length) == 0,
          "checksum equals libk5crypto's");
    CHECK(krb5_c_verify_checksum(ctx, kb, 17, &in, &c2, &valid) == 0 && valid, "verify");
    CHECK(krb5_k_verify_checksum(ctx, key, 17, &in, &c2, &valid) == 0 && valid, "k_verify");
    c2.contents[0] ^= 1;
    CHECK(krb5_c_verify_checksum(ctx, kb, 17, &in, &c2, &valid) == 0 && !valid,
          "tampered checksum rejected");
    krb5_free_checksum_contents(ctx, &c1);
    krb5_free_checksum_contents(ctx, &c2);

    a.data = abuf; a.length = 16; b.data = bbuf; b.length = 16;
    CHECK(krb5_c_prf(ctx, kb, &pin, &a) == 0 &&
          ((c_prf_fn)direct("krb5_c_prf"))(ctx, kb, &pin, &b) == 0 && data_eq(&a, &b),
          "prf equals libk5crypto's");
    CHECK(krb5_k_prf(ctx, key, &pin, &a) == 0 && data_eq(&a, &b), "k_prf");
    a.length = b.length = 40;
    CHECK(krb5_c_prfplus(ctx, kb, &pin, &a) == 0 &&
          ((c_prfplus_fn)direct("krb5_c_prfplus"))(ctx, kb, &pin, &b) == 0 && data_eq(&a, &b),
          "prfplus equals libk5crypto's");
    CHECK(krb5_c_fx_cf2_simple(ctx, kb, "a", kb, "b", &k1) == 0 &&
          ((c_cf2_fn)direct("krb5_c_fx_cf2_simple"))(ctx, kb, "a", kb, "b", &k2) == 0 &&
          k1->length == k2->length && memcmp(k1->contents, k2->contents, k1->length) == 0,
          "cf2 equals libk5crypto's");
    krb5_free_keyblock(ctx, k1);
    krb5_free_keyblock(ctx, k2);
    k1 = k2 = NULL;
    CHECK(krb5_c_derive_prfplus(ctx, kb, &pin, 0, &k1) == 0 &&
          ((c_dprf_fn)direct("krb5_c_derive_prfplus"))(ctx, kb, &pin, 0, &k2) == 0 &&
          k1->length == k2->length && memcmp(k1->contents, k2->contents, k1->length) == 0,
          "derive_prfplus equals libk5crypto's");
    krb5_free_keyblock(ctx, k1);
    krb5_free_keyblock(ctx, k2);
    krb5_k_free_key(ctx, key);
    free(enc.ciphertext.data);
    free(out.data);
}

void
one_handle(const krb5_keyblock *hk, const char *want)
{
    krb5_data in = { 0, 5, "hello" }, out = { 0, 0, NULL }, st = { 0, 0, NULL };
    krb5_data prfout = { 0, 0, NULL }, prfin = { 0, 3, "prf" };
    krb5_enc_data enc;
    krb5_checksum ck;
    krb5_boolean valid = TRUE;
    krb5_keyblock *outkb = (krb5_keyblock *)1, real;
    krb5_key hkey = NULL, outkey = NULL;
    krb5_crypto_iov iov[2];
    char buf[64] = "", ivbuf[16] = "";
    krb5_encrypt_block eb;
    krb5_error_code ret;

    memset(&enc, 0, sizeof(enc));
    memset(&ck, 0, sizeof(ck));
    memset(iov, 0, sizeof(iov));
    iov[0].flags = KRB5_CRYPTO_TYPE_DATA;
    iov[0].data.data = buf;
    iov[0].data.length = 16;
    enc.enctype = hk->enctype;
    enc.ciphertext.data = buf;
    enc.ciphertext.length = 60;

    expect_refused("krb5_c_encrypt", krb5_c_encrypt(ctx, hk, 2, NULL, &in, &enc), want);
    expect_refused("krb5_c_decrypt", krb5_c_decrypt(ctx, hk, 2, NULL, &enc, &out), want);
    expect_refused("krb5_c_encrypt_iov", krb5_c_encrypt_iov(ctx, hk, 2, NULL, iov, 1), want);
    expect_refused("krb5_c_decrypt_iov", krb5_c_decrypt_iov(ctx, hk, 2, NULL, iov, 1), want);
    expect_refused("krb5_c_make_checksum", krb5_c_make_checksum(ctx, 0, hk, 17, &in, &ck),
                   want);
    CHECK(ck.contents == NULL && ck.length == 0, "make_checksum output not cleared");
    ck.checksum_type = CKSUMTYPE_HMAC_SHA1_96_AES256;
    ck.length = 12;
    ck.contents = (krb5_octet *)buf;
    expect_refused("krb5_c_verify_checksum",
                   krb5_c_verify_checksum(ctx, hk, 17, &in, &ck, &valid), want);
    CHECK(valid == FALSE, "verify_checksum left valid set");
    expect_refused("krb5_c_make_checksum_iov",
                   krb5_c_make_checksum_iov(ctx, 0, hk, 17, iov, 1), want);
    valid = TRUE;
    expect_refused("krb5_c_verify_checksum_iov",
                   krb5_c_verify_checksum_iov(ctx, 0, hk, 17, iov, 1, &valid), want);
    CHECK(valid == FALSE, "verify_checksum_iov left valid set");
    prfout.data = buf;
    prfout.length = 16;
    expect_refused("krb5_c_prf", krb5_c_prf(ctx, hk, &prfin, &prfout), want);
    expect_refused("krb5_c_prfplus", krb5_c_prfplus(ctx, hk, &prfin, &prfout), want);
    expect_refused("krb5_c_derive_prfplus",
                   krb5_c_derive_prfplus(ctx, hk, &prfin, ENCTYPE_AES256_CTS_HMAC_SHA1_96,
                                         &outkb), want);
    CHECK(outkb == NULL, "derive_prfplus output not cleared");
    outkb = (krb5_keyblock *)1;
    expect_refused("krb5_c_fx_cf2_simple",
                   krb5_c_fx_cf2_simple(ctx, hk, "a", hk, "b", &outkb), want);
    CHECK(outkb == NULL, "cf2 output not cleared");
    expect_refused("krb5_c_init_state", krb5_c_init_state(ctx, hk, 2, &st), want);
    CHECK(krb5_c_free_state(ctx, hk, &st) == 0, "free_state with a handle failed");

    /* A krb5_key may hold a handle; every krb5_k_* computation refuses it. */
    CHECK(krb5_k_create_key(ctx, hk, &hkey) == 0, "krb5_k_create_key with a handle failed");
    expect_refused("krb5_k_encrypt", krb5_k_encrypt(ctx, hkey, 2, NULL, &in, &enc), want);
    expect_refused("krb5_k_decrypt", krb5_k_decrypt(ctx, hkey, 2, NULL, &enc, &out), want);
    expect_refused("krb5_k_encrypt_iov", krb5_k_encrypt_iov(ctx, hkey, 2, NULL, iov, 1), want);
    expect_refused("krb5_k_decrypt_iov", krb5_k_decrypt_iov(ctx, hkey, 2, NULL, iov, 1), want);
    memset(&ck, 0, sizeof(ck));
    expect_refused("krb5_k_make_checksum", krb5_k_make_checksum(ctx, 0, hkey, 17, &in, &ck),
                   want);
    ck.checksum_type = CKSUMTYPE_HMAC_SHA1_96_AES256;
    ck.length = 12;
    ck.contents = (krb5_octet *)buf;
    valid = TRUE;
    expect_refused("krb5_k_verify_checksum",
                   krb5_k_verify_checksum(ctx, hkey, 17, &in, &ck, &valid), want);
    CHECK(valid == FALSE, "k_verify_checksum left valid set");
    expect_refused("krb5_k_make_checksum_iov",
                   krb5_k_make_checksum_iov(ctx, 0, hkey, 17, iov, 1), want);
    expect_refused("krb5_k_verify_checksum_iov",
                   krb5_k_verify_checksum_iov(ctx, 0, hkey, 17, iov, 1, &valid), want);
    expect_refused("krb5_k_prf", krb5_k_prf(ctx, hkey, &prfin, &prfout), want);

    /* Deprecated API: handles are refused whatever their tag. */
    memset(&eb, 0, sizeof(eb));
    eb.key = (krb5_keyblock *)hk;
    expect_refused("krb5_encrypt", krb5_encrypt(ctx, buf, buf, 16, &eb, NULL), "deprecated");
    expect_refused("krb5_decrypt", krb5_decrypt(ctx, buf, buf, 16, &eb, NULL), "deprecated");
    expect_refused("krb5_encrypt_data",
                   krb5_encrypt_data(ctx, (krb5_keyblock *)hk, NULL, &in, &enc), "deprecated");
    expect_refused("krb5_init_random_key", krb5_init_random_key(ctx, &eb, hk, NULL),
                   "deprecated");
    memset(&ck, 0, sizeof(ck));
    expect_refused("krb5_calculate_checksum",
                   krb5_calculate_checksum(ctx, CKSUMTYPE_HMAC_SHA1_96_AES256, "x", 1,
                                           hk->contents, hk->length, &ck), "deprecated");
    expect_refused("krb5_verify_checksum",
                   krb5_verify_checksum(ctx, CKSUMTYPE_HMAC_SHA1_96_AES256, &ck, "x", 1,
                                        hk->contents, hk->length), "deprecated");

    /* libk5crypto's internal primitives (no context, so no message). */
    expect_refused("krb5int_aes_encrypt", krb5int_aes_encrypt(hkey, NULL, iov, 1), NULL);
    expect_refused("krb5int_aes_decrypt", krb5int_aes_decrypt(hkey, NULL, iov, 1), NULL);
    expect_refused("krb5int_camellia_encrypt", krb5int_camellia_encrypt(hkey, NULL, iov, 1),
                   NULL);
    expect_refused("krb5int_cmac_checksum",
                   krb5int_cmac_checksum(direct("krb5int_enc_camellia128"), hkey, iov, 1,
                                         &prfout), NULL);
    expect_refused("krb5int_hmac", krb5int_hmac(direct("krb5int_hash_sha256"), hkey, iov, 1,
                                                &prfout), NULL);
    expect_refused("krb5int_derive_key",
                   krb5int_derive_key(direct("krb5int_enc_aes256"), NULL, hkey, &outkey,
                                      &prfin, 0), NULL);
    expect_refused("krb5int_derive_random",
                   krb5int_derive_random(direct("krb5int_enc_aes256"), NULL, hkey, &prfout,
                                         &prfin, 0), NULL);
    memset(&real, 0, sizeof(real));
    real = *hk;
    real.enctype = ENCTYPE_ARCFOUR_HMAC;
    {
        krb5_data kd = { 0, 4, ivbuf };
        expect_refused("krb5int_arcfour_gsscrypt",
                       krb5int_arcfour_gsscrypt(&real, 13, &kd, iov, 1), NULL);
    }
    krb5_k_free_key(ctx, hkey);
    (void)ret;
}

/* A valid handle of the private enctype with no reachable engine. */
void
private_handle(const krb5_keyblock *gk)
{
    krb5_data in = { 0, 5, "hello" }, out = { 0, 0, NULL }, st = { 0, 1, "x" };
    krb5_data prfin = { 0, 3, "prf" }, prfout = { 0, 0, NULL };
    char buf[128], small[8], big[128];
    krb5_enc_data enc;
    krb5_checksum ck;
    krb5_boolean valid = TRUE;
    krb5_keyblock *outkb = (krb5_keyblock *)1;
    krb5_key gkey = NULL;
    krb5_crypto_iov iov[2];
    krb5_ticket tkt;
    size_t len = 0;
    const char *unreachable = "engine unreachable";

    memset(buf, 0, sizeof(buf));
    memset(&enc, 0, sizeof(enc));
    memset(&ck, 0, sizeof(ck));
    memset(iov, 0, sizeof(iov));

    /* encrypt: the caller's buffer, sized by krb5_c_encrypt_length. */
    CHECK(krb5_c_encrypt_length(ctx, MPC_KDC_ENCTYPE_AES256_GCM, in.length, &len) == 0 &&
          len == in.length + MPC_KDC_ENCRYPT_OVERHEAD, "encrypt_length of the private enctype");
    enc.ciphertext.data = small;
    enc.ciphertext.length = sizeof(small);
    expect_error("encrypt into a short buffer", krb5_c_encrypt(ctx, gk, 2, NULL, &in, &enc),
                 KRB5_BAD_MSIZE, "krb5_c_encrypt_length");
    enc.ciphertext.data = big;
    enc.ciphertext.length = (unsigned int)len;
    expect_error("encrypt with a cipher state", krb5_c_encrypt(ctx, gk, 2, &st, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, "cipher state");
    memset(big, 0x5a, sizeof(big));
    expect_error("encrypt without engine", krb5_c_encrypt(ctx, gk, 2, NULL, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(enc.ciphertext.length == len, "failed encrypt changed the output length");

    /* decrypt: format checks first. */
    memset(buf, 0x11, sizeof(buf));
    enc.enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    enc.ciphertext.data = buf;
    enc.ciphertext.length = MPC_KDC_ENCRYPT_OVERHEAD - 1;
    out.data = big;
    out.length = sizeof(big);
    expect_error("decrypt of a truncated ciphertext",
                 krb5_c_decrypt(ctx, gk, 2, NULL, &enc, &out), KRB5_BAD_MSIZE, "shorter");
    enc.ciphertext.length = MPC_KDC_ENCRYPT_OVERHEAD + 20;
    out.length = 19;
    expect_error("decrypt into a short buffer", krb5_c_decrypt(ctx, gk, 2, NULL, &enc, &out),
                 KRB5_BAD_MSIZE, "output buffer");
    out.length = sizeof(big);
    enc.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    expect_error("decrypt of another enctype", krb5_c_decrypt(ctx, gk, 2, NULL, &enc, &out),
                 KRB5_BAD_ENCTYPE, "enctype");
    enc.enctype = ENCTYPE_UNKNOWN;
    memset(big, 0x5a, sizeof(big));
    expect_error("decrypt without engine", krb5_c_decrypt(ctx, gk, 2, NULL, &enc, &out),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(big[0] == 0 && big[19] == 0 && out.length == sizeof(big),
          "failed decrypt must leave zeros, not plaintext, and keep the length");
    /* The same through libkrb5: decrypt_tk.c checks krb5_c_valid_enctype and
     * krb5_is_permitted_enctype (both answered by the router) before krb5_c_decrypt. */
    memset(&tkt, 0, sizeof(tkt));
    tkt.enc_part.enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    tkt.enc_part.ciphertext.data = buf;
    tkt.enc_part.ciphertext.length = MPC_KDC_ENCRYPT_OVERHEAD + 20;
    expect_error("krb5_decrypt_tkt_part", krb5_decrypt_tkt_part(ctx, gk, &tkt),
                 KRB5_CRYPTO_INTERNAL, unreachable);

    /* checksums */
    expect_error("make_checksum of another type",
                 krb5_c_make_checksum(ctx, CKSUMTYPE_HMAC_SHA1_96_AES256, gk, 17, &in, &ck),
                 KRB5_BAD_ENCTYPE, "checksum type");
    CHECK(ck.contents == NULL && ck.length == 0, "make_checksum output not cleared");
    expect_error("make_checksum without engine", krb5_c_make_checksum(ctx, 0, gk, 17, &in, &ck),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(ck.contents == NULL && ck.length == 0, "make_checksum output not cleared");
    ck.checksum_type = MPC_KDC_CKSUMTYPE_GMAC;
    ck.contents = (krb5_octet *)buf;
    ck.length = MPC_KDC_CHECKSUM_LEN - 1;
    valid = TRUE;
    expect_error("verify of a short checksum",
                 krb5_c_verify_checksum(ctx, gk, 17, &in, &ck, &valid), KRB5_BAD_MSIZE,
                 "bytes");
    CHECK(valid == FALSE, "verify_checksum left valid set");
    ck.checksum_type = CKSUMTYPE_HMAC_SHA1_96_AES256;
    ck.length = 12;
    expect_error("verify of another type",
                 krb5_c_verify_checksum(ctx, gk, 17, &in, &ck, &valid), KRB5_BAD_ENCTYPE,
                 "checksum type");
    ck.checksum_type = CKSUMTYPE_SHA1;
    ck.length = 20;
    expect_error("verify of an unkeyed type",
                 krb5_c_verify_checksum(ctx, gk, 17, &in, &ck, &valid), KRB5_BAD_ENCTYPE,
                 "checksum type");
    ck.checksum_type = MPC_KDC_CKSUMTYPE_GMAC;
    ck.length = MPC_KDC_CHECKSUM_LEN;
    expect_error("verify without engine", krb5_c_verify_checksum(ctx, gk, 17, &in, &ck, &valid),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(valid == FALSE, "verify_checksum left valid set");
    iov[0].flags = KRB5_CRYPTO_TYPE_DATA;
    iov[0].data = in;
    iov[1].flags = KRB5_CRYPTO_TYPE_CHECKSUM;
    iov[1].data.data = buf;
    iov[1].data.length = MPC_KDC_CHECKSUM_LEN - 1;
    expect_error("make_checksum_iov into a short buffer",
                 krb5_c_make_checksum_iov(ctx, 0, gk, 17, iov, 2), KRB5_BAD_MSIZE, "CHECKSUM");
    iov[1].data.length = MPC_KDC_CHECKSUM_LEN + 4;
    expect_error("make_checksum_iov without engine",
                 krb5_c_make_checksum_iov(ctx, MPC_KDC_CKSUMTYPE_GMAC, gk, 17, iov, 2),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    expect_error("verify_checksum_iov of a wrong length",
                 krb5_c_verify_checksum_iov(ctx, 0, gk, 17, iov, 2, &valid), KRB5_BAD_MSIZE,
                 "CHECKSUM");
    iov[1].data.length = MPC_KDC_CHECKSUM_LEN;
    expect_error("verify_checksum_iov of another type",
                 krb5_c_verify_checksum_iov(ctx, CKSUMTYPE_HMAC_SHA256_128_AES128, gk, 17,
                                            iov, 2, &valid), KRB5_BAD_ENCTYPE, "checksum type");
    expect_error("verify_checksum_iov without engine",
                 krb5_c_verify_checksum_iov(ctx, 0, gk, 17, iov, 2, &valid),
                 KRB5_CRYPTO_INTERNAL, unreachable);

    /* Never served with the krbtgt key: refused, saying why. */
    iov[0].flags = KRB5_CRYPTO_TYPE_DATA;
    expect_error("encrypt_iov", krb5_c_encrypt_iov(ctx, gk, 2, NULL, iov, 1),
                 KRB5_CRYPTO_INTERNAL, "never encrypts a ticket with iovs");
    expect_error("decrypt_iov", krb5_c_decrypt_iov(ctx, gk, 2, NULL, iov, 1),
                 KRB5_CRYPTO_INTERNAL, "never decrypts a ticket with iovs");
    prfout.data = buf;
    prfout.length = 16;
    expect_error("prf", krb5_c_prf(ctx, gk, &prfin, &prfout), KRB5_CRYPTO_INTERNAL,
                 "never computes a PRF");
    expect_error("prfplus", krb5_c_prfplus(ctx, gk, &prfin, &prfout), KRB5_CRYPTO_INTERNAL,
                 "never computes a PRF+");
    expect_error("derive_prfplus",
                 krb5_c_derive_prfplus(ctx, gk, &prfin, ENCTYPE_NULL, &outkb),
                 KRB5_CRYPTO_INTERNAL, "SPAKE");
    CHECK(outkb == NULL, "derive_prfplus output not cleared");
    outkb = (krb5_keyblock *)1;
    expect_error("cf2", krb5_c_fx_cf2_simple(ctx, gk, "a", gk, "b", &outkb),
                 KRB5_CRYPTO_INTERNAL, "cf2");
    CHECK(outkb == NULL, "cf2 output not cleared");

    /* An empty cipher state, freed by krb5_c_free_state. */
    st.data = (char *)1;
    st.length = 7;
    CHECK(krb5_c_init_state(ctx, gk, 2, &st) == 0 && st.length == 0 && st.data == NULL,
          "init_state with the private enctype");
    CHECK(krb5_c_free_state(ctx, gk, &st) == 0, "free_state with the private enctype");

    /* krb5_key API: the same routes. */
    CHECK(krb5_k_create_key(ctx, gk, &gkey) == 0, "krb5_k_create_key");
    enc.ciphertext.data = big;
    enc.ciphertext.length = (unsigned int)len;
    expect_error("k_encrypt without engine", krb5_k_encrypt(ctx, gkey, 2, NULL, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    memset(&ck, 0, sizeof(ck));
    expect_error("k_make_checksum without engine",
                 krb5_k_make_checksum(ctx, 0, gkey, 17, &in, &ck), KRB5_CRYPTO_INTERNAL,
                 unreachable);
    expect_error("k_prf", krb5_k_prf(ctx, gkey, &prfin, &prfout), KRB5_CRYPTO_INTERNAL,
                 "never computes a PRF");
    krb5_k_free_key(ctx, gkey);
}
