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

/* Conntrack labels for the BPF datapath: making the kernel give new
 * connections room for them.
 *
 * A connection has labels only if the kernel gave it the labels extension
 * when it created it, which it does (nf_ct_labels_ext_add(), in
 * nf_conntrack_in() and in ctnetlink's create) only while something in the
 * network namespace holds nf_connlabels_get() (net->ct.labels_used): the
 * kernel datapath's ct action with labels, act_ct with labels, an xt
 * connlabel match or an nftables "ct label set".  This kernel has no
 * openvswitch module and no act_ct (it needs NF_FLOW_TABLE), so
 * dpif_bpf_ct_labels_enable() adds an nftables table owned by this process
 * (NFT_TABLE_F_OWNER: it goes away with the process) holding one rule
 * "ct label set" in a chain that no hook calls: the rule never runs, its
 * only effect is the reference.  (The kernel's nft_ct_set_init() also
 * registers the IPv4 conntrack hooks of the namespace, which track only
 * packets that go through its IP stack, never the BPF datapath's.)
 *
 * The labels themselves are written by the ct slow path
 * (dpif-bpf-ct-slow.c) and read in BPF (bpf/actions-ct.h). */

#include <config.h>

#include "dpif-bpf-ct-labels.h"

#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netlink.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_ct_labels);

/* <linux/netfilter.h>'s, which cannot be included with <netinet/in.h>. */
#define CT_LABELS_NFPROTO_IPV4 2

/* Appends to 'batch' one nfnetlink message of 'type' with 'flags' and
 * sequence number 'seq', for 'family', whose attributes are in 'attrs' (or
 * none); 'res_id' is the nfgenmsg's (the subsystem, for a batch begin or
 * end). */
static void
nft_put_msg(struct ofpbuf *batch, uint16_t type, uint16_t flags,
            uint32_t seq, uint8_t family, uint16_t res_id,
            const struct ofpbuf *attrs)
{
    struct ofpbuf msg;
    struct nlmsghdr *nlh;
    struct nfgenmsg *nfm;

    ofpbuf_init(&msg, 256);
    nl_msg_put_nlmsghdr(&msg, sizeof *nfm, type, NLM_F_REQUEST | flags);
    nfm = nl_msg_put_uninit(&msg, sizeof *nfm);
    nfm->nfgen_family = family;
    nfm->version = NFNETLINK_V0;
    nfm->res_id = htons(res_id);
    if (attrs) {
        ofpbuf_put(&msg, attrs->data, attrs->size);
    }
    nlh = msg.data;
    nlh->nlmsg_len = msg.size;
    nlh->nlmsg_seq = seq;
    ofpbuf_put(batch, msg.data, msg.size);
    ofpbuf_uninit(&msg);
}

/* One nftables expression 'name' with the attributes in 'data'. */
static void
nft_put_expr(struct ofpbuf *msg, const char *name, const struct ofpbuf *data)
{
    size_t elem = nl_msg_start_nested(msg, NFTA_LIST_ELEM);
    size_t ofs;

    nl_msg_put_string(msg, NFTA_EXPR_NAME, name);
    ofs = nl_msg_start_nested(msg, NFTA_EXPR_DATA);
    ofpbuf_put(msg, data->data, data->size);
    nl_msg_end_nested(msg, ofs);
    nl_msg_end_nested(msg, elem);
}

/* The socket that owns the table: closing it (the process ends) deletes
 * the table, and with it the labels reference. */
static int labels_sock = -1;

static int
ct_labels_enable__(void)
{
    struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
    struct timeval tv = { .tv_sec = 5 };
    static const uint8_t zero_labels[16];
    struct ofpbuf batch, attrs, data;
    char table[32];
    uint32_t seq = 1;
    int fd, acks, error = 0;
    size_t ofs;

    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0) {
        return errno;
    }
    if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0
        || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
        error = errno;
        close(fd);
        return error;
    }
    /* One table per process, so that two ovs-vswitchd in one namespace
     * (a test restarting it) do not share one. */
    snprintf(table, sizeof table, "ovs_bpf_labels_%ld", (long) getpid());

    ofpbuf_init(&batch, 1024);
    ofpbuf_init(&attrs, 256);
    ofpbuf_init(&data, 64);
    nft_put_msg(&batch, NFNL_MSG_BATCH_BEGIN, 0, seq++, AF_UNSPEC,
                NFNL_SUBSYS_NFTABLES, NULL);

    nl_msg_put_string(&attrs, NFTA_TABLE_NAME, table);
    nl_msg_put_be32(&attrs, NFTA_TABLE_FLAGS, htonl(NFT_TABLE_F_OWNER));
    nft_put_msg(&batch, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWTABLE,
                NLM_F_CREATE | NLM_F_ACK, seq++, CT_LABELS_NFPROTO_IPV4, 0,
                &attrs);

    ofpbuf_clear(&attrs);
    nl_msg_put_string(&attrs, NFTA_CHAIN_TABLE, table);
    nl_msg_put_string(&attrs, NFTA_CHAIN_NAME, "labels");
    nft_put_msg(&batch, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWCHAIN,
                NLM_F_CREATE | NLM_F_ACK, seq++, CT_LABELS_NFPROTO_IPV4, 0,
                &attrs);

    /* "ct label set 0": an immediate into register 1 (128 bits), and the
     * ct expression that would set the labels from it.  Its init takes
     * nf_connlabels_get() for all 128 bits. */
    ofpbuf_clear(&attrs);
    nl_msg_put_string(&attrs, NFTA_RULE_TABLE, table);
    nl_msg_put_string(&attrs, NFTA_RULE_CHAIN, "labels");
    ofs = nl_msg_start_nested(&attrs, NFTA_RULE_EXPRESSIONS);
    nl_msg_put_be32(&data, NFTA_IMMEDIATE_DREG, htonl(NFT_REG_1));
    {
        size_t d = nl_msg_start_nested(&data, NFTA_IMMEDIATE_DATA);

        nl_msg_put_unspec(&data, NFTA_DATA_VALUE, zero_labels,
                          sizeof zero_labels);
        nl_msg_end_nested(&data, d);
    }
    nft_put_expr(&attrs, "immediate", &data);
    ofpbuf_clear(&data);
    nl_msg_put_be32(&data, NFTA_CT_KEY, htonl(NFT_CT_LABELS));
    nl_msg_put_be32(&data, NFTA_CT_SREG, htonl(NFT_REG_1));
    nft_put_expr(&attrs, "ct", &data);
    nl_msg_end_nested(&attrs, ofs);
    nft_put_msg(&batch, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWRULE,
                NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, seq++,
                CT_LABELS_NFPROTO_IPV4, 0, &attrs);

    nft_put_msg(&batch, NFNL_MSG_BATCH_END, 0, seq++, AF_UNSPEC,
                NFNL_SUBSYS_NFTABLES, NULL);

    if (send(fd, batch.data, batch.size, 0) != batch.size) {
        error = errno ? errno : EPROTO;
    }

    /* An ack (an NLMSG_ERROR of 0) for each of the three messages, or the
     * first error. */
    for (acks = 0; !error && acks < 3; ) {
        uint32_t buf[1024];     /* Aligned for struct nlmsghdr. */
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        struct nlmsghdr *nlh;
        size_t left;

        if (n < 0) {
            error = errno == EAGAIN ? ETIMEDOUT : errno;
            break;
        }
        left = n;
        for (nlh = (struct nlmsghdr *) buf; NLMSG_OK(nlh, left);
             nlh = NLMSG_NEXT(nlh, left)) {
            if (nlh->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *err = NLMSG_DATA(nlh);

                if (err->error) {
                    error = -err->error;
                    break;
                }
                acks++;
            }
        }
    }

    ofpbuf_uninit(&batch);
    ofpbuf_uninit(&attrs);
    ofpbuf_uninit(&data);
    if (error) {
        close(fd);
        return error;
    }
    labels_sock = fd;
    return 0;
}

int
dpif_bpf_ct_labels_enable(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    static int error;

    if (ovsthread_once_start(&once)) {
        error = ct_labels_enable__();
        if (error) {
            VLOG_WARN("no conntrack labels (ct_label): cannot add the "
                      "nftables rule that gives new connections room for "
                      "them (%s)", ovs_strerror(error));
        } else {
            VLOG_INFO("conntrack labels: nftables table "
                      "\"ip ovs_bpf_labels_%ld\" holds the labels of this "
                      "network namespace's connections", (long) getpid());
        }
        ovsthread_once_done(&once);
    }
    return error;
}
