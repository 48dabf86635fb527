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

/* The data path of the AF_XDP netdev, per queue: receive (RX ring, packet
 * descriptors, fill ring refill), transmit (zero-copy forwards and copies
 * into TX frames, kicks), completion, and the freeing of AF_XDP packets.
 *
 * What runs per packet is here, in one file, so that the compiler inlines
 * its helpers into netdev_afxdp_rxq_recv() and netdev_afxdp_batch_send(). */

#include <config.h>

#include "netdev-afxdp.h"
#include "netdev-afxdp-private.h"

#include <errno.h>
#include <linux/if_xdp.h>
#include <string.h>
#include <sys/socket.h>

#include <xdp/xsk.h>

#include "coverage.h"
#include "dp-packet.h"
#include "netdev-provider.h"
#include "openvswitch/compiler.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp_rxtx);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

COVERAGE_DEFINE(afxdp_rx_fill_short);   /* Fill ring refill ran dry. */
COVERAGE_DEFINE(afxdp_rx_invalid_desc); /* RX descriptor outside the UMEM. */
COVERAGE_DEFINE(afxdp_rx_multibuf);     /* Multi-buffer packet received. */
COVERAGE_DEFINE(afxdp_tx_kick);         /* sendto() to start transmission. */
COVERAGE_DEFINE(afxdp_tx_kick_again);   /* Kicks left descriptors behind. */
COVERAGE_DEFINE(afxdp_tx_dev_drop);     /* The device dropped a packet. */
COVERAGE_DEFINE(afxdp_tx_zero_copy);    /* Frame forwarded without a copy. */
COVERAGE_DEFINE(afxdp_tx_copy);         /* Packet copied into a TX frame. */
COVERAGE_DEFINE(afxdp_tx_drop);         /* No TX frame or ring slot. */
COVERAGE_DEFINE(afxdp_tx_too_big);      /* Packet does not fit in a frame. */
COVERAGE_DEFINE(afxdp_tx_orphan);       /* Completed frame of a gone queue. */

/* Refill the fill ring when it has room for this many frames. */
#define AFXDP_FILL_BATCH (2 * NETDEV_MAX_BURST)

/* Drain the completion ring in batches of this size. */
#define AFXDP_COMP_BATCH (2 * NETDEV_MAX_BURST)

/* Largest packet that is transmitted: frames of a multi-buffer packet. */
#define AFXDP_MAX_FRAGS 17

/* Packet descriptors. */

static inline struct dp_packet_afxdp *
afxdp_xpacket_of_frame(const struct afxdp_umem *umem, const char *frame)
{
    return &umem->xpackets[(frame - umem->area) >> AFXDP_FRAME_SHIFT].xp;
}

/* Whether the frame of AF_XDP packet 'pkt' is in 'umem'. */
static bool
afxdp_umem_contains(const struct afxdp_umem *umem,
                    const struct dp_packet *pkt)
{
    const char *frame = dp_packet_base(pkt);

    return (uintptr_t) frame - (uintptr_t) umem->area < umem->size;
}

/* Gives the packet descriptor 'xp', which owned a frame of the RX pool its
 * 'mpool' points to until now, back to that queue if it is one of the
 * queue's hot descriptors, and marks it free ('mpool' NULL).  Called on
 * the thread polling that queue, like umem_pool_push() on 'mpool'. */
static inline void
afxdp_xpacket_release(struct dp_packet_afxdp *xp)
{
    struct xsk_socket_info *owner = CONTAINER_OF(xp->mpool,
                                                 struct xsk_socket_info,
                                                 rx_pool);

    xp->mpool = NULL;
    if ((uintptr_t) xp - (uintptr_t) owner->hot
        < AFXDP_HOT_XPACKETS * sizeof *owner->hot) {
        owner->hot_free[owner->n_hot_free++] = xp;
    }
}

/* Receiving. */

static void afxdp_tx_poll(struct netdev_linux *, struct xsk_socket_info *);

static inline struct xsk_socket_info *
afxdp_xsk(struct netdev_linux *dev, int qid)
{
    if (OVS_UNLIKELY(!dev->xsks || qid >= dev->up.n_rxq)) {
        return NULL;
    }
    return dev->xsks[qid];
}

int
netdev_afxdp_rxq_construct(struct netdev_rxq *rxq)
{
    struct netdev_rxq_linux *rx = netdev_rxq_linux_cast(rxq);
    struct netdev_linux *dev = netdev_linux_cast(rxq->netdev);
    struct xsk_socket_info *xsk;

    /* The sockets belong to the netdev, created at reconfiguration, which
     * comes first.  The fd is for netdev_linux_rxq_wait(), which non-PMD
     * ports sleep in: an XSK is readable when its RX ring is not empty. */
    ovs_mutex_lock(&dev->mutex);
    xsk = afxdp_xsk(dev, rxq->queue_id);
    rx->fd = xsk ? xsk_socket__fd(xsk->xsk) : -1;
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

void
netdev_afxdp_rxq_destruct(struct netdev_rxq *rxq OVS_UNUSED)
{
}

/* Sets up 'pkt' for a frame just received, 'len' bytes at 'offset' in
 * 'frame'.  The packet's allocated size and source never change and were set
 * with the descriptor; dpif-netdev initializes the metadata of every packet
 * it receives (pkt_metadata_init() in dfc_processing()), as it does for
 * DPDK's.  What is left is the frame and what a previous use of the
 * descriptor may have changed: where the data starts and ends, the header
 * offsets, the offload flags, the cut length and the packet type.
 * dp_packet_use_afxdp() would redo all of it, metadata included, in a
 * function call per packet. */
static inline void
afxdp_rx_packet_init(struct dp_packet *pkt, char *frame, uint64_t offset,
                     uint32_t len)
{
    dp_packet_set_base(pkt, frame);
    dp_packet_set_data(pkt, frame + offset);
    dp_packet_set_size(pkt, len);
    dp_packet_reset_offsets(pkt);
    dp_packet_reset_cutlen(pkt);
    dp_packet_reset_offload(pkt);
    pkt->packet_type = htonl(PT_ETH);
}

/* Publishes all that was reserved in 'prod' to the kernel.  The same as
 * xsk_ring_prod__submit() for all of it, without reading the producer
 * index back: our 'cached_prod' is what it will be. */
static inline void
afxdp_prod_publish(struct xsk_ring_prod *prod)
{
    __atomic_store_n(prod->producer, prod->cached_prod, __ATOMIC_RELEASE);
}

/* Releases all that was peeked from 'cons' to the kernel, like
 * xsk_ring_cons__release() for all of it, without reading the consumer
 * index back. */
static inline void
afxdp_cons_publish(struct xsk_ring_cons *cons)
{
    __atomic_store_n(cons->consumer, cons->cached_cons, __ATOMIC_RELEASE);
}

/* Updates what afxdp_refill() knows of the room in the fill ring from the
 * RX ring's producer index as last read ('rx.cached_prod', read anyway to
 * receive).
 *
 * The kernel takes a fill ring entry for each frame it receives into before
 * it posts the frame's RX descriptor, and a frame comes back to the fill
 * ring only through us, so it has consumed at least as many fill ring
 * entries as it posted RX descriptors.  That gives the room without reading
 * the fill ring's consumer index, a cache line that the kernel writes at
 * every packet (most of the refill's samples in a profile, where this CPU
 * runs the kernel's receive work too).  It underestimates the room by the
 * frames the kernel took and has not posted yet (a zero-copy driver keeps a
 * ring of them), which only keeps the fill ring that much less full: those
 * frames are the kernel's to receive into already.  Counting only the
 * descriptors we consumed would not do: when this thread falls behind, the
 * frames waiting in the RX ring would be counted as still in the fill ring,
 * which then ran dry under a burst (the kernel dropped 357 packets in "bulk
 * TCP under CPU load").
 *
 * libxdp keeps the fill ring's 'cached_cons' 'size' ahead of the consumer
 * index; it never gets ahead of what we produced. */
static inline void
afxdp_fill_update(struct xsk_socket_info *xsk)
{
    uint32_t cons = xsk->rx.cached_prod;

    if ((int32_t) (cons - xsk->fill.cached_prod) > 0) {
        /* More descriptors than frames given: cannot happen. */
        cons = xsk->fill.cached_prod;
    }
    cons += xsk->fill.size;
    if ((int32_t) (cons - xsk->fill.cached_cons) > 0) {
        xsk->fill.cached_cons = cons;
    }
}

/* Tops up the fill ring from the RX pool, in batches, as far as
 * afxdp_fill_update() knows it has room, without reading memory the kernel
 * writes.  'backlog' says that the receive found a full batch: this thread
 * may be behind, the RX producer index it last read stale, and the kernel
 * eating the fill ring meanwhile.  Then, if that bound leaves no room, the
 * fill ring's consumer index is read as it always was: without that, "bulk
 * TCP under CPU load" saw the kernel drop 45 packets of a burst for want of
 * fill ring entries. */
void
afxdp_refill(struct xsk_socket_info *xsk, bool backlog)
{
    uint32_t room = xsk->fill.cached_cons - xsk->fill.cached_prod;

    if (room < AFXDP_FILL_BATCH && backlog) {
        room = xsk_prod_nb_free(&xsk->fill, AFXDP_FILL_BATCH);
    }

    while (room >= AFXDP_FILL_BATCH) {
        struct umem_pool *pool = &xsk->rx_pool;
        const char *area = xsk->umem->area;
        unsigned int n;
        uint32_t idx;

        /* umem_pool_pop_n(), writing the frames straight into the ring
         * rather than through an array. */
        if (OVS_UNLIKELY(pool->n < AFXDP_FILL_BATCH)) {
            umem_pool_reclaim(pool);
        }
        n = MIN(pool->n, AFXDP_FILL_BATCH);
        if (!n) {
            COVERAGE_INC(afxdp_rx_fill_short);
            afxdp_count(xsk, AFXDP_RX_POOL_EMPTY, 1);
            return;
        }
        pool->n -= n;

        /* xsk_ring_prod__reserve(), knowing the room. */
        idx = xsk->fill.cached_prod;
        xsk->fill.cached_prod += n;
        for (unsigned int i = 0; i < n; i++) {
            *xsk_ring_prod__fill_addr(&xsk->fill, idx + i)
                = (char *) pool->frames[pool->n + i] - area;
        }
        afxdp_prod_publish(&xsk->fill);
        room -= n;
    }
}

/* Copies the chain of descriptors that starts at 'idx' (multi-buffer
 * packet, XDP_PKT_CONTD on all but the last) into a new packet and gives the
 * frames back.  Returns the number of descriptors consumed; '*pktp' is NULL
 * if the chain was bad. */
static uint32_t
afxdp_recv_chain(struct xsk_socket_info *xsk, uint32_t idx, uint32_t avail,
                 struct dp_packet **pktp)
{
    struct afxdp_umem *umem = xsk->umem;
    uint32_t n = 0, extra;
    size_t total = 0;
    bool bad = false;

    /* Find the end of the chain, peeking past the batch if needed: the
     * kernel publishes a packet's descriptors together. */
    for (;;) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx, idx + n);

        n++;
        total += d->len;
        if (d->addr + d->len > umem->size) {
            bad = true;
        }
        if (!(d->options & XDP_PKT_CONTD)) {
            break;
        }
        if (n == avail) {
            if (!xsk_ring_cons__peek(&xsk->rx, 1, &extra)) {
                /* Should not happen; drop what we have. */
                bad = true;
                break;
            }
            avail++;
        }
    }

    struct dp_packet *pkt = bad ? NULL : dp_packet_new(total);
    for (uint32_t i = 0; i < n; i++) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx, idx + i);

        if (d->addr + d->len > umem->size) {
            continue;
        }
        if (pkt) {
            dp_packet_put(pkt, umem->area + d->addr, d->len);
        }
        umem_pool_push(&xsk->rx_pool,
                       umem->area + (d->addr & ~AFXDP_FRAME_MASK));
    }
    *pktp = pkt;
    return n;
}

int
netdev_afxdp_rxq_recv(struct netdev_rxq *rxq, struct dp_packet_batch *batch,
                      int *qfill)
{
    struct netdev_linux *dev = netdev_linux_cast(rxq->netdev);
    struct xsk_socket_info *xsk = afxdp_xsk(dev, rxq->queue_id);
    struct afxdp_umem *umem;
    uint32_t rcvd, idx, i;
    uint64_t bad = 0, multibuf = 0, cold_descs = 0;

    if (OVS_UNLIKELY(!xsk)) {
        return EAGAIN;
    }
    umem = xsk->umem;

    afxdp_tx_poll(dev, xsk);

    if (OVS_UNLIKELY(xsk->busy_poll)) {
        /* The kernel runs one NAPI poll of the device's queue in this
         * call (with SO_PREFER_BUSY_POLL and the device's interrupts
         * deferred, nothing else does) and the XDP program redirects what
         * it receives into our RX ring. */
        recvfrom(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
    }

    rcvd = xsk_ring_cons__peek(&xsk->rx, NETDEV_MAX_BURST, &idx);
    afxdp_fill_update(xsk);
    if (!rcvd) {
        /* Only when the RX pool ran dry and frames came back to it (the
         * socket's creation filled the ring): the room only grows when the
         * kernel posts packets. */
        afxdp_refill(xsk, false);
        if (xsk->need_wakeup && !xsk->busy_poll
            && xsk_ring_prod__needs_wakeup(&xsk->fill)) {
            /* The driver sleeps until we poke it. */
            recvfrom(xsk->fd, NULL, 0, MSG_DONTWAIT,
                     NULL, NULL);
        }
        if (qfill) {
            *qfill = 0;
        }
        return EAGAIN;
    }

    /* The packet descriptors are the hot ones, in the cache; when those
     * run out, fetch the frames' own, scattered over a large array.
     *
     * The packets' data is not prefetched.  Each frame is a page of its
     * own, out of the TLB when the packet arrives, and a prefetch that
     * misses the TLB walks the page tables before it retires: in profiles
     * on a virtual machine, a loop that prefetched the data took 47% to 58%
     * of this function's samples, stalled rather than overlapped with
     * anything.  Without it dpif-netdev's parsing takes that miss, as it
     * does with OVS 3.1's netdev, which never prefetched. */
    if (OVS_UNLIKELY(xsk->n_hot_free < rcvd)) {
        for (i = 0; i < rcvd; i++) {
            const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx,
                                                              idx + i);

            if (OVS_LIKELY(d->addr < umem->size)) {
                OVS_PREFETCH_WRITE(afxdp_xpacket_of_frame(
                                       umem, umem->area
                                             + (d->addr
                                                & ~AFXDP_FRAME_MASK)));
            }
        }
    }

    for (i = 0; i < rcvd; ) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx, idx + i);

        if (OVS_UNLIKELY(d->options & XDP_PKT_CONTD)) {
            struct dp_packet *pkt;
            uint32_t n = afxdp_recv_chain(xsk, idx + i, rcvd - i, &pkt);

            if (n > rcvd - i) {
                rcvd = i + n;   /* The chain ran past the first peek. */
            }
            i += n;
            if (pkt) {
                multibuf++;
                dp_packet_batch_add(batch, pkt);
            } else {
                bad++;
            }
            continue;
        }
        i++;

        if (OVS_UNLIKELY(d->addr + d->len > umem->size
                         || d->len > AFXDP_FRAME_SIZE)) {
            /* The frame is lost to us, but a kernel that hands out bad
             * descriptors has bigger problems. */
            bad++;
            continue;
        }

        char *frame = umem->area + (d->addr & ~AFXDP_FRAME_MASK);
        struct dp_packet_afxdp *xpacket;

        if (OVS_LIKELY(xsk->n_hot_free)) {
            xpacket = xsk->hot_free[--xsk->n_hot_free];
        } else {
            xpacket = afxdp_xpacket_of_frame(umem, frame);
            cold_descs++;
        }
        xpacket->mpool = &xsk->rx_pool;
        afxdp_rx_packet_init(&xpacket->packet, frame,
                             d->addr & AFXDP_FRAME_MASK, d->len);
        dp_packet_batch_add(batch, &xpacket->packet);
    }
    afxdp_cons_publish(&xsk->rx);

    if (OVS_UNLIKELY(bad)) {
        COVERAGE_ADD(afxdp_rx_invalid_desc, bad);
        afxdp_count(xsk, AFXDP_RX_BAD, bad);
    }
    if (OVS_UNLIKELY(multibuf)) {
        COVERAGE_ADD(afxdp_rx_multibuf, multibuf);
        afxdp_count(xsk, AFXDP_RX_MULTIBUF, multibuf);
    }
    if (OVS_UNLIKELY(cold_descs)) {
        afxdp_count(xsk, AFXDP_RX_COLD_DESC, cold_descs);
    }

    /* Refill right away so that the kernel does not run dry during the
     * time the datapath takes to process this batch. */
    afxdp_refill(xsk, rcvd >= NETDEV_MAX_BURST);

    if (qfill) {
        *qfill = xsk_cons_nb_avail(&xsk->rx, UINT32_MAX);
    }
    return 0;
}

void
free_afxdp_buf(struct dp_packet *p)
{
    struct dp_packet_afxdp *xpacket;

    xpacket = CONTAINER_OF(p, struct dp_packet_afxdp, packet);
    if (xpacket->mpool) {
        /* dp_packet_base() is the frame start: set so at receive time, and
         * an AF_XDP packet is never reallocated. */
        umem_pool_push(xpacket->mpool, dp_packet_base(p));
        afxdp_xpacket_release(xpacket);
    }
    /* Otherwise a TX ring holds the frame: zero-copy forward. */
}

/* Sending. */

/* dp_packet_delete_batch(), with the frames of AF_XDP packets given back
 * inline rather than through a call of free_afxdp_buf() per packet: after a
 * copy, all the packets of a batch from an afxdp port are. */
static void
afxdp_delete_batch(struct dp_packet_batch *batch)
{
    struct dp_packet *pkt;

    DP_PACKET_BATCH_FOR_EACH (i, pkt, batch) {
        if (OVS_LIKELY(pkt->source == DPBUF_AFXDP)) {
            struct dp_packet_afxdp *xpacket;

            xpacket = CONTAINER_OF(pkt, struct dp_packet_afxdp, packet);
            if (xpacket->mpool) {
                umem_pool_push(xpacket->mpool, dp_packet_base(pkt));
                afxdp_xpacket_release(xpacket);
            }
        } else {
            dp_packet_delete(pkt);
        }
    }
    dp_packet_batch_init(batch);
}

/* Returns a completed TX frame to where it belongs.  Frames from this
 * queue's TX slice go to its TX pool, which we own since we hold the TX
 * lock; frames of a zero-copy forward go back to the RX pool they came
 * from. */
static void
afxdp_return_frame(struct xsk_socket_info *xsk, char *frame)
{
    if (frame >= xsk->tx_frames_start && frame < xsk->tx_frames_end) {
        umem_pool_push(&xsk->tx_pool, frame);
        return;
    }

    struct afxdp_umem *umem = xsk->umem;
    size_t slot = ((frame - umem->area) >> AFXDP_FRAME_SHIFT)
                  / umem->slice_frames;
    struct xsk_socket_info *owner = (slot < umem->n_slots
                                     ? umem->slots[slot] : NULL);

    if (owner) {
        void *frames[1] = { frame };

        umem_pool_give_back(&owner->rx_pool, frames, 1);
    } else {
        /* The owner left; the UMEM is retired and goes with its last
         * user, frames and all. */
        COVERAGE_INC(afxdp_tx_orphan);
    }
}

/* Reaps the completion ring: gives the frames the kernel is done with back
 * to where they belong.  Returns the number of frames reaped. */
static uint32_t
afxdp_complete_tx(struct xsk_socket_info *xsk)
{
    uint32_t n, idx, total = 0;

    while (xsk->outstanding_tx) {
        n = xsk_ring_cons__peek(&xsk->comp, AFXDP_COMP_BATCH, &idx);
        if (!n) {
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t addr = *xsk_ring_cons__comp_addr(&xsk->comp, idx + i);

            afxdp_return_frame(xsk, xsk->umem->area
                                    + (addr & ~AFXDP_FRAME_MASK));
        }
        afxdp_cons_publish(&xsk->comp);
        xsk->outstanding_tx -= MIN(n, xsk->outstanding_tx);
        total += n;
        if (n < AFXDP_COMP_BATCH) {
            break;
        }
    }
    return total;
}

/* Whether the TX ring of 'xsk' holds descriptors that the kernel has not
 * taken yet.  Both indexes are in memory shared with the kernel, so any
 * thread may ask. */
static inline bool
afxdp_tx_ring_pending(const struct xsk_socket_info *xsk)
{
    return (__atomic_load_n(xsk->tx.producer, __ATOMIC_ACQUIRE)
            != __atomic_load_n(xsk->tx.consumer, __ATOMIC_ACQUIRE));
}

/* Whether the completion ring of 'xsk' holds frames not reaped yet. */
static inline bool
afxdp_comp_ring_pending(const struct xsk_socket_info *xsk)
{
    return (__atomic_load_n(xsk->comp.producer, __ATOMIC_ACQUIRE)
            != __atomic_load_n(xsk->comp.consumer, __ATOMIC_ACQUIRE));
}

/* Kicks per call of afxdp_kick_tx() at most: in copy mode each one moves up
 * to the kernel's budget per call (32 descriptors by default), so a few are
 * enough to drain what a batch adds and some backlog.  The rest is left to
 * the next batch or to afxdp_tx_poll(), so that one call never holds the
 * thread for long. */
#define AFXDP_KICK_MAX 8

/* Tells the kernel to transmit what the TX ring holds.
 *
 * In copy mode (veth, generic XDP, any driver without zero-copy) the kernel
 * reads the TX ring only inside sendto(), synchronously, and leaves
 * descriptors in it when it stops early: after its budget per call, when the
 * completion ring has no room (it reserves a completion slot per packet), or
 * when the device's queue is stopped; all three answer EAGAIN.  Nothing else
 * will move those descriptors, so kick again for as long as the kernel makes
 * progress, reaping completions when it makes none, and leave what is still
 * there to afxdp_tx_poll().  A kick answered EBUSY means that the device
 * dropped a packet and the kernel stopped after it.
 *
 * With zero-copy the driver sends from its own context and sendto() only
 * wakes it up, which the ring's need_wakeup flag says when to do.  Without
 * 'force', the kick also honours the flag in copy mode (where the kernel
 * never clears it) and always happens when a backlog builds up. */
static void
afxdp_kick_tx(struct xsk_socket_info *xsk, bool force)
{
    if (!force && xsk->need_wakeup && !xsk_ring_prod__needs_wakeup(&xsk->tx)
        && xsk->outstanding_tx < AFXDP_RING_SIZE / 4 * 3) {
        return;
    }

    int fd = xsk->fd;
    /* The TX ring's consumer index as the last EAGAIN left it, to tell
     * whether the next kick made progress.  It is not read before the
     * first kick, which nearly always empties the ring, because the line
     * is one the kernel writes (a cache miss per batch): a first EAGAIN
     * counts as progress, which at worst costs one more kick. */
    uint32_t before = 0;

    for (int i = 0; i < AFXDP_KICK_MAX; i++) {
        COVERAGE_INC(afxdp_tx_kick);
        afxdp_count(xsk, AFXDP_TX_KICKS, 1);
        if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0
            || xsk->umem->zero_copy) {
            /* Copy mode: the kernel emptied the ring.  Zero-copy: the
             * driver is awake and takes it from here. */
            return;
        }

        int error = errno;

        if (error == EBUSY) {
            COVERAGE_INC(afxdp_tx_dev_drop);
            afxdp_count(xsk, AFXDP_TX_DEV_DROP, 1);
        } else if (error == EAGAIN) {
            uint32_t now = __atomic_load_n(xsk->tx.consumer,
                                           __ATOMIC_ACQUIRE);

            if (i && now == before && !afxdp_complete_tx(xsk)) {
                /* No progress, and no completion slot freed: the device's
                 * queue is stopped, or packets are still in flight. */
                break;
            }
            before = now;
        } else if (error != EINTR) {
            afxdp_count(xsk, AFXDP_TX_KICK_ERRORS, 1);
            if (error != ENOBUFS && error != ENETDOWN && error != ENXIO) {
                VLOG_WARN_RL(&rl, "%s: AF_XDP transmit kick failed on queue "
                             "%d: %s", netdev_get_name(xsk->netdev),
                             xsk->qid, ovs_strerror(error));
            }
            return;
        }
        if (!afxdp_tx_ring_pending(xsk)) {
            return;
        }
    }
    COVERAGE_INC(afxdp_tx_kick_again);
    afxdp_count(xsk, AFXDP_TX_KICK_AGAIN, 1);
}

/* Called at each poll of an RX queue by the thread polling it, to keep the
 * TX queue of the same number moving when the send path has gone quiet.
 *
 * The send path kicks the kernel and reaps completions only when it has
 * packets to send.  Without this, what a kick left in the TX ring (see
 * afxdp_kick_tx()) would wait for the next packet to that port: a TCP
 * sender whose last segments sit there sends nothing new until its
 * retransmission timer fires, which under CPU contention ended bulk
 * transfers.  Frames would also stay in the completion ring, which with a
 * shared UMEM holds the frames another port receives into.
 *
 * 'tx_seq' tells whether the send path ran since the previous poll; while
 * it runs it does this work itself, and nothing is done here.  When it did
 * not, and the rings hold work, this takes the TX lock if it is free: the
 * send path always takes it, so that this thread may stand in for it.
 *
 * The rings' indexes are in memory the kernel writes, four cache lines that
 * the kernel's work on this CPU evicts between two polls: reading them at
 * every poll of a port that transmits nothing cost more than receiving a
 * packet (a fifth of netdev_afxdp_rxq_recv()'s samples in a profile).  When
 * every descriptor the send path posted was reaped ('outstanding_tx' is 0),
 * both rings are empty and nothing is read.  A stale 0 from a send path
 * running on another thread only delays the check to a later poll, as a
 * send path that goes quiet stores its last value once and for all. */
static void
afxdp_tx_poll(struct netdev_linux *dev, struct xsk_socket_info *xsk)
{
    unsigned int seq;

    atomic_read_relaxed(&xsk->tx_seq, &seq);
    if (seq != xsk->tx_seq_seen) {
        xsk->tx_seq_seen = seq;
    } else if (OVS_UNLIKELY(AFXDP_READ_ONCE(xsk->outstanding_tx))
               && (afxdp_tx_ring_pending(xsk)
                   || afxdp_comp_ring_pending(xsk))
               && dev->tx_locks
               && !ovs_spin_trylock(&dev->tx_locks[xsk->qid].lock)) {
        if (afxdp_complete_tx(xsk)) {
            afxdp_count(xsk, AFXDP_TX_POLL_REAPS, 1);
        }
        if (afxdp_tx_ring_pending(xsk)) {
            afxdp_count(xsk, AFXDP_TX_POLL_KICKS, 1);
            afxdp_kick_tx(xsk, !xsk->umem->zero_copy);
        }
        ovs_spin_unlock(&dev->tx_locks[xsk->qid].lock);
    } else {
        return;
    }

    /* A non-PMD port is polled by the main thread, which sleeps until its
     * socket has something to receive: have it come back soon while work
     * is left. */
    if (!netdev_is_pmd(&dev->up)
        && (afxdp_tx_ring_pending(xsk) || afxdp_comp_ring_pending(xsk))) {
        poll_timer_wait(1);
    }
}

/* Copies 'size' bytes of packet data from 'data' into the TX frame 'frame'.
 *
 * The callers have checked that 'size' is at most a frame, and knowing that
 * bound GCC inlines the copy as "rep movsq", whose start-up alone costs more
 * than copying a 64-byte packet: the instruction after it took 86% of the
 * samples in netdev_afxdp_batch_send() in a profile.  The C library's
 * memcpy() copies a small packet in a few vector moves.  The empty asm
 * hides the bound from the compiler, so that memcpy() is called. */
static inline void
afxdp_copy_to_frame(void *frame, const void *data, size_t size)
{
    asm("" : "+r" (size));
    memcpy(frame, data, size);
}

/* Places 'pkt' in the TX ring.  Returns the number of descriptors used, or
 * 0 if the packet could not be placed, with the counter of the reason in
 * '*why'. */
static uint32_t
afxdp_tx_one(struct xsk_socket_info *xsk, struct dp_packet *pkt, bool *zc,
             enum afxdp_queue_counter *why)
{
    struct afxdp_umem *umem = xsk->umem;
    uint32_t size = dp_packet_size(pkt);
    uint32_t idx;

    if (pkt->source == DPBUF_AFXDP) {
        struct dp_packet_afxdp *xpacket;

        xpacket = CONTAINER_OF(pkt, struct dp_packet_afxdp, packet);
        if (xpacket->mpool && afxdp_umem_contains(umem, pkt)) {
            /* Same UMEM: post the frame itself. */
            if (!xsk_ring_prod__reserve(&xsk->tx, 1, &idx)) {
                *why = AFXDP_TX_RING_FULL;
                return 0;
            }
            struct xdp_desc *d = xsk_ring_prod__tx_desc(&xsk->tx, idx);

            d->addr = (char *) dp_packet_data(pkt) - umem->area;
            d->len = size;
            d->options = 0;
            /* The ring owns the frame now. */
            afxdp_xpacket_release(xpacket);
            *zc = true;
            return 1;
        }
    }

    uint32_t n_frames = DIV_ROUND_UP(size, AFXDP_FRAME_SIZE);
    void *frames[AFXDP_MAX_FRAGS];

    if (OVS_UNLIKELY(n_frames > 1)) {
        if (!xsk->multi_buffer || n_frames > AFXDP_MAX_FRAGS) {
            COVERAGE_INC(afxdp_tx_too_big);
            *why = AFXDP_TX_BAD_SIZE;
            return 0;
        }
    } else if (!n_frames) {
        *why = AFXDP_TX_BAD_SIZE;
        return 0;
    }

    /* The TX pool only refills from the completion ring, which the caller
     * drains. */
    if (umem_pool_count(&xsk->tx_pool) < n_frames) {
        *why = AFXDP_TX_NO_FRAME;
        return 0;
    }
    umem_pool_pop_n(&xsk->tx_pool, frames, n_frames);
    if (!xsk_ring_prod__reserve(&xsk->tx, n_frames, &idx)) {
        for (uint32_t i = 0; i < n_frames; i++) {
            umem_pool_push(&xsk->tx_pool, frames[i]);
        }
        *why = AFXDP_TX_RING_FULL;
        return 0;
    }

    const char *data = dp_packet_data(pkt);
    for (uint32_t i = 0; i < n_frames; i++) {
        struct xdp_desc *d = xsk_ring_prod__tx_desc(&xsk->tx, idx + i);
        uint32_t len = MIN(size, AFXDP_FRAME_SIZE);

        afxdp_copy_to_frame(frames[i], data, len);
        d->addr = (char *) frames[i] - umem->area;
        d->len = len;
        d->options = i + 1 < n_frames ? XDP_PKT_CONTD : 0;
        data += len;
        size -= len;
    }
    *zc = false;
    return n_frames;
}

/* Posts 'pkts[0]' to 'pkts[n - 1]' in the TX ring of 'xsk', each in one
 * descriptor, for as long as they fit in a frame and there are ring slots and
 * TX frames for them, with one ring reservation and one submission for all.
 * Returns the number of packets posted, adding the zero-copy forwards, the
 * copies and, of those, the AF_XDP packets of another UMEM to '*n_zc',
 * '*n_copies' and '*n_other'. */
static size_t
afxdp_tx_burst(struct xsk_socket_info *xsk, struct dp_packet **pkts,
               size_t n, uint64_t *n_zc, uint64_t *n_copies,
               uint64_t *n_other)
{
    struct afxdp_umem *umem = xsk->umem;
    struct umem_pool *pool = &xsk->tx_pool;
    uint32_t idx;
    size_t i;

    n = MIN(n, xsk_prod_nb_free(&xsk->tx, n));
    if (!n || !xsk_ring_prod__reserve(&xsk->tx, n, &idx)) {
        return 0;
    }

    for (i = 0; i < n; i++) {
        struct dp_packet *pkt = pkts[i];
        struct xdp_desc *d = xsk_ring_prod__tx_desc(&xsk->tx, idx + i);
        uint32_t size = dp_packet_size(pkt);

        if (pkt->source == DPBUF_AFXDP) {
            struct dp_packet_afxdp *xpacket;

            xpacket = CONTAINER_OF(pkt, struct dp_packet_afxdp, packet);
            if (xpacket->mpool && afxdp_umem_contains(umem, pkt)) {
                /* Same UMEM: post the frame itself. */
                d->addr = (char *) dp_packet_data(pkt) - umem->area;
                d->len = size;
                d->options = 0;
                /* The ring owns the frame now. */
                afxdp_xpacket_release(xpacket);
                ++*n_zc;
                continue;
            }
        }

        if (OVS_UNLIKELY(size - 1 >= AFXDP_FRAME_SIZE || !pool->n)) {
            /* Empty, or larger than a frame, or no frame left. */
            break;
        }

        char *frame = pool->frames[--pool->n];

        afxdp_copy_to_frame(frame, dp_packet_data(pkt), size);
        d->addr = frame - umem->area;
        d->len = size;
        d->options = 0;
        ++*n_copies;
        *n_other += pkt->source == DPBUF_AFXDP;
    }

    /* Hand back the slots reserved for packets after the one that stopped
     * the burst: libxdp has no call for this, and 'cached_prod' is only
     * ours until the submission publishes it. */
    xsk->tx.cached_prod -= n - i;
    afxdp_prod_publish(&xsk->tx);
    xsk->outstanding_tx += i;
    return i;
}

int
netdev_afxdp_batch_send(struct netdev *netdev, int qid,
                        struct dp_packet_batch *batch,
                        bool concurrent_txq OVS_UNUSED)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    int n_txq = netdev_n_txq(netdev);
    struct xsk_socket_info *xsk;
    uint64_t n_zc = 0, n_copies = 0, n_other = 0;
    struct dp_packet *pkt;

    if (OVS_UNLIKELY(!n_txq || !dev->xsks)) {
        dp_packet_delete_batch(batch, true);
        return 0;
    }

    qid %= n_txq;
    /* Taken even when dpif-netdev does not share the queue between threads
     * ('concurrent_txq' false): the thread that polls the RX queue of the
     * same number may stand in for us when we go quiet (afxdp_tx_poll()).
     * Uncontended, it costs an atomic operation per batch. */
    ovs_spin_lock(&dev->tx_locks[qid].lock);
    xsk = dev->xsks[qid];

    unsigned int seq;

    atomic_read_relaxed(&xsk->tx_seq, &seq);
    atomic_store_relaxed(&xsk->tx_seq, seq + 1);

    size_t n_pkts = dp_packet_batch_size(batch);

    /* Reap what the kernel sent since last time once there is a batch of
     * it to reap, or when this batch may need the TX frames.  Reading the
     * completion ring's producer index misses the cache at nearly every
     * batch (the kernel's transmit on this CPU writes it), and batches are
     * small when the thread keeps up: once per AFXDP_COMP_BATCH frames
     * pays it for many packets at once.  The completion ring has room for
     * every descriptor the TX ring can hold, so a kick never waits for
     * room that this leaves unreaped; what is left when the port goes
     * quiet is reaped by afxdp_tx_poll(). */
    if (xsk->outstanding_tx >= AFXDP_COMP_BATCH
        || umem_pool_count(&xsk->tx_pool) < n_pkts) {
        afxdp_complete_tx(xsk);
    }

    for (size_t i = 0; i < n_pkts; ) {
        i += afxdp_tx_burst(xsk, &batch->packets[i], n_pkts - i,
                            &n_zc, &n_copies, &n_other);
        if (i == n_pkts) {
            break;
        }

        /* The burst stopped at a packet that needs several frames, or for
         * want of a ring slot or a TX frame: that packet goes alone, after
         * a kick and a reap if it has to. */
        enum afxdp_queue_counter why;
        bool zc = false;

        pkt = batch->packets[i++];
        uint32_t n = afxdp_tx_one(xsk, pkt, &zc, &why);
        if (OVS_UNLIKELY(!n) && why != AFXDP_TX_BAD_SIZE) {
            afxdp_kick_tx(xsk, false);
            afxdp_complete_tx(xsk);
            n = afxdp_tx_one(xsk, pkt, &zc, &why);
        }
        if (OVS_UNLIKELY(!n)) {
            COVERAGE_INC(afxdp_tx_drop);
            afxdp_count(xsk, why, 1);
            continue;
        }
        afxdp_prod_publish(&xsk->tx);
        xsk->outstanding_tx += n;
        if (zc) {
            n_zc++;
        } else {
            n_copies++;
            n_other += pkt->source == DPBUF_AFXDP;
        }
    }

    /* Free the packets now, while what the loop above read of them is in
     * the cache: the kick runs the kernel's transmit (and, on a veth, the
     * receive of its peer) on this CPU, after which reading each packet's
     * source missed the cache (a fifth of this function's samples in a
     * profile).  Their data is in the TX frames or, forwarded without a
     * copy, in the TX ring already. */
    afxdp_delete_batch(batch);
    afxdp_kick_tx(xsk, false);

    if (n_zc) {
        COVERAGE_ADD(afxdp_tx_zero_copy, n_zc);
        afxdp_count(xsk, AFXDP_TX_ZC, n_zc);
    }
    if (n_copies) {
        COVERAGE_ADD(afxdp_tx_copy, n_copies);
        afxdp_count(xsk, AFXDP_TX_COPY, n_copies);
        if (n_copies > n_other) {
            afxdp_count(xsk, AFXDP_TX_COPY_NOT_UMEM, n_copies - n_other);
        }
        if (n_other) {
            afxdp_count(xsk, AFXDP_TX_COPY_OTHER_UMEM, n_other);
        }
    }

    ovs_spin_unlock(&dev->tx_locks[qid].lock);
    return 0;
}
