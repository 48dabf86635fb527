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

/* IP fragments through ct() on the BPF datapath.
 *
 * BPF programs cannot hold a packet, so they cannot reassemble.  A megaflow
 * that matches IP fragments (nw_frag) and has a ct() action is installed as
 * a userspace one (OVS_BPF_FLOW_F_USERSPACE): its packets, and the first
 * fragment that ofproto executes after a miss, go up to ovs-vswitchd, which
 * runs the actions itself (dp_bpf_execute_userspace()).  When they reach
 * the ct() action, this file does what dpif-netdev's conntrack_execute()
 * does, with the same code, OVS's lib/ipf.c:
 *
 *   - ipf_preprocess_conntrack() keeps the fragment until its datagram is
 *     complete (within the limits of "dpctl/ipf-set-*"), and then gives
 *     back the reassembled packet;
 *
 *   - the reassembled packet is tracked in the kernel's conntrack exactly
 *     as the ct action tracks a packet in BPF: the object's program
 *     'ovs_bpf_ct_reass' (bpf/ct-reass.h), which runs the ct action's code,
 *     is run on its headers with BPF_PROG_TEST_RUN;
 *
 *   - ipf_postprocess_conntrack() replaces it by its original fragments,
 *     with its conntrack state (and its NAT);
 *
 * and the fragments resume with the actions after ct() (recirc(), output)
 * as the packets of the ct slow path do (dp_bpf_ct_resume() in
 * dpif-bpf-execute.c): they go down to the BPF programs with the conntrack
 * state in the downcall's key metadata.  Fragments that ipf does not take
 * (reassembly disabled, too small, bad) are +trk+inv, as in dpif-netdev.
 *
 * Packets that are not fragments never come here: their megaflows stay in
 * BPF. */

#include <config.h>

#include "dpif-bpf-ipf.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/pkt_cls.h>
#include <netinet/ip6.h>
#include <string.h>

#include "coverage.h"
#include "dp-packet.h"
#include "dpif-bpf-ct-slow.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "flow.h"
#include "ipf.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "openvswitch/vlog.h"
#include "packets.h"
#include "random.h"
#include "timeval.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_ipf);

COVERAGE_DEFINE(dpif_bpf_ipf_frag);
COVERAGE_DEFINE(dpif_bpf_ipf_reassembled);
COVERAGE_DEFINE(dpif_bpf_ipf_ct_error);
COVERAGE_DEFINE(dpif_bpf_ipf_oversize);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);

/* The most header bytes the ct program gets: enough for any IP header and
 * any L4 header, below the size that BPF_PROG_TEST_RUN accepts for a TC
 * program (a page, less the skb's head and tail room).  conntrack and NAT
 * need the headers only: NAT updates the L4 checksum incrementally. */
#define DP_BPF_CT_REASS_MAX_HDR 2048

void
dp_bpf_ipf_init(struct dp_bpf *dp)
{
    dp->ipf = ipf_init();
    dp->ipf_hash_basis = random_uint32();
    ovs_mutex_init(&dp->ct_reass_mutex);
}

void
dp_bpf_ipf_destroy(struct dp_bpf *dp)
{
    if (dp->ipf) {
        ipf_destroy(dp->ipf);
        dp->ipf = NULL;
        ovs_mutex_destroy(&dp->ct_reass_mutex);
    }
}

/* Returns true if 'actions' (of 'len' bytes) have a ct() action, at any
 * depth. */
static bool
actions_have_ct(const struct nlattr *actions, size_t len)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH (a, left, actions, len) {
        switch (nl_attr_type(a)) {
        case OVS_ACTION_ATTR_CT:
            return true;
        case OVS_ACTION_ATTR_CLONE:
            if (actions_have_ct(nl_attr_get(a), nl_attr_get_size(a))) {
                return true;
            }
            break;
        case OVS_ACTION_ATTR_SAMPLE:
        case OVS_ACTION_ATTR_CHECK_PKT_LEN: {
            /* The nested action lists of these are attributes of their
             * own, among others that are not lists: look into each. */
            const struct nlattr *b;
            size_t left2;

            NL_NESTED_FOR_EACH (b, left2, a) {
                if (nl_attr_get_size(b) >= NLA_HDRLEN
                    && actions_have_ct(nl_attr_get(b), nl_attr_get_size(b))) {
                    return true;
                }
            }
            break;
        }
        default:
            break;
        }
    }
    return false;
}

bool
dp_bpf_ipf_flow_is_userspace(const struct ovs_bpf_flow_key *key,
                             const struct nlattr *actions, size_t len)
{
    return ((key->eth_type == htons(ETH_TYPE_IP)
             || key->eth_type == htons(ETH_TYPE_IPV6))
            && key->nw_frag & FLOW_NW_FRAG_ANY
            && actions_have_ct(actions, len));
}

/* Returns true if 'packet' is an IP fragment, and then its ethertype in
 * '*dl_type'.  Sets the packet's header offsets. */
static bool
packet_is_frag(struct dp_packet *packet, ovs_be16 *dl_type)
{
    struct flow flow;

    flow_extract(packet, &flow);
    *dl_type = flow.dl_type;
    return is_ip_any(&flow) && flow.nw_frag & FLOW_NW_FRAG_ANY;
}

/* The header offsets of a packet.  Those of a reassembled packet are the
 * ones ipf gave it, which flow_extract() must not change: ipf leaves the
 * fragment header of an IPv6 packet in place (its offset zeroed) but points
 * the IPv6 header's next header past it, so that parsing the packet again
 * would take the fragment header for the L4 header, and
 * ipf_postprocess_conntrack() copies the L4 header at the offset into the
 * first fragment. */
struct packet_ofs {
    uint16_t l2_pad_size, l2_5_ofs, l3_ofs, l4_ofs;
};

static void
packet_ofs_save(const struct dp_packet *p, struct packet_ofs *o)
{
    o->l2_pad_size = p->l2_pad_size;
    o->l2_5_ofs = p->l2_5_ofs;
    o->l3_ofs = p->l3_ofs;
    o->l4_ofs = p->l4_ofs;
}

static void
packet_ofs_restore(struct dp_packet *p, const struct packet_ofs *o)
{
    p->l2_pad_size = o->l2_pad_size;
    p->l2_5_ofs = o->l2_5_ofs;
    p->l3_ofs = o->l3_ofs;
    p->l4_ofs = o->l4_ofs;
}

bool
dp_bpf_ipf_actions_have_ct(const struct nlattr *actions, size_t len)
{
    return actions_have_ct(actions, len);
}

bool
dp_bpf_ipf_flow_is_frag(const struct flow *flow)
{
    return is_ip_any(flow) && flow->nw_frag & FLOW_NW_FRAG_ANY;
}

/* Returns true if the IP fragment 'packet' (with its header offsets set)
 * ends past the largest datagram, 65,535 bytes (for IPv6, of payload after
 * the fragment header), which no reassembly can make.  lib/ipf.c computes
 * the end of a fragment in 16 bits, where such a fragment wraps around and
 * is buffered; the kernel drops it (ip_frag_queue(), ip6_frag_queue()). */
static bool
frag_is_oversize(const struct dp_packet *packet, ovs_be16 dl_type)
{
    size_t l3_size = dp_packet_l3_size(packet);

    if (dl_type == htons(ETH_TYPE_IP)) {
        const struct ip_header *ip = dp_packet_l3(packet);

        return (l3_size >= IP_HEADER_LEN
                && ((ntohs(ip->ip_frag_off) & IP_FRAG_OFF_MASK) * 8
                    + ntohs(ip->ip_tot_len)) > 65535);
    } else {
        const struct ovs_16aligned_ip6_hdr *ip6 = dp_packet_l3(packet);
        const struct ovs_16aligned_ip6_frag *frag_hdr = NULL;
        const void *data = ip6 + 1;
        size_t size, frag_ofs;
        uint8_t nw_proto, nw_frag = 0;

        if (l3_size < sizeof *ip6) {
            return false;
        }
        size = l3_size - sizeof *ip6;
        nw_proto = ip6->ip6_nxt;
        if (!parse_ipv6_ext_hdrs(&data, &size, &nw_proto, &nw_frag,
                                 &frag_hdr) || !frag_hdr) {
            return false;
        }
        /* The fragmentable part: after the fragment header, up to the end
         * of the payload. */
        frag_ofs = ((const uint8_t *) (frag_hdr + 1)
                    - (const uint8_t *) (ip6 + 1));
        return (ntohs(frag_hdr->ip6f_offlg & IP6F_OFF_MASK)
                + ntohs(ip6->ip6_plen) - frag_ofs) > 65535;
    }
}

/* The conntrack metadata that conntrack gives a packet it cannot track:
 * +trk+inv in 'zone' (write_ct_md() of lib/conntrack.c). */
static void
ct_md_invalid(struct dp_packet *packet, uint16_t zone)
{
    struct pkt_metadata *md = &packet->md;

    md->ct_state = CS_INVALID | CS_TRACKED;
    md->ct_zone = zone;
    md->ct_mark = 0;
    memset(&md->ct_label, 0, sizeof md->ct_label);
    md->ct_orig_tuple_ipv6 = false;
    memset(&md->ct_orig_tuple, 0, sizeof md->ct_orig_tuple);
}

/* Tracks the reassembled packet 'packet' in the kernel's conntrack as ct()
 * 'act' (with labels 'lbl', or NULL) does in BPF, and sets its conntrack
 * metadata (and its headers, if
 * NAT changed them) from the result.  A packet that the ct action would drop
 * (a commit that the kernel refuses) is +trk+inv: ipf owns it, and it stands
 * for fragments that would otherwise go on half-tracked. */
static void
ct_reassembled(struct dp_bpf *dp, struct dp_packet *packet,
               const struct ovs_bpf_act_ct *act,
               const struct ovs_bpf_act_ct_label *lbl)
{
    uint8_t hdr[DP_BPF_CT_REASS_MAX_HDR];
    struct ovs_bpf_flow_key mask;
    struct ovs_bpf_ct_reass io;
    uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN];
    struct packet_ofs ofs;
    const uint8_t *l4;
    struct flow flow;
    uint32_t zero = 0;
    size_t hdr_len;
    int error;

    COVERAGE_INC(dpif_bpf_ipf_reassembled);
    packet_ofs_save(packet, &ofs);
    flow_extract(packet, &flow);
    packet_ofs_restore(packet, &ofs);
    l4 = dp_packet_l4(packet);
    if (!l4 || dp_packet_l4_size(packet) < 4) {
        ct_md_invalid(packet, act->zone);
        return;
    }
    /* The transport fields from the L4 header where ipf says it is (see
     * struct packet_ofs), as the parser would take them. */
    if (flow.nw_proto == IPPROTO_ICMP || flow.nw_proto == IPPROTO_ICMPV6) {
        flow.tp_src = htons(l4[0]);
        flow.tp_dst = htons(l4[1]);
    } else {
        memcpy(&flow.tp_src, l4, 2);
        memcpy(&flow.tp_dst, l4 + 2, 2);
    }
    if (flow.nw_proto == IPPROTO_TCP && dp_packet_l4_size(packet) >= 14) {
        ovs_be16 flags;

        memcpy(&flags, l4 + 12, 2);
        flow.tcp_flags = flags & htons(0x0fff);
    }
    if ((flow.nw_proto != IPPROTO_TCP && flow.nw_proto != IPPROTO_UDP)
        || lbl) {
        /* The conntrack kfuncs track TCP and UDP only, and write no
         * labels: ICMP, the other protocols and commits with labels take
         * the ct slow path, here as for whole packets. */
        if (!dpif_bpf_ct_slow_execute(dp->obj, act, lbl, packet, &flow)) {
            ct_md_invalid(packet, act->zone);
        }
        return;
    }
    memset(&io, 0, sizeof io);
    if (dpif_bpf_flow_to_key(&flow, NULL, &io.key, &mask)) {
        ct_md_invalid(packet, act->zone);
        return;
    }
    dpif_bpf_md_to_key_meta(&packet->md, key_meta);
    memcpy((uint8_t *) &io.key + OVS_BPF_KEY_CT_TUN_OFS, key_meta,
           OVS_BPF_KEY_CT_TUN_LEN);
    io.act = *act;
    io.l3_ofs = packet->l3_ofs;
    io.l4_ofs = packet->l4_ofs;
    hdr_len = MIN(dp_packet_size(packet), (size_t) packet->l4_ofs + 60);
    hdr_len = MIN(hdr_len, sizeof hdr);

    LIBBPF_OPTS(bpf_test_run_opts, opts,
                .data_in = dp_packet_data(packet),
                .data_size_in = hdr_len,
                .data_out = hdr,
                .data_size_out = sizeof hdr,
                .repeat = 1);

    ovs_mutex_lock(&dp->ct_reass_mutex);
    error = (bpf_map_update_elem(dp->obj->ct_reass_fd, &zero, &io, BPF_ANY)
             ? errno : 0);
    if (!error) {
        error = -bpf_prog_test_run_opts(dp->obj->ct_reass_prog_fd, &opts);
    }
    if (!error && bpf_map_lookup_elem(dp->obj->ct_reass_fd, &zero, &io)) {
        error = errno;
    }
    ovs_mutex_unlock(&dp->ct_reass_mutex);

    if (error || opts.retval != TC_ACT_OK || opts.data_size_out != hdr_len) {
        COVERAGE_INC(dpif_bpf_ipf_ct_error);
        if (error) {
            VLOG_WARN_RL(&rl, "%s: ct() of a reassembled packet could not "
                         "run (%s)", dp->name, ovs_strerror(error));
        }
        ct_md_invalid(packet, act->zone);
        return;
    }
    /* NAT rewrote the headers (and the L4 checksum, for the whole datagram),
     * which ipf_postprocess_conntrack() copies into the fragments. */
    memcpy(dp_packet_data(packet), hdr, hdr_len);
    dpif_bpf_key_meta_to_md((uint8_t *) &io.key + OVS_BPF_KEY_CT_TUN_OFS,
                            &packet->md);
}

bool
dp_bpf_ipf_ct(struct dp_bpf *dp, struct dp_packet_batch *batch,
              const struct ovs_bpf_act_ct *ct,
              const struct ovs_bpf_act_ct_label *lbl)
{
    struct dp_packet_batch oversize;
    struct ovs_bpf_act_ct act = *ct;
    struct dp_packet *packet;
    size_t n = batch->count, i;
    ovs_be16 dl_type;
    long long now;

    if (!batch->count || !packet_is_frag(batch->packets[0], &dl_type)) {
        return false;
    }
    COVERAGE_ADD(dpif_bpf_ipf_frag, batch->count);

    /* Fragments that no reassembly can complete are +trk+inv at once,
     * never buffered. */
    dp_packet_batch_init(&oversize);
    DP_PACKET_BATCH_REFILL_FOR_EACH (i, n, packet, batch) {
        if (frag_is_oversize(packet, dl_type)) {
            COVERAGE_INC(dpif_bpf_ipf_oversize);
            ct_md_invalid(packet, act.zone);
            dp_packet_batch_add(&oversize, packet);
        } else {
            dp_packet_batch_refill(batch, packet, i);
        }
    }

    now = time_msec();
    ipf_preprocess_conntrack(dp->ipf, batch, now, dl_type, act.zone,
                             dp->ipf_hash_basis);
    DP_PACKET_BATCH_FOR_EACH (j, packet, batch) {
        struct packet_ofs ofs;
        ovs_be16 type;
        bool frag;

        /* What ipf gives back in place of the fragments that it took is
         * reassembled: no longer a fragment (ipf clears the offset and the
         * MF flag, or the IPv6 fragment header's).  A packet there may
         * have the address of a fragment that ipf freed. */
        packet_ofs_save(packet, &ofs);
        frag = packet_is_frag(packet, &type);
        packet_ofs_restore(packet, &ofs);
        if (frag) {
            /* A fragment that ipf did not take. */
            ct_md_invalid(packet, act.zone);
        } else {
            ct_reassembled(dp, packet, &act, lbl);
        }
    }
    ipf_postprocess_conntrack(dp->ipf, batch, now, dl_type);

    DP_PACKET_BATCH_FOR_EACH (j, packet, &oversize) {
        if (dp_packet_batch_is_full(batch)) {
            dp_packet_delete(packet);
        } else {
            dp_packet_batch_add(batch, packet);
        }
    }
    return true;
}

/* dpctl/ipf-* commands. */

int
dpif_bpf_ipf_set_enabled(struct dpif *dpif, bool v6, bool enable)
{
    return ipf_set_enabled(get_dp_bpf(dpif)->ipf, v6, enable);
}

int
dpif_bpf_ipf_set_min_frag(struct dpif *dpif, bool v6, uint32_t min_frag)
{
    return ipf_set_min_frag(get_dp_bpf(dpif)->ipf, v6, min_frag);
}

int
dpif_bpf_ipf_set_max_nfrags(struct dpif *dpif, uint32_t max_frags)
{
    return ipf_set_max_nfrags(get_dp_bpf(dpif)->ipf, max_frags);
}

int
dpif_bpf_ipf_get_status(struct dpif *dpif, struct dpif_ipf_status *status)
{
    /* struct dpif_ipf_status is struct ipf_status under another name (see
     * dpif-provider.h), as dpif-netdev relies on too. */
    BUILD_ASSERT_DECL(sizeof(struct dpif_ipf_status)
                      == sizeof(struct ipf_status));
    return ipf_get_status(get_dp_bpf(dpif)->ipf, (struct ipf_status *) status);
}

int
dpif_bpf_ipf_dump_start(struct dpif *dpif OVS_UNUSED,
                        struct ipf_dump_ctx **ctx)
{
    return ipf_dump_start(ctx);
}

int
dpif_bpf_ipf_dump_next(struct dpif *dpif, void *ctx, char **dump)
{
    return ipf_dump_next(get_dp_bpf(dpif)->ipf, ctx, dump);
}

int
dpif_bpf_ipf_dump_done(struct dpif *dpif OVS_UNUSED, void *ctx)
{
    return ipf_dump_done(ctx);
}
