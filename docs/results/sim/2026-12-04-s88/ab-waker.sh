#!/bin/bash
# alternate: without waker, with waker; N rounds
cd /work/main
for r in $(seq 8); do
  for w in no yes; do
    [ $w = yes ] && { /tmp/pf/waker & wp=$!; }
    ./xq bench fixed-priority --json /tmp/pf/ab-$w-$r.json > /tmp/pf/ab-$w-$r.txt 2>&1
    [ $w = yes ] && kill $wp
    python3 -c "
import json; d=json.load(open('/tmp/pf/ab-$w-$r.json'))
print('$w $r', ' '.join('%s:%s/%s'%(m['mode'],m.get('fg_slow_submit_cpu_us'),m.get('fg_p99_over_standalone')) for m in d['modes']))" 2>&1
  done
done
