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

or, for frames listed in a FILE of hex lines ('#' starts a comment):

    bpf-packets.py send-file IFACE FILE      send each frame of FILE
    bpf-packets.py n-frames FILE             how many frames FILE has
    bpf-packets.py n-captured PCAP           how many frames PCAP has
    bpf-packets.py check PCAP FILE COPIES    whether COPIES unchanged copies
                                             of each frame of FILE, and
                                             nothing else, are in PCAP

Every frame goes from f0:00:00:01:01:01 (fc00::1) to f0:00:00:01:01:02
(fc00::2).  For each bound of the BPF parser (bpf/parse.h) there is an "ordinary"
frame, a "long" frame that goes past the parser's old, lower bound but not
its current one, and a "deep" frame that goes past the current one.  The
partial key of the long or deep frame, parsed up to the bound, equals the
key of the ordinary frame.
"""

import os
import re
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



def abi_constant(name):
    """The value of '#define NAME N' in bpf/datapath-abi.h."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "bpf", "datapath-abi.h")
    for line in open(path):
        m = re.match(r"#define %s (\d+)" % name, line)
        if m:
            return int(m.group(1))
    raise SystemExit("%s: no %s" % (path, name))


# The parser's bounds, and those of ABI version 3 and earlier.
MAX_IPV6_EXT = abi_constant("OVS_BPF_MAX_IPV6_EXT")
MAX_ND_OPTS = abi_constant("OVS_BPF_MAX_ND_OPTS")
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


def send(iface, frames):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for frame in frames:
        s.send(frame)
    s.close()


def frames_of_file(path):
    out = []
    for line in open(path):
        hexdigits = "".join(line.split("#")[0].split())
        if hexdigits:
            out.append(bytes.fromhex(hexdigits))
    return out


def captured(pcap):
    """The complete frames of 'pcap', as tcpdump -w writes it (possibly
    with a record still being written at its end)."""
    with open(pcap, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise SystemExit("%s: not a pcap file" % pcap)
    out = []
    off = 24
    while off + 16 <= len(data):
        incl_len, orig_len = struct.unpack(endian + "II", data[off + 8:off + 16])
        off += 16
        if off + incl_len > len(data):
            break
        if incl_len == orig_len:
            out.append(data[off:off + incl_len])
        off += incl_len
    return out


def check(pcap, sent, copies):
    """Whether 'pcap' holds 'copies' unchanged copies of each frame of
    'sent' and nothing else; says what differs."""
    got = captured(pcap)
    ok = True
    for i, frame in enumerate(sent):
        n = got.count(frame)
        if n != copies:
            print("frame %d: %d copies arrived unchanged, expected %d"
                  % (i + 1, n, copies))
            ok = False
    for frame in got:
        if frame not in sent:
            print("arrived changed or unexpected: %s" % frame.hex())
            ok = False
    return ok


def main():
    args = sys.argv[1:]
    if len(args) in (3, 4) and args[0] == "send":
        send(args[1], [KINDS[args[2]]()] * (int(args[3]) if len(args) > 3
                                             else 1))
    elif len(args) == 3 and args[0] == "count":
        print(captured(args[1]).count(KINDS[args[2]]()))
    elif len(args) == 3 and args[0] == "send-file":
        send(args[1], frames_of_file(args[2]))
    elif len(args) == 2 and args[0] == "n-frames":
        print(len(frames_of_file(args[1])))
    elif len(args) == 2 and args[0] == "n-captured":
        print(len(captured(args[1])))
    elif len(args) == 4 and args[0] == "check":
        sys.exit(0 if check(args[1], frames_of_file(args[2]), int(args[3]))
                 else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
