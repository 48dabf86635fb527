/*
 * Copyright (c) 2026 The ovs-ebpf authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

/* TCP window tracking for ct() (see "TCP windows" in datapath-abi.h).
 *
 * The packets of the connections that ct() tracks in BPF never go through
 * the kernel's nf_conntrack_in(), so the kernel's own window data of a
 * connection (ct->proto.tcp.seen[]) stays empty, and no kfunc or
 * ctnetlink attribute lets us fill it.  We keep our own, per connection, in
 * the 'ct_tcp_win' LRU hash map: for each direction the highest sequence
 * number sent (its end), the highest one the other side allows it to send
 * (the right edge of the window it was offered), the largest window it
 * offered, and its window scale.  The checks and the updates follow the
 * idea of the kernel's TCP tracker (tcp_in_window() of
 * net/netfilter/nf_conntrack_proto_tcp.c, Linux 6.1+), so that a segment
 * gets the ct_state it would get on the kernel datapath:
 *
 *   - a segment that starts beyond the window the receiver offered, by
 *     more than the receiver's largest window, or that acknowledges data
 *     not sent yet: +inv, the connection untouched (the kernel's
 *     NFCT_TCP_INVALID);
 *   - a segment whose data was acknowledged long ago (an old
 *     retransmission), an overly delayed ACK, or one that overshoots the
 *     window by less than a window: accepted (+est) without moving
 *     anything (NFCT_TCP_IGNORE);
 *   - anything else: accepted, and the window data advances.
 *
 * A connection committed by a SYN gets its entry at the commit; one
 * picked up in the middle (a commit of a segment that is not a SYN, as
 * with nf_conntrack_tcp_loose, the default), or whose entry the LRU took
 * back, has none and is not checked: the kernel marks those "be liberal"
 * too.  SACK blocks are not read (the plain ACK is used), which only makes
 * the "overly delayed ACK" case a little wider. */

#ifndef BPF_CT_TCP_WIN_H
#define BPF_CT_TCP_WIN_H 1

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/maps.h"

/* The window data of TCP connections, by zone and original tuple (the key
 * of 'ct_tp_conns' too).  An LRU map: a connection whose entry is taken
 * back by newer ones is no longer checked, never wrongly +inv. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __type(key, struct ovs_bpf_ct_tp_conn);
    __type(value, struct ovs_bpf_tcp_win);
    __uint(max_entries, OVS_BPF_MAX_CT_TCP_WIN);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ct_tcp_win SEC(".maps");

/* The locks of the entries of 'ct_tcp_win', by a hash of their key: both
 * directions of a connection, on two CPUs, update the same entry. */
#define OVS_BPF_CT_TCP_WIN_LOCKS 1024

struct ovs_bpf_ct_tcp_win_lock {
    struct bpf_spin_lock lock;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_ct_tcp_win_lock);
    __uint(max_entries, OVS_BPF_CT_TCP_WIN_LOCKS);
} ct_tcp_win_locks SEC(".maps");

/* The lock of the entry of 'ct_tcp_win' whose key is 'key'. */
static __always_inline struct ovs_bpf_ct_tcp_win_lock *
ovs_bpf_tcpw_lock_of(const struct ovs_bpf_ct_tp_conn *key)
{
    __u32 h = key->src[0] ^ key->dst[0] ^ key->src[3] ^ key->dst[3]
              ^ ((__u32) key->src_port << 16) ^ key->dst_port ^ key->zone;

    h ^= h >> 16;
    h = (h ^ (h >> 8)) % OVS_BPF_CT_TCP_WIN_LOCKS;
    return bpf_map_lookup_elem(&ct_tcp_win_locks, &h);
}

/* What the window check says of a segment. */
enum ovs_bpf_tcpw_verdict {
    OVS_BPF_TCPW_ACCEPT,        /* In the window; the window data moved. */
    OVS_BPF_TCPW_IGNORE,        /* Accepted, nothing moved (nor may the
                                 * connection's state). */
    OVS_BPF_TCPW_INVALID,       /* +inv. */
};

/* What the window check needs of a TCP segment. */
struct ovs_bpf_tcpw_seg {
    __u32 seq;                  /* Sequence number. */
    __u32 ack;                  /* Acknowledgment number. */
    __u32 end;                  /* seq + data length (+1 for SYN, FIN). */
    __u32 win;                  /* Window field, not scaled. */
    __u16 flags;                /* OVS_BPF_TCP_*, host order. */
    __s16 wscale;               /* A SYN's window scale option, -1: none. */
};

/* Sequence number comparisons, modulo 2**32. */
static __always_inline bool
ovs_bpf_seq_before(__u32 a, __u32 b)
{
    return (__s32) (a - b) < 0;
}

static __always_inline bool
ovs_bpf_seq_after(__u32 a, __u32 b)
{
    return (__s32) (b - a) < 0;
}

/* The lowest ACK that is not "overly delayed", as the kernel allows: a
 * window back, at least 66000 bytes. */
static __always_inline __u32
ovs_bpf_tcpw_max_ack_win(const struct ovs_bpf_tcp_win_dir *d)
{
    return d->maxwin > 66000 ? d->maxwin : 66000;
}

/* Starts the window data of direction 'snd' from its SYN (or SYN-ACK)
 * 'g'; 'rcv' is the other direction.  Window scaling holds only if both
 * sides sent the option (RFC 7323), so the second SYN settles it. */
static __always_inline void
ovs_bpf_tcpw_init(struct ovs_bpf_tcp_win_dir *snd,
                  struct ovs_bpf_tcp_win_dir *rcv,
                  const struct ovs_bpf_tcpw_seg *g)
{
    snd->end = snd->maxend = g->end;
    snd->maxwin = g->win ? g->win : 1;
    snd->scale = g->wscale >= 0 ? g->wscale : 0;
    snd->flags = g->wscale >= 0 ? OVS_BPF_TCPW_F_SCALE : 0;
    if (rcv->maxwin && !(snd->flags & rcv->flags & OVS_BPF_TCPW_F_SCALE)) {
        snd->scale = rcv->scale = 0;
    }
}

/* Checks segment 'g' of a connection in TCP state 'state' (enum
 * ovs_bpf_tcp_state) against the window data of its direction 'snd' and
 * of the other one 'rcv', and moves them on if it is accepted. */
static __always_inline enum ovs_bpf_tcpw_verdict
ovs_bpf_tcpw_move(struct ovs_bpf_tcp_win_dir *snd,
                  struct ovs_bpf_tcp_win_dir *rcv,
                  const struct ovs_bpf_tcpw_seg *g, bool reply, __u8 state)
{
    bool syn = g->flags & OVS_BPF_TCP_SYN;
    bool has_ack = g->flags & OVS_BPF_TCP_ACK;
    __u32 seq = g->seq, ack = g->ack, end = g->end, win = g->win;
    bool in_rcv_win;

    if (!snd->maxwin) {
        if (syn) {
            /* The SYN-ACK (or the other side's SYN of a simultaneous
             * open). */
            ovs_bpf_tcpw_init(snd, rcv, g);
            if (!has_ack) {
                return OVS_BPF_TCPW_ACCEPT;
            }
        } else {
            /* This direction's first segment is not a SYN (its SYN-ACK
             * was not seen): take what the segment says. */
            __u32 swin = win << snd->scale;

            snd->end = end;
            snd->maxwin = swin ? swin : 1;
            snd->maxend = end + snd->maxwin;
            if (!rcv->maxwin) {
                rcv->end = rcv->maxend = ack;
            } else if (ack == rcv->end + 1) {
                rcv->end++;     /* The answer to a keepalive. */
            }
        }
    } else if (syn && ovs_bpf_seq_after(end, snd->end)
               && (state == OVS_BPF_TCPS_SYN_SENT
                   || state == OVS_BPF_TCPS_SYN_RECV)) {
        /* A new SYN (or SYN-ACK) while the connection opens: it starts
         * this direction afresh (RFC 793, a reinitialized TCP). */
        ovs_bpf_tcpw_init(snd, rcv, g);
        if (reply && !has_ack) {
            return OVS_BPF_TCPW_ACCEPT;
        }
    }

    if (!has_ack
        || ((g->flags & OVS_BPF_TCP_RST) && !ack)) {
        /* No ACK (or the zero ACK of an RST from some stacks): as if it
         * acknowledged what the other side sent. */
        ack = rcv->end;
    }
    if ((g->flags & OVS_BPF_TCP_RST) && !seq
        && state == OVS_BPF_TCPS_SYN_SENT) {
        /* The RST that answers a SYN. */
        seq = end = snd->end;
    }

    in_rcv_win = (!rcv->maxwin
                  || ovs_bpf_seq_after(end, snd->end - rcv->maxwin - 1));
    if (!ovs_bpf_seq_before(seq, snd->maxend + 1)) {
        /* It starts beyond the window it was offered.  A sender that
         * overshoots it by less than the receiver's largest window, with
         * an ACK that is fine, is let through; its end is noted, so that
         * the receiver's ACK of it is not "over the upper bound". */
        if (rcv->maxwin && in_rcv_win
            && end - snd->maxend + 1 <= rcv->maxwin
            && ovs_bpf_seq_before(ack, rcv->end + 1)
            && ovs_bpf_seq_after(ack, rcv->end
                                      - ovs_bpf_tcpw_max_ack_win(snd) - 1)) {
            snd->end = end;
            return OVS_BPF_TCPW_IGNORE;
        }
        return OVS_BPF_TCPW_INVALID;
    }
    if (!ovs_bpf_seq_before(ack, rcv->end + 1)) {
        return OVS_BPF_TCPW_INVALID;    /* It acknowledges unsent data. */
    }
    if (!in_rcv_win
        || !ovs_bpf_seq_after(ack,
                              rcv->end - ovs_bpf_tcpw_max_ack_win(snd) - 1)) {
        /* Already acknowledged data sent again, or an overly delayed
         * ACK. */
        return OVS_BPF_TCPW_IGNORE;
    }

    /* In the window.  The window of a SYN is never scaled. */
    if (!syn) {
        win <<= snd->scale;
    }
    if (snd->maxwin < win) {
        snd->maxwin = win;
    }
    if (ovs_bpf_seq_after(end, snd->end)) {
        snd->end = end;
    }
    if (rcv->maxwin && ovs_bpf_seq_after(end, snd->maxend)) {
        rcv->maxwin += end - snd->maxend;
    }
    if (ovs_bpf_seq_after(ack + win, rcv->maxend - 1)) {
        rcv->maxend = ack + win + !win;
    }
    return OVS_BPF_TCPW_ACCEPT;
}

/* A walk along the options of a SYN, for ovs_bpf_tcpw_opt_step(). */
struct ovs_bpf_tcpw_opts {
    __u8 o[40];                 /* The options, 'len' bytes of them. */
    __u32 len;
    __u32 off;                  /* Of the next option. */
    __s32 wscale;               /* The window scale option, -1: none. */
    struct ovs_bpf_tcp_win empty;   /* Zero, never written: a new entry of
                                     * 'ct_tcp_win' before its SYN fills it
                                     * (a value on the stack would not fit
                                     * beside ct()'s). */
};

/* One option.  A bpf_loop() callback, which the verifier checks once (a
 * plain loop over the options takes it down every path of every
 * iteration): returns 1 to stop the walk. */
struct ovs_bpf_tcpw_walk {
    struct ovs_bpf_tcpw_opts *w;    /* bpf_loop() wants a stack pointer. */
};

static long
ovs_bpf_tcpw_opt_step(__u32 i, void *walk_)
{
    struct ovs_bpf_tcpw_walk *walk = walk_;
    struct ovs_bpf_tcpw_opts *w = walk->w;
    __u32 off;
    __u8 kind, len;

    if (!w) {
        return 1;
    }
    off = w->off;
    if (off >= w->len || off >= sizeof w->o - 1) {
        return 1;
    }
    kind = w->o[off];
    if (kind == 0) {
        return 1;               /* End of options. */
    } else if (kind == 1) {
        w->off = off + 1;       /* No operation: one byte. */
        return 0;
    }
    len = w->o[off + 1];
    if (len < 2) {
        return 1;               /* A bad length. */
    }
    if (kind == 3 && len == 3 && off + 2 < w->len && off + 2 < sizeof w->o) {
        w->wscale = w->o[off + 2] > 14 ? 14 : w->o[off + 2];
        return 1;
    }
    w->off = off + len;
    return 0;
}

/* The walk's state, off the stack: ct() itself has little stack left. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_tcpw_opts);
    __uint(max_entries, 1);
} ct_tcp_win_opts SEC(".maps");

/* The window scale option of a SYN whose options are the 'len' bytes at
 * offset 'ofs' of the packet, or -1 if it has none. */
static __always_inline int
ovs_bpf_tcpw_wscale(struct __sk_buff *skb, __u32 ofs, __u32 len)
{
    struct ovs_bpf_tcpw_walk walk;
    struct ovs_bpf_tcpw_opts *w;
    __u32 zero = 0;

    w = bpf_map_lookup_elem(&ct_tcp_win_opts, &zero);
    if (!w || !len || len > sizeof w->o) {
        return -1;
    }
    if (bpf_skb_load_bytes(skb, ofs, w->o, len)) {
        return -1;
    }
    w->len = len;
    w->off = 0;
    w->wscale = -1;
    walk.w = w;
    bpf_loop(sizeof w->o, ovs_bpf_tcpw_opt_step, &walk, 0);
    return w->wscale;
}

/* The largest offset of a TCP header that ovs_bpf_tcpw_load() reads in
 * place (a bound for the verifier: any header behind an Ethernet header,
 * VLAN tags, an IP header with options or IPv6 extension headers). */
#define OVS_BPF_TCPW_DIRECT_MAX 1024

/* Reads the first 16 bytes of the TCP header at offset 'l4' of 'skb' into
 * 'h', and the IP length field of the IPv4 ('ipv6' false) or IPv6 header
 * at offset 'l3' into '*len'.  In place, with two loads, when the bytes
 * are in the linear part of the packet (the usual case), else with
 * bpf_skb_load_bytes(): the two helper calls cost about as much as the
 * window check's own work.  Returns false if the bytes are not there. */
static __always_inline bool
ovs_bpf_tcpw_load(struct __sk_buff *skb, __u32 l3, __u32 l4, bool ipv6,
                  __be32 h[4], __be16 *len)
{
    void *data = (void *) (long) skb->data;
    void *end = (void *) (long) skb->data_end;
    __u32 lofs = l3 + (ipv6 ? 4 : 2);

    if (l4 < OVS_BPF_TCPW_DIRECT_MAX && lofs < l4) {
        const __u8 *th = data + l4;
        const __u8 *lp = data + lofs;

        if ((const void *) (th + 16) <= end
            && (const void *) (lp + 2) <= end) {
            __builtin_memcpy(h, th, 16);
            __builtin_memcpy(len, lp, 2);
            return true;
        }
    }
    return !bpf_skb_load_bytes(skb, l4, h, 16)
           && !bpf_skb_load_bytes(skb, lofs, len, sizeof *len);
}

/* Reads into '*g' the TCP segment of 's' (flags from its key, 'ipv6' or
 * IPv4), parsing a SYN's options.  Returns false if the headers cannot be
 * read or do not add up: the segment is then not checked. */
static __always_inline bool
ovs_bpf_tcpw_read(struct __sk_buff *skb, const struct ovs_bpf_scratch *s,
                  bool ipv6, struct ovs_bpf_tcpw_seg *g)
{
    __u32 l3 = s->l3_ofs, l4 = s->l4_ofs, ip_len, hlen;
    __be32 h[4];                /* Ports, seq, ack, offset-flags-window. */
    __be16 len;
    __u32 w3;

    if (!l4 || l4 <= l3 || !ovs_bpf_tcpw_load(skb, l3, l4, ipv6, h, &len)) {
        return false;
    }
    w3 = bpf_ntohl(h[3]);
    hlen = (w3 >> 28) * 4;
    /* The bytes from the TCP header to the end of the IP payload (the
     * packet may have Ethernet padding after it). */
    ip_len = bpf_ntohs(len);
    if (ipv6) {
        ip_len = ip_len ? ip_len + 40 - (l4 - l3) : skb->len - l4;
    } else {
        ip_len -= l4 - l3;
    }
    if (hlen < 20 || ip_len < hlen || ip_len > 0x10000) {
        return false;
    }
    g->seq = bpf_ntohl(h[1]);
    g->ack = bpf_ntohl(h[2]);
    g->flags = bpf_ntohs(s->key.tcp_flags) & 0xfff;
    g->win = w3 & 0xffff;
    g->end = g->seq + (ip_len - hlen)
             + !!(g->flags & OVS_BPF_TCP_SYN) + !!(g->flags & OVS_BPF_TCP_FIN);
    g->wscale = (g->flags & OVS_BPF_TCP_SYN
                 ? ovs_bpf_tcpw_wscale(skb, l4 + 20, hlen - 20) : -1);
    return true;
}

/* True if TCP windows are checked (ovs-appctl dpctl/ct-enable-tcp-seq-chk,
 * the default). */
static __always_inline bool
ovs_bpf_tcpw_enabled(void)
{
    const struct ovs_bpf_dp_config *cfg = ovs_bpf_config_get();

    return !cfg || !cfg->ct_tcp_liberal;
}

/* Checks the TCP segment of 's' ('ipv6' or IPv4, in the reply direction if
 * bit 8 of 'reply_state' is set, else the original one) of the connection
 * whose key in 'ct_tcp_win' is 'key' and whose state is the low 8 bits of
 * 'reply_state', and moves its window data on; returns an enum
 * ovs_bpf_tcpw_verdict.  A connection without window data is not checked.
 *
 * This and ovs_bpf_tcpw_commit() are global functions, which the verifier
 * checks once, on their own: inlined into ct(), each of their outcomes
 * multiplied the paths of what follows them (the ct program took five
 * times the instructions to verify, 4.4 s instead of 0.5 s). */
__attribute__((noinline)) int
ovs_bpf_tcpw_check(struct __sk_buff *skb, const struct ovs_bpf_scratch *s,
                   const struct ovs_bpf_ct_tp_conn *key, __u32 ipv6,
                   __u32 reply_state)
{
    bool reply = reply_state >> 8;
    __u8 state = reply_state;
    struct ovs_bpf_ct_tcp_win_lock *lock;
    struct ovs_bpf_tcp_win_dir *snd, *rcv;
    enum ovs_bpf_tcpw_verdict v;
    struct ovs_bpf_tcpw_seg g;
    struct ovs_bpf_tcp_win *w;

    if (!skb || !s || !key) {
        return OVS_BPF_TCPW_ACCEPT;
    }
    w = bpf_map_lookup_elem(&ct_tcp_win, key);
    if (!w || !ovs_bpf_tcpw_read(skb, s, ipv6, &g)) {
        return OVS_BPF_TCPW_ACCEPT;
    }
    lock = ovs_bpf_tcpw_lock_of(key);
    if (!lock) {
        return OVS_BPF_TCPW_ACCEPT;     /* Cannot happen: an array. */
    }
    snd = reply ? &w->dir[1] : &w->dir[0];
    rcv = reply ? &w->dir[0] : &w->dir[1];
    bpf_spin_lock(&lock->lock);
    v = ovs_bpf_tcpw_move(snd, rcv, &g, reply, state);
    bpf_spin_unlock(&lock->lock);
    if (v == OVS_BPF_TCPW_INVALID) {
        if (!ovs_bpf_tcpw_enabled()) {
            /* As the kernel's nf_conntrack_tcp_be_liberal: accepted, but
             * what is out of the window moves nothing. */
            return OVS_BPF_TCPW_IGNORE;
        }
        ovs_bpf_count(OVS_BPF_STAT_CT_TCP_WINDOW);
    }
    return v;
}

/* Gives the connection of 'key' that the TCP segment of 's' just created
 * by a commit its window data: from the segment if it is a SYN, none if
 * it is picked up in the middle (not checked, as the kernel does). */
__attribute__((noinline)) int
ovs_bpf_tcpw_commit(struct __sk_buff *skb, const struct ovs_bpf_scratch *s,
                    const struct ovs_bpf_ct_tp_conn *key, __u32 ipv6)
{
    struct ovs_bpf_tcpw_opts *o;
    struct ovs_bpf_tcpw_seg g;
    struct ovs_bpf_tcp_win *w;
    __u32 zero = 0;

    if (!skb || !s || !key) {
        return 0;
    }
    if ((s->key.tcp_flags & bpf_htons(OVS_BPF_TCP_SYN | OVS_BPF_TCP_ACK))
        != bpf_htons(OVS_BPF_TCP_SYN)
        || !ovs_bpf_tcpw_read(skb, s, ipv6, &g)) {
        bpf_map_delete_elem(&ct_tcp_win, key);
        return 0;
    }
    /* A zeroed entry, then filled in place. */
    o = bpf_map_lookup_elem(&ct_tcp_win_opts, &zero);
    if (!o || bpf_map_update_elem(&ct_tcp_win, key, &o->empty, BPF_ANY)) {
        return 0;
    }
    w = bpf_map_lookup_elem(&ct_tcp_win, key);
    if (w) {
        ovs_bpf_tcpw_init(&w->dir[0], &w->dir[1], &g);
    }
    return 0;
}
/* How long a move of a connection's TCP state, taken up by a packet for
 * ovs-vswitchd to write, keeps the packets that ask the same move in BPF:
 * longer than ovs-vswitchd takes to write a state on a busy machine, and
 * short enough that a move whose upcall was lost (its ring full) is asked
 * again soon by the packets that follow. */
#define OVS_BPF_TCP_MOVE_WAIT_NS 1000000000ULL

/* True if the packet of 's', of the connection whose key in 'ct_tcp_win'
 * is 'key', is to go up for ovs-vswitchd to write the move of the TCP
 * state that it asks: from the state in bits 0-7 of 'move' to the state
 * in bits 8-15, in the reply direction if bit 16 is set.
 *
 * Until ovs-vswitchd writes a state, the connection shows the one before
 * to every packet, and each of the packets that follow the one that moved
 * it asks the same move: the data right behind the handshake's last ACK,
 * a burst behind a FIN.  Those go up only to find the move done.  So the
 * first packet that asks a move records it in the connection's window
 * data, and for OVS_BPF_TCP_MOVE_WAIT_NS a packet that asks the same one
 * stays in BPF, counted as ct_tcp_state_pending, if it would not move the
 * new state any further (ovs-vswitchd, which moves a state from the one
 * the connection has when it writes, would have nothing to write for it);
 * one that would (a FIN of each side in a simultaneous close) goes up.  A
 * connection without window data (picked up in the middle, or taken back
 * by the LRU) has nothing recorded: all its moves go up. */
__attribute__((noinline)) int
ovs_bpf_tcpw_move_up(const struct ovs_bpf_scratch *s,
                     const struct ovs_bpf_ct_tp_conn *key, __u32 move)
{
    __u8 old = move, new = move >> 8, again;
    struct ovs_bpf_ct_tcp_win_lock *lock;
    struct ovs_bpf_tcp_win *w;
    bool up = true;
    __u64 now;

    if (!s || !key) {
        return true;
    }
    again = ovs_bpf_tcp_next(new, (move >> 16) & 1,
                             bpf_ntohs(s->key.tcp_flags));
    if (again != OVS_BPF_TCPS_KEEP && again != new) {
        return true;
    }
    w = bpf_map_lookup_elem(&ct_tcp_win, key);
    lock = ovs_bpf_tcpw_lock_of(key);
    if (!w || !lock) {
        return true;
    }
    /* No helper call while the lock is held. */
    now = bpf_ktime_get_ns();
    bpf_spin_lock(&lock->lock);
    if (w->move_old == old && w->move_new == new
        && now - w->move_ns < OVS_BPF_TCP_MOVE_WAIT_NS) {
        up = false;
    } else {
        w->move_old = old;
        w->move_new = new;
        w->move_ns = now;
    }
    bpf_spin_unlock(&lock->lock);
    if (!up) {
        ovs_bpf_count(OVS_BPF_STAT_CT_TCP_STATE_PENDING);
    }
    return up;
}
#endif /* BPF_CT_TCP_WIN_H */
