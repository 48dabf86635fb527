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

/* Benchmark sink: counts every packet that reaches the sink veth and drops
 * it, at TC ingress.  Counting in BPF is exact (no socket buffer can
 * overflow).  The sink veth has NAPI (GRO on) but not threaded NAPI, so its
 * receive work, this program included, runs in the softirq of the CPU that
 * sent to it: the datapath CPU, where it is counted in every row alike.
 * utilities/ovs-datapath-bench reads 'sink_count' with bpftool and sums the
 * per-CPU slots. */

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} sink_count SEC(".maps");

SEC("tc")
int
bench_sink(struct __sk_buff *skb)
{
    __u32 key = 0;
    __u64 *count = bpf_map_lookup_elem(&sink_count, &key);

    /* The lookup of index 0 of a one-entry array cannot fail, but the
     * verifier insists on the NULL check. */
    if (count) {
        *count += 1;
    }
    return TC_ACT_SHOT;
}

char _license[] SEC("license") = "GPL";
