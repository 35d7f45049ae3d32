/* tests/load/kdc_storm.c - login storms: thousands of concurrent AS (and optionally TGS)
 * exchanges from one process against one KDC, open or closed loop.
 *
 *   kdc-storm run --keytab KT [--kdc HOST:PORT] (--rate R | --concurrency C)
 *                 [--duration S] [--count N] [--tgs SERVICE] [--transport udp|tcp]
 *                 [--udp-timeout S] [--retries K] [--timeout S] [--max-inflight M]
 *                 [--seed X] [--principal-limit P] [--csv FILE] [--json FILE] [--quiet]
 *   kdc-storm keytab --out KT --prefix P --count N --password PW [--realm R]
 *                 [--enctypes E1,E2] [--kvno V]
 *
 * Configuration: the client side of libkrb5 (KRB5_CONFIG); the KDC address is --kdc or the
 * first `kdc` of the default realm in [realms]. No KDC locator, no DNS: every request goes
 * to that one address, so the figures measure one KDC.
 *
 * `run` logs in as every principal of the keytab in turn. Each login is a libkrb5
 * krb5_init_creds context stepped by hand (krb5_init_creds_step), so libkrb5 builds every
 * request and decrypts and checks every reply exactly as kinit would; only the transport is
 * ours: non-blocking UDP and TCP sockets under one epoll loop. With --tgs, a login also asks
 * for a ticket to SERVICE with the new TGT (krb5_tkt_creds_step). UDP requests are sent
 * again after --udp-timeout, doubling, at most --retries times; a KDC answer
 * KRB_ERR_RESPONSE_TOO_BIG moves the rest of that login to TCP, as libkrb5 does.
 *
 * Open loop (--rate): logins arrive as a Poisson process of rate R whatever the KDC does;
 * latency counts from the arrival, so waiting for a free slot (--max-inflight) is included.
 * Closed loop (--concurrency): C logins in flight, a new one as soon as one ends.
 * Arrivals stop after --duration seconds or --count logins, whichever comes first; logins
 * still in flight then get --timeout seconds to finish.
 *
 * Failures are counted by class: timeout (no reply in time), kdc (a KRB-ERROR the login
 * cannot continue from, counted per error code), decode (a reply libkrb5 rejected:
 * malformed, failed integrity, mismatched), network (send, connect or a TCP stream broken)
 * and other (local errors). Output: a progress line per second on stderr, one CSV row per
 * second (--csv), and a JSON summary on stdout (and --json). Exit status 1 if any login
 * failed or never started, 2 on usage or set-up errors.
 *
 * `keytab` writes a keytab for principals P0..P(N-1) with keys derived from one password
 * with each principal's default salt, i.e. the keys `addprinc -pw PW` gives them.
 */
#define _GNU_SOURCE
#include "storm.h"

/* ---- command line ------------------------------------------------------------------- */

void
usage(FILE *out)
{
    fprintf(out,
            "usage: kdc-storm run --keytab KT [--kdc HOST:PORT] (--rate R | --concurrency C)\n"
            "                 [--duration S] [--count N] [--tgs SERVICE] [--transport udp|tcp]\n"
            "                 [--udp-timeout S] [--retries K] [--timeout S] [--max-inflight M]\n"
            "                 [--seed X] [--principal-limit P] [--csv FILE] [--json FILE]\n"
            "                 [--quiet]\n"
            "       kdc-storm keytab --out KT --prefix P --count N --password PW [--realm R]\n"
            "                 [--enctypes E1,E2] [--kvno V]\n");
}

int
parse_double(const char *text, const char *name, double min, double max, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(text, &end);
    if (errno || *end || !(*out >= min && *out <= max)) {
        fprintf(stderr, "kdc-storm: %s must be %g..%g\n", name, min, max);
        return -1;
    }
    return 0;
}

int
parse_run(int argc, char **argv, struct options *o)
{
    static const struct option long_options[] = {
        { "keytab", required_argument, NULL, 'k' },      { "kdc", required_argument, NULL, 'K' },
        { "rate", required_argument, NULL, 'r' },        { "concurrency", required_argument, NULL, 'c' },
        { "duration", required_argument, NULL, 'd' },    { "count", required_argument, NULL, 'n' },
        { "tgs", required_argument, NULL, 'g' },         { "transport", required_argument, NULL, 'T' },
        { "udp-timeout", required_argument, NULL, 'u' }, { "retries", required_argument, NULL, 'R' },
        { "timeout", required_argument, NULL, 't' },     { "max-inflight", required_argument, NULL, 'm' },
        { "seed", required_argument, NULL, 's' },        { "csv", required_argument, NULL, 'C' },
        { "json", required_argument, NULL, 'j' },        { "quiet", no_argument, NULL, 'q' },
        { "principal-limit", required_argument, NULL, 'P' },
        { NULL, 0, NULL, 0 }
    };
    double value;
    int c;

    memset(o, 0, sizeof(*o));
    o->udp_timeout = 1.0;
    o->retries = 2;
    o->timeout = 10.0;
    o->max_inflight = 4096;
    o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    optind = 2;
    while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        switch (c) {
        case 'k': o->keytab = optarg; break;
        case 'K': o->kdc = optarg; break;
        case 'g': o->tgs = optarg; break;
        case 'C': o->csv = optarg; break;
        case 'j': o->json = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'T':
            if (strcmp(optarg, "udp") != 0 && strcmp(optarg, "tcp") != 0) {
                fprintf(stderr, "kdc-storm: --transport is udp or tcp\n");
                return -1;
            }
            o->force_tcp = strcmp(optarg, "tcp") == 0;
            break;
        case 'r':
            if (parse_double(optarg, "--rate", 0.001, 1e7, &o->rate))
                return -1;
            break;
        case 'c':
            if (parse_double(optarg, "--concurrency", 1, 100000, &value))
                return -1;
            o->concurrency = (int)value;
            break;
        case 'd':
            if (parse_double(optarg, "--duration", 0.001, 1e6, &o->duration))
                return -1;
            break;
        case 'n':
            if (parse_double(optarg, "--count", 1, 1e12, &value))
                return -1;
            o->count = (long)value;
            break;
        case 'u':
            if (parse_double(optarg, "--udp-timeout", 0.001, 600, &o->udp_timeout))
                return -1;
            break;
        case 'R':
            if (parse_double(optarg, "--retries", 0, 100, &value))
                return -1;
            o->retries = (int)value;
            break;
        case 't':
            if (parse_double(optarg, "--timeout", 0.001, 3600, &o->timeout))
                return -1;
            break;
        case 'm':
            if (parse_double(optarg, "--max-inflight", 1, 100000, &value))
                return -1;
            o->max_inflight = (int)value;
            break;
        case 'P':
            if (parse_double(optarg, "--principal-limit", 1, 1e7, &value))
                return -1;
            o->principal_limit = (int)value;
            break;
        case 's':
            if (parse_double(optarg, "--seed", 0, 1.8e19, &value))
                return -1;
            o->seed = (uint64_t)value;
            break;
        default: usage(stderr); return -1;
        }
    }
    if (o->keytab == NULL || (o->rate > 0) == (o->concurrency > 0)) {
        fprintf(stderr, "kdc-storm run: need --keytab and exactly one of --rate, --concurrency\n");
        return -1;
    }
    if (o->duration == 0 && o->count == 0) {
        fprintf(stderr, "kdc-storm run: need --duration or --count (or both)\n");
        return -1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    struct options o;

    if (argc >= 2 && strcmp(argv[1], "run") == 0) {
        if (parse_run(argc, argv, &o) != 0)
            return 2;
        return run(&o);
    }
    if (argc >= 2 && strcmp(argv[1], "keytab") == 0)
        return make_keytab(argc, argv);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
