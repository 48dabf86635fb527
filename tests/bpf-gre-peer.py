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

"""The far end of a GRE tunnel (Ethernet over GRE over IPv4 or IPv6, RFC
2784 and 2890) for the BPF datapath's tests, on a kernel without a GRE
driver: a TAP device is the tunnel's interface, and a raw IP socket of
protocol GRE carries its frames to and from the remote endpoint.

    bpf-gre-peer.py run TAP REMOTE KEY [csum]
        creates TAP device TAP (bring it up and address it once FILE
        TAP.ready exists), sends each frame written to it to REMOTE (an
        IPv4 or IPv6 address) in a GRE header with key KEY (and a checksum
        with "csum"), and writes to it the inner frame of each GRE packet
        from REMOTE with key KEY and a right checksum if it has one;
        counts the others in TAP.bad, rewritten on each.
    bpf-gre-peer.py send REMOTE CASE
        sends one bad GRE packet to REMOTE: CASE "routing" (the R flag),
        "csum" (a wrong checksum) or "short" (a GRE header with a key
        flag but no key).

The kernel answers no GRE packet with an ICMP error while a raw socket
of the protocol is open, and builds the outer IP header itself."""

import fcntl
import os
import select
import socket
import struct
import sys

TUNSETIFF = 0x400454ca
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
GRE_CSUM = 0x8000
GRE_KEY = 0x2000
GRE_SEQ = 0x1000
ETH_P_TEB = 0x6558
IPPROTO_GRE = 47


def csum(data):
    """The Internet checksum of 'data' (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def gre_header(key, with_csum, payload):
    flags = GRE_KEY | (GRE_CSUM if with_csum else 0)
    hdr = struct.pack("!HH", flags, ETH_P_TEB)
    if with_csum:
        hdr += b"\0\0\0\0"
    hdr += struct.pack("!I", key)
    if with_csum:
        c = csum(hdr + payload)
        hdr = hdr[:4] + struct.pack("!H", c) + hdr[6:]
    return hdr


def parse_gre(gre):
    """Returns (key, inner frame) of GRE packet 'gre', or None if it is
    not Ethernet over GRE with good flags and checksum."""
    if len(gre) < 4:
        return None
    flags, proto = struct.unpack("!HH", gre[:4])
    if flags & ~(GRE_CSUM | GRE_KEY | GRE_SEQ) or proto != ETH_P_TEB:
        return None
    ofs = 4
    if flags & GRE_CSUM:
        if csum(gre) != 0:
            return None
        ofs += 4
    key = None
    if flags & GRE_KEY:
        if len(gre) < ofs + 4:
            return None
        key = struct.unpack("!I", gre[ofs:ofs + 4])[0]
        ofs += 4
    if flags & GRE_SEQ:
        ofs += 4
    if len(gre) < ofs + 14:
        return None
    return key, gre[ofs:]


def gre_socket(remote):
    family = socket.AF_INET6 if ":" in remote else socket.AF_INET
    return family, socket.socket(family, socket.SOCK_RAW, IPPROTO_GRE)


def run(tap_name, remote, key, with_csum):
    tap = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tap, TUNSETIFF,
                struct.pack("16sH", tap_name.encode(), IFF_TAP | IFF_NO_PI))
    family, sock = gre_socket(remote)
    with open(tap_name + ".ready", "w"):
        pass
    bad = 0
    while True:
        ready, _, _ = select.select([tap, sock], [], [])
        if tap in ready:
            frame = os.read(tap, 65536)
            try:
                sock.sendto(gre_header(key, with_csum, frame) + frame,
                            (remote, 0))
            except OSError:
                # No route or source address yet (IPv6 still checking
                # for duplicates): dropped, as a GRE device would.
                pass
        if sock in ready:
            data, addr = sock.recvfrom(65536)
            if addr[0] != remote:
                continue
            if family == socket.AF_INET:
                # A raw IPv4 socket receives the IP header too.
                data = data[(data[0] & 0xf) * 4:]
            parsed = parse_gre(data)
            if parsed is None or parsed[0] != key:
                bad += 1
                with open(tap_name + ".bad", "w") as f:
                    f.write("%d\n" % bad)
                continue
            try:
                os.write(tap, parsed[1])
            except OSError:
                # The TAP device is not up yet: dropped, as by a device
                # that is down.
                pass


def send(remote, case):
    frame = bytes.fromhex("0a0000000002" "0a0000000001" "0800") + bytes(46)
    if case == "routing":
        gre = struct.pack("!HHI", GRE_KEY | 0x4000, ETH_P_TEB, 0x123) + frame
    elif case == "csum":
        gre = gre_header(0x123, True, frame) + frame
        gre = gre[:4] + struct.pack("!H", (csum(gre) ^ 0x5555)) + gre[6:]
    elif case == "short":
        gre = struct.pack("!HH", GRE_KEY, ETH_P_TEB)
    else:
        raise SystemExit("unknown case %s" % case)
    _, sock = gre_socket(remote)
    sock.sendto(gre, (remote, 0))


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4], 0),
            len(sys.argv) > 5 and sys.argv[5] == "csum")
    elif len(sys.argv) == 4 and sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
