#!/usr/bin/env python3
"""A control for bench/hostile/victim-p99.sh's connection flood: a listener that is not an XQ node.
It accepts every connection on 127.0.0.1:PORT and holds it, never reading or answering, until
SIGTERM. The connection flood's client aimed at it (victim-p99.sh's 'connpen') costs the machine
what the client and the kernel cost, without any node's work: what the flood costs a victim beyond
that is the node's doing.

  pen.py PORT READY_FILE
"""
import resource, signal, socket, sys

port, ready = int(sys.argv[1]), sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(4096)
with open(ready, "w") as f:
    f.write("listening\n")
held = []
while True:
    c, _ = s.accept()
    held.append(c)
