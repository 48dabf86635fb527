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

#ifndef DPIF_BPF_LOADER_H
#define DPIF_BPF_LOADER_H 1

/* Loading the BPF datapath object with libbpf.
 *
 * One 'struct dpif_bpf_obj' per datapath: the object file
 * bpf/datapath.bpf.o opened and loaded, its maps pinned below
 * /sys/fs/bpf/ovs-bpf/<pin_name>/ (so that bpftool and tests can inspect
 * them), the 'tailcalls' program array filled with the action programs, and
 * helpers to attach the ingress and downcall programs at the TC ingress hook
 * of a device.
 *
 * libbpf's messages go to the log at DBG level (ovs-libbpf-log.h), except
 * that the warnings of a failed load (the verifier's message included) are
 * also logged at ERR. */

#include <stdbool.h>
#include <stdint.h>

#include "bpf/datapath-abi.h"

/* Where the object is searched, in order: the OVS_BPF_DATAPATH_OBJ
 * environment variable, <pkgdatadir>/bpf/datapath.bpf.o, and the build tree
 * path BPF_DATAPATH_BUILD_OBJ (defined by the build). */
#define DPIF_BPF_OBJ_ENV "OVS_BPF_DATAPATH_OBJ"

/* Root of the pinned maps of all datapaths. */
#define DPIF_BPF_PIN_ROOT "/sys/fs/bpf/ovs-bpf"

struct dpif_bpf_obj_config {
    uint32_t flow_table_size;   /* max_entries of each flow table. */
    const char *pin_name;       /* Directory below DPIF_BPF_PIN_ROOT. */
    uint32_t vlan_limit;        /* VLAN tags the parser decodes (1 or 2). */
};

/* The loaded object of one datapath.  The fds belong to the object. */
struct dpif_bpf_obj {
    struct bpf_object *obj;
    char *path;                 /* The object file loaded. */
    char *pin_dir;              /* DPIF_BPF_PIN_ROOT/<datapath>. */

    int flow_table_fds[OVS_BPF_N_FLOW_TABLES]; /* By ovs_bpf_flow_table. */
    int flow_masks_fd;
    int dp_config_fd;
    int dp_stats_fd;
    int ports_fd;
    int ifindexes_fd;
    int upcalls_fd;
    int tailcalls_fd;

    int ingress_prog_fd;
    int downcall_prog_fd;

    uint32_t abi_version;       /* As compiled into the object. */
    uint32_t vlan_limit;        /* As set at load time, 0 if not settable. */
};

/* The program in each slot of the 'tailcalls' program array, by name (NULL
 * for a slot without one). */
extern const char *const dpif_bpf_tailcall_progs[__OVS_BPF_TAILCALL_MAX];

int dpif_bpf_obj_load(const char *dp_name,
                      const struct dpif_bpf_obj_config *,
                      struct dpif_bpf_obj **objp, char **errorp);
void dpif_bpf_obj_unload(struct dpif_bpf_obj *);

/* TC ingress attachment of 'prog_fd' to the device 'ifindex' (named
 * 'devname', for messages).  '*created_qdisc' tells whether the clsact qdisc
 * was created for us, so that the detach removes it again. */
int dpif_bpf_tc_attach(int ifindex, const char *devname, int prog_fd,
                       bool *created_qdisc);
void dpif_bpf_tc_detach(int ifindex, bool remove_qdisc);

#endif /* dpif-bpf-loader.h */
