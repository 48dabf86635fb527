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

/* Tunnel ports: the tunnel metadata of a received packet into the flow key,
 * and the tunnel key of set(tunnel(...)) onto a packet output to a tunnel
 * port.  A tunnel port is a kernel tunnel device in collect_md mode
 * (OVS_BPF_PORT_F_TUNNEL): the device has already parsed and removed the
 * outer headers of what it hands to the ingress program, and builds them
 * for what is redirected to it, from the metadata of the skb. */

#ifndef BPF_TUNNEL_H
#define BPF_TUNNEL_H 1

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/maps.h"
#include "bpf/skb-csum.h"

/* struct flow_tnl 'flags' of OVS (FLOW_TNL_F_*, include/openvswitch/
 * packets.h), as the kernel datapath derives them from the device's
 * TUNNEL_* flags. */
#define OVS_BPF_FLOW_TNL_F_OAM 0x1
#define OVS_BPF_FLOW_TNL_F_DONT_FRAGMENT 0x2
#define OVS_BPF_FLOW_TNL_F_CSUM 0x4
#define OVS_BPF_FLOW_TNL_F_KEY 0x8

/* The kernel's TUNNEL_* flags as bpf_skb_get_tunnel_key() returns them in
 * 'tunnel_flags' with BPF_F_TUNINFO_FLAGS (in host order after
 * bpf_ntohs()). */
#define OVS_BPF_TUNNEL_CSUM 0x0001
#define OVS_BPF_TUNNEL_KEY 0x0004
#define OVS_BPF_TUNNEL_DONT_FRAGMENT 0x0100
#define OVS_BPF_TUNNEL_OAM 0x0200

/* What bpf_skb_get_tunnel_key() returns for an IPv6 tunnel asked for
 * without BPF_F_TUNINFO_IPV6 (or the reverse). */
#define OVS_BPF_EPROTO 71

static __always_inline __u16
ovs_bpf_tunnel_flags_to_ovs(__be16 tunnel_flags)
{
    __u16 f = bpf_ntohs(tunnel_flags);

    return ((f & OVS_BPF_TUNNEL_CSUM ? OVS_BPF_FLOW_TNL_F_CSUM : 0)
            | (f & OVS_BPF_TUNNEL_KEY ? OVS_BPF_FLOW_TNL_F_KEY : 0)
            | (f & OVS_BPF_TUNNEL_DONT_FRAGMENT
               ? OVS_BPF_FLOW_TNL_F_DONT_FRAGMENT : 0)
            | (f & OVS_BPF_TUNNEL_OAM ? OVS_BPF_FLOW_TNL_F_OAM : 0));
}

/* The UDP ports of the outer header, which bpf_skb_get_tunnel_key() does
 * not return, are in the tunnel metadata the VXLAN driver attached to the
 * skb (the 'struct metadata_dst' of its dst, 'u.tun_info.key.tp_src' and
 * 'tp_dst'): read through bpf_cast_to_kern_ctx() and CO-RE, the pointer
 * that the dst is made a read-only kernel pointer by bpf_rdonly_cast() (a
 * kfunc of Linux 6.2+ that the verifier turns into a register move), so
 * that both ports are plain loads (BPF_PROBE_MEM: a fault reads 0) rather
 * than two bpf_probe_read_kernel() calls per packet (see bpf/skb-csum.h
 * for why local partial definitions).  The ingress program calls this
 * only after bpf_skb_get_tunnel_key() found the metadata, so the dst is a
 * metadata_dst of type METADATA_IP_TUNNEL. */
struct sk_buff___ovs_tnl {
    unsigned long _skb_refdst;
} __attribute__((preserve_access_index));

struct ip_tunnel_key___ovs {
    __be16 tp_src;
    __be16 tp_dst;
} __attribute__((preserve_access_index));

struct ip_tunnel_info___ovs {
    struct ip_tunnel_key___ovs key;
} __attribute__((preserve_access_index));

struct metadata_dst___ovs {
    union {
        struct ip_tunnel_info___ovs tun_info;
    } u;
} __attribute__((preserve_access_index));

#define OVS_BPF_SKB_DST_PTRMASK (~1UL)  /* include/linux/skbuff.h. */

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

static __always_inline void
ovs_bpf_tunnel_ports(struct __sk_buff *ctx, struct ovs_bpf_flow_key *key)
{
    struct sk_buff___ovs_tnl *skb = bpf_cast_to_kern_ctx(ctx);
    unsigned long dst = skb->_skb_refdst & OVS_BPF_SKB_DST_PTRMASK;
    struct metadata_dst___ovs *md;

    if (dst) {
        md = bpf_rdonly_cast((void *) dst,
                             bpf_core_type_id_kernel(struct
                                                     metadata_dst___ovs));
        key->tun_tp_src = md->u.tun_info.key.tp_src;
        key->tun_tp_dst = md->u.tun_info.key.tp_dst;
    }
}

/* Fills the 'tun_*' fields of 'key' (zero on entry) for a packet received
 * on the tunnel port 'port', as the kernel datapath fills them from the
 * same metadata.  A packet without tunnel metadata (which a collect_md
 * device never hands over) keeps a zero tunnel key. */
static __always_inline void
ovs_bpf_tunnel_rx(struct __sk_buff *skb, struct ovs_bpf_flow_key *key)
{
    struct bpf_tunnel_key tk;
    bool ipv6 = false;
    long err;

    err = bpf_skb_get_tunnel_key(skb, &tk, sizeof tk, BPF_F_TUNINFO_FLAGS);
    if (err == -OVS_BPF_EPROTO) {
        /* An IPv6 underlay, which needs its own flag. */
        err = bpf_skb_get_tunnel_key(skb, &tk, sizeof tk,
                                     BPF_F_TUNINFO_FLAGS
                                     | BPF_F_TUNINFO_IPV6);
        ipv6 = true;
    }
    if (err) {
        return;
    }

    key->tun_id = bpf_cpu_to_be64((__u64) tk.tunnel_id);
    if (ipv6) {
        __builtin_memcpy(key->tun_ipv6_src, tk.remote_ipv6, 16);
        __builtin_memcpy(key->tun_ipv6_dst, tk.local_ipv6, 16);
    } else {
        key->tun_ipv4_src = bpf_htonl(tk.remote_ipv4);
        key->tun_ipv4_dst = bpf_htonl(tk.local_ipv4);
    }
    key->tun_flags = bpf_htons(ovs_bpf_tunnel_flags_to_ovs(tk.tunnel_flags));
    key->tun_tos = tk.tunnel_tos;
    key->tun_ttl = tk.tunnel_ttl;
    ovs_bpf_tunnel_ports(skb, key);
}

/* Gives the tunnel key of the last set(tunnel(...)) to the skb, for an
 * output to the tunnel port 'port'.  Returns false if there is none (the
 * collect_md device would drop the packet: it has nowhere to send it) or
 * the kernel refused it. */
static __always_inline bool
ovs_bpf_tunnel_tx(struct __sk_buff *skb)
{
    struct ovs_bpf_scratch *s = ovs_bpf_scratch_get();

    if (!s || !s->tun_valid) {
        return false;
    }
    return !bpf_skb_set_tunnel_key(skb, &s->tun_key, sizeof s->tun_key,
                                   s->tun_flags);
}

#endif /* BPF_TUNNEL_H */
