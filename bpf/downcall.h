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

/* Downcalls: ovs-vswitchd executes actions on a packet by writing it to the
 * datapath's TAP device with a trailer and a stand-in ethertype (see
 * datapath-abi.h); the downcall program, at the TAP's TC ingress,
 * authenticates the trailer, removes it, puts the packet's ethertype back
 * and runs the actions the trailer carries. */

#ifndef BPF_DOWNCALL_H
#define BPF_DOWNCALL_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"
#include "bpf/parse.h"

#define OVS_BPF_ACTION_SIZE ((__u32) sizeof(struct ovs_bpf_action))
_Static_assert(sizeof(struct ovs_bpf_action) == 64, "slot size");

/* Compares the secrets as two 64-bit words, with no early exit.  An
 * all-zero configured secret (ovs-vswitchd has not written one yet) never
 * matches. */
static __always_inline bool
ovs_bpf_secret_ok(const struct ovs_bpf_downcall *dc,
                  const struct ovs_bpf_dp_config *cfg)
{
    __u64 a0, a1, b0, b1;

    __builtin_memcpy(&a0, dc->secret, 8);
    __builtin_memcpy(&a1, dc->secret + 8, 8);
    __builtin_memcpy(&b0, cfg->secret, 8);
    __builtin_memcpy(&b1, cfg->secret + 8, 8);
    return (b0 | b1) && !((a0 ^ b0) | (a1 ^ b1));
}

/* Gives the skb of a downcall, whose bytes are now the packet's, the state
 * that eth_type_trans() and skb_vlan_untag() give a frame received on a
 * port: skb->protocol the packet's ethertype (the TAP set the stand-in)
 * and, for a VLAN-tagged packet, the outer tag in skb metadata, so that
 * the actions (bpf_skb_vlan_pop() looks at skb->protocol) and the ports
 * see what they see on the fast path.  No helper writes skb->protocol; one
 * that sets it from the packet bytes is bpf_skb_vlan_pop() popping a tag
 * from the bytes (it takes the ethertype after the tag), so:
 *
 *     push, push   a placeholder tag in the bytes, one in the metadata,
 *                  skb->protocol 802.1Q;
 *     pop          drops the metadata tag, moves the one in the bytes into
 *                  the metadata: skb->protocol is the packet's ethertype;
 *     pop          drops it; if the packet is VLAN-tagged, moves its outer
 *                  tag into the metadata, as skb_vlan_untag() does.
 *
 * The bytes end as they began.  The last pop fails only on a tagged packet
 * too short for its tag, which the kernel would not untag: it leaves the
 * bytes as they are, and the packet is sent as is.  Returns false if the
 * skb could not be grown. */
static __always_inline bool
ovs_bpf_downcall_untag(struct __sk_buff *skb)
{
    const __be16 tpid = bpf_htons(ETH_P_8021Q);

    if (bpf_skb_vlan_push(skb, tpid, 0) || bpf_skb_vlan_push(skb, tpid, 0)
        || bpf_skb_vlan_pop(skb)) {
        return false;
    }
    bpf_skb_vlan_pop(skb);
    return true;
}

static __always_inline int
ovs_bpf_downcall__(struct __sk_buff *skb)
{
    struct ovs_bpf_scratch *s = ovs_bpf_scratch_get();
    struct ovs_bpf_dp_config *cfg = ovs_bpf_config_get();
    struct ovs_bpf_downcall dc;
    __u32 len = skb->len;
    __u32 n, acts_len, meta_ofs, pkt_len;

    if (!s || !cfg) {
        return ovs_bpf_drop(OVS_BPF_DROP_INTERNAL);
    }
    if (skb->protocol != bpf_htons(OVS_BPF_DOWNCALL_ETH_TYPE)) {
        /* Not written by ovs-vswitchd. */
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_FORGED);
    }
    if (len < ETH_HLEN + sizeof dc) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_MALFORMED);
    }
    /* The trailer may be in paged data: bpf_skb_load_bytes() handles
     * that, and its variable offset rules out direct access anyway. */
    if (bpf_skb_load_bytes(skb, len - sizeof dc, &dc, sizeof dc)) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_MALFORMED);
    }
    if (dc.magic != OVS_BPF_DOWNCALL_MAGIC || !ovs_bpf_secret_ok(&dc, cfg)) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_FORGED);
    }
    n = dc.n_actions;
    if (dc.abi_version != OVS_BPF_OBJ_ABI_VERSION
        || n > OVS_BPF_MAX_ACTIONS) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_MALFORMED);
    }
    acts_len = n * OVS_BPF_ACTION_SIZE;
    if (len < ETH_HLEN + sizeof dc + OVS_BPF_KEY_CT_TUN_LEN + acts_len) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_MALFORMED);
    }
    meta_ofs = len - sizeof dc - OVS_BPF_KEY_CT_TUN_LEN;
    if (bpf_skb_load_bytes(skb, meta_ofs,
                           (__u8 *) &s->key + OVS_BPF_KEY_CT_TUN_OFS,
                           OVS_BPF_KEY_CT_TUN_LEN)) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_MALFORMED);
    }
    pkt_len = meta_ofs - acts_len;
    if (n) {
        /* Verifier: the length must be provably in [1, sizeof actions];
         * "n * 64" after "n <= 32" may still be 0 to it, so it is
         * rewritten as ((n - 1) & 31) * 64 + 64, the same value for
         * n in [1, 32]. */
        __u32 copy = (((n - 1) & (OVS_BPF_MAX_ACTIONS - 1))
                      * OVS_BPF_ACTION_SIZE) + OVS_BPF_ACTION_SIZE;

        if (bpf_skb_load_bytes(skb, pkt_len, s->actions, copy)) {
            return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_MALFORMED);
        }
    }
    /* The TAP's receive path stopped at the stand-in ethertype, so no
     * transport header offset lies past 'pkt_len' and bpf_skb_change_tail()
     * (which refuses to cut below it) can cut the trailer off. */
    if (bpf_skb_change_tail(skb, pkt_len, 0)) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_MALFORMED);
    }
    /* These fail only if the skb cannot be made writable or grown. */
    if (bpf_skb_store_bytes(skb, 2 * ETH_ALEN, &dc.eth_type,
                            sizeof dc.eth_type, BPF_F_RECOMPUTE_CSUM)
        || !ovs_bpf_downcall_untag(skb)) {
        return ovs_bpf_drop(OVS_BPF_DROP_DOWNCALL_ERROR);
    }
    ovs_bpf_count(OVS_BPF_STAT_DOWNCALL);

    skb->priority = dc.skb_priority;
    skb->mark = dc.skb_mark;
    ovs_bpf_cb_init(skb);
    s->n_actions = n;

    /* The metadata of this pass, for the ingress program, which builds the
     * rest of the key (priority and mark from the skb, the packet's fields
     * from the parser) as for any packet. */
    s->key.in_port = dc.in_port;
    s->key.recirc_id = dc.recirc_id;
    s->key.dp_hash = dc.dp_hash;
    /* The conntrack and tunnel metadata are in 's->key' already. */
    /* The ingress program parses the packet and runs the actions: the
     * parser, the bulk of the verifier's work, is verified there only.
     * This takes one of the 33 tail calls the kernel allows a packet:
     * 32 action slots still fit, a clone() that ends after the 32nd slot
     * (whose restore is one more tail call) does not, and is counted as
     * OVS_BPF_DROP_TAIL_CALL. */
    s->reentry = OVS_BPF_REENTRY_DOWNCALL;
    bpf_tail_call(skb, &tailcalls, OVS_BPF_TAILCALL_LOOKUP);
    s->reentry = OVS_BPF_REENTRY_NONE;
    return ovs_bpf_drop(OVS_BPF_DROP_TAIL_CALL);
}

#endif /* BPF_DOWNCALL_H */
