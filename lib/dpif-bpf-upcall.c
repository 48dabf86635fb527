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

#include <config.h>

#include "dpif-bpf-upcall.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <string.h>

#include "coverage.h"
#include "csum.h"
#include "dp-packet.h"
#include "dpif.h"
#include "dpif-bpf-odp.h"
#include "flow.h"
#include "netlink.h"
#include "odp-util.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "packets.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_upcall);

COVERAGE_DEFINE(dpif_bpf_upcall_lost);
COVERAGE_DEFINE(dpif_bpf_upcall_malformed);
COVERAGE_DEFINE(dpif_bpf_upcall_csum_completed);
COVERAGE_DEFINE(dpif_bpf_upcall_csum_partial_skipped);

/* Pages of each per-CPU ring (a power of 2): 1 MiB with 4 kiB pages, room
 * for a few hundred full-sized packets per CPU. */
#define UPCALL_RING_PAGES 256

struct upcall_handler {
    struct ovs_mutex mutex;
    size_t next_ring OVS_GUARDED;   /* Which of its rings to read first. */
};

struct dpif_bpf_upcalls {
    struct perf_buffer *pb;
    size_t n_rings;

    /* Handlers.  Taken for writing only to change the number of handlers,
     * which ofproto-dpif-upcall does while its handler threads are
     * stopped. */
    struct ovs_rwlock rwlock;
    struct upcall_handler *handlers OVS_GUARDED;
    uint32_t n_handlers OVS_GUARDED;
};

/* A dpif_bpf_upcalls_recv() call under way in this thread: libbpf's
 * callback has only the perf buffer's context, which all the handlers
 * share.  NULL while purging: the records are then dropped. */
struct upcall_request {
    dpif_bpf_upcall_fn *fn;
    void *aux;
    bool taken;                 /* 'fn' took a record. */
};
DEFINE_STATIC_PER_THREAD_DATA(struct upcall_request *, cur_request, NULL);

/* The records of a PERF_EVENT_ARRAY ring (perf_event_open(2)), as the kernel
 * writes them for bpf_perf_event_output() (PERF_SAMPLE_RAW) and for the
 * records it could not write. */
struct upcall_sample {
    struct perf_event_header header;
    uint32_t size;
    uint8_t data[];             /* 4-byte aligned only. */
};

struct upcall_lost {
    struct perf_event_header header;
    uint64_t id;
    uint64_t lost;
};

/* Hands the record 'data' of 'size' bytes, still in its ring, to the
 * request under way.  The header is copied out, to have it aligned; the
 * packet is copied only once, by the request's function, into the packet it
 * builds.  Returns true if the request took the record. */
static bool
upcall_deliver(struct upcall_request *req, const uint8_t *data, uint32_t size)
{
    struct ovs_bpf_upcall up;

    if (size < sizeof up) {
        COVERAGE_INC(dpif_bpf_upcall_malformed);
        return false;
    }
    memcpy(&up, data, sizeof up);
    if (up.cap_len > size - sizeof up
        || up.cap_len > up.pkt_len
        || up.userdata_len > OVS_BPF_USERDATA_LEN
        || up.type < OVS_BPF_UPCALL_MISS
        || up.type > OVS_BPF_UPCALL_L3) {
        COVERAGE_INC(dpif_bpf_upcall_malformed);
        return false;
    }
    if (up.type == OVS_BPF_UPCALL_CT) {
        /* The action slots come between the header and the packet. */
        size_t slots = OVS_BPF_MAX_ACTIONS * sizeof(struct ovs_bpf_action);

        if (size - sizeof up < slots
            || up.cap_len > size - sizeof up - slots
            || up.ct_end > OVS_BPF_MAX_ACTIONS
            || up.ct_slot >= up.ct_end) {
            COVERAGE_INC(dpif_bpf_upcall_malformed);
            return false;
        }
    }
    return req->fn(&up, data + sizeof up, req->aux);
}

/* libbpf's callback for each record of a ring.  Returning
 * LIBBPF_PERF_EVENT_DONE stops reading the ring just after the record: the
 * records behind it stay there for the next call. */
static enum bpf_perf_event_ret
upcall_event_cb(void *ctx OVS_UNUSED, int cpu OVS_UNUSED,
                struct perf_event_header *event)
{
    struct upcall_request *req = *cur_request_get();

    if (event->type == PERF_RECORD_SAMPLE) {
        const struct upcall_sample *s = (const void *) event;

        if (req && s->size <= event->size - sizeof *s
            && upcall_deliver(req, s->data, s->size)) {
            req->taken = true;
            return LIBBPF_PERF_EVENT_DONE;
        }
    } else if (event->type == PERF_RECORD_LOST) {
        /* The kernel reports here the records it could not write into a
         * full ring.  The BPF program already counted each of them in
         * OVS_BPF_STAT_LOST when bpf_perf_event_output() failed, so they
         * are only a coverage counter here. */
        const struct upcall_lost *l = (const void *) event;

        COVERAGE_ADD(dpif_bpf_upcall_lost, l->lost);
    }
    return LIBBPF_PERF_EVENT_CONT;
}

struct dpif_bpf_upcalls *
dpif_bpf_upcalls_create(int perf_map_fd, int *errorp)
{
    struct dpif_bpf_upcalls *u = xzalloc(sizeof *u);
    struct perf_event_attr attr;

    /* What perf_buffer__new() would ask for: one wakeup per record. */
    memset(&attr, 0, sizeof attr);
    attr.config = PERF_COUNT_SW_BPF_OUTPUT;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.sample_type = PERF_SAMPLE_RAW;
    attr.sample_period = 1;
    attr.wakeup_events = 1;

    u->pb = perf_buffer__new_raw(perf_map_fd, UPCALL_RING_PAGES, &attr,
                                 upcall_event_cb, u, NULL);
    if (!u->pb) {
        *errorp = errno;
        VLOG_WARN("cannot open the upcall perf buffer (%s)",
                  ovs_strerror(*errorp));
        free(u);
        return NULL;
    }
    u->n_rings = perf_buffer__buffer_cnt(u->pb);
    ovs_rwlock_init(&u->rwlock);
    *errorp = 0;
    return u;
}

static void
free_handlers(struct dpif_bpf_upcalls *u)
    OVS_REQ_WRLOCK(u->rwlock)
{
    for (uint32_t i = 0; i < u->n_handlers; i++) {
        ovs_mutex_destroy(&u->handlers[i].mutex);
    }
    free(u->handlers);
    u->handlers = NULL;
    u->n_handlers = 0;
}

void
dpif_bpf_upcalls_destroy(struct dpif_bpf_upcalls *u)
{
    if (u) {
        ovs_rwlock_wrlock(&u->rwlock);
        free_handlers(u);
        ovs_rwlock_unlock(&u->rwlock);
        ovs_rwlock_destroy(&u->rwlock);
        perf_buffer__free(u->pb);
        free(u);
    }
}

int
dpif_bpf_upcalls_set_handlers(struct dpif_bpf_upcalls *u, uint32_t n)
{
    ovs_rwlock_wrlock(&u->rwlock);
    free_handlers(u);
    u->n_handlers = n;
    u->handlers = xcalloc(n, sizeof *u->handlers);
    for (uint32_t i = 0; i < n; i++) {
        ovs_mutex_init(&u->handlers[i].mutex);
    }
    ovs_rwlock_unlock(&u->rwlock);
    if (n > u->n_rings) {
        VLOG_INFO("%"PRIu32" upcall handlers for %"PRIuSIZE" upcall rings: "
                  "some handlers will stay idle", n, u->n_rings);
    }
    return 0;
}

int
dpif_bpf_upcalls_recv(struct dpif_bpf_upcalls *u, uint32_t handler_id,
                      dpif_bpf_upcall_fn *fn, void *aux)
{
    struct upcall_request req = { .fn = fn, .aux = aux, .taken = false };
    struct upcall_handler *h;
    size_t n_mine;

    ovs_rwlock_rdlock(&u->rwlock);
    if (handler_id >= u->n_handlers || handler_id >= u->n_rings) {
        goto out;
    }
    h = &u->handlers[handler_id];

    ovs_mutex_lock(&h->mutex);
    *cur_request_get() = &req;
    /* The handler's rings are handler_id + k * n_handlers for k from 0 to
     * 'n_mine' - 1: read them in turn, from the one after the ring that
     * gave the last record, so that a busy ring does not starve the
     * others. */
    n_mine = (u->n_rings - handler_id + u->n_handlers - 1) / u->n_handlers;
    for (size_t i = 0; i < n_mine && !req.taken; i++) {
        size_t k = (h->next_ring + i) % n_mine;

        perf_buffer__consume_buffer(u->pb, handler_id + k * u->n_handlers);
        if (req.taken) {
            h->next_ring = k + 1;
        }
    }
    *cur_request_get() = NULL;
    ovs_mutex_unlock(&h->mutex);

out:
    ovs_rwlock_unlock(&u->rwlock);
    return req.taken ? 0 : EAGAIN;
}

/* Returns true if ring 'i' holds records that were not read yet. */
static bool
ring_has_data(const struct dpif_bpf_upcalls *u, size_t i)
{
    struct perf_event_mmap_page *page;
    void *base;
    size_t size;

    if (perf_buffer__buffer(u->pb, i, &base, &size)) {
        return false;
    }
    page = base;
    return (__atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE)
            != page->data_tail);
}

void
dpif_bpf_upcalls_wait(struct dpif_bpf_upcalls *u, uint32_t handler_id)
{
    ovs_rwlock_rdlock(&u->rwlock);
    if (handler_id < u->n_handlers) {
        for (size_t i = handler_id; i < u->n_rings; i += u->n_handlers) {
            /* The ring's fd is readable only on new records: records left
             * behind by a recv call that stopped early need a wake-up of
             * their own. */
            if (ring_has_data(u, i)) {
                poll_immediate_wake();
            } else {
                poll_fd_wait(perf_buffer__buffer_fd(u->pb, i), POLLIN);
            }
        }
    }
    ovs_rwlock_unlock(&u->rwlock);
}

void
dpif_bpf_upcalls_purge(struct dpif_bpf_upcalls *u)
{
    ovs_rwlock_wrlock(&u->rwlock);
    /* With no request under way, the callback drops the records. */
    *cur_request_get() = NULL;
    perf_buffer__consume(u->pb);
    ovs_rwlock_unlock(&u->rwlock);
}

/* A packet that a local socket sent (out of a veth with TX checksum
 * offload, for instance) is CHECKSUM_PARTIAL in the kernel: its TCP or UDP
 * checksum field holds only the folded pseudo-header sum, and whoever
 * transmits it is to complete it.  The fast path keeps that state with the
 * skb.  An upcall copies only the bytes, with the state in 'up'; the packet
 * that ovs-vswitchd sends back down through the TAP is an ordinary frame,
 * so complete its checksum here, where the kernel says it is, as the device
 * would have done.  'vlan_shift' is the length of the VLAN header pushed
 * back in front of the kernel's offsets.
 *
 * A packet without the flag is left as it is, whatever its checksums: a
 * frame received with a wrong checksum leaves with it, on both paths. */
static void
complete_partial_csum(const struct ovs_bpf_upcall *up,
                      struct dp_packet *packet, size_t vlan_shift)
{
    /* The coverage counters reach the totals only when this handler
     * thread next wakes up; the debug log says it at once. */
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(60, 60);
    size_t start = up->csum_start + vlan_shift;
    size_t field_ofs = start + up->csum_offset;
    uint8_t *data;
    ovs_be16 sum;

    if (!(up->flags & OVS_BPF_UPCALL_F_CSUM_PARTIAL)) {
        return;
    }
    if (up->cap_len != up->pkt_len
        || field_ofs + sizeof sum > dp_packet_size(packet)) {
        /* Cut short by the perf record's size, or offsets that the kernel
         * would not give: nothing we can complete. */
        COVERAGE_INC(dpif_bpf_upcall_csum_partial_skipped);
        VLOG_DBG_RL(&rl, "cannot complete the partial checksum of a "
                    "%"PRIu32"-byte packet (%"PRIu32" bytes went up): "
                    "from offset %"PRIuSIZE", field at %"PRIuSIZE,
                    up->pkt_len, up->cap_len, start, field_ofs);
        return;
    }
    /* The field's pseudo-header sum is part of the sum, and a result of 0
     * is sent as 0xffff, as skb_checksum_help() does for the device.  The
     * kernel does not promise an even 'csum_start'. */
    data = dp_packet_data(packet);
    sum = csum(data + start, dp_packet_size(packet) - start);
    if (!sum) {
        sum = htons(0xffff);
    }
    memcpy(data + field_ofs, &sum, sizeof sum);
    COVERAGE_INC(dpif_bpf_upcall_csum_completed);
    VLOG_DBG_RL(&rl, "completed the partial checksum of a %"PRIu32"-byte "
                "packet: from offset %"PRIuSIZE", field at %"PRIuSIZE,
                up->pkt_len, start, field_ofs);
}

void
dpif_bpf_upcall_packet(const struct ovs_bpf_upcall *up, const void *data,
                       struct dp_packet *packet, struct flow *flow)
{
    struct pkt_metadata *md = &packet->md;
    size_t vlan_shift = 0;

    dp_packet_init(packet, up->cap_len + VLAN_HEADER_LEN);
    /* Headroom for the VLAN tag pushed below and for actions. */
    dp_packet_reserve(packet, VLAN_HEADER_LEN);
    dp_packet_put(packet, data, up->cap_len);

    /* The kernel moves the outer VLAN tag of a received frame into skb
     * metadata before TC sees it; OVS wants it back in the packet, with
     * the bytes it had.  (eth_push_vlan() clears the DEI bit, VLAN_CFI,
     * which means "present" in struct flow: it is put back.) */
    if (up->vlan_proto && up->cap_len >= ETH_HEADER_LEN) {
        struct vlan_eth_header *veh;

        eth_push_vlan(packet, up->vlan_proto, up->vlan_tci);
        veh = dp_packet_data(packet);
        veh->veth_tci = up->vlan_tci;
        vlan_shift = VLAN_HEADER_LEN;
    }
    complete_partial_csum(up, packet, vlan_shift);

    pkt_metadata_init(md, u32_to_odp(up->in_port));
    md->recirc_id = up->recirc_id;
    md->dp_hash = up->dp_hash;
    md->skb_priority = up->skb_priority;
    md->pkt_mark = up->skb_mark;
    dpif_bpf_key_meta_to_md(up->key_meta, md);

    flow_extract(packet, flow);
}

/* Finds the TCP header of 'packet', an Ethernet frame: IPv4 (not a
 * fragment) or IPv6 (TCP as its first next header), behind any number of
 * VLAN tags.  Stores the offsets of its IP and TCP headers, the TCP
 * header's length and the end of the IP packet (the frame's end if the
 * frame is shorter: an upcall cut at OVS_BPF_UPCALL_MAX_CAP bytes) and
 * returns true; returns false if the packet is anything else. */
static bool
gso_parse(const struct dp_packet *packet, size_t *l3p, size_t *l4p,
          size_t *tcp_hlenp, size_t *endp)
{
    const uint8_t *data = dp_packet_data(packet);
    size_t size = dp_packet_size(packet);
    size_t ofs = 2 * ETH_ADDR_LEN;
    const struct tcp_header *tcp;
    size_t l3, l4, end;
    ovs_be16 type;

    for (;;) {
        if (size < ofs + sizeof type) {
            return false;
        }
        memcpy(&type, data + ofs, sizeof type);
        ofs += sizeof type;
        if (type != htons(ETH_TYPE_VLAN_8021Q)
            && type != htons(ETH_TYPE_VLAN_8021AD)) {
            break;
        }
        ofs += 2;               /* The TCI. */
    }
    l3 = ofs;
    if (type == htons(ETH_TYPE_IP)) {
        const struct ip_header *ip = (const void *) (data + l3);

        if (size < l3 + IP_HEADER_LEN
            || IP_VER(ip->ip_ihl_ver) != 4
            || ip->ip_proto != IPPROTO_TCP
            || IP_IS_FRAGMENT(ip->ip_frag_off)
            || IP_IHL(ip->ip_ihl_ver) * 4 < IP_HEADER_LEN) {
            return false;
        }
        l4 = l3 + IP_IHL(ip->ip_ihl_ver) * 4;
        end = l3 + ntohs(ip->ip_tot_len);
    } else if (type == htons(ETH_TYPE_IPV6)) {
        const struct ovs_16aligned_ip6_hdr *ip6 = (const void *) (data + l3);

        if (size < l3 + IPV6_HEADER_LEN
            || ip6->ip6_nxt != IPPROTO_TCP) {
            return false;
        }
        l4 = l3 + IPV6_HEADER_LEN;
        end = l4 + ntohs(ip6->ip6_plen);
    } else {
        return false;
    }
    if (size < l4 + TCP_HEADER_LEN) {
        return false;
    }
    tcp = ALIGNED_CAST(const struct tcp_header *, data + l4);
    *tcp_hlenp = TCP_OFFSET(tcp->tcp_ctl) * 4;
    if (*tcp_hlenp < TCP_HEADER_LEN || size < l4 + *tcp_hlenp
        || end < l4 + *tcp_hlenp) {
        return false;
    }
    *l3p = l3;
    *l4p = l4;
    *endp = MIN(end, size);
    return true;
}

/* Returns the MRU of the packet of upcall 'up', 'packet' (as made by
 * dpif_bpf_upcall_packet()): the IP length of each segment of a GSO TCP
 * packet, 0 for any other packet (which goes down as it came up). */
unsigned int
dpif_bpf_upcall_mru(const struct ovs_bpf_upcall *up,
                    const struct dp_packet *packet)
{
    size_t l3, l4, tcp_hlen, end;

    if (!up->gso_size
        || !gso_parse(packet, &l3, &l4, &tcp_hlen, &end)) {
        return 0;
    }
    return MIN(l4 - l3 + tcp_hlen + up->gso_size, UINT16_MAX);
}

/* If 'packet' is a TCP packet longer than 'mru' (its IP length), cuts it
 * into segments of at most 'mru' bytes as the kernel's TCP segmentation
 * would (sequence numbers, IPv4 IDs, lengths, FIN and PSH on the last
 * segment only, CWR on the first only, full checksums), passes each to
 * 'fn' (which may not keep it) and returns true.  Returns false, having
 * called nothing, for any other packet. */
bool
dpif_bpf_gso_segment(const struct dp_packet *packet, unsigned int mru,
                     void (*fn)(const struct dp_packet *seg, void *aux),
                     void *aux)
{
    const uint8_t *data = dp_packet_data(packet);
    size_t l3, l4, tcp_hlen, end, mss, ofs;
    const struct tcp_header *tcp;
    const struct ip_header *ip;
    struct dp_packet seg;
    uint16_t ip_id;
    bool is_ipv4;
    uint32_t seq;

    if (!mru || !gso_parse(packet, &l3, &l4, &tcp_hlen, &end)
        || end - l3 <= mru || mru <= l4 - l3 + tcp_hlen) {
        return false;
    }
    mss = mru - (l4 - l3 + tcp_hlen);
    tcp = ALIGNED_CAST(const struct tcp_header *, data + l4);
    seq = ntohl(get_16aligned_be32(&tcp->tcp_seq));
    ip = ALIGNED_CAST(const struct ip_header *, data + l3);
    is_ipv4 = IP_VER(ip->ip_ihl_ver) == 4;
    ip_id = is_ipv4 ? ntohs(ip->ip_id) : 0;

    dp_packet_init(&seg, l4 + tcp_hlen + mss);
    seg.md = packet->md;
    for (ofs = l4 + tcp_hlen; ofs < end; ofs += mss, ip_id++) {
        size_t n = MIN(mss, end - ofs);
        size_t tcp_len = tcp_hlen + n;
        struct tcp_header *stcp;
        uint8_t *p;
        uint16_t flags;

        dp_packet_clear(&seg);
        dp_packet_put(&seg, data, l4 + tcp_hlen);
        dp_packet_put(&seg, data + ofs, n);
        p = dp_packet_data(&seg);
        stcp = ALIGNED_CAST(struct tcp_header *, p + l4);

        put_16aligned_be32(&stcp->tcp_seq,
                           htonl(seq + (ofs - (l4 + tcp_hlen))));
        flags = TCP_FLAGS(stcp->tcp_ctl);
        if (ofs + n < end) {
            flags &= ~(TCP_FIN | TCP_PSH);
        }
        if (ofs != l4 + tcp_hlen) {
            flags &= ~TCP_CWR;
        }
        stcp->tcp_ctl = TCP_CTL(flags, tcp_hlen / 4);
        stcp->tcp_csum = 0;
        if (is_ipv4) {
            struct ip_header *sip = ALIGNED_CAST(struct ip_header *, p + l3);

            sip->ip_tot_len = htons(l4 - l3 + tcp_len);
            sip->ip_id = htons(ip_id);
            sip->ip_csum = 0;
            sip->ip_csum = csum(sip, l4 - l3);
            stcp->tcp_csum = csum_finish(
                csum_continue(packet_csum_pseudoheader(sip), stcp, tcp_len));
        } else {
            struct ovs_16aligned_ip6_hdr *ip6 = (void *) (p + l3);

            ip6->ip6_plen = htons(tcp_len);
            stcp->tcp_csum = packet_csum_upperlayer6(ip6, stcp, IPPROTO_TCP,
                                                     tcp_len);
        }
        fn(&seg, aux);
    }
    dp_packet_uninit(&seg);
    return true;
}

int
dpif_bpf_upcall_to_dpif(const struct ovs_bpf_upcall *up, const void *data,
                        struct dpif_upcall *upcall, struct ofpbuf *buf,
                        struct flow *flow)
{
    struct odp_flow_key_parms parms;
    size_t key_ofs, mru_ofs = 0;
    unsigned int mru;

    memset(upcall, 0, sizeof *upcall);
    switch (up->type) {
    case OVS_BPF_UPCALL_MISS:
        upcall->type = DPIF_UC_MISS;
        break;
    case OVS_BPF_UPCALL_ACTION:
        upcall->type = DPIF_UC_ACTION;
        break;
    default:
        return EINVAL;
    }

    dpif_bpf_upcall_packet(up, data, &upcall->packet, flow);

    memset(&parms, 0, sizeof parms);
    parms.flow = flow;
    dpif_bpf_odp_support(&parms.support);

    key_ofs = buf->size;
    odp_flow_key_from_flow(&parms, buf);
    upcall->key_len = buf->size - key_ofs;

    mru = dpif_bpf_upcall_mru(up, &upcall->packet);
    if (mru) {
        mru_ofs = buf->size;
        nl_msg_put_u16(buf, OVS_PACKET_ATTR_MRU, mru);
    }
    if (upcall->type == DPIF_UC_ACTION && up->userdata_len) {
        size_t ud_ofs = buf->size;

        nl_msg_put_unspec(buf, OVS_USERSPACE_ATTR_USERDATA, up->userdata,
                          up->userdata_len);
        upcall->userdata = ofpbuf_at_assert(buf, ud_ofs,
                                            sizeof *upcall->userdata);
    }
    /* 'buf' may have been reallocated by the puts above: point into it only
     * now. */
    upcall->key = ofpbuf_at_assert(buf, key_ofs, upcall->key_len);
    if (mru) {
        upcall->mru = ofpbuf_at_assert(buf, mru_ofs, sizeof *upcall->mru);
    }
    odp_flow_key_hash(upcall->key, upcall->key_len, &upcall->ufid);
    return 0;
}
