/* tests/load/storm.h - what the parts of kdc-storm share: its limits, the state of a storm
 * (options, login slots, per-second counts, latencies) and each part's functions. The
 * program is described in kdc_storm.c. */
#ifndef KDC_STORM_H
#define KDC_STORM_H

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
extern const char *const class_names[ERR_CLASSES];

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

double now_seconds(void);
double cpu_seconds(void);
uint64_t next_random(uint64_t *state);
double poisson_gap(uint64_t *state, double rate);
int compare_doubles(const void *a, const void *b);
double quantile(const double *sorted, long n, double q);
void *grow(void *array, long *cap, long need, size_t size);
void write_json_string(FILE *out, const char *s);
struct second *current_second(struct storm *s, double now);
void record_ok(struct storm *s, double now, double arrival);
void record_failure(struct storm *s, double now, enum error_class cls, const char *message);
void record_code_failure(struct storm *s, double now, enum error_class cls, krb5_error_code code,
                    const char *what);
void close_socket(struct slot *slot);
void release_socket(struct storm *s, struct slot *slot);
void expire_graves(struct storm *s, double now, int all);
void end_login(struct storm *s, struct slot *slot);
void fail_login(struct storm *s, struct slot *slot, double now, enum error_class cls,
           const char *message);
int watch(struct storm *s, struct slot *slot, uint32_t events, int op);
int open_socket(struct storm *s, struct slot *slot, int type);
void send_request(struct storm *s, struct slot *slot, double now);
void fail_step(struct storm *s, struct slot *slot, double now, krb5_error_code code,
          const krb5_data *reply, const char *what);
void step(struct storm *s, struct slot *slot, const krb5_data *reply, double now);
void start_tgs(struct storm *s, struct slot *slot, double now);
void start_login(struct storm *s, double arrival, double now);
void on_udp(struct storm *s, struct slot *slot, double now);
void on_tcp(struct storm *s, struct slot *slot, uint32_t events, double now);
void check_timers(struct storm *s, double now);
int resolve_kdc(struct storm *s, const char *kdc);
int kdc_from_profile(struct storm *s, char *out, size_t size);
int load_keytab(struct storm *s, const char *name);
long raise_fd_limit(long needed);
void second_quantiles(struct storm *s, const struct second *sec, double *p50, double *p99,
                 double *max);
long second_failed(const struct second *sec);
void finish_second(struct storm *s, long index);
void write_summary(struct storm *s, FILE *out, double seconds, double active_seconds,
              double cpu);
int run(const struct options *o);
int put_bytes(FILE *f, const void *data, size_t len);
int put_counted(FILE *f, const krb5_data *d);
int write_entry(FILE *f, krb5_principal p, uint32_t kvno, const krb5_keyblock *key);
int make_keytab(int argc, char **argv);
void usage(FILE *out);
int parse_double(const char *text, const char *name, double min, double max, double *out);
int parse_run(int argc, char **argv, struct options *o);

#endif
