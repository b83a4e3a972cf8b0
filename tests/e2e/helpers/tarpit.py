#!/usr/bin/env python3
"""tarpit.py -- an address where TCP connects hang, for test_dns.sh's Happy
Eyeballs case. Usage: tarpit.py ADDR PORT -- listens on ADDR:PORT with a
backlog of 0 and never accepts, after filling its accept queue itself, so
that the kernel drops further SYNs and a client's connect waits (as at an
address that does not answer). Prints "ready", runs until killed."""
import socket
import sys
import threading

addr, port = sys.argv[1], int(sys.argv[2])
l = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
l.bind((addr, port))
l.listen(0)
held = []
for _ in range(2):  # the accept queue is full after these
    s = socket.socket(l.family)
    s.setblocking(False)
    s.connect_ex((addr, port))
    held.append(s)
print("ready", flush=True)
threading.Event().wait()
