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

/* OpenFlow meters of the BPF datapath.
 *
 * A meter lives in the 'meters' BPF array map (struct ovs_bpf_meter of
 * bpf/datapath-abi.h), indexed by the datapath meter id that ofproto
 * allocates: ovs-vswitchd writes its bands there and reads its statistics
 * back, both under the meter's spin lock (BPF_F_LOCK), and the meter
 * action program runs its token buckets for every packet.  The meter state
 * is in the map alone, so it is the same whoever runs the packet: a packet
 * whose actions ovs-vswitchd runs goes through the meter by a run of the
 * object's 'ovs_bpf_meter_packet' program on it (BPF_PROG_TEST_RUN). */

#include <config.h>

#include "dpif-bpf-meter.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/pkt_cls.h>
#include <string.h>

#include "coverage.h"
#include "dp-packet.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-private.h"
#include "openvswitch/ofp-meter.h"
#include "openvswitch/vlog.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_meter);

COVERAGE_DEFINE(dpif_bpf_meter_drop_userspace);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);

/* 'flags' of struct ovs_bpf_meter that only ovs-vswitchd uses: the meter
 * exists (a meter may have no bands). */
#define DP_BPF_METER_F_SET (1u << 31)

#define DP_BPF_METER_FLAGS (OFPMF13_KBPS | OFPMF13_PKTPS | OFPMF13_BURST \
                            | OFPMF13_STATS)

void
dpif_bpf_meter_get_features(const struct dpif *dpif OVS_UNUSED,
                            struct ofputil_meter_features *features)
{
    features->max_meters = OVS_BPF_MAX_METERS;
    features->band_types = 1 << OFPMBT13_DROP;
    features->capabilities = DP_BPF_METER_FLAGS;
    features->max_bands = OVS_BPF_MAX_METER_BANDS;
    features->max_color = 0;
}

int
dpif_bpf_meter_set(struct dpif *dpif, ofproto_meter_id meter_id,
                   struct ofputil_meter_config *config)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    uint32_t id = meter_id.uint32;
    struct ovs_bpf_meter m;

    if (id >= OVS_BPF_MAX_METERS) {
        return EFBIG;
    }
    if (config->flags & ~DP_BPF_METER_FLAGS) {
        return EBADF;
    }
    if (config->n_bands > OVS_BPF_MAX_METER_BANDS) {
        return EINVAL;
    }

    memset(&m, 0, sizeof m);
    m.flags = DP_BPF_METER_F_SET;
    if (config->flags & OFPMF13_PKTPS) {
        m.flags |= OVS_BPF_METER_F_PKTPS;
    }
    m.n_bands = config->n_bands;
    for (size_t i = 0; i < config->n_bands; i++) {
        const struct ofputil_meter_band *band = &config->bands[i];
        struct ovs_bpf_meter_band *b = &m.bands[i];
        /* As dpif-netdev: without a burst size, a second's worth. */
        uint64_t burst = band->burst_size ? band->burst_size : band->rate;

        if (band->type != OFPMBT13_DROP) {
            return ENODEV;
        }
        if (!band->rate) {
            return EINVAL;
        }
        /* A rate in kbit/s or packets/s is in tokens per ns, and a kbit or
         * a packet of burst is 10^9 tokens (see datapath-abi.h).  With
         * 32-bit rates and bursts nothing here or in the BPF program
         * overflows 64 bits. */
        b->rate = band->rate;
        b->max_bucket = burst * 1000000000ULL;
        b->max_delta_ns = b->max_bucket / b->rate;
        b->bucket = b->max_bucket;      /* Starts full, as dpif-netdev. */
    }

    /* Replaces the meter whole, statistics included, as dpif-netdev. */
    if (bpf_map_update_elem(dp->obj->meters_fd, &id, &m, BPF_F_LOCK)) {
        int error = errno;

        VLOG_WARN_RL(&rl, "%s: writing meter %"PRIu32" failed (%s)",
                     dp->name, id, ovs_strerror(error));
        return error;
    }
    return 0;
}

int
dpif_bpf_meter_get(const struct dpif *dpif, ofproto_meter_id meter_id,
                   struct ofputil_meter_stats *stats, uint16_t n_bands)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    uint32_t id = meter_id.uint32;
    struct ovs_bpf_meter m;
    uint16_t i;

    if (id >= OVS_BPF_MAX_METERS) {
        return EFBIG;
    }
    if (bpf_map_lookup_elem_flags(dp->obj->meters_fd, &id, &m, BPF_F_LOCK)) {
        return errno;
    }
    if (!(m.flags & DP_BPF_METER_F_SET)) {
        return ENOENT;
    }
    if (stats) {
        stats->packet_in_count = m.packets;
        stats->byte_in_count = m.bytes;
        for (i = 0; i < n_bands && i < m.n_bands; i++) {
            stats->bands[i].packet_count = m.bands[i].packets;
            stats->bands[i].byte_count = m.bands[i].bytes;
        }
        stats->n_bands = i;
    }
    return 0;
}

int
dpif_bpf_meter_del(struct dpif *dpif, ofproto_meter_id meter_id,
                   struct ofputil_meter_stats *stats, uint16_t n_bands)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    uint32_t id = meter_id.uint32;
    struct ovs_bpf_meter m;
    int error;

    error = dpif_bpf_meter_get(dpif, meter_id, stats, n_bands);
    if (error) {
        return error;
    }
    /* A packet in flight through the meter now passes it, as through no
     * meter. */
    memset(&m, 0, sizeof m);
    if (bpf_map_update_elem(dp->obj->meters_fd, &id, &m, BPF_F_LOCK)) {
        return errno;
    }
    return 0;
}

/* Takes the packets of 'batch' through meter 'meter_id' and removes (and
 * frees) from it those that the meter drops. */
void
dp_bpf_meter_batch(struct dp_bpf *dp, struct dp_packet_batch *batch,
                   uint32_t meter_id)
{
    const size_t n = dp_packet_batch_size(batch);
    struct dp_packet *packet;
    size_t i;

    DP_PACKET_BATCH_REFILL_FOR_EACH (i, n, packet, batch) {
        struct __sk_buff ctx = { .cb = { meter_id } };
        LIBBPF_OPTS(bpf_test_run_opts, opts,
                    .data_in = dp_packet_data(packet),
                    .data_size_in = dp_packet_size(packet),
                    .ctx_in = &ctx,
                    .ctx_size_in = sizeof ctx,
                    .repeat = 1);
        int error;

        error = bpf_prog_test_run_opts(dp->obj->meter_prog_fd, &opts);
        if (error) {
            /* Cannot happen for a frame of at least an Ethernet header
             * (which the caller checked): let it through, as through a
             * meter that does not exist. */
            VLOG_WARN_RL(&rl, "%s: meter %"PRIu32" could not run (%s)",
                         dp->name, meter_id, ovs_strerror(-error));
        } else if (opts.retval == TC_ACT_SHOT) {
            COVERAGE_INC(dpif_bpf_meter_drop_userspace);
            dp_packet_delete(packet);
            continue;
        }
        dp_packet_batch_refill(batch, packet, i);
    }
}
