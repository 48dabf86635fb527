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

/* The AF_XDP sockets of the netdev and what they stand on: UMEMs (private
 * to a queue or shared by a umem-group) and their slices, the sockets and
 * their four rings, and the XDP program that feeds them, assembled here and
 * attached and detached through libxdp. */

#include <config.h>

#include "netdev-afxdp-private.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_xdp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "coverage.h"
#include "dp-packet.h"
#include "netdev-provider.h"
#include "openvswitch/shash.h"
#include "openvswitch/vlog.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp_xsk);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

COVERAGE_DEFINE(afxdp_bind_busy);       /* Queue still held by an old XSK. */
COVERAGE_DEFINE(afxdp_rx_closed_drop);  /* Received, never polled: closed. */

/* Queue slices in a UMEM shared by a group of ports. */
#define AFXDP_GROUP_SLOTS 4

/* Retry binding a socket for up to this long when an XSK that was just
 * closed still holds the queue: the kernel releases it from a workqueue. */
#define AFXDP_BIND_RETRY_MS 2000

/* Socket options for busy polling (Linux 5.11), for older headers. */
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

/* The UMEMs of umem-groups that new members may still join, by group
 * name. */
static struct shash umem_groups OVS_GUARDED_BY(afxdp_mutex)
    = SHASH_INITIALIZER(&umem_groups);

/* The XDP program.
 *
 *     r2 = ctx->rx_queue_index;
 *     return bpf_redirect_map(&xsks_map, r2, XDP_PASS);
 *
 * The flags argument of bpf_redirect_map() is the action when the map has
 * no socket for the queue (Linux 5.3), so frames arriving before a socket is
 * bound, or on a queue without one, go to the kernel stack.  The program is
 * this small on purpose: assembling it here spares a BPF object file to
 * build and install, and libxdp takes it by file descriptor. */
static int
afxdp_load_prog(int xsks_map_fd, bool frags)
{
    const struct bpf_insn insns[] = {
        /* r2 = *(u32 *)(r1 + offsetof(struct xdp_md, rx_queue_index)) */
        { .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2,
          .src_reg = BPF_REG_1,
          .off = offsetof(struct xdp_md, rx_queue_index) },
        /* r1 = xsks_map (a 64-bit immediate takes two instructions) */
        { .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
          .src_reg = BPF_PSEUDO_MAP_FD, .imm = xsks_map_fd },
        { .code = 0 },
        /* r3 = XDP_PASS */
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3,
          .imm = XDP_PASS },
        { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map },
        { .code = BPF_JMP | BPF_EXIT },
    };
    LIBBPF_OPTS(bpf_prog_load_opts, opts,
                .prog_flags = frags ? BPF_F_XDP_HAS_FRAGS : 0);

    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "ovs_afxdp", "Apache-2.0",
                           insns, ARRAY_SIZE(insns), &opts);
    return fd < 0 ? -errno : fd;
}

/* Probes for AF_XDP multi-buffer: a frags-aware XDP program must load, and
 * bind() must know XDP_USE_SG.  bind() checks its flags before it looks up
 * the device, so binding to ifindex 0 fails with ENODEV on a kernel that
 * knows the flag and with EINVAL on one that does not. */
bool
afxdp_probe_multi_buffer(void)
{
    int map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "ovs_xsks_probe",
                                sizeof(int), sizeof(int), 1, NULL);
    if (map_fd < 0) {
        return false;
    }
    int prog_fd = afxdp_load_prog(map_fd, true);
    close(map_fd);
    if (prog_fd < 0) {
        VLOG_DBG("kernel rejects frags-aware XDP programs (%s): "
                 "no AF_XDP multi-buffer", ovs_strerror(-prog_fd));
        return false;
    }
    close(prog_fd);

    int sock = socket(AF_XDP, SOCK_RAW, 0);
    if (sock < 0) {
        return false;
    }
    struct sockaddr_xdp sxdp = {
        .sxdp_family = AF_XDP,
        .sxdp_flags = XDP_USE_SG,
        .sxdp_ifindex = 0,
    };
    int error = bind(sock, (struct sockaddr *) &sxdp, sizeof sxdp) ? errno : 0;
    close(sock);
    if (error == EINVAL) {
        VLOG_DBG("kernel does not know XDP_USE_SG: no AF_XDP multi-buffer");
        return false;
    }
    return true;
}

/* UMEMs. */

static void
afxdp_umem_free(struct afxdp_umem *umem)
    OVS_REQUIRES(afxdp_mutex)
{
    if (umem->group) {
        shash_find_and_delete(&umem_groups, umem->group);
    }
    if (umem->xumem) {
        int error = xsk_umem__delete(umem->xumem);
        if (error) {
            VLOG_ERR("failed to delete UMEM: %s", ovs_strerror(-error));
        }
    }
    if (umem->area) {
        munmap(umem->area, umem->size);
    }
    if (umem->xpackets) {
        munmap(umem->xpackets, umem->xpackets_size);
    }
    free(umem->slots);
    free(umem->group);
    free(umem);
}

static struct afxdp_umem *
afxdp_umem_create(unsigned int slice_frames, unsigned int n_slots,
                  char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_umem *umem = xzalloc(sizeof *umem);
    const struct xsk_umem_config config = {
        .fill_size = AFXDP_RING_SIZE,
        .comp_size = AFXDP_RING_SIZE,
        .frame_size = AFXDP_FRAME_SIZE,
        .frame_headroom = 0,
        .flags = 0,
    };
    size_t n_frames = (size_t) slice_frames * n_slots;
    int error;

    umem->slice_frames = slice_frames;
    umem->n_slots = n_slots;
    umem->slots = xcalloc(n_slots, sizeof *umem->slots);
    umem->size = n_frames * AFXDP_FRAME_SIZE;
    umem->area = mmap(NULL, umem->size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (umem->area == MAP_FAILED) {
        umem->area = NULL;
        *errp = xasprintf("cannot map a %"PRIuSIZE"-byte UMEM: %s",
                          umem->size, ovs_strerror(errno));
        goto error;
    }

    error = xsk_umem__create(&umem->xumem, umem->area, umem->size,
                             &umem->fill0, &umem->comp0, &config);
    if (error) {
        umem->xumem = NULL;
        *errp = xasprintf("cannot register a %"PRIuSIZE"-byte UMEM: %s",
                          umem->size, ovs_strerror(-error));
        goto error;
    }

    /* The packet descriptors, one per frame, kept out of the frames.  What
     * never changes for a frame's packet (its base, the frame, its size and
     * its source) is set here once, so that receiving only sets what a
     * packet's life changes (see afxdp_rx_packet_init()).
     *
     * They take megabytes (9 MB for the default 16384 frames), mapped here
     * rather than malloc()'ed: glibc serves a block that big with mmap(),
     * and freeing it raises glibc's dynamic mmap threshold to its size, so
     * that the next port's descriptors came from the heap and left a free
     * chunk of megabytes there when freed.  Each small realloc() that then
     * split that chunk wrote over all of it when MALLOC_PERTURB_ is set, as
     * in OVS's tests: building an OpenFlow table features reply, which
     * grows its buffer 64 bytes at a time, took the main thread over 30
     * seconds on a loaded machine. */
    umem->xpackets_size = ROUND_UP(n_frames * sizeof *umem->xpackets,
                                   get_page_size());
    umem->xpackets = mmap(NULL, umem->xpackets_size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (umem->xpackets == MAP_FAILED) {
        umem->xpackets = NULL;
        *errp = xasprintf("cannot map the packet descriptors of a "
                          "%"PRIuSIZE"-frame UMEM: %s",
                          n_frames, ovs_strerror(errno));
        goto error;
    }
    for (size_t i = 0; i < n_frames; i++) {
        struct dp_packet_afxdp *xp = &umem->xpackets[i].xp;
        char *frame = umem->area + i * AFXDP_FRAME_SIZE;

        xp->mpool = NULL;
        dp_packet_use_afxdp(&xp->packet, frame + XDP_PACKET_HEADROOM,
                            AFXDP_FRAME_SIZE, XDP_PACKET_HEADROOM);
    }
    return umem;

error:
    afxdp_umem_free(umem);
    return NULL;
}

/* Finds or creates the UMEM for a new queue of a port in 'group' (NULL for
 * a private UMEM) and reserves a slice in it. */
static struct afxdp_umem *
afxdp_umem_get(const char *group, unsigned int slice_frames, bool zero_copy,
               unsigned int *slotp, char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_umem *umem = group ? shash_find_data(&umem_groups, group)
                                    : NULL;

    if (umem) {
        if (umem->anchor && umem->zero_copy != zero_copy) {
            /* The kernel gives later sockets the mode of the first. */
            *errp = xasprintf("the sockets of umem-group %s are in %s mode",
                              group, umem->zero_copy ? "zero-copy" : "copy");
            return NULL;
        }
        if (umem->slice_frames != slice_frames) {
            *errp = xasprintf("umem-group %s uses umem-frames=%u, not %u",
                              group, umem->slice_frames, slice_frames);
            return NULL;
        }
        if (umem->next_slot >= umem->n_slots) {
            *errp = xasprintf("umem-group %s has no room for another queue "
                              "(%d queues per group)", group,
                              AFXDP_GROUP_SLOTS);
            return NULL;
        }
    } else {
        umem = afxdp_umem_create(slice_frames,
                                 group ? AFXDP_GROUP_SLOTS : 1, errp);
        if (!umem) {
            return NULL;
        }
        if (group) {
            umem->group = xstrdup(group);
            shash_add(&umem_groups, group, umem);
        }
    }

    /* Slices are not reused: a frame of a former member may still sit in
     * another member's TX ring, and would come back to the new owner of its
     * slice as a duplicate.  The UMEM is retired instead (see
     * afxdp_umem_put()). */
    *slotp = umem->next_slot++;
    umem->n_users++;
    return umem;
}

/* The anchor of 'umem', the socket that registered it, has been deleted
 * while other sockets still use the UMEM.  libxdp keeps the anchor's file
 * descriptor open as the UMEM's until xsk_umem__delete(), which leaves the
 * anchor bound to its queue: the port it belonged to could not bind that
 * queue again until all the other members have left too, and when they
 * reconfigure in the same pass, after it, they never would (the bind gives
 * up with EBUSY and the port is removed).  The kernel does not need the
 * anchor once the others are bound, since each of them holds the UMEM, so
 * put an unbound AF_XDP socket in its place: dup2() closes the anchor, whose
 * queue the kernel then frees, and xsk_umem__delete() later closes the
 * placeholder instead.  libxdp unmapped the anchor's rings already, in
 * xsk_socket__delete(). */
static void
afxdp_umem_release_anchor(struct afxdp_umem *umem)
{
    int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

    if (fd < 0 || dup2(fd, xsk_umem__fd(umem->xumem)) < 0) {
        VLOG_WARN("cannot release the anchor socket of a shared UMEM (%s): "
                  "its queue stays bound until the UMEM's last member "
                  "leaves", ovs_strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
    umem->anchor = NULL;
}

/* Releases the slice of 'xsk' in its UMEM, whose socket is already gone.
 * 'bound' is false if the socket never got bound, in which case no frame of
 * the slice ever left it. */
static void
afxdp_umem_put(struct xsk_socket_info *xsk, bool bound)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_umem *umem = xsk->umem;

    umem->slots[xsk->slot] = NULL;
    umem->n_users--;

    if (!bound) {
        if (xsk->slot + 1 == umem->next_slot) {
            umem->next_slot--;
        }
    } else if (umem->group && (umem->n_users || xsk == umem->anchor)) {
        /* A member leaves a live group.  Retire the UMEM: its slices cannot
         * be reused.  The remaining members move to a fresh UMEM at their
         * next reconfiguration, which this requests. */
        shash_find_and_delete(&umem_groups, umem->group);
        free(umem->group);
        umem->group = NULL;
        for (unsigned int i = 0; i < umem->n_slots; i++) {
            if (umem->slots[i]) {
                netdev_request_reconfigure(umem->slots[i]->netdev);
            }
        }
    }

    if (bound && xsk == umem->anchor && umem->n_users) {
        afxdp_umem_release_anchor(umem);
    }
    if (!umem->n_users) {
        afxdp_umem_free(umem);
    }
}

/* Sockets. */

/* Binds a socket for queue 'qid' of 'netdev', retrying while an XSK closed a
 * moment ago still holds the queue. */
static int
xsk_bind(struct xsk_socket_info *xsk, const char *name, int qid,
         const struct xsk_socket_config *cfg)
{
    long long int deadline = time_msec() + AFXDP_BIND_RETRY_MS;
    struct afxdp_umem *umem = xsk->umem;
    /* The first socket of a UMEM uses the rings libxdp created with the
     * UMEM.  Passing libxdp the very structures it filled in then keeps it
     * from unmapping those rings when the bind fails, so that we can try
     * again; we take a copy once the socket is up. */
    bool first = !umem->anchor;
    struct xsk_ring_prod *fill = first ? &umem->fill0 : &xsk->fill;
    struct xsk_ring_cons *comp = first ? &umem->comp0 : &xsk->comp;
    int error;

    for (;;) {
        error = xsk_socket__create_shared(&xsk->xsk, name, qid, umem->xumem,
                                          &xsk->rx, &xsk->tx, fill, comp,
                                          cfg);
        if (error != -EBUSY || time_msec() >= deadline) {
            break;
        }
        COVERAGE_INC(afxdp_bind_busy);
        xnanosleep(10 * 1000 * 1000);
    }
    if (error) {
        xsk->xsk = NULL;
    } else if (first) {
        xsk->fill = umem->fill0;
        xsk->comp = umem->comp0;
    }
    return -error;
}

/* Asks the kernel to let the receive of 'xsk' poll the device's NAPI
 * instance itself (busy polling, see "options:busy-poll-usecs" in
 * Documentation/howto/afxdp-netdev.rst): SO_PREFER_BUSY_POLL, so that a
 * device configured to defer its interrupts (napi_defer_hard_irqs,
 * gro_flush_timeout) leaves its receive work to our polls, SO_BUSY_POLL
 * for how long a blocking poll may spin (ours never block, but the kernel
 * busy polls a socket only with it non-zero) and SO_BUSY_POLL_BUDGET for
 * the packets of one NAPI poll.  Returns 0 or an errno value: a kernel
 * before 5.11 lacks the options, and values above the sysctls
 * net.core.busy_read and net.core.busy_poll_budget need CAP_NET_ADMIN. */
static int
xsk_set_busy_poll(const struct xsk_socket_info *xsk,
                  const struct afxdp_dev *ad)
{
    const struct {
        int opt;
        int value;
    } opts[] = {
        { SO_PREFER_BUSY_POLL, 1 },
        { SO_BUSY_POLL, ad->applied.busy_poll_usecs },
        { SO_BUSY_POLL_BUDGET, ad->applied.busy_poll_budget },
    };

    for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
        if (setsockopt(xsk->fd, SOL_SOCKET, opts[i].opt, &opts[i].value,
                       sizeof opts[i].value)) {
            return errno;
        }
    }
    return 0;
}

/* Creates the socket of queue 'qid'.  'mode' is the socket mode to try:
 * OVS_AF_XDP_MODE_NATIVE_ZC for zero-copy, anything else for copy mode. */
static struct xsk_socket_info *
xsk_create(struct netdev_linux *dev, struct afxdp_dev *ad, int qid,
           enum afxdp_mode mode, int *errorp, char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    const char *name = netdev_get_name(&dev->up);
    struct xsk_socket_info *xsk = xzalloc(sizeof *xsk);
    struct xsk_socket_config cfg;
    unsigned int slot;
    char *msg = NULL;
    int error;

    xsk->netdev = &dev->up;
    xsk->qid = qid;
    xsk->umem = afxdp_umem_get(ad->umem_group, ad->applied.umem_frames,
                               mode == OVS_AF_XDP_MODE_NATIVE_ZC, &slot,
                               &msg);
    if (!xsk->umem) {
        *errp = xasprintf("%s: %s", name, msg);
        free(msg);
        free(xsk);
        *errorp = EINVAL;
        return NULL;
    }
    xsk->slot = slot;

    struct afxdp_umem *umem = xsk->umem;

    memset(&cfg, 0, sizeof cfg);
    cfg.rx_size = AFXDP_RING_SIZE;
    cfg.tx_size = AFXDP_RING_SIZE;
    /* We attach our own program and fill the XSKMAP ourselves. */
    cfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
    cfg.bind_flags = (mode == OVS_AF_XDP_MODE_NATIVE_ZC
                      ? XDP_ZEROCOPY : XDP_COPY);
    if (dev->use_need_wakeup) {
        cfg.bind_flags |= XDP_USE_NEED_WAKEUP;
    }
    if (afxdp_kernel_has_multi_buffer) {
        cfg.bind_flags |= XDP_USE_SG;
    }

    /* libxdp ignores 'bind_flags' for every socket after the first on a
     * UMEM: such sockets inherit the mode of the first one. */
    error = xsk_bind(xsk, name, qid, &cfg);
    if (error && (cfg.bind_flags & XDP_USE_SG)
        && (error == EOPNOTSUPP || error == EINVAL)) {
        /* Zero-copy drivers without multi-buffer support refuse SG. */
        cfg.bind_flags &= ~XDP_USE_SG;
        error = xsk_bind(xsk, name, qid, &cfg);
    }
    if (error) {
        *errp = xasprintf("%s: cannot bind an AF_XDP socket to queue %d "
                          "in %s mode: %s", name, qid,
                          mode == OVS_AF_XDP_MODE_NATIVE_ZC
                          ? "zero-copy" : "copy", ovs_strerror(error));
        *errorp = error;
        afxdp_umem_put(xsk, false);
        free(xsk);
        return NULL;
    }

    if (!umem->anchor) {
        umem->anchor = xsk;
        umem->zero_copy = mode == OVS_AF_XDP_MODE_NATIVE_ZC;
        umem->need_wakeup = dev->use_need_wakeup;
        umem->multi_buffer = (cfg.bind_flags & XDP_USE_SG) != 0;
    }
    umem->slots[slot] = xsk;
    xsk->fd = xsk_socket__fd(xsk->xsk);
    xsk->need_wakeup = umem->need_wakeup;
    xsk->multi_buffer = umem->multi_buffer;
    if (ad->applied.busy_poll_usecs) {
        error = xsk_set_busy_poll(xsk, ad);
        if (error) {
            VLOG_WARN_RL(&rl, "%s: queue %d: busy polling refused by the "
                         "kernel, receiving without: %s", name, qid,
                         ovs_strerror(error));
            ad->busy_poll_in_use = false;
        } else {
            xsk->busy_poll = true;
        }
    }

    /* Hand out the slice: RX frames to the pool that feeds the fill ring,
     * the rest to the TX pool. */
    unsigned int n_rx = ad->applied.umem_frames - AFXDP_TX_FRAMES;
    char *slice = xsk->umem->area
                  + (size_t) slot * ad->applied.umem_frames * AFXDP_FRAME_SIZE;

    umem_pool_init(&xsk->rx_pool, n_rx);
    for (unsigned int i = 0; i < n_rx; i++) {
        umem_pool_push(&xsk->rx_pool, slice + (size_t) i * AFXDP_FRAME_SIZE);
    }
    umem_pool_init(&xsk->tx_pool, AFXDP_TX_FRAMES);
    xsk->tx_frames_start = slice + (size_t) n_rx * AFXDP_FRAME_SIZE;
    xsk->tx_frames_end = xsk->tx_frames_start
                         + (size_t) AFXDP_TX_FRAMES * AFXDP_FRAME_SIZE;
    for (unsigned int i = 0; i < AFXDP_TX_FRAMES; i++) {
        umem_pool_push(&xsk->tx_pool,
                       xsk->tx_frames_start + (size_t) i * AFXDP_FRAME_SIZE);
    }

    /* The hot descriptors: their base is set at each receive, what else
     * never changes is set here, as for the frames' own. */
    xsk->hot = xmalloc_cacheline(AFXDP_HOT_XPACKETS * sizeof *xsk->hot);
    xsk->hot_free = xmalloc(AFXDP_HOT_XPACKETS * sizeof *xsk->hot_free);
    for (unsigned int i = 0; i < AFXDP_HOT_XPACKETS; i++) {
        struct dp_packet_afxdp *xp = &xsk->hot[i].xp;

        xp->mpool = NULL;
        dp_packet_use_afxdp(&xp->packet, slice + XDP_PACKET_HEADROOM,
                            AFXDP_FRAME_SIZE, XDP_PACKET_HEADROOM);
        /* Popped from the top: the first ones go out first. */
        xsk->hot_free[AFXDP_HOT_XPACKETS - 1 - i] = xp;
    }
    xsk->n_hot_free = AFXDP_HOT_XPACKETS;

    return xsk;
}

/* Returns the number of packets in 'xsk''s RX ring, which no one polls any
 * more: a packet is its descriptors up to one without XDP_PKT_CONTD. */
static uint32_t
xsk_rx_unpolled(struct xsk_socket_info *xsk)
{
    uint32_t idx, n, packets = 0;

    n = xsk_ring_cons__peek(&xsk->rx, AFXDP_RING_SIZE, &idx);
    for (uint32_t i = 0; i < n; i++) {
        if (!(xsk_ring_cons__rx_desc(&xsk->rx, idx + i)->options
              & XDP_PKT_CONTD)) {
            packets++;
        }
    }
    xsk_ring_cons__cancel(&xsk->rx, n);
    return packets;
}

static void
xsk_destroy(struct afxdp_dev *ad, struct xsk_socket_info *xsk)
    OVS_REQUIRES(afxdp_mutex)
{
    if (ad->xsks_map_fd >= 0) {
        bpf_map_delete_elem(ad->xsks_map_fd, &xsk->qid);
    }
    /* The datapath stopped polling this queue before the port was deleted
     * or reconfigured (dpif-netdev reloads its PMD threads first): what the
     * kernel put in the ring since then is dropped here, counted. */
    COVERAGE_ADD(afxdp_rx_closed_drop, xsk_rx_unpolled(xsk));
    xsk_socket__delete(xsk->xsk);
    afxdp_umem_put(xsk, true);
    umem_pool_destroy(&xsk->rx_pool);
    umem_pool_destroy(&xsk->tx_pool);
    free_cacheline(xsk->hot);
    free(xsk->hot_free);
    free(xsk);
}

/* XDP program attachment. */

static void
afxdp_detach_prog(struct afxdp_dev *ad)
{
    if (ad->prog) {
        int error = xdp_program__detach(ad->prog, ad->ifindex,
                                        ad->prog_mode, 0);
        if (error) {
            VLOG_INFO("%s: failed to detach XDP program: %s",
                      netdev_get_name(ad->netdev), ovs_strerror(-error));
        }
        xdp_program__close(ad->prog);
        ad->prog = NULL;
    }
    if (ad->xsks_map_fd >= 0) {
        close(ad->xsks_map_fd);
        ad->xsks_map_fd = -1;
    }
}

/* Removes an XDP program of ours that a vswitchd that died without cleaning
 * up left on 'ifindex'; leaves any other program alone. */
static void
afxdp_remove_stale_prog(int ifindex)
{
    struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);

    if (libxdp_get_error(mp) || !mp) {
        return;
    }
    struct xdp_program *main_prog = xdp_multiprog__main_prog(mp);
    if (xdp_multiprog__is_legacy(mp) && main_prog
        && !strcmp(xdp_program__name(main_prog), "ovs_afxdp")) {
        VLOG_INFO("ifindex %d: removing a stale ovs_afxdp XDP program",
                  ifindex);
        xdp_multiprog__detach(mp);
    }
    xdp_multiprog__close(mp);
}

static int
afxdp_attach_prog(struct afxdp_dev *ad, enum xdp_attach_mode mode,
                  int n_queues)
{
    int prog_fd, error;

    ad->xsks_map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "ovs_xsks_map",
                                     sizeof(int), sizeof(int), n_queues,
                                     NULL);
    if (ad->xsks_map_fd < 0) {
        error = errno;
        ad->xsks_map_fd = -1;
        return error;
    }

    prog_fd = afxdp_load_prog(ad->xsks_map_fd, afxdp_kernel_has_multi_buffer);
    if (prog_fd < 0) {
        afxdp_detach_prog(ad);
        return -prog_fd;
    }
    ad->prog = xdp_program__from_fd(prog_fd);
    close(prog_fd);             /* libxdp keeps a duplicate. */
    error = libxdp_get_error(ad->prog);
    if (error) {
        ad->prog = NULL;
        afxdp_detach_prog(ad);
        return -error;
    }

    error = xdp_program__attach(ad->prog, ad->ifindex, mode, 0);
    if (error == -EEXIST || error == -EBUSY) {
        afxdp_remove_stale_prog(ad->ifindex);
        error = xdp_program__attach(ad->prog, ad->ifindex, mode, 0);
    }
    if (error) {
        xdp_program__close(ad->prog);
        ad->prog = NULL;
        afxdp_detach_prog(ad);
        return -error;
    }
    ad->prog_mode = mode;
    return 0;
}

/* Brings up the XDP program and 'n_rxq' sockets on 'dev' in 'mode' (not
 * best-effort).  On failure, leaves nothing behind. */
int
xsk_configure_mode(struct netdev_linux *dev, struct afxdp_dev *ad,
                   enum afxdp_mode mode, int n_rxq, char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    enum xdp_attach_mode attach = (mode == OVS_AF_XDP_MODE_GENERIC
                                   ? XDP_MODE_SKB : XDP_MODE_NATIVE);
    int error;

    error = afxdp_attach_prog(ad, attach, n_rxq);
    if (error) {
        *errp = xasprintf("%s: cannot attach XDP program in %s mode: %s",
                          netdev_get_name(&dev->up),
                          attach == XDP_MODE_SKB ? "generic" : "native",
                          ovs_strerror(error));
        return error;
    }

    dev->xsks = xcalloc(n_rxq, sizeof *dev->xsks);
    for (int i = 0; i < n_rxq; i++) {
        struct xsk_socket_info *xsk;

        xsk = xsk_create(dev, ad, i, mode, &error, errp);
        if (!xsk) {
            goto error;
        }
        dev->xsks[i] = xsk;
        ad->n_bound = i + 1;

        /* Fill the fill ring before the XSKMAP sends packets to the socket:
         * left to the first poll of the queue, which comes only after the
         * datapath has taken the new queue in, the kernel dropped what came
         * meanwhile for want of a frame (rx_dropped and
         * rx_fill_ring_empty_descs moved in "busy polling", on a loaded
         * machine).  No thread polls the queue yet, so this one may act as
         * its owner. */
        afxdp_refill(xsk, false);

        error = xsk_socket__update_xskmap(xsk->xsk, ad->xsks_map_fd);
        if (error) {
            error = -error;
            *errp = xasprintf("%s: cannot add queue %d to the XSKMAP: %s",
                              netdev_get_name(&dev->up), i,
                              ovs_strerror(error));
            goto error;
        }
    }
    ad->multi_buffer = dev->xsks[0]->multi_buffer;
    return 0;

error:
    xsk_destroy_all(dev, ad);
    return error;
}

void
xsk_destroy_all(struct netdev_linux *dev, struct afxdp_dev *ad)
    OVS_REQUIRES(afxdp_mutex)
{
    if (dev->xsks) {
        for (int i = 0; i < ad->n_bound; i++) {
            if (dev->xsks[i]) {
                xsk_destroy(ad, dev->xsks[i]);
            }
        }
        free(dev->xsks);
        dev->xsks = NULL;
    }
    ad->n_bound = 0;
    afxdp_detach_prog(ad);
    ad->multi_buffer = false;
}
