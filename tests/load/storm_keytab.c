/* tests/load/storm_keytab.c - kdc-storm: `kdc-storm keytab`: keys of principals from one password. */
#define _GNU_SOURCE
#include "storm.h"

/* ---- keytab generation -------------------------------------------------------------- */

int
put_bytes(FILE *f, const void *data, size_t len)
{
    return fwrite(data, 1, len, f) == len ? 0 : -1;
}

static int
put16(FILE *f, unsigned int v)
{
    unsigned char b[2] = { (unsigned char)(v >> 8), (unsigned char)v };

    return put_bytes(f, b, 2);
}

static int
put32(FILE *f, uint32_t v)
{
    unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 8), (unsigned char)v };

    return put_bytes(f, b, 4);
}

int
put_counted(FILE *f, const krb5_data *d)
{
    return put16(f, d->length) || put_bytes(f, d->data, d->length) ? -1 : 0;
}

/* One entry of a version 0x0502 keytab file (the MIT format, all integers big-endian).
 * Written directly: krb5_kt_add_entry on a FILE keytab rescans the file on every call. */
int
write_entry(FILE *f, krb5_principal p, uint32_t kvno, const krb5_keyblock *key)
{
    size_t size = 2 + 2 + p->realm.length + 4 + 4 + 1 + 2 + 2 + key->length + 4;
    int i;

    for (i = 0; i < p->length; i++)
        size += 2 + p->data[i].length;
    if (put32(f, (uint32_t)size) || put16(f, (unsigned int)p->length) ||
        put_counted(f, &p->realm))
        return -1;
    for (i = 0; i < p->length; i++) {
        if (put_counted(f, &p->data[i]))
            return -1;
    }
    if (put32(f, (uint32_t)p->type) || put32(f, (uint32_t)time(NULL)) ||
        put_bytes(f, &(unsigned char){ (unsigned char)(kvno & 0xff) }, 1) ||
        put16(f, (unsigned int)key->enctype) || put16(f, key->length) ||
        put_bytes(f, key->contents, key->length) || put32(f, kvno))
        return -1;
    return 0;
}

int
make_keytab(int argc, char **argv)
{
    static const struct option long_options[] = {
        { "out", required_argument, NULL, 'o' },      { "prefix", required_argument, NULL, 'p' },
        { "count", required_argument, NULL, 'n' },    { "password", required_argument, NULL, 'w' },
        { "realm", required_argument, NULL, 'r' },    { "enctypes", required_argument, NULL, 'e' },
        { "kvno", required_argument, NULL, 'k' },     { NULL, 0, NULL, 0 }
    };
    const char *out = NULL, *prefix = NULL, *password = NULL, *realm_arg = NULL;
    const char *enctype_list = "aes256-cts-hmac-sha1-96,aes128-cts-hmac-sha1-96";
    krb5_enctype enctypes[8];
    int n_enctypes = 0, c, status = 2;
    long count = 0, kvno = 1, i;
    krb5_context context = NULL;
    char *realm = NULL, *list = NULL, *token, *save, *end;
    FILE *f = NULL;

    optind = 2;
    while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'p': prefix = optarg; break;
        case 'w': password = optarg; break;
        case 'r': realm_arg = optarg; break;
        case 'e': enctype_list = optarg; break;
        case 'n':
            errno = 0;
            count = strtol(optarg, &end, 10);
            if (errno || *end || count < 1 || count > 10000000) {
                fprintf(stderr, "kdc-storm: --count must be 1..10000000\n");
                return 2;
            }
            break;
        case 'k':
            errno = 0;
            kvno = strtol(optarg, &end, 10);
            if (errno || *end || kvno < 1 || kvno > 0x7fffffffL) {
                fprintf(stderr, "kdc-storm: --kvno must be positive\n");
                return 2;
            }
            break;
        default: return 2;
        }
    }
    if (out == NULL || prefix == NULL || password == NULL || count == 0) {
        fprintf(stderr, "kdc-storm keytab: need --out, --prefix, --count and --password\n");
        return 2;
    }
    if (krb5_init_context(&context) != 0) {
        fprintf(stderr, "kdc-storm: krb5_init_context failed\n");
        return 2;
    }
    if (realm_arg == NULL && krb5_get_default_realm(context, &realm) != 0) {
        fprintf(stderr, "kdc-storm: no --realm and no default realm\n");
        goto cleanup;
    }
    list = strdup(enctype_list);
    for (token = strtok_r(list, ",", &save); token != NULL; token = strtok_r(NULL, ",", &save)) {
        if (n_enctypes == 8 || krb5_string_to_enctype(token, &enctypes[n_enctypes]) != 0) {
            fprintf(stderr, "kdc-storm: unknown or too many enctypes: %s\n", enctype_list);
            goto cleanup;
        }
        n_enctypes++;
    }
    f = fopen(out, "wbx");
    if (f == NULL) {
        fprintf(stderr, "kdc-storm: %s: %s\n", out, strerror(errno));
        goto cleanup;
    }
    if (put16(f, 0x0502))
        goto write_error;
    for (i = 0; i < count; i++) {
        char name[512];
        krb5_principal principal = NULL;
        krb5_data salt = { 0, 0, NULL }, pw;
        krb5_error_code code;

        snprintf(name, sizeof(name), "%s%ld@%s", prefix, i, realm_arg ? realm_arg : realm);
        code = krb5_parse_name(context, name, &principal);
        if (!code)
            code = krb5_principal2salt(context, principal, &salt);
        for (int e = 0; !code && e < n_enctypes; e++) {
            krb5_keyblock key;

            pw.magic = KV5M_DATA;
            pw.data = (char *)password;
            pw.length = (unsigned int)strlen(password);
            memset(&key, 0, sizeof(key));
            code = krb5_c_string_to_key(context, enctypes[e], &pw, &salt, &key);
            if (!code && write_entry(f, principal, (uint32_t)kvno, &key) != 0)
                code = errno ? errno : EIO;
            krb5_free_keyblock_contents(context, &key);
        }
        krb5_free_data_contents(context, &salt);
        krb5_free_principal(context, principal);
        if (code) {
            fprintf(stderr, "kdc-storm: %s: %s\n", name, krb5_get_error_message(context, code));
            goto cleanup;
        }
    }
    if (fclose(f) != 0) {
        f = NULL;
        goto write_error;
    }
    f = NULL;
    status = 0;
    goto cleanup;

write_error:
    fprintf(stderr, "kdc-storm: writing %s: %s\n", out, strerror(errno));
cleanup:
    if (f != NULL)
        fclose(f);
    if (status != 0 && out != NULL)
        unlink(out);
    free(list);
    krb5_free_default_realm(context, realm);
    krb5_free_context(context);
    return status;
}
