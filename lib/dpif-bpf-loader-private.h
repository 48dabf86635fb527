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

#ifndef DPIF_BPF_LOADER_PRIVATE_H
#define DPIF_BPF_LOADER_PRIVATE_H 1

/* What the loader (dpif-bpf-loader.c) and the take-over of pinned
 * datapaths (dpif-bpf-pinned.c) share.  Not for use outside these two
 * files: what the rest of the datapath uses is in dpif-bpf-loader.h. */

#include <stdbool.h>

struct dpif_bpf_obj;

/* The pins of the programs, next to the maps', which tell the next
 * ovs-vswitchd which programs are attached (see dpif_bpf_obj_adopt()). */
#define PIN_PROG_INGRESS "prog_ingress"
#define PIN_PROG_DOWNCALL "prog_downcall"
#define PIN_PROG_METER "prog_meter"
#define PIN_PROG_CT_REASS "prog_ct_reass"

const char *dpif_bpf_obj_file(void);
struct dpif_bpf_obj *dpif_bpf_obj_alloc(void);
int dpif_bpf_obj_open(struct dpif_bpf_obj *, char **errorp);
void dpif_bpf_obj_get_map_fds(struct dpif_bpf_obj *);
int dpif_bpf_obj_get_pinned(const struct dpif_bpf_obj *, const char *name);
int dpif_bpf_obj_pin_instance_mark(const struct dpif_bpf_obj *,
                                   const char *instance, char **errorp);
void dpif_bpf_obj_remove_staging_pins(const struct dpif_bpf_obj *);

#endif /* dpif-bpf-loader-private.h */
