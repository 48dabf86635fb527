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

"""A steady UDP stream, counted at both ends, for the BPF datapath's
restart tests.

    bpf-udp-stream.py recv PORT FILE
        counts the distinct sequence numbers received on UDP PORT and
        keeps FILE up to date with their number (rewritten at most every
        100 ms, and when a datagram arrives after a pause), and FILE.gaps
        with the numbers below the highest received that are missing (lost,
        or still on their way: the first datagram of a flow goes through
        ovs-vswitchd, and the next ones may pass it in BPF)
    bpf-udp-stream.py send ADDR PORT RATE STOP FILE
        sends numbered datagrams to ADDR:PORT at RATE per second until the
        file STOP exists, then writes the number sent into FILE; FILE.start
        has the time (UTC) of number 0, which sends number N about N / RATE
        seconds later, to match a lost datagram with the log
    bpf-udp-stream.py send-one ADDR PORT
        sends one datagram
"""

import os
import socket
import struct
import sys
import time


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def recv(port, path):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sock.bind(("0.0.0.0", port))
    sock.settimeout(0.1)
    seen = set()
    highest = -1
    written = -1
    last_write = 0.0
    write_atomically(path, "0\n")
    write_atomically(path + ".gaps", "")
    while True:
        try:
            data, _ = sock.recvfrom(2048)
            if len(data) >= 8:
                n = struct.unpack("!Q", data[:8])[0]
                seen.add(n)
                highest = max(highest, n)
        except socket.timeout:
            pass
        now = time.monotonic()
        if len(seen) != written and now - last_write >= 0.1:
            gaps = (sorted(set(range(highest + 1)) - seen)
                    if len(seen) != highest + 1 else [])
            write_atomically(path + ".gaps",
                             "".join("%d\n" % n for n in gaps))
            write_atomically(path, "%d\n" % len(seen))
            written = len(seen)
            last_write = now


def send(addr, port, rate, stop, path):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    now = time.time()
    start = time.monotonic()
    write_atomically(path + ".start",
                     time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
                     + ".%03dZ\n" % (int(now * 1000) % 1000))
    n = 0
    while not os.path.exists(stop):
        # Paced by the clock: after a delay, catch up at once.
        delay = start + n / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        try:
            sock.sendto(struct.pack("!Q", n) + b"x" * 56, (addr, port))
        except OSError:
            # The test's namespace is going away.
            break
        n += 1
    write_atomically(path, "%d\n" % n)


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "recv":
        recv(int(args[1]), args[2])
    elif len(args) == 6 and args[0] == "send":
        send(args[1], int(args[2]), float(args[3]), args[4], args[5])
    elif len(args) == 3 and args[0] == "send-one":
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
            struct.pack("!Q", 0) + b"x" * 56, (args[1], int(args[2])))
    else:
        sys.stderr.write(__doc__)
        sys.exit(1)


if __name__ == "__main__":
    main()
