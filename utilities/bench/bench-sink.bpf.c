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

/* Benchmark sink: counts every frame that reaches the sink veth and drops
 * it.  Counting in XDP is exact (no socket buffer can overflow) and costs a
 * few tens of nanoseconds, so the sink never limits what the switch under
 * test delivers.  utilities/ovs-datapath-bench reads 'sink_count' with
 * bpftool and sums the per-CPU slots. */

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} sink_count SEC(".maps");

SEC("xdp")
int
bench_sink(struct xdp_md *ctx)
{
    __u32 key = 0;
    __u64 *count = bpf_map_lookup_elem(&sink_count, &key);

    /* The lookup of index 0 of a one-entry array cannot fail, but the
     * verifier insists on the NULL check. */
    if (count) {
        *count += 1;
    }
    return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
