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

/* The AF_XDP netdev ("afxdp" ports): its life cycle, its options and their
 * reconfiguration into sockets, the checks of a device's XDP features and
 * of the MTU, and the fatal-signal hook.
 *
 * The design, and which of the netdev's files does what, is told at the top
 * of netdev-afxdp-private.h. */

#include <config.h>

#include "netdev-afxdp.h"
#include "netdev-afxdp-private.h"

#include <dirent.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "netlink.h"
#include "netlink-socket.h"
#include "netdev-provider.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/vlog.h"
#include "ovs-libbpf-log.h"
#include "ovs-thread.h"
#include "packets.h"
#include "smap.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* options:umem-frames: frames per queue.  The default, 16384 frames or
 * 64 MiB, is what a 10G queue needs to absorb bursts; the minimum keeps the
 * fill ring and the TX ring full at the same time. */
#define AFXDP_UMEM_FRAMES_DEFAULT 16384
#define AFXDP_UMEM_FRAMES_MIN (AFXDP_RING_SIZE + AFXDP_TX_FRAMES)
#define AFXDP_UMEM_FRAMES_MAX (1u << 20)

/* Largest MTU without multi-buffer.  The kernel puts received data
 * XDP_PACKET_HEADROOM bytes into the frame, and drivers that build an skb
 * around an XDP buffer (veth, generic XDP) keep the end of the page for
 * struct skb_shared_info (320 bytes on x86-64).  What is left carries the
 * Ethernet header, a VLAN tag and the payload. */
#define AFXDP_SHINFO_SIZE 320
#define AFXDP_MTU_SINGLE_FRAME (AFXDP_FRAME_SIZE - XDP_PACKET_HEADROOM   \
                                - AFXDP_SHINFO_SIZE - ETH_HEADER_LEN    \
                                - VLAN_HEADER_LEN)

/* Largest MTU with multi-buffer. */
#define AFXDP_MTU_MAX 9000

/* options:busy-poll-budget when not given: one NAPI poll brings at most
 * what one receive takes. */
#define AFXDP_BUSY_POLL_BUDGET_DEFAULT NETDEV_MAX_BURST
#define AFXDP_BUSY_POLL_USECS_MAX 1000000
#define AFXDP_BUSY_POLL_BUDGET_MAX 65535

struct ovs_mutex afxdp_mutex = OVS_MUTEX_INITIALIZER;
struct hmap afxdp_devs OVS_GUARDED_BY(afxdp_mutex)
    = HMAP_INITIALIZER(&afxdp_devs);

bool afxdp_kernel_has_multi_buffer;

static const char *const xdp_mode_names[] = {
    [OVS_AF_XDP_MODE_UNSPEC] = "unspecified",
    [OVS_AF_XDP_MODE_BEST_EFFORT] = "best-effort",
    [OVS_AF_XDP_MODE_NATIVE_ZC] = "native-with-zerocopy",
    [OVS_AF_XDP_MODE_NATIVE] = "native",
    [OVS_AF_XDP_MODE_GENERIC] = "generic",
};

static struct afxdp_dev *
afxdp_dev_lookup(const struct netdev *netdev)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_dev *d;

    HMAP_FOR_EACH_WITH_HASH (d, node, hash_pointer(netdev, 0), &afxdp_devs) {
        if (d->netdev == netdev) {
            return d;
        }
    }
    OVS_NOT_REACHED();
}

/* libxdp and libbpf messages.
 *
 * Both libraries print warnings for situations that are normal here (no
 * bpffs, no permission to load the dispatcher, which makes libxdp fall back
 * to attaching the program alone).  The caller sees and reports every real
 * failure through return values, so their messages go to the log at INFO
 * and DBG only: libxdp's here, libbpf's through the process's libbpf print
 * hook (ovs-libbpf-log.h). */
static void
afxdp_log_valist(enum vlog_level level, const char *prefix,
                 const char *format, va_list args)
{
    if (!vlog_is_enabled(&this_module, level)) {
        return;
    }

    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_cstr(&s, prefix);
    ds_put_format_valist(&s, format, args);
    ds_chomp(&s, '\n');
    vlog(&this_module, level, "%s", ds_cstr(&s));
    ds_destroy(&s);
}

static int
afxdp_libxdp_print(enum libxdp_print_level level, const char *format,
                   va_list args)
{
    afxdp_log_valist(level == LIBXDP_WARN ? VLL_INFO : VLL_DBG, "libxdp: ",
                     format, args);
    return 0;
}

int
netdev_afxdp_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        /* No setrlimit(RLIMIT_MEMLOCK): since Linux 5.11 BPF maps and
         * programs are charged to the memory cgroup, and UMEM pinning has
         * never needed it for root. */
        libxdp_set_print(afxdp_libxdp_print);
        ovs_libbpf_log_init();
        afxdp_kernel_has_multi_buffer = afxdp_probe_multi_buffer();
        unixctl_command_register("netdev-afxdp/show", "[port]", 0, 1,
                                 afxdp_unixctl_show, NULL);
        /* Not INFO: this runs before ovs-vswitchd detaches, and OVS's
         * tests check that nothing unexpected reaches stderr then. */
        VLOG_DBG("AF_XDP multi-buffer (jumbo frames): %s",
                 afxdp_kernel_has_multi_buffer
                 ? "available" : "not available");
        ovsthread_once_done(&once);
    }
    return 0;
}

/* Device XDP features.
 *
 * Since Linux 6.3 the "netdev" generic netlink family tells what a device
 * can do with XDP.  Asking it lets set_config() reject a mode the device
 * cannot do, so that the Interface's error column says why, instead of the
 * failure surfacing later at reconfiguration, where nothing reports it to
 * the database.  The uapi header (linux/netdev.h) is too new for some
 * distributions, hence the local definitions. */
#define AFXDP_GENL_NETDEV_NAME "netdev"
#define AFXDP_NETDEV_CMD_DEV_GET 1
#define AFXDP_NETDEV_A_DEV_IFINDEX 1
#define AFXDP_NETDEV_A_DEV_XDP_FEATURES 3
#define AFXDP_NETDEV_XDP_ACT_BASIC (1 << 0)
#define AFXDP_NETDEV_XDP_ACT_REDIRECT (1 << 1)
#define AFXDP_NETDEV_XDP_ACT_XSK_ZEROCOPY (1 << 3)
#define AFXDP_NETDEV_XDP_ACT_RX_SG (1 << 5)

/* Stores the XDP feature flags of device 'ifindex' in '*features'.  Returns
 * 0 on success, otherwise a positive errno value (e.g. when the kernel is
 * too old to tell). */
static int
afxdp_get_xdp_features(int ifindex, uint64_t *features)
{
    static const struct nl_policy policy[] = {
        [AFXDP_NETDEV_A_DEV_XDP_FEATURES] = { .type = NL_A_U64,
                                              .optional = true },
    };
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    /* nl_lookup_genl_family() caches the family's number (or the lookup
     * error) here. */
    static int family;
    struct ofpbuf request, *reply;
    int error;

    error = nl_lookup_genl_family(AFXDP_GENL_NETDEV_NAME, &family);
    if (error) {
        return error;
    }

    ofpbuf_init(&request, 0);
    nl_msg_put_genlmsghdr(&request, 0, family, NLM_F_REQUEST,
                          AFXDP_NETDEV_CMD_DEV_GET, 1);
    nl_msg_put_u32(&request, AFXDP_NETDEV_A_DEV_IFINDEX, ifindex);
    error = nl_transact(NETLINK_GENERIC, &request, &reply);
    ofpbuf_uninit(&request);
    if (error) {
        return error;
    }

    if (!nl_policy_parse(reply, NLMSG_HDRLEN + GENL_HDRLEN, policy, attrs,
                         ARRAY_SIZE(policy))
        || !attrs[AFXDP_NETDEV_A_DEV_XDP_FEATURES]) {
        error = EPROTO;
    } else {
        *features = nl_attr_get_u64(attrs[AFXDP_NETDEV_A_DEV_XDP_FEATURES]);
    }
    ofpbuf_delete(reply);
    return error;
}

/* Checks that device 'name' can do 'mode'.  Returns 0 if it can, or if the
 * kernel does not say; otherwise EOPNOTSUPP with an explanation in
 * '*errp'. */
static int
afxdp_check_mode(const char *name, enum afxdp_mode mode, char **errp)
{
    int ifindex = if_nametoindex(name);
    uint64_t features;

    if (mode == OVS_AF_XDP_MODE_BEST_EFFORT || mode == OVS_AF_XDP_MODE_GENERIC
        || ifindex <= 0) {
        return 0;
    }
    int error = afxdp_get_xdp_features(ifindex, &features);
    if (error) {
        VLOG_DBG("%s: cannot get XDP features (%s), not checking xdp-mode",
                 name, ovs_strerror(error));
        return 0;
    }
    VLOG_DBG("%s: XDP features %#"PRIx64, name, features);

    uint64_t native = (AFXDP_NETDEV_XDP_ACT_BASIC
                       | AFXDP_NETDEV_XDP_ACT_REDIRECT);
    if ((features & native) != native) {
        *errp = xasprintf("%s: xdp-mode %s: the device has no native XDP "
                          "support (try generic)", name,
                          xdp_mode_names[mode]);
        return EOPNOTSUPP;
    }
    if (mode == OVS_AF_XDP_MODE_NATIVE_ZC
        && !(features & AFXDP_NETDEV_XDP_ACT_XSK_ZEROCOPY)) {
        *errp = xasprintf("%s: xdp-mode %s: the device has no AF_XDP "
                          "zero-copy support (try native)", name,
                          xdp_mode_names[mode]);
        return EOPNOTSUPP;
    }
    return 0;
}

/* Netdev life cycle. */

int
netdev_afxdp_construct(struct netdev *netdev)
{
    int error = netdev_linux_construct(netdev);

    if (error) {
        return error;
    }

    /* netdev_linux_alloc() zeroed 'dev': no sockets, no TX locks and
     * OVS_AF_XDP_MODE_UNSPEC until the first reconfiguration binds them.
     * Only the requested defaults differ from zero. */
    struct afxdp_dev *ad = xzalloc(sizeof *ad);
    ad->netdev = netdev;
    ad->xsks_map_fd = -1;
    ad->requested.n_rxq = 1;
    ad->requested.xdp_mode = OVS_AF_XDP_MODE_BEST_EFFORT;
    ad->requested.need_wakeup = true;
    ad->requested.umem_frames = AFXDP_UMEM_FRAMES_DEFAULT;
    ad->requested.busy_poll_budget = AFXDP_BUSY_POLL_BUDGET_DEFAULT;

    ovs_mutex_lock(&afxdp_mutex);
    hmap_insert(&afxdp_devs, &ad->node, hash_pointer(netdev, 0));
    ovs_mutex_unlock(&afxdp_mutex);

    netdev_request_reconfigure(netdev);
    return 0;
}

static void
afxdp_free_tx_locks(struct netdev_linux *dev, int n)
{
    if (dev->tx_locks) {
        for (int i = 0; i < n; i++) {
            ovs_spin_destroy(&dev->tx_locks[i].lock);
        }
        free_cacheline(dev->tx_locks);
        dev->tx_locks = NULL;
    }
}

void
netdev_afxdp_destruct(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_dev *ad;

    ovs_mutex_lock(&afxdp_mutex);
    ad = afxdp_dev_lookup(netdev);
    xsk_destroy_all(dev, ad);
    hmap_remove(&afxdp_devs, &ad->node);
    ovs_mutex_unlock(&afxdp_mutex);

    afxdp_free_tx_locks(dev, netdev->n_txq);
    free(ad->umem_group);
    free(ad->requested_umem_group);
    free(ad);

    ovs_mutex_destroy(&dev->mutex);
}

/* Returns the number of RX queues of the device named 'name', or 0 if it
 * cannot tell. */
static int
afxdp_device_n_rxq(const char *name)
{
    char *path = xasprintf("/sys/class/net/%s/queues", name);
    DIR *dir = opendir(path);
    struct dirent *de;
    int n = 0;

    free(path);
    if (!dir) {
        return 0;
    }
    while ((de = readdir(dir)) != NULL) {
        if (!strncmp(de->d_name, "rx-", 3)) {
            n++;
        }
    }
    closedir(dir);
    return n;
}

static enum afxdp_mode
afxdp_mode_from_string(const char *s)
{
    for (int i = OVS_AF_XDP_MODE_BEST_EFFORT; i < OVS_AF_XDP_MODE_MAX; i++) {
        if (!strcmp(s, xdp_mode_names[i])) {
            return i;
        }
    }
    return OVS_AF_XDP_MODE_UNSPEC;
}

int
netdev_afxdp_set_config(struct netdev *netdev, const struct smap *args,
                        char **errp)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    const char *name = netdev_get_name(netdev);
    const char *mode_str, *group;
    enum afxdp_mode mode;
    int n_rxq, dev_n_rxq, frames;
    bool need_wakeup;

    n_rxq = smap_get_int(args, "n_rxq", 1);
    if (n_rxq < 1) {
        *errp = xasprintf("%s: invalid 'n_rxq' %d: must be at least 1",
                          name, n_rxq);
        return EINVAL;
    }
    dev_n_rxq = afxdp_device_n_rxq(name);
    if (dev_n_rxq && n_rxq > dev_n_rxq) {
        *errp = xasprintf("%s: Too big 'n_rxq' (%d): the device has %d "
                          "receive queue%s", name, n_rxq, dev_n_rxq,
                          dev_n_rxq == 1 ? "" : "s");
        return EINVAL;
    }

    mode_str = smap_get_def(args, "xdp-mode", "best-effort");
    mode = afxdp_mode_from_string(mode_str);
    if (mode == OVS_AF_XDP_MODE_UNSPEC) {
        *errp = xasprintf("%s: unsupported xdp-mode '%s' (use best-effort, "
                          "native-with-zerocopy, native or generic)",
                          name, mode_str);
        return EINVAL;
    }

    int error = afxdp_check_mode(name, mode, errp);
    if (error) {
        return error;
    }

    need_wakeup = smap_get_bool(args, "use-need-wakeup", true);

    frames = smap_get_int(args, "umem-frames", AFXDP_UMEM_FRAMES_DEFAULT);
    if (frames < AFXDP_UMEM_FRAMES_MIN || frames > AFXDP_UMEM_FRAMES_MAX) {
        *errp = xasprintf("%s: 'umem-frames' must be between %u and %u",
                          name, AFXDP_UMEM_FRAMES_MIN, AFXDP_UMEM_FRAMES_MAX);
        return EINVAL;
    }

    group = smap_get(args, "umem-group");
    if (group && !group[0]) {
        group = NULL;
    }

    int bp_usecs = smap_get_int(args, "busy-poll-usecs", 0);
    int bp_budget = smap_get_int(args, "busy-poll-budget",
                                 AFXDP_BUSY_POLL_BUDGET_DEFAULT);
    if (bp_usecs < 0 || bp_usecs > AFXDP_BUSY_POLL_USECS_MAX) {
        *errp = xasprintf("%s: 'busy-poll-usecs' must be between 0 and %d",
                          name, AFXDP_BUSY_POLL_USECS_MAX);
        return EINVAL;
    }
    if (bp_budget < 1 || bp_budget > AFXDP_BUSY_POLL_BUDGET_MAX) {
        *errp = xasprintf("%s: 'busy-poll-budget' must be between 1 and %d",
                          name, AFXDP_BUSY_POLL_BUDGET_MAX);
        return EINVAL;
    }

    struct afxdp_settings settings;

    memset(&settings, 0, sizeof settings);
    settings.n_rxq = n_rxq;
    settings.xdp_mode = mode;
    settings.need_wakeup = need_wakeup;
    settings.umem_frames = frames;
    settings.busy_poll_usecs = bp_usecs;
    settings.busy_poll_budget = bp_budget;

    ovs_mutex_lock(&dev->mutex);
    ovs_mutex_lock(&afxdp_mutex);
    struct afxdp_dev *ad = afxdp_dev_lookup(netdev);

    /* A reconfiguration is asked for only if a setting changed. */
    bool changed = memcmp(&ad->requested, &settings, sizeof settings);
    ad->requested = settings;
    if (!nullable_string_is_equal(ad->requested_umem_group, group)) {
        free(ad->requested_umem_group);
        ad->requested_umem_group = nullable_xstrdup(group);
        changed = true;
    }
    if (changed) {
        netdev_request_reconfigure(netdev);
    }
    ovs_mutex_unlock(&afxdp_mutex);
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

int
netdev_afxdp_get_config(const struct netdev *netdev, struct smap *args)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_dev *ad;

    /* The same locks, in the same order, as set_config. */
    ovs_mutex_lock(&dev->mutex);
    ovs_mutex_lock(&afxdp_mutex);
    ad = afxdp_dev_lookup(netdev);

    smap_add(args, "xdp-mode", xdp_mode_names[ad->requested.xdp_mode]);
    smap_add(args, "xdp-mode-in-use", xdp_mode_names[dev->xdp_mode_in_use]);
    smap_add_format(args, "n_rxq", "%d", netdev->n_rxq);
    smap_add(args, "use-need-wakeup",
             dev->use_need_wakeup ? "true" : "false");
    smap_add_format(args, "umem-frames", "%u", ad->requested.umem_frames);
    if (ad->umem_group) {
        smap_add(args, "umem-group", ad->umem_group);
    }
    smap_add(args, "multi-buffer", ad->multi_buffer ? "true" : "false");
    if (ad->requested.busy_poll_usecs) {
        smap_add_format(args, "busy-poll-usecs", "%u",
                        ad->requested.busy_poll_usecs);
        smap_add_format(args, "busy-poll-budget", "%u",
                        ad->requested.busy_poll_budget);
        smap_add(args, "busy-poll-in-use",
                 ad->busy_poll_in_use ? "true" : "false");
    }

    ovs_mutex_unlock(&afxdp_mutex);
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* Checks that the device's current MTU fits the sockets' capabilities. */
static int
afxdp_check_mtu(struct netdev_linux *dev, int mtu, bool multi_buffer,
                char **errp)
{
    if (mtu > AFXDP_MTU_SINGLE_FRAME && !multi_buffer) {
        *errp = xasprintf("%s: MTU %d does not fit one %u-byte AF_XDP frame "
                          "(at most %d without multi-buffer)",
                          netdev_get_name(&dev->up), mtu, AFXDP_FRAME_SIZE,
                          AFXDP_MTU_SINGLE_FRAME);
        return EINVAL;
    }
    return 0;
}

int
netdev_afxdp_reconfigure(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    char *err_msg = NULL;
    int error = 0;
    int ifindex, mtu;

    /* Both take 'dev->mutex'. */
    ifindex = netdev_get_ifindex(netdev);
    if (netdev_get_mtu(netdev, &mtu)) {
        mtu = 0;
    }

    ovs_mutex_lock(&dev->mutex);
    ovs_mutex_lock(&afxdp_mutex);
    struct afxdp_dev *ad = afxdp_dev_lookup(netdev);

    if (dev->xsks
        && !memcmp(&ad->applied, &ad->requested, sizeof ad->applied)
        && nullable_string_is_equal(ad->umem_group, ad->requested_umem_group)
        && (!ad->umem_group || dev->xsks[0]->umem->group)) {
        /* Nothing changed, and the UMEM group (if any) is still live. */
        goto out;
    }

    xsk_destroy_all(dev, ad);
    afxdp_free_tx_locks(dev, netdev->n_txq);
    netdev->n_rxq = 0;
    netdev->n_txq = 0;
    ad->applied = ad->requested;
    dev->xdp_mode = ad->applied.xdp_mode;
    dev->xdp_mode_in_use = OVS_AF_XDP_MODE_UNSPEC;
    dev->use_need_wakeup = ad->applied.need_wakeup;
    ad->busy_poll_in_use = ad->applied.busy_poll_usecs != 0;
    free(ad->umem_group);
    ad->umem_group = nullable_xstrdup(ad->requested_umem_group);

    if (ifindex < 0) {
        err_msg = xasprintf("%s: cannot find the device: %s",
                            netdev_get_name(netdev), ovs_strerror(-ifindex));
        error = -ifindex;
        goto out;
    }
    ad->ifindex = ifindex;

    int n_rxq = ad->applied.n_rxq;

    if (dev->xdp_mode == OVS_AF_XDP_MODE_BEST_EFFORT) {
        /* Best first, and each failure is expected on some device: no
         * zero-copy on veth, no native XDP on some drivers. */
        static const enum afxdp_mode tries[] = {
            OVS_AF_XDP_MODE_NATIVE_ZC,
            OVS_AF_XDP_MODE_NATIVE,
            OVS_AF_XDP_MODE_GENERIC,
        };

        for (size_t i = 0; i < ARRAY_SIZE(tries); i++) {
            free(err_msg);
            err_msg = NULL;
            error = xsk_configure_mode(dev, ad, tries[i], n_rxq, &err_msg);
            if (!error) {
                dev->xdp_mode_in_use = tries[i];
                break;
            }
            VLOG_DBG("%s", err_msg);
        }
    } else {
        error = xsk_configure_mode(dev, ad, dev->xdp_mode, n_rxq, &err_msg);
        if (!error) {
            dev->xdp_mode_in_use = dev->xdp_mode;
        }
    }
    if (error) {
        goto out;
    }

    error = afxdp_check_mtu(dev, mtu, ad->multi_buffer, &err_msg);
    if (error) {
        xsk_destroy_all(dev, ad);
        dev->xdp_mode_in_use = OVS_AF_XDP_MODE_UNSPEC;
        goto out;
    }

    dev->tx_locks = xzalloc_cacheline(n_rxq * sizeof *dev->tx_locks);
    for (int i = 0; i < n_rxq; i++) {
        ovs_spin_init(&dev->tx_locks[i].lock);
    }
    netdev->n_rxq = n_rxq;
    netdev->n_txq = n_rxq;
    VLOG_INFO("%s: %d AF_XDP queue%s in %s mode%s%s%s",
              netdev_get_name(netdev), n_rxq, n_rxq == 1 ? "" : "s",
              xdp_mode_names[dev->xdp_mode_in_use],
              ad->multi_buffer ? ", multi-buffer" : "",
              ad->umem_group ? ", umem-group " : "",
              ad->umem_group ? ad->umem_group : "");
    netdev_change_seq_changed(netdev);

out:
    ovs_mutex_unlock(&afxdp_mutex);
    ovs_mutex_unlock(&dev->mutex);
    if (err_msg) {
        VLOG_WARN_RL(&rl, "%s", err_msg);
        free(err_msg);
    }
    return error;
}

int
netdev_afxdp_verify_mtu_size(const struct netdev *netdev, int mtu)
{
    if (mtu > AFXDP_MTU_MAX) {
        VLOG_WARN_RL(&rl, "%s: MTU %d is above the AF_XDP maximum of %d",
                     netdev_get_name(netdev), mtu, AFXDP_MTU_MAX);
        return EINVAL;
    }
    if (mtu <= AFXDP_MTU_SINGLE_FRAME) {
        return 0;
    }
    if (!afxdp_kernel_has_multi_buffer) {
        VLOG_WARN_RL(&rl, "%s: MTU %d needs AF_XDP multi-buffer, which this "
                     "kernel lacks (at most %d)", netdev_get_name(netdev),
                     mtu, AFXDP_MTU_SINGLE_FRAME);
        return EINVAL;
    }

    /* In native mode the driver must build multi-buffer XDP frames too.
     * Called with the netdev's mutex held, which comes before
     * 'afxdp_mutex'. */
    int ifindex = if_nametoindex(netdev_get_name(netdev));
    enum afxdp_mode mode;
    uint64_t features;

    ovs_mutex_lock(&afxdp_mutex);
    mode = afxdp_dev_lookup(netdev)->requested.xdp_mode;
    ovs_mutex_unlock(&afxdp_mutex);
    if (mode != OVS_AF_XDP_MODE_GENERIC && ifindex > 0
        && !afxdp_get_xdp_features(ifindex, &features)
        && !(features & AFXDP_NETDEV_XDP_ACT_RX_SG)) {
        VLOG_WARN_RL(&rl, "%s: MTU %d needs multi-buffer native XDP, which "
                     "the device lacks (at most %d, or use xdp-mode=generic)",
                     netdev_get_name(netdev), mtu, AFXDP_MTU_SINGLE_FRAME);
        return EINVAL;
    }
    return 0;
}

void
signal_remove_xdp(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);

    /* Runs in a fatal signal handler: no locks, no allocation, a system
     * call on the cached ifindex only.  The sockets go away with the
     * process. */
    if (dev->xsks) {
        int ifindex = if_nametoindex(netdev_get_name(netdev));
        __u32 flags = (dev->xdp_mode_in_use == OVS_AF_XDP_MODE_GENERIC
                       ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);

        if (ifindex > 0) {
            bpf_xdp_detach(ifindex, flags, NULL);
        }
    }
}

