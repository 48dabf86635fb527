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

/* The Linux plumbing of the BPF datapath: the rtnetlink requests that create,
 * bring up and delete its devices (the veth pairs of internal ports, the
 * VXLAN devices of tunnel ports), set its ports promiscuous, and the
 * downcall TAP device. */

#include <config.h>

#include "dpif-bpf-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netlink.h"
#include "netlink-socket.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_linux);

static void
rtnl_put_ifinfomsg(struct ofpbuf *msg, int ifindex, unsigned int flags,
                   unsigned int change)
{
    struct ifinfomsg *ifi = ofpbuf_put_zeros(msg, sizeof *ifi);

    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    ifi->ifi_flags = flags;
    ifi->ifi_change = change;
}

/* Creates the veth pair 'name' <-> 'peer', both down.  (The peer cannot be
 * created up: veth refuses to open a device before its pair is complete.) */
int
dpif_bpf_veth_create(const char *name, const char *peer)
{
    struct ofpbuf msg;
    size_t linkinfo, data, peer_ofs;
    int error;

    ofpbuf_init(&msg, 256);
    nl_msg_put_nlmsghdr(&msg, 0, RTM_NEWLINK,
                        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    rtnl_put_ifinfomsg(&msg, 0, 0, 0);
    nl_msg_put_string(&msg, IFLA_IFNAME, name);
    linkinfo = nl_msg_start_nested(&msg, IFLA_LINKINFO);
    nl_msg_put_string(&msg, IFLA_INFO_KIND, "veth");
    data = nl_msg_start_nested(&msg, IFLA_INFO_DATA);
    peer_ofs = nl_msg_start_nested(&msg, VETH_INFO_PEER);
    rtnl_put_ifinfomsg(&msg, 0, 0, 0);
    nl_msg_put_string(&msg, IFLA_IFNAME, peer);
    nl_msg_end_nested(&msg, peer_ofs);
    nl_msg_end_nested(&msg, data);
    nl_msg_end_nested(&msg, linkinfo);

    error = nl_transact(NETLINK_ROUTE, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
}

/* Creates the VXLAN device 'name' in collect_md mode on UDP port 'dst_port',
 * up, as the kernel datapath creates its "vxlan_sys_<port>" devices
 * (lib/dpif-netlink-rtnl.c): "external" (the tunnel endpoints and VNI of
 * each packet come from its metadata: bpf_skb_set_tunnel_key() on output,
 * bpf_skb_get_tunnel_key() on input), no learning, IPv6 packets with a zero
 * UDP checksum accepted, and the largest MTU tunnels take.  The UDP
 * checksum of what it sends is set per packet, by the tunnel key's flags.
 * With 'gpe', a VXLAN-GPE device ("gpe"), for a layer 3 port. */
int
dpif_bpf_vxlan_create(const char *name, ovs_be16 dst_port, bool gpe)
{
    /* As the kernel datapath's: a little below UINT16_MAX, which some
     * tunnel devices refuse. */
    enum { MAX_MTU = 65000 };
    size_t linkinfo, data;
    struct ofpbuf msg;
    int error;

    ofpbuf_init(&msg, 256);
    nl_msg_put_nlmsghdr(&msg, 0, RTM_NEWLINK,
                        NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    rtnl_put_ifinfomsg(&msg, 0, IFF_UP, IFF_UP);
    nl_msg_put_string(&msg, IFLA_IFNAME, name);
    nl_msg_put_u32(&msg, IFLA_MTU, MAX_MTU);
    linkinfo = nl_msg_start_nested(&msg, IFLA_LINKINFO);
    nl_msg_put_string(&msg, IFLA_INFO_KIND, "vxlan");
    data = nl_msg_start_nested(&msg, IFLA_INFO_DATA);
    nl_msg_put_u8(&msg, IFLA_VXLAN_LEARNING, 0);
    nl_msg_put_u8(&msg, IFLA_VXLAN_COLLECT_METADATA, 1);
    nl_msg_put_u8(&msg, IFLA_VXLAN_UDP_ZERO_CSUM6_RX, 1);
    nl_msg_put_be16(&msg, IFLA_VXLAN_PORT, dst_port);
    if (gpe) {
        /* A device without link layer (ARPHRD_NONE) that carries IP
         * packets as they are, with the VXLAN-GPE header. */
        nl_msg_put_flag(&msg, IFLA_VXLAN_GPE);
    }
    nl_msg_end_nested(&msg, data);
    nl_msg_end_nested(&msg, linkinfo);

    error = nl_transact(NETLINK_ROUTE, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
}

int
dpif_bpf_link_delete(const char *name)
{
    struct ofpbuf msg;
    int error;

    ofpbuf_init(&msg, 64);
    nl_msg_put_nlmsghdr(&msg, 0, RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK);
    rtnl_put_ifinfomsg(&msg, 0, 0, 0);
    nl_msg_put_string(&msg, IFLA_IFNAME, name);
    error = nl_transact(NETLINK_ROUTE, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
}

int
dpif_bpf_link_set_up(int ifindex)
{
    struct ofpbuf msg;
    int error;

    ofpbuf_init(&msg, 64);
    nl_msg_put_nlmsghdr(&msg, 0, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
    rtnl_put_ifinfomsg(&msg, ifindex, IFF_UP, IFF_UP);
    error = nl_transact(NETLINK_ROUTE, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
}

/* Returns true if the device 'name' exists and is enslaved to another
 * device (a bridge, a bond, the kernel datapath's "ovs-system"). */
bool
dpif_bpf_link_has_master(const char *name)
{
    char *path = xasprintf("/sys/class/net/%s/master", name);
    bool has_master = !access(path, F_OK);

    free(path);
    return has_master;
}

/* Turns promiscuous mode of 'ifindex' on or off.  (Not through
 * netdev_turn_flags_on(): ovs-vswitchd restores the flags saved that way
 * when it exits, and the datapath's ports must stay promiscuous after.) */
int
dpif_bpf_link_set_promisc(int ifindex, bool on)
{
    struct ofpbuf msg;
    int error;

    ofpbuf_init(&msg, 64);
    nl_msg_put_nlmsghdr(&msg, 0, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
    rtnl_put_ifinfomsg(&msg, ifindex, on ? IFF_PROMISC : 0, IFF_PROMISC);
    error = nl_transact(NETLINK_ROUTE, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
}

bool
dpif_bpf_link_is_promisc(const char *name)
{
    struct ifreq ifr;
    bool promisc = false;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd >= 0) {
        memset(&ifr, 0, sizeof ifr);
        ovs_strzcpy(ifr.ifr_name, name, sizeof ifr.ifr_name);
        promisc = !ioctl(fd, SIOCGIFFLAGS, &ifr)
                  && (ifr.ifr_flags & IFF_PROMISC);
        close(fd);
    }
    return promisc;
}

/* The hidden devices (the TAP, the inner ends of internal ports) carry only
 * datapath traffic: keep the kernel from sending IPv6 autoconfiguration
 * packets through them.  Best effort: IPv6 may be disabled altogether. */
void
dpif_bpf_link_disable_ipv6(const char *name)
{
    char *path = xasprintf("/proc/sys/net/ipv6/conf/%s/disable_ipv6", name);
    int fd = open(path, O_WRONLY);

    if (fd >= 0) {
        ignore(write(fd, "1", 1));
        close(fd);
    }
    free(path);
}

/* Creates the downcall TAP device 'tap_name' of datapath 'dp_name', or
 * attaches to the one an earlier ovs-vswitchd left, and brings it up.  The
 * device is persistent: it outlives ovs-vswitchd, until
 * dpif_bpf_tap_close() removes it.  On success, stores its fd in '*fdp' and
 * its ifindex in '*ifindexp' and returns 0; otherwise, stores -1 in '*fdp'
 * and returns a positive errno value: EBUSY, without a log line, if
 * another process holds the device (the caller says what that means). */
int
dpif_bpf_tap_open(const char *dp_name, const char *tap_name, int *fdp,
                  int *ifindexp)
{
    struct ifreq ifr;
    int error;

    *fdp = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (*fdp < 0) {
        error = errno;
        VLOG_ERR("%s: cannot open /dev/net/tun (%s)", dp_name,
                 ovs_strerror(error));
        return error;
    }

    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    ovs_strzcpy(ifr.ifr_name, tap_name, sizeof ifr.ifr_name);
    if (ioctl(*fdp, TUNSETIFF, &ifr) < 0) {
        error = errno;
        if (error != EBUSY) {
            VLOG_ERR("%s: cannot create TAP device %s (%s)", dp_name,
                     tap_name, ovs_strerror(error));
        }
        goto error_persist;
    }

    if (ioctl(*fdp, TUNSETPERSIST, 1) < 0) {
        error = errno;
        VLOG_ERR("%s: cannot make TAP device %s persistent (%s)", dp_name,
                 tap_name, ovs_strerror(error));
        goto error_persist;
    }

    *ifindexp = if_nametoindex(tap_name);
    if (!*ifindexp) {
        error = errno;
        goto error;
    }
    dpif_bpf_link_disable_ipv6(tap_name);
    /* tun refuses writes (EIO) while its device is down. */
    error = dpif_bpf_link_set_up(*ifindexp);
    if (error) {
        VLOG_ERR("%s: cannot bring %s up (%s)", dp_name, tap_name,
                 ovs_strerror(error));
        goto error;
    }
    return 0;

error:
    ignore(ioctl(*fdp, TUNSETPERSIST, 0));
error_persist:
    close(*fdp);
    *fdp = -1;
    return error;
}

/* Closes the TAP device fd 'fd'.  With 'remove', the device goes away with
 * it; without, it stays for the next ovs-vswitchd. */
void
dpif_bpf_tap_close(int fd, bool remove)
{
    if (fd >= 0) {
        if (remove) {
            ignore(ioctl(fd, TUNSETPERSIST, 0));
        }
        close(fd);
    }
}
