"""Does a host wait wait? Session 115's probe: after each of torch.cuda.synchronize(),
torch.cuda.current_stream().synchronize(), an event's synchronize() and a .item(), an event
recorded after the work must read done (Event.query()). Under ./xq run with XQ_LOG=3 the
interposer also names the driver entry points each wait was looked up as."""
import sys, time, torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
x = torch.randn(2048, 2048, device="cuda")
w = torch.randn(2048, 2048, device="cuda")
early = {"device": 0, "stream": 0, "event": 0, "item": 0}
took = {k: 0.0 for k in early}
for i in range(n):
    for how in early:
        for _ in range(8):
            x = torch.tanh(x @ w * 1e-3)
        done = torch.cuda.Event()
        done.record()
        t0 = time.perf_counter()
        if how == "device":
            torch.cuda.synchronize()
        elif how == "stream":
            torch.cuda.current_stream().synchronize()
        elif how == "event":
            done.synchronize()
        else:
            float(x[0, 0].item())
        took[how] += time.perf_counter() - t0
        if not done.query():
            early[how] += 1
print("sync-probe: %d rounds; returned before the work was done: %s; ms a wait: %s" % (
    n, early, {k: round(v * 1000 / n, 3) for k, v in took.items()}), flush=True)
