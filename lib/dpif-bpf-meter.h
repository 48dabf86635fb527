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

#ifndef DPIF_BPF_METER_H
#define DPIF_BPF_METER_H 1

/* OpenFlow meters of the BPF datapath: the dpif meter operations, which
 * keep each meter in the 'meters' BPF map where the meter action program
 * (bpf/actions-meter.h) runs it, and the meter of packets whose actions
 * ovs-vswitchd runs. */

#include <stdint.h>

#include "openvswitch/ofp-meter.h"

struct dp_bpf;
struct dp_packet_batch;
struct dpif;

void dpif_bpf_meter_get_features(const struct dpif *,
                                 struct ofputil_meter_features *);
int dpif_bpf_meter_set(struct dpif *, ofproto_meter_id,
                       struct ofputil_meter_config *);
int dpif_bpf_meter_get(const struct dpif *, ofproto_meter_id,
                       struct ofputil_meter_stats *, uint16_t n_bands);
int dpif_bpf_meter_del(struct dpif *, ofproto_meter_id,
                       struct ofputil_meter_stats *, uint16_t n_bands);

void dp_bpf_meter_batch(struct dp_bpf *, struct dp_packet_batch *,
                        uint32_t meter_id);

#endif /* dpif-bpf-meter.h */
