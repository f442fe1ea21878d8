#!/bin/sh
# interleaved A/B on this VM: ./xq bench fixed-priority, c0659dd (old) vs HEAD (new), in turn
for r in 1 2 3 4; do
  for b in old new; do
    [ $((r % 2)) = 0 ] && { [ $b = old ] && b=new || b=old; }
    d=/tmp/oldxq; [ $b = new ] && d=/work/main
    s=$(date +%s)
    (cd $d && ./xq bench fixed-priority > /work/simab/run$r-$b.txt 2>&1)
    echo "run $r $b rc=$? $(( $(date +%s) - s )) s" >> /work/simab/log.txt
  done
done
