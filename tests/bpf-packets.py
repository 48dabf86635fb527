#! /usr/bin/env python3
# Copyright (c) 2026 The ovs-ebpf authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at:
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Crafted frames for the BPF datapath's system tests, sent raw and counted
byte for byte in a capture.

    bpf-packets.py send IFACE KIND [COUNT]   send frame KIND on IFACE
    bpf-packets.py count PCAP KIND           frames of PCAP equal to KIND

Every frame goes from f0:00:00:01:01:01 (fc00::1) to f0:00:00:01:01:02
(fc00::2).  For each bound of the BPF parser (bpf/parse.h) there is an "ordinary"
frame, a "long" frame that goes past the parser's old, lower bound but not
its current one, and a "deep" frame that goes past the current one.  The
partial key of the long or deep frame, parsed up to the bound, equals the
key of the ordinary frame.
"""

import socket
import struct
import sys

ETH_SRC = bytes.fromhex("f00000010101")
ETH_DST = bytes.fromhex("f00000010102")
IP6_SRC = socket.inet_pton(socket.AF_INET6, "fc00::1")
IP6_DST = socket.inet_pton(socket.AF_INET6, "fc00::2")

IPPROTO_UDP = 17
IPPROTO_ICMPV6 = 58
IPPROTO_DSTOPTS = 60

# The parser's bounds (OVS_BPF_MAX_IPV6_EXT and OVS_BPF_MAX_ND_OPTS of
# bpf/datapath-abi.h), and those of ABI version 3 and earlier.
MAX_IPV6_EXT = 64
MAX_ND_OPTS = 64
OLD_MAX_IPV6_EXT = 8
OLD_MAX_ND_OPTS = 16


def ipv6(next_header, payload, hop_limit=64):
    return (ETH_DST + ETH_SRC + struct.pack("!H", 0x86dd)
            + struct.pack("!IHBB", 6 << 28, len(payload), next_header,
                          hop_limit)
            + IP6_SRC + IP6_DST + payload)


def dstopts(next_header, length):
    """A destination options header of 'length' bytes (a multiple of 8),
    padded with Pad1 options."""
    return struct.pack("!BB", next_header, length // 8 - 1) \
        + bytes(length - 2)


def udp(src, dst, payload=b"bpf-parser-bounds"):
    # The checksum is not checked by OVS or the datapath: a fixed value
    # keeps the frames simple and their bytes known.
    return struct.pack("!HHHH", src, dst, 8 + len(payload), 0x1234) + payload


def neighbor_solicitation(options):
    target = socket.inet_pton(socket.AF_INET6, "fe80::2")
    return struct.pack("!BBHI", 135, 0, 0, 0) + target + options


# A nonce option (type 14): 8 bytes that OVS steps over.
ND_NONCE = struct.pack("!BB", 14, 1) + bytes(6)
# A source link-layer address option, with an address a rule bans.
ND_SLL_BANNED = struct.pack("!BB", 1, 1) + bytes.fromhex("0000000000bb")

def ext_chain(n_ext):
    """'n_ext' extension headers, then a UDP datagram to port 53."""
    return ipv6(IPPROTO_DSTOPTS,
                b"".join(dstopts(IPPROTO_DSTOPTS, 8) for _ in range(n_ext - 1))
                + dstopts(IPPROTO_UDP, 8) + udp(0, 53))


def nd_banned_sll_after(n_nonces):
    return ipv6(IPPROTO_ICMPV6,
                neighbor_solicitation(ND_NONCE * n_nonces + ND_SLL_BANNED),
                255)


KINDS = {
    # Extension headers.  The ordinary frame's only extension header is cut
    # short: OVS keeps the addresses and none of the rest, which is the
    # partial key of a chain the parser does not follow to its end.
    "ext-ordinary": lambda: ipv6(IPPROTO_DSTOPTS, bytes(4)),
    "ext-long": lambda: ext_chain(OLD_MAX_IPV6_EXT + 1),
    "ext-deep": lambda: ext_chain(MAX_IPV6_EXT + 1),
    # A UDP header past 2048 bytes, which the parser of ABI version 3 did
    # not read: its partial key has UDP with ports 0.
    "far-ordinary": lambda: ipv6(IPPROTO_UDP, udp(0, 0)),
    "far-long": lambda: ipv6(IPPROTO_DSTOPTS,
                             dstopts(IPPROTO_UDP, 2048) + udp(0, 53)),
    # ND options: the banned source link-layer address comes after them
    # (or first, with no other option).
    "nd-first": lambda: nd_banned_sll_after(0),
    "nd-ordinary": lambda: ipv6(IPPROTO_ICMPV6,
                                neighbor_solicitation(ND_NONCE * 16), 255),
    "nd-long": lambda: nd_banned_sll_after(OLD_MAX_ND_OPTS),
    "nd-deep": lambda: nd_banned_sll_after(MAX_ND_OPTS),
}


def send(iface, kind, count):
    frame = KINDS[kind]()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for _ in range(count):
        s.send(frame)
    s.close()


def count(pcap, kind):
    """Counts the frames of 'pcap' (as tcpdump -w writes it, possibly with
    a record still being written at its end) equal to frame 'kind'."""
    frame = KINDS[kind]()
    with open(pcap, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return 0
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise SystemExit("%s: not a pcap file" % pcap)
    n = 0
    off = 24
    while off + 16 <= len(data):
        incl_len, orig_len = struct.unpack(endian + "II", data[off + 8:off + 16])
        off += 16
        if off + incl_len > len(data):
            break
        if incl_len == orig_len and data[off:off + incl_len] == frame:
            n += 1
        off += incl_len
    return n


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3],
             int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    elif len(sys.argv) == 4 and sys.argv[1] == "count":
        print(count(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
