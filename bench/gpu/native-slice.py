#!/usr/bin/env python3
"""Does native time slicing split the device by how often each process waits on it? No XQ at all.

Usage: python3 bench/gpu/native-slice.py OUTDIR [--seconds S] [--syncs 4,16,64] [--trainer trainbf16]
           [--three] [--python PY] [--tenant PATH] [-- TENANT_ARGS...]

The hypothesis (docs/processes.md, "What the cut aims at, and a reference it cannot have"): under
the GPU's own time slicing, a process that waits on the device (a synchronize) after s ms of work
gives the device up at each wait and gets it back only after each other busy process's slice T,
so per round it runs min(s, T) while a process that seldom waits runs T: its share of its rate
alone is min(s, T) / (sum of the others' T + min(s, T)). On the H100 the recorded runs of Triton's
loop (16 steps a synchronize) beside trainers fit s / T = 0.62 in two-process mixes and predict
its 0.24 in three-process ones, which is what was found.

This runs, natively and one after another: the trainer alone, Triton alone at each --syncs value
(--sync-every of tenant.py), each pair trainer + Triton started together (READY, then GO to both),
and with --three also a GEMM process alone and each trio trainer + GEMM + Triton. For each it keeps
the tenants' JSON lines (OUTDIR/NAME.json) and prints per Triton setting: s (Triton's median
interval between synchronizes alone, ms), each one's share of its rate alone in company, the
ratio of Triton's share to the trainer's, and the T that ratio implies (T = s x kept_trainer /
kept_triton, where s < T); with --three the trio's shares beside what the pairs' median T predicts.
If the hypothesis holds, Triton's share rises with --syncs until s passes T and the implied T
stays about the same across the settings.

TENANT_ARGS go to every tenant (e.g. -- --device cpu --smoke to check the logic on a CPU).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def start(py, tenant, kind, seconds, extra, sync=None):
    cmd = [py, tenant, '--kind', kind, '--seconds', str(seconds), '--wait-go'] + extra
    if sync is not None:
        cmd += ['--sync-every', str(sync)]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.abspath(tenant)))


def together(py, tenant, specs, seconds, extra, outdir, name):
    """specs: [(label, kind, sync)]; starts them all, GO once every one is READY; returns {label: result}."""
    procs = [(label, start(py, tenant, kind, seconds, extra, sync)) for label, kind, sync in specs]
    for label, p in procs:
        line = p.stdout.readline().strip()
        if line != 'READY':
            for _, q in procs:
                q.kill()
            raise SystemExit('%s: %s did not say READY (%r): %s' % (name, label, line, p.stderr.read()[-2000:]))
    for _, p in procs:
        p.stdin.write('GO\n')
        p.stdin.flush()
    out = {}
    for label, p in procs:
        res = None
        for line in p.stdout:
            line = line.strip()
            if line.startswith('{'):
                res = json.loads(line)
        err = p.stderr.read()
        p.wait()
        if res is None or 'error' in res:
            raise SystemExit('%s: %s gave no result (%r): %s' % (name, label, res, err[-2000:]))
        out[label] = res
    with open(os.path.join(outdir, name + '.json'), 'w') as f:
        json.dump(out, f)
    print('%-28s %s' % (name, ', '.join('%s %.2f it/s' % (k, v['it_per_s']) for k, v in out.items())), flush=True)
    return out


def interval(res):
    s = res.get('sync_ms') or []
    gaps = [b - a for a, b in zip(s, s[1:])]
    return statistics.median(gaps) if gaps else float('nan')


def main(argv):
    extra = []
    if '--' in argv:
        i = argv.index('--')
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('outdir')
    ap.add_argument('--seconds', type=float, default=8.0)
    ap.add_argument('--syncs', default='4,16,64')
    ap.add_argument('--trainer', default='trainbf16')
    ap.add_argument('--three', action='store_true')
    ap.add_argument('--python', default=sys.executable)
    ap.add_argument('--tenant', default=os.path.join(HERE, '..', 'torch', 'family', 'tenant.py'))
    a = ap.parse_args(argv)
    try:
        syncs = [int(x) for x in a.syncs.split(',')]
    except ValueError:
        raise SystemExit('--syncs %r: whole numbers >= 1, comma-separated (e.g. 4,16,64)' % a.syncs)
    if not syncs or min(syncs) < 1:
        raise SystemExit('--syncs %r: whole numbers >= 1, comma-separated (e.g. 4,16,64)' % a.syncs)
    os.makedirs(a.outdir, exist_ok=True)
    run = lambda specs, name: together(a.python, a.tenant, specs, a.seconds, extra, a.outdir, name)
    alone = {'trainer': run([('trainer', a.trainer, None)], 'alone-' + a.trainer)['trainer']}
    if a.three:
        alone['gemm'] = run([('gemm', 'gemm', None)], 'alone-gemm')['gemm']
    rows = []
    for se in syncs:
        tri = run([('triton', 'triton', se)], 'alone-triton-sync%d' % se)['triton']
        pair = run([('trainer', a.trainer, None), ('triton', 'triton', se)], 'pair-sync%d' % se)
        trio = run([('trainer', a.trainer, None), ('gemm', 'gemm', None), ('triton', 'triton', se)],
                   'trio-sync%d' % se) if a.three else None
        rows.append((se, tri, pair, trio))
    print()
    print('| Triton sync every | s alone (ms) | pair: trainer kept | Triton kept | Triton / trainer | implied T (ms) |')
    print('|---|---|---|---|---|---|')
    ts = []
    for se, tri, pair, _ in rows:
        s = interval(tri)
        ko = pair['trainer']['it_per_s'] / alone['trainer']['it_per_s']
        kt = pair['triton']['it_per_s'] / tri['it_per_s']
        t = s * ko / kt if kt > 0 else float('nan')
        if kt < ko:
            ts.append(t)
        print('| %d | %.2f | %.2f | %.2f | %.2f | %s |' % (se, s, ko, kt, kt / ko if ko > 0 else float('nan'),
                                                        '%.2f' % t if kt < ko else '- (s past T)'))
    T = statistics.median(ts) if ts else float('nan')
    # the pairs' median T, for a call that sets the node's slice from it (bench/gpu/s113-call1.sh)
    with open(os.path.join(a.outdir, 'slice.json'), 'w') as f:
        json.dump({'implied_slice_ms': [round(t, 3) for t in ts], 'median_slice_ms': None if T != T else round(T, 3)}, f)
    print()
    print('median implied T: %s ms (%s)' % ('%.2f' % T if T == T else '-', os.path.join(a.outdir, 'slice.json')))
    if a.three:
        print()
        print('trios, against the model with T = %.2f ms (the pairs\' median):' % T)
        print('| Triton sync every | trainer kept | GEMM kept | Triton kept | model: others | model: Triton |')
        print('|---|---|---|---|---|---|')
        for se, tri, _, trio in rows:
            s = interval(tri)
            k = {n: trio[n]['it_per_s'] / (alone[n] if n != 'triton' else tri)['it_per_s'] for n in trio}
            m = min(s, T)
            print('| %d | %.2f | %.2f | %.2f | %.2f | %.2f |' % (se, k['trainer'], k['gemm'], k['triton'],
                                                              T / (2 * T + m), m / (2 * T + m)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
