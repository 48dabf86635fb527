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
#include "openvswitch/list.h"
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
COVERAGE_DEFINE(dpif_bpf_upcall_queue_full);
COVERAGE_DEFINE(dpif_bpf_upcall_csum_completed);
COVERAGE_DEFINE(dpif_bpf_upcall_csum_partial_skipped);

/* Pages of each per-CPU ring (a power of 2): 1 MiB with 4 kiB pages, room
 * for a few hundred full-sized packets per CPU. */
#define UPCALL_RING_PAGES 256

/* Records a handler may have read from its rings but not yet returned.
 * libbpf's consume call empties a ring in one go, so a handler queue can
 * hold up to a ring's worth of records; the bound only protects against a
 * handler that stopped reading. */
#define UPCALL_QUEUE_MAX 4096

struct upcall_record {
    struct ovs_list node;
    size_t size;
    uint8_t data[];             /* struct ovs_bpf_upcall + packet. */
};

struct upcall_handler {
    struct ovs_mutex mutex;
    struct ovs_list queue OVS_GUARDED;  /* Contains struct upcall_record. */
    size_t n_queued OVS_GUARDED;
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

    atomic_uint64_t n_lost;     /* Dropped for a full handler queue. */
};

/* The handler that is consuming rings in this thread: libbpf's callbacks
 * have only the perf buffer's context, which all the handlers share. */
DEFINE_STATIC_PER_THREAD_DATA(struct upcall_handler *, cur_handler, NULL);

static void
upcall_sample_cb(void *ctx, int cpu OVS_UNUSED, void *data, uint32_t size)
{
    struct dpif_bpf_upcalls *u = ctx;
    struct upcall_handler *h = *cur_handler_get();
    struct upcall_record *rec;

    if (!h) {
        /* Purge. */
        return;
    }
    if (h->n_queued >= UPCALL_QUEUE_MAX) {
        COVERAGE_INC(dpif_bpf_upcall_queue_full);
        atomic_add_relaxed(&u->n_lost, 1, &(uint64_t) { 0 });
        return;
    }
    rec = xmalloc(sizeof *rec + size);
    rec->size = size;
    memcpy(rec->data, data, size);
    ovs_list_push_back(&h->queue, &rec->node);
    h->n_queued++;
}

/* The kernel reports here the records it could not write into a full ring.
 * The BPF program already counted each of them in OVS_BPF_DROP_UPCALL_LOST
 * when bpf_perf_event_output() failed, so they are only a coverage counter
 * here. */
static void
upcall_lost_cb(void *ctx OVS_UNUSED, int cpu OVS_UNUSED,
               unsigned long long cnt)
{
    COVERAGE_ADD(dpif_bpf_upcall_lost, cnt);
}

struct dpif_bpf_upcalls *
dpif_bpf_upcalls_create(int perf_map_fd, int *errorp)
{
    struct dpif_bpf_upcalls *u = xzalloc(sizeof *u);

    u->pb = perf_buffer__new(perf_map_fd, UPCALL_RING_PAGES, upcall_sample_cb,
                             upcall_lost_cb, u, NULL);
    if (!u->pb) {
        *errorp = errno;
        VLOG_WARN("cannot open the upcall perf buffer (%s)",
                  ovs_strerror(*errorp));
        free(u);
        return NULL;
    }
    u->n_rings = perf_buffer__buffer_cnt(u->pb);
    ovs_rwlock_init(&u->rwlock);
    atomic_init(&u->n_lost, 0);
    *errorp = 0;
    return u;
}

static void
free_handlers(struct dpif_bpf_upcalls *u)
    OVS_REQ_WRLOCK(u->rwlock)
{
    for (uint32_t i = 0; i < u->n_handlers; i++) {
        struct upcall_handler *h = &u->handlers[i];
        struct upcall_record *rec;

        ovs_mutex_lock(&h->mutex);
        LIST_FOR_EACH_POP (rec, node, &h->queue) {
            free(rec);
        }
        ovs_mutex_unlock(&h->mutex);
        ovs_mutex_destroy(&h->mutex);
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
        ovs_list_init(&u->handlers[i].queue);
    }
    ovs_rwlock_unlock(&u->rwlock);
    if (n > u->n_rings) {
        VLOG_INFO("%"PRIu32" upcall handlers for %"PRIuSIZE" upcall rings: "
                  "some handlers will stay idle", n, u->n_rings);
    }
    return 0;
}

/* Checks that 'rec' is a complete upcall record. */
static bool
record_is_valid(const struct upcall_record *rec)
{
    const struct ovs_bpf_upcall *up = (const void *) rec->data;

    return (rec->size >= sizeof *up
            && up->cap_len <= rec->size - sizeof *up
            && up->cap_len <= up->pkt_len
            && up->userdata_len <= OVS_BPF_USERDATA_LEN
            && up->type >= OVS_BPF_UPCALL_MISS
            && up->type <= OVS_BPF_UPCALL_SLOW_PATH);
}

int
dpif_bpf_upcalls_recv(struct dpif_bpf_upcalls *u, uint32_t handler_id,
                      struct ofpbuf *record)
{
    struct upcall_handler *h;
    int error = EAGAIN;

    ovs_rwlock_rdlock(&u->rwlock);
    if (handler_id >= u->n_handlers) {
        goto out;
    }
    h = &u->handlers[handler_id];

    ovs_mutex_lock(&h->mutex);
    if (ovs_list_is_empty(&h->queue)) {
        *cur_handler_get() = h;
        for (size_t i = handler_id; i < u->n_rings; i += u->n_handlers) {
            perf_buffer__consume_buffer(u->pb, i);
        }
        *cur_handler_get() = NULL;
    }
    while (!ovs_list_is_empty(&h->queue)) {
        struct upcall_record *rec;

        rec = CONTAINER_OF(ovs_list_pop_front(&h->queue),
                           struct upcall_record, node);
        h->n_queued--;
        if (record_is_valid(rec)) {
            const struct ovs_bpf_upcall *up = (const void *) rec->data;

            ofpbuf_clear(record);
            ofpbuf_put(record, rec->data, sizeof *up + up->cap_len);
            free(rec);
            error = 0;
            break;
        }
        COVERAGE_INC(dpif_bpf_upcall_malformed);
        free(rec);
    }
    ovs_mutex_unlock(&h->mutex);

out:
    ovs_rwlock_unlock(&u->rwlock);
    return error;
}

void
dpif_bpf_upcalls_wait(struct dpif_bpf_upcalls *u, uint32_t handler_id)
{
    ovs_rwlock_rdlock(&u->rwlock);
    if (handler_id < u->n_handlers) {
        struct upcall_handler *h = &u->handlers[handler_id];
        bool queued;

        ovs_mutex_lock(&h->mutex);
        queued = !ovs_list_is_empty(&h->queue);
        ovs_mutex_unlock(&h->mutex);

        if (queued) {
            poll_immediate_wake();
        } else {
            for (size_t i = handler_id; i < u->n_rings; i += u->n_handlers) {
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
    for (uint32_t i = 0; i < u->n_handlers; i++) {
        struct upcall_handler *h = &u->handlers[i];
        struct upcall_record *rec;

        ovs_mutex_lock(&h->mutex);
        LIST_FOR_EACH_POP (rec, node, &h->queue) {
            free(rec);
        }
        h->n_queued = 0;
        ovs_mutex_unlock(&h->mutex);
    }
    /* With no current handler, the sample callback discards the records. */
    *cur_handler_get() = NULL;
    perf_buffer__consume(u->pb);
    ovs_rwlock_unlock(&u->rwlock);
}

uint64_t
dpif_bpf_upcalls_n_lost(const struct dpif_bpf_upcalls *u)
{
    uint64_t n;

    atomic_read_relaxed(&CONST_CAST(struct dpif_bpf_upcalls *, u)->n_lost,
                        &n);
    return n;
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

    flow_extract(packet, flow);
}

int
dpif_bpf_upcall_to_dpif(const struct ovs_bpf_upcall *up, const void *data,
                        struct dpif_upcall *upcall, struct ofpbuf *buf)
{
    struct odp_flow_key_parms parms;
    struct flow flow;
    size_t key_ofs;

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

    dpif_bpf_upcall_packet(up, data, &upcall->packet, &flow);

    memset(&parms, 0, sizeof parms);
    parms.flow = &flow;
    dpif_bpf_odp_support(&parms.support);

    key_ofs = buf->size;
    odp_flow_key_from_flow(&parms, buf);
    upcall->key_len = buf->size - key_ofs;

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
    odp_flow_key_hash(upcall->key, upcall->key_len, &upcall->ufid);
    return 0;
}
