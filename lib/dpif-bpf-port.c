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

/* The ports of the BPF datapath: numbering, the 'ports' and ifindex maps
 * that the BPF programs read, attaching the ingress program, and the port
 * operations of the dpif class.
 *
 * A port of type "system" or "tap" is the device itself: the ingress program
 * runs at its TC ingress hook and output to it is a redirect to its egress.
 * An "internal" port (the bridge's own interface) is a veth pair: the end the
 * user sees has the port's name, the hidden end (named "ovsbpf<hash>") has
 * the ingress program, and output to the port is a redirect to the hidden
 * end, so that the packet arrives on the visible one (dpif-bpf-linux.c
 * creates the pair).
 *
 * A tunnel port ("vxlan") is a VXLAN device in collect_md mode that the
 * datapath creates, as the kernel datapath does: one datapath port per UDP
 * port, named as OVS names it ("vxlan_sys_4789"), which every OVS tunnel
 * port with that 'dst_port' shares (ofproto tells them apart by the tunnel
 * metadata).  The ingress program runs at its TC ingress and reads the
 * tunnel metadata of what it receives; output to it gives the packet the
 * tunnel key of set(tunnel(...)) and redirects it to its egress, where the
 * device encapsulates it (see bpf/tunnel.h).
 *
 * A GRE port ("gre", "ip6gre") has no device, as dpif-netdev's tunnel ports
 * have none (the kernel here has no GRE driver, and native tunneling needs
 * none): one datapath port per type, named as OVS names it ("gre_sys"),
 * which only native tunneling uses.  The tnl_pop of the underlay port's
 * flow gives it the GRE packets it takes apart as their in_port, and
 * ofproto sends to it with tnl_push and an output to the underlay port,
 * never with an output to it (OVS_BPF_PORT_F_GRE in bpf/datapath-abi.h).
 * It is in the 'ports' map without an ifindex, in no ifindex map, and has
 * no program to attach. */

#include <config.h>

#include "dpif-bpf-port.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/datapath-abi.h"
#include "dpif-bpf-linux.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "hash.h"
#include "netdev.h"
#include "netdev-vport.h"
#include "odp-util.h"
#include "openvswitch/hmap.h"
#include "openvswitch/vlog.h"
#include "seq.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_port);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

struct dp_bpf_port {
    struct hmap_node node;      /* In struct dp_bpf's 'ports'. */
    odp_port_t port_no;
    char *name;
    char *type;                 /* "system", "internal", "tap", "vxlan". */
    bool promisc_ours;          /* We turned promiscuous mode on. */

    int ifindex;                /* The device the user sees. */
    int attach_ifindex;         /* Where the ingress program runs. */
    char *peer_name;            /* Internal ports: the hidden veth end. */
    char *tnl_dev;              /* Tunnel ports: the device we made. */
    bool l3;                    /* A layer 3 port (OVS_BPF_PORT_F_L3). */
    uint32_t gre_seq;           /* GRE ports: the next sequence number. */
    bool created_qdisc;
    bool attaching;             /* Set up until its program is attached. */
};

/* Saves 'port' in the map of ovs-vswitchd's state, for the next
 * ovs-vswitchd (see dp_bpf_ports_adopt()). */
static int
dp_bpf_port_save(struct dp_bpf *dp, const struct dp_bpf_port *port)
{
    uint32_t port_no = odp_to_u32(port->port_no);
    struct dpif_bpf_saved_port sp;

    memset(&sp, 0, sizeof sp);
    ovs_strlcpy(sp.name, port->name, sizeof sp.name);
    ovs_strlcpy(sp.type, port->type, sizeof sp.type);
    if (port->peer_name) {
        ovs_strlcpy(sp.peer_name, port->peer_name, sizeof sp.peer_name);
    }
    if (port->tnl_dev) {
        ovs_strlcpy(sp.tnl_dev, port->tnl_dev, sizeof sp.tnl_dev);
    }
    sp.ifindex = port->ifindex;
    sp.attach_ifindex = port->attach_ifindex;
    sp.created_qdisc = port->created_qdisc;
    sp.promisc_ours = port->promisc_ours;
    sp.attaching = port->attaching;
    sp.l3 = port->l3;
    return (bpf_map_update_elem(dp->obj->saved_ports_fd, &port_no, &sp,
                                BPF_ANY)
            ? errno : 0);
}

static struct dp_bpf_port *
dp_bpf_lookup_port(const struct dp_bpf *dp, odp_port_t port_no)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_port *port;

    HMAP_FOR_EACH_WITH_HASH (port, node, hash_odp_port(port_no), &dp->ports) {
        if (port->port_no == port_no) {
            return port;
        }
    }
    return NULL;
}

bool
dp_bpf_port_exists(const struct dp_bpf *dp, odp_port_t port_no)
    OVS_REQUIRES(dp->mutex)
{
    return dp_bpf_lookup_port(dp, port_no) != NULL;
}

static struct dp_bpf_port *
dp_bpf_lookup_port_by_name(const struct dp_bpf *dp, const char *name)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_port *port;

    HMAP_FOR_EACH (port, node, &dp->ports) {
        if (!strcmp(port->name, name)) {
            return port;
        }
    }
    return NULL;
}

static odp_port_t
choose_port(const struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    for (uint32_t i = 1; i < OVS_BPF_MAX_PORTS; i++) {
        if (!dp_bpf_lookup_port(dp, u32_to_odp(i))) {
            return u32_to_odp(i);
        }
    }
    return ODPP_NONE;
}

/* Makes the ingress program see packets received on 'ifindex' as received
 * on 'port_no' (see 'ifindex_ports' in bpf/datapath-abi.h).  Returns 0 or a
 * positive errno value. */
static int
dp_bpf_ifindex_map_set(struct dp_bpf *dp, uint32_t ifindex, uint32_t port_no)
{
    int error;

    if (ifindex < OVS_BPF_IFINDEX_PORTS_SIZE) {
        uint32_t value = port_no + 1;

        error = bpf_map_update_elem(dp->obj->ifindex_ports_fd, &ifindex,
                                    &value, BPF_ANY);
    } else {
        error = bpf_map_update_elem(dp->obj->ifindexes_fd, &ifindex,
                                    &port_no, BPF_ANY);
    }
    return error ? errno : 0;
}

/* Makes the ingress program leave packets received on 'ifindex' to the
 * kernel. */
static void
dp_bpf_ifindex_map_clear(struct dp_bpf *dp, uint32_t ifindex)
{
    if (ifindex < OVS_BPF_IFINDEX_PORTS_SIZE) {
        uint32_t zero = 0;

        bpf_map_update_elem(dp->obj->ifindex_ports_fd, &ifindex, &zero,
                            BPF_ANY);
    } else {
        bpf_map_delete_elem(dp->obj->ifindexes_fd, &ifindex);
    }
}

/* Clears entry 'port_no' of the 'ports' array: output to it drops. */
static void
dp_bpf_port_map_clear(struct dp_bpf *dp, uint32_t port_no)
{
    struct ovs_bpf_port info;

    memset(&info, 0, sizeof info);
    bpf_map_update_elem(dp->obj->ports_fd, &port_no, &info, BPF_ANY);
}

static void dp_bpf_port_free(struct dp_bpf *, struct dp_bpf_port *)
    OVS_REQUIRES(dp->mutex);

/* Undoes what dp_bpf_port_add() did, in the reverse order: first the BPF
 * programs stop seeing the port, then the program and devices go. */
static void
dp_bpf_port_remove(struct dp_bpf *dp, struct dp_bpf_port *port)
    OVS_REQUIRES(dp->mutex)
{
    uint32_t port_no = odp_to_u32(port->port_no);
    uint32_t ifindex = port->attach_ifindex;

    if (ifindex) {
        dp_bpf_ifindex_map_clear(dp, ifindex);
    }
    dp_bpf_port_map_clear(dp, port_no);
    if (port->attach_ifindex) {
        dpif_bpf_tc_detach(port->attach_ifindex, port->created_qdisc);
    }
    if (port->peer_name) {
        /* Deleting one end of a veth pair deletes both. */
        dpif_bpf_link_delete(port->peer_name);
    }
    if (port->tnl_dev) {
        dpif_bpf_link_delete(port->tnl_dev);
    }
    if (port->promisc_ours) {
        dpif_bpf_link_set_promisc(port->ifindex, false);
    }
    bpf_map_delete_elem(dp->obj->saved_ports_fd, &port_no);
    dp_bpf_port_free(dp, port);
}

static void
dp_bpf_port_free(struct dp_bpf *dp, struct dp_bpf_port *port)
    OVS_REQUIRES(dp->mutex)
{
    hmap_remove(&dp->ports, &port->node);
    seq_change(dp->port_seq);
    free(port->name);
    free(port->type);
    free(port->peer_name);
    free(port->tnl_dev);
    free(port);
}

/* Returns the name of the datapath port of 'netdev': its own, or for a
 * tunnel port the one that OVS gives the shared device of its type and UDP
 * port ("vxlan_sys_4789"), in 'namebuf'. */
static const char *
dp_bpf_port_name(const struct netdev *netdev,
                 char namebuf[NETDEV_VPORT_NAME_BUFSIZE])
{
    return netdev_vport_get_dpif_port(netdev, namebuf,
                                      NETDEV_VPORT_NAME_BUFSIZE);
}

/* Returns true if a port of type 'type' is a GRE port, which has no
 * device (see the top of this file). */
static bool
dp_bpf_type_is_gre(const char *type)
{
    return !strcmp(type, "gre") || !strcmp(type, "ip6gre");
}

/* The flags of 'port' in the 'ports' map (OVS_BPF_PORT_F_*). */
static uint32_t
dp_bpf_port_flags(const struct dp_bpf_port *port)
{
    return ((port->tnl_dev ? OVS_BPF_PORT_F_TUNNEL : 0)
            | (dp_bpf_type_is_gre(port->type)
               ? OVS_BPF_PORT_F_TUNNEL | OVS_BPF_PORT_F_GRE : 0)
            | (port->l3 ? OVS_BPF_PORT_F_L3 : 0));
}

/* Returns true if 'cfg' is that of a VXLAN-GPE port, which the BPF
 * datapath makes as a layer 3 port (OVS_BPF_PORT_F_L3) backed by a GPE
 * device. */
static bool
dp_bpf_tunnel_is_gpe(const struct netdev_tunnel_config *cfg)
{
    return cfg && cfg->exts == (1 << OVS_VXLAN_EXT_GPE);
}

/* Checks that the BPF datapath can make the tunnel port of 'netdev'. */
static int
dp_bpf_tunnel_check(const struct dp_bpf *dp, const struct netdev *netdev,
                    const char *name, const char *type)
{
    const struct netdev_tunnel_config *cfg = netdev_get_tunnel_config(netdev);

    if (dp_bpf_type_is_gre(type)) {
        return 0;
    }
    if (strcmp(type, "vxlan")) {
        VLOG_WARN_RL(&rl, "%s: cannot add %s: the BPF datapath supports "
                     "tunnel ports of type vxlan, gre and ip6gre only, not "
                     "%s", dp->name, name, type);
        return EOPNOTSUPP;
    }
    if (!cfg || (cfg->exts && !dp_bpf_tunnel_is_gpe(cfg))) {
        /* GBP would need the tunnel options. */
        VLOG_WARN_RL(&rl, "%s: cannot add %s: the BPF datapath supports "
                     "no VXLAN extension (options:exts) but gpe", dp->name,
                     name);
        return EOPNOTSUPP;
    }
    if (dp_bpf_tunnel_is_gpe(cfg) && cfg->pt_mode != NETDEV_PT_LEGACY_L3) {
        /* A GPE device hands IP packets to TC without an Ethernet header:
         * only a layer 3 port (see OVS_BPF_PORT_F_L3) takes them so. */
        VLOG_WARN_RL(&rl, "%s: cannot add %s: the BPF datapath makes "
                     "VXLAN-GPE ports with options:packet_type=legacy_l3 "
                     "only", dp->name, name);
        return EOPNOTSUPP;
    }
    return 0;
}

/* Creates the VXLAN device of tunnel port 'port', named 'port->name' (or,
 * with OVS_BPF_INSTANCE, a name of its own: a sandbox must not take
 * another's device). */
static int
dp_bpf_tunnel_create(struct dp_bpf *dp, struct dp_bpf_port *port,
                     const struct netdev *netdev)
{
    const struct netdev_tunnel_config *cfg = netdev_get_tunnel_config(netdev);
    int error;

    port->tnl_dev = (dp->instance[0]
                     ? xasprintf("ovsbpft%08"PRIx32,
                                 hash_string(port->name,
                                             hash_string(dp->instance, 0)))
                     : xstrdup(port->name));
    /* A device that a killed ovs-vswitchd left behind, unless it has a
     * master: then it is another datapath's (openvswitch.ko enslaves its
     * own "vxlan_sys_<port>" to "ovs-system"), and the creation below fails
     * as it would for any other owner of the UDP port. */
    if (!dpif_bpf_link_has_master(port->tnl_dev)) {
        dpif_bpf_link_delete(port->tnl_dev);
    }
    /* Saved first, without devices: if ovs-vswitchd dies before the port's
     * next record, the next one deletes the device as that of a port that
     * went away. */
    error = dp_bpf_port_save(dp, port);
    if (!error) {
        error = dpif_bpf_vxlan_create(port->tnl_dev, cfg->dst_port,
                                      dp_bpf_tunnel_is_gpe(cfg));
    }
    if (error) {
        VLOG_WARN("%s: cannot create VXLAN device %s for tunnel port %s "
                  "(%s)", dp->name, port->tnl_dev, port->name,
                  ovs_strerror(error));
        free(port->tnl_dev);
        port->tnl_dev = NULL;
        return error;
    }
    dpif_bpf_test_crash_point("tunnel-created", port->name);
    /* Only tunnel traffic goes through it. */
    dpif_bpf_link_disable_ipv6(port->tnl_dev);
    port->ifindex = port->attach_ifindex = if_nametoindex(port->tnl_dev);
    return 0;
}

/* Puts 'port' into the port maps of 'dp': from then on the programs of
 * 'dp' take the packets of its device as its and output to it.  A GRE
 * port, which has no device, is put into the 'ports' map only. */
static int
dp_bpf_port_map_set(struct dp_bpf *dp, const struct dp_bpf_port *port)
    OVS_REQUIRES(dp->mutex)
{
    uint32_t port_no = odp_to_u32(port->port_no);
    struct ovs_bpf_port info;

    memset(&info, 0, sizeof info);
    info.ifindex = port->attach_ifindex;
    info.flags = dp_bpf_port_flags(port);
    if (bpf_map_update_elem(dp->obj->ports_fd, &port_no, &info, BPF_ANY)) {
        return errno;
    }
    return (port->attach_ifindex
            ? dp_bpf_ifindex_map_set(dp, port->attach_ifindex, port_no)
            : 0);
}

static int
dp_bpf_port_add(struct dp_bpf *dp, struct netdev *netdev, odp_port_t port_no)
    OVS_REQUIRES(dp->mutex)
{
    char namebuf[NETDEV_VPORT_NAME_BUFSIZE];
    const char *name = dp_bpf_port_name(netdev, namebuf);
    const char *type = netdev_get_type(netdev);
    bool tunnel = netdev_get_tunnel_config(netdev) != NULL;
    struct dp_bpf_port *port;
    uint32_t port_no32 = odp_to_u32(port_no);
    uint32_t attach_ifindex;
    int error;

    if (tunnel) {
        error = dp_bpf_tunnel_check(dp, netdev, netdev_get_name(netdev),
                                    type);
        if (error) {
            return error;
        }
    } else if (strcmp(type, "system") && strcmp(type, "internal")
               && strcmp(type, "tap")) {
        VLOG_WARN_RL(&rl, "%s: cannot add %s: the BPF datapath does not "
                     "support ports of type %s", dp->name, name, type);
        return EOPNOTSUPP;
    }

    port = xzalloc(sizeof *port);
    port->port_no = port_no;
    port->name = xstrdup(name);
    port->type = xstrdup(type);
    hmap_insert(&dp->ports, &port->node, hash_odp_port(port_no));

    if (tunnel && dp_bpf_type_is_gre(type)) {
        /* No device: in the 'ports' map only (see above). */
        error = dp_bpf_port_save(dp, port);
        if (!error) {
            error = dp_bpf_port_map_set(dp, port);
        }
        if (error) {
            VLOG_WARN("%s: cannot add %s to the port maps (%s)", dp->name,
                      name, ovs_strerror(error));
            goto error;
        }
        seq_change(dp->port_seq);
        VLOG_INFO("%s: added port %s (%s) as port %"PRIu32" (no device: "
                  "native tunneling only)", dp->name, name, type, port_no32);
        return 0;
    } else if (tunnel) {
        /* Saved with the port (see dp_bpf_port_save()): its type, "vxlan",
         * does not tell the next ovs-vswitchd that it is a GPE port. */
        port->l3 = dp_bpf_tunnel_is_gpe(netdev_get_tunnel_config(netdev));
        error = dp_bpf_tunnel_create(dp, port, netdev);
        if (error) {
            goto error;
        }
    } else if (!strcmp(type, "internal")) {
        port->peer_name = xasprintf("ovsbpf%08"PRIx32,
                                    hash_string(name,
                                                hash_string(dp->instance, 0)));
        /* A veth pair that a killed ovs-vswitchd left behind. */
        dpif_bpf_link_delete(port->peer_name);
        /* Saved first, without devices: if ovs-vswitchd dies before the
         * record below, the next one deletes the pair as a port that
         * went away. */
        error = dp_bpf_port_save(dp, port);
        if (!error) {
            error = dpif_bpf_veth_create(name, port->peer_name);
        }
        if (error) {
            VLOG_WARN("%s: cannot create veth pair %s/%s for internal port "
                      "(%s)", dp->name, name, port->peer_name,
                      ovs_strerror(error));
            free(port->peer_name);
            port->peer_name = NULL;
            goto error;
        }
        dpif_bpf_link_disable_ipv6(port->peer_name);
        port->ifindex = if_nametoindex(name);
        port->attach_ifindex = if_nametoindex(port->peer_name);
        /* The hidden end is always up, the visible end is up when the user
         * brings it up, as with the kernel datapath's internal devices. */
        error = (port->attach_ifindex
                 ? dpif_bpf_link_set_up(port->attach_ifindex) : 0);
        if (error) {
            VLOG_WARN("%s: cannot bring %s up (%s)", dp->name,
                      port->peer_name, ovs_strerror(error));
            goto error;
        }
    } else {
        port->ifindex = port->attach_ifindex = if_nametoindex(name);
    }
    if (!port->ifindex || !port->attach_ifindex) {
        error = ENODEV;
        port->attach_ifindex = 0;
        goto error;
    }

    /* Until the program is attached, the record says so: the next
     * ovs-vswitchd attaches it (again) if this one dies meanwhile, and
     * learns then whether the qdisc is ours. */
    port->attaching = true;
    port->created_qdisc = true;
    if (strcmp(type, "internal") && !tunnel
        && !dpif_bpf_link_is_promisc(name)) {
        port->promisc_ours = true;
    }
    error = dp_bpf_port_save(dp, port);
    if (error) {
        VLOG_WARN("%s: cannot save port %s for the next ovs-vswitchd (%s)",
                  dp->name, name, ovs_strerror(error));
        port->promisc_ours = false;
        port->created_qdisc = false;
        goto error;
    }

    if (port->promisc_ours) {
        /* As the kernel datapath does: a port receives every frame. */
        error = dpif_bpf_link_set_promisc(port->ifindex, true);
        if (error) {
            VLOG_WARN("%s: cannot turn on promiscuous mode on %s (%s)",
                      dp->name, name, ovs_strerror(error));
            port->promisc_ours = false;
            port->created_qdisc = false;
            goto error;
        }
    }

    /* The maps first, so that the program finds the port as soon as it
     * runs.  Output to an internal port goes to the egress of the hidden
     * end, that is to the visible end's ingress. */
    attach_ifindex = port->attach_ifindex;
    error = dp_bpf_port_map_set(dp, port);
    if (error) {
        VLOG_WARN("%s: cannot add %s to the port maps (%s)", dp->name, name,
                  ovs_strerror(error));
        port->created_qdisc = false;
        goto error;
    }

    dpif_bpf_test_crash_point("port-add", name);
    error = dpif_bpf_tc_attach(port->attach_ifindex,
                               (port->peer_name ? port->peer_name
                                : port->tnl_dev ? port->tnl_dev : name),
                               dp->obj->ingress_prog_fd,
                               &port->created_qdisc);
    if (error) {
        /* Not attached: do not detach. */
        goto error_detached;
    }
    port->attaching = false;
    error = dp_bpf_port_save(dp, port);
    if (error) {
        VLOG_WARN("%s: cannot save port %s for the next ovs-vswitchd (%s)",
                  dp->name, name, ovs_strerror(error));
        goto error;
    }

    seq_change(dp->port_seq);
    VLOG_INFO("%s: added port %s (%s) as port %"PRIu32" (ifindex %d)",
              dp->name, name, type, port_no32, port->attach_ifindex);
    return 0;

error_detached:
    dp_bpf_ifindex_map_clear(dp, attach_ifindex);
    dp_bpf_port_map_clear(dp, port_no32);
    port->attach_ifindex = 0;
error:
    dp_bpf_port_remove(dp, port);
    return error;
}

int
dpif_bpf_port_add(struct dpif *dpif, struct netdev *netdev,
                  odp_port_t *port_nop)
{
    char namebuf[NETDEV_VPORT_NAME_BUFSIZE];
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error;

    ovs_mutex_lock(&dp->mutex);
    if (dp_bpf_lookup_port_by_name(dp, dp_bpf_port_name(netdev, namebuf))) {
        error = EEXIST;
    } else if (*port_nop != ODPP_NONE) {
        if (odp_to_u32(*port_nop) >= OVS_BPF_MAX_PORTS) {
            error = EFBIG;
        } else if (dp_bpf_lookup_port(dp, *port_nop)) {
            error = EBUSY;
        } else {
            error = 0;
        }
    } else {
        *port_nop = choose_port(dp);
        error = *port_nop == ODPP_NONE ? EFBIG : 0;
    }
    if (!error) {
        error = dp_bpf_port_add(dp, netdev, *port_nop);
    }
    ovs_mutex_unlock(&dp->mutex);
    return error;
}

int
dpif_bpf_port_del(struct dpif *dpif, odp_port_t port_no)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_port *port;
    int error = 0;

    ovs_mutex_lock(&dp->mutex);
    port = dp_bpf_lookup_port(dp, port_no);
    if (port) {
        dp_bpf_port_remove(dp, port);
    } else {
        error = ENOENT;
    }
    ovs_mutex_unlock(&dp->mutex);
    return error;
}

static void
answer_port_query(const struct dp_bpf_port *port, struct dpif_port *dpif_port)
{
    dpif_port->name = xstrdup(port->name);
    dpif_port->type = xstrdup(port->type);
    dpif_port->port_no = port->port_no;
}

int
dpif_bpf_port_query_by_number(const struct dpif *dpif, odp_port_t port_no,
                              struct dpif_port *dpif_port)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_port *port;

    ovs_mutex_lock(&dp->mutex);
    port = dp_bpf_lookup_port(dp, port_no);
    if (port && dpif_port) {
        answer_port_query(port, dpif_port);
    }
    ovs_mutex_unlock(&dp->mutex);
    return port ? 0 : ENODEV;
}

int
dpif_bpf_port_query_by_name(const struct dpif *dpif, const char *devname,
                            struct dpif_port *dpif_port)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_port *port;

    ovs_mutex_lock(&dp->mutex);
    port = dp_bpf_lookup_port_by_name(dp, devname);
    if (port && dpif_port) {
        answer_port_query(port, dpif_port);
    }
    ovs_mutex_unlock(&dp->mutex);
    return port ? 0 : ENODEV;
}

struct dpif_bpf_port_state {
    uint32_t next;              /* Next port number to look at. */
    struct dpif_port port;      /* Returned by the last dump_next(). */
};

int
dpif_bpf_port_dump_start(const struct dpif *dpif OVS_UNUSED, void **statep)
{
    *statep = xzalloc(sizeof(struct dpif_bpf_port_state));
    return 0;
}

int
dpif_bpf_port_dump_next(const struct dpif *dpif, void *state_,
                        struct dpif_port *dpif_port)
{
    struct dpif_bpf_port_state *state = state_;
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error = EOF;

    dpif_port_destroy(&state->port);
    memset(&state->port, 0, sizeof state->port);

    ovs_mutex_lock(&dp->mutex);
    for (; state->next < OVS_BPF_MAX_PORTS; state->next++) {
        struct dp_bpf_port *port;

        port = dp_bpf_lookup_port(dp, u32_to_odp(state->next));
        if (port) {
            answer_port_query(port, &state->port);
            *dpif_port = state->port;
            state->next++;
            error = 0;
            break;
        }
    }
    ovs_mutex_unlock(&dp->mutex);
    return error;
}

int
dpif_bpf_port_dump_done(const struct dpif *dpif OVS_UNUSED, void *state_)
{
    struct dpif_bpf_port_state *state = state_;

    dpif_port_destroy(&state->port);
    free(state);
    return 0;
}

int
dpif_bpf_port_poll(const struct dpif *dpif_, char **devnamep OVS_UNUSED)
{
    struct dpif_bpf *dpif = dpif_bpf_cast(dpif_);
    uint64_t new_port_seq = seq_read(dpif->dp->port_seq);

    if (dpif->last_port_seq != new_port_seq) {
        dpif->last_port_seq = new_port_seq;
        return ENOBUFS;
    }
    return EAGAIN;
}

void
dpif_bpf_port_poll_wait(const struct dpif *dpif_)
{
    struct dpif_bpf *dpif = dpif_bpf_cast(dpif_);

    seq_wait(dpif->dp->port_seq, dpif->last_port_seq);
}

/* Forgets every port of 'dp' and leaves them in the kernel, as the close
 * of a datapath that outlives ovs-vswitchd does. */
void
dp_bpf_ports_forget_all(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_port *port;

    HMAP_FOR_EACH_SAFE (port, node, &dp->ports) {
        dp_bpf_port_free(dp, port);
    }
}

/* Reads into '*sp' the port that the previous ovs-vswitchd saved as
 * 'port_no' in the map 'saved_fd', and stores in '*attach_ifindexp' the
 * ifindex that the device where its ingress program runs has now.  If its
 * devices are still those it saved, adds it to 'dp' (not to the BPF maps),
 * stores it in '*portp' and returns 0.  Returns ENOENT if there is no such
 * saved port, ENODEV (after a log line) if its devices went away or were
 * replaced meanwhile. */
static int
dp_bpf_port_from_saved(struct dp_bpf *dp, int saved_fd, uint32_t port_no,
                       struct dpif_bpf_saved_port *sp, int *attach_ifindexp,
                       struct dp_bpf_port **portp)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_port *port;
    int ifindex;

    *portp = NULL;
    *attach_ifindexp = 0;
    if (bpf_map_lookup_elem(saved_fd, &port_no, sp)) {
        return ENOENT;
    }
    sp->name[sizeof sp->name - 1] = '\0';
    sp->type[sizeof sp->type - 1] = '\0';
    sp->peer_name[sizeof sp->peer_name - 1] = '\0';
    sp->tnl_dev[sizeof sp->tnl_dev - 1] = '\0';
    /* A tunnel port's device is the one we made for it; a GRE port has
     * none. */
    ifindex = (dp_bpf_type_is_gre(sp->type) ? 0
               : if_nametoindex(sp->tnl_dev[0] ? sp->tnl_dev : sp->name));
    *attach_ifindexp = (sp->peer_name[0] ? if_nametoindex(sp->peer_name)
                        : ifindex);
    if (port_no >= OVS_BPF_MAX_PORTS
        || (!ifindex && !dp_bpf_type_is_gre(sp->type))
        || ifindex != sp->ifindex || *attach_ifindexp != sp->attach_ifindex
        || dp_bpf_lookup_port(dp, u32_to_odp(port_no))) {
        VLOG_INFO("%s: port %s (%"PRIu32") went away while no ovs-vswitchd "
                  "ran: removing it", dp->name, sp->name, port_no);
        return ENODEV;
    }

    port = xzalloc(sizeof *port);
    port->port_no = u32_to_odp(port_no);
    port->name = xstrdup(sp->name);
    port->type = xstrdup(sp->type);
    port->peer_name = sp->peer_name[0] ? xstrdup(sp->peer_name) : NULL;
    port->tnl_dev = sp->tnl_dev[0] ? xstrdup(sp->tnl_dev) : NULL;
    port->ifindex = ifindex;
    port->attach_ifindex = *attach_ifindexp;
    port->created_qdisc = sp->created_qdisc;
    port->promisc_ours = sp->promisc_ours;
    port->attaching = sp->attaching;
    port->l3 = sp->l3;
    hmap_insert(&dp->ports, &port->node, hash_odp_port(port->port_no));
    *portp = port;
    return 0;
}

/* Attaches the ingress program of 'dp' to the device of 'port', which is in
 * the port maps (see dp_bpf_port_map_set()), replacing what is there in one
 * step, and saves the port.  With the record of a port whose addition a
 * crash interrupted, the filter may or may not be there: the attach tells
 * whether the qdisc is ours (see dpif_bpf_tc_attach()). */
static int
dp_bpf_port_attach_prog(struct dp_bpf *dp, struct dp_bpf_port *port)
    OVS_REQUIRES(dp->mutex)
{
    bool created;
    int error;

    if (!port->attach_ifindex) {
        /* A GRE port: no device, no program. */
        port->attaching = false;
        return dp_bpf_port_save(dp, port);
    }
    error = dpif_bpf_tc_attach(port->attach_ifindex,
                               (port->peer_name ? port->peer_name
                                : port->tnl_dev ? port->tnl_dev
                                : port->name),
                               dp->obj->ingress_prog_fd, &created);
    if (!error) {
        if (port->attaching) {
            port->created_qdisc = created;
            port->attaching = false;
        }
        error = dp_bpf_port_save(dp, port);
    }
    return error;
}

/* Puts 'port', whose devices are there, into the port maps of 'dp', then
 * attaches the ingress program to its device and saves it (see
 * dp_bpf_port_attach_prog()). */
static int
dp_bpf_port_attach(struct dp_bpf *dp, struct dp_bpf_port *port)
    OVS_REQUIRES(dp->mutex)
{
    int error = dp_bpf_port_map_set(dp, port);

    return error ? error : dp_bpf_port_attach_prog(dp, port);
}

/* Returns the sequence number for the next GRE header that ovs-vswitchd
 * pushes for GRE port 'port_no' of 'dp' (see dp_bpf_tnl_push_gre()), or
 * 0 if there is no such port.  Counted per datapath port, as dpif-netdev
 * counts in the netdev of its port. */
uint32_t
dp_bpf_port_next_gre_seq(struct dp_bpf *dp, odp_port_t port_no)
{
    struct dp_bpf_port *port;
    uint32_t seq = 0;

    ovs_mutex_lock(&dp->mutex);
    port = dp_bpf_lookup_port(dp, port_no);
    if (port) {
        seq = port->gre_seq++;
    }
    ovs_mutex_unlock(&dp->mutex);
    return seq;
}

/* Takes over the ports that the previous ovs-vswitchd saved, with their
 * port numbers.  A port whose devices went away (or were replaced) meanwhile
 * is removed from the BPF maps. */
void
dp_bpf_ports_adopt(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    size_t n = 0, allocated = 0;
    uint32_t *nos = NULL;
    uint32_t next;

    /* Collect the keys first: the loop below deletes entries. */
    while (!bpf_map_get_next_key(dp->obj->saved_ports_fd,
                                 n ? &nos[n - 1] : NULL, &next)) {
        if (n >= allocated) {
            nos = x2nrealloc(nos, &allocated, sizeof *nos);
        }
        nos[n++] = next;
    }

    for (size_t i = 0; i < n; i++) {
        uint32_t port_no = nos[i];
        struct dpif_bpf_saved_port sp;
        struct dp_bpf_port *port;
        int attach_ifindex;
        int error;

        error = dp_bpf_port_from_saved(dp, dp->obj->saved_ports_fd, port_no,
                                       &sp, &attach_ifindex, &port);
        if (error == ENOENT) {
            continue;
        } else if (error) {
            if (sp.attach_ifindex) {
                uint32_t value = 0;

                /* Unless the ifindex now belongs to a device of another
                 * port. */
                if (sp.attach_ifindex >= OVS_BPF_IFINDEX_PORTS_SIZE
                    || (!bpf_map_lookup_elem(dp->obj->ifindex_ports_fd,
                                             &sp.attach_ifindex, &value)
                        && value == port_no + 1)) {
                    dp_bpf_ifindex_map_clear(dp, sp.attach_ifindex);
                }
            }
            if (port_no < OVS_BPF_MAX_PORTS) {
                dp_bpf_port_map_clear(dp, port_no);
            }
            if (sp.peer_name[0] && attach_ifindex) {
                dpif_bpf_link_delete(sp.peer_name);
            } else if (sp.tnl_dev[0] && attach_ifindex
                       && !dpif_bpf_link_has_master(sp.tnl_dev)) {
                /* Ours, unless another datapath enslaved it (see
                 * dp_bpf_tunnel_create()). */
                dpif_bpf_link_delete(sp.tnl_dev);
            }
            bpf_map_delete_elem(dp->obj->saved_ports_fd, &port_no);
            continue;
        }

        /* Attached again (the same program replaces itself in one step)
         * in case a crash interrupted the addition of this port or a
         * replacement of the datapath (see dp_bpf_replace()), which may
         * have left another program on the device. */
        bool attaching = port->attaching;
        error = dp_bpf_port_attach(dp, port);
        if (error) {
            VLOG_WARN("%s: cannot attach port %s again (%s)", dp->name,
                      port->name, ovs_strerror(error));
            dp_bpf_port_remove(dp, port);
            continue;
        } else if (attaching) {
            VLOG_INFO("%s: finished adding port %s, which the previous "
                      "ovs-vswitchd was adding", dp->name, port->name);
        }

        seq_change(dp->port_seq);
        VLOG_INFO("%s: took over port %s (%s) as port %"PRIu32" (ifindex "
                  "%d)", dp->name, port->name, port->type, port_no,
                  port->attach_ifindex);
    }
    free(nos);
}

/* Carries the ports that the previous ovs-vswitchd saved in the map
 * 'saved_fd' of a datapath that 'dp' replaces (one of another ABI version,
 * or of another object file) over to 'dp', whose maps are new: each port
 * whose devices are still there keeps its port number and enters the new
 * maps, and only then, when the new maps have all the ports, the new
 * ingress program replaces the old one on each port's device in one step
 * (the TC filter is replaced), so that no packet finds no program.
 *
 * Not port by port: a packet that the new program of the first port
 * forwards by a flow carried over to a port not yet in the new 'ports' map
 * would be dropped (as output_no_port), which lost one datagram of a
 * steady stream in a few percent of the replacements. */
void
dp_bpf_ports_carry_over(struct dp_bpf *dp, int saved_fd)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_port **ports = NULL;
    size_t n = 0, allocated = 0;
    struct dpif_bpf_saved_port sp;
    uint32_t cur = 0, next;
    bool first = true;

    while (!bpf_map_get_next_key(saved_fd, first ? NULL : &cur, &next)) {
        struct dp_bpf_port *port;
        int attach_ifindex;
        int error;

        first = false;
        cur = next;
        if (dp_bpf_port_from_saved(dp, saved_fd, cur, &sp, &attach_ifindex,
                                   &port)) {
            continue;
        }

        error = dp_bpf_port_map_set(dp, port);
        if (error) {
            VLOG_WARN("%s: cannot carry port %s over to the new datapath "
                      "(%s)", dp->name, port->name, ovs_strerror(error));
            dp_bpf_port_remove(dp, port);
            continue;
        }
        if (n >= allocated) {
            ports = x2nrealloc(ports, &allocated, sizeof *ports);
        }
        ports[n++] = port;
    }

    for (size_t i = 0; i < n; i++) {
        struct dp_bpf_port *port = ports[i];
        int error = dp_bpf_port_attach_prog(dp, port);

        if (error) {
            VLOG_WARN("%s: cannot carry port %s over to the new datapath "
                      "(%s)", dp->name, port->name, ovs_strerror(error));
            dp_bpf_port_remove(dp, port);
            continue;
        }
        seq_change(dp->port_seq);
        VLOG_INFO("%s: carried port %s (%s) over as port %"PRIu32" (ifindex "
                  "%d)", dp->name, port->name, port->type,
                  odp_to_u32(port->port_no), port->attach_ifindex);
        /* The test of the order above stops here, one program attached. */
        dpif_bpf_test_crash_point("carry-over", NULL);
    }
    free(ports);
}

/* Before a new datapath replaces the one pinned for 'cfg' (of another ABI
 * version, or not taken over for another reason): detaches the programs of
 * that datapath from the devices of the ports it saved, turns promiscuous
 * mode off where it turned it on and deletes the veth pairs of its internal
 * ports.  Best effort: nothing is done if the saved ports are not there or
 * of another layout (the ports that the bridge adds again replace the old
 * programs on their devices anyway). */
void
dp_bpf_ports_remove_stale(const char *dp_name,
                          const struct dpif_bpf_obj_config *cfg)
{
    struct dpif_bpf_saved_port sp;
    uint32_t cur = 0, next;
    bool first = true;
    char *errmsg;
    int fd = dpif_bpf_saved_map_open(cfg->pin_name, DPIF_BPF_SAVED_PORTS,
                                     &errmsg);

    free(errmsg);
    if (fd < 0) {
        return;
    }
    while (!bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
        first = false;
        cur = next;
        if (bpf_map_lookup_elem(fd, &cur, &sp)) {
            continue;
        }
        sp.name[sizeof sp.name - 1] = '\0';
        sp.peer_name[sizeof sp.peer_name - 1] = '\0';
        sp.tnl_dev[sizeof sp.tnl_dev - 1] = '\0';
        if (sp.attach_ifindex
            && if_nametoindex(sp.peer_name[0] ? sp.peer_name
                              : sp.tnl_dev[0] ? sp.tnl_dev : sp.name)
               == sp.attach_ifindex) {
            dpif_bpf_tc_detach(sp.attach_ifindex, sp.created_qdisc);
        }
        if (sp.peer_name[0]) {
            dpif_bpf_link_delete(sp.peer_name);
        } else if (sp.tnl_dev[0]) {
            dpif_bpf_link_delete(sp.tnl_dev);
        } else if (sp.promisc_ours && if_nametoindex(sp.name) == sp.ifindex) {
            dpif_bpf_link_set_promisc(sp.ifindex, false);
        }
        VLOG_INFO("%s: removed port %s of the datapath that is replaced",
                  dp_name, sp.name);
    }
    close(fd);
}

/* Removes every port of 'dp', as its destruction does. */
void
dp_bpf_ports_remove_all(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_port *port;

    HMAP_FOR_EACH_SAFE (port, node, &dp->ports) {
        dp_bpf_port_remove(dp, port);
    }
}
