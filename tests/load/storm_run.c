/* tests/load/storm_run.c - kdc-storm: `kdc-storm run`: the storm from first arrival to last reply. */
#define _GNU_SOURCE
#include "storm.h"

/* ---- run ---------------------------------------------------------------------------- */

int
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
