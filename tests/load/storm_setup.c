/* tests/load/storm_setup.c - kdc-storm: the KDC address, the keytab's principals, sockets and limits. */
#define _GNU_SOURCE
#include "storm.h"

/* ---- set-up ------------------------------------------------------------------------- */

int
resolve_kdc(struct storm *s, const char *kdc)
{
    char host[256], *port, *colon;
    struct addrinfo hints, *result = NULL;
    int err;

    snprintf(host, sizeof(host), "%s", kdc);
    if (host[0] == '[') {
        memmove(host, host + 1, strlen(host));
        colon = strchr(host, ']');
        if (colon == NULL)
            return -1;
        *colon = '\0';
        port = colon[1] == ':' ? colon + 2 : "88";
    } else {
        colon = strrchr(host, ':');
        port = "88";
        if (colon != NULL) {
            *colon = '\0';
            port = colon + 1;
        }
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_DGRAM;
    err = getaddrinfo(host, port, &hints, &result);
    if (err) {
        fprintf(stderr, "kdc-storm: %s: %s\n", kdc, gai_strerror(err));
        return -1;
    }
    memcpy(&s->kdc_addr, result->ai_addr, result->ai_addrlen);
    s->kdc_addr_len = result->ai_addrlen;
    freeaddrinfo(result);
    return 0;
}

/* The first `kdc` of the default realm in the client profile. */
int
kdc_from_profile(struct storm *s, char *out, size_t size)
{
    profile_t profile = NULL;
    char *realm = NULL, **values = NULL;
    const char *names[4];
    int ok = -1;

    if (krb5_get_default_realm(s->context, &realm) != 0 ||
        krb5_get_profile(s->context, &profile) != 0)
        goto cleanup;
    names[0] = "realms";
    names[1] = realm;
    names[2] = "kdc";
    names[3] = NULL;
    if (profile_get_values(profile, names, &values) == 0 && values[0] != NULL) {
        snprintf(out, size, "%s", values[0]);
        ok = 0;
    }

cleanup:
    if (values != NULL)
        profile_free_list(values);
    profile_release(profile);
    krb5_free_default_realm(s->context, realm);
    return ok;
}

/* Every principal of the keytab, each with a MEMORY keytab of its own entries, so that a
 * login never scans the whole keytab file. */
int
load_keytab(struct storm *s, const char *name)
{
    krb5_keytab kt = NULL;
    krb5_kt_cursor cursor;
    krb5_keytab_entry entry;
    krb5_error_code code;
    long cap = 0;
    int index, last = -1;
    char memname[64];

    code = krb5_kt_resolve(s->context, name, &kt);
    if (!code)
        code = krb5_kt_start_seq_get(s->context, kt, &cursor);
    if (code) {
        fprintf(stderr, "kdc-storm: keytab %s: %s\n", name, krb5_get_error_message(s->context, code));
        if (kt != NULL)
            krb5_kt_close(s->context, kt);
        return -1;
    }
    while (krb5_kt_next_entry(s->context, kt, &entry, &cursor) == 0) {
        index = -1;
        /* Keytabs list one principal's keys together: look at the latest first. */
        if (last >= 0 && krb5_principal_compare(s->context, s->principals[last], entry.principal))
            index = last;
        for (int i = 0; index < 0 && i < s->n_principals; i++) {
            if (krb5_principal_compare(s->context, s->principals[i], entry.principal))
                index = i;
        }
        if (index < 0 && s->o->principal_limit > 0 && s->n_principals >= s->o->principal_limit) {
            krb5_free_keytab_entry_contents(s->context, &entry);
            continue;
        }
        if (index < 0) {
            long need = s->n_principals + 1, cap2 = cap;

            s->principals = grow(s->principals, &cap, need, sizeof(*s->principals));
            s->keytabs = grow(s->keytabs, &cap2, need, sizeof(*s->keytabs));
            index = s->n_principals++;
            s->principals[index] = NULL;
            s->keytabs[index] = NULL;
            snprintf(memname, sizeof(memname), "MEMORY:kdc-storm-%d", index);
            code = krb5_copy_principal(s->context, entry.principal, &s->principals[index]);
            if (!code)
                code = krb5_kt_resolve(s->context, memname, &s->keytabs[index]);
            if (code)
                break;
        }
        last = index;
        code = krb5_kt_add_entry(s->context, s->keytabs[index], &entry);
        krb5_free_keytab_entry_contents(s->context, &entry);
        if (code)
            break;
    }
    krb5_kt_end_seq_get(s->context, kt, &cursor);
    krb5_kt_close(s->context, kt);
    if (code) {
        fprintf(stderr, "kdc-storm: keytab %s: %s\n", name, krb5_get_error_message(s->context, code));
        return -1;
    }
    if (s->n_principals == 0) {
        fprintf(stderr, "kdc-storm: keytab %s has no entries\n", name);
        return -1;
    }
    return 0;
}

/* Raises the soft descriptor limit towards needed; returns the limit in force. */
long
raise_fd_limit(long needed)
{
    struct rlimit limit;

    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return 1024;
    if (limit.rlim_cur < (rlim_t)needed + 64) {
        limit.rlim_cur = limit.rlim_max < (rlim_t)needed + 64 ? limit.rlim_max
                                                               : (rlim_t)needed + 64;
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
            getrlimit(RLIMIT_NOFILE, &limit);
    }
    return limit.rlim_cur > 1048576 ? 1048576 : (long)limit.rlim_cur;
}
