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

"""One TCP segment of the connection 10.1.1.50:40000 -> 10.1.1.60:80,
written by hand and sent raw, for the conntrack tests of the BPF datapath
(tests/system-bpf.at):

    bpf-tcp-segment.py WAY SEQ ACK FLAGS WINDOW LENGTH [WSCALE]

WAY is "o" (the original direction, sent on p0) or "r" (the reply, sent
on p1); FLAGS letters of F, S, R, P, A and U (FIN, SYN, RST, PSH, ACK,
URG), or "." for none; LENGTH bytes of data follow the header, and WSCALE
adds a window scale option (for a SYN).  No namespace has these addresses
or MACs: nothing answers the segments, which only ct() sees.
"""

import socket
import struct
import sys

FLAG_BITS = {"F": 1, "S": 2, "R": 4, "P": 8, "A": 16, "U": 32, ".": 0}


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return 0xffff - s


def main():
    way, seq, ack, flags, win, n = sys.argv[1:7]
    seq, ack, win, n = int(seq), int(ack), int(win), int(n)
    bits = sum(FLAG_BITS[c] for c in flags)
    opts = b""
    if len(sys.argv) > 7:
        opts = struct.pack("!BBBB", 1, 3, 3, int(sys.argv[7]))
    a = (socket.inet_aton("10.1.1.50"), 40000, bytes.fromhex("f00000000150"))
    b = (socket.inet_aton("10.1.1.60"), 80, bytes.fromhex("f00000000160"))
    src, dst = (a, b) if way == "o" else (b, a)
    tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq, ack,
                      (5 + len(opts) // 4) << 4, bits, win, 0, 0) + opts
    tcp += b"x" * n
    pseudo = src[0] + dst[0] + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0,
                     src[0], dst[0])
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = dst[2] + src[2] + struct.pack("!H", 0x0800)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind(("p0" if way == "o" else "p1", 0))
    s.send(eth + ip + tcp)


if __name__ == "__main__":
    main()
