# Session 113, call 2: chat's first GPU run (session 112's call 2, short): chat bare, then two chat
# mixes, native sharing against the defaults. (AB=1 adds chat's launch path, xq-ab; CHAT_MIXES and
# TMO as in bench/gpu/s112-call2.sh.)
AB=${AB:-0} CHAT_MIXES="${CHAT_MIXES:-custom=chat+trainbf16;custom=chat+gemm+triton}" TMO=${TMO:-200} sh bench/gpu/s112-call2.sh
