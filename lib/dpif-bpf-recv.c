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

/* The receive side of the BPF datapath: dpif_recv() and the operations of
 * the dpif class around it, on the upcall rings of dpif-bpf-upcall.c, and
 * the upcalls that ovs-vswitchd answers without ofproto: the packets of
 * flows whose actions only ovs-vswitchd can run, the ct() that the
 * conntrack kfuncs cannot, layer 3 packets (these three run through
 * dpif-bpf-execute.c), and the misses of flows installed while they
 * waited in their ring (dp_bpf_forward_miss()).  The other upcalls go to
 * ofproto. */

#include <config.h>

#include "dpif-bpf-recv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "dp-packet.h"
#include "dpif-bpf-ct-slow.h"
#include "dpif-bpf-execute.h"
#include "dpif-bpf-flow-table.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "dpif-bpf-upcall.h"
#include "dpif-provider.h"
#include "flow.h"
#include "netlink.h"
#include "openvswitch/ofpbuf.h"
#include "ovs-thread.h"
#include "util.h"

COVERAGE_DEFINE(dpif_bpf_slow_path);
COVERAGE_DEFINE(dpif_bpf_ct_upcall_malformed);
COVERAGE_DEFINE(dpif_bpf_miss_forwarded);

int
dpif_bpf_recv_set(struct dpif *dpif, bool enable)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error = 0;

    ovs_rwlock_wrlock(&dp->upcall_rwlock);
    if (enable && !dp->upcalls) {
        dp->upcalls = dpif_bpf_upcalls_create(dp->obj->upcall_rings_fd,
                                              dp->obj->upcall_config_fd,
                                              &dp->upcall_budget);
        if (dp->upcalls && dp->n_handlers) {
            dpif_bpf_upcalls_set_handlers(dp->upcalls, dp->n_handlers);
        }
    } else if (!enable && dp->upcalls) {
        dpif_bpf_upcalls_destroy(dp->upcalls, false);
        dp->upcalls = NULL;
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
    return error;
}

int
dpif_bpf_handlers_set(struct dpif *dpif, uint32_t n_handlers)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error = 0;

    ovs_rwlock_wrlock(&dp->upcall_rwlock);
    dp->n_handlers = n_handlers;
    if (dp->upcalls) {
        error = dpif_bpf_upcalls_set_handlers(dp->upcalls, n_handlers);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
    return error;
}

/* A packet of a flow whose actions only ovs-vswitchd can run. */
static void
dp_bpf_slow_path(struct dp_bpf *dp, const struct ovs_bpf_upcall *up,
                 const void *data)
{
    struct dp_bpf_flow *flow;
    struct nlattr *actions = NULL;
    size_t actions_len = 0;

    COVERAGE_INC(dpif_bpf_slow_path);
    ovs_mutex_lock(&dp->mutex);
    flow = NULL;
    if (up->flow.mask_id < OVS_BPF_MAX_MASKS
        && dp->masks[up->flow.mask_id].refcnt) {
        struct ovs_bpf_flow_table_key tkey = up->flow;

        dpif_bpf_table_key_normalize(dp->masks[tkey.mask_id].entry.table,
                                     &tkey);
        flow = dp_bpf_find_flow_by_tkey(dp, &tkey);
    }
    if (flow) {
        actions = xmemdup(flow->actions, flow->actions_len);
        actions_len = flow->actions_len;
    }
    ovs_mutex_unlock(&dp->mutex);

    if (flow) {
        struct dp_packet *packet = xmalloc(sizeof *packet);
        struct dp_bpf_execute_aux x = { .dp = dp, .steal = true };
        struct flow pkt_flow;

        dpif_bpf_upcall_packet(up, data, packet, &pkt_flow);
        x.mru = dpif_bpf_upcall_mru(up, packet);
        dp_bpf_execute_userspace(&x, packet, &pkt_flow, false, actions,
                                 actions_len);
        free(actions);
    }
}

/* A packet that a ct() sent up because the conntrack kfuncs cannot track
 * it (bpf/ct-slow.h): the ct() runs here, on the kernel's conntrack
 * through ctnetlink, and the packet resumes with the actions that follow
 * the ct() in the record (see dp_bpf_ct_resume()). */
static void
dp_bpf_ct_upcall(struct dp_bpf *dp, const struct ovs_bpf_upcall *up,
                 const void *data)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    const struct ovs_bpf_act_ct_label *lbl;
    const struct ovs_bpf_act_ct *act;
    struct dp_packet packet;
    struct flow flow;
    uint32_t next;
    bool resume;

    /* The record is only 4-byte aligned. */
    memcpy(slots, data, sizeof slots);
    next = (up->ct_end <= OVS_BPF_MAX_ACTIONS
            ? dp_bpf_ct_decode(slots, up->ct_slot, up->ct_end, &act, &lbl)
            : 0);
    if (!next) {
        COVERAGE_INC(dpif_bpf_ct_upcall_malformed);
        return;
    }
    dpif_bpf_upcall_packet(up, (const uint8_t *) data + sizeof slots,
                           &packet, &flow);
    if (up->ct_tcp_new) {
        /* The ct() ran in BPF: only the new TCP state of the packet's
         * connection to write (see "TCP connection states" in
         * bpf/datapath-abi.h). */
        dpif_bpf_ct_tcp_state(dp->obj, up->ct_tcp_old, up->ct_tcp_new,
                              &packet, &flow);
        resume = true;
    } else {
        resume = dpif_bpf_ct_slow_execute(dp->obj, act, lbl, &packet, &flow);
    }
    if (resume) {
        struct dp_bpf_execute_aux x = {
            .dp = dp, .mru = dpif_bpf_upcall_mru(up, &packet),
        };
        struct dp_packet_batch batch;

        dp_packet_batch_init_packet(&batch, &packet);
        dp_bpf_ct_resume(&x, &batch, slots + next, up->ct_end - next);
    }
    dp_packet_uninit(&packet);
}

struct dp_bpf_recv_aux {
    struct dp_bpf *dp;
    struct dpif_upcall *upcall;
    struct ofpbuf *buf;
};

/* An upcall waits in its ring while ovs-vswitchd handles the ones before
 * it, and the packets of a flow keep missing until ovs-vswitchd installs
 * it: a new flow's first packets are often all in the rings, each to be
 * translated again, before the first of them gets the flow installed.  If
 * the miss upcall of 'packet' (of flow 'flow') finds a flow that matches it
 * now, forwards it with that flow's actions, as the BPF lookup would have,
 * counts it in the flow's statistics and returns true.  Returns false if
 * the upcall is to go to ofproto: no flow, or one whose actions only
 * ovs-vswitchd can run. */
static bool
dp_bpf_forward_miss(struct dp_bpf *dp, const struct flow *flow,
                    const struct dp_packet *packet, unsigned int mru)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    struct dp_bpf_flow *f;
    uint32_t n_slots = 0;
    bool found = false;

    ovs_mutex_lock(&dp->mutex);
    f = dp_bpf_lookup_flow(dp, flow);
    if (f && !(f->flags & OVS_BPF_FLOW_F_USERSPACE)
        && !dpif_bpf_odp_to_actions(f->actions, f->actions_len, slots,
                                    &n_slots)) {
        dp_bpf_flow_credit(dp, f, flow, dp_packet_size(packet));
        found = true;
    }
    ovs_mutex_unlock(&dp->mutex);

    if (found) {
        COVERAGE_INC(dpif_bpf_miss_forwarded);
        if (n_slots) {
            dp_bpf_downcall(dp, packet, slots, n_slots, mru);
        }
    }
    return found;
}

/* dpif_bpf_upcalls_recv() callback: takes a miss or action upcall, runs the
 * packets of slow-path flows on the spot. */
static bool
dp_bpf_recv_cb(const struct ovs_bpf_upcall *up, const void *pkt, void *aux_)
{
    struct dp_bpf_recv_aux *aux = aux_;
    size_t buf_size = aux->buf->size;
    struct flow flow;

    if (up->type == OVS_BPF_UPCALL_SLOW_PATH) {
        dp_bpf_slow_path(aux->dp, up, pkt);
        return false;
    }
    if (up->type == OVS_BPF_UPCALL_CT) {
        dp_bpf_ct_upcall(aux->dp, up, pkt);
        return false;
    }
    if (up->type == OVS_BPF_UPCALL_L3) {
        dp_bpf_l3_upcall(aux->dp, up, pkt);
        return false;
    }
    if (dpif_bpf_upcall_to_dpif(up, pkt, aux->upcall, aux->buf, &flow)) {
        return false;
    }
    if (up->type == OVS_BPF_UPCALL_MISS
        && dp_bpf_forward_miss(aux->dp, &flow, &aux->upcall->packet,
                               (aux->upcall->mru
                                ? nl_attr_get_u16(aux->upcall->mru) : 0))) {
        dp_packet_uninit(&aux->upcall->packet);
        aux->buf->size = buf_size;
        return false;
    }
    return true;
}

int
dpif_bpf_recv(struct dpif *dpif, uint32_t handler_id,
              struct dpif_upcall *upcall, struct ofpbuf *buf)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_recv_aux aux = { .dp = dp, .upcall = upcall, .buf = buf };
    int error = EAGAIN;

    ovs_rwlock_rdlock(&dp->upcall_rwlock);
    if (dp->upcalls) {
        error = dpif_bpf_upcalls_recv(dp->upcalls, handler_id,
                                      dp_bpf_recv_cb, &aux);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
    return error;
}

void
dpif_bpf_recv_wait(struct dpif *dpif, uint32_t handler_id)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_rwlock_rdlock(&dp->upcall_rwlock);
    if (dp->upcalls) {
        dpif_bpf_upcalls_wait(dp->upcalls, handler_id);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
}

void
dpif_bpf_recv_purge(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_rwlock_rdlock(&dp->upcall_rwlock);
    if (dp->upcalls) {
        dpif_bpf_upcalls_purge(dp->upcalls);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
}
