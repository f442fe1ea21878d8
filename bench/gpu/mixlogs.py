"""The files a mix run leaves per mix and mode (bench/gpu/mix-run.sh's logs-N/MIX/MODE/NAME, kept as
they are or packed in logs-N.tgz in a docs/results call directory), for the analysis scripts beside
this one."""
import glob
import json
import os
import re
import tarfile

_PATH = re.compile(r'logs-(\d+)/([^/]+)/([^/]+)/([^/]+)$')


def walk(d, suffixes):
    """(run, mix, mode, name, text) for each file under d's logs-N/MIX/MODE/ whose name ends with one
    of suffixes (a tuple), read from the files themselves or from logs-N.tgz."""
    for p in glob.glob(os.path.join(d, 'logs-*', '*', '*', '*')):
        m = _PATH.search(p)
        if m and p.endswith(suffixes) and os.path.isfile(p):
            with open(p) as f:
                yield m.groups() + (f.read(),)
    for t in glob.glob(os.path.join(d, 'logs-*.tgz')):
        with tarfile.open(t) as tf:
            for member in tf.getmembers():
                m = _PATH.search(member.name)
                if m and member.isfile() and member.name.endswith(suffixes):
                    yield m.groups() + (tf.extractfile(member).read().decode(),)


def stops(d):
    """{(run, mix, mode, tenant): [[from_ms, to_ms], ...]}: the paired reading's stops of the
    best-effort tenants, from d's mix-N.json (none where the run had no pause)."""
    out = {}
    for p in glob.glob(os.path.join(d, 'mix-*.json')):
        m = re.search(r'mix-(\d+)\.json$', p)
        try:
            with open(p) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        for mix in j.get('mixes', []):
            for t in mix.get('tenants', []):
                for mode, pr in (t.get('paired') or {}).items():
                    if isinstance(pr, dict) and pr.get('stops_ms'):
                        out[(m.group(1), mix.get('name'), mode, t.get('name'))] = pr['stops_ms']
    return out


def halves(r, stops_ms):
    """Request indices in the shared half (company running) and the alone half (company stopped), as
    the scenario's paired reading splits them: 250 ms after a stop or a continue counts to neither."""
    shared, alone = [], []
    for i, (t0, lat) in enumerate(zip(r['t_ms'], r['lat_ms'])):
        t1 = t0 + lat
        if any(a + SETTLE_MS <= t0 and t1 <= b for a, b in stops_ms):
            alone.append(i)
        elif not any(t1 >= a and t0 <= b + SETTLE_MS for a, b in stops_ms):
            shared.append(i)
    return shared, alone


SETTLE_MS = 250


def parse(p, slow=True):
    """The analysis scripts' command line: --slow (a multiple of a tenant's median, over 1) where
    slow, and one or more result directories, each checked to be one; returns the parsed args."""
    if slow:
        p.add_argument('--slow', type=float, default=1.5, help="a request is slow over this times its tenant's median (default 1.5)")
    p.add_argument('dirs', nargs='+')
    a = p.parse_args()
    if slow and a.slow <= 1.0:
        p.error('--slow %s: must be over 1 (a multiple of the median latency)' % a.slow)
    for d in a.dirs:
        if not os.path.isdir(d):
            p.error('%s: not a directory (give a mix run\'s results folder)' % d)
    return a
