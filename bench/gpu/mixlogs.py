"""The files a mix run leaves per mix and mode (bench/gpu/mix-run.sh's logs-N/MIX/MODE/NAME, kept as
they are or packed in logs-N.tgz in a docs/results call directory), for the analysis scripts beside
this one."""
import glob
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
