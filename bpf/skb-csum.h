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

/* The checksum state of an skb, which struct __sk_buff does not expose: a
 * packet that a local socket sent out of a veth with TX checksum offload is
 * CHECKSUM_PARTIAL, its L4 checksum field holding only the pseudo-header
 * sum.  The fast path redirects the skb and the kernel keeps that state; an
 * upcall copies only bytes, so it must say so for ovs-vswitchd to complete
 * the checksum before it sends the packet back down through the TAP (where
 * it becomes an ordinary, CHECKSUM_NONE, frame).
 *
 * The kernel's struct sk_buff is read through bpf_cast_to_kern_ctx() (a
 * kfunc of Linux 6.3+) and CO-RE: the local definition below has only the
 * fields used here, and libbpf relocates their offsets (and the bit
 * position of 'ip_summed') against the running kernel's BTF at load time.
 * This keeps the build independent of the build host's kernel (no
 * vmlinux.h) and of the layout of struct sk_buff, which changes between
 * kernel versions and configurations. */

#ifndef BPF_SKB_CSUM_H
#define BPF_SKB_CSUM_H 1

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* The "___ovs" flavour suffix keeps this partial definition apart from any
 * other declaration of struct sk_buff; CO-RE ignores it when it matches the
 * kernel's type. */
struct sk_buff___ovs {
    __u8 ip_summed:2;
    union {
        __u32 csum;
        struct {
            __u16 csum_start;   /* From skb->head. */
            __u16 csum_offset;  /* From csum_start. */
        };
    };
    unsigned char *head;
    unsigned char *data;
} __attribute__((preserve_access_index));

/* include/linux/skbuff.h. */
#define OVS_BPF_CHECKSUM_PARTIAL 3

extern void *bpf_cast_to_kern_ctx(void *ctx) __ksym;

/* If 'ctx' (the program's context) is CHECKSUM_PARTIAL, stores in
 * '*startp' and '*offsetp' where its checksum starts and where the checksum
 * field is, counted from skb->data (the Ethernet header, in TC), and
 * returns true.  Otherwise returns false. */
static __always_inline bool
ovs_bpf_skb_csum_partial(struct __sk_buff *ctx, __u16 *startp,
                         __u16 *offsetp)
{
    struct sk_buff___ovs *skb = bpf_cast_to_kern_ctx(ctx);
    __u64 headroom;
    __u16 start;

    if (BPF_CORE_READ_BITFIELD(skb, ip_summed) != OVS_BPF_CHECKSUM_PARTIAL) {
        return false;
    }
    /* skb->data - skb->head is the headroom, from which csum_start
     * counts.  (The verifier accepts this subtraction of two pointers
     * read through the kernel pointer: checked on Linux 6.18, where the
     * offsets it gives are right, see "bpf - checksum offload" in
     * tests/system-bpf.at.) */
    headroom = skb->data - skb->head;
    start = skb->csum_start;
    if (start < headroom) {
        return false;           /* Not in the packet: cannot happen. */
    }
    *startp = start - headroom;
    *offsetp = skb->csum_offset;
    return true;
}

#endif /* BPF_SKB_CSUM_H */
