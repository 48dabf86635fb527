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

#ifndef DPIF_BPF_H
#define DPIF_BPF_H 1

/* The "bpf" datapath: a datapath whose fast path runs as eBPF programs at
 * the TC ingress hook of its ports (see Documentation/topics/dpif-bpf.rst).
 * Select it with "ovs-vsctl set bridge <br> datapath_type=bpf". */

struct dpif_class;

extern const struct dpif_class dpif_bpf_class;

#endif /* dpif-bpf.h */
