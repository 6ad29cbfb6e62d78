"""Benchmark workloads, written once against a torch-like module ``m``.

Each workload is ``make(m, size) -> (step, grads, unit)``: ``step()`` runs one timed
iteration, ``grads()`` returns NumPy arrays of the gradients after one step (checked
against torch's), ``unit`` says how a time is reported. ``size`` is "full" or "tiny"
(the test suite runs the tiny sizes to check the command works).
"""

from __future__ import annotations

import numpy as np


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _weights(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _mlp(m, rng, dims, activation):
    """Linear layers of ``dims`` with ``activation`` between, weights drawn from ``rng``
    (the same numbers in every framework)."""
    nn = m.nn
    layers = []
    for i in range(len(dims) - 1):
        lin = nn.Linear(dims[i], dims[i + 1])
        with m.no_grad():
            lin.weight.copy_(m.tensor(_weights(rng, (dims[i + 1], dims[i]), dims[i] ** -0.5)))
            lin.bias.copy_(m.tensor(_weights(rng, (dims[i + 1],), 0.01)))
        layers.append(lin)
        if i < len(dims) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


def w1_elementwise_chain(m, size):
    """W1: 200 elementwise ops on a 16-element tensor, forward + backward."""
    n_ops = 200 if size == "full" else 20
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(16).astype(np.float32)
    c0 = (rng.random(16) + 0.5).astype(np.float32)
    x = m.tensor(x0, requires_grad=True)
    c = m.tensor(c0)
    state = {}

    def step():
        x.grad = None
        y = x
        for _ in range(n_ops // 5):
            y = y * 1.01
            y = y + 0.1
            y = y.sin()
            y = y * c
            y = y.tanh()
        y.sum().backward()
        state["g"] = x.grad

    def grads():
        step()
        return [_np(state["g"])]

    return step, grads, ("us/op", 1e6 / (n_ops + 1))


def w2_mlp(m, size, dims=(784, 512, 512, 10), batch=128):
    """W2/W3: MLP with ReLU, cross-entropy, SGD step."""
    if size == "tiny":
        dims, batch = tuple(min(d, 16) for d in dims), 4
    rng = np.random.default_rng(1)
    nn = m.nn
    model = _mlp(m, rng, dims, nn.ReLU)
    opt = m.optim.SGD(model.parameters(), lr=0.01)
    xb = m.tensor(rng.standard_normal((batch, dims[0])).astype(np.float32))
    yb = m.tensor(rng.integers(0, dims[-1], batch))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()

    def grads():
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        return [_np(p.grad) for p in model.parameters()]

    return step, grads, ("ms", 1e3)


def w3_small_mlp(m, size):
    return w2_mlp(m, size, dims=(32, 64, 64, 1), batch=16)


def w4_wgan_gp(m, size):
    """W4: WGAN-GP gradient penalty on a critic MLP 128-256-256-1, batch 64."""
    dims, batch = ((128, 256, 256, 1), 64) if size == "full" else ((8, 16, 16, 1), 4)
    rng = np.random.default_rng(2)
    critic = _mlp(m, rng, dims, m.nn.Tanh)
    real = m.tensor(rng.standard_normal((batch, dims[0])).astype(np.float32))
    fake = m.tensor(rng.standard_normal((batch, dims[0])).astype(np.float32))
    alpha = m.tensor(rng.random((batch, 1)).astype(np.float32))

    def step():
        critic.zero_grad()
        xi = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        out = critic(xi)
        (g,) = m.autograd.grad(out.sum(), xi, create_graph=True)
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * gp
        loss.backward()

    def grads():
        step()
        return [_np(p.grad) for p in critic.parameters()]

    return step, grads, ("ms", 1e3)


def w5_hessian(m, size):
    """W5: full Hessian of sum(tanh(A @ x)) for a 100-vector."""
    n = 100 if size == "full" else 8
    rng = np.random.default_rng(3)
    a = m.tensor(_weights(rng, (n, n), n ** -0.5))
    x = m.tensor(rng.standard_normal(n).astype(np.float32))
    state = {}

    def f(v):
        return (a @ v).tanh().sum()

    def step():
        state["h"] = m.autograd.functional.hessian(f, x)

    def grads():
        step()
        return [_np(state["h"])]

    return step, grads, ("ms", 1e3)


def w6_cnn(m, size):
    """W6: CNN training step on a batch of 64 28x28 images."""
    batch, hw = (64, 28) if size == "full" else (4, 12)
    rng = np.random.default_rng(4)
    nn = m.nn
    flat = 32 * (((hw - 2) // 2 - 2) // 2) ** 2
    model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(flat, 10))
    with m.no_grad():
        for p in model.parameters():
            fan = p.shape[1:].numel() if p.ndim > 1 else 16
            p.copy_(m.tensor(_weights(rng, tuple(p.shape), fan ** -0.5)))
    opt = m.optim.SGD(model.parameters(), lr=0.01)
    xb = m.tensor(rng.standard_normal((batch, 1, hw, hw)).astype(np.float32))
    yb = m.tensor(rng.integers(0, 10, batch))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()

    def grads():
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        return [_np(p.grad) for p in model.parameters()]

    return step, grads, ("ms", 1e3)


def w7_big_elementwise(m, size):
    """W7: forward + backward of 10 elementwise ops on 4M float32 elements (GB/s)."""
    n = 4_000_000 if size == "full" else 4096
    rng = np.random.default_rng(5)
    x = m.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    c = m.tensor((rng.random(n) + 0.5).astype(np.float32))
    state = {}

    def step():
        x.grad = None
        y = x * c
        y = y + 1.0
        y = y.tanh()
        y = y * y
        y = y - 0.5
        y = y.sigmoid()
        y = y * 2.0
        y = y.exp()
        y = y / c
        y = y.relu()
        y.backward(m.ones_like(y))
        state["g"] = x.grad

    def grads():
        step()
        return [_np(state["g"])]

    # bytes touched: a rough model, 10 ops x (read + write) forward, twice that backward
    gbytes = n * 4 * 10 * 2 * 3 / 1e9
    return step, grads, ("GB/s", gbytes)


def _per_sample_setup(m, size):
    """An MLP 784-128-10 and a batch of 64 (tiny: 20-8-3, 4) for per-sample gradients."""
    rng = np.random.default_rng(9)
    dims, batch = ((784, 128, 10), 64) if size == "full" else ((20, 8, 3), 4)
    model = _mlp(m, rng, dims, m.nn.ReLU)
    x = m.tensor(rng.standard_normal((batch, dims[0])).astype(np.float32))
    y = m.tensor(rng.integers(0, dims[-1], batch))
    return model, x, y, batch


def w9_per_sample_vmap(m, size):
    """W9: per-sample gradients of an MLP with vmap(grad(loss)) and functional_call (the
    torch.func tutorial's recipe)."""
    model, x, y, _ = _per_sample_setup(m, size)
    params = {k: v.detach() for k, v in model.named_parameters()}
    func = m.func

    def loss(p, xb, yb):
        out = func.functional_call(model, p, (xb.unsqueeze(0),))
        return m.nn.functional.cross_entropy(out, yb.unsqueeze(0))
    per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
    state = {}

    def step():
        state["g"] = per_sample(params, x, y)

    def grads():
        step()
        return [_np(state["g"][k]) for k in sorted(params)]

    return step, grads, ("ms", 1e3)


def w9l_per_sample_loop(m, size):
    """W9L: the same per-sample gradients by a loop of per-example backward passes."""
    model, x, y, batch = _per_sample_setup(m, size)
    names = sorted(k for k, _ in model.named_parameters())
    params = dict(model.named_parameters())
    state = {}

    def step():
        out = {k: [] for k in names}
        for i in range(batch):
            model.zero_grad()
            m.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            for k in names:
                out[k].append(params[k].grad.clone())
        state["g"] = {k: m.stack(v) for k, v in out.items()}

    def grads():
        step()
        return [_np(state["g"][k]) for k in names]

    return step, grads, ("ms", 1e3)


WORKLOADS = {
    "W1": w1_elementwise_chain,
    "W2": w2_mlp,
    "W3": w3_small_mlp,
    "W4": w4_wgan_gp,
    "W5": w5_hessian,
    "W6": w6_cnn,
    "W7": w7_big_elementwise,
    "W9": w9_per_sample_vmap,
    "W9L": w9l_per_sample_loop,
}
