#!/usr/bin/env python3
"""Whether a latency-critical tenant's slow requests were slow on its host, and if so whether its
thread ran on a slow CPU or waited in its calls.

Usage: python3 bench/gpu/host-speed.py [--slow 1.5] [--mix TEXT] DIR...

DIR is a mix run's results (bench/gpu/mix-run.sh's directory, or a docs/results call directory):
its logs-N/MIX/MODE/TENANT.json files, or the logs-N.tgz that holds them. Each latency-critical
(LC) tenant's report gives, per request: its latency (lat_ms), the time until its last launch was
issued (host_ms), its thread's CPU time over that stretch (host_cpu_ms) and, since session 123, how
fast its thread ran just before the request (spin_per_us: turns of the tenant's release spin, a
pure-Python loop, per microsecond over its last ~1 ms; -1 where the spin was too short to tell) and,
under the interposer, its time inside the driver's launch calls (launch_ms).

A request is slow when its latency is over --slow x the tenant's median in that mode. A slow
request is host-made when its host part (until the last launch) is at least 3/4 of it: the device
had nothing of it left to run once the host was done. For each mix, mode and LC tenant this prints:

- the slow requests, how many of them were host-made, and of those how many had the thread on the
  CPU all along (CPU time at least 0.9 of the host part: it computed or spun, not slept);
- where the run had the paired reading (mix-N.json beside the logs), how many of those requests
  fell in its shared half (the company running) and in its alone half (the company stopped), each
  out of the half's requests: host-made slowness as frequent with the company stopped is the
  host's own, not the company's; and, against one yardstick for every mode, the requests whose host
  part was over --slow x its median with the company stopped, in each half;
- the host part's median in the host-made slow requests against in the requests that were not
  slow (how much longer the host took);
- where recorded (xq modes since session 123: the interposer counts it with XQ_TIME_LAUNCHES=1), the
  thread's time inside the driver's launch calls in those requests against in the rest, and what
  share of the host part's growth it makes: near all of it says the launches waited in the driver
  (a full launch queue, the device behind), little of it says the thread's own work between
  launches took longer;
- where recorded (with the above), the share of the requests' launches that took the interposer's
  lean path (nothing could hold them: the top of the device) in those and in the rest: fewer in
  the slow ones says the node's settings sent the tenant's launches through the gate meanwhile;
- where recorded, the release spin's rate before the host-made slow requests against before the
  others. A rate as high there as elsewhere says the CPU ran at its usual speed and the thread's
  extra time went in its calls (a launch that waits in the driver, a lock); a rate well below says
  the CPU itself ran slow (a busy neighbour on the same physical core, a clock step).
"""
import argparse
import json
import statistics

import mixlogs


def reports(d):
    """{(run, mix, mode): {tenant: report}} of the LC tenants under d."""
    out = {}
    for run, mix, mode, name, text in mixlogs.walk(d, ('.json',)):
        try:
            r = json.loads(text.strip().splitlines()[-1])
        except (ValueError, IndexError):
            continue
        if r.get('role') == 'lc' and r.get('lat_ms'):
            out.setdefault((run, mix, mode), {})[name[:-5]] = r
    return out


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, unit=''):
    return '-' if x is None else ('%.2f%s' % (x, unit))


def tenant_line(r, slow_factor, stops_ms=None):
    lat = r['lat_ms']
    host = r.get('host_ms') or []
    cpu = r.get('host_cpu_ms') or []
    spin = r.get('spin_per_us') or []
    n = len(lat)
    if len(host) != n or not host or all(h < 0 for h in host):
        return None
    m = statistics.median(lat)
    slow = [i for i in range(n) if lat[i] > slow_factor * m]
    hostmade = [i for i in slow if host[i] >= 0 and host[i] >= 0.75 * lat[i]]
    on_cpu = [i for i in hostmade if i < len(cpu) and cpu[i] >= 0 and cpu[i] >= 0.9 * host[i]]
    rest = [i for i in range(n) if i not in set(slow) and host[i] >= 0]
    h_slow = med([host[i] for i in hostmade])
    h_rest = med([host[i] for i in rest])
    s = '%d of %d slow (over %.1f x its median %.1f ms), %d host-made, %d of those on the CPU all along; host part P50 %s in those, %s in the rest' % (
        len(slow), n, slow_factor, m, len(hostmade), len(on_cpu), fmt(h_slow, ' ms'), fmt(h_rest, ' ms'))
    if stops_ms and r.get('t_ms') and len(r['t_ms']) == n:
        sh, al = mixlogs.halves(r, stops_ms)
        hm = set(hostmade)
        s += '; host-made slow with the company running %d of %d requests, stopped %d of %d' % (
            sum(1 for i in sh if i in hm), len(sh), sum(1 for i in al if i in hm), len(al))
        ha = med([host[i] for i in al if host[i] >= 0])
        if ha:
            over = [i for i in range(n) if host[i] > slow_factor * ha]
            s += '; host part over %.1f x its P50 with the company stopped (%.2f ms): running %d of %d, stopped %d of %d' % (
                slow_factor, ha, sum(1 for i in sh if i in set(over)), len(sh), sum(1 for i in al if i in set(over)), len(al))
    drv = r.get('launch_ms') or []
    if len(drv) == n:
        d_slow = med([drv[i] for i in hostmade])
        d_rest = med([drv[i] for i in rest])
        s += '; inside the driver\'s launch calls P50 %s in those, %s in the rest' % (fmt(d_slow, ' ms'), fmt(d_rest, ' ms'))
        if d_slow is not None and d_rest is not None and h_slow is not None and h_rest is not None and h_slow > h_rest:
            s += ' (%.0f %% of the host part\'s growth)' % (100.0 * (d_slow - d_rest) / (h_slow - h_rest))
    nl, ln = r.get('launch_n') or [], r.get('lean_n') or []
    if len(nl) == n and len(ln) == n:
        def share(ix):
            a = sum(nl[i] for i in ix)
            return 100.0 * sum(ln[i] for i in ix) / a if a else None
        s += '; launches lean %s in those, %s in the rest' % (fmt(share(hostmade), ' %'), fmt(share(rest), ' %'))
    if len(spin) == n:
        sp_slow = med([spin[i] for i in hostmade if spin[i] > 0])
        sp_rest = med([spin[i] for i in rest if spin[i] > 0])
        if sp_slow is not None and sp_rest:
            ratio = sp_slow / sp_rest
            verdict = 'the CPU ran slow' if ratio < 0.8 else 'the CPU at its usual speed: the time went in its calls'
            s += '; release spin %.1f /us before those, %.1f before the rest (%.2f x: %s)' % (sp_slow, sp_rest, ratio, verdict)
        else:
            s += '; release spin: too few readings'
    return s


def report(d, slow_factor, mix_filter):
    lines = []
    st = mixlogs.stops(d)
    for (run, mix, mode), tenants in sorted(reports(d).items()):
        if mix_filter and mix_filter not in mix:
            continue
        for name, r in sorted(tenants.items()):
            s = tenant_line(r, slow_factor, st.get((run, mix, mode, name)))
            if s:
                lines.append('run %s  %s  %s  %s: %s' % (run, mix, mode, name, s))
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--mix', default='', help='only mixes whose name contains this')
    a = mixlogs.parse(p)
    out = []
    for d in a.dirs:
        out += report(d, a.slow, a.mix)
    print('\n'.join(out) if out else 'no latency-critical report with host parts under %s' % ' '.join(a.dirs))


if __name__ == '__main__':
    main()
