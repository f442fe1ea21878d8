#!/usr/bin/env python3
"""The attacks of issue 41 ("trust") that bench/hostile/victim-p99.sh runs beside a victim, as an
ordinary local user (started under setpriv by that script). Each runs until SIGTERM; once set up it
writes READY_FILE (so the victim starts against a node that is already under attack).

  attack.py flood    SOCKET READY_FILE  sessions x 64 STREAM lines up to the user's caps
                                        (maxStreamsPerUser 4096: 64 x 64), held, and one session
                                        closed and reopened with its 64 streams every 100 ms
  attack.py floodhold SOCKET READY_FILE the same sessions and streams, held, none reopened
  attack.py hog      SOCKET READY_FILE  connections without HELLO until the node refuses
                                        (maxSessionsPerUser), each reopened when the node closes it,
                                        one more tried every 100 ms
  attack.py connflood PORT READY_FILE   2,000 HTTP connections (past maxConnections 256), each a
                                        POST whose body comes a byte every 0.5 s; reopened when closed
  attack.py slowbody PORT READY_FILE    400 POSTs of a declared 60,000-byte body, a byte every 5 s
                                        (issue 41 item 6); reopened when answered or closed
  attack.py none     - READY_FILE     a control: nothing (the pair's noise, baseline against baseline)
  attack.py spin     - READY_FILE     a control, no attack on XQ: one busy loop (what any local
                                        user may do to a 2-CPU machine)
Prints one line of counts on SIGTERM.
"""
import os, resource, selectors, signal, socket, sys, time

mode, target, ready = sys.argv[1], sys.argv[2], sys.argv[3]
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
count = {"opened": 0, "refused": 0, "closed_by_node": 0, "errors": 0, "streams": 0}

def mark_ready():
    with open(ready, "w") as f:
        f.write(repr(count) + "\n")

def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(target)
    return s

def readlines(s, n, timeout=10.0):
    s.settimeout(timeout)
    got = b""
    while got.count(b"\n") < n:
        b = s.recv(65536)
        if not b:
            break
        got += b
    return got.decode(errors="replace").splitlines()

def flood_session(i):
    s = unix()
    s.sendall(b"HELLO 1 %d flood%d -\n" % (os.getpid(), i))
    ok = readlines(s, 1)
    if not ok or not ok[0].startswith("OK"):
        count["refused"] += 1
        s.close()
        return None
    s.sendall(b"".join(b"STREAM %d a%d 0 0 0 0 s%d\n" % (k, k, k) for k in range(64)))
    lines = readlines(s, 64)
    q = sum(1 for l in lines if l.startswith("Q "))
    count["streams"] += q
    count["opened"] += 1
    if q < 64:
        count["refused"] += 1
    s.setblocking(False)
    return s

def drain(socks):
    for s in list(socks):
        if s is None:
            continue
        try:
            while s.recv(65536):
                pass
            count["closed_by_node"] += 1  # EOF
            socks[socks.index(s)] = None
            s.close()
        except BlockingIOError:
            pass
        except OSError:
            count["closed_by_node"] += 1
            socks[socks.index(s)] = None

if mode in ("flood", "floodhold"):
    socks = []
    for i in range(64):
        try:
            socks.append(flood_session(i))
        except OSError:
            count["errors"] += 1
            socks.append(None)
    mark_ready()
    i = 0
    while not stop and mode == "floodhold":
        time.sleep(0.1)
    while not stop:
        time.sleep(0.1)
        drain(socks)
        k = i % len(socks)
        if socks[k] is not None:
            socks[k].close()
        try:
            socks[k] = flood_session(k)
        except OSError:
            count["errors"] += 1
            socks[k] = None
        i += 1

elif mode == "hog":
    socks = []
    def one():
        s = unix()
        s.setblocking(False)
        time.sleep(0.02)
        try:
            b = s.recv(512)
            if b.startswith(b"ERR") or b == b"":
                count["refused"] += 1
                s.close()
                return None
        except BlockingIOError:
            pass
        count["opened"] += 1
        return s
    while len([s for s in socks if s]) < 1000 and not stop:
        try:
            s = one()
        except OSError:
            count["errors"] += 1
            break
        if s is None:
            break
        socks.append(s)
    mark_ready()
    while not stop:
        time.sleep(0.1)
        drain(socks)
        socks = [s for s in socks if s is not None]
        try:
            s = one()  # one more: refused while the cap holds, taken when one was closed
            if s is not None:
                socks.append(s)
        except OSError:
            count["errors"] += 1

elif mode in ("connflood", "slowbody"):
    port = int(target)
    n, every = (2000, 0.5) if mode == "connflood" else (400, 5.0)
    head = (b"POST /api/v1/policy HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Content-Length: 60000\r\n\r\n{\"na" % port)
    socks = [None] * n
    def one():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        count["opened"] += 1
        return [s, head, 0.0]
    for k in range(n):
        try:
            socks[k] = one()
        except OSError:
            count["errors"] += 1
    mark_ready()
    while not stop:
        t0 = time.monotonic()
        for k in range(n):
            c = socks[k]
            try:
                if c is None:
                    socks[k] = one()
                    continue
                s = c[0]
                try:
                    if s.recv(65536) is not None:
                        # an answer (408, 400, ...) or EOF: the node is done with it; open another
                        count["closed_by_node"] += 1
                        s.close()
                        socks[k] = one()
                        continue
                except BlockingIOError:
                    pass
                if t0 - c[2] >= every:
                    try:
                        if c[1]:
                            sent = s.send(c[1])
                            c[1] = c[1][sent:]
                        else:
                            s.send(b"a")
                        c[2] = t0
                    except BlockingIOError:
                        pass
            except OSError:
                count["errors"] += 1
                try:
                    socks[k][0].close()
                except Exception:
                    pass
                socks[k] = None
        time.sleep(max(0.0, min(every, 0.1) - (time.monotonic() - t0)))
elif mode == "none":  # control: an A/A pair, nothing done
    mark_ready()
    while not stop:
        time.sleep(0.1)
elif mode == "spin":  # control: no attack on XQ, one CPU of this user's kept busy
    mark_ready()
    n = 0
    while not stop:
        n += 1
    count["opened"] = n
else:
    sys.exit("unknown mode " + mode)
print(mode, count, flush=True)
