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

/* Connection tracking actions: ct() and ct_clear, on the kernel's own
 * nf_conntrack through the conntrack kfuncs (net/netfilter/
 * nf_conntrack_bpf.c).
 *
 * ct() looks the packet's 5-tuple up in the zone of the action and sets the
 * conntrack fields of the key as OVS's datapaths do (the kernel datapath's
 * net/openvswitch/conntrack.c, dpif-netdev's lib/conntrack.c):
 *
 *   - no connection: +trk+new, the original tuple is the packet's;
 *   - the original direction of a connection: +trk+new until a packet of
 *     the reply direction was seen (IPS_SEEN_REPLY), +trk+est after;
 *   - the reply direction: +trk+est+rpl, and the connection gets
 *     IPS_SEEN_REPLY;
 *   - what the kfuncs cannot track (anything but TCP and UDP over IPv4 and
 *     IPv6: ICMP, SCTP...) goes to ovs-vswitchd, which tracks it in the
 *     same table (bpf/ct-slow.h);
 *   - IP fragments, which need reassembly first, and packets that are not
 *     IP: +trk+inv, never a state that would let the packet through a
 *     firewall's "+est" rule;
 *   - a TCP packet that cannot start a connection (SYN-ACK, FIN, RST) and
 *     has none, one with flags that no state takes (SYN with FIN...), one
 *     invalid in its connection's state (a client's ACK before the
 *     SYN-ACK...): +trk+inv, as the kernel's TCP tracker says
 *     (ovs_bpf_tcp_next()), counted as ct_tcp_flags;
 *   - a SYN that reopens a TCP connection in TIME_WAIT or CLOSE: the old
 *     connection ends, and the SYN is +trk+new, as in the kernel.
 *
 * ct_zone is the action's zone, ct_mark the connection's mark, ct_label
 * the connection's labels (read from its labels extension, see
 * ovs_bpf_ct_labels()).  No kfunc writes labels: a commit that sets them
 * takes the slow path (bpf/ct-slow.h).
 *
 * With commit, a connection that is not there is allocated, if its zone
 * is below its limit (ct_zones, "zone limits" in datapath-abi.h)
 * (bpf_skb_ct_alloc()), given its timeout and mark, and inserted
 * (bpf_ct_insert_entry()); "conntrack -L" in the datapath's network
 * namespace lists it.  The kernel's own TCP and UDP trackers never see
 * these packets (they do not go through netfilter), so the kernel never
 * refreshes or ends these connections: every ct() of a packet of a
 * connection sets its timeout again, by the state of the connection that
 * it can see (OVS_BPF_CT_TP_STATES of datapath-abi.h): from the timeout
 * policy that the commit of the connection gave it (ct(commit,timeout=ID),
 * the policy in map 'ct_tps', the connection's policy id in 'ct_tp_conns'),
 * or else the kernel's defaults.
 *
 * TCP connections have the kernel's TCP states, which no kfunc writes: the
 * ct() reads the connection's state, finds the packet's move
 * (ovs_bpf_tcp_next(), "TCP connection states" in datapath-abi.h), gives
 * the connection the timeout of the new state, and sends the packet up
 * for ovs-vswitchd to write the state (bpf/ct-slow.h) before it goes on
 * with the actions after the ct().  Only the few packets that move a state
 * go up.
 *
 * TCP segments are checked against their connection's window, which we
 * keep (bpf/ct-tcp-win.h) as the kernel's TCP tracker would, since it never
 * sees them: a segment out of the window is +trk+inv and changes nothing of
 * its connection, as on the kernel datapath.  ovs-appctl
 * dpctl/ct-disable-tcp-seq-chk turns the check off. */

#ifndef BPF_ACTIONS_CT_H
#define BPF_ACTIONS_CT_H 1

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/ct-nat.h"
#include "bpf/ct-slow.h"
#include "bpf/ct-tcp-win.h"
#include "bpf/maps.h"

/* The CS_* bits of OVS's lib/packets.h. */
#define OVS_BPF_CS_NEW (1 << 0)
#define OVS_BPF_CS_ESTABLISHED (1 << 1)
#define OVS_BPF_CS_RELATED (1 << 2)
#define OVS_BPF_CS_REPLY_DIR (1 << 3)
#define OVS_BPF_CS_INVALID (1 << 4)
#define OVS_BPF_CS_TRACKED (1 << 5)

/* include/uapi/linux/netfilter/nf_conntrack_common.h. */
#define OVS_BPF_IPS_SEEN_REPLY (1 << 1)
#define OVS_BPF_IPS_ASSURED (1 << 2)
#define OVS_BPF_IP_CT_DIR_REPLY 1
#define OVS_BPF_NF_CT_DEFAULT_ZONE_DIR 3    /* Both directions. */
#define OVS_BPF_CURRENT_NETNS (-1)          /* BPF_F_CURRENT_NETNS. */

/* The part of the kernel's struct nf_conn that is read (and, for 'mark',
 * written: the only field the kernel lets BPF programs write).  CO-RE
 * relocates the offsets against the running kernel (see bpf/skb-csum.h for
 * why there is no vmlinux.h); "___ovs" keeps it apart from any other
 * definition.  The kfuncs' own types only need to be of the same kind for
 * libbpf to match these declarations with the kernel's. */
struct nf_ct_ext___ovs {
    __u8 offset[1];             /* [NF_CT_EXT_NUM], indexed by the id. */
} __attribute__((preserve_access_index));

struct ip_ct_tcp___ovs {
    __u8 state;                 /* enum tcp_conntrack. */
} __attribute__((preserve_access_index));

union nf_conntrack_proto___ovs {
    struct ip_ct_tcp___ovs tcp;
} __attribute__((preserve_access_index));

struct nf_conn___ovs {
    __u32 timeout;              /* Expiry, in jiffies (32 bits). */
    unsigned long status;
    __u32 mark;
    union nf_conntrack_proto___ovs proto;
    struct nf_conntrack_tuple_hash___ovs tuplehash[2];
    struct nf_ct_ext___ovs *ext;
} __attribute__((preserve_access_index));

/* The id of the labels extension (include/net/netfilter/
 * nf_conntrack_extend.h), relocated by CO-RE to the running kernel's
 * value. */
enum nf_ct_ext_id {
    NF_CT_EXT_LABELS = 7,
};

/* struct bpf_ct_opts of Linux 6.6+ (16 bytes, with the zone). */
struct bpf_ct_opts___ovs {
    __s32 netns_id;
    __s32 error;
    __u8 l4proto;
    __u8 dir;
    __u16 ct_zone_id;
    __u8 ct_zone_dir;
    __u8 reserved[3];
};

extern struct nf_conn___ovs *
bpf_skb_ct_lookup(struct __sk_buff *, struct bpf_sock_tuple *, __u32,
                  struct bpf_ct_opts___ovs *, __u32) __ksym;
extern struct nf_conn___ovs *
bpf_skb_ct_alloc(struct __sk_buff *, struct bpf_sock_tuple *, __u32,
                 struct bpf_ct_opts___ovs *, __u32) __ksym;
extern struct nf_conn___ovs *
bpf_ct_insert_entry(struct nf_conn___ovs *) __ksym;
extern void bpf_ct_release(struct nf_conn___ovs *) __ksym;
extern void bpf_ct_set_timeout(struct nf_conn___ovs *, __u32) __ksym;
extern int bpf_ct_change_timeout(struct nf_conn___ovs *, __u32) __ksym;
extern int bpf_ct_change_status(struct nf_conn___ovs *, __u32) __ksym;
extern int bpf_ct_set_nat_info(struct nf_conn___ovs *,
                               union nf_inet_addr___ovs *, int,
                               enum nf_nat_manip_type___ovs) __ksym;

/* Sets '*nat' to the translation of a packet of connection 'ct' in the
 * 'reply' direction or the original one, if 'ct' has a NAT binding, and
 * returns true; false if it has none.  The packet's new tuple is the
 * reverse of the other direction's.  ct_state gets +snat for the original
 * direction of an SNAT connection and +dnat for its replies, the other way
 * round for DNAT, as in OVS's lib/conntrack.c. */
static __always_inline bool
ovs_bpf_ct_nat_of(const struct nf_conn___ovs *ct, bool reply, bool ipv6,
                  struct ovs_bpf_ct_nat *nat)
{
    const struct nf_conntrack_tuple___ovs *other;
    unsigned long status = ct->status;
    bool snat = status & OVS_BPF_IPS_SRC_NAT;

    if (!(status & (OVS_BPF_IPS_SRC_NAT | OVS_BPF_IPS_DST_NAT))) {
        return false;
    }
    other = reply ? &ct->tuplehash[0].tuple : &ct->tuplehash[1].tuple;
    __builtin_memset(nat, 0, sizeof *nat);
    if (ipv6) {
        /* Word by word: CO-RE relocates each access. */
        nat->src[0] = other->dst.u3.ip6[0];
        nat->src[1] = other->dst.u3.ip6[1];
        nat->src[2] = other->dst.u3.ip6[2];
        nat->src[3] = other->dst.u3.ip6[3];
        nat->dst[0] = other->src.u3.ip6[0];
        nat->dst[1] = other->src.u3.ip6[1];
        nat->dst[2] = other->src.u3.ip6[2];
        nat->dst[3] = other->src.u3.ip6[3];
    } else {
        nat->src[0] = other->dst.u3.ip;
        nat->dst[0] = other->src.u3.ip;
    }
    nat->sport = other->dst.u.all;
    nat->dport = other->src.u.all;
    nat->cs = snat != reply ? OVS_BPF_CS_SRC_NAT : OVS_BPF_CS_DST_NAT;
    return true;
}

/* Copies the labels of connection 'ct' into 'labels' (16 bytes, zero if it
 * has none), as the kernel's nf_ct_labels_find() finds them: the
 * connection's extension area 'ct->ext' holds, at byte 'offset[id]' for
 * each extension it has (0 for one it has not), that extension's data;
 * the labels extension is a struct nf_conn_labels, 128 bits that are, in
 * memory, OVS's ovs_u128 ct_label (as the kernel datapath copies them).
 * A connection gets the extension only when it is created while some user
 * of labels holds nf_connlabels_get() (net->ct.labels_used):
 * lib/dpif-bpf-ct-labels.c makes sure of that.
 *
 * The verifier lets a program follow 'ct->ext' and read its 'offset' at an
 * index it knows (PTR_TO_BTF_ID loads, BPF_PROBE_MEM: a fault reads 0),
 * but not index the flexible 'data' of the extension area with an offset
 * known only at run time: the labels are read with
 * bpf_probe_read_kernel(), into bytes on the stack.  (The two loads were
 * helper calls too, BPF_CORE_READ() and bpf_core_read(), before: this is
 * read for every packet of a connection.) */
static __always_inline void
ovs_bpf_ct_labels(const struct nf_conn___ovs *ct, __u8 labels[16])
{
    struct nf_ct_ext___ovs *ext = ct->ext;
    __u8 ofs;

    __builtin_memset(labels, 0, 16);
    if (!ext) {
        return;
    }
    ofs = ext->offset[bpf_core_enum_value(enum nf_ct_ext_id,
                                          NF_CT_EXT_LABELS)];
    if (!ofs) {
        return;
    }
    if (bpf_probe_read_kernel(labels, 16, (const __u8 *) ext + ofs)) {
        __builtin_memset(labels, 0, 16);
    }
}

/* The timeout in ms of state 'st' in timeout policy 'tp', or the kernel's
 * default if 'tp' is NULL. */
static __always_inline __u32
ovs_bpf_ct_tp_ms(const struct ovs_bpf_ct_tp *tp, enum ovs_bpf_ct_tp_state st)
{
    switch (st) {
#define OVS_BPF_CT_TP(STATE, ATTR, DEFAULT)                     \
    case OVS_BPF_CT_TP_##STATE:                                 \
        return tp ? tp->timeout_ms[OVS_BPF_CT_TP_##STATE]       \
                  : DEFAULT * 1000u;
    OVS_BPF_CT_TP_STATES
#undef OVS_BPF_CT_TP
    default:
        return 0;
    }
}

/* The timeout, under policy 'tp' (NULL: none), of a TCP or UDP connection
 * whose packet 'k' was just seen; 'replied' if a packet of the reply
 * direction has been seen, 'first' if 'k' creates it; a TCP connection's
 * by its state 'tcp' (enum ovs_bpf_tcp_state) if it has one. */
static __always_inline __u32
ovs_bpf_ct_timeout(const struct ovs_bpf_flow_key *k, bool replied,
                   bool first, __u8 tcp, const struct ovs_bpf_ct_tp *tp)
{
    if (k->nw_proto == IPPROTO_UDP) {
        return ovs_bpf_ct_tp_ms(tp, first ? OVS_BPF_CT_TP_UDP_FIRST
                                    : replied ? OVS_BPF_CT_TP_UDP_MULTIPLE
                                    : OVS_BPF_CT_TP_UDP_SINGLE);
    }
    switch (tcp) {
#define OVS_BPF_TCP_STATE(NAME, TP)                             \
    case OVS_BPF_TCPS_##NAME:                                   \
        if (OVS_BPF_TCPS_##NAME != OVS_BPF_TCPS_NONE) {         \
            return ovs_bpf_ct_tp_ms(tp, OVS_BPF_CT_TP_##TP);    \
        }                                                       \
        break;
    OVS_BPF_TCP_STATES
#undef OVS_BPF_TCP_STATE
    default:
        break;
    }
    /* No state yet: by the packet's flags. */
    if (k->tcp_flags & bpf_htons(0x004)) {
        return ovs_bpf_ct_tp_ms(tp, OVS_BPF_CT_TP_TCP_RST);
    }
    if (k->tcp_flags & bpf_htons(0x001)) {
        return ovs_bpf_ct_tp_ms(tp, OVS_BPF_CT_TP_TCP_FIN);
    }
    return ovs_bpf_ct_tp_ms(tp, replied ? OVS_BPF_CT_TP_TCP_EST
                                        : OVS_BPF_CT_TP_TCP_NEW);
}

/* CONFIG_HZ of the running kernel, which libbpf reads from the kernel's
 * configuration (/boot/config-*, /proc/config.gz) at load time; 0 if it is
 * not there. */
extern unsigned int CONFIG_HZ __kconfig __weak;

/* Gives known connection 'ct' the timeout 'ms' from now, as the kernel's
 * own trackers do for each packet they see (nf_ct_refresh_acct()), unless
 * its expiry is already within a small slack of that: earlier by at most
 * 1/64 of 'ms' and by at most one second.  The kernel's semantics hold to
 * that slack: a connection expires no sooner than 'ms' minus the slack
 * after its last packet (1.6% of a short timeout, at most one second of a
 * long one: 0.47 s of UDP's 30 s, 1 s of TCP's 5 days), never later, and
 * a shorter timeout (a state that times out sooner) is always set.  So a
 * connection's packets, however many per second, call the kfunc about
 * once a second (once per 64th of a short timeout) instead of once each.
 * Without CONFIG_HZ every packet sets it. */
static __always_inline void
ovs_bpf_ct_refresh(struct nf_conn___ovs *ct, __u32 ms)
{
    __u64 hz = CONFIG_HZ;

    if (hz) {
        /* In jiffies, as msecs_to_jiffies() rounds: up. */
        __u64 target = ((__u64) ms * hz + 999) / 1000;
        __u64 slack = target >> 6;
        /* nfct_time_stamp: the low 32 bits of 'jiffies'.  A connection
         * that a lookup found has not expired: 'left' is not negative. */
        __s32 left = (__s32) (ct->timeout - (__u32) bpf_jiffies64());

        if (slack > hz) {
            slack = hz;
        }
        if (left >= 0 && (__u64) left <= target
            && (__u64) left + slack >= target) {
            return;
        }
    }
    bpf_ct_change_timeout(ct, ms);
}

/* Sets '*key' to the key in 'ct_tp_conns' of connection 'ct' of 'zone': its
 * original tuple, which ovs_bpf_ct_apply() also puts in the flow key from
 * there rather than reading it a second time. */
static __always_inline void
ovs_bpf_ct_tp_conn_key(struct ovs_bpf_ct_tp_conn *key,
                       const struct nf_conn___ovs *ct, __u16 zone,
                       __u8 proto, bool ipv6)
{
    __builtin_memset(key, 0, sizeof *key);
    key->zone = zone;
    key->proto = proto;
    if (ipv6) {
        for (int i = 0; i < 4; i++) {
            key->src[i] = ct->tuplehash[0].tuple.src.u3.ip6[i];
            key->dst[i] = ct->tuplehash[0].tuple.dst.u3.ip6[i];
        }
    } else {
        key->src[0] = ct->tuplehash[0].tuple.src.u3.ip;
        key->dst[0] = ct->tuplehash[0].tuple.dst.u3.ip;
    }
    key->src_port = ct->tuplehash[0].tuple.src.u.all;
    key->dst_port = ct->tuplehash[0].tuple.dst.u.all;
}

/* True if there may be timeout policies: ovs-vswitchd keeps the number of
 * entries of 'ct_tps' in 'dp_config' (lib/dpif-bpf-ct-tp.c).  With none,
 * no connection can have one, whatever 'ct_tp_conns' still holds, and
 * ct() of a packet of a known connection skips that lookup. */
static __always_inline bool
ovs_bpf_ct_tps_in_use(void)
{
    const struct ovs_bpf_dp_config *cfg = ovs_bpf_config_get();

    /* The lookup of the only entry of an array cannot fail, but the
     * verifier wants the NULL test; if it did fail, doing the lookup is
     * what is always right. */
    return !cfg || cfg->n_ct_tps;
}

/* The timeout policy of the connection whose key in 'ct_tp_conns' is 'key'
 * (ovs_bpf_ct_tp_conn_key()), NULL if it has none (or the policy was
 * deleted since). */
static __always_inline const struct ovs_bpf_ct_tp *
ovs_bpf_ct_tp_of(const struct ovs_bpf_ct_tp_conn *key)
{
    __u32 *id;

    if (!ovs_bpf_ct_tps_in_use()) {
        return NULL;
    }
    id = bpf_map_lookup_elem(&ct_tp_conns, key);
    return id ? bpf_map_lookup_elem(&ct_tps, id) : NULL;
}

/* Records that connection 'ct' of 'zone', just created by a commit, has
 * timeout policy 'tp_id' (0: none, which takes out what an earlier
 * connection of the same tuple left). */
static __always_inline void
ovs_bpf_ct_tp_set(const struct nf_conn___ovs *ct, __u16 zone, __u8 proto,
                  bool ipv6, __u32 tp_id)
{
    struct ovs_bpf_ct_tp_conn key;

    ovs_bpf_ct_tp_conn_key(&key, ct, zone, proto, ipv6);
    if (tp_id) {
        bpf_map_update_elem(&ct_tp_conns, &key, &tp_id, BPF_ANY);
    } else {
        bpf_map_delete_elem(&ct_tp_conns, &key);
    }
}

/* Sets the original direction tuple of 'k' to the packet's own tuple (a
 * connection that this packet creates, or would). */
static __always_inline void
ovs_bpf_ct_orig_tuple(struct ovs_bpf_flow_key *k, bool ipv6)
{
    k->ct_nw_proto = k->nw_proto;
    if (ipv6) {
        __builtin_memcpy(k->ct_ipv6_src, k->ipv6_src, 16);
        __builtin_memcpy(k->ct_ipv6_dst, k->ipv6_dst, 16);
    } else {
        k->ct_nw_src = k->ipv4_src;
        k->ct_nw_dst = k->ipv4_dst;
    }
    k->ct_tp_src = k->tp_src;
    k->ct_tp_dst = k->tp_dst;
}

/* Sets '*key' to the key in 'ct_tp_conns' (and 'ct_tcp_win') of the
 * connection that the packet of 'k' creates in 'zone'. */
static __always_inline void
ovs_bpf_ct_pkt_conn_key(struct ovs_bpf_ct_tp_conn *key,
                        const struct ovs_bpf_flow_key *k, __u16 zone,
                        bool ipv6)
{
    __builtin_memset(key, 0, sizeof *key);
    key->zone = zone;
    key->proto = k->nw_proto;
    if (ipv6) {
        __builtin_memcpy(key->src, k->ipv6_src, 16);
        __builtin_memcpy(key->dst, k->ipv6_dst, 16);
    } else {
        key->src[0] = k->ipv4_src;
        key->dst[0] = k->ipv4_dst;
    }
    key->src_port = k->tp_src;
    key->dst_port = k->tp_dst;
}

/* Sets the original direction tuple of 'k' to that of its connection,
 * 'orig' (ovs_bpf_ct_tp_conn_key()): with NAT, the reverse of a reply is
 * not it. */
static __always_inline void
ovs_bpf_ct_orig_tuple_of(struct ovs_bpf_flow_key *k, bool ipv6,
                         const struct ovs_bpf_ct_tp_conn *orig)
{
    k->ct_nw_proto = k->nw_proto;
    if (ipv6) {
        __builtin_memcpy(k->ct_ipv6_src, orig->src, 16);
        __builtin_memcpy(k->ct_ipv6_dst, orig->dst, 16);
    } else {
        k->ct_nw_src = orig->src[0];
        k->ct_nw_dst = orig->dst[0];
    }
    k->ct_tp_src = orig->src_port;
    k->ct_tp_dst = orig->dst_port;
}

/* True if an earlier ct() of 'zone' tracked the packet of 'k' in the
 * connection whose original tuple is 'orig' (the conntrack fields of 'k'
 * say so): as the kernel datapath keeps the packet's connection from one
 * ct() to the next of the same zone (skb_nfct_cached()), and its TCP
 * tracker saw the packet once, the TCP state does not move again. */
static __always_inline bool
ovs_bpf_ct_cached(const struct ovs_bpf_flow_key *k, __u16 zone,
                  const struct ovs_bpf_ct_tp_conn *orig, bool ipv6)
{
    if ((k->ct_state & (OVS_BPF_CS_TRACKED | OVS_BPF_CS_INVALID))
        != OVS_BPF_CS_TRACKED
        || k->ct_zone != zone || k->ct_nw_proto != orig->proto
        || k->ct_tp_src != orig->src_port || k->ct_tp_dst != orig->dst_port) {
        return false;
    }
    if (ipv6) {
        __u32 a[4], b[4], diff = 0;

        __builtin_memcpy(a, k->ct_ipv6_src, 16);
        __builtin_memcpy(b, k->ct_ipv6_dst, 16);
        for (int i = 0; i < 4; i++) {
            diff |= (a[i] ^ orig->src[i]) | (b[i] ^ orig->dst[i]);
        }
        return !diff;
    }
    return k->ct_nw_src == orig->src[0] && k->ct_nw_dst == orig->dst[0];
}

/* Zeroes the conntrack fields of 'k' (ct_clear, and before ct()). */
static __always_inline void
ovs_bpf_ct_clear_key(struct ovs_bpf_flow_key *k)
{
    __builtin_memset(&k->ct_state, 0,
                     __builtin_offsetof(struct ovs_bpf_flow_key, tun_id)
                     - __builtin_offsetof(struct ovs_bpf_flow_key, ct_state));
}

/* Sets 't' and 'opts' for the lookup of the TCP or UDP packet of 'k' in
 * 'zone'; returns the length of the tuple. */
static __always_inline __u32
ovs_bpf_ct_lookup_args(const struct ovs_bpf_flow_key *k, __u16 zone,
                       bool ipv6, struct bpf_sock_tuple *t,
                       struct bpf_ct_opts___ovs *opts)
{
    __u32 tlen;

    __builtin_memset(t, 0, sizeof *t);
    if (ipv6) {
        __builtin_memcpy(t->ipv6.saddr, k->ipv6_src, 16);
        __builtin_memcpy(t->ipv6.daddr, k->ipv6_dst, 16);
        t->ipv6.sport = k->tp_src;
        t->ipv6.dport = k->tp_dst;
        tlen = sizeof t->ipv6;
    } else {
        t->ipv4.saddr = k->ipv4_src;
        t->ipv4.daddr = k->ipv4_dst;
        t->ipv4.sport = k->tp_src;
        t->ipv4.dport = k->tp_dst;
        tlen = sizeof t->ipv4;
    }
    __builtin_memset(opts, 0, sizeof *opts);
    opts->netns_id = OVS_BPF_CURRENT_NETNS;
    opts->l4proto = k->nw_proto;
    opts->ct_zone_id = zone;
    opts->ct_zone_dir = OVS_BPF_NF_CT_DEFAULT_ZONE_DIR;
    return tlen;
}

/* For ct(commit) 'act' with labels 'lbl' (OVS_BPF_CT_F_LABEL): true if the
 * ct() can run in BPF because it has no labels to write, its TCP or UDP
 * connection 'ct' (NULL: none), looked up in direction 'dir', being there
 * with the labels that 'lbl' sets already (the established packets of a
 * connection that a pipeline commits with the same labels each time);
 * false if it takes the slow path, which writes them (and makes the
 * connection if there is none).  'labels' gets the labels of 'ct'. */
static __always_inline bool
ovs_bpf_ct_labels_done(const struct nf_conn___ovs *ct, __u8 dir,
                       const struct ovs_bpf_act_ct *act,
                       const struct ovs_bpf_act_ct_label *lbl,
                       __u8 labels[16])
{
    __u64 cur[2], val[2], mask[2];

    if (!ct) {
        return false;
    }
    if ((act->flags & OVS_BPF_CT_F_FORCE) && dir == OVS_BPF_IP_CT_DIR_REPLY) {
        /* force_commit replaces it: a new connection. */
        return false;
    }
    ovs_bpf_ct_labels(ct, labels);
    __builtin_memcpy(cur, labels, 16);
    __builtin_memcpy(val, lbl->label, 16);
    __builtin_memcpy(mask, lbl->mask, 16);
    return (cur[0] & mask[0]) == val[0] && (cur[1] & mask[1]) == val[1];
}

/* Takes a place for a new connection in 'zone', if the zone has a limit
 * (see "Conntrack zone limits" in datapath-abi.h).  Returns the zone's
 * entry, whose count the caller gives back if it creates no connection, or
 * NULL if there is no limit, or if the zone is full ('*full' set). */
static __always_inline struct ovs_bpf_ct_zone *
ovs_bpf_ct_zone_reserve(__u16 zone, bool *full)
{
    __u32 z = zone, d = OVS_BPF_CT_ZONE_DEFAULT;
    struct ovs_bpf_ct_zone *cz, *def;
    __s64 limit;

    *full = false;
    cz = bpf_map_lookup_elem(&ct_zones, &z);
    if (!cz) {
        return NULL;
    }
    limit = cz->limit;
    if (!(cz->flags & OVS_BPF_CT_ZONE_F_LIMIT)) {
        def = bpf_map_lookup_elem(&ct_zones, &d);
        limit = def ? def->limit : 0;
    }
    if (!limit) {
        return NULL;
    }
    if (__sync_fetch_and_add(&cz->count, 1) >= limit) {
        __sync_fetch_and_add(&cz->count, -1);
        *full = true;
        return NULL;
    }
    return cz;
}

/* What ovs_bpf_ct_insert() did. */
enum ovs_bpf_ct_ins {
    OVS_BPF_CT_INS_OK,          /* The connection is in the table. */
    OVS_BPF_CT_INS_TAKEN,       /* bpf_ct_insert_entry() found a clash. */
    OVS_BPF_CT_INS_FAILED,      /* No memory, table full, NAT refused. */
};

/* Allocates the connection of the packet's tuple 't' ('tlen' bytes) in the
 * zone of 'opts' with its timeout and mark, and with the NAT binding to
 * 'addr' and 'port' (host order, 0 for any) if 'manip' is not negative,
 * and inserts it.  With NAT, '*nat' gets the translation of the packet and
 * '*natted' is set if there is one. */
static __always_inline enum ovs_bpf_ct_ins
ovs_bpf_ct_insert(struct __sk_buff *skb, struct bpf_sock_tuple *t,
                  __u32 tlen, struct bpf_ct_opts___ovs *opts,
                  const struct ovs_bpf_act_ct *act, __u32 timeout,
                  __u8 proto, bool ipv6, int manip,
                  union nf_inet_addr___ovs *addr, __u16 port,
                  struct ovs_bpf_ct_nat *nat, bool *natted)
{
    struct nf_conn___ovs *ct, *ins;
    bool nat_failed = false;

    opts->error = 0;
    ct = bpf_skb_ct_alloc(skb, t, tlen, opts, sizeof *opts);
    if (!ct) {
        return OVS_BPF_CT_INS_FAILED;
    }
    bpf_ct_set_timeout(ct, timeout);
    ct->mark = act->mark & act->mark_mask;
    if (manip >= 0) {
        nat_failed = bpf_ct_set_nat_info(ct, addr, port, manip) != 0;
    }
    /* An allocated connection cannot be released, only inserted (the
     * verifier refuses bpf_ct_release() of it): one whose NAT failed goes
     * in and expires at once. */
    ins = bpf_ct_insert_entry(ct);
    if (!ins) {
        /* The kernel freed it: one of its tuples is another connection's.
         * Either another CPU inserted the same connection between the
         * lookup and now, or, with NAT, the translated tuple is taken
         * (nf_nat_setup_info() keeps the one port it was given even if it
         * is taken). */
        return OVS_BPF_CT_INS_TAKEN;
    }
    if (nat_failed) {
        bpf_ct_change_timeout(ins, 0);
    } else {
        ovs_bpf_ct_tp_set(ins, act->zone, proto, ipv6, act->tp_id);
        if (manip >= 0) {
            *natted = ovs_bpf_ct_nat_of(ins, false, ipv6, nat);
        }
    }
    bpf_ct_release(ins);
    return nat_failed ? OVS_BPF_CT_INS_FAILED : OVS_BPF_CT_INS_OK;
}

/* True if the connection of tuple 't' is in the table, in the zone of
 * 'opts'. */
static __always_inline bool
ovs_bpf_ct_exists(struct __sk_buff *skb, struct bpf_sock_tuple *t,
                  __u32 tlen, struct bpf_ct_opts___ovs *opts)
{
    struct nf_conn___ovs *ct;

    opts->error = 0;
    ct = bpf_skb_ct_lookup(skb, t, tlen, opts, sizeof *opts);
    if (ct) {
        bpf_ct_release(ct);
        return true;
    }
    return false;
}

/* Commits a new connection with the packet 'k''s tuple 't' ('tlen' bytes)
 * in the zone of 'opts', with the NAT binding that 'act' asks for, in the
 * place 'cz' took in its zone's limit (NULL: none), which is given back
 * unless the connection is the one this commit inserted.  Returns false if the kernel refused it: no memory, the table is full
 * (nf_conntrack_max), or, with NAT, none of the candidates of the range
 * that were tried is free (exhaustion, as in the kernel datapath).  With
 * NAT, '*nat' gets the translation of the packet and '*natted' is set if
 * there is one. */
static __always_inline bool
ovs_bpf_ct_commit(struct __sk_buff *skb, struct bpf_sock_tuple *t,
                  __u32 tlen, struct bpf_ct_opts___ovs *opts,
                  const struct ovs_bpf_act_ct *act,
                  const struct ovs_bpf_flow_key *k, __u32 timeout,
                  bool ipv6, struct ovs_bpf_ct_nat *nat, bool *natted,
                  struct ovs_bpf_ct_zone *cz)
{
    union nf_inet_addr___ovs addr;
    enum ovs_bpf_ct_ins ret;
    __u32 hash, i;
    __u16 port;
    int manip;

    if (!(act->flags & (OVS_BPF_CT_F_NAT_SRC | OVS_BPF_CT_F_NAT_DST))
        || (!(act->flags & OVS_BPF_CT_F_NAT_ZERO)
            && !(act->flags & OVS_BPF_CT_F_NAT_IPV6) != !ipv6)) {
        /* Without NAT (or with a binding of the other IP version, which
         * cannot be made), a clash is the same connection, committed by
         * another CPU: what commit asks for. */
        __builtin_memset(&addr, 0, sizeof addr);
        ret = ovs_bpf_ct_insert(skb, t, tlen, opts, act, timeout,
                                k->nw_proto, ipv6, -1, &addr, 0, nat,
                                natted);
        if (ret != OVS_BPF_CT_INS_OK && cz) {
            /* Not ours: another CPU's counts once. */
            __sync_fetch_and_add(&cz->count, -1);
        }
        return ret != OVS_BPF_CT_INS_FAILED;
    }
    manip = act->flags & OVS_BPF_CT_F_NAT_SRC ? OVS_BPF_NF_NAT_MANIP_SRC
                                              : OVS_BPF_NF_NAT_MANIP_DST;
    hash = (act->flags & OVS_BPF_CT_F_NAT_RANDOM
            ? bpf_get_prandom_u32() : bpf_get_hash_recalc(skb));
    /* Bounded for the verifier by OVS_BPF_CT_NAT_TRIES (bpf/ct-nat.h):
     * each candidate costs an allocation and an insertion. */
    for (i = 0; i < OVS_BPF_CT_NAT_TRIES; i++) {
        if (!ovs_bpf_ct_nat_candidate(act, k, ipv6, hash, i, &addr,
                                      &port)) {
            break;              /* Every candidate of the range is taken. */
        }
        ret = ovs_bpf_ct_insert(skb, t, tlen, opts, act, timeout,
                                k->nw_proto, ipv6, manip, &addr, port, nat,
                                natted);
        if (ret == OVS_BPF_CT_INS_OK) {
            return true;
        } else if (ret != OVS_BPF_CT_INS_TAKEN) {
            break;
        }
        if (ovs_bpf_ct_exists(skb, t, tlen, opts)) {
            /* Another CPU committed this connection since the lookup:
             * its binding is not known here, and the packet is dropped,
             * as a new connection whose translation failed. */
            break;
        }
        /* The translated tuple is taken: the next candidate. */
    }
    if (cz) {
        __sync_fetch_and_add(&cz->count, -1);
    }
    return false;
}

/* Sets the conntrack fields of 'k' for a packet that ct() of 'zone' calls
 * invalid (no connection, so no mark, labels or original tuple), as the
 * kernel datapath does, and returns 0 for ovs_bpf_ct_apply() to return. */
static __always_inline int
ovs_bpf_ct_invalid(struct ovs_bpf_flow_key *k, __u16 zone)
{
    ovs_bpf_ct_clear_key(k);
    k->ct_zone = zone;
    k->ct_state = OVS_BPF_CS_TRACKED | OVS_BPF_CS_INVALID;
    return 0;
}

/* What ovs_bpf_ct_apply() returns, besides 0 and TC_ACT_SHOT, for a ct()
 * with labels to write: the packet is for the slow path, and nothing was
 * done (the key is as it was, the connection untouched). */
#define OVS_BPF_CT_TO_SLOW_PATH (-1)

/* Runs ct() 'actp' (with labels 'lbl' if it has OVS_BPF_CT_F_LABEL, else
 * NULL) on the packet of 's', whose key holds its headers: sets the
 * conntrack fields of the key, commits, NATs.  Returns 0, TC_ACT_SHOT if
 * the packet is to be dropped (counted), or OVS_BPF_CT_TO_SLOW_PATH if
 * 'lbl' has labels to write (see ovs_bpf_ct_labels_done()), decided on the
 * one lookup of the connection before anything changes.  If the packet
 * moves its TCP connection to another state, stores the states in
 * 's->upcall' ('ct_tcp_old', 'ct_tcp_new'), which it leaves alone
 * otherwise: the caller zeroes them.  The ct action below, and
 * ovs-vswitchd for reassembled IP fragments (bpf/ct-reass.h, without
 * labels: those take the slow path there). */
static __always_inline int
ovs_bpf_ct_apply(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                 const struct ovs_bpf_act_ct *actp,
                 const struct ovs_bpf_act_ct_label *lbl)
{
    struct bpf_ct_opts___ovs opts;
    struct ovs_bpf_ct_nat nat;
    struct ovs_bpf_act_ct act;
    struct bpf_sock_tuple t;
    struct ovs_bpf_flow_key *k;
    struct ovs_bpf_ct_tp_conn orig;
    struct nf_conn___ovs *ct;
    __u32 tlen, state;
    bool ipv6, reply, natted = false;
    __u8 tcp_old = OVS_BPF_TCPS_NONE, tcp_new = OVS_BPF_TCPS_KEEP;
    __u8 labels[16];

    act = *actp;
    k = &s->key;
    state = OVS_BPF_CS_TRACKED;

    ipv6 = k->eth_type == bpf_htons(0x86dd);
    if ((!ipv6 && k->eth_type != bpf_htons(0x0800))
        || (k->nw_proto != IPPROTO_TCP && k->nw_proto != IPPROTO_UDP)
        || k->nw_frag) {
        /* Not IP, or an IP fragment (whose ports are not known before
         * reassembly); with labels too, as the slow path would not know
         * more. */
        return ovs_bpf_ct_invalid(k, act.zone);
    }
    if (k->nw_proto == IPPROTO_TCP
        && !ovs_bpf_tcp_flags_valid(bpf_ntohs(k->tcp_flags))) {
        /* Flags that no TCP state takes (none, SYN with FIN or RST, FIN
         * without ACK...), with a connection or not: the kernel's TCP
         * tracker calls them invalid before it looks the connection up. */
        ovs_bpf_count(OVS_BPF_STAT_CT_TCP_FLAGS);
        return ovs_bpf_ct_invalid(k, act.zone);
    }

    tlen = ovs_bpf_ct_lookup_args(k, act.zone, ipv6, &t, &opts);

    reply = false;
    ct = bpf_skb_ct_lookup(skb, &t, tlen, &opts, sizeof opts);
    if (ct) {
        /* The entry's original tuple, read once: the key of its timeout
         * policy and the key's original tuple. */
        ovs_bpf_ct_tp_conn_key(&orig, ct, act.zone, k->nw_proto, ipv6);
        if (k->nw_proto == IPPROTO_TCP
            && !ovs_bpf_ct_cached(k, act.zone, &orig, ipv6)) {
            /* The move of its TCP state (see "TCP connection states" in
             * datapath-abi.h), which ovs-vswitchd writes. */
            enum ovs_bpf_tcpw_verdict win = OVS_BPF_TCPW_ACCEPT;

            tcp_old = ct->proto.tcp.state;
            tcp_new = ovs_bpf_tcp_next(tcp_old,
                                       opts.dir == OVS_BPF_IP_CT_DIR_REPLY,
                                       bpf_ntohs(k->tcp_flags));
            if (tcp_new == OVS_BPF_TCPS_INVALID) {
                /* Invalid in the connection's state (an ACK of the client
                 * before the SYN-ACK...): +trk+inv, and nothing of the
                 * connection changes, as in the kernel, which checks this
                 * before the window. */
                ovs_bpf_count(OVS_BPF_STAT_CT_TCP_FLAGS);
                bpf_ct_release(ct);
                return ovs_bpf_ct_invalid(k, act.zone);
            }
            if (tcp_new != OVS_BPF_TCPS_REOPEN) {
                /* A SYN that reopens the connection starts a new one. */
                win = ovs_bpf_tcpw_check(
                    skb, s, &orig, ipv6,
                    (opts.dir == OVS_BPF_IP_CT_DIR_REPLY) << 8 | tcp_old);
            }
            if (win == OVS_BPF_TCPW_INVALID) {
                /* Out of the connection's window: +trk+inv, and nothing
                 * of the connection changes (no commit, no state move, no
                 * new timeout), as in the kernel. */
                bpf_ct_release(ct);
                return ovs_bpf_ct_invalid(k, act.zone);
            } else if (win == OVS_BPF_TCPW_IGNORE) {
                tcp_new = OVS_BPF_TCPS_KEEP;
            }
        }
    }
    if (lbl && !ovs_bpf_ct_labels_done(ct, opts.dir, &act, lbl, labels)) {
        /* Labels to write: before anything here changes the connection
         * or the key, whose conntrack fields go up as they are. */
        if (ct) {
            bpf_ct_release(ct);
        }
        return OVS_BPF_CT_TO_SLOW_PATH;
    }
    /* The lookup arguments come from the packet's fields, not the key's
     * conntrack fields, so clearing them after the lookup is the same. */
    ovs_bpf_ct_clear_key(k);
    k->ct_zone = act.zone;
    if (ct && ((opts.dir == OVS_BPF_IP_CT_DIR_REPLY
                && (act.flags & OVS_BPF_CT_F_FORCE))
               || tcp_new == OVS_BPF_TCPS_REOPEN)) {
        /* ct(force_commit) of a packet of the reply direction, or a SYN
         * that reopens a closed TCP connection: the connection is ended,
         * and the packet is that of a new one, in its direction, committed
         * below if the action commits (the kernel's TCP tracker kills the
         * old one and tracks the SYN afresh).  There is no kfunc to delete
         * a connection: it expires now, and the next lookup of its tuple
         * (the kernel's lookup collects expired connections it meets)
         * takes it out of the table before the new one goes in. */
        bpf_ct_change_timeout(ct, 0);
        bpf_ct_release(ct);
        opts.error = 0;
        opts.dir = 0;
        ct = bpf_skb_ct_lookup(skb, &t, tlen, &opts, sizeof opts);
        if (ct) {
            bpf_ct_release(ct);
            ct = NULL;
        }
        opts.error = 0;
        tcp_old = OVS_BPF_TCPS_NONE;
        tcp_new = OVS_BPF_TCPS_KEEP;
    }

    if (ct) {
        unsigned long status = ct->status, old_status = status;
        bool replied = status & OVS_BPF_IPS_SEEN_REPLY;

        reply = opts.dir == OVS_BPF_IP_CT_DIR_REPLY;
        if (reply) {
            state |= OVS_BPF_CS_ESTABLISHED | OVS_BPF_CS_REPLY_DIR;
            status |= OVS_BPF_IPS_SEEN_REPLY;
            replied = true;
        } else {
            state |= replied ? OVS_BPF_CS_ESTABLISHED : OVS_BPF_CS_NEW;
        }
        if (replied
            && (tcp_new == OVS_BPF_TCPS_ESTABLISHED
                || (tcp_new == OVS_BPF_TCPS_KEEP
                    && tcp_old == OVS_BPF_TCPS_ESTABLISHED))) {
            /* A TCP connection established, as the kernel's TCP tracker
             * marks it: the early drop of a full table (see
             * nf_conntrack_alloc()) spares it. */
            status |= OVS_BPF_IPS_ASSURED;
        }
        if (status != old_status) {
            bpf_ct_change_status(ct, status);
        }
        if ((act.flags & OVS_BPF_CT_F_COMMIT) && act.mark_mask) {
            ct->mark = (ct->mark & ~act.mark_mask)
                       | (act.mark & act.mark_mask);
        }
        k->ct_mark = ct->mark;
        if (lbl) {
            /* Read by ovs_bpf_ct_labels_done() already. */
            __builtin_memcpy(k->ct_label, labels, 16);
        } else {
            ovs_bpf_ct_labels(ct, k->ct_label);
        }
        /* The timeout of the state the connection goes to (if ovs-vswitchd
         * fails to write the state, that of the state it keeps is set by
         * its next packet). */
        ovs_bpf_ct_refresh(ct, ovs_bpf_ct_timeout(
                                   k, replied, false,
                                   tcp_new < OVS_BPF_N_TCPS ? tcp_new
                                                            : tcp_old,
                                   ovs_bpf_ct_tp_of(&orig)));
        ovs_bpf_ct_orig_tuple_of(k, ipv6, &orig);
        if (act.flags & OVS_BPF_CT_F_NAT) {
            natted = ovs_bpf_ct_nat_of(ct, reply, ipv6, &nat);
        }
        bpf_ct_release(ct);
    } else if (k->nw_proto == IPPROTO_TCP
               && ((k->tcp_flags & bpf_htons(0x005))
                   || (k->tcp_flags & bpf_htons(0x012))
                      == bpf_htons(0x012))) {
        /* A TCP packet that cannot start a connection: a SYN-ACK, a FIN or
         * an RST without one.  The kernel's TCP tracker (tcp_new()) calls
         * them invalid, and so does the kernel datapath; a plain ACK
         * starts one, as with nf_conntrack_tcp_loose. */
        ovs_bpf_count(OVS_BPF_STAT_CT_TCP_FLAGS);
        state |= OVS_BPF_CS_INVALID;
    } else {
        state |= OVS_BPF_CS_NEW;
        if (act.flags & OVS_BPF_CT_F_COMMIT) {
            const struct ovs_bpf_ct_tp *tp = NULL;
            struct ovs_bpf_ct_zone *cz;
            bool full;

            if (act.tp_id) {
                tp = bpf_map_lookup_elem(&ct_tps, &act.tp_id);
            }
            cz = ovs_bpf_ct_zone_reserve(act.zone, &full);
            if (full
                || !ovs_bpf_ct_commit(skb, &t, tlen, &opts, &act, k,
                                      ovs_bpf_ct_timeout(
                                          k, false, true,
                                          OVS_BPF_TCPS_NONE, tp),
                                      ipv6, &nat, &natted, cz)) {
                /* As the kernel datapath: a packet whose connection cannot
                 * be committed (nf_conntrack_max or the zone's limit
                 * reached) is dropped. */
                ovs_bpf_action_failed(OVS_BPF_ACTION_CT);
                return TC_ACT_SHOT;
            }
            k->ct_mark = act.mark & act.mark_mask;
            if (k->nw_proto == IPPROTO_TCP) {
                /* bpf_skb_ct_alloc() zeroes the TCP state: the packet
                 * gives the connection its first one (the SYN's
                 * SYN_SENT). */
                tcp_new = ovs_bpf_tcp_next(OVS_BPF_TCPS_NONE, false,
                                           bpf_ntohs(k->tcp_flags));
                ovs_bpf_ct_pkt_conn_key(&orig, k, act.zone, ipv6);
                ovs_bpf_tcpw_commit(skb, s, &orig, ipv6);
            }
        }
        /* A new connection's original tuple is the packet's (before NAT).
         * (An invalid packet has no connection, so no original tuple.) */
        ovs_bpf_ct_orig_tuple(k, ipv6);
    }
    if (natted) {
        /* The packet changes: a recirculation parses it again. */
        s->key_parsed = 0;
        if (ovs_bpf_ct_nat_rewrite(skb, s, &nat)) {
            ovs_bpf_action_failed(OVS_BPF_ACTION_CT);
            return TC_ACT_SHOT;
        }
        state |= nat.cs;
    }
    k->ct_state = state;
    if (tcp_new < OVS_BPF_N_TCPS && tcp_new != tcp_old
        && ovs_bpf_tcpw_move_up(s, &orig,
                                tcp_old | tcp_new << 8
                                | (opts.dir == OVS_BPF_IP_CT_DIR_REPLY)
                                  << 16)) {
        /* For ovs_bpf_act_ct__(), which sends the packet up. */
        s->upcall.ct_tcp_old = tcp_old;
        s->upcall.ct_tcp_new = tcp_new;
    }
    return 0;
}

/* OVS_BPF_ACTION_CT. */
static __always_inline int
ovs_bpf_act_ct__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                 struct ovs_bpf_action *a, __u32 idx)
{
    const struct ovs_bpf_act_ct_label *lbl = NULL;
    struct ovs_bpf_action *arg;
    __u32 next;
    int ret;

    next = idx + 1;
    if (a->u.ct.flags & OVS_BPF_CT_F_LABEL) {
        /* The labels are in the argument slot after this one (see
         * struct ovs_bpf_act_ct_label), which the translator always puts
         * there. */
        arg = ovs_bpf_slot(s, next);
        if (!arg || next >= s->n_actions
            || arg->type != OVS_BPF_ACTION_CT_LABEL) {
            return ovs_bpf_drop(OVS_BPF_DROP_INTERNAL);
        }
        lbl = &arg->u.ct_label;
        next++;
    }
    /* ICMP and the other protocols the kfuncs refuse go up, and so do
     * commits with labels to write (ovs_bpf_ct_apply() says which).  The
     * key's conntrack fields go up as they are: ovs-vswitchd finds the
     * connection of an earlier ct() of the packet from them.  The TCP
     * states are zeroed once here, for every way up: ovs_bpf_ct_apply()
     * sets them only when the packet moves its connection's state. */
    s->upcall.ct_tcp_old = 0;
    s->upcall.ct_tcp_new = 0;
    ret = (ovs_bpf_ct_is_slow(&s->key) ? OVS_BPF_CT_TO_SLOW_PATH
           : ovs_bpf_ct_apply(skb, s, &a->u.ct, lbl));
    if (ret == OVS_BPF_CT_TO_SLOW_PATH) {
        return ovs_bpf_ct_slow_path(skb, s, idx);
    } else if (ret) {
        return TC_ACT_SHOT;
    } else if (s->upcall.ct_tcp_new) {
        /* The packet moves its TCP connection to another state: up, for
         * ovs-vswitchd to write it, and on with the actions after the
         * ct() (bpf/ct-slow.h). */
        return ovs_bpf_ct_slow_path(skb, s, idx);
    }
    return ovs_bpf_run_actions(skb, s, next);
}

/* OVS_BPF_ACTION_CT_CLEAR. */
static __always_inline int
ovs_bpf_act_ct_clear__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       struct ovs_bpf_action *a, __u32 idx)
{
    ovs_bpf_ct_clear_key(&s->key);
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

#endif /* BPF_ACTIONS_CT_H */
