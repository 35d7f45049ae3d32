/* tests/integration/kdc/kdb_probe.c - read a realm's KDB the way krb5kdc or kadmin does.
 *
 * Opens the database of the default realm through libkdb5 (so through whatever
 * db_library kdc.conf names, e.g. mpc_kdb) in KDC mode (KRB5_KDB_SRV_TYPE_KDC,
 * exactly the open flags krb5kdc uses) or ADMIN mode (kadmind, kadmin.local,
 * kdb5_util), loads the master key from the stash like krb5kdc, and prints what
 * that mode sees. Environment: KRB5_CONFIG and KRB5_KDC_PROFILE of the realm.
 *
 * usage: kdb_probe STASH kdc|admin keys PRINC
 *            one line per key_data:
 *            key kvno=N enctype=E stored=HEX result=HEX|error=CODE:MESSAGE
 *        kdb_probe STASH kdc|admin decrypt KVNO ENCTYPE HEX
 *            krb5_dbe_decrypt_key_data on a key_data holding HEX:
 *            result=HEX or error=CODE:MESSAGE (exit 3)
 *        kdb_probe STASH kdc|admin crypto PRINC
 *            decrypts the first key, then uses it with real libk5crypto:
 *            encrypt=CODE checksum=CODE decrypt=CODE length=N
 *        kdb_probe STASH kdc|admin put PRINC
 *            reads the entry and writes it back: put=CODE[:MESSAGE]
 * Exit status: 0 done, 2 usage or setup failure, 3 decrypt refused.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kadm5/admin.h>
#include <kdb.h>
#include <krb5.h>

static krb5_context ctx;

static void
print_hex(const char *label, const unsigned char *data, size_t len)
{
    size_t i;

    printf("%s=", label);
    for (i = 0; i < len; i++)
        printf("%02x", data[i]);
}

static void
print_error(const char *label, krb5_error_code code)
{
    const char *msg = krb5_get_error_message(ctx, code);

    printf("%s=%ld:%s", label, (long)code, msg);
    krb5_free_error_message(ctx, msg);
}

static int
from_hex(const char *hex, unsigned char **out, size_t *len_out)
{
    size_t i, len = strlen(hex);
    unsigned char *buf;
    unsigned int byte;

    if (len % 2 != 0)
        return -1;
    buf = malloc(len / 2 + 1);
    if (buf == NULL)
        return -1;
    for (i = 0; i < len / 2; i++) {
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
            free(buf);
            return -1;
        }
        buf[i] = (unsigned char)byte;
    }
    *out = buf;
    *len_out = len / 2;
    return 0;
}

static int
fail(const char *what, krb5_error_code code)
{
    const char *msg = krb5_get_error_message(ctx, code);

    fprintf(stderr, "kdb_probe: %s: %s (%ld)\n", what, msg, (long)code);
    krb5_free_error_message(ctx, msg);
    return 2;
}

static int
cmd_keys(krb5_db_entry *entry)
{
    krb5_keyblock key;
    krb5_error_code ret;
    int i;

    for (i = 0; i < entry->n_key_data; i++) {
        krb5_key_data *kd = &entry->key_data[i];

        printf("key kvno=%u enctype=%d ", (unsigned int)kd->key_data_kvno,
               (int)kd->key_data_type[0]);
        print_hex("stored", kd->key_data_contents[0], kd->key_data_length[0]);
        printf(" ");
        memset(&key, 0, sizeof(key));
        ret = krb5_dbe_decrypt_key_data(ctx, NULL, kd, &key, NULL);
        if (ret)
            print_error("error", ret);
        else
            print_hex("result", key.contents, key.length);
        printf("\n");
        krb5_free_keyblock_contents(ctx, &key);
    }
    return 0;
}

static int
cmd_crypto(krb5_db_entry *entry)
{
    krb5_keyblock key;
    krb5_enc_data enc;
    krb5_data plain, out;
    krb5_checksum cksum;
    krb5_error_code ret;
    size_t enclen = 0;
    char text[] = "sixteen byte msg and then some";

    if (entry->n_key_data < 1)
        return fail("no key data", KRB5_KDB_NO_MATCHING_KEY);
    memset(&key, 0, sizeof(key));
    ret = krb5_dbe_decrypt_key_data(ctx, NULL, &entry->key_data[0], &key, NULL);
    if (ret)
        return fail("decrypt_key_data", ret);
    printf("length=%u ", key.length);

    plain.magic = KV5M_DATA;
    plain.data = text;
    plain.length = sizeof(text);
    memset(&enc, 0, sizeof(enc));
    (void)krb5_c_encrypt_length(ctx, key.enctype, plain.length, &enclen);
    enc.ciphertext.data = calloc(1, enclen + 64);
    enc.ciphertext.length = enclen;
    ret = krb5_c_encrypt(ctx, &key, 2, NULL, &plain, &enc);
    printf("encrypt=%ld ", (long)ret);

    memset(&cksum, 0, sizeof(cksum));
    ret = krb5_c_make_checksum(ctx, 0, &key, 17, &plain, &cksum);
    printf("checksum=%ld ", (long)ret);
    krb5_free_checksum_contents(ctx, &cksum);

    /* Decrypt something of the right shape: 16 confounder + 16 + 12 HMAC. */
    memset(enc.ciphertext.data, 0x41, enclen);
    enc.enctype = key.enctype;
    out.data = calloc(1, enclen + 64);
    out.length = enclen;
    ret = krb5_c_decrypt(ctx, &key, 2, NULL, &enc, &out);
    printf("decrypt=%ld\n", (long)ret);

    free(out.data);
    free(enc.ciphertext.data);
    krb5_free_keyblock_contents(ctx, &key);
    return 0;
}

int
main(int argc, char **argv)
{
    krb5_principal mname = NULL, princ = NULL;
    krb5_db_entry *entry = NULL;
    krb5_keyblock mkey;
    krb5_kvno mkvno = 0;   /* any master key version */
    krb5_error_code ret;
    char *realm = NULL;
    const char *stash, *mode, *cmd;
    int kdc, status = 2;

    if (argc < 5) {
        fprintf(stderr, "usage: kdb_probe STASH kdc|admin keys|crypto|put PRINC\n"
                        "       kdb_probe STASH kdc|admin decrypt KVNO ENCTYPE HEX\n");
        return 2;
    }
    stash = argv[1];
    mode = argv[2];
    cmd = argv[3];
    if (strcmp(mode, "kdc") != 0 && strcmp(mode, "admin") != 0)
        return 2;
    kdc = strcmp(mode, "kdc") == 0;

    ret = kadm5_init_krb5_context(&ctx);   /* reads KRB5_KDC_PROFILE too */
    if (ret) {
        fprintf(stderr, "kdb_probe: cannot create a krb5 context (%ld)\n", (long)ret);
        return 2;
    }
    ret = krb5_get_default_realm(ctx, &realm);
    if (ret)
        return fail("default realm", ret);
    ret = krb5_db_open(ctx, NULL, KRB5_KDB_OPEN_RW |
                       (kdc ? KRB5_KDB_SRV_TYPE_KDC : KRB5_KDB_SRV_TYPE_ADMIN));
    if (ret)
        return fail("krb5_db_open", ret);
    ret = krb5_db_setup_mkey_name(ctx, NULL, realm, NULL, &mname);
    if (ret)
        return fail("master key name", ret);
    memset(&mkey, 0, sizeof(mkey));
    mkey.enctype = ENCTYPE_UNKNOWN;
    ret = krb5_db_fetch_mkey(ctx, mname, mkey.enctype, FALSE, FALSE, (char *)stash, &mkvno,
                             NULL, &mkey);
    if (ret)
        return fail("fetch master key", ret);
    ret = krb5_db_fetch_mkey_list(ctx, mname, &mkey);
    if (ret)
        return fail("fetch master key list", ret);

    if (strcmp(cmd, "decrypt") == 0) {
        krb5_key_data kd;
        krb5_keyblock key;
        unsigned char *blob = NULL;
        size_t len = 0;

        if (argc != 7 || from_hex(argv[6], &blob, &len) != 0 || len > 0xffff)
            return 2;
        memset(&kd, 0, sizeof(kd));
        kd.key_data_ver = 1;
        kd.key_data_kvno = (krb5_ui_2)atoi(argv[4]);
        kd.key_data_type[0] = (krb5_int16)atoi(argv[5]);
        kd.key_data_length[0] = (krb5_ui_2)len;
        kd.key_data_contents[0] = blob;
        memset(&key, 0, sizeof(key));
        ret = krb5_dbe_decrypt_key_data(ctx, NULL, &kd, &key, NULL);
        if (ret) {
            print_error("error", ret);
            status = 3;
        } else {
            print_hex("result", key.contents, key.length);
            status = 0;
        }
        printf("\n");
        krb5_free_keyblock_contents(ctx, &key);
        free(blob);
        goto done;
    }

    ret = krb5_parse_name(ctx, argv[4], &princ);
    if (ret)
        return fail("parse name", ret);
    ret = krb5_db_get_principal(ctx, princ, 0, &entry);
    if (ret)
        return fail("get principal", ret);
    if (strcmp(cmd, "keys") == 0) {
        status = cmd_keys(entry);
    } else if (strcmp(cmd, "crypto") == 0) {
        status = cmd_crypto(entry);
    } else if (strcmp(cmd, "put") == 0) {
        ret = krb5_db_put_principal(ctx, entry);
        if (ret)
            print_error("put", ret);
        else
            printf("put=0");
        printf("\n");
        status = 0;
    }

done:
    fflush(stdout);
    krb5_db_free_principal(ctx, entry);
    krb5_free_principal(ctx, princ);
    krb5_free_principal(ctx, mname);
    krb5_free_keyblock_contents(ctx, &mkey);
    krb5_free_default_realm(ctx, realm);
    krb5_db_fini(ctx);
    krb5_free_context(ctx);
    return status;
}
