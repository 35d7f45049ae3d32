/* tests/unit/kdc-plugin/router_calls_test.c - calls every entry point that
 * mpc_crypto_router.so interposes, with a real key and with key handles.
 *
 * Run with LD_PRELOAD=mpc_crypto_router.so (CMake sets it; without it the test
 * fails, saying so). It writes its own router configuration, handle key and engine
 * placeholder into a temporary directory and points MPC_ROUTER_CONFIG at it.
 *
 * Per function: with a real AES-256 key the result equals libk5crypto's own
 * definition called directly (dlvsym on libk5crypto.so.3, bypassing the router), or
 * round-trips where the output is randomised; with a valid handle the call fails
 * with KRB5_CRYPTO_INTERNAL and the router's message; with a forged handle (one tag
 * bit flipped) it fails with "failed authentication". Exit status 0 on success.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <krb5/krb5.h>

#include "handle.h"

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
    if (k5crypto == NULL || mkdtemp(dir) == NULL || krb5_init_context(&ctx) != 0)
        return 2;
    for (i = 0; i < sizeof(hkey); i++)
        hkey[i] = (uint8_t)(i * 7 + 1);
    snprintf(keyfile, sizeof(keyfile), "%s/handle.key", dir);
    snprintf(cluster, sizeof(cluster), "%s/cluster.toml", dir);
    write_file(keyfile, hkey, sizeof(hkey), 0600);
    write_file(cluster, "# placeholder\n", 14, 0600);
    snprintf(conf, sizeof(conf), "# test\nhandle_key_file = %s\nengine_config = %s\n",
             keyfile, cluster);
    snprintf(path, sizeof(path), "%s/router.conf", dir);
    write_file(path, conf, strlen(conf), 0600);
    setenv("MPC_ROUTER_CONFIG", path, 1);

    memset(&real, 0, sizeof(real));
    CHECK(krb5_c_make_random_key(ctx, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &real) == 0, "key");
    real_key(&real);

    memset(&id, 0, sizeof(id));
    id.kvno = 1;
    id.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    if (mpc_kdb_name_hash("svc/host@MPC.TEST", 17, id.name_hash) != 0 ||
        mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    memset(&hk, 0, sizeof(hk));
    hk.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    hk.length = MPC_KDB_HANDLE_LEN;
    hk.contents = handle;
    one_handle(&hk, "this build has no engine operations for protected keys (fail closed)");

    forged = hk;
    forged.contents = malloc(MPC_KDB_HANDLE_LEN);
    memcpy(forged.contents, handle, MPC_KDB_HANDLE_LEN);
    forged.contents[MPC_KDB_HANDLE_LEN - 1] ^= 0x01;
    one_handle(&forged, "failed authentication");
    free(forged.contents);

    krb5_free_keyblock_contents(ctx, &real);
    krb5_free_context(ctx);
    unlink(keyfile);
    unlink(cluster);
    unlink(path);
    rmdir(dir);
    printf("%d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
