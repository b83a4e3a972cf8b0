#!/usr/bin/env python3
"""dns_server.py -- a tiny UDP DNS server for test_dns.sh (standard library
only). Usage: dns_server.py ADDR PORT LOG NAME=IP[,IP...]...
Answers A and AAAA queries for the NAMEs given with their IPv4 and IPv6
addresses (ttl 60 s), and drops every other query without a word, as a
server that does not answer. Appends "NAME TYPE" to LOG for each query
and prints "ready" once it listens. Runs until killed."""
import ipaddress
import socket
import struct
import sys

addr, port, logpath = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names = {}
for arg in sys.argv[4:]:
    name, _, ips = arg.partition("=")
    names[name.lower().rstrip(".")] = [ipaddress.ip_address(i) for i in ips.split(",") if i]

log = open(logpath, "a", buffering=1)
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((addr, port))
print("ready", flush=True)


def question(msg):
    """The question's name, type, and where it ends."""
    labels, i = [], 12
    while msg[i]:
        n = msg[i]
        labels.append(msg[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    qtype = struct.unpack("!H", msg[i + 1:i + 3])[0]
    return ".".join(labels).lower(), qtype, i + 5


while True:
    msg, peer = s.recvfrom(4096)
    if len(msg) < 17:
        continue
    try:
        name, qtype, end = question(msg)
    except (IndexError, struct.error):
        continue
    log.write("%s %s\n" % (name, {1: "A", 28: "AAAA"}.get(qtype, qtype)))
    if name not in names:
        continue  # dropped: the client waits for its timeout
    want = 4 if qtype == 1 else 6 if qtype == 28 else 0
    answers = [ip for ip in names[name] if ip.version == want]
    head = msg[:2] + struct.pack("!HHHHH", 0x8180, 1, len(answers), 0, 0)
    body = msg[12:end]
    for ip in answers:
        body += struct.pack("!HHHIH", 0xC00C, qtype, 1, 60, len(ip.packed)) + ip.packed
    s.sendto(head + body, peer)
