/* tests/load/storm_results.c - kdc-storm: per-second counts, latencies and failures by class. */
#define _GNU_SOURCE
#include "storm.h"

/* ---- results ------------------------------------------------------------------------ */

struct second *
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

void
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

void
record_failure(struct storm *s, double now, enum error_class cls, const char *message)
{
    current_second(s, now)->failed[cls]++;
    s->failed[cls]++;
    if (s->first_error[cls][0] == '\0')
        snprintf(s->first_error[cls], sizeof(s->first_error[cls]), "%s", message);
}

void
record_code_failure(struct storm *s, double now, enum error_class cls, krb5_error_code code,
                    const char *what)
{
    char message[256];
    const char *text = krb5_get_error_message(s->context, code);

    snprintf(message, sizeof(message), "%s: %s", what, text);
    krb5_free_error_message(s->context, text);
    record_failure(s, now, cls, message);
}
