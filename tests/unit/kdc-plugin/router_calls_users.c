/* tests/unit/kdc-plugin/router_calls_users.c - handles of enctypes 17 and 18 (protected users'
 * and services' keys) with no reachable engine. */

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

/* A valid handle of enctype 17 or 18 (a protected user's or service's key) with no
 * reachable engine: the checks made before any engine call answer as libk5crypto does or
 * refuse, naming the call, usage and key; the engine calls fail with the engine's
 * "unreachable" and leave no plaintext; the entry points krb5kdc never uses with these
 * keys are refused, saying why. real is a clear key for the cf2 partner. */
void
user_handle(const krb5_keyblock *uk, const krb5_keyblock *clear)
{
    krb5_data in = { 0, 5, "hello" }, out = { 0, 0, NULL }, st = { 0, 0, NULL };
    krb5_data prfin = { 0, 3, "prf" }, prfout = { 0, 0, NULL };
    static char big[8192], buf[128];
    char small[8];
    krb5_enc_data enc;
    krb5_checksum ck;
    krb5_boolean valid = TRUE;
    krb5_keyblock *outkb = (krb5_keyblock *)1;
    krb5_key ukey = NULL;
    krb5_crypto_iov iov[3];
    size_t len = 0;
    const int aes128 = uk->enctype == ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    const char *unreachable = "engine unreachable";
    const char *key_named = aes128 ? "(aes128-cts-hmac-sha1-96)" : "(aes256-cts-hmac-sha1-96)";
    char want[160];

    memset(&enc, 0, sizeof(enc));
    memset(&ck, 0, sizeof(ck));
    memset(iov, 0, sizeof(iov));

    /* encrypt: libk5crypto's length, usages, cipher state, limits. */
    CHECK(krb5_c_encrypt_length(ctx, uk->enctype, in.length, &len) == 0 && len == 5 + 28,
          "encrypt_length of enctype %d", (int)uk->enctype);
    enc.ciphertext.data = small;
    enc.ciphertext.length = sizeof(small);
    expect_error("encrypt into a short buffer", krb5_c_encrypt(ctx, uk, 3, NULL, &in, &enc),
                 KRB5_BAD_MSIZE, "krb5_c_encrypt_length");
    CHECK(enc.enctype == uk->enctype && enc.kvno == 0 && enc.magic == KV5M_ENC_DATA,
          "encrypt sets enctype, kvno and magic as libk5crypto");
    enc.ciphertext.data = big;
    enc.ciphertext.length = (unsigned int)len;
    expect_error("encrypt with a cipher state", krb5_c_encrypt(ctx, uk, 3, &st, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, "a cipher state is not supported");
    snprintf(want, sizeof(want), "usage 4 is not served");
    expect_error("encrypt with usage 4", krb5_c_encrypt(ctx, uk, 4, NULL, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, want);
    expect_error("encrypt with usage 64 names the key",
                 krb5_c_encrypt(ctx, uk, 64, NULL, &in, &enc), KRB5_CRYPTO_INTERNAL, key_named);
    expect_error("encrypt with usage 64 names the engine key",
                 krb5_c_encrypt(ctx, uk, 64, NULL, &in, &enc), KRB5_CRYPTO_INTERNAL,
                 "kdc/");
    {
        krb5_data longer = { 0, 4081, big };
        enc.ciphertext.length = sizeof(big);
        expect_error("encrypt over the engine limit",
                     krb5_c_encrypt(ctx, uk, 3, NULL, &longer, &enc), KRB5_BAD_MSIZE,
                     "longer than the engine encrypts");
    }
    enc.ciphertext.length = (unsigned int)len;
    memset(big, 0x5a, sizeof(big));
    expect_error("encrypt without engine", krb5_c_encrypt(ctx, uk, 3, NULL, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(enc.ciphertext.length == len && all_zero(big, len),
          "failed encrypt must keep the length and leave zeros");
    expect_error("encrypt while the engine is down fails fast",
                 krb5_c_encrypt(ctx, uk, 2, NULL, &in, &enc), KRB5_CRYPTO_INTERNAL,
                 "next try in");

    /* decrypt: format checks first, then the engine. */
    memset(buf, 0x11, sizeof(buf));
    enc.enctype = uk->enctype;
    enc.ciphertext.data = buf;
    enc.ciphertext.length = 27;
    out.data = big;
    out.length = sizeof(big);
    expect_error("decrypt of a truncated ciphertext",
                 krb5_c_decrypt(ctx, uk, 1, NULL, &enc, &out), KRB5_BAD_MSIZE, "shorter");
    enc.ciphertext.data = big;
    enc.ciphertext.length = 4097;
    expect_error("decrypt over the engine limit",
                 krb5_c_decrypt(ctx, uk, 1, NULL, &enc, &out), KRB5_BAD_MSIZE, "longer");
    enc.ciphertext.data = buf;
    enc.ciphertext.length = 28 + 20;
    out.length = 19;
    expect_error("decrypt into a short buffer", krb5_c_decrypt(ctx, uk, 1, NULL, &enc, &out),
                 KRB5_BAD_MSIZE, "output buffer");
    out.length = sizeof(big);
    enc.enctype = aes128 ? ENCTYPE_AES256_CTS_HMAC_SHA1_96 : ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    expect_error("decrypt of another enctype", krb5_c_decrypt(ctx, uk, 1, NULL, &enc, &out),
                 KRB5_BAD_ENCTYPE, "enctype");
    enc.enctype = ENCTYPE_UNKNOWN;
    expect_error("decrypt with usage 7", krb5_c_decrypt(ctx, uk, 7, NULL, &enc, &out),
                 KRB5_CRYPTO_INTERNAL, "usage 7 is not served");
    st.length = 0;
    expect_error("decrypt with an empty cipher state",
                 krb5_c_decrypt(ctx, uk, 1, &st, &enc, &out), KRB5_CRYPTO_INTERNAL,
                 "cipher state");
    memset(big, 0x5a, sizeof(big));
    expect_error("decrypt without engine", krb5_c_decrypt(ctx, uk, 1, NULL, &enc, &out),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(all_zero(big, 20) && out.length == sizeof(big),
          "failed decrypt must leave zeros, not plaintext, and keep the length");

    /* checksums */
    expect_error("make_checksum of the other AES type",
                 krb5_c_make_checksum(ctx, aes128 ? CKSUMTYPE_HMAC_SHA1_96_AES256
                                                  : CKSUMTYPE_HMAC_SHA1_96_AES128,
                                      uk, 17, &in, &ck),
                 KRB5_CRYPTO_INTERNAL, "checksum type");
    CHECK(ck.contents == NULL && ck.length == 0, "make_checksum output not cleared");
    expect_error("make_checksum of an unkeyed type",
                 krb5_c_make_checksum(ctx, CKSUMTYPE_SHA1, uk, 17, &in, &ck),
                 KRB5_CRYPTO_INTERNAL, "checksum type");
    expect_error("make_checksum with usage 64",
                 krb5_c_make_checksum(ctx, 0, uk, 64, &in, &ck), KRB5_CRYPTO_INTERNAL,
                 "usage 64 is not served");
    expect_error("make_checksum without engine",
                 krb5_c_make_checksum(ctx, 0, uk, 17, &in, &ck), KRB5_CRYPTO_INTERNAL,
                 unreachable);
    CHECK(ck.contents == NULL && ck.length == 0, "make_checksum output not cleared");
    ck.checksum_type = aes128 ? CKSUMTYPE_HMAC_SHA1_96_AES128 : CKSUMTYPE_HMAC_SHA1_96_AES256;
    ck.contents = (krb5_octet *)buf;
    ck.length = 11;
    valid = TRUE;
    expect_error("verify of a short checksum",
                 krb5_c_verify_checksum(ctx, uk, 17, &in, &ck, &valid), KRB5_BAD_MSIZE,
                 "bytes");
    CHECK(valid == FALSE, "verify_checksum left valid set");
    ck.length = 12;
    ck.checksum_type = aes128 ? CKSUMTYPE_HMAC_SHA1_96_AES256 : CKSUMTYPE_HMAC_SHA1_96_AES128;
    expect_error("verify of the other AES type",
                 krb5_c_verify_checksum(ctx, uk, 17, &in, &ck, &valid), KRB5_BAD_ENCTYPE,
                 "checksum type");
    ck.checksum_type = 0;
    expect_error("verify of checksum type 0",
                 krb5_c_verify_checksum(ctx, uk, 17, &in, &ck, &valid), KRB5_BAD_ENCTYPE,
                 "checksum type");
    ck.checksum_type = aes128 ? CKSUMTYPE_HMAC_SHA1_96_AES128 : CKSUMTYPE_HMAC_SHA1_96_AES256;
    expect_error("verify with usage 18", krb5_c_verify_checksum(ctx, uk, 18, &in, &ck, &valid),
                 KRB5_CRYPTO_INTERNAL, "usage 18 is not served");
    expect_error("verify without engine", krb5_c_verify_checksum(ctx, uk, 17, &in, &ck, &valid),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(valid == FALSE, "verify_checksum left valid set");
    iov[0].flags = KRB5_CRYPTO_TYPE_DATA;
    iov[0].data = in;
    iov[1].flags = KRB5_CRYPTO_TYPE_CHECKSUM;
    iov[1].data.data = buf;
    iov[1].data.length = 11;
    expect_error("make_checksum_iov into a short buffer",
                 krb5_c_make_checksum_iov(ctx, 0, uk, 17, iov, 2), KRB5_BAD_MSIZE, "CHECKSUM");
    expect_error("make_checksum_iov without a CHECKSUM buffer",
                 krb5_c_make_checksum_iov(ctx, 0, uk, 17, iov, 1), KRB5_BAD_MSIZE, "CHECKSUM");
    iov[1].data.length = 16;
    expect_error("make_checksum_iov without engine",
                 krb5_c_make_checksum_iov(ctx, 0, uk, 17, iov, 2), KRB5_CRYPTO_INTERNAL,
                 unreachable);
    expect_error("verify_checksum_iov of a wrong length",
                 krb5_c_verify_checksum_iov(ctx, 0, uk, 17, iov, 2, &valid), KRB5_BAD_MSIZE,
                 "CHECKSUM");
    iov[1].data.length = 12;
    expect_error("verify_checksum_iov of another type",
                 krb5_c_verify_checksum_iov(ctx, CKSUMTYPE_HMAC_SHA256_128_AES128, uk, 17,
                                            iov, 2, &valid), KRB5_BAD_ENCTYPE, "checksum type");
    valid = TRUE;
    expect_error("verify_checksum_iov without engine",
                 krb5_c_verify_checksum_iov(ctx, 0, uk, 56, iov, 2, &valid),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    CHECK(valid == FALSE, "verify_checksum_iov left valid set");

    /* PRF and PRF+: a protected key's PRF output is never opened. */
    prfout.data = buf;
    prfout.length = 16;
    memset(buf, 0x5a, 16);
    expect_error("prf", krb5_c_prf(ctx, uk, &prfin, &prfout), KRB5_CRYPTO_INTERNAL,
                 "never opened");
    prfout.length = 40;
    expect_error("prfplus", krb5_c_prfplus(ctx, uk, &prfin, &prfout), KRB5_CRYPTO_INTERNAL,
                 "never opened");
    /* cf2 with a clear key: a combined handle of the first key's enctype, which names the
     * protected key; its jobs go to the engine (unreachable here) for the uses krb5kdc makes
     * of it, and it is refused for anything else. */
    outkb = NULL;
    CHECK(krb5_c_fx_cf2_simple(ctx, clear, "kdcchallengearmor", uk, "challengelongterm",
                               &outkb) == 0 && outkb != NULL,
          "cf2 with a clear key first");
    if (outkb != NULL) {
        krb5_keyblock *again = (krb5_keyblock *)1;
        CHECK(outkb->enctype == clear->enctype && outkb->length == MPC_KDB_COMBINED_HANDLE_LEN,
              "combined handle of enctype %d and %u bytes", (int)outkb->enctype, outkb->length);
        CHECK(memmem(outkb->contents, outkb->length, uk->contents, uk->length) == NULL,
              "the combined handle does not carry the stored handle");
        enc.ciphertext.data = big;
        enc.ciphertext.length = sizeof(big);
        expect_error("encrypt under the combined key without engine",
                     krb5_c_encrypt(ctx, outkb, 55, NULL, &in, &enc), KRB5_CRYPTO_INTERNAL,
                     unreachable);
        expect_error("encrypt under the combined key with usage 2",
                     krb5_c_encrypt(ctx, outkb, 2, NULL, &in, &enc), KRB5_CRYPTO_INTERNAL,
                     "usages 3, 54, 55 and 56 only");
        expect_error("prf of the combined key", krb5_c_prf(ctx, outkb, &prfin, &prfout),
                     KRB5_CRYPTO_INTERNAL, "never opened");
        expect_error("cf2 of a combined key", krb5_c_fx_cf2_simple(ctx, clear, "a", outkb, "b",
                                                                  &again),
                     KRB5_CRYPTO_INTERNAL, "combined key");
        CHECK(again == NULL, "cf2 output not cleared");
        outkb->contents[MPC_KDB_COMBINED_TAG_OFFSET] ^= 1;
        expect_error("a tampered combined handle", krb5_c_encrypt(ctx, outkb, 55, NULL, &in, &enc),
                     KRB5_CRYPTO_INTERNAL, "failed authentication");
        krb5_free_keyblock(ctx, outkb);
    }
    outkb = NULL;
    CHECK(krb5_c_fx_cf2_simple(ctx, uk, "a", clear, "b", &outkb) == 0 && outkb != NULL &&
          outkb->enctype == uk->enctype,
          "cf2 with the handle first takes the handle's enctype");
    krb5_free_keyblock(ctx, outkb);
    outkb = (krb5_keyblock *)1;
    expect_error("cf2 of two protected keys", krb5_c_fx_cf2_simple(ctx, uk, "a", uk, "b", &outkb),
                 KRB5_CRYPTO_INTERNAL, "two protected keys");
    CHECK(outkb == NULL, "cf2 output not cleared");

    /* Never used by krb5kdc with these keys: refused, saying why. */
    expect_error("encrypt_iov", krb5_c_encrypt_iov(ctx, uk, 3, NULL, iov, 1),
                 KRB5_CRYPTO_INTERNAL, "only krb5_c_encrypt is served");
    expect_error("decrypt_iov", krb5_c_decrypt_iov(ctx, uk, 1, NULL, iov, 1),
                 KRB5_CRYPTO_INTERNAL, "only krb5_c_decrypt is served");
    outkb = (krb5_keyblock *)1;
    expect_error("derive_prfplus",
                 krb5_c_derive_prfplus(ctx, uk, &prfin, ENCTYPE_NULL, &outkb),
                 KRB5_CRYPTO_INTERNAL, "SPAKE");
    CHECK(outkb == NULL, "derive_prfplus output not cleared");
    st.data = NULL;
    st.length = 0;
    expect_error("init_state", krb5_c_init_state(ctx, uk, 3, &st), KRB5_CRYPTO_INTERNAL,
                 "no cipher state is served");
    CHECK(krb5_c_free_state(ctx, uk, &st) == 0, "free_state with a user handle");

    /* krb5_key API: the same routes. */
    CHECK(krb5_k_create_key(ctx, uk, &ukey) == 0, "krb5_k_create_key");
    enc.ciphertext.data = big;
    enc.ciphertext.length = (unsigned int)len;
    expect_error("k_encrypt without engine", krb5_k_encrypt(ctx, ukey, 3, NULL, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    expect_error("k_encrypt with usage 5", krb5_k_encrypt(ctx, ukey, 5, NULL, &in, &enc),
                 KRB5_CRYPTO_INTERNAL, "usage 5 is not served");
    enc.ciphertext.data = buf;
    enc.ciphertext.length = 28 + 20;
    expect_error("k_decrypt without engine", krb5_k_decrypt(ctx, ukey, 1, NULL, &enc, &out),
                 KRB5_CRYPTO_INTERNAL, unreachable);
    memset(&ck, 0, sizeof(ck));
    expect_error("k_make_checksum without engine",
                 krb5_k_make_checksum(ctx, 0, ukey, 56, &in, &ck), KRB5_CRYPTO_INTERNAL,
                 unreachable);
    iov[1].data.length = 12;
    expect_error("k_make_checksum_iov without engine",
                 krb5_k_make_checksum_iov(ctx, 0, ukey, 17, iov, 2), KRB5_CRYPTO_INTERNAL,
                 unreachable);
    prfout.data = buf;
    prfout.length = 16;
    expect_error("k_prf", krb5_k_prf(ctx, ukey, &prfin, &prfout), KRB5_CRYPTO_INTERNAL,
                 "never opened");
    expect_error("k_encrypt_iov", krb5_k_encrypt_iov(ctx, ukey, 3, NULL, iov, 1),
                 KRB5_CRYPTO_INTERNAL, "only krb5_c_encrypt is served");
    krb5_k_free_key(ctx, ukey);
}

