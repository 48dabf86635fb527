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

/* The upcall path of the BPF datapath: the ring buffers, one per handler
 * thread, through which the BPF programs send packets to ovs-vswitchd, and
 * their records turned into the upcalls of ofproto (see
 * dpif-bpf-upcall.h). */

#include <config.h>

#include "dpif-bpf-upcall.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "coverage.h"
#include "csum.h"
#include "dp-packet.h"
#include "dpif.h"
#include "dpif-bpf-odp.h"
#include "flow.h"
#include "netlink.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "packets.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_upcall);

COVERAGE_DEFINE(dpif_bpf_upcall_malformed);
COVERAGE_DEFINE(dpif_bpf_upcall_orphaned);
COVERAGE_DEFINE(dpif_bpf_upcall_csum_completed);
COVERAGE_DEFINE(dpif_bpf_upcall_csum_partial_skipped);
COVERAGE_DEFINE(dpif_bpf_upcall_gso_whole);

/* What libbpf's ring callback returns when the request took a record: a
 * negative value stops ring_buffer__consume() right after the record, which
 * it frees, and leaves the records behind it in the ring. */
#define UPCALL_TAKEN (-EALREADY)

/* A dpif_bpf_upcalls_recv() call under way on a ring.  NULL while purging:
 * the records are then dropped. */
struct upcall_request {
    dpif_bpf_upcall_fn *fn;
    void *aux;
};

/* The ring of one handler thread: only that handler reads it (and purges,
 * while the handlers are stopped), so its mutex is never contended; it
 * keeps the ring's state consistent for "dpif-bpf/show". */
struct upcall_ring {
    struct ovs_mutex mutex;
    int fd;                     /* The BPF ring buffer map. */
    struct ring_buffer *rb;     /* libbpf's reader of it. */
    struct upcall_request *req OVS_GUARDED;
    uint64_t n_read OVS_GUARDED;        /* Records taken by the handler. */
    char reader[16] OVS_GUARDED;        /* Name of the thread that read. */

    /* The handler's wake-ups that add its coverage counts to the totals
     * (see ring_fold_wait()).  Only the handler's thread uses them. */
    int fold_waits;             /* Intervals still to wait, 0 if none. */
    long long int fold_due;     /* When the current one ends. */
};

struct dpif_bpf_upcalls {
    int rings_fd;               /* 'upcall_rings', the array of rings. */
    int config_fd;              /* 'upcall_config'. */

    /* Taken for writing only to change the rings, which ofproto-dpif-upcall
     * does while its handler threads are stopped. */
    struct ovs_rwlock rwlock;
    struct upcall_ring *rings OVS_GUARDED;
    uint32_t n_rings OVS_GUARDED;       /* One per handler, at most
                                         * OVS_BPF_MAX_UPCALL_RINGS. */
    uint32_t n_handlers OVS_GUARDED;
    struct ovs_bpf_upcall_config config OVS_GUARDED;
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

/* libbpf's callback for each record of a ring, called with the ring's
 * mutex held by the thread that reads it. */
static int
upcall_ring_cb(void *ring_, void *data, size_t size)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct upcall_ring *ring = ring_;

    if (ring->req && upcall_deliver(ring->req, data, size)) {
        return UPCALL_TAKEN;
    }
    return 0;
}

static int setup_ring(struct dpif_bpf_upcalls *, uint32_t,
                      struct upcall_ring *);

static void
write_config(struct dpif_bpf_upcalls *u)
    OVS_REQ_WRLOCK(u->rwlock)
{
    uint32_t zero = 0;

    if (bpf_map_update_elem(u->config_fd, &zero, &u->config, BPF_ANY)) {
        VLOG_WARN("cannot write the upcall configuration (%s)",
                  ovs_strerror(errno));
    }
}

struct dpif_bpf_upcalls *
dpif_bpf_upcalls_create(int rings_fd, int config_fd,
                        const struct dpif_bpf_upcall_budget *budget)
{
    struct dpif_bpf_upcalls *u = xzalloc(sizeof *u);

    uint32_t zero = 0;

    u->rings_fd = rings_fd;
    u->config_fd = config_fd;
    ovs_rwlock_init(&u->rwlock);
    /* The rings that a previous ovs-vswitchd left in place (killed, or
     * exited without deleting the datapath) stay in use until the handlers
     * are set, which takes them over: the upcalls of a restart wait in them
     * instead of being lost. */
    if (bpf_map_lookup_elem(config_fd, &zero, &u->config)) {
        memset(&u->config, 0, sizeof u->config);
    }
    if (!u->config.n_rings) {
        /* A new datapath: one ring right away, so that the upcalls before
         * the handlers are set (those of a datapath that replaces another
         * one, for instance) wait for them instead of being lost.  The
         * first handler takes it over. */
        ovs_rwlock_wrlock(&u->rwlock);
        u->rings = xcalloc(1, sizeof *u->rings);
        if (!setup_ring(u, 0, &u->rings[0])) {
            u->n_rings = u->config.n_rings = 1;
        }
        ovs_rwlock_unlock(&u->rwlock);
    }
    dpif_bpf_upcalls_set_budget(u, budget);
    return u;
}

static void
free_rings(struct upcall_ring *rings, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        ring_buffer__free(rings[i].rb);
        close(rings[i].fd);
        ovs_mutex_destroy(&rings[i].mutex);
    }
    free(rings);
}

/* Takes the rings from 'n' on out of the array of maps, so that the kernel
 * frees them once the BPF programs and we are done with them. */
static void
clear_slots(struct dpif_bpf_upcalls *u, uint32_t n)
    OVS_REQ_WRLOCK(u->rwlock)
{
    for (uint32_t i = n; i < OVS_BPF_MAX_UPCALL_RINGS; i++) {
        bpf_map_delete_elem(u->rings_fd, &i);
    }
}

void
dpif_bpf_upcalls_destroy(struct dpif_bpf_upcalls *u, bool keep_rings)
{
    if (u) {
        ovs_rwlock_wrlock(&u->rwlock);
        if (!keep_rings) {
            u->config.n_rings = 0;
            write_config(u);
            clear_slots(u, 0);
        }
        free_rings(u->rings, u->n_rings);
        ovs_rwlock_unlock(&u->rwlock);
        ovs_rwlock_destroy(&u->rwlock);
        free(u);
    }
}

/* Returns an fd of the ring in slot 'i' of the array of maps, if there is
 * one of the size we make, or -1. */
static int
get_slot_ring(const struct dpif_bpf_upcalls *u, uint32_t i)
{
    struct bpf_map_info info;
    uint32_t id, len = sizeof info;
    int fd;

    if (bpf_map_lookup_elem(u->rings_fd, &i, &id)) {
        return -1;
    }
    fd = bpf_map_get_fd_by_id(id);
    if (fd < 0) {
        return -1;
    }
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len)
        || info.type != BPF_MAP_TYPE_RINGBUF
        || info.max_entries != OVS_BPF_UPCALL_RING_SIZE) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sets up 'r' as ring 'i': the ring already in slot 'i' of the array of
 * maps (ours from before a change of the number of handlers, or that of a
 * previous ovs-vswitchd), with the upcalls it holds, or else a new one
 * stored there. */
static int
setup_ring(struct dpif_bpf_upcalls *u, uint32_t i, struct upcall_ring *r)
    OVS_REQ_WRLOCK(u->rwlock)
{
    char name[BPF_OBJ_NAME_LEN];
    int error;

    r->fd = get_slot_ring(u, i);
    if (r->fd >= 0) {
        r->rb = ring_buffer__new(r->fd, upcall_ring_cb, r, NULL);
        if (r->rb) {
            goto done;
        }
        close(r->fd);
    }
    snprintf(name, sizeof name, "ovs_upcall_%"PRIu32, i);
    r->fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, name, 0, 0,
                           OVS_BPF_UPCALL_RING_SIZE, NULL);
    if (r->fd < 0) {
        return errno;
    }
    r->rb = ring_buffer__new(r->fd, upcall_ring_cb, r, NULL);
    if (!r->rb) {
        error = errno;
        close(r->fd);
        return error;
    }
    if (bpf_map_update_elem(u->rings_fd, &i, &r->fd, BPF_ANY)) {
        error = errno;
        ring_buffer__free(r->rb);
        close(r->fd);
        return error;
    }
done:
    ovs_mutex_init(&r->mutex);
    r->req = NULL;
    r->n_read = 0;
    r->reader[0] = '\0';
    return 0;
}

static int
count_record(void *n_, void *data OVS_UNUSED, size_t size OVS_UNUSED)
{
    uint64_t *n = n_;

    (*n)++;
    return 0;
}

/* Returns the ids of the rings in the array of maps, in 'ids' (room for
 * OVS_BPF_MAX_UPCALL_RINGS), and their number. */
static size_t
get_ring_ids(const struct dpif_bpf_upcalls *u, uint32_t *ids)
{
    size_t n = 0;

    for (uint32_t i = 0; i < OVS_BPF_MAX_UPCALL_RINGS; i++) {
        if (!bpf_map_lookup_elem(u->rings_fd, &i, &ids[n])) {
            n++;
        }
    }
    return n;
}

/* Drops the records left in the rings 'ids', which are out of the array
 * of maps, and counts them: the upcalls that no handler read and no
 * handler will. */
static void
drop_orphans(const uint32_t *ids, size_t n_ids)
{
    uint64_t n = 0;

    for (size_t i = 0; i < n_ids; i++) {
        int fd = bpf_map_get_fd_by_id(ids[i]);
        struct ring_buffer *rb;

        if (fd < 0) {
            continue;           /* Already freed. */
        }
        rb = ring_buffer__new(fd, count_record, &n, NULL);
        if (rb) {
            ring_buffer__consume(rb);
            ring_buffer__free(rb);
        }
        close(fd);
    }
    if (n) {
        COVERAGE_ADD(dpif_bpf_upcall_orphaned, n);
        VLOG_INFO("dropped %"PRIu64" upcalls that no handler had read", n);
    }
}

/* Removes from 'ids' the rings that are in use again, and returns how many
 * are left: the rings out of the array of maps. */
static size_t
keep_orphans(const struct dpif_bpf_upcalls *u, uint32_t *ids, size_t n_ids)
    OVS_REQ_WRLOCK(u->rwlock)
{
    uint32_t cur[OVS_BPF_MAX_UPCALL_RINGS];
    size_t n_cur = get_ring_ids(u, cur);
    size_t n = 0;

    for (size_t i = 0; i < n_ids; i++) {
        bool in_use = false;

        for (size_t j = 0; j < n_cur; j++) {
            in_use |= cur[j] == ids[i];
        }
        if (!in_use) {
            ids[n++] = ids[i];
        }
    }
    return n;
}

int
dpif_bpf_upcalls_set_handlers(struct dpif_bpf_upcalls *u, uint32_t n)
{
    uint32_t old_ids[OVS_BPF_MAX_UPCALL_RINGS];
    size_t n_old;
    uint32_t n_rings = MIN(n, OVS_BPF_MAX_UPCALL_RINGS);
    struct upcall_ring *rings = xcalloc(n_rings, sizeof *rings);
    uint32_t i;
    int error = 0;

    ovs_rwlock_wrlock(&u->rwlock);
    /* Handler i takes the ring in slot i over, with its upcalls, or a new
     * one (the BPF programs write into one or the other, never into a
     * half-made one).  The upcalls left in the rings beyond the new number
     * are dropped and counted, as the kernel datapath's upcalls queued to
     * the sockets of handlers that go. */
    n_old = get_ring_ids(u, old_ids);
    for (i = 0; i < n_rings; i++) {
        error = setup_ring(u, i, &rings[i]);
        if (error) {
            VLOG_WARN("cannot create upcall ring %"PRIu32" (%s)", i,
                      ovs_strerror(error));
            break;
        }
    }
    n_rings = i;
    u->config.n_rings = n_rings;
    write_config(u);
    clear_slots(u, n_rings);
    free_rings(u->rings, u->n_rings);
    u->rings = rings;
    u->n_rings = n_rings;
    u->n_handlers = n;
    n_old = keep_orphans(u, old_ids, n_old);
    ovs_rwlock_unlock(&u->rwlock);
    drop_orphans(old_ids, n_old);

    if (n > n_rings && !error) {
        VLOG_INFO("%"PRIu32" upcall handlers for %"PRIu32" upcall rings: "
                  "some handlers will stay idle", n, n_rings);
    }
    return error;
}

void
dpif_bpf_upcalls_set_budget(struct dpif_bpf_upcalls *u,
                            const struct dpif_bpf_upcall_budget *b)
{
    ovs_rwlock_wrlock(&u->rwlock);
    if (b->rate) {
        u->config.budget_interval_ns = MAX(1, 1000000000ull / b->rate);
        /* The bucket is empty 'burst' - 1 intervals ahead of now: after
         * 'burst' upcalls at once. */
        u->config.budget_burst_ns = ((uint64_t) (MAX(b->burst, 1) - 1)
                                     * u->config.budget_interval_ns);
    } else {
        u->config.budget_interval_ns = 0;
        u->config.budget_burst_ns = 0;
    }
    u->config.budget_fill = ((uint64_t) OVS_BPF_UPCALL_RING_SIZE
                             * MIN(b->fill_pct, 100) / 100);
    write_config(u);
    ovs_rwlock_unlock(&u->rwlock);
}

int
dpif_bpf_upcalls_recv(struct dpif_bpf_upcalls *u, uint32_t handler_id,
                      dpif_bpf_upcall_fn *fn, void *aux)
{
    struct upcall_request req = { .fn = fn, .aux = aux };
    bool taken = false;

    ovs_rwlock_rdlock(&u->rwlock);
    if (handler_id < u->n_rings) {
        struct upcall_ring *r = &u->rings[handler_id];

        int n;

        ovs_mutex_lock(&r->mutex);
        r->req = &req;
        n = ring_buffer__consume(r->rb);
        taken = n == UPCALL_TAKEN;
        r->req = NULL;
        if (n) {
            /* Records were taken, and maybe counted: see ring_fold_wait(). */
            r->fold_waits = 2;
            r->fold_due = LLONG_MIN;
        }
        if (taken) {
            r->n_read++;
            ovs_strlcpy(r->reader, get_subprogram_name(), sizeof r->reader);
        }
        ovs_mutex_unlock(&r->mutex);
    }
    ovs_rwlock_unlock(&u->rwlock);
    return taken ? 0 : EAGAIN;
}

/* A thread's coverage counts reach the totals that "coverage/show" and
 * "coverage/read-counter" read only when the thread starts a poll at least
 * COVERAGE_CLEAR_INTERVAL after its poll that last added them (see
 * coverage_clear()).  A handler waits for its ring alone: after the
 * records it took and counted (the ct slow path's TCP states, ipf, the
 * execution of slow-path packets...), it could sleep with those counts
 * unseen for as long as its ring stays empty.  So after taking records, it
 * wakes twice more, an interval apart: the poll after the first of those
 * wake-ups started after the poll that followed the records, and the
 * second wake-up comes an interval later, so that the poll after it adds
 * the counts.  A busy handler polls often enough to add them anyway. */
static void
ring_fold_wait(struct upcall_ring *r)
{
    if (r->fold_waits) {
        long long int now = time_msec();

        if (now >= r->fold_due) {
            if (r->fold_due != LLONG_MIN) {
                r->fold_waits--;
            }
            r->fold_due = now + COVERAGE_CLEAR_INTERVAL;
        }
        if (r->fold_waits) {
            poll_timer_wait_until(r->fold_due);
        }
    }
}

void
dpif_bpf_upcalls_wait(struct dpif_bpf_upcalls *u, uint32_t handler_id)
{
    ovs_rwlock_rdlock(&u->rwlock);
    if (handler_id < u->n_rings) {
        /* A ring buffer's fd polls readable as long as the ring holds
         * records not read yet, those that a recv call left behind too. */
        poll_fd_wait(u->rings[handler_id].fd, POLLIN);
        ring_fold_wait(&u->rings[handler_id]);
    }
    ovs_rwlock_unlock(&u->rwlock);
}

void
dpif_bpf_upcalls_purge(struct dpif_bpf_upcalls *u)
{
    ovs_rwlock_wrlock(&u->rwlock);
    /* With no request under way, the callback drops the records. */
    for (uint32_t i = 0; i < u->n_rings; i++) {
        ring_buffer__consume(u->rings[i].rb);
    }
    ovs_rwlock_unlock(&u->rwlock);
}

void
dpif_bpf_upcalls_format(struct dpif_bpf_upcalls *u, struct ds *ds)
{
    ovs_rwlock_rdlock(&u->rwlock);
    ds_put_format(ds, "  upcall rings: %"PRIu32" of %u kB, for %"PRIu32
                  " handlers\n", u->n_rings, OVS_BPF_UPCALL_RING_SIZE / 1024,
                  u->n_handlers);
    for (uint32_t i = 0; i < u->n_rings; i++) {
        struct upcall_ring *r = &u->rings[i];

        ovs_mutex_lock(&r->mutex);
        ds_put_format(ds, "    ring %"PRIu32": read %"PRIu64" by %s\n",
                      i, r->n_read, r->reader[0] ? r->reader : "none yet");
        ovs_mutex_unlock(&r->mutex);
    }
    if (u->config.budget_interval_ns) {
        const struct ovs_bpf_upcall_config *c = &u->config;

        ds_put_format(ds, "  upcall budget: %"PRIu64" per second per port "
                      "and CPU, burst %"PRIu64", ",
                      (uint64_t) (UINT64_C(1000000000)
                                  / c->budget_interval_ns),
                      (uint64_t) (c->budget_burst_ns
                                  / c->budget_interval_ns + 1));
        if (c->budget_fill) {
            ds_put_format(ds, "from %"PRIu32" kB unread\n",
                          c->budget_fill / 1024);
        } else {
            ds_put_cstr(ds, "always\n");
        }
    } else {
        ds_put_cstr(ds, "  upcall budget: none\n");
    }
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
        /* Cut short (OVS_BPF_UPCALL_MAX_CAP), or offsets that the kernel
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

/* Fills 'packet', which has VLAN_HEADER_LEN bytes of headroom and room for
 * the 'cap_len' bytes of 'up' at 'data', as dpif_bpf_upcall_packet()
 * says. */
static void
upcall_packet_fill(const struct ovs_bpf_upcall *up, const void *data,
                   struct dp_packet *packet, struct flow *flow)
{
    struct pkt_metadata *md = &packet->md;
    size_t vlan_shift = 0;

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

void
dpif_bpf_upcall_packet(const struct ovs_bpf_upcall *up, const void *data,
                       struct dp_packet *packet, struct flow *flow)
{
    dp_packet_init(packet, up->cap_len + VLAN_HEADER_LEN);
    /* Headroom for the VLAN tag pushed back. */
    dp_packet_reserve(packet, VLAN_HEADER_LEN);
    upcall_packet_fill(up, data, packet, flow);
}

/* Finds the TCP header of 'packet', an Ethernet frame: IPv4 (not a
 * fragment) or IPv6 (TCP after none or any of the hop-by-hop and
 * destination options headers, which each segment repeats; not after a
 * routing header, which would change the checksum's pseudo-header, or a
 * fragment header), not MPLS.  Stores the offsets of its IP and TCP
 * headers, the TCP header's length and the end of the IP packet (the
 * frame's end if the frame is shorter: an upcall cut at
 * OVS_BPF_UPCALL_MAX_CAP bytes) and returns true; returns false if the
 * packet is anything else. */
static bool
gso_parse(const struct dp_packet *packet, size_t *l3p, size_t *l4p,
          size_t *tcp_hlenp, size_t *endp)
{
    const uint8_t *data = dp_packet_data(packet);
    size_t size = dp_packet_size(packet);
    const struct tcp_header *tcp;
    size_t l3, l4, end;
    ovs_be16 type;

    if (packet->l2_5_ofs != UINT16_MAX) {
        return false;
    } else if (packet->l3_ofs != UINT16_MAX) {
        /* flow_extract() found it: it ran on the packet of every upcall
         * (in ovs-vswitchd's upcall handler too), and the actions that
         * ovs-vswitchd runs keep it up to date.  The ethertype is right
         * before it. */
        l3 = packet->l3_ofs;
        if (l3 < ETH_HEADER_LEN || l3 > size) {
            return false;
        }
        memcpy(&type, data + l3 - sizeof type, sizeof type);
    } else {
        /* Behind any number of VLAN tags. */
        size_t ofs = 2 * ETH_ADDR_LEN;

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
            ofs += 2;           /* The TCI. */
        }
        l3 = ofs;
    }
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
        uint8_t nxt;

        if (size < l3 + IPV6_HEADER_LEN) {
            return false;
        }
        nxt = ip6->ip6_nxt;
        l4 = l3 + IPV6_HEADER_LEN;
        while (nxt == IPPROTO_HOPOPTS || nxt == IPPROTO_DSTOPTS) {
            /* struct ip6_ext: the next header, the length in 8-byte units
             * after the first 8 bytes. */
            if (size < l4 + 8) {
                return false;
            }
            nxt = data[l4];
            l4 += (data[l4 + 1] + 1) * 8;
        }
        if (nxt != IPPROTO_TCP) {
            return false;
        }
        end = l3 + IPV6_HEADER_LEN + ntohs(ip6->ip6_plen);
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

    if (!up->gso_size) {
        return 0;
    } else if (!gso_parse(packet, &l3, &l4, &tcp_hlen, &end)) {
        /* A GSO packet that gso_parse() refuses goes down whole, for a
         * device whose MTU it exceeds to drop: UDP (whose GSO may be UDP
         * segmentation or, from a VM's virtio device, the IP
         * fragmentation of the older UFO, which the BPF programs cannot
         * tell apart: the kernel has the type in skb_shinfo() only), MPLS,
         * IPv6 with other extension headers. */
        COVERAGE_INC(dpif_bpf_upcall_gso_whole);
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

            ip6->ip6_plen = htons(l4 - l3 - IPV6_HEADER_LEN + tcp_len);
            stcp->tcp_csum = packet_csum_upperlayer6(ip6, stcp, IPPROTO_TCP,
                                                     tcp_len);
        }
        fn(&seg, aux);
    }
    dp_packet_uninit(&seg);
    return true;
}

/* Room left in the receive buffer after the packet for its flow key, so that
 * the key of a small packet fits with it in ofproto's 512-byte stub.  A
 * longer key makes the buffer move (see below). */
#define UPCALL_KEY_ROOM 256

int
dpif_bpf_upcall_to_dpif(const struct ovs_bpf_upcall *up, const void *data,
                        struct dpif_upcall *upcall, struct ofpbuf *buf,
                        struct flow *flow)
{
    struct odp_flow_key_parms parms;
    size_t key_ofs, pkt_ofs, room, data_ofs, mru_ofs = 0;
    const void *base;
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

    /* The packet goes into 'buf', before the key: in ofproto's stub, for a
     * small packet, so that an upcall allocates nothing, or else in the one
     * block that 'buf' takes.  The packet does not own it (DPBUF_STUB):
     * ofproto frees 'buf' after the packet, and an action that needs more
     * room copies the packet out of it. */
    room = VLAN_HEADER_LEN + up->cap_len;
    ofpbuf_prealloc_tailroom(buf, room + UPCALL_KEY_ROOM);
    pkt_ofs = buf->size;
    dp_packet_use_stub(&upcall->packet, ofpbuf_put_uninit(buf, room), room);
    dp_packet_reserve(&upcall->packet, VLAN_HEADER_LEN);
    upcall_packet_fill(up, data, &upcall->packet, flow);
    base = buf->base;
    data_ofs = ((char *) dp_packet_data(&upcall->packet)
                - (char *) dp_packet_base(&upcall->packet));

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
    if (buf->base != base) {
        /* A long key moved the buffer, and the packet with it: its offsets
         * are relative to its data, which only need pointing to again. */
        char *pkt = ofpbuf_at_assert(buf, pkt_ofs, room);

        dp_packet_set_base(&upcall->packet, pkt);
        dp_packet_set_data(&upcall->packet, pkt + data_ofs);
    }
    return 0;
}
