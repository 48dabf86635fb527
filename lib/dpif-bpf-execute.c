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

/* The execute path of the BPF datapath: the packets that ovs-vswitchd
 * sends down to the BPF programs, and the actions that it runs itself.
 *
 *   - Downcalls: a packet goes down through the datapath's TAP device with
 *     its actions as action slots, which the downcall program checks and
 *     runs (dp_bpf_downcall(); see "Downcalls" in
 *     Documentation/topics/dpif-bpf.rst).
 *
 *   - dpif_execute() (dp_bpf_execute(), through dpif_bpf_operate()): a
 *     packet whose actions the BPF programs can run goes down in one
 *     downcall; otherwise odp_execute_actions() runs them here
 *     (dp_bpf_execute_userspace()), and each action that needs the datapath
 *     goes down alone or with the rest of the list (dp_bpf_execute_cb()).
 *
 *   - ct() that ran in ovs-vswitchd (the ct slow path, IP fragments through
 *     ipf): the packet resumes in BPF with the actions after the ct()
 *     (dp_bpf_ct_resume()).
 *
 *   - Layer 3 packets, which the BPF programs never see: ovs-vswitchd
 *     recirculates them and keeps their flows itself.
 *
 * The upcalls whose packets ovs-vswitchd runs (slow path, ct(), layer 3)
 * come here from dpif-bpf-recv.c. */

#include <config.h>

#include "dpif-bpf-execute.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "csum.h"
#include "dp-packet.h"
#include "dpif-bpf-flow-table.h"
#include "dpif-bpf-ipf.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-meter.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-port.h"
#include "dpif-bpf-private.h"
#include "dpif-bpf-upcall.h"
#include "dpif-provider.h"
#include "flow.h"
#include "netdev-native-tnl.h"
#include "netlink.h"
#include "odp-execute.h"
#include "odp-util.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "packets.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_execute);

COVERAGE_DEFINE(dpif_bpf_downcall);
COVERAGE_DEFINE(dpif_bpf_downcall_error);
COVERAGE_DEFINE(dpif_bpf_downcall_gso);
COVERAGE_DEFINE(dpif_bpf_ct_resume);
COVERAGE_DEFINE(dpif_bpf_execute_not_eth);
COVERAGE_DEFINE(dpif_bpf_execute_userspace);
COVERAGE_DEFINE(dpif_bpf_l3_recirc);
COVERAGE_DEFINE(dpif_bpf_l3_miss);
COVERAGE_DEFINE(dpif_bpf_l3_drop);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* ------------------------------------------------------------------ */
/* Downcalls through the TAP device.                                  */
/* ------------------------------------------------------------------ */

/* Sends 'packet' down to the datapath with the actions 'actions', as a
 * frame on the TAP device: the packet (under a stand-in ethertype), the
 * actions and a struct ovs_bpf_downcall trailer (see bpf/datapath-abi.h).
 * The downcall program runs synchronously in the write(). */
static int
dp_bpf_downcall__(struct dp_bpf *dp, const struct dp_packet *packet,
                  const struct ovs_bpf_action *actions, uint32_t n_actions)
{
    const struct pkt_metadata *md = &packet->md;
    uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN];
    struct iovec iov[DPIF_BPF_DOWNCALL_IOVS];
    struct ovs_bpf_downcall dc;
    size_t len, n_iov;
    ssize_t n;

    len = dp_packet_get_send_len(packet);
    if (len < ETH_HEADER_LEN) {
        return EINVAL;
    }

    memset(&dc, 0, sizeof dc);
    dc.magic = OVS_BPF_DOWNCALL_MAGIC;
    dc.abi_version = dpif_bpf_abi_version();
    memcpy(dc.secret, dp->secret, sizeof dc.secret);
    dc.in_port = odp_to_u32(md->in_port.odp_port);
    dc.n_actions = n_actions;
    dc.recirc_id = md->recirc_id;
    dc.dp_hash = md->dp_hash;
    dc.skb_priority = md->skb_priority;
    dc.skb_mark = md->pkt_mark;

    dpif_bpf_md_to_key_meta(md, key_meta);
    n_iov = dpif_bpf_downcall_iov(iov, dp_packet_data(packet), len,
                                  actions, n_actions, key_meta, &dc);

    COVERAGE_INC(dpif_bpf_downcall);
    n = writev(dp->tap_fd, iov, n_iov);
    if (n < 0) {
        int error = errno;

        COVERAGE_INC(dpif_bpf_downcall_error);
        VLOG_WARN_RL(&rl, "%s: downcall on %s failed (%s)", dp->name,
                     dp->tap_name, ovs_strerror(error));
        return error;
    }
    return 0;
}

struct dp_bpf_downcall_seg_aux {
    struct dp_bpf *dp;
    const struct ovs_bpf_action *actions;
    uint32_t n_actions;
    int error;
};

static void
dp_bpf_downcall_seg(const struct dp_packet *seg, void *aux_)
{
    struct dp_bpf_downcall_seg_aux *aux = aux_;
    int error = dp_bpf_downcall__(aux->dp, seg, aux->actions,
                                  aux->n_actions);

    if (!aux->error) {
        aux->error = error;
    }
}

/* Sends 'packet' down with 'actions', as dp_bpf_downcall__(), but cut into
 * its segments if it is a GSO TCP packet longer than its 'mru' (nonzero
 * only for the packet of an upcall that was GSO, see
 * dpif_bpf_upcall_mru()): a frame on the TAP device is not GSO, and a
 * device would drop it whole (a veth whose MTU it exceeds), as would the
 * downcall program if it is longer than bpf_skb_change_tail() allows. */
int
dp_bpf_downcall(struct dp_bpf *dp, const struct dp_packet *packet,
                const struct ovs_bpf_action *actions, uint32_t n_actions,
                unsigned int mru)
{
    struct dp_bpf_downcall_seg_aux aux = {
        .dp = dp, .actions = actions, .n_actions = n_actions, .error = 0,
    };

    /* A packet cut by trunc() goes as it is: its copy is short. */
    if (mru && !dp_packet_get_cutlen(packet)
        && dpif_bpf_gso_segment(packet, mru, dp_bpf_downcall_seg, &aux)) {
        COVERAGE_INC(dpif_bpf_downcall_gso);
        return aux.error;
    }
    return dp_bpf_downcall__(dp, packet, actions, n_actions);
}

/* Resuming after a ct() that ran in ovs-vswitchd.
 *
 * The ct() of a packet runs in ovs-vswitchd instead of BPF in two cases:
 * the ct slow path (lib/dpif-bpf-ct-slow.c) for the protocols that the
 * conntrack kfuncs do not track and for commits that write labels, which
 * BPF sends up as OVS_BPF_UPCALL_CT with the action slots being run; and
 * ipf (lib/dpif-bpf-ipf.c) for IP fragments, whose userspace megaflows
 * ovs-vswitchd runs as ODP actions (dp_bpf_execute_ipf_ct()).  Either
 * leaves the result in the packet's metadata, and the packet resumes in
 * one way for both: dp_bpf_ct_resume() sends it down once with the action
 * slots that follow the ct() to the end of its list, and the downcall
 * carries the conntrack fields in its key metadata, so that these actions,
 * a recirc() and the flows it leads to included, run in BPF as if the
 * ct() had run there. */

/* Finds in 'slots' (of 'n_slots') the ct() action at index 'idx' and, if
 * it writes labels, the argument slot after it: stores them in '*act' and
 * '*lbl' (NULL without labels) and returns the index of the first slot
 * after them, or 0 if there is no such ct() there. */
uint32_t
dp_bpf_ct_decode(const struct ovs_bpf_action *slots, uint32_t idx,
                 uint32_t n_slots, const struct ovs_bpf_act_ct **act,
                 const struct ovs_bpf_act_ct_label **lbl)
{
    *act = NULL;
    *lbl = NULL;
    if (idx >= n_slots || slots[idx].type != OVS_BPF_ACTION_CT) {
        return 0;
    }
    *act = &slots[idx++].u.ct;
    if ((*act)->flags & OVS_BPF_CT_F_LABEL) {
        if (idx >= n_slots || slots[idx].type != OVS_BPF_ACTION_CT_LABEL) {
            return 0;
        }
        *lbl = &slots[idx++].u.ct_label;
    }
    return idx;
}

/* Resumes the packets of 'batch', whose ct() ran in ovs-vswitchd, with the
 * 'n_slots' action slots in 'slots' that follow the ct(): one downcall
 * each, through 'x->dp', with MRU 'x->mru'.  Leaves the packets to the
 * caller. */
void
dp_bpf_ct_resume(const struct dp_bpf_execute_aux *x,
                 const struct dp_packet_batch *batch,
                 const struct ovs_bpf_action *slots, uint32_t n_slots)
{
    struct dp_packet *packet;

    if (!n_slots) {
        /* The ct() ended the list: nothing to resume. */
        return;
    }
    COVERAGE_ADD(dpif_bpf_ct_resume, dp_packet_batch_size(batch));
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        dp_bpf_downcall(x->dp, packet, slots, n_slots, x->mru);
    }
}

/* If 'action' is one of the top-level actions of 'aux', returns the length
 * of the list from 'action' to the end, otherwise 0. */
static size_t
dp_bpf_rest_of_actions(const struct dp_bpf_execute_aux *aux,
                       const struct nlattr *action)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH (a, left, aux->actions, aux->actions_len) {
        if (a == action) {
            return left;
        }
    }
    return 0;
}

/* Layer 3 packets.
 *
 * A packet that lost its Ethernet header in ovs-vswitchd (pop_eth, the
 * decap() of an MPLS packet that carries IP...) and is recirculated never
 * reaches the BPF programs, which see Ethernet frames only: ovs-vswitchd
 * recirculates it itself, as dpif-netdev does.  The flows of such packets
 * (a packet_type other than Ethernet) stay in ovs-vswitchd, in the flow
 * table without a BPF entry (see struct dp_bpf_flow's 'l3_match'); a miss
 * goes to ofproto through the upcall callback it registered, on the spot,
 * and installs the flow that it returns.  Once the actions push an
 * Ethernet header again, the packet goes back down to BPF with the first
 * output or recirculation. */

/* Recirculations of layer 3 packets nested in one another, at most, as
 * dpif-netdev's MAX_RECIRC_DEPTH. */
#define DP_BPF_MAX_L3_RECIRC 6
DEFINE_STATIC_PER_THREAD_DATA(int, l3_recirc_depth, 0)

/* The ODP key fields of the layer 3 flows that ovs-vswitchd installs: all
 * that a struct flow has, so that the flow matches what ofproto's mask
 * says, no more. */
static const struct odp_support dp_bpf_l3_support = {
    .max_vlan_headers = SIZE_MAX,
    .max_mpls_depth = SIZE_MAX,
    .recirc = true,
    .ct_state = true,
    .ct_zone = true,
    .ct_mark = true,
    .ct_label = true,
    .ct_state_nat = true,
    .ct_orig_tuple = true,
    .ct_orig_tuple6 = true,
};

void
dpif_bpf_register_upcall_cb(struct dpif *dpif, upcall_callback *cb,
                            void *aux)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_mutex_lock(&dp->mutex);
    dp->upcall_cb = cb;
    dp->upcall_aux = aux;
    ovs_mutex_unlock(&dp->mutex);
}

/* Asks ofproto (its upcall callback) for the actions of layer 3 'packet',
 * whose flow 'flow' missed, and installs the flow it returns.  Returns the
 * actions for 'packet' in 'actions' and true, or false if the packet is to
 * be dropped. */
static bool
dp_bpf_l3_miss(struct dp_bpf *dp, const struct dp_packet *packet,
               const struct flow *flow, struct ofpbuf *actions)
{
    struct odp_flow_key_parms odp_parms = {
        .flow = flow,
        .support = dp_bpf_l3_support,
    };
    struct ofpbuf key, mask, put_actions;
    struct flow_wildcards wc;
    upcall_callback *cb;
    ovs_u128 ufid;
    void *aux;
    int error;

    ovs_mutex_lock(&dp->mutex);
    cb = dp->upcall_cb;
    aux = dp->upcall_aux;
    ovs_mutex_unlock(&dp->mutex);
    if (!cb) {
        return false;
    }

    COVERAGE_INC(dpif_bpf_l3_miss);
    ofpbuf_init(&key, 0);
    ofpbuf_init(&mask, 0);
    ofpbuf_init(&put_actions, 0);
    odp_flow_key_from_flow(&odp_parms, &key);
    odp_flow_key_hash(key.data, key.size, &ufid);

    flow_wildcards_init_catchall(&wc);
    error = cb(packet, flow, &ufid, PMD_ID_NULL, DPIF_UC_MISS, NULL, actions,
               &wc, &put_actions, aux);
    if (!error) {
        struct dpif_flow_put put;

        odp_parms.mask = &wc.masks;
        odp_parms.key_buf = &key;
        odp_flow_key_from_mask(&odp_parms, &mask);
        memset(&put, 0, sizeof put);
        put.flags = DPIF_FP_CREATE;
        put.key = key.data;
        put.key_len = key.size;
        put.mask = mask.data;
        put.mask_len = mask.size;
        put.actions = put_actions.size ? put_actions.data : actions->data;
        put.actions_len = (put_actions.size ? put_actions.size
                           : actions->size);
        put.ufid = &ufid;
        put.pmd_id = PMD_ID_NULL;
        error = dp_bpf_flow_put__(dp, &put);
        if (error && error != EEXIST) {
            static struct vlog_rate_limit rl2 = VLOG_RATE_LIMIT_INIT(5, 20);

            VLOG_WARN_RL(&rl2, "%s: cannot install the flow of a layer 3 "
                         "packet (%s)", dp->name, ovs_strerror(error));
        }
        error = 0;
    } else if (error == ENOSPC) {
        /* No flow (the flow limit), but the actions apply. */
        error = 0;
    }

    ofpbuf_uninit(&put_actions);
    ofpbuf_uninit(&mask);
    ofpbuf_uninit(&key);
    return !error;
}

/* Recirculates 'packet', which has no Ethernet header, with 'recirc_id':
 * looks up its flow among the layer 3 flows (asking ofproto on a miss) and
 * runs the flow's actions on it.  Takes 'packet'. */
static void
dp_bpf_recirc_l3(struct dp_bpf *dp, struct dp_packet *packet,
                 uint32_t recirc_id)
{
    struct dp_bpf_execute_aux x = { .dp = dp, .steal = true };
    int *depth = l3_recirc_depth_get();
    struct nlattr *actions = NULL;
    size_t actions_len = 0;
    struct dp_bpf_flow *f;
    struct flow flow;

    COVERAGE_INC(dpif_bpf_l3_recirc);
    if (*depth >= DP_BPF_MAX_L3_RECIRC) {
        COVERAGE_INC(dpif_bpf_l3_drop);
        VLOG_WARN_RL(&rl, "%s: dropped a layer 3 packet recirculated more "
                     "than %d times", dp->name, DP_BPF_MAX_L3_RECIRC);
        dp_packet_delete(packet);
        return;
    }

    packet->md.recirc_id = recirc_id;
    flow_extract(packet, &flow);

    ovs_mutex_lock(&dp->mutex);
    f = dp_bpf_lookup_l3_flow(dp, &flow);
    if (f) {
        actions = xmemdup(f->actions, f->actions_len);
        actions_len = f->actions_len;
        dp_bpf_flow_credit(dp, f, &flow, dp_packet_size(packet));
    }
    ovs_mutex_unlock(&dp->mutex);

    if (!f) {
        struct ofpbuf buf;

        ofpbuf_init(&buf, 0);
        if (dp_bpf_l3_miss(dp, packet, &flow, &buf)) {
            actions_len = buf.size;
            actions = ofpbuf_steal_data(&buf);
        } else {
            COVERAGE_INC(dpif_bpf_l3_drop);
            ofpbuf_uninit(&buf);
            dp_packet_delete(packet);
            return;
        }
    }

    (*depth)++;
    dp_bpf_execute_userspace(&x, packet, &flow, false, actions, actions_len);
    (*depth)--;
    free(actions);
}

/* Forwards 'pkt', described by 'up', an OVS_BPF_UPCALL_L3 upcall: a packet
 * without Ethernet header that a layer 3 port (VXLAN-GPE) received.  It
 * goes through the layer 3 flows, as a layer 3 packet recirculated here
 * does, with recirculation id 0: on a miss ofproto's upcall callback gives
 * the actions (push_eth, then outputs) and the flow; once push_eth has run
 * the packet goes down to BPF. */
void
dp_bpf_l3_upcall(struct dp_bpf *dp, const struct ovs_bpf_upcall *up,
                 const void *pkt)
{
    struct dp_packet *packet;
    struct pkt_metadata *md;

    if (up->cap_len < up->pkt_len
        || (up->l3_type != htons(ETH_TYPE_IP)
            && up->l3_type != htons(ETH_TYPE_IPV6))) {
        /* Cut to what an upcall carries (OVS_BPF_UPCALL_MAX_CAP), it
         * cannot be forwarded whole; BPF sends up no other type. */
        COVERAGE_INC(dpif_bpf_l3_drop);
        return;
    }
    packet = dp_packet_new_with_headroom(up->cap_len,
                                         ETH_HEADER_LEN + VLAN_HEADER_LEN);
    dp_packet_put(packet, pkt, up->cap_len);
    packet->packet_type = PACKET_TYPE_BE(OFPHTN_ETHERTYPE,
                                         ntohs(up->l3_type));
    md = &packet->md;
    pkt_metadata_init(md, u32_to_odp(up->in_port));
    md->skb_priority = up->skb_priority;
    md->pkt_mark = up->skb_mark;
    dpif_bpf_key_meta_to_md(up->key_meta, md);
    dp_bpf_recirc_l3(dp, packet, 0);
}

/* Sends layer 3 'packet' down to BPF for the output action that ends
 * 'slots' (after, maybe, a set_tunnel slot): a downcall carries an Ethernet
 * frame, so the packet goes down with an Ethernet header of zero
 * addresses and a POP_ETH slot before the output, that BPF runs as after
 * a pop_eth of its own (the output goes to a layer 3 port only).  Returns
 * false, sending nothing, if 'packet' is neither IPv4 nor IPv6 or the
 * action is not an output. */
static bool
dp_bpf_downcall_l3(struct dp_bpf *dp, const struct dp_packet *packet,
                   const struct ovs_bpf_action *slots, uint32_t n_slots)
{
    struct ovs_bpf_action l3_slots[OVS_BPF_MAX_ACTIONS];
    ovs_be16 type = pt_ns_type_be(packet->packet_type);
    struct dp_packet *copy;

    if (pt_ns(packet->packet_type) != OFPHTN_ETHERTYPE
        || (type != htons(ETH_TYPE_IP) && type != htons(ETH_TYPE_IPV6))
        || !n_slots || n_slots >= OVS_BPF_MAX_ACTIONS
        || slots[n_slots - 1].type != OVS_BPF_ACTION_OUTPUT) {
        return false;
    }
    memcpy(l3_slots, slots, n_slots * sizeof *slots);
    l3_slots[n_slots] = slots[n_slots - 1];
    memset(&l3_slots[n_slots - 1], 0, sizeof l3_slots[n_slots - 1]);
    l3_slots[n_slots - 1].type = OVS_BPF_ACTION_POP_ETH;

    copy = dp_packet_clone(packet);
    push_eth(copy, &eth_addr_zero, &eth_addr_zero);
    dp_bpf_downcall(dp, copy, l3_slots, n_slots + 1, 0);
    dp_packet_delete(copy);
    return true;
}

/* Runs ct() 'action', one of the actions of 'aux', on 'batch' if its
 * packets are IP fragments (ipf reassembles them, see dpif-bpf-ipf.c), and
 * returns true; returns false, leaving 'batch' alone, if they are not.  The
 * fragments that go on resume with the actions after the ct() in one
 * downcall (dp_bpf_ct_resume()), and 'batch' is left empty, which ends
 * odp_execute_actions().  If BPF cannot run these actions on them, they
 * stay in 'batch' and odp_execute_actions() runs them, each action that
 * needs the datapath going down alone with the conntrack state: another
 * ct() (a fragment must come back here for it), actions that BPF lacks, a
 * trunc() or a set(tunnel(...)) that ran before the ct() (they are in the
 * packet's metadata, not in the slots), a ct() inside a clone(). */
static bool
dp_bpf_execute_ipf_ct(const struct dp_bpf_execute_aux *aux,
                      struct dp_packet_batch *batch,
                      const struct nlattr *action, bool should_steal)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    size_t rest_len = dp_bpf_rest_of_actions(aux, action);
    const struct ovs_bpf_act_ct_label *lbl;
    const struct ovs_bpf_act_ct *act;
    struct dp_packet *packet;
    uint32_t n_slots, next;
    bool resume;

    resume = (rest_len
              && !dpif_bpf_odp_to_actions(action, rest_len, slots,
                                          &n_slots));
    if (!resume
        && dpif_bpf_odp_to_actions(action, NLA_ALIGN(action->nla_len),
                                   slots, &n_slots)) {
        return false;
    }
    next = dp_bpf_ct_decode(slots, 0, n_slots, &act, &lbl);
    if (!next || !dp_bpf_ipf_ct(aux->dp, batch, act, lbl)) {
        return false;
    }

    for (uint32_t i = next; resume && i < n_slots; i++) {
        resume = slots[i].type != OVS_BPF_ACTION_CT;
    }
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        resume = (resume && packet->packet_type == htonl(PT_ETH)
                  && !dp_packet_get_cutlen(packet)
                  && !flow_tnl_dst_is_set(&packet->md.tunnel));
    }
    if (resume) {
        dp_bpf_ct_resume(aux, batch, slots + next, n_slots - next);
        dp_packet_delete_batch(batch, true);
        dp_packet_batch_init(batch);
    } else if (should_steal) {
        dp_packet_delete_batch(batch, true);
    }
    return true;
}

/* Pushes GRE header 'data' onto 'packet' as netdev_gre_push_header()
 * does, with the sequence number, if the header has one, of the datapath
 * port 'data->tnl_port' of 'dp' (that function's counter is in a netdev,
 * which the datapath does not have). */
static void
dp_bpf_tnl_push_gre(struct dp_bpf *dp, struct dp_packet *packet,
                    const struct ovs_action_push_tnl *data)
{
    struct gre_base_hdr *greh;
    int ip_tot_size;

    greh = netdev_tnl_push_ip_header(packet, data->header, data->header_len,
                                     &ip_tot_size);
    if (greh->flags & htons(GRE_SEQ)) {
        size_t ofs = (greh->flags & htons(GRE_CSUM) ? 8 : 4)
                     + (greh->flags & htons(GRE_KEY) ? 4 : 0);

        put_16aligned_be32(ALIGNED_CAST(ovs_16aligned_be32 *,
                                        (char *) greh + ofs),
                           htonl(dp_bpf_port_next_gre_seq(dp,
                                                          data->tnl_port)));
    }
    if (greh->flags & htons(GRE_CSUM)) {
        /* After the sequence number, which it covers (the netdev's function
         * sums before it writes the number). */
        *(ovs_be16 *) (greh + 1) = csum(greh, ip_tot_size);
    }
}

/* Runs tnl_push 'action' on the packets of 'batch' here, as dpif-netdev
 * does, for a tnl_push that cannot go down to BPF together with the
 * actions that follow it (one inside a clone(), as when flooding to a
 * tunnel and other ports, or before an action that BPF cannot run), or
 * that BPF cannot push (a GRE header with a sequence number).  Sent down
 * alone, the BPF programs would push the header onto their own copy of
 * the packet, which ends there with the action list, and the output after
 * the tnl_push would send the packet here, without the header.  Returns
 * false, doing nothing, for a header that is not of a UDP tunnel (VXLAN,
 * Geneve) or GRE. */
static bool
dp_bpf_tnl_push(struct dp_bpf *dp, struct dp_packet_batch *batch,
                const struct nlattr *action, bool should_steal)
{
    const size_t hdr_ofs = offsetof(struct ovs_action_push_tnl, header);
    const struct ovs_action_push_tnl *data = nl_attr_get(action);
    struct dp_packet *packet;
    bool gre;

    if (nl_attr_get_size(action) < hdr_ofs
        || data->header_len > nl_attr_get_size(action) - hdr_ofs
        || data->header_len < ETH_HEADER_LEN + IP_HEADER_LEN) {
        return false;
    }
    gre = (data->tnl_type == OVS_VPORT_TYPE_GRE
           || data->tnl_type == OVS_VPORT_TYPE_IP6GRE);
    if (!gre && data->tnl_type != OVS_VPORT_TYPE_VXLAN
        && data->tnl_type != OVS_VPORT_TYPE_GENEVE) {
        return false;
    }
    if (gre) {
        /* The GRE header and the options its flags announce, which
         * dp_bpf_tnl_push_gre() writes, are all there. */
        size_t l4 = ETH_HEADER_LEN + (netdev_tnl_is_header_ipv6(data->header)
                                      ? IPV6_HEADER_LEN : IP_HEADER_LEN);
        const struct gre_base_hdr *greh;

        if (data->header_len < l4 + sizeof *greh) {
            return false;
        }
        greh = ALIGNED_CAST(const struct gre_base_hdr *,
                            (const char *) data->header + l4);
        if (data->header_len
            != l4 + 4 + 4 * (!!(greh->flags & htons(GRE_CSUM))
                             + !!(greh->flags & htons(GRE_KEY))
                             + !!(greh->flags & htons(GRE_SEQ)))) {
            return false;
        }
    }
    if (should_steal) {
        /* The last action: nothing would send the packets. */
        dp_packet_delete_batch(batch, true);
        return true;
    }
    dp_packet_batch_apply_cutlen(batch);
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        if (gre) {
            dp_bpf_tnl_push_gre(dp, packet, data);
            continue;
        }
        if (!dp_packet_rss_valid(packet)) {
            /* The UDP source port comes from it, as in BPF. */
            struct flow flow;

            flow_extract(packet, &flow);
            dp_packet_set_rss_hash(packet, flow_hash_5tuple(&flow, 0));
        }
        netdev_tnl_push_udp_header(NULL, packet, data);
    }
    return true;
}

/* odp_execute_actions() callback for the actions it needs the datapath for
 * (output, userspace, recirc, ct...).  If the BPF programs can run all the
 * actions from this one to the end of the list, they go down together in
 * one downcall, and odp_execute_actions() stops here: the state that an
 * action leaves in the BPF key, and that ovs-vswitchd does not see (the
 * ct_state a ct() sets for the recirc() after it), reaches the actions
 * that follow.  Otherwise the action goes down alone. */
static void
dp_bpf_execute_cb(void *aux_, struct dp_packet_batch *batch,
                  const struct nlattr *action, bool should_steal)
{
    /* One more than the slots of an action list: a set_tunnel slot. */
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS + 1];
    struct dp_bpf_execute_aux *aux = aux_;
    struct dp_bpf *dp = aux->dp;
    struct dp_packet *packet;
    uint32_t n_slots, n_tnl = 0;
    bool rest = false;
    bool cut = false;
    size_t rest_len;
    int error;

    if (nl_attr_type(action) == OVS_ACTION_ATTR_CT && aux->steal
        && dp_bpf_execute_ipf_ct(aux, batch, action, should_steal)) {
        return;
    }
    if (nl_attr_type(action) == OVS_ACTION_ATTR_RECIRC) {
        bool l3 = false;

        DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
            l3 = l3 || packet->packet_type != htonl(PT_ETH);
        }
        if (l3) {
            /* Layer 3 packets recirculate here, the others in BPF. */
            struct ovs_bpf_action recirc[OVS_BPF_MAX_ACTIONS];
            uint32_t n;

            dpif_bpf_odp_to_actions(action, NLA_ALIGN(action->nla_len),
                                    recirc, &n);
            DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
                if (packet->packet_type != htonl(PT_ETH)) {
                    dp_bpf_recirc_l3(dp, (should_steal ? packet
                                          : dp_packet_clone(packet)),
                                     nl_attr_get_u32(action));
                } else {
                    dp_bpf_downcall(dp, packet, recirc, 1, aux->mru);
                    if (should_steal) {
                        dp_packet_delete(packet);
                    }
                }
            }
            if (should_steal) {
                dp_packet_batch_init(batch);
            }
            return;
        }
    }
    if (nl_attr_type(action) == OVS_ACTION_ATTR_METER) {
        /* The actions after the meter run on the packets it lets through:
         * a downcall could not tell which. */
        dp_bpf_meter_batch(dp, batch, nl_attr_get_u32(action));
        if (should_steal) {
            dp_packet_delete_batch(batch, true);
        }
        return;
    }

    /* odp_execute_actions() ran set(tunnel(...)) on the packet's metadata:
     * an output to a tunnel port needs it as an action.  Harmless for any
     * other output. */
    packet = batch->count ? batch->packets[0] : NULL;
    if (packet && flow_tnl_dst_is_set(&packet->md.tunnel)
        && nl_attr_type(action) == OVS_ACTION_ATTR_OUTPUT
        && !dpif_bpf_tunnel_action(&packet->md.tunnel, &slots[0])) {
        n_tnl = 1;
    }

    /* A trunc() that odp_execute_actions() ran cuts the packets of the
     * next output only: such a batch goes down one action at a time, and so
     * does a batch with layer 3 packets (see dp_bpf_downcall_l3()). */
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        cut = (cut || dp_packet_get_cutlen(packet)
               || packet->packet_type != htonl(PT_ETH));
    }
    rest_len = cut ? 0 : dp_bpf_rest_of_actions(aux, action);
    if (rest_len > NLA_ALIGN(action->nla_len)
        && !dpif_bpf_odp_to_actions(action, rest_len, slots + n_tnl,
                                    &n_slots)
        && n_tnl + n_slots <= OVS_BPF_MAX_ACTIONS) {
        rest = true;
        error = 0;
    } else {
        error = dpif_bpf_odp_to_actions(action, NLA_ALIGN(action->nla_len),
                                        slots + n_tnl, &n_slots);
    }
    n_slots += n_tnl;
    if (!rest && nl_attr_type(action) == OVS_ACTION_ATTR_TUNNEL_PUSH
        && dp_bpf_tnl_push(dp, batch, action, should_steal)) {
        return;
    }
    if (error) {
        VLOG_WARN_RL(&rl, "%s: action type %"PRIu16" cannot be executed "
                     "(%s)", dp->name, nl_attr_type(action),
                     ovs_strerror(error));
    } else {
        DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
            /* The BPF programs see Ethernet frames only: a packet that
             * lost its Ethernet header (pop_nsh of an NSH packet that
             * carried IP) cannot be sent, sent up or recirculated, as the
             * kernel datapath cannot send it to an Ethernet device.  An
             * IPv4 or IPv6 packet may go to a layer 3 port. */
            if (packet->packet_type != htonl(PT_ETH)
                && !dp_bpf_downcall_l3(dp, packet, slots, n_slots)) {
                COVERAGE_INC(dpif_bpf_execute_not_eth);
                VLOG_DBG_RL(&rl, "%s: dropped a packet of type (%"PRIu16
                            ",%#"PRIx16") that action type %"PRIu16" "
                            "would send to the BPF programs", dp->name,
                            pt_ns(packet->packet_type),
                            pt_ns_type(packet->packet_type),
                            nl_attr_type(action));
                continue;
            } else if (packet->packet_type == htonl(PT_ETH)) {
                dp_bpf_downcall(dp, packet, slots, n_slots, aux->mru);
            }
        }
    }
    if (rest) {
        /* Done with the whole list: an empty batch stops
         * odp_execute_actions(), which then leaves the packets to us. */
        if (aux->steal || should_steal) {
            dp_packet_delete_batch(batch, true);
        }
        dp_packet_batch_init(batch);
        return;
    }
    if (!should_steal) {
        /* A trunc() cuts only the packets of the next output: the actions
         * after this one see the whole packet again. */
        dp_packet_batch_reset_cutlen(batch);
    }
    dp_packet_delete_batch(batch, should_steal);
}

/* Returns true if the set actions among 'actions' (of 'len' bytes) only set
 * headers that the packet whose flow is 'flow' has.  The kernel datapath
 * refuses the other ones (EINVAL), as we do, and odp_execute_actions()
 * assumes that the headers are there. */
static bool
set_actions_fit_packet(const struct flow *flow, const struct nlattr *actions,
                       size_t len)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH (a, left, actions, len) {
        int type = nl_attr_type(a);
        bool ok = true;

        if (type == OVS_ACTION_ATTR_CLONE) {
            ok = set_actions_fit_packet(flow, nl_attr_get(a),
                                        nl_attr_get_size(a));
        } else if (type == OVS_ACTION_ATTR_SET
                   || type == OVS_ACTION_ATTR_SET_MASKED) {
            const struct nlattr *key = nl_attr_get(a);
            bool ip = is_ip_any(flow) && !(flow->nw_frag & FLOW_NW_FRAG_LATER);

            switch (nl_attr_type(key)) {
            case OVS_KEY_ATTR_IPV4:
                ok = flow->dl_type == htons(ETH_TYPE_IP);
                break;
            case OVS_KEY_ATTR_IPV6:
                ok = flow->dl_type == htons(ETH_TYPE_IPV6);
                break;
            case OVS_KEY_ATTR_TCP:
                ok = ip && flow->nw_proto == IPPROTO_TCP;
                break;
            case OVS_KEY_ATTR_UDP:
                ok = ip && flow->nw_proto == IPPROTO_UDP;
                break;
            case OVS_KEY_ATTR_SCTP:
                ok = ip && flow->nw_proto == IPPROTO_SCTP;
                break;
            case OVS_KEY_ATTR_ICMP:
                ok = ip && flow->nw_proto == IPPROTO_ICMP
                     && flow->dl_type == htons(ETH_TYPE_IP);
                break;
            case OVS_KEY_ATTR_ICMPV6:
                ok = ip && flow->nw_proto == IPPROTO_ICMPV6
                     && flow->dl_type == htons(ETH_TYPE_IPV6);
                break;
            case OVS_KEY_ATTR_ARP:
                ok = (flow->dl_type == htons(ETH_TYPE_ARP)
                      || flow->dl_type == htons(ETH_TYPE_RARP));
                break;
            case OVS_KEY_ATTR_ND:
            case OVS_KEY_ATTR_ND_EXTENSIONS:
                ok = is_nd(flow, NULL);
                break;
            case OVS_KEY_ATTR_NSH:
                /* odp_execute_actions() rewrites the packet's L3 header as
                 * an NSH header. */
                ok = flow->dl_type == htons(ETH_TYPE_NSH);
                break;
            default:
                break;
            }
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

struct dp_bpf_execute_seg_aux {
    const struct dp_bpf_execute_aux *x;
    const struct nlattr *actions;
    size_t actions_len;
};

/* dpif_bpf_gso_segment() callback: runs the actions of 'aux_' on a copy of
 * 'seg', a segment of a GSO packet, which needs no MRU any more. */
static void
dp_bpf_execute_seg(const struct dp_packet *seg, void *aux_)
{
    const struct dp_bpf_execute_seg_aux *aux = aux_;
    struct dp_bpf_execute_aux x = *aux->x;

    x.steal = true;
    x.mru = 0;
    dp_bpf_execute_userspace(&x, dp_packet_clone(seg), NULL, false,
                             aux->actions, aux->actions_len);
}

/* Runs 'actions' on 'packet' in ovs-vswitchd, for actions the BPF programs
 * cannot run, in datapath 'x->dp', taking the packet if 'x->steal', with
 * MRU 'x->mru'.  'flow' is what flow_extract() gave for 'packet' (or for
 * the packet it is a clone of), which also set the header offsets that
 * odp_execute_actions() needs, or NULL if it did not run yet.  Returns
 * EINVAL (and does nothing) if the actions set headers that the packet
 * does not have.
 *
 * A GSO TCP packet longer than its MRU is cut into its segments first, and
 * the actions run on each, as the kernel datapath segments a GSO packet
 * before its upcall: cut after the actions, it could have become a packet
 * that dpif_bpf_gso_segment() cannot cut (an encap(mpls),encap(ethernet)
 * that ovs-vswitchd ran makes an MPLS frame of it) and gone down whole, for
 * the device to drop as longer than its MTU. */
int
dp_bpf_execute_userspace(const struct dp_bpf_execute_aux *x,
                         struct dp_packet *packet, const struct flow *flow,
                         bool probe, const struct nlattr *actions,
                         size_t actions_len)
{
    struct dp_bpf_execute_aux aux = *x;
    struct dp_packet_batch batch;
    struct flow flow_buf;

    if (!flow) {
        flow_extract(packet, &flow_buf);
        flow = &flow_buf;
    }
    if (!set_actions_fit_packet(flow, actions, actions_len)) {
        if (aux.steal) {
            dp_packet_delete(packet);
        }
        return EINVAL;
    }
    if (probe) {
        /* A feature probe: the actions are valid, but running them could
         * send spurious packets into the network (as dpif-netdev, drop). */
        return 0;
    }
    if (aux.mru && packet->packet_type == htonl(PT_ETH)
        && !dp_packet_get_cutlen(packet)) {
        struct dp_bpf_execute_seg_aux seg_aux = {
            .x = x, .actions = actions, .actions_len = actions_len,
        };

        if (dpif_bpf_gso_segment(packet, aux.mru, dp_bpf_execute_seg,
                                 &seg_aux)) {
            COVERAGE_INC(dpif_bpf_downcall_gso);
            if (aux.steal) {
                dp_packet_delete(packet);
            }
            return 0;
        }
    }

    COVERAGE_INC(dpif_bpf_execute_userspace);
    dp_packet_batch_init_packet(&batch, packet);
    aux.actions = actions;
    aux.actions_len = actions_len;
    odp_execute_actions(&aux, &batch, aux.steal, actions, actions_len,
                        dp_bpf_execute_cb);
    return 0;
}

static int
dp_bpf_execute(struct dpif *dpif, struct dpif_execute *execute)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_execute_aux x = { .dp = dp, .mru = execute->mtu };
    uint32_t n_slots;
    int error;

    if (dp_packet_size(execute->packet) < ETH_HEADER_LEN) {
        return EINVAL;
    }
    if (!execute->probe
        && dp_bpf_ipf_actions_have_ct(execute->actions,
                                      execute->actions_len)) {
        /* The flow that ofproto extracted from the packet, or else ours,
         * once: it also sets the header offsets that the execution of an
         * IP fragment below needs. */
        const struct flow *flow = execute->flow;
        struct flow flow_buf;

        if (!flow) {
            flow_extract(execute->packet, &flow_buf);
            flow = &flow_buf;
        }
        if (dp_bpf_ipf_flow_is_frag(flow)) {
            /* An IP fragment to ct(): ipf keeps it, so it must be ours. */
            x.steal = true;
            return dp_bpf_execute_userspace(
                &x, dp_packet_clone(execute->packet),
                flow == &flow_buf ? flow : NULL, false,
                execute->actions, execute->actions_len);
        }
    }
    error = dpif_bpf_odp_to_actions(execute->actions, execute->actions_len,
                                    slots, &n_slots);
    if (error == E2BIG) {
        return dp_bpf_execute_userspace(&x, execute->packet, NULL,
                                        execute->probe, execute->actions,
                                        execute->actions_len);
    } else if (error) {
        return error;
    } else if (!n_slots || execute->probe) {
        return 0;
    } else if (dpif_bpf_odp_execute_in_userspace(slots, n_slots,
                                                 execute->packet)) {
        return dp_bpf_execute_userspace(&x, execute->packet, NULL, false,
                                        execute->actions,
                                        execute->actions_len);
    }
    return dp_bpf_downcall(dp, execute->packet, slots, n_slots,
                           execute->mtu);
}

/* Carries out 'ops' in order, except that the flow puts of a run of puts
 * and executes go first, in one batch (dp_bpf_flow_put_batch()), and the
 * executes after them: ofproto-dpif-upcall hands each upcall's put and
 * execute together.  An executed packet that meets the flow table (after a
 * recirc()) may then find a flow that a later put of its run installed,
 * as it would have, sent a moment later.  A flow delete or get ends a run,
 * as it reads the flow table.  A run of flow deletes goes in one batch too
 * (dp_bpf_flow_del_batch()).  The executes stay one downcall each (see
 * "Downcalls" in Documentation/topics/dpif-bpf.rst). */
void
dpif_bpf_operate(struct dpif *dpif, struct dpif_op **ops, size_t n_ops,
                 enum dpif_offload_type offload_type OVS_UNUSED)
{
    struct dpif_flow_put **puts = xmalloc(n_ops * sizeof *puts);
    int *errors = xmalloc(n_ops * sizeof *errors);
    struct dpif_op **put_ops = xmalloc(n_ops * sizeof *put_ops);
    struct dpif_flow_del **dels = xmalloc(n_ops * sizeof *dels);

    for (size_t i = 0; i < n_ops; ) {
        size_t n_puts = 0;
        size_t end;

        for (end = i; end < n_ops; end++) {
            struct dpif_op *op = ops[end];

            if (op->type == DPIF_OP_FLOW_PUT) {
                put_ops[n_puts] = op;
                puts[n_puts++] = &op->flow_put;
            } else if (op->type != DPIF_OP_EXECUTE) {
                break;
            }
        }
        if (n_puts) {
            dp_bpf_flow_put_batch(dpif, puts, errors, n_puts);
            for (size_t j = 0; j < n_puts; j++) {
                put_ops[j]->error = errors[j];
            }
        }
        for (size_t j = i; j < end; j++) {
            if (ops[j]->type == DPIF_OP_EXECUTE) {
                ops[j]->error = dp_bpf_execute(dpif, &ops[j]->execute);
            }
        }
        if (end < n_ops && ops[end]->type == DPIF_OP_FLOW_DEL) {
            size_t n_dels = 0;

            for (; end < n_ops && ops[end]->type == DPIF_OP_FLOW_DEL; end++) {
                put_ops[n_dels] = ops[end];   /* Reused for the deletes. */
                dels[n_dels++] = &ops[end]->flow_del;
            }
            dp_bpf_flow_del_batch(dpif, dels, errors, n_dels);
            for (size_t j = 0; j < n_dels; j++) {
                put_ops[j]->error = errors[j];
            }
        } else if (end < n_ops) {
            struct dpif_op *op = ops[end++];

            ovs_assert(op->type == DPIF_OP_FLOW_GET);
            op->error = dp_bpf_flow_get(dpif, &op->flow_get);
        }
        i = end;
    }

    free(dels);
    free(put_ops);
    free(errors);
    free(puts);
}
