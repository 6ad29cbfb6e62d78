"""What collectives do to version counters and graphs, printed as JSON, for one library.

``python _versions_job.py torch RANK PORT`` runs it on torch's gloo backend (two such
processes make a world of 2); under ``mpiexec -n 2``, ``python _versions_job.py
retrograd`` runs it on retrograd. tests/distributed/test_distributed.py compares the two (Note
[Collectives and versions] in retrograd/distributed/collectives.py).
"""

from __future__ import annotations

import json
import sys
import warnings


def observe(torch, dist) -> dict:
    rank, n = dist.get_rank(), dist.get_world_size()
    R = dist.ReduceOp
    seen: dict = {}

    def bump(name, fn, t):
        v0 = t._version
        fn(t)
        seen[name] = t._version - v0

    def graph(name, fn, t):
        try:
            fn(t)
            seen[name] = [t._version, t.grad_fn.name() if t.grad_fn is not None else None]
        except RuntimeError as e:
            seen[name] = "error: " + str(e).split(".")[0]

    ones, zeros = torch.ones, torch.zeros
    bump("all_reduce SUM", lambda t: dist.all_reduce(t), ones(4))
    bump("all_reduce SUM int64", lambda t: dist.all_reduce(t), ones(4, dtype=torch.int64))
    bump("all_reduce SUM async", lambda t: dist.all_reduce(t, async_op=True).wait(), ones(4))
    bump("all_reduce AVG", lambda t: dist.all_reduce(t, op=R.AVG), ones(4))
    bump("all_reduce MAX", lambda t: dist.all_reduce(t, op=R.MAX), ones(4))
    bump("all_reduce PRODUCT", lambda t: dist.all_reduce(t, op=R.PRODUCT), ones(4))
    bump("all_reduce SUM of a 2-D tensor", lambda t: dist.all_reduce(t), ones(2, 3))
    bump("reduce", lambda t: dist.reduce(t, 0), ones(4))
    bump("reduce AVG", lambda t: dist.reduce(t, 0, op=R.AVG), ones(4))
    bump("broadcast", lambda t: dist.broadcast(t, 0), ones(4))
    outs = [zeros(4) for _ in range(n)]
    bump("all_gather (an output)", lambda t: dist.all_gather(outs, ones(4)), outs[0])
    bump("reduce_scatter_tensor",
         lambda t: dist.reduce_scatter_tensor(t, ones(4 * n)), zeros(4))
    bump("reduce_scatter", lambda t: dist.reduce_scatter(t, [ones(4)] * n), zeros(4))
    bump("reduce_scatter_tensor AVG",
         lambda t: dist.reduce_scatter_tensor(t, ones(4 * n), op=R.AVG), zeros(4))
    bump("scatter", lambda t: dist.scatter(t, [ones(4)] * n if rank == 0 else None, src=0),
         zeros(4))
    outs = [zeros(4) for _ in range(n)]
    bump("gather (an output)",
         lambda t: dist.gather(ones(4), outs if rank == 0 else None, dst=0), outs[0])
    bump("all_to_all_single", lambda t: dist.all_to_all_single(t, ones(4 * n)), zeros(4 * n))
    outs = [zeros(4) for _ in range(n)]
    bump("all_to_all (an output)", lambda t: dist.all_to_all(outs, [ones(4)] * n), outs[0])
    if rank == 0:
        dist.send(ones(4), 1)
    else:
        bump("recv", lambda t: dist.recv(t, 0), zeros(4))

    def made(shape=(4,)):
        return torch.ones(shape, requires_grad=True) * 2

    graph("all_reduce SUM of a non-leaf", lambda t: dist.all_reduce(t), made())
    graph("all_reduce AVG of a non-leaf", lambda t: dist.all_reduce(t, op=R.AVG), made())
    graph("all_reduce AVG async", lambda t: dist.all_reduce(t, op=R.AVG, async_op=True).wait(),
          made())

    def avg_no_grad(t):
        with torch.no_grad():
            dist.all_reduce(t, op=R.AVG)
    graph("all_reduce AVG under no_grad", avg_no_grad, made())
    graph("broadcast of a non-leaf", lambda t: dist.broadcast(t, 0), made())
    graph("all_reduce SUM of a leaf", lambda t: dist.all_reduce(t),
          torch.ones(3, requires_grad=True))
    graph("all_reduce AVG of a leaf", lambda t: dist.all_reduce(t, op=R.AVG),
          torch.ones(3, requires_grad=True))
    graph("all_reduce AVG of int64", lambda t: dist.all_reduce(t, op=R.AVG),
          torch.ones(3, dtype=torch.int64) * (rank + 2))
    outs = [made() for _ in range(n)]
    graph("all_gather into outputs that require grad",
          lambda t: dist.all_gather(outs, ones(4)), outs[0])
    graph("reduce_scatter_tensor into an output that requires grad",
          lambda t: dist.reduce_scatter_tensor(t, ones(4 * n)), made())
    # a tensor saved for backward, then all-reduced: backward uses the new value
    x = torch.ones(4, requires_grad=True)
    z = (x * 2).exp()
    dist.all_reduce(z)
    z.sum().backward()
    seen["gradient through exp's output all-reduced"] = [round(v, 4) for v in x.grad.tolist()]
    return seen


def main() -> None:
    warnings.simplefilter("ignore")
    lib = sys.argv[1]
    if lib == "torch":
        import torch
        import torch.distributed as dist

        rank, port = int(sys.argv[2]), sys.argv[3]
        dist.init_process_group("gloo", rank=rank, world_size=2,
                                init_method=f"tcp://127.0.0.1:{port}")
    else:
        import retrograd as torch
        import retrograd.distributed as dist

        dist.init_process_group("gloo")
    seen = observe(torch, dist)
    print(f"rank {dist.get_rank()} " + json.dumps(seen, sort_keys=True), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
