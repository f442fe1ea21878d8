#!/usr/bin/env python3
# What each best-effort process kept of its rate alone under native sharing, estimated from a
# recorded xq run (no latency-critical tenant): its rate alone is its xq rate over the share the
# measured cut says it kept (median of the last four weighings), native-kept = native rate / that.
# Usage (repository root): python3 bench/gpu/native-split.py  (reads docs/results/h*/2026-12-0*)
import json, glob, gzip, re, os
def rd(p):
    return (gzip.open(p,'rt') if p.endswith('.gz') else open(p)).read()
for jf in sorted(glob.glob('docs/results/h*/2026-12-0*/**/mix-*.json', recursive=True)):
    try: d=json.load(open(jf))
    except Exception: continue
    for m in d.get('mixes',[]):
        ts=m['tenants']
        if any(t.get('paired') for t in ts) or len(ts)<2: continue
        rates=[t.get('it_per_s') or {} for t in ts]
        if not all('native' in r and 'xq' in r for r in rates): continue
        base=jf[:-5]
        txt=[p for p in (base+'.txt', base+'.txt.gz') if os.path.exists(p)]
        if not txt: continue
        s=rd(txt[0])
        kept=re.findall(r'pids \[([^\]]*)\], rates kept alone \[([^\]]*)\].*?sixteenths \[([^\]]*)\]', s)
        if not kept: continue
        # pid order -> names
        pids=[p.strip() for p in kept[-1][0].split(',')]
        names={}
        for p in pids:
            mm=re.search(r'(\w+), pid '+p+r'\b', s)
            if not mm:
                pr=glob.glob(os.path.join(os.path.dirname(jf),'procs-report-*.txt*'))
                for q in pr:
                    mm=re.search(r'(\w+), pid '+p+r'\b', rd(q))
                    if mm: break
            names[p]=mm.group(1) if mm else '?'
        # median of last 4 kept readings
        ks=[[float(x) for x in k[1].split(',')] for k in kept[-4:]]
        k=[sorted(c)[len(c)//2] for c in zip(*ks)]
        out=[]
        for p,kk in zip(pids,k):
            t=[t for t in ts if t['name']==names[p] or t['name'].startswith(names[p])]
            if not t: out.append(f'{names[p]}?'); continue
            r=t[0]['it_per_s']; nk=r['native']*kk/r['xq'] if r['xq'] else float('nan')
            out.append(f"{names[p]} kept {kk:.2f} xq/nat {r['xq']/r['native']:.2f} native-kept {nk:.2f}")
        print(jf.split('results/')[1][:45], m['name'], kept[-1][2], '|', '; '.join(out))
