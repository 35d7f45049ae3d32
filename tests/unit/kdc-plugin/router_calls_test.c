/* tests/unit/kdc-plugin/router_calls_test.c - calls every entry point that
 * mpc_crypto_router.so interposes, with a real key, with key handles, and with the
 * private enctype and checksum type of the protected krbtgt key.
 *
 * Run with LD_PRELOAD=mpc_crypto_router.so (CMake sets it; without it the test
 * fails, saying so). It writes its own router configuration, handle key and engine
 * cluster configuration into a temporary directory and points MPC_ROUTER_CONFIG at it.
 * The cluster configuration is valid but names no running server (loopback port 1):
 * the engine's own round trips are tested against a real cluster in
 * tests/integration/kdc/test_router_engine.py.
 *
 * Per function: with a real AES-256 key the result equals libk5crypto's own
 * definition called directly (dlvsym on libk5crypto.so.3, bypassing the router), or
 * round-trips where the output is randomised; with a valid handle of an enctype the
 * engine does not serve (camellia256-cts-cmac) the call fails with KRB5_CRYPTO_INTERNAL and the
 * router's message; with a forged handle (one tag bit flipped) it fails with "failed
 * authentication". With valid handles of enctypes 18 and 17 (users' and services' keys):
 * lengths, checksum types and ciphertext enctypes are checked as libk5crypto does, usages
 * other than 1, 2, 3, 17, 56, cipher states and the entry points krb5kdc never uses with
 * them are refused naming the call, usage and key, and engine calls fail with the
 * engine's "unreachable" (then at once, "next try in") leaving no plaintext. With a valid
 * handle of the private enctype:
 * checks made before any engine call (lengths, types, cipher state) answer as
 * libk5crypto does, engine calls fail with the engine's "unreachable" message, and the
 * entry points never served with the krbtgt key are refused with their reason. Every
 * keyless entry point (and libkrb5's krb5_is_permitted_enctype) gives libk5crypto's
 * (libkrb5's) answer for real types, including unknown ones, and the private format's
 * for the private types; krb5_decrypt_tkt_part, inside libkrb5, reaches the engine with
 * a ticket of the private enctype. Exit status 0 on success.
 */

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

/* A throwaway CurveZMQ key pair (mpcctl keygen) for the engine client: it is never used
 * to talk to anything, the servers named with it do not exist. */
static const char client_key_file[] =
    "secret-key =qm)s)Q#w@=IV8TLxVwlpuN0iTHX-f&)sXM72>v]\n"
    "public-key K.z+fF7TF}FKUvLjS-/R/D^m6*rFMe4Z%meJ4A)Z\n";
#define SERVER_PUBLIC_KEY "K.z+fF7TF}FKUvLjS-/R/D^m6*rFMe4Z%meJ4A)Z"

static krb5_context ctx;
static void *k5crypto;
static int failures;
static int checks;

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

/* libk5crypto's own definition of name, bypassing the router. */
static void *
direct(const char *name)
{
    void *sym = dlvsym(k5crypto, name, "k5crypto_3_MIT");

    if (sym == NULL) {
        fprintf(stderr, "libk5crypto has no %s\n", name);
        exit(2);
    }
    return sym;
}

/* A refused call: code KRB5_CRYPTO_INTERNAL and, where a context was passed, a
 * message containing want. */
static void
expect_refused(const char *what, krb5_error_code ret, const char *want)
{
    const char *msg;

    CHECK(ret == KRB5_CRYPTO_INTERNAL, "%s: expected KRB5_CRYPTO_INTERNAL, got %d", what,
          (int)ret);
    if (want == NULL)
        return;
    msg = krb5_get_error_message(ctx, ret);
    CHECK(strstr(msg, "mpc_crypto_router") != NULL && strstr(msg, want) != NULL,
          "%s: message \"%s\" lacks \"%s\"", what, msg, want);
    krb5_free_error_message(ctx, msg);
}

static void
write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) != 0) {
        perror(path);
        exit(2);
    }
}

static int
data_eq(const krb5_data *a, const krb5_data *b)
{
    return a->length == b->length && memcmp(a->data, b->data, a->length) == 0;
}

static void
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

/* An error with the router's message containing want. */
static void
expect_error(const char *what, krb5_error_code ret, krb5_error_code code, const char *want)
{
    const char *msg;

    CHECK(ret == code, "%s: expected %d, got %d", what, (int)code, (int)ret);
    if (ret == 0 || want == NULL)
        return;
    msg = krb5_get_error_message(ctx, ret);
    CHECK(strstr(msg, "mpc_crypto_router") != NULL && strstr(msg, want) != NULL,
          "%s: message \"%s\" lacks \"%s\"", what, msg, want);
    krb5_free_error_message(ctx, msg);
}

static void *k5krb5;

/* A valid handle of the private enctype with no reachable engine. */
static void
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

/* True when all n bytes of p are zero. */
static int
all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;

    for (i = 0; i < n; i++) {
        if (b[i] != 0)
            return 0;
    }
    return 1;
}

/* A valid handle of enctype 17 or 18 (a protected user's or service's key) with no
 * reachable engine: the checks made before any engine call answer as libk5crypto does or
 * refuse, naming the call, usage and key; the engine calls fail with the engine's
 * "unreachable" and leave no plaintext; the entry points krb5kdc never uses with these
 * keys are refused, saying why. real is a clear key for the cf2 partner. */
static void
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

typedef krb5_boolean (*etype_pred_fn)(krb5_enctype);
typedef krb5_boolean (*cksum_pred_fn)(krb5_cksumtype);

/* Every keyless entry point: libk5crypto's answer for real types (known and unknown),
 * the private format's for the private types. */
static void
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

/* Real key: the router's answer equals libk5crypto's own. */
static void
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

int
main(void)
{
    char dir[] = "/tmp/router-calls-XXXXXX", path[512], conf[2048], keyfile[512], cluster[512];
    char clientkey[512];
    uint8_t hkey[MPC_KDB_HANDLE_KEY_LEN], handle[MPC_KDB_HANDLE_LEN];
    mpc_kdb_key_id id;
    krb5_keyblock real, hk, forged;
    Dl_info info;
    void *sym;
    size_t i;

    sym = dlsym(RTLD_DEFAULT, "krb5_c_encrypt");
    if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL ||
        strstr(info.dli_fname, "mpc_crypto_router") == NULL) {
        fprintf(stderr, "krb5_c_encrypt is not the router's: run with "
                "LD_PRELOAD=mpc_crypto_router.so\n");
        return 2;
    }
    k5crypto = dlopen("libk5crypto.so.3", RTLD_LAZY | RTLD_NOLOAD);
    k5krb5 = dlopen("libkrb5.so.3", RTLD_LAZY | RTLD_NOLOAD);
    if (k5crypto == NULL || k5krb5 == NULL || mkdtemp(dir) == NULL ||
        krb5_init_context(&ctx) != 0)
        return 2;
    for (i = 0; i < sizeof(hkey); i++)
        hkey[i] = (uint8_t)(i * 7 + 1);
    snprintf(keyfile, sizeof(keyfile), "%s/handle.key", dir);
    snprintf(cluster, sizeof(cluster), "%s/cluster.toml", dir);
    write_file(keyfile, hkey, sizeof(hkey), 0600);
    snprintf(clientkey, sizeof(clientkey), "%s/client.key", dir);
    write_file(clientkey, client_key_file, strlen(client_key_file), 0600);
    /* Port 1 on loopback: nothing listens, every engine call ends as unreachable. */
    snprintf(conf, sizeof(conf),
             "protocol = \"rss3\"\ntimeout_ms = 400\nsecret_key_file = \"%s\"\n"
             "[[servers]]\nparty = 1\nendpoint = \"tcp://127.0.0.1:1\"\n"
             "public_key = \"%s\"\n"
             "[[servers]]\nparty = 2\nendpoint = \"tcp://127.0.0.2:1\"\n"
             "public_key = \"%s\"\n"
             "[[servers]]\nparty = 3\nendpoint = \"tcp://127.0.0.3:1\"\n"
             "public_key = \"%s\"\n", clientkey, SERVER_PUBLIC_KEY, SERVER_PUBLIC_KEY,
             SERVER_PUBLIC_KEY);
    write_file(cluster, conf, strlen(conf), 0600);
    snprintf(conf, sizeof(conf), "# test\nhandle_key_file = %s\nengine_config = %s\n"
             "pool_low = 2\npool_high = 8\n", keyfile, cluster);
    snprintf(path, sizeof(path), "%s/router.conf", dir);
    write_file(path, conf, strlen(conf), 0600);
    setenv("MPC_ROUTER_CONFIG", path, 1);

    memset(&real, 0, sizeof(real));
    CHECK(krb5_c_make_random_key(ctx, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &real) == 0, "key");
    real_key(&real);

    /* A valid handle of an enctype the engine does not serve (camellia256-cts-cmac): refused. */
    memset(&id, 0, sizeof(id));
    id.kvno = 1;
    id.enctype = ENCTYPE_CAMELLIA256_CTS_CMAC;
    if (mpc_kdb_name_hash("svc/host@MPC.TEST", 17, id.name_hash) != 0 ||
        mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    memset(&hk, 0, sizeof(hk));
    hk.enctype = ENCTYPE_CAMELLIA256_CTS_CMAC;
    hk.length = MPC_KDB_HANDLE_LEN;
    hk.contents = handle;
    one_handle(&hk, "the engine serves only keys of enctypes " MPC_KDC_ENCTYPE_NAME);

    /* A forged handle of a served enctype: refused before any engine call. */
    id.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    if (mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    hk.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    forged = hk;
    forged.contents = malloc(MPC_KDB_HANDLE_LEN);
    memcpy(forged.contents, handle, MPC_KDB_HANDLE_LEN);
    forged.contents[MPC_KDB_HANDLE_LEN - 1] ^= 0x01;
    one_handle(&forged, "failed authentication");
    free(forged.contents);

    keyless();

    /* Protected users' and services' keys: valid handles of enctypes 18 and 17. */
    user_handle(&hk, &real);
    id.enctype = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    if (mpc_kdb_name_hash("alice@MPC.TEST", 14, id.name_hash) != 0 ||
        mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    hk.enctype = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    user_handle(&hk, &real);

    /* The protected krbtgt key: a handle of the private enctype. */
    id.enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    if (mpc_kdb_name_hash("krbtgt/MPC.TEST@MPC.TEST", 24, id.name_hash) != 0 ||
        mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    hk.enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    private_handle(&hk);

    krb5_free_keyblock_contents(ctx, &real);
    krb5_free_context(ctx);
    unlink(keyfile);
    unlink(clientkey);
    unlink(cluster);
    unlink(path);
    rmdir(dir);
    printf("%d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
