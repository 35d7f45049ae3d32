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
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <krb5/krb5.h>
#include <profile.h>

#define MAX_UDP_REPLY 65536
#define MAX_TCP_REPLY (1024 * 1024)
#define KDC_ERROR_CODES 128
#define TIMER_TICK_S 0.005
#define QUANTILE_STEPS 1000
#define QUARANTINE_S 60.0

enum error_class { ERR_TIMEOUT, ERR_KDC, ERR_DECODE, ERR_NETWORK, ERR_OTHER, ERR_CLASSES };
static const char *const class_names[ERR_CLASSES] = { "timeout", "kdc", "decode", "network",
                                                      "other" };

enum slot_state { SLOT_FREE, SLOT_AS, SLOT_TGS };
enum io_state { IO_IDLE, IO_UDP_WAIT, IO_TCP_CONNECT, IO_TCP_WRITE, IO_TCP_READ };

struct options {
    const char *keytab;
    const char *kdc;
    const char *tgs;
    const char *csv;
    const char *json;
    double rate;
    int concurrency;
    double duration;
    long count;
    int force_tcp;
    double udp_timeout;
    int retries;
    double timeout;
    int max_inflight;
    int principal_limit;
    uint64_t seed;
    int quiet;
};

struct slot {
    enum slot_state state;
    enum io_state io;
    krb5_init_creds_context icc;
    krb5_tkt_creds_context tcc;
    krb5_ccache ccache;
    int fd;
    int fd_udp;
    /* A UDP socket that carried a retransmission may still receive the answer to the
     * earlier copy; the next request of this slot must not read it, so it gets a new one. */
    int fd_stale;
    int tcp;
    krb5_data request;
    unsigned char *buf;
    size_t buf_len, buf_done;
    long buf_cap;
    double arrival;
    double deadline;
    double resend_at;
    double rto;
    int sends;
};

struct second {
    long offered, started, ok, failed[ERR_CLASSES], retransmits, tcp_fallbacks;
    long lat_begin, lat_end;
    long inflight;
};

struct storm {
    const struct options *o;
    krb5_context context;
    int n_principals;
    krb5_principal *principals;
    krb5_keytab *keytabs;
    krb5_principal service;
    krb5_get_init_creds_opt *gic_opt;
    struct sockaddr_storage kdc_addr;
    socklen_t kdc_addr_len;
    int epfd;

    struct slot *slots;
    int n_slots;
    int *free_slots;
    int n_free;
    int slots_used;             /* slots below this index have been used: the timer scans */
    int inflight;
    long next_principal;

    /* Open loop: arrivals not yet given a slot, oldest first (a ring of arrival times). */
    double *queue;
    long queue_cap, queue_head, queue_len;
    double next_arrival;
    uint64_t rng;

    /* UDP sockets closed while an answer may still come, kept open (outside epoll) for
     * QUARANTINE_S: were one closed, the kernel could give its port to a new socket of
     * another login, which would then receive the late answer meant for this one. */
    struct grave { int fd; double until; } *graves;
    long graves_cap, graves_head, graves_len;

    double now;
    double t0;
    long offered, started, ok, failed[ERR_CLASSES], unstarted;
    long kdc_errors[KDC_ERROR_CODES];
    long kdc_errors_other;
    long retransmits, tcp_fallbacks, udp_sends, tcp_sends;
    char first_error[ERR_CLASSES][256];

    double *lat_ms;
    long lat_len, lat_cap;
    struct second *seconds;
    long n_seconds, seconds_cap;
    unsigned char *rbuf;
    FILE *csv;
};

static double
now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process CPU time (user + system) from /proc/self/stat, in seconds. */
static double
cpu_seconds(void)
{
    char text[2048], *p;
    unsigned long utime = 0, stime = 0;
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n;
    int field;

    if (f == NULL)
        return 0.0;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    /* The command name may hold spaces; fields are counted from its closing parenthesis. */
    p = strrchr(text, ')');
    if (p == NULL)
        return 0.0;
    p += 2;
    for (field = 3; field < 14 && p != NULL; field++) {
        p = strchr(p, ' ');
        if (p != NULL)
            p++;
    }
    if (p == NULL || sscanf(p, "%lu %lu", &utime, &stime) != 2)
        return 0.0;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static uint64_t
next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Exponential gap of a Poisson process of the given rate. */
static double
poisson_gap(uint64_t *state, double rate)
{
    double u = ((double)(next_random(state) >> 11) + 0.5) / 9007199254740992.0;

    return -log(u) / rate;
}

static int
compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
quantile(const double *sorted, long n, double q)
{
    long index;

    if (n == 0)
        return 0.0;
    index = (long)(q * (double)(n - 1) + 0.5);
    return sorted[index];
}

static void *
grow(void *array, long *cap, long need, size_t size)
{
    long new_cap = *cap ? *cap : 1024;
    void *bigger;

    if (need <= *cap)
        return array;
    while (new_cap < need)
        new_cap *= 2;
    bigger = realloc(array, (size_t)new_cap * size);
    if (bigger == NULL) {
        fprintf(stderr, "kdc-storm: out of memory\n");
        exit(2);
    }
    *cap = new_cap;
    return bigger;
}

static void
write_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, out);
    }
    fputc('"', out);
}

/* ---- results ------------------------------------------------------------------------ */

static struct second *
current_second(struct storm *s, double now)
{
    long index = (long)(now - s->t0);

    if (index < 0)
        index = 0;
    s->seconds = grow(s->seconds, &s->seconds_cap, index + 1, sizeof(*s->seconds));
    while (s->n_seconds <= index) {
        struct second *sec = &s->seconds[s->n_seconds++];

        memset(sec, 0, sizeof(*sec));
        sec->lat_begin = sec->lat_end = s->lat_len;
    }
    return &s->seconds[index];
}

static void
record_ok(struct storm *s, double now, double arrival)
{
    struct second *sec = current_second(s, now);

    s->lat_ms = grow(s->lat_ms, &s->lat_cap, s->lat_len + 1, sizeof(*s->lat_ms));
    /* Latencies stay in completion order, so each second owns one contiguous run. */
    s->lat_ms[s->lat_len++] = (now - arrival) * 1000.0;
    sec->lat_end = s->lat_len;
    sec->ok++;
    s->ok++;
}

static void
record_failure(struct storm *s, double now, enum error_class cls, const char *message)
{
    current_second(s, now)->failed[cls]++;
    s->failed[cls]++;
    if (s->first_error[cls][0] == '\0')
        snprintf(s->first_error[cls], sizeof(s->first_error[cls]), "%s", message);
}

static void
record_code_failure(struct storm *s, double now, enum error_class cls, krb5_error_code code,
                    const char *what)
{
    char message[256];
    const char *text = krb5_get_error_message(s->context, code);

    snprintf(message, sizeof(message), "%s: %s", what, text);
    krb5_free_error_message(s->context, text);
    record_failure(s, now, cls, message);
}

/* ---- slots -------------------------------------------------------------------------- */

static void
close_socket(struct slot *slot)
{
    if (slot->fd >= 0)
        close(slot->fd);
    slot->fd = -1;
    slot->fd_stale = 0;
}

static void
release_socket(struct storm *s, struct slot *slot)
{
    struct grave *g;

    if (slot->fd < 0)
        return;
    if (!slot->fd_udp || (!slot->fd_stale && slot->io != IO_UDP_WAIT) || s->graves_cap == 0) {
        close_socket(slot);
        return;
    }
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, slot->fd, NULL);
    if (s->graves_len == s->graves_cap) {
        close(s->graves[s->graves_head].fd);
        s->graves_head = (s->graves_head + 1) % s->graves_cap;
        s->graves_len--;
    }
    g = &s->graves[(s->graves_head + s->graves_len++) % s->graves_cap];
    g->fd = slot->fd;
    g->until = s->now + QUARANTINE_S;
    slot->fd = -1;
    slot->fd_stale = 0;
}

static void
expire_graves(struct storm *s, double now, int all)
{
    while (s->graves_len > 0 && (all || s->graves[s->graves_head].until <= now)) {
        close(s->graves[s->graves_head].fd);
        s->graves_head = (s->graves_head + 1) % s->graves_cap;
        s->graves_len--;
    }
}

static void
end_login(struct storm *s, struct slot *slot)
{
    krb5_init_creds_free(s->context, slot->icc);
    slot->icc = NULL;
    krb5_tkt_creds_free(s->context, slot->tcc);
    slot->tcc = NULL;
    if (slot->ccache != NULL)
        krb5_cc_destroy(s->context, slot->ccache);
    slot->ccache = NULL;
    krb5_free_data_contents(s->context, &slot->request);
    if (slot->tcp || slot->fd_stale || slot->io != IO_IDLE)
        release_socket(s, slot);
    slot->state = SLOT_FREE;
    slot->io = IO_IDLE;
    slot->tcp = 0;
    slot->resend_at = 0.0;
    s->free_slots[s->n_free++] = (int)(slot - s->slots);
    s->inflight--;
}

static void
fail_login(struct storm *s, struct slot *slot, double now, enum error_class cls,
           const char *message)
{
    record_failure(s, now, cls, message);
    end_login(s, slot);
}

static int
watch(struct storm *s, struct slot *slot, uint32_t events, int op)
{
    struct epoll_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.events = events;
    ev.data.u64 = ((uint64_t)(uint32_t)slot->fd << 32) | (uint32_t)(slot - s->slots);
    return epoll_ctl(s->epfd, op, slot->fd, &ev);
}

static int
open_socket(struct storm *s, struct slot *slot, int type)
{
    int one = 1;

    slot->fd = socket(s->kdc_addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (slot->fd < 0)
        return errno;
    slot->fd_udp = type == SOCK_DGRAM;
    if (type == SOCK_STREAM)
        setsockopt(slot->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(slot->fd, (struct sockaddr *)&s->kdc_addr, s->kdc_addr_len) != 0 &&
        errno != EINPROGRESS) {
        int err = errno;

        close_socket(slot);
        return err;
    }
    if (watch(s, slot, type == SOCK_STREAM ? EPOLLOUT : EPOLLIN, EPOLL_CTL_ADD) != 0) {
        int err = errno;

        close_socket(slot);
        return err;
    }
    return 0;
}

/* Sends slot->request: a datagram, or a new TCP connection with the length-prefixed request. */
static void
send_request(struct storm *s, struct slot *slot, double now)
{
    char message[128];
    int err;

    if (slot->tcp) {
        release_socket(s, slot);
        err = open_socket(s, slot, SOCK_STREAM);
        if (err) {
            snprintf(message, sizeof(message), "TCP connect: %s", strerror(err));
            fail_login(s, slot, now, ERR_NETWORK, message);
            return;
        }
        slot->buf = (unsigned char *)grow(slot->buf, &slot->buf_cap,
                                          (long)slot->request.length + 4, 1);
        slot->buf[0] = (unsigned char)(slot->request.length >> 24);
        slot->buf[1] = (unsigned char)(slot->request.length >> 16);
        slot->buf[2] = (unsigned char)(slot->request.length >> 8);
        slot->buf[3] = (unsigned char)slot->request.length;
        memcpy(slot->buf + 4, slot->request.data, slot->request.length);
        slot->buf_len = slot->request.length + 4;
        slot->buf_done = 0;
        slot->io = IO_TCP_CONNECT;
        slot->resend_at = 0.0;
        s->tcp_sends++;
        return;
    }
    if (slot->fd_stale)
        release_socket(s, slot);
    if (slot->fd < 0) {
        err = open_socket(s, slot, SOCK_DGRAM);
        if (err) {
            snprintf(message, sizeof(message), "UDP socket: %s", strerror(err));
            fail_login(s, slot, now, ERR_NETWORK, message);
            return;
        }
    }
    /* A full socket buffer loses the datagram like the network would; the timer resends. */
    if (send(slot->fd, slot->request.data, slot->request.length, 0) < 0 && errno != EAGAIN &&
        errno != ENOBUFS) {
        snprintf(message, sizeof(message), "UDP send: %s", strerror(errno));
        fail_login(s, slot, now, ERR_NETWORK, message);
        return;
    }
    slot->io = IO_UDP_WAIT;
    slot->sends = 1;
    slot->rto = s->o->udp_timeout;
    slot->resend_at = now + slot->rto;
    s->udp_sends++;
}

static void start_tgs(struct storm *s, struct slot *slot, double now);

/* Classifies a failed step: a KRB-ERROR from the KDC by its code, any other reply as
 * rejected by libkrb5 (decode), and no reply at all as a local error. */
static void
fail_step(struct storm *s, struct slot *slot, double now, krb5_error_code code,
          const krb5_data *reply, const char *what)
{
    krb5_error *error = NULL;

    if (reply != NULL && reply->length > 0 && (unsigned char)reply->data[0] == 0x7e &&
        krb5_rd_error(s->context, reply, &error) == 0) {
        if (error->error < KDC_ERROR_CODES)
            s->kdc_errors[error->error]++;
        else
            s->kdc_errors_other++;
        krb5_free_error(s->context, error);
        record_code_failure(s, now, ERR_KDC, code, what);
    } else {
        record_code_failure(s, now, reply != NULL && reply->length > 0 ? ERR_DECODE : ERR_OTHER,
                            code, what);
    }
    end_login(s, slot);
}

/* Feeds a reply (or nothing, to begin) to the slot's libkrb5 context and sends what it asks. */
static void
step(struct storm *s, struct slot *slot, const krb5_data *reply, double now)
{
    krb5_data empty = { 0, 0, NULL }, out = { 0, 0, NULL }, realm = { 0, 0, NULL };
    unsigned int flags = 0;
    krb5_error_code code;

    if (reply == NULL)
        reply = &empty;
    if (slot->state == SLOT_AS)
        code = krb5_init_creds_step(s->context, slot->icc, (krb5_data *)reply, &out, &realm,
                                    &flags);
    else
        code = krb5_tkt_creds_step(s->context, slot->tcc, (krb5_data *)reply, &out, &realm,
                                   &flags);
    krb5_free_data_contents(s->context, &realm);
    krb5_free_data_contents(s->context, &slot->request);
    if (code == KRB5KRB_ERR_RESPONSE_TOO_BIG && !slot->tcp) {
        /* libkrb5 hands back the same request for a resend over TCP. */
        slot->tcp = 1;
        s->tcp_fallbacks++;
        current_second(s, now)->tcp_fallbacks++;
        slot->request = out;
        send_request(s, slot, now);
        return;
    }
    if (code) {
        krb5_free_data_contents(s->context, &out);
        fail_step(s, slot, now, code, reply, slot->state == SLOT_AS ? "AS" : "TGS");
        return;
    }
    if (flags & (slot->state == SLOT_AS ? KRB5_INIT_CREDS_STEP_FLAG_CONTINUE
                                        : KRB5_TKT_CREDS_STEP_FLAG_CONTINUE)) {
        slot->request = out;
        send_request(s, slot, now);
        return;
    }
    krb5_free_data_contents(s->context, &out);
    if (slot->state == SLOT_AS && s->service != NULL) {
        start_tgs(s, slot, now);
        return;
    }
    record_ok(s, now, slot->arrival);
    end_login(s, slot);
}

static void
start_tgs(struct storm *s, struct slot *slot, double now)
{
    krb5_creds tgt, in;
    krb5_error_code code;

    memset(&tgt, 0, sizeof(tgt));
    memset(&in, 0, sizeof(in));
    code = krb5_init_creds_get_creds(s->context, slot->icc, &tgt);
    if (!code)
        code = krb5_cc_new_unique(s->context, "MEMORY", NULL, &slot->ccache);
    if (!code)
        code = krb5_cc_initialize(s->context, slot->ccache, tgt.client);
    if (!code)
        code = krb5_cc_store_cred(s->context, slot->ccache, &tgt);
    if (!code) {
        in.client = tgt.client;
        in.server = s->service;
        code = krb5_tkt_creds_init(s->context, slot->ccache, &in, 0, &slot->tcc);
    }
    krb5_free_cred_contents(s->context, &tgt);
    if (code) {
        record_code_failure(s, now, ERR_OTHER, code, "TGS set-up");
        end_login(s, slot);
        return;
    }
    slot->state = SLOT_TGS;
    slot->tcp = s->o->force_tcp;
    step(s, slot, NULL, now);
}

static void
start_login(struct storm *s, double arrival, double now)
{
    int index = s->free_slots[--s->n_free];
    struct slot *slot = &s->slots[index];
    long p = s->next_principal++ % s->n_principals;
    krb5_error_code code;

    if (index >= s->slots_used)
        s->slots_used = index + 1;
    s->inflight++;
    s->started++;
    current_second(s, now)->started++;
    slot->state = SLOT_AS;
    slot->arrival = arrival;
    slot->deadline = now + s->o->timeout;
    slot->tcp = s->o->force_tcp;
    code = krb5_init_creds_init(s->context, s->principals[p], NULL, NULL, 0, s->gic_opt,
                                &slot->icc);
    if (!code)
        code = krb5_init_creds_set_keytab(s->context, slot->icc, s->keytabs[p]);
    if (code) {
        record_code_failure(s, now, ERR_OTHER, code, "AS set-up");
        end_login(s, slot);
        return;
    }
    step(s, slot, NULL, now);
}

/* ---- I/O events --------------------------------------------------------------------- */

static void
on_udp(struct storm *s, struct slot *slot, double now)
{
    krb5_data reply;
    ssize_t n;

    for (;;) {
        n = recv(slot->fd, s->rbuf, MAX_UDP_REPLY, 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return;
            /* ICMP port unreachable: nobody listens at the KDC address. */
            if (slot->state != SLOT_FREE && slot->io == IO_UDP_WAIT) {
                char message[128];

                snprintf(message, sizeof(message), "UDP receive: %s", strerror(errno));
                fail_login(s, slot, now, ERR_NETWORK, message);
            }
            return;
        }
        if (slot->state == SLOT_FREE || slot->io != IO_UDP_WAIT)
            continue;           /* a late duplicate answer: nobody asked */
        break;
    }
    slot->io = IO_IDLE;
    slot->resend_at = 0.0;
    if (slot->sends > 1)
        slot->fd_stale = 1;
    reply.magic = KV5M_DATA;
    reply.length = (unsigned int)n;
    reply.data = (char *)s->rbuf;
    step(s, slot, &reply, now);
}

static void
on_tcp(struct storm *s, struct slot *slot, uint32_t events, double now)
{
    char message[128];
    ssize_t n;

    if (slot->io == IO_TCP_CONNECT) {
        int err = 0;
        socklen_t len = sizeof(err);

        if (getsockopt(slot->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err) {
            snprintf(message, sizeof(message), "TCP connect: %s", strerror(err));
            fail_login(s, slot, now, ERR_NETWORK, message);
            return;
        }
        if (!(events & EPOLLOUT))
            return;
        slot->io = IO_TCP_WRITE;
    }
    if (slot->io == IO_TCP_WRITE) {
        while (slot->buf_done < slot->buf_len) {
            n = send(slot->fd, slot->buf + slot->buf_done, slot->buf_len - slot->buf_done,
                     MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                    return;
                snprintf(message, sizeof(message), "TCP send: %s", strerror(errno));
                fail_login(s, slot, now, ERR_NETWORK, message);
                return;
            }
            slot->buf_done += (size_t)n;
        }
        slot->io = IO_TCP_READ;
        slot->buf_len = 4;
        slot->buf_done = 0;
        if (watch(s, slot, EPOLLIN, EPOLL_CTL_MOD) != 0) {
            snprintf(message, sizeof(message), "epoll: %s", strerror(errno));
            fail_login(s, slot, now, ERR_OTHER, message);
        }
        return;
    }
    if (slot->io != IO_TCP_READ)
        return;
    for (;;) {
        n = recv(slot->fd, slot->buf + slot->buf_done, slot->buf_len - slot->buf_done, 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return;
            snprintf(message, sizeof(message), "TCP receive: %s", strerror(errno));
            fail_login(s, slot, now, ERR_NETWORK, message);
            return;
        }
        if (n == 0) {
            fail_login(s, slot, now, ERR_NETWORK, "TCP: the KDC closed the connection early");
            return;
        }
        slot->buf_done += (size_t)n;
        if (slot->buf_done < slot->buf_len)
            continue;
        if (slot->buf_len == 4) {
            uint32_t length = ((uint32_t)slot->buf[0] << 24) | ((uint32_t)slot->buf[1] << 16) |
                              ((uint32_t)slot->buf[2] << 8) | slot->buf[3];

            if (length == 0 || length > MAX_TCP_REPLY) {
                snprintf(message, sizeof(message), "TCP: reply length %u out of range", length);
                fail_login(s, slot, now, ERR_DECODE, message);
                return;
            }
            slot->buf = (unsigned char *)grow(slot->buf, &slot->buf_cap,
                                              (long)length + 4, 1);
            slot->buf_len = length + 4;
            continue;
        }
        break;
    }
    {
        krb5_data reply;

        /* One request per connection, as libkrb5 does. */
        close_socket(slot);
        slot->io = IO_IDLE;
        slot->resend_at = 0.0;
        reply.magic = KV5M_DATA;
        reply.length = (unsigned int)(slot->buf_len - 4);
        reply.data = (char *)slot->buf + 4;
        step(s, slot, &reply, now);
    }
}

/* Resends UDP requests whose answer is late and fails logins past their deadline. */
static void
check_timers(struct storm *s, double now)
{
    int i;

    for (i = 0; i < s->slots_used; i++) {
        struct slot *slot = &s->slots[i];

        if (slot->state == SLOT_FREE)
            continue;
        if (now >= slot->deadline) {
            fail_login(s, slot, now, ERR_TIMEOUT, "no answer before the login deadline");
            continue;
        }
        if (slot->io != IO_UDP_WAIT || slot->resend_at == 0.0 || now < slot->resend_at)
            continue;
        if (slot->sends > s->o->retries) {
            fail_login(s, slot, now, ERR_TIMEOUT, "no answer to any UDP retransmission");
            continue;
        }
        if (send(slot->fd, slot->request.data, slot->request.length, 0) < 0 && errno != EAGAIN &&
            errno != ENOBUFS && errno != ECONNREFUSED) {
            char message[128];

            snprintf(message, sizeof(message), "UDP send: %s", strerror(errno));
            fail_login(s, slot, now, ERR_NETWORK, message);
            continue;
        }
        slot->sends++;
        slot->rto *= 2.0;
        slot->resend_at = now + slot->rto;
        s->retransmits++;
        s->udp_sends++;
        current_second(s, now)->retransmits++;
    }
}

/* ---- set-up ------------------------------------------------------------------------- */

static int
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
static int
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
static int
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
static long
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

/* ---- output ------------------------------------------------------------------------- */

static void
second_quantiles(struct storm *s, const struct second *sec, double *p50, double *p99,
                 double *max)
{
    long n = sec->lat_end - sec->lat_begin;
    double *copy;

    *p50 = *p99 = *max = 0.0;
    if (n == 0)
        return;
    copy = malloc((size_t)n * sizeof(*copy));
    if (copy == NULL)
        return;
    memcpy(copy, s->lat_ms + sec->lat_begin, (size_t)n * sizeof(*copy));
    qsort(copy, (size_t)n, sizeof(*copy), compare_doubles);
    *p50 = quantile(copy, n, 0.50);
    *p99 = quantile(copy, n, 0.99);
    *max = copy[n - 1];
    free(copy);
}

static long
second_failed(const struct second *sec)
{
    long total = 0;

    for (int c = 0; c < ERR_CLASSES; c++)
        total += sec->failed[c];
    return total;
}

static void
finish_second(struct storm *s, long index)
{
    struct second *sec = &s->seconds[index];
    double p50, p99, max;

    sec->inflight = s->inflight;
    second_quantiles(s, sec, &p50, &p99, &max);
    if (s->csv != NULL) {
        fprintf(s->csv, "%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%.4f,%.4f,%.4f\n",
                index, sec->offered, sec->started, sec->ok, second_failed(sec),
                sec->failed[ERR_TIMEOUT], sec->failed[ERR_KDC], sec->failed[ERR_DECODE],
                sec->failed[ERR_NETWORK], sec->failed[ERR_OTHER], sec->retransmits,
                sec->tcp_fallbacks, sec->inflight, p50, p99, max);
        fflush(s->csv);
    }
    if (!s->o->quiet) {
        long failed = 0;

        for (int c = 0; c < ERR_CLASSES; c++)
            failed += s->failed[c];
        fprintf(stderr,
                "kdc-storm: %3lds %6ld logins/s  p50 %7.3f ms  p99 %7.3f ms  in flight %5ld  "
                "ok %ld  failed %ld (timeout %ld, kdc %ld, decode %ld, network %ld, other %ld)  "
                "retransmits %ld\n",
                index + 1, sec->ok, p50, p99, sec->inflight, s->ok, failed,
                s->failed[ERR_TIMEOUT], s->failed[ERR_KDC], s->failed[ERR_DECODE],
                s->failed[ERR_NETWORK], s->failed[ERR_OTHER], s->retransmits);
    }
}

static void
write_summary(struct storm *s, FILE *out, double seconds, double active_seconds,
              double cpu)
{
    const struct options *o = s->o;
    double *sorted, mean = 0.0;
    long failed = 0, i;
    int first;

    for (int c = 0; c < ERR_CLASSES; c++)
        failed += s->failed[c];
    sorted = malloc((size_t)(s->lat_len ? s->lat_len : 1) * sizeof(*sorted));
    if (sorted == NULL) {
        fprintf(stderr, "kdc-storm: out of memory\n");
        exit(2);
    }
    if (s->lat_len > 0)
        memcpy(sorted, s->lat_ms, (size_t)s->lat_len * sizeof(*sorted));
    qsort(sorted, (size_t)s->lat_len, sizeof(*sorted), compare_doubles);
    for (i = 0; i < s->lat_len; i++)
        mean += sorted[i];
    mean = s->lat_len ? mean / (double)s->lat_len : 0.0;

    fprintf(out, "{\"mode\": \"%s\", \"rate\": %.3f, \"concurrency\": %d, \"tgs\": %s, "
                 "\"transport\": \"%s\", \"principals\": %d,\n",
            o->rate > 0 ? "open" : "closed", o->rate, o->concurrency, o->tgs ? "true" : "false",
            o->force_tcp ? "tcp" : "udp", s->n_principals);
    fprintf(out, " \"offered\": %ld, \"started\": %ld, \"ok\": %ld, \"failed\": %ld, "
                 "\"unstarted\": %ld,\n",
            s->offered, s->started, s->ok, failed, s->unstarted);
    fprintf(out, " \"errors\": {");
    for (int c = 0; c < ERR_CLASSES; c++)
        fprintf(out, "%s\"%s\": %ld", c ? ", " : "", class_names[c], s->failed[c]);
    fprintf(out, "},\n \"kdc_errors\": {");
    first = 1;
    for (i = 0; i < KDC_ERROR_CODES; i++) {
        if (s->kdc_errors[i]) {
            fprintf(out, "%s\"%ld\": %ld", first ? "" : ", ", i, s->kdc_errors[i]);
            first = 0;
        }
    }
    if (s->kdc_errors_other)
        fprintf(out, "%s\"other\": %ld", first ? "" : ", ", s->kdc_errors_other);
    fprintf(out, "},\n \"first_errors\": {");
    first = 1;
    for (int c = 0; c < ERR_CLASSES; c++) {
        if (s->first_error[c][0] == '\0')
            continue;
        fprintf(out, "%s\"%s\": ", first ? "" : ", ", class_names[c]);
        write_json_string(out, s->first_error[c]);
        first = 0;
    }
    fprintf(out, "},\n \"retransmits\": %ld, \"tcp_fallbacks\": %ld, \"udp_sends\": %ld, "
                 "\"tcp_sends\": %ld,\n",
            s->retransmits, s->tcp_fallbacks, s->udp_sends, s->tcp_sends);
    fprintf(out, " \"seconds\": %.4f, \"active_seconds\": %.4f, \"per_second\": %.2f, "
                 "\"offered_per_second\": %.2f,\n",
            seconds, active_seconds, seconds > 0 ? (double)s->ok / seconds : 0.0,
            active_seconds > 0 ? (double)s->offered / active_seconds : 0.0);
    fprintf(out, " \"cpu_seconds\": %.4f, \"cpu_us_per_login\": %.3f,\n", cpu,
            s->ok + failed ? cpu * 1e6 / (double)(s->ok + failed) : 0.0);
    fprintf(out, " \"p50_ms\": %.4f, \"p90_ms\": %.4f, \"p99_ms\": %.4f, \"p999_ms\": %.4f, "
                 "\"max_ms\": %.4f, \"mean_ms\": %.4f,\n",
            quantile(sorted, s->lat_len, 0.50), quantile(sorted, s->lat_len, 0.90),
            quantile(sorted, s->lat_len, 0.99), quantile(sorted, s->lat_len, 0.999),
            s->lat_len ? sorted[s->lat_len - 1] : 0.0, mean);
    fprintf(out, " \"latency_quantiles_ms\": [");
    for (i = 0; i <= QUANTILE_STEPS; i++)
        fprintf(out, "%s%.4f", i ? ", " : "", quantile(sorted, s->lat_len,
                                                         (double)i / QUANTILE_STEPS));
    fprintf(out, "],\n \"per_second_ok\": [");
    for (i = 0; i < s->n_seconds; i++)
        fprintf(out, "%s%ld", i ? ", " : "", s->seconds[i].ok);
    fprintf(out, "],\n \"per_second_failed\": [");
    for (i = 0; i < s->n_seconds; i++)
        fprintf(out, "%s%ld", i ? ", " : "", second_failed(&s->seconds[i]));
    fprintf(out, "]}\n");
    free(sorted);
}

/* ---- run ---------------------------------------------------------------------------- */

static int
run(const struct options *o)
{
    struct storm st, *s = &st;
    struct epoll_event events[256];
    krb5_error_code code;
    char kdc[256];
    double now, stop_at, drain_until, next_tick, cpu0, active_seconds = 0.0, end;
    long reported = 0;
    int i, n, status = 2, arrivals_done = 0;

    memset(s, 0, sizeof(*s));
    s->o = o;
    s->epfd = -1;
    s->rng = o->seed;
    code = krb5_init_context(&s->context);
    if (code) {
        fprintf(stderr, "kdc-storm: krb5_init_context: %d\n", (int)code);
        return 2;
    }
    if (o->kdc != NULL) {
        snprintf(kdc, sizeof(kdc), "%s", o->kdc);
    } else if (kdc_from_profile(s, kdc, sizeof(kdc)) != 0) {
        fprintf(stderr, "kdc-storm: no --kdc and no kdc for the default realm in the profile\n");
        goto cleanup;
    }
    if (resolve_kdc(s, kdc) != 0 || load_keytab(s, o->keytab) != 0)
        goto cleanup;
    if (o->tgs != NULL && (code = krb5_parse_name(s->context, o->tgs, &s->service)) != 0) {
        fprintf(stderr, "kdc-storm: --tgs %s: %s\n", o->tgs, krb5_get_error_message(s->context, code));
        goto cleanup;
    }
    code = krb5_get_init_creds_opt_alloc(s->context, &s->gic_opt);
    if (code)
        goto cleanup;

    s->n_slots = o->rate > 0 ? o->max_inflight : o->concurrency;
    s->graves_cap = raise_fd_limit(s->n_slots * 4) - s->n_slots - 64;
    if (s->graves_cap < 0)
        s->graves_cap = 0;
    s->graves = s->graves_cap ? calloc((size_t)s->graves_cap, sizeof(*s->graves)) : NULL;
    s->slots = calloc((size_t)s->n_slots, sizeof(*s->slots));
    s->free_slots = calloc((size_t)s->n_slots, sizeof(*s->free_slots));
    s->rbuf = malloc(MAX_UDP_REPLY);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->slots == NULL || s->free_slots == NULL || s->rbuf == NULL || s->epfd < 0) {
        fprintf(stderr, "kdc-storm: set-up failed: %s\n", strerror(errno));
        goto cleanup;
    }
    for (i = s->n_slots - 1; i >= 0; i--) {
        s->slots[i].fd = -1;
        s->free_slots[s->n_free++] = i;
    }
    if (o->csv != NULL) {
        s->csv = fopen(o->csv, "w");
        if (s->csv == NULL) {
            fprintf(stderr, "kdc-storm: %s: %s\n", o->csv, strerror(errno));
            goto cleanup;
        }
        fprintf(s->csv, "second,offered,started,ok,failed,timeouts,kdc_errors,decode_errors,"
                        "network_errors,other_errors,retransmits,tcp_fallbacks,in_flight,"
                        "p50_ms,p99_ms,max_ms\n");
    }

    cpu0 = cpu_seconds();
    s->t0 = now_seconds();
    stop_at = o->duration > 0 ? s->t0 + o->duration : INFINITY;
    drain_until = INFINITY;
    next_tick = s->t0 + TIMER_TICK_S;
    s->next_arrival = s->t0;
    for (;;) {
        double wake;
        struct timespec wait;

        now = s->now = now_seconds();
        if (!arrivals_done && (now >= stop_at || (o->count > 0 && s->offered >= o->count))) {
            arrivals_done = 1;
            active_seconds = now - s->t0;
            drain_until = now + o->timeout + 1.0;
        }
        if (!arrivals_done && o->rate > 0) {
            /* Every arrival that is due, at its own time, even when the loop ran late. */
            while (s->next_arrival <= now && s->next_arrival < stop_at &&
                   (o->count == 0 || s->offered < o->count)) {
                if (s->queue_head + s->queue_len >= s->queue_cap) {
                    if (s->queue_len > 0)
                        memmove(s->queue, s->queue + s->queue_head,
                                (size_t)s->queue_len * sizeof(*s->queue));
                    s->queue_head = 0;
                    s->queue = grow(s->queue, &s->queue_cap, s->queue_len + 1, sizeof(*s->queue));
                }
                s->queue[s->queue_head + s->queue_len++] = s->next_arrival;
                current_second(s, s->next_arrival)->offered++;
                s->offered++;
                s->next_arrival += poisson_gap(&s->rng, o->rate);
            }
        }
        if (o->rate > 0) {
            while (s->queue_len > 0 && s->n_free > 0) {
                double arrival = s->queue[s->queue_head++];

                s->queue_len--;
                start_login(s, arrival, now);
            }
        } else if (!arrivals_done) {
            while (s->n_free > 0 && (o->count == 0 || s->offered < o->count)) {
                current_second(s, now)->offered++;
                s->offered++;
                start_login(s, now, now);
            }
        }
        if (now >= next_tick) {
            check_timers(s, now);
            expire_graves(s, now, 0);
            next_tick = now + TIMER_TICK_S;
        }
        while (reported < (long)(now - s->t0)) {
            current_second(s, now);
            finish_second(s, reported++);
        }
        if (arrivals_done && ((s->inflight == 0 && s->queue_len == 0) || now >= drain_until))
            break;

        wake = next_tick;
        if (!arrivals_done && o->rate > 0 && s->next_arrival < wake)
            wake = s->next_arrival;
        if (s->t0 + (double)(reported + 1) < wake)
            wake = s->t0 + (double)(reported + 1);
        now = now_seconds();
        wake = wake > now ? wake - now : 0.0;
        wait.tv_sec = (time_t)wake;
        wait.tv_nsec = (long)((wake - (double)wait.tv_sec) * 1e9);
        n = epoll_pwait2(s->epfd, events, 256, &wait, NULL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "kdc-storm: epoll_pwait2: %s\n", strerror(errno));
            goto cleanup;
        }
        now = s->now = now_seconds();
        for (i = 0; i < n; i++) {
            uint32_t index = (uint32_t)events[i].data.u64;
            int fd = (int)(events[i].data.u64 >> 32);
            struct slot *slot = &s->slots[index];

            /* An event for a socket this slot has closed since epoll reported it. */
            if (slot->fd != fd)
                continue;
            if (slot->tcp && slot->io >= IO_TCP_CONNECT)
                on_tcp(s, slot, events[i].events, now);
            else
                on_udp(s, slot, now);
        }
    }
    end = s->now = now_seconds();
    /* Logins still in flight past the drain are timeouts; arrivals never started are not. */
    for (i = 0; i < s->n_slots; i++) {
        if (s->slots[i].state != SLOT_FREE)
            fail_login(s, &s->slots[i], end, ERR_TIMEOUT, "still in flight at the end of the run");
    }
    s->unstarted = s->queue_len;
    if (active_seconds == 0.0)
        active_seconds = end - s->t0;
    {
        double cpu = cpu_seconds() - cpu0;
        long last = (long)(end - s->t0);
        long failed = 0;

        current_second(s, end);
        while (reported <= last && reported < s->n_seconds)
            finish_second(s, reported++);
        write_summary(s, stdout, end - s->t0, active_seconds, cpu);
        if (o->json != NULL) {
            FILE *f = fopen(o->json, "w");

            if (f == NULL) {
                fprintf(stderr, "kdc-storm: %s: %s\n", o->json, strerror(errno));
                goto cleanup;
            }
            write_summary(s, f, end - s->t0, active_seconds, cpu);
            fclose(f);
        }
        for (int c = 0; c < ERR_CLASSES; c++)
            failed += s->failed[c];
        status = failed || s->unstarted ? 1 : 0;
    }

cleanup:
    if (s->csv != NULL)
        fclose(s->csv);
    for (i = 0; s->slots != NULL && i < s->n_slots; i++) {
        close_socket(&s->slots[i]);
        free(s->slots[i].buf);
    }
    expire_graves(s, 0.0, 1);
    free(s->graves);
    if (s->epfd >= 0)
        close(s->epfd);
    for (i = 0; i < s->n_principals; i++) {
        if (s->keytabs[i] != NULL)
            krb5_kt_close(s->context, s->keytabs[i]);
        krb5_free_principal(s->context, s->principals[i]);
    }
    free(s->keytabs);
    free(s->principals);
    free(s->slots);
    free(s->free_slots);
    free(s->queue);
    free(s->lat_ms);
    free(s->seconds);
    free(s->rbuf);
    krb5_free_principal(s->context, s->service);
    krb5_get_init_creds_opt_free(s->context, s->gic_opt);
    krb5_free_context(s->context);
    return status;
}

/* ---- keytab generation -------------------------------------------------------------- */

static int
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

static int
put_counted(FILE *f, const krb5_data *d)
{
    return put16(f, d->length) || put_bytes(f, d->data, d->length) ? -1 : 0;
}

/* One entry of a version 0x0502 keytab file (the MIT format, all integers big-endian).
 * Written directly: krb5_kt_add_entry on a FILE keytab rescans the file on every call. */
static int
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

static int
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

/* ---- command line ------------------------------------------------------------------- */

static void
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

static int
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

static int
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
