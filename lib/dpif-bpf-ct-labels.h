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

/* Conntrack labels for the BPF datapath: the nftables table that makes the
 * kernel give new connections room for them (dpif-bpf-ct-labels.c). */

#ifndef DPIF_BPF_CT_LABELS_H
#define DPIF_BPF_CT_LABELS_H 1

/* Makes the kernel give the connections created from now on in this
 * process's network namespace room for labels, for as long as the process
 * lives.  Returns 0 or an errno value (then the datapath has no labels). */
int dpif_bpf_ct_labels_enable(void);

#endif /* dpif-bpf-ct-labels.h */
