/* tests/load/storm_slots.c - kdc-storm: login slots: arrivals, AS and TGS steps, retransmissions, timeouts. */
#define _GNU_SOURCE
#include "storm.h"

/* ---- slots -------------------------------------------------------------------------- */

void
close_socket(struct slot *slot)
{
    if (slot->fd >= 0)
        close(slot->fd);
    slot->fd = -1;
    slot->fd_stale = 0;
}

void
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

void
expire_graves(struct storm *s, double now, int all)
{
    while (s->graves_len > 0 && (all || s->graves[s->graves_head].until <= now)) {
        close(s->graves[s->graves_head].fd);
        s->graves_head = (s->graves_head + 1) % s->graves_cap;
        s->graves_len--;
    }
}

void
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

void
fail_login(struct storm *s, struct slot *slot, double now, enum error_class cls,
           const char *message)
{
    record_failure(s, now, cls, message);
    end_login(s, slot);
}

int
watch(struct storm *s, struct slot *slot, uint32_t events, int op)
{
    struct epoll_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.events = events;
    ev.data.u64 = ((uint64_t)(uint32_t)slot->fd << 32) | (uint32_t)(slot - s->slots);
    return epoll_ctl(s->epfd, op, slot->fd, &ev);
}

int
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
void
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


/* Classifies a failed step: a KRB-ERROR from the KDC by its code, any other reply as
 * rejected by libkrb5 (decode), and no reply at all as a local error. */
void
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
void
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

void
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

void
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
