# Session 103, call 2 (for the next session with a GPU): native time slicing's split between a
# trainer and Triton measured bare (no node, no MPS, no interposer: nothing to carry but the
# repository), Triton's and the trainer's synchronize rate varied, and the same pairs as clients
# of a plain MPS daemon at 100 %, 50/50 and 75/25 (bench/gpu/native-probe.py says why).
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=8 ROUNDS=1 TRAINERS=trainbf16,train32 MPS=1 timeout 580 python3 bench/gpu/native-probe.py $OUT/np; echo "probe rc=$?"
