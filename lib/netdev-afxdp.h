/*
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

#ifndef NETDEV_AFXDP_H
#define NETDEV_AFXDP_H 1

/* AF_XDP network devices ("afxdp" and "afxdp-nonpmd" netdev types).
 *
 * The netdev classes themselves live in netdev-linux.c, which shares its
 * device handling (flags, MTU, carrier, addresses) with them; this module
 * supplies everything that moves packets through AF_XDP sockets. */

#ifdef HAVE_AF_XDP

#include <stdbool.h>
#include <stdint.h>

struct dp_packet;
struct dp_packet_batch;
struct netdev;
struct netdev_custom_stats;
struct netdev_rxq;
struct netdev_stats;
struct smap;

/* Private to the netdev's files (netdev-afxdp-private.h);
 * netdev-linux-private.h holds pointers. */
struct netdev_afxdp_tx_lock;
struct xsk_socket_info;

/* Values of options:xdp-mode. */
enum afxdp_mode {
    OVS_AF_XDP_MODE_UNSPEC,
    OVS_AF_XDP_MODE_BEST_EFFORT,    /* Best of the three below. */
    OVS_AF_XDP_MODE_NATIVE_ZC,      /* Driver XDP, zero-copy sockets. */
    OVS_AF_XDP_MODE_NATIVE,         /* Driver XDP, copy-mode sockets. */
    OVS_AF_XDP_MODE_GENERIC,        /* SKB (generic) XDP, copy mode. */
    OVS_AF_XDP_MODE_MAX,
};

/* Device life cycle and configuration. */
int netdev_afxdp_init(void);
int netdev_afxdp_construct(struct netdev *);
void netdev_afxdp_destruct(struct netdev *);
int netdev_afxdp_set_config(struct netdev *, const struct smap *args,
                            char **errp);
int netdev_afxdp_get_config(const struct netdev *, struct smap *args);
int netdev_afxdp_reconfigure(struct netdev *);
int netdev_afxdp_verify_mtu_size(const struct netdev *, int mtu);

/* Statistics. */
int netdev_afxdp_get_stats(const struct netdev *, struct netdev_stats *);
int netdev_afxdp_get_custom_stats(const struct netdev *,
                                  struct netdev_custom_stats *);

/* Packet I/O. */
int netdev_afxdp_rxq_construct(struct netdev_rxq *);
void netdev_afxdp_rxq_destruct(struct netdev_rxq *);
int netdev_afxdp_rxq_recv(struct netdev_rxq *, struct dp_packet_batch *,
                          int *qfill);
int netdev_afxdp_batch_send(struct netdev *, int qid,
                            struct dp_packet_batch *, bool concurrent_txq);

/* Returns the UMEM frame of a DPBUF_AFXDP packet to its pool. */
void free_afxdp_buf(struct dp_packet *);

/* Fatal-signal hook: removes the XDP program from the device. */
void signal_remove_xdp(struct netdev *);

#else /* !HAVE_AF_XDP */

/* dp-packet.h calls this for DPBUF_AFXDP packets whether or not AF_XDP is
 * built; without AF_XDP no packet has that source, so there is nothing to
 * free. */
struct dp_packet;
static inline void free_afxdp_buf(struct dp_packet *p) { (void) p; }

#endif /* HAVE_AF_XDP */
#endif /* netdev-afxdp.h */
