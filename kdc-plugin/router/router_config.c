/* kdc-plugin/router/router_config.c - reads the crypto router's configuration
 * (router_config.h).
 *
 * Configuration. The file named by the environment variable MPC_ROUTER_CONFIG
 * (default /etc/mpc-kdc/router.conf) holds "key = value" lines; '#' starts a
 * comment line; blank lines are ignored; an unknown key, a repeated key or a line
 * without '=' makes the whole file invalid. Keys (both required):
 *
 *   handle_key_file = PATH   the 32-byte handle key, the same file as the KDB
 *                            module's mpc_handle_key_file (kdc-plugin/kdb): a
 *                            regular file owned by root or the KDC's user, no
 *                            group or other permissions, exactly 32 bytes.
 *   engine_config   = PATH   the engine cluster configuration (mpc-engine/client,
 *                            config/cluster.example.toml), parsed by mpc_client_open.
 *
 * Optional keys, the engine's nonce pools and failures (engine_conn.h, nonces/supply.h,
 * kdc-plugin/README.md):
 *
 *   pool_ttl_s    = 1800     drop prefetched nonces older than this (1..604800); keep
 *                            it below the servers' gcm_nonce_ttl_s (default 3600)
 *   pool_low      = 16       refill a pool holding fewer nonces than this ...
 *   pool_high     = 96       ... up to this many (pool_low < pool_high <= 65536); under
 *                            load both follow demand (nonces/demand.h)
 *   unreachable_retry_ms = 3000
 *                            after a call finds the engine unreachable, calls fail at
 *                            once for this long, then one tries again (1..600000)
 *   metrics_file  = PATH     the counters every worker adds to (router_metrics.h; created
 *                            0644 if missing, e.g. /run/mpc-kdc/router.metrics), read by
 *                            `mpcctl kdc metrics`; without it nothing is counted
 *   gcm_masks     = aes      how new tickets and checksums under a protected krbtgt key are
 *                            masked: "aes" (AES_K in MPC) or "local"
 *                            (mpc_client_gcm_prefetch_local: each server computes its share
 *                            alone, faster with three servers, but an actively secure pair
 *                            serving while one is down cannot open such tickets); either
 *                            kind opens whatever the setting (docs/ticket-format.md)
 *
 * The configuration file itself must be a regular file not writable by group or
 * other. The router reads it lazily, on the first handle a process sees, once per process
 * (a krb5kdc -w worker reads it again after fork). If it is missing or invalid, every call
 * with a handle fails closed and the reason is logged once per process; calls with ordinary
 * keys never read it and keep working.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "router_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define ROUTER_CONFIG_MAX 65536

/* How strictly a file's owner and mode are checked. */
enum file_mode_rule {
    ANY_MODE = 0,       /* any owner and mode */
    PRIVATE_FILE = 1,   /* owned by root or us, no group or other permissions */
    NOT_WRITABLE = 2    /* owned by root or us, not writable by group or other */
};

static char *
trim(char *s)
{
    char *end;

    while (*s == ' ' || *s == '\t')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        *--end = '\0';
    return s;
}

/* Reads a whole small file (regular, at most max bytes) into a NUL-terminated buffer
 * the caller frees. */
static int
read_small_file(const char *path, size_t max, enum file_mode_rule rule, char **out,
                size_t *len_out, char *why, size_t why_len, const char *what)
{
    struct stat st;
    char *buf = NULL;
    ssize_t got;
    size_t len = 0;
    int fd = -1, ret = -1;

    *out = NULL;
    *len_out = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(why, why_len, "cannot open %s %s: %s", what, path, strerror(errno));
        goto cleanup;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "%s %s is not a regular file", what, path);
        goto cleanup;
    }
    if (rule == PRIVATE_FILE && (st.st_mode & 077) != 0) {
        snprintf(why, why_len, "%s %s has mode %04o; it must not be accessible to group or "
                 "other", what, path, (unsigned)(st.st_mode & 07777));
        goto cleanup;
    }
    if (rule == NOT_WRITABLE && (st.st_mode & 022) != 0) {
        snprintf(why, why_len, "%s %s is writable by group or other", what, path);
        goto cleanup;
    }
    if (rule != ANY_MODE && st.st_uid != 0 && st.st_uid != geteuid()) {
        snprintf(why, why_len, "%s %s must be owned by root or uid %u", what, path,
                 (unsigned)geteuid());
        goto cleanup;
    }
    if ((size_t)st.st_size > max) {
        snprintf(why, why_len, "%s %s is larger than %zu bytes", what, path, max);
        goto cleanup;
    }
    buf = malloc(max + 1);
    if (buf == NULL) {
        snprintf(why, why_len, "out of memory");
        goto cleanup;
    }
    for (;;) {
        got = read(fd, buf + len, max + 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(why, why_len, "cannot read %s %s: %s", what, path, strerror(errno));
            goto cleanup;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len > max) {
            snprintf(why, why_len, "%s %s is larger than %zu bytes", what, path, max);
            goto cleanup;
        }
    }
    buf[len] = '\0';
    *out = buf;
    *len_out = len;
    buf = NULL;
    ret = 0;

cleanup:
    if (buf != NULL) {
        OPENSSL_cleanse(buf, max + 1);
        free(buf);
    }
    if (fd >= 0)
        close(fd);
    return ret;
}

/* The optional numeric keys: name, where in router_engine_options, range. */
static const struct {
    const char *name;
    size_t offset;
    uint32_t min, max;
} option_keys[] = {
    { "pool_ttl_s", offsetof(router_engine_options, pool_ttl_s), 1, 604800 },
    { "pool_low", offsetof(router_engine_options, pool_low), 1, 65535 },
    { "pool_high", offsetof(router_engine_options, pool_high), 2, 65536 },
    { "unreachable_retry_ms", offsetof(router_engine_options, unreachable_retry_ms), 1, 600000 },
};

/* Parses a decimal in [min, max] into *out; 0 on success. */
static int
parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
    unsigned long long v = 0;
    const char *p;

    if (*text == '\0' || strlen(text) > 10)
        return -1;
    for (p = text; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    if (v < min || v > max)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Parses the router configuration; on success *key_file and *engine_config are
 * malloc'd strings the caller frees and *options holds the optional keys given (0 for
 * the others: the engine's defaults). */
static int
parse_config(const char *path, char **key_file, char **engine_config, char **metrics_file,
             router_engine_options *options, char *why, size_t why_len)
{
    char *text = NULL, *line, *next, *eq, *name, *value, **slot;
    uint32_t *field;
    size_t len = 0, k;
    int lineno = 0, ret = -1, masks_given = 0;

    *key_file = NULL;
    *engine_config = NULL;
    memset(options, 0, sizeof(*options));
    options->aes_masks = 1;
    if (read_small_file(path, ROUTER_CONFIG_MAX, NOT_WRITABLE, &text, &len, why, why_len,
                        "router configuration") != 0)
        goto cleanup;
    if (memchr(text, '\0', len) != NULL) {
        snprintf(why, why_len, "router configuration %s contains a NUL byte", path);
        goto cleanup;
    }
    for (line = text; line != NULL; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        line = trim(line);
        if (*line == '\0' || *line == '#')
            continue;
        eq = strchr(line, '=');
        if (eq == NULL) {
            snprintf(why, why_len, "%s line %d: expected \"key = value\"", path, lineno);
            goto cleanup;
        }
        *eq = '\0';
        name = trim(line);
        value = trim(eq + 1);
        for (k = 0; k < sizeof(option_keys) / sizeof(option_keys[0]); k++) {
            if (strcmp(name, option_keys[k].name) == 0)
                break;
        }
        if (k < sizeof(option_keys) / sizeof(option_keys[0])) {
            field = (uint32_t *)((char *)options + option_keys[k].offset);
            if (*field != 0) {
                snprintf(why, why_len, "%s line %d: %s given twice", path, lineno, name);
                goto cleanup;
            }
            if (parse_u32(value, option_keys[k].min, option_keys[k].max, field) != 0) {
                snprintf(why, why_len, "%s line %d: %s must be an integer in %u..%u", path,
                         lineno, name, option_keys[k].min, option_keys[k].max);
                goto cleanup;
            }
            continue;
        }
        if (strcmp(name, "gcm_masks") == 0) {
            if (strcmp(value, "local") != 0 && strcmp(value, "aes") != 0) {
                snprintf(why, why_len, "%s line %d: gcm_masks must be \"local\" or \"aes\"", path,
                         lineno);
                goto cleanup;
            }
            if (masks_given) {
                snprintf(why, why_len, "%s line %d: gcm_masks given twice", path, lineno);
                goto cleanup;
            }
            masks_given = 1;
            options->aes_masks = strcmp(value, "aes") == 0;
            continue;
        }
        if (strcmp(name, "handle_key_file") == 0) {
            slot = key_file;
        } else if (strcmp(name, "engine_config") == 0) {
            slot = engine_config;
        } else if (strcmp(name, "metrics_file") == 0) {
            slot = metrics_file;
        } else {
            snprintf(why, why_len, "%s line %d: unknown key \"%.64s\"", path, lineno, name);
            goto cleanup;
        }
        if (*slot != NULL) {
            snprintf(why, why_len, "%s line %d: %s given twice", path, lineno, name);
            goto cleanup;
        }
        if (*value != '/') {
            snprintf(why, why_len, "%s line %d: %s must be an absolute path", path, lineno,
                     name);
            goto cleanup;
        }
        *slot = strdup(value);
        if (*slot == NULL) {
            snprintf(why, why_len, "out of memory");
            goto cleanup;
        }
    }
    if (*key_file == NULL || *engine_config == NULL) {
        snprintf(why, why_len, "%s: %s is missing", path,
                 *key_file == NULL ? "handle_key_file" : "engine_config");
        goto cleanup;
    }
    ret = 0;

cleanup:
    free(text);
    if (ret != 0) {
        free(*key_file);
        free(*engine_config);
        free(*metrics_file);
        *key_file = NULL;
        *engine_config = NULL;
        *metrics_file = NULL;
    }
    return ret;
}

int
router_config_load(router_config *out, char *why, size_t why_len)
{
    const char *path = getenv("MPC_ROUTER_CONFIG");
    char *key_file = NULL, *key = NULL;
    size_t key_len = 0;
    int ret = -1;

    memset(out, 0, sizeof(*out));
    if (path == NULL || path[0] == '\0')
        path = ROUTER_DEFAULT_CONFIG;
    if (parse_config(path, &key_file, &out->engine_config, &out->metrics_file, &out->options, why,
                     why_len) != 0)
        goto cleanup;
    if (read_small_file(key_file, MPC_KDB_HANDLE_KEY_LEN, PRIVATE_FILE, &key, &key_len, why,
                        why_len, "handle key file") != 0)
        goto cleanup;
    if (key_len != MPC_KDB_HANDLE_KEY_LEN) {
        snprintf(why, why_len, "handle key file %s must hold exactly %d bytes", key_file,
                 MPC_KDB_HANDLE_KEY_LEN);
        goto cleanup;
    }
    memcpy(out->handle_key, key, MPC_KDB_HANDLE_KEY_LEN);
    ret = 0;

cleanup:
    if (ret != 0)
        router_config_free(out);
    if (key != NULL) {
        OPENSSL_cleanse(key, MPC_KDB_HANDLE_KEY_LEN + 1);
        free(key);
    }
    free(key_file);
    return ret;
}

void
router_config_free(router_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->engine_config);
    free(cfg->metrics_file);
    OPENSSL_cleanse(cfg, sizeof(*cfg));
}
