"""A minimal XQ node in Python for checks on a real GPU (docs/processes.md protocol).

Usage: mini_node.py SOCKET SUMMARY_JSON [--hold S] [--threshold N] [--batch B] [--window US]
                    [--die-after S] [--run-for S] [--exit-when-idle 1]
--hold S: every slot's gate is held until S seconds after the session's HELLO, then opened
(GATE sent). --die-after S: the node closes everything S seconds after the first connection
(as if killed).
--exit-when-idle 1: the node ends once every session it had has ended.
Writes per-session lines and slot counters (with the highest in_flight seen) to SUMMARY_JSON.
"""
import json, mmap, os, socket, struct, sys, threading, time

args = sys.argv[1:]
sock_path, summary_path = args[0], args[1]
opt = {k: float(v) for k, v in zip(args[2::2], args[3::2])}
hold = opt.get('--hold', 0)
thr, batch, win = int(opt.get('--threshold', 0)), int(opt.get('--batch', 0)), int(opt.get('--window', 0))
SLOTS = 64
t0 = time.monotonic()
sessions = []
lock = threading.Lock()
stop = threading.Event()


def slot_off(i):
    return 64 + i * 128


class Session:
    def __init__(self, conn, n):
        self.conn, self.n, self.lines, self.streams, self.mm, self.ended = conn, n, [], {}, None, False
        self.max_in_flight = {}
        self.peer = struct.unpack('3i', conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]

    def send(self, s):
        try:
            self.conn.sendall((s + '\n').encode())
        except OSError:
            pass

    def run(self):
        buf = b''
        while not stop.is_set():
            try:
                d = self.conn.recv(4096)
            except OSError:
                break
            if not d:
                break
            buf += d
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                self.line(line.decode())
        self.lines.append((round(time.monotonic() - t0, 4), '+EOF'))
        self.ended = True

    def line(self, l):
        self.lines.append((round(time.monotonic() - t0, 4), l))
        f = l.split(' ')
        if f[0] == 'HELLO':
            path = '/tmp/xq-mini-node-%d-%d' % (os.getpid(), self.n)
            with open(path, 'wb') as g:
                g.write(b'\0' * (64 + SLOTS * 128))
            fd = os.open(path, os.O_RDWR)
            self.mm = mmap.mmap(fd, 64 + SLOTS * 128)
            self.mm[0:24] = struct.pack('<IIIIQ', 0x31515158, 1, SLOTS, 128, int(time.monotonic() * 1e9))
            for i in range(SLOTS):
                self.mm[slot_off(i):slot_off(i) + 20] = struct.pack('<5I', 1 if hold else 0, thr, batch, win, 1)
            self.send('OK %s %d 128' % (path, SLOTS))
            if hold:
                threading.Timer(hold, self.open_all).start()
        elif f[0] == 'MAPPED':
            pass
        elif f[0] == 'STREAM':
            self.streams[int(f[1])] = l
            self.send('Q %s %d' % (f[1], 100 + int(f[1])))

    def open_all(self):
        for i in range(SLOTS):
            self.mm[slot_off(i):slot_off(i) + 4] = struct.pack('<I', 0)
        for i in list(self.streams):
            self.send('GATE %d' % i)
        self.lines.append((round(time.monotonic() - t0, 4), '+OPENED'))

    def counters(self, i):
        o = slot_off(i) + 64
        p, fl, la, co, fa, run, est, rdy, seq = struct.unpack('<IIQQQQQQI', self.mm[o:o + 60])
        return dict(pending=p, in_flight=fl, launched=la, completed=co, failed=fa, run_ns=run, estimate_ns=est,
                    ready_since_ns=rdy, completion_seq=seq)


def sampler():
    while not stop.is_set():
        with lock:
            ss = list(sessions)
        for s in ss:
            if s.mm is None:
                continue
            for i in list(s.streams):
                fl = struct.unpack('<I', s.mm[slot_off(i) + 68:slot_off(i) + 72])[0]
                s.max_in_flight[i] = max(s.max_in_flight.get(i, 0), fl)
        time.sleep(0.0002)


def summary():
    out = []
    for s in sessions:
        out.append(dict(peer=s.peer, lines=[l for l in s.lines if not l[1].startswith('WAKE')],
                        wakes=sum(1 for l in s.lines if l[1].startswith('WAKE')),
                        streams={i: dict(line=s.streams[i], max_in_flight=s.max_in_flight.get(i, 0), **s.counters(i))
                                 for i in s.streams}))
    with open(summary_path, 'w') as g:
        json.dump(out, g, indent=1)


try:
    os.unlink(sock_path)
except OSError:
    pass
srv = socket.socket(socket.AF_UNIX)
srv.bind(sock_path)
srv.listen(16)
srv.settimeout(0.05)
threading.Thread(target=sampler, daemon=True).start()
end = t0 + opt.get('--run-for', 60)
die = None
while time.monotonic() < end and not (die and time.monotonic() > die):
    if opt.get('--exit-when-idle') and sessions and all(s.ended for s in sessions):
        break
    try:
        c, _ = srv.accept()
    except socket.timeout:
        continue
    if die is None and '--die-after' in opt:
        die = time.monotonic() + opt['--die-after']
    s = Session(c, len(sessions))
    with lock:
        sessions.append(s)
    threading.Thread(target=s.run, daemon=True).start()
stop.set()
time.sleep(0.01)
summary()
for s in sessions:
    try:
        s.conn.shutdown(socket.SHUT_RDWR)
        s.conn.close()
    except OSError:
        pass
srv.close()
os.unlink(sock_path)
