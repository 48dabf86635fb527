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

#ifndef DPIF_BPF_LINUX_H
#define DPIF_BPF_LINUX_H 1

/* The Linux devices of the BPF datapath, made through rtnetlink and
 * /dev/net/tun.  Each function returns 0 or a positive errno value, except
 * dpif_bpf_link_disable_ipv6(), which is best effort. */

#include <stdbool.h>

#include "openvswitch/types.h"

int dpif_bpf_veth_create(const char *name, const char *peer);
int dpif_bpf_vxlan_create(const char *name, ovs_be16 dst_port, bool gpe);
int dpif_bpf_link_delete(const char *name);
bool dpif_bpf_link_has_master(const char *name);
int dpif_bpf_link_set_up(int ifindex);
int dpif_bpf_link_set_promisc(int ifindex, bool on);
bool dpif_bpf_link_is_promisc(const char *name);
void dpif_bpf_link_disable_ipv6(const char *name);

int dpif_bpf_tap_open(const char *dp_name, const char *tap_name, int *fdp,
                      int *ifindexp);
void dpif_bpf_tap_close(int fd, bool remove);

#endif /* dpif-bpf-linux.h */
