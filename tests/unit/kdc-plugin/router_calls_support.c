/* tests/unit/kdc-plugin/router_calls_support.c - router_calls_test's shared state and helpers. */

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

krb5_context ctx;
void *k5crypto;
void *k5krb5;
int failures;
int checks;

/* libk5crypto's own definition of name, bypassing the router. */
void *
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
void
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

/* An error with the router's message containing want. */
void
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

void
write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) != 0) {
        perror(path);
        exit(2);
    }
}

int
data_eq(const krb5_data *a, const krb5_data *b)
{
    return a->length == b->length && memcmp(a->data, b->data, a->length) == 0;
}

/* True when all n bytes of p are zero. */
int
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
