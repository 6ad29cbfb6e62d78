"""Every sampling op gives PyTorch's CPU numbers bit for bit after the same seed: the
in-place fills, torch.normal's overloads, the *_like creators, multinomial, nn.init and
the layers' default initialisation, dropout masks and the data samplers' orders."""

import numpy as np
import pytest
import torch

import retrograd as rt

SEEDS = [0, 7, 2**33 + 5]
SIZES = [1, 5, 15, 16, 17, 33, 100]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _np(t):
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.float()
    return t.detach().numpy()


def _rnp(t):
    d = t.detach()
    if d.dtype in (rt.bfloat16, rt.float16):
        d = d.float()
    return d.numpy()


def _same(seed, torch_fn, rt_fn, rng_after=True):
    """Both functions from the same seed of the default generator give the same bits, and
    leave the generators in the same state."""
    torch.manual_seed(seed)
    rt.manual_seed(seed)
    a, b = torch_fn(), rt_fn()
    if not isinstance(a, (tuple, list)):
        a, b = [a], [b]
    for x, y in zip(a, b, strict=True):
        x, y = _np(x), _rnp(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes(), (x, y)
    if rng_after:
        assert torch.get_rng_state().numpy().tobytes() == rt.get_rng_state().numpy().tobytes()


def _pair(dtype):
    return getattr(torch, dtype), getattr(rt, dtype)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_fills(seed, n, dtype):
    td, rd = _pair(dtype)

    def run(lib, d):
        out = []
        for fill, args in [("uniform_", (-0.3, 0.7)), ("uniform_", (0.0, 1.0)),
                           ("normal_", (0.3, 1.7)), ("normal_", ()), ("bernoulli_", (0.3,)),
                           ("exponential_", (2.5,)), ("geometric_", (0.2,)),
                           ("log_normal_", (0.5, 0.25)), ("cauchy_", (0.1, 2.0)),
                           ("random_", ()), ("random_", (10,)), ("random_", (-3, 50))]:
            out.append(getattr(lib.empty(n, dtype=d), fill)(*args))
        out.append(lib.rand(n, dtype=d))
        out.append(lib.randn(n, dtype=d))
        return out

    _same(seed, lambda: run(torch, td), lambda: run(rt, rd))


@pytest.mark.parametrize("seed", SEEDS)
def test_fills_of_views_follow_memory_order(seed):
    def run(lib):
        base = lib.zeros(6, 20)
        base.T.uniform_(-1, 1)
        c = lib.zeros(20, 6)
        c[:, ::2].normal_(1.0, 2.0)  # not contiguous: the one-at-a-time path
        d = lib.zeros(3, 40)
        d.T.normal_()
        e = lib.zeros(4, 5).T.bernoulli_(0.5)
        return base, c, d, e

    _same(seed, lambda: run(torch), lambda: run(rt))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("pdtype", ["float32", "float64", "float16", "bfloat16"])
def test_bernoulli_with_tensor_probabilities(seed, pdtype):
    td, rd = _pair(pdtype)
    p = np.linspace(0, 1, 37)
    _same(seed, lambda: [torch.bernoulli(torch.tensor(p).to(td)),
                         torch.zeros(37).bernoulli_(torch.tensor(p).to(td))],
          lambda: [rt.bernoulli(rt.tensor(p).to(rd)),
                   rt.zeros(37).bernoulli_(rt.tensor(p).to(rd))])
    _same(seed, lambda: torch.bernoulli(torch.full((3, 5), 0.5, dtype=td), 0.2),
          lambda: rt.bernoulli(rt.full((3, 5), 0.5, dtype=rd), 0.2))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [3, 16, 40])
def test_normal_overloads_and_likes(seed, n):
    def run(lib, dt):
        m = lib.tensor(np.linspace(-1, 1, n), dtype=dt)  # (linspace itself rounds its own way)
        s = lib.tensor(np.linspace(0.1, 2, n), dtype=dt)
        x = lib.zeros(4, n, dtype=dt)
        return [lib.normal(m, s), lib.normal(m, 0.5), lib.normal(0.5, s),
                lib.normal(0.2, 3.0, size=(2, n)), lib.normal(m, s[:1]),
                lib.rand_like(x), lib.randn_like(x), lib.randint_like(x, 3, 9),
                lib.randn_like(x.T), lib.rand_like(x, dtype=lib.float64)]

    for dtype in ("float32", "float64"):
        _same(seed, lambda dtype=dtype: run(torch, getattr(torch, dtype)),
              lambda dtype=dtype: run(rt, getattr(rt, dtype)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_multinomial(seed, dtype):
    td, rd = _pair(dtype)
    w = np.array([[0.1, 0.0, 3.0, 1.0, 0.5, 0.25, 2.0], [1.0] * 7, [0, 0, 0, 1, 0, 0, 2]])

    def run(lib, d):
        t = lib.tensor(w, dtype=d)
        return [lib.multinomial(t, 5, replacement=True), lib.multinomial(t[0], 20, True),
                lib.multinomial(t, 1), lib.multinomial(t[1], 7), lib.multinomial(t, 2)]

    _same(seed, lambda: run(torch, td), lambda: run(rt, rd))


def test_generator_argument_and_errors():
    g1, g2 = torch.Generator().manual_seed(3), rt.Generator().manual_seed(3)
    a = torch.empty(40).normal_(generator=g1).numpy()
    b = rt.empty(40).normal_(generator=g2).numpy()
    assert a.tobytes() == b.tobytes()
    assert g1.get_state().numpy().tobytes() == g2.get_state().numpy().tobytes()
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        rt.zeros(3, dtype=rt.int64).uniform_()
    with pytest.raises(RuntimeError, match=r"expects p to be in \[0, 1\]"):
        rt.zeros(3).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
        rt.multinomial(rt.ones(3), 4)


INIT_FNS = [
    ("uniform_", (-0.5, 2.0)), ("normal_", (0.1, 0.3)), ("xavier_uniform_", ()),
    ("xavier_normal_", (1.3,)), ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
    ("kaiming_uniform_", (5 ** 0.5, "fan_out", "relu")), ("sparse_", (0.3,)),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", [(3, 4), (8, 5), (6, 2, 3, 3)])
def test_nn_init(seed, shape):
    def run(lib):
        out = []
        for name, args in INIT_FNS:
            if name == "sparse_" and len(shape) != 2:
                continue
            out.append(getattr(lib.nn.init, name)(lib.empty(*shape), *args))
        return out

    _same(seed, lambda: run(torch), lambda: run(rt))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", [(5,), (40,), (7, 9)])
def test_trunc_normal_both_samplers(seed, shape):
    # a wide window redraws outside normals; a narrow one accepts uniform candidates
    for args in [(0.2, 0.5, -0.5, 0.8), (0.0, 1.0, 2.0, 3.0), (0.0, 0.02, -0.04, 0.04)]:
        _same(seed, lambda lib=torch, args=args: lib.nn.init.trunc_normal_(lib.empty(*shape),
                                                                            *args),
              lambda args=args: rt.nn.init.trunc_normal_(rt.empty(*shape), *args))


@pytest.mark.parametrize("seed", SEEDS)
def test_orthogonal_draws_and_values(seed):
    # PyTorch's normal draws; LAPACK's QR rounds its own way in each build (Note
    # [Initialisers' arithmetic] in retrograd/nn/init.py), so values agree to float rounding
    for shape in [(4, 4), (3, 7), (7, 3), (2, 3, 4)]:
        torch.manual_seed(seed)
        rt.manual_seed(seed)
        a = torch.nn.init.orthogonal_(torch.empty(*shape), 1.5).numpy()
        b = rt.nn.init.orthogonal_(rt.empty(*shape), 1.5).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert torch.get_rng_state().numpy().tobytes() == rt.get_rng_state().numpy().tobytes()


def _layers(lib):
    nn = lib.nn
    return [nn.Linear(4, 3), nn.Linear(7, 5, bias=False), nn.Bilinear(3, 4, 2),
            nn.Conv1d(3, 4, 3), nn.Conv2d(2, 3, (3, 2), groups=1), nn.Conv3d(1, 2, 2),
            nn.ConvTranspose2d(3, 2, 3), nn.Embedding(10, 4), nn.LayerNorm(5),
            nn.BatchNorm1d(3), nn.RNN(3, 4, 2), nn.LSTM(3, 5, bidirectional=True),
            nn.GRU(4, 3, batch_first=True), nn.MultiheadAttention(8, 2),
            nn.TransformerEncoderLayer(8, 2, 16)]


@pytest.mark.parametrize("seed", [0, 1])
def test_default_init_of_layers(seed):
    torch.manual_seed(seed)
    rt.manual_seed(seed)
    for tm, rm in zip(_layers(torch), _layers(rt), strict=True):
        ts, rs = tm.state_dict(), rm.state_dict()
        assert list(ts) == list(rs), type(tm)
        for k in ts:
            assert _np(ts[k]).tobytes() == _rnp(rs[k]).tobytes(), (type(tm).__name__, k)
    assert torch.get_rng_state().numpy().tobytes() == rt.get_rng_state().numpy().tobytes()


def test_linear_weight_after_manual_seed():
    torch.manual_seed(0)
    rt.manual_seed(0)
    assert torch.nn.Linear(4, 3).weight.detach().numpy().tobytes() == \
        rt.nn.Linear(4, 3).weight.detach().numpy().tobytes()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_masks(seed, p):
    x = np.linspace(-3, 3, 2 * 3 * 17).reshape(2, 3, 17)

    def run(lib):
        drop = lib.nn.Dropout(p)
        xt = lib.tensor(x, dtype=lib.float32)
        return [lib.nn.functional.dropout(xt, p), drop(xt), drop(xt.transpose(0, 2)),
                lib.nn.functional.dropout(xt.double(), p),
                lib.nn.functional.dropout(xt.to(lib.bfloat16), p)]

    _same(seed, lambda: run(torch), lambda: run(rt))


def _orders(lib, seed_gen):
    data = lib.utils.data
    ds = list(range(23))
    g = (lambda: lib.Generator().manual_seed(5)) if seed_gen else (lambda: None)
    out = [list(data.RandomSampler(ds, generator=g())),
           list(data.RandomSampler(ds, replacement=True, num_samples=70, generator=g())),
           list(data.RandomSampler(ds, num_samples=50, generator=g())),
           list(data.SubsetRandomSampler([3, 9, 4, 11, 20], generator=g())),
           list(data.WeightedRandomSampler([0.1, 2.0, 0.0, 1.0, 0.5], 9, generator=g())),
           list(data.WeightedRandomSampler([0.1, 2.0, 0.0, 1.0, 0.5], 3, replacement=False,
                                           generator=g()))]
    split = data.random_split(ds, [0.5, 0.3, 0.2], **({"generator": g()} if seed_gen else {}))
    out.append([list(s) for s in split])
    loader = data.DataLoader(ds, batch_size=4, shuffle=True, generator=g())
    for _ in range(3):  # each epoch draws the workers' base seed, then the order's seed
        out.append([b.tolist() for b in loader])
    out.append(lib.rand(3).tolist())  # and the default generator ends in the same state
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("seed_gen", [False, True])
def test_data_orders(seed, seed_gen):
    torch.manual_seed(seed)
    rt.manual_seed(seed)
    assert _orders(torch, seed_gen) == _orders(rt, seed_gen)


def test_worker_numpy_seed_is_pytorchs():
    from torch.utils.data._utils.worker import _generate_state

    from retrograd.utils.data.dataloader import _seed_worker

    for base_seed, worker_id in [(0, 0), (900450186894289455, 3), (2**63 - 1, 7)]:
        _seed_worker(base_seed + worker_id, base_seed, worker_id)
        mine = np.random.get_state()[1].copy()
        np.random.seed(_generate_state(base_seed, worker_id))
        assert np.array_equal(mine, np.random.get_state()[1])
        assert rt.initial_seed() == base_seed + worker_id


# A training script as a user writes it for PyTorch, run unchanged on both libraries.
TRAINING_SCRIPT = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(SEED)
X = torch.randn(200, 10)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).long() + (X[:, 2] > 1).long()
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 16),
                      nn.Tanh(), nn.Dropout(0.1), nn.Linear(16, 3))
initial = [p.detach().clone() for p in model.parameters()]
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)
losses = []
for epoch in range(4):
    model.train()
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(xb)
    losses.append(total / len(X))
    print(f"epoch {epoch}: loss {losses[-1]:.4f}")
"""


def _run_script(lib, seed):
    import sys

    saved = {k: sys.modules[k] for k in list(sys.modules) if k == "torch"
             or k.startswith("torch.")}
    names = {"SEED": seed, "print": lambda *a: None}
    if lib is rt:  # `import torch` inside the script gives retrograd
        sys.modules["torch"] = rt
        sys.modules["torch.nn"] = rt.nn
        sys.modules["torch.utils"] = rt.utils
        sys.modules["torch.utils.data"] = rt.utils.data
    try:
        exec(compile(TRAINING_SCRIPT, "train.py", "exec"), names)
    finally:
        sys.modules.update(saved)
    return names


@pytest.mark.parametrize("seed", [0, 3])
def test_training_script_prints_pytorchs_losses(seed):
    t, r = _run_script(torch, seed), _run_script(rt, seed)
    assert type(r["X"]) is rt.Tensor and type(r["loader"]) is rt.utils.data.DataLoader
    assert _np(t["X"]).tobytes() == _rnp(r["X"]).tobytes()
    for a, b in zip(t["initial"], r["initial"], strict=True):
        assert _np(a).tobytes() == _rnp(b).tobytes()
    # the same data, init, dropout masks and batch orders: only float32 summation order
    # (matmul, reductions) separates the losses
    np.testing.assert_allclose(t["losses"], r["losses"], rtol=1e-5)
    assert [f"{v:.4f}" for v in t["losses"]] == [f"{v:.4f}" for v in r["losses"]]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_channel_and_alpha_dropouts(seed, dtype):
    x = np.linspace(-2, 2, 2 * 3 * 4 * 5 * 2).reshape(2, 3, 4, 5, 2)

    def run(lib):
        F = lib.nn.functional
        t = lib.tensor(x, dtype=getattr(lib, dtype))
        return [F.dropout1d(t[0, :, :, 0, 0], 0.4), F.dropout1d(t[:, :, :, 0, 0], 0.4),
                F.dropout2d(t[..., 0], 0.3), F.dropout3d(t, 0.6), F.dropout3d(t[0], 0.6),
                F.alpha_dropout(t, 0.2, True), F.feature_alpha_dropout(t, 0.5, True),
                lib.nn.Dropout2d(0.5)(t[:, :, 0]), lib.nn.AlphaDropout(0.3)(t),
                lib.nn.FeatureAlphaDropout(0.7)(t.transpose(1, 2)), F.alpha_dropout(t, 1.0, True),
                F.alpha_dropout(t, 0.5)]

    _same(seed, lambda: run(torch), lambda: run(rt))


def test_dropout_gradients_follow_the_mask():
    for lib in (torch, rt):
        lib.manual_seed(0)
    outs = []
    for lib in (torch, rt):
        x = lib.ones(2, 3, 4, requires_grad=True)
        y = lib.nn.functional.alpha_dropout(x, 0.4, True) * 2 + \
            lib.nn.functional.dropout1d(x, 0.5) * 3
        y.sum().backward()
        outs.append(_np(x.grad) if lib is torch else _rnp(x.grad))
    assert outs[0].tobytes() == outs[1].tobytes()


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool"])
def test_random_on_integer_dtypes(dtype):
    td, rd = _pair(dtype)
    for args in [(), (2,), (0, 2)] + ([] if dtype in ("uint8", "bool") else [(-3, 5)]) + \
            ([(0, 2**40)] if dtype == "int64" else []):
        _same(1, lambda args=args: torch.empty(20, dtype=td).random_(*args),
              lambda args=args: rt.empty(20, dtype=rd).random_(*args))
    if dtype == "int64":  # no int64 bound beyond the argument parser's own
        return
    top = 1 if dtype == "bool" else int(np.iinfo(dtype).max)
    for lib, d in ((torch, td), (rt, rd)):
        with pytest.raises(RuntimeError, match=r"to - 1 is out of bounds for"):
            lib.empty(3, dtype=d).random_(0, top + 2)
