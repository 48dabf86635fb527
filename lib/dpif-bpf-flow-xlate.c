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

/* Translation between the flows of the dpif interface (a flow put's ODP
 * key, mask and actions; struct dpif_flow and its statistics) and the
 * flows of the megaflow table of the BPF datapath and their BPF entries,
 * through dpif-bpf-odp.c. */

#include <config.h>

#include <errno.h>
#include <string.h>

#include "coverage.h"
#include "dpif-bpf-flow-private.h"
#include "dpif-bpf-ipf.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "odp-util.h"
#include "openvswitch/match.h"
#include "openvswitch/ofpbuf.h"
#include "util.h"

COVERAGE_DEFINE(dpif_bpf_flow_userspace);
COVERAGE_DEFINE(dpif_bpf_flow_l3);

/* The ufid of a flow: the one given, or else the hash of its key, as
 * dpctl computes it. */
void
dp_bpf_flow_ufid(const ovs_u128 *ufid,
                 const struct nlattr *key, size_t key_len, ovs_u128 *out)
{
    if (ufid) {
        *out = *ufid;
    } else {
        odp_flow_key_hash(key, key_len, out);
    }
}

/* Translates 'actions' into the BPF flow entry 'value', with zero statistics,
 * and into 'fa', which has the slots of a list too long for the entry (see
 * struct ovs_bpf_flow; 'value->actions_id' is left 0 for the caller).  Actions
 * that are valid but beyond the BPF programs make the flow a userspace one. */
static int
build_flow_value(const struct nlattr *actions, size_t actions_len,
                 struct ovs_bpf_flow *value, struct ovs_bpf_flow_actions *fa)
{
    int error;

    memset(value, 0, sizeof *value);
    memset(fa, 0, sizeof *fa);
    error = dpif_bpf_odp_to_actions(actions, actions_len, fa->actions,
                                    &value->n_actions);
    if (error == E2BIG) {
        COVERAGE_INC(dpif_bpf_flow_userspace);
        memset(fa, 0, sizeof *fa);
        value->n_actions = 0;
        value->flags = OVS_BPF_FLOW_F_USERSPACE;
        error = 0;
    }
    if (!error && value->n_actions <= OVS_BPF_FLOW_INLINE_ACTIONS) {
        memcpy(value->actions, fa->actions,
               value->n_actions * sizeof *value->actions);
    }
    return error;
}

/* Whether the BPF entry 'value' keeps its slots in 'flow_actions'. */
bool
dp_bpf_flow_value_is_long(const struct ovs_bpf_flow *value)
{
    return value->n_actions > OVS_BPF_FLOW_INLINE_ACTIONS;
}

/* Translates 'put' into 'prep' (the caller frees 'prep->fa' and
 * 'prep->l3_match'), which needs nothing of the flow table.  Zeroes
 * 'put->stats'.  Returns 0 or the errno value that 'put' fails with. */
int
dp_bpf_flow_put_prepare(struct dpif_flow_put *put,
                        struct dp_bpf_put_prep *prep)
{
    struct match l3_match;
    int error;

    if (put->stats) {
        memset(put->stats, 0, sizeof *put->stats);
    }
    prep->l3_match = NULL;
    prep->fa = NULL;
    error = dpif_bpf_odp_to_l3_match(put->key, put->key_len, put->mask,
                                     put->mask_len, &l3_match);
    if (error != ENOENT) {
        /* Not an Ethernet frame: its flow stays in ovs-vswitchd. */
        if (!error) {
            error = dpif_bpf_odp_check_l3_actions(l3_match.flow.packet_type,
                                                  put->actions,
                                                  put->actions_len);
        }
        if (!error) {
            dp_bpf_flow_ufid(put->ufid, put->key, put->key_len, &prep->ufid);
            prep->l3_match = xmemdup(&l3_match, sizeof l3_match);
            COVERAGE_INC(dpif_bpf_flow_l3);
        }
        return error;
    }

    error = dpif_bpf_odp_to_key(put->key, put->key_len, put->mask,
                                put->mask_len, &prep->bkey, &prep->bmask);
    if (!error) {
        /* On the stack: a handler prepares up to DP_BPF_PUT_BATCH puts
         * (dpif-bpf-flow-table.c) in one array, which with 2 kB more each
         * would be a block that glibc maps and unmaps at each batch (above
         * its mmap threshold, see ovs_libbpf_log_init()), page faults for
         * every page of it. */
        struct ovs_bpf_flow_actions fa;

        error = build_flow_value(put->actions, put->actions_len,
                                 &prep->value, &fa);
        if (!error && dp_bpf_flow_value_is_long(&prep->value)) {
            prep->fa = xmemdup(&fa, sizeof fa);
        }
    }
    if (!error) {
        dp_bpf_flow_ufid(put->ufid, put->key, put->key_len, &prep->ufid);
    }
    if (!error
        && !(prep->value.flags & OVS_BPF_FLOW_F_USERSPACE)
        && dp_bpf_ipf_flow_is_userspace(&prep->bkey, put->actions,
                                        put->actions_len)) {
        /* IP fragments to ct(): reassembled in ovs-vswitchd. */
        memset(prep->value.actions, 0, sizeof prep->value.actions);
        prep->value.n_actions = 0;
        prep->value.flags = OVS_BPF_FLOW_F_USERSPACE;
    }
    return error;
}

/* Fills 'out' with 'flow', its key, mask and actions copied into 'buf',
 * but for its statistics, which it zeroes.  The caller holds the mutex of
 * the datapath of 'flow'. */
void
dp_bpf_flow_to_dpif_flow(const struct dp_bpf_flow *flow, bool terse,
                         struct ofpbuf *buf, struct dpif_flow *out)
{
    memset(out, 0, sizeof *out);
    if (!terse) {
        size_t key_ofs, mask_ofs, actions_ofs;

        key_ofs = buf->size;
        ofpbuf_put(buf, flow->key, flow->key_len);
        mask_ofs = buf->size;
        /* A flow put without a mask is an exact match, which a dump
         * without a mask means too. */
        if (flow->mask_len) {
            ofpbuf_put(buf, flow->mask, flow->mask_len);
        }
        actions_ofs = buf->size;
        ofpbuf_put(buf, flow->actions, flow->actions_len);

        out->key = ofpbuf_at_assert(buf, key_ofs, flow->key_len);
        out->key_len = flow->key_len;
        out->mask_len = actions_ofs - mask_ofs;
        out->mask = out->mask_len ? ofpbuf_at_assert(buf, mask_ofs,
                                                     out->mask_len) : NULL;
        out->actions_len = flow->actions_len;
        out->actions = ofpbuf_at(buf, actions_ofs, flow->actions_len);
    }
    out->ufid = flow->ufid;
    out->ufid_present = true;
    out->pmd_id = PMD_ID_NULL;
    out->attrs.offloaded = false;
    out->attrs.dp_layer = "bpf";
    out->attrs.dp_extra_info = NULL;
}

/* Stores in 'stats' the statistics of a BPF flow entry, the sum of its
 * OVS_BPF_FLOW_STATS_SLOTS slots 'slots' (one per CPU or group of CPUs, see
 * struct ovs_bpf_flow). */
void
dp_bpf_stats_from_bpf(const struct ovs_bpf_flow_stats *slots,
                      struct dpif_flow_stats *stats)
{
    uint64_t used_ns = 0;

    memset(stats, 0, sizeof *stats);
    for (int i = 0; i < OVS_BPF_FLOW_STATS_SLOTS; i++) {
        const struct ovs_bpf_flow_stats *b = &slots[i];

        stats->n_packets += b->packets;
        stats->n_bytes += b->bytes;
        used_ns = MAX(used_ns, b->used_ns);
        stats->tcp_flags |= b->tcp_flags;
    }
    /* bpf_ktime_get_coarse_ns() and time_msec() both read
     * CLOCK_MONOTONIC. */
    stats->used = used_ns / (1000 * 1000);
}

/* Adds 'b' to 'stats'. */
void
dp_bpf_stats_add(struct dpif_flow_stats *stats,
                 const struct dpif_flow_stats *b)
{
    stats->n_packets += b->n_packets;
    stats->n_bytes += b->n_bytes;
    stats->used = MAX(stats->used, b->used);
    stats->tcp_flags |= b->tcp_flags;
}
