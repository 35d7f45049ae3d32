/* tests/load/storm_io.c - kdc-storm: the epoll loop's socket events. */
#define _GNU_SOURCE
#include "storm.h"

/* ---- I/O events --------------------------------------------------------------------- */

void
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

void
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
void
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
