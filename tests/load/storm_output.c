/* tests/load/storm_output.c - kdc-storm: the progress line, CSV rows and the JSON summary. */
#define _GNU_SOURCE
#include "storm.h"

/* ---- output ------------------------------------------------------------------------- */

void
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

long
second_failed(const struct second *sec)
{
    long total = 0;

    for (int c = 0; c < ERR_CLASSES; c++)
        total += sec->failed[c];
    return total;
}

void
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

void
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
