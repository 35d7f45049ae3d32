/* tests/load/kdc_load.c - drives many AS or TGS exchanges per process against a KDC and
 * reports their latency and rate, for benchmarks and load tests.
 *
 *   kdc_load as  --principal P (--password PW | --keytab KT) [--count N] [--threads T] [--pause-ms M]
 *   kdc_load tgs --principal P (--password PW | --keytab KT) --service S [--count N] [--threads T]
 *                [--pause-ms M]
 *
 * Each thread has its own krb5_context and memory credential cache, so the numbers measure
 * the KDC (and the client library), not process start-up. An AS exchange is a full
 * krb5_get_init_creds_* (with the preauth round trip the KDC asks for); a TGS exchange is
 * a krb5_get_credentials for S with a TGT from one AS exchange, never answered from the
 * cache. The KDC comes from the usual client configuration (KRB5_CONFIG). With --pause-ms, each
 * thread waits M ms after each exchange: users arriving at a steady pace rather than one after
 * the other, so the latency measured is that of a KDC that is not saturated.
 *
 * Output: one JSON object on stdout: exchanges, failures, seconds, rate, and latency
 * percentiles in milliseconds. Exit status 1 if any exchange failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <krb5/krb5.h>

enum mode { MODE_AS, MODE_TGS };

struct options {
    enum mode mode;
    const char *principal;
    const char *password;
    const char *keytab;
    const char *service;
    long count;
    int threads;
    long pause_ms;
};

struct worker {
    const struct options *options;
    long count;
    double *latencies_ms;
    long done;
    long failures;
    char first_error[256];
};

static double
now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
note_error(struct worker *w, krb5_context context, krb5_error_code code, const char *what)
{
    const char *message;

    w->failures++;
    if (w->first_error[0] != '\0')
        return;
    message = krb5_get_error_message(context, code);
    snprintf(w->first_error, sizeof(w->first_error), "%s: %s", what, message);
    krb5_free_error_message(context, message);
}

/* One AS exchange: initial credentials for the client principal, kept in memory only. */
static krb5_error_code
as_exchange(krb5_context context, krb5_principal client, const struct options *o,
            krb5_keytab keytab, krb5_creds *creds_out)
{
    krb5_get_init_creds_opt *opt = NULL;
    krb5_error_code code;

    code = krb5_get_init_creds_opt_alloc(context, &opt);
    if (code)
        return code;
    if (keytab != NULL)
        code = krb5_get_init_creds_keytab(context, creds_out, client, keytab, 0, NULL, opt);
    else
        code = krb5_get_init_creds_password(context, creds_out, client, o->password, NULL, NULL,
                                            0, NULL, opt);
    krb5_get_init_creds_opt_free(context, opt);
    return code;
}

static void *
run_worker(void *arg)
{
    struct worker *w = arg;
    const struct options *o = w->options;
    krb5_context context = NULL;
    krb5_principal client = NULL, service = NULL;
    krb5_keytab keytab = NULL;
    krb5_ccache ccache = NULL;
    krb5_creds tgt, in, *out;
    krb5_error_code code;
    long i;

    memset(&tgt, 0, sizeof(tgt));
    code = krb5_init_context(&context);
    if (code) {
        w->failures = w->count;
        snprintf(w->first_error, sizeof(w->first_error), "krb5_init_context: %d", (int)code);
        return NULL;
    }
    code = krb5_parse_name(context, o->principal, &client);
    if (!code && o->keytab != NULL)
        code = krb5_kt_resolve(context, o->keytab, &keytab);
    if (!code && o->mode == MODE_TGS) {
        code = krb5_parse_name(context, o->service, &service);
        if (!code)
            code = krb5_cc_new_unique(context, "MEMORY", NULL, &ccache);
        if (!code)
            code = krb5_cc_initialize(context, ccache, client);
        if (!code)
            code = as_exchange(context, client, o, keytab, &tgt);
        if (!code)
            code = krb5_cc_store_cred(context, ccache, &tgt);
    }
    if (code) {
        note_error(w, context, code, "set-up");
        w->failures = w->count;
        goto cleanup;
    }

    for (i = 0; i < w->count; i++) {
        double start = now_seconds();

        if (o->mode == MODE_AS) {
            krb5_creds creds;

            memset(&creds, 0, sizeof(creds));
            code = as_exchange(context, client, o, keytab, &creds);
            krb5_free_cred_contents(context, &creds);
        } else {
            memset(&in, 0, sizeof(in));
            in.client = client;
            in.server = service;
            out = NULL;
            /* KRB5_GC_NO_STORE: every call is a TGS exchange, none is served from the cache. */
            code = krb5_get_credentials(context, KRB5_GC_NO_STORE, ccache, &in, &out);
            krb5_free_creds(context, out);
        }
        if (code) {
            note_error(w, context, code, o->mode == MODE_AS ? "AS exchange" : "TGS exchange");
            continue;
        }
        w->latencies_ms[w->done++] = (now_seconds() - start) * 1000.0;
        if (o->pause_ms > 0) {
            struct timespec pause = { o->pause_ms / 1000, (o->pause_ms % 1000) * 1000000L };

            while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
                ;
        }
    }

cleanup:
    krb5_free_cred_contents(context, &tgt);
    if (ccache != NULL)
        krb5_cc_destroy(context, ccache);
    if (keytab != NULL)
        krb5_kt_close(context, keytab);
    krb5_free_principal(context, service);
    krb5_free_principal(context, client);
    krb5_free_context(context);
    return NULL;
}

static int
compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
percentile(const double *sorted, long n, double p)
{
    long index;

    if (n == 0)
        return 0.0;
    index = (long)(p / 100.0 * (double)(n - 1) + 0.5);
    return sorted[index];
}

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: kdc_load as|tgs --principal P (--password PW | --keytab KT)\n"
            "                [--service S (tgs)] [--count N] [--threads T] [--pause-ms M]\n"
            "Runs N exchanges spread over T threads, each thread waiting M ms after each,\n"
            "and prints a JSON summary.\n");
}

static int
parse(int argc, char **argv, struct options *o)
{
    static const struct option long_options[] = {
        { "principal", required_argument, NULL, 'p' }, { "password", required_argument, NULL, 'w' },
        { "keytab", required_argument, NULL, 'k' },    { "service", required_argument, NULL, 's' },
        { "count", required_argument, NULL, 'n' },     { "threads", required_argument, NULL, 't' },
        { "pause-ms", required_argument, NULL, 'm' },  { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    char *end;
    int c;

    memset(o, 0, sizeof(*o));
    o->count = 1000;
    o->threads = 1;
    if (argc < 2) {
        usage(stderr);
        return -1;
    }
    if (strcmp(argv[1], "as") == 0) {
        o->mode = MODE_AS;
    } else if (strcmp(argv[1], "tgs") == 0) {
        o->mode = MODE_TGS;
    } else {
        usage(strcmp(argv[1], "--help") == 0 ? stdout : stderr);
        return strcmp(argv[1], "--help") == 0 ? 1 : -1;
    }
    optind = 2;
    while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        switch (c) {
        case 'p': o->principal = optarg; break;
        case 'w': o->password = optarg; break;
        case 'k': o->keytab = optarg; break;
        case 's': o->service = optarg; break;
        case 'n':
            errno = 0;
            o->count = strtol(optarg, &end, 10);
            if (errno || *end || o->count < 1 || o->count > 100000000) {
                fprintf(stderr, "kdc_load: --count must be 1..100000000\n");
                return -1;
            }
            break;
        case 't':
            errno = 0;
            o->threads = (int)strtol(optarg, &end, 10);
            if (errno || *end || o->threads < 1 || o->threads > 1024) {
                fprintf(stderr, "kdc_load: --threads must be 1..1024\n");
                return -1;
            }
            break;
        case 'm':
            errno = 0;
            o->pause_ms = strtol(optarg, &end, 10);
            if (errno || *end || o->pause_ms < 0 || o->pause_ms > 60000) {
                fprintf(stderr, "kdc_load: --pause-ms must be 0..60000\n");
                return -1;
            }
            break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return -1;
        }
    }
    if (o->principal == NULL || (o->password == NULL) == (o->keytab == NULL)) {
        fprintf(stderr, "kdc_load: need --principal and exactly one of --password, --keytab\n");
        return -1;
    }
    if (o->mode == MODE_TGS && o->service == NULL) {
        fprintf(stderr, "kdc_load: tgs needs --service\n");
        return -1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    struct options o;
    struct worker *workers;
    pthread_t *threads;
    double *all, start, seconds;
    long done = 0, failures = 0, offset = 0;
    const char *first_error = "";
    int i, parsed;

    parsed = parse(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;

    workers = calloc((size_t)o.threads, sizeof(*workers));
    threads = calloc((size_t)o.threads, sizeof(*threads));
    all = calloc((size_t)o.count, sizeof(*all));
    if (workers == NULL || threads == NULL || all == NULL) {
        fprintf(stderr, "kdc_load: out of memory\n");
        return 2;
    }
    for (i = 0; i < o.threads; i++) {
        workers[i].options = &o;
        workers[i].count = o.count / o.threads + (i < o.count % o.threads ? 1 : 0);
        workers[i].latencies_ms = all + offset;
        offset += workers[i].count;
    }

    start = now_seconds();
    for (i = 0; i < o.threads; i++) {
        if (pthread_create(&threads[i], NULL, run_worker, &workers[i]) != 0) {
            fprintf(stderr, "kdc_load: pthread_create failed\n");
            return 2;
        }
    }
    for (i = 0; i < o.threads; i++)
        pthread_join(threads[i], NULL);
    seconds = now_seconds() - start;

    /* Compact every thread's latencies to the front, then sort them all. */
    for (i = 0; i < o.threads; i++) {
        memmove(all + done, workers[i].latencies_ms, (size_t)workers[i].done * sizeof(*all));
        done += workers[i].done;
        failures += workers[i].failures;
        if (first_error[0] == '\0' && workers[i].first_error[0] != '\0')
            first_error = workers[i].first_error;
    }
    qsort(all, (size_t)done, sizeof(*all), compare_doubles);

    printf("{\"mode\": \"%s\", \"threads\": %d, \"exchanges\": %ld, \"failures\": %ld, "
           "\"seconds\": %.4f, \"per_second\": %.1f, \"p50_ms\": %.4f, \"p90_ms\": %.4f, "
           "\"p99_ms\": %.4f, \"max_ms\": %.4f, \"first_error\": \"",
           o.mode == MODE_AS ? "as" : "tgs", o.threads, done, failures, seconds,
           seconds > 0 ? (double)done / seconds : 0.0, percentile(all, done, 50),
           percentile(all, done, 90), percentile(all, done, 99), done ? all[done - 1] : 0.0);
    for (const char *p = first_error; *p; p++) {
        if (*p == '"' || *p == '\\')
            putchar('\\');
        if ((unsigned char)*p >= 0x20)
            putchar(*p);
    }
    printf("\"}\n");

    free(all);
    free(threads);
    free(workers);
    return failures ? 1 : 0;
}
