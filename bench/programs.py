"""Whole training programs as benchmark workloads (P1-P5), written once against ``m``.

Each is ``make(m, size) -> (step, grads, unit)`` as in ``workloads.py``: ``step()`` is
one training step (forward, loss, backward, clipping where the program clips, optimizer
step), ``grads()`` the same step's gradients on the current state *without* the
optimizer step (the optimizers' arithmetic is checked by the op workloads O10-O12).
Weights are drawn with NumPy and copied in, so both frameworks start from the same
numbers; data is drawn with NumPy once, and every step trains on that one batch (a
real loop draws a new batch each step; the work per step is the same, and a fixed batch
lets ``retrograd.compile`` replay the step).

>>> import retrograd as m
>>> step, grads, unit = p4_makemore(m, "tiny")
>>> step()
>>> [g.shape for g in grads()][:2]
[(27, 4), (8, 12)]
"""

from __future__ import annotations

import numpy as np
from workloads import _np, _weights

_NORMS = ("LayerNorm", "BatchNorm1d", "BatchNorm2d")


def _copy_in(m, model, rng, draw=None):
    """Overwrite ``model``'s parameters with NumPy draws, in ``named_parameters`` order
    (PyTorch's order, which retrograd keeps). Norm layers keep their ones and zeros;
    ``draw(name, shape)`` may return an array, or None for the default: weights
    N(0, 1/fan_in), biases N(0, 0.01^2)."""
    with m.no_grad():
        for name, p in model.named_parameters():
            owner = model.get_submodule(name.rpartition(".")[0])
            if type(owner).__name__ in _NORMS:
                continue
            shape = tuple(p.shape)
            arr = draw(name, shape) if draw else None
            if arr is None:
                fan = int(np.prod(shape[1:])) if len(shape) > 1 else 0
                arr = _weights(rng, shape, fan ** -0.5 if fan else 0.01)
            p.copy_(m.tensor(arr))


def _grads_of(params):
    return [_np(p.grad) for p in params]


# --- P1: nanoGPT's character model -------------------------------------------------


def gpt_model(m, n_layer=4, n_embd=128, n_head=4, block=64, vocab=65, seed=10):
    """nanoGPT's ``GPT`` (model.py) with dropout 0 and biases: token and position
    embeddings, pre-norm blocks of causal self-attention (``scaled_dot_product_attention``
    with ``is_causal=True``) and a GELU MLP, a final LayerNorm, and a head tied to the
    token embedding. Weights as nanoGPT draws them: N(0, 0.02^2), residual projections
    N(0, (0.02 / sqrt(2 n_layer))^2), zero biases."""
    nn, F = m.nn, m.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0,
                                               is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd),
                wpe=nn.Embedding(block, n_embd),
                h=nn.ModuleList([Block() for _ in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd),
            ))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying

        def forward(self, idx, targets):
            t = idx.size(1)
            pos = m.arange(0, t, dtype=m.long)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for blk in self.transformer.h:
                x = blk(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)

    model = GPT()
    rng = np.random.default_rng(seed)

    def draw(name, shape):
        if len(shape) == 1:
            return np.zeros(shape, np.float32)
        std = 0.02 / (2 * n_layer) ** 0.5 if name.endswith("c_proj.weight") else 0.02
        return _weights(rng, shape, std)

    _copy_in(m, model, rng, draw)
    return model


def gpt_adamw(m, model, lr=1e-3, weight_decay=0.1):
    """nanoGPT's ``configure_optimizers``: AdamW, decay on tensors of 2+ dimensions."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return m.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99))


def p1_gpt(m, size):
    """P1: nanoGPT character model, 4 layers, n_embd 128, 4 heads, block 64, batch 16,
    vocab 65; AdamW, clip_grad_norm_(1.0) (tiny: 1 layer, 16, 2 heads, block 8, batch 2)."""
    full = size == "full"
    cfg = dict(n_layer=4, n_embd=128, n_head=4, block=64) if full else \
        dict(n_layer=1, n_embd=16, n_head=2, block=8)
    batch, block = (16 if full else 2), cfg["block"]
    model = gpt_model(m, **cfg)
    opt = gpt_adamw(m, model)
    rng = np.random.default_rng(11)
    data = rng.integers(0, 65, 20_000)  # a "text" of character ids
    ix = rng.integers(0, len(data) - block, batch)
    x = m.tensor(np.stack([data[i:i + block] for i in ix]))
    y = m.tensor(np.stack([data[i + 1:i + 1 + block] for i in ix]))

    def backward():
        model(x, y).backward()
        m.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

    def step():
        backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def grads():
        opt.zero_grad(set_to_none=True)
        backward()
        return _grads_of(model.parameters())

    return step, grads, ("ms", 1e3)


# --- P2: a CIFAR ResNet ------------------------------------------------------------


def resnet_model(m, widths=(16, 32, 64), blocks=2, classes=10, seed=20):
    """A CIFAR ResNet: 3x3 stem, stages of BasicBlocks (conv-BN-ReLU-conv-BN, a 1x1
    conv + BN shortcut where the shape changes, ``out += shortcut``), stride 2 between
    stages, global average pooling, a Linear classifier."""
    nn, F = m.nn, m.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += self.shortcut(x)
            return F.relu(out)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(widths[0])
            layers, cin = [], widths[0]
            for i, w in enumerate(widths):
                for j in range(blocks):
                    layers.append(BasicBlock(cin, w, 2 if i > 0 and j == 0 else 1))
                    cin = w
            self.layers = nn.Sequential(*layers)
            self.linear = nn.Linear(widths[-1], classes)

        def forward(self, x):
            out = self.layers(F.relu(self.bn1(self.conv1(x))))
            out = F.adaptive_avg_pool2d(out, 1).flatten(1)
            return self.linear(out)

    model = ResNet()
    _copy_in(m, model, np.random.default_rng(seed))
    return model


def p2_resnet(m, size):
    """P2: ResNet, 3 stages x 2 BasicBlocks (16/32/64 channels), 32x32x3 images, batch
    32, 10 classes, cross_entropy, SGD momentum 0.9 (tiny: 4/8/8 channels, 8x8, batch 4)."""
    full = size == "full"
    model = resnet_model(m, widths=(16, 32, 64) if full else (4, 8, 8))
    batch, hw = (32, 32) if full else (4, 8)
    opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    rng = np.random.default_rng(21)
    x = m.tensor(rng.standard_normal((batch, 3, hw, hw)).astype(np.float32))
    y = m.tensor(rng.integers(0, 10, batch))
    F = m.nn.functional

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    def grads():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        return _grads_of(model.parameters())

    return step, grads, ("ms", 1e3)


# --- P3: PyTorch's word_language_model example ---------------------------------------


def p3_lstm(m, size):
    """P3: word-level LSTM language model (pytorch/examples word_language_model, no
    dropout): embedding 128, 2-layer nn.LSTM of 256, decoder to 1000 words, sequence 35,
    batch 20; truncated BPTT (the hidden state is carried and detached between steps),
    clip_grad_norm_(0.25), SGD lr 20 (tiny: 8, 16, vocab 50, sequence 5, batch 3)."""
    full = size == "full"
    ntok, ninp, nhid, seq, batch = (1000, 128, 256, 35, 20) if full else (50, 8, 16, 5, 3)
    nn, F = m.nn, m.nn.functional

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(ntok, ninp)
            self.rnn = nn.LSTM(ninp, nhid, 2)
            self.decoder = nn.Linear(nhid, ntok)

        def forward(self, inp, hidden):
            output, hidden = self.rnn(self.encoder(inp), hidden)
            decoded = self.decoder(output).view(-1, ntok)
            return F.log_softmax(decoded, dim=1), hidden

    model = RNNModel()
    rng = np.random.default_rng(30)
    _copy_in(m, model, rng, lambda n, s: rng.uniform(-0.1, 0.1, s).astype(np.float32)
             if n.startswith(("encoder", "decoder.weight")) else None)
    opt = m.optim.SGD(model.parameters(), lr=20.0)
    data = rng.integers(0, ntok, (seq + 1, batch))
    x, y = m.tensor(data[:-1]), m.tensor(data[1:].reshape(-1))
    zeros = m.zeros(2, batch, nhid)
    state = {"hidden": (zeros, zeros)}

    def backward():
        model.zero_grad()
        hidden = tuple(h.detach() for h in state["hidden"])  # repackage_hidden
        output, hidden = model(x, hidden)
        F.nll_loss(output, y).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        return hidden

    def step():
        state["hidden"] = backward()
        opt.step()

    def grads():
        backward()
        return _grads_of(model.parameters())

    return step, grads, ("ms", 1e3)


# --- P4: makemore's MLP with batch norm ----------------------------------------------


def p4_makemore(m, size):
    """P4: makemore part 3's MLP: an embedding table C (27 x 10) indexed as ``C[X]``,
    block 3, three hidden Linear(200) + BatchNorm1d + tanh layers, batch 32,
    cross_entropy, SGD lr 0.1 (tiny: C 27 x 4, hidden 8, batch 4)."""
    full = size == "full"
    emb, hid, batch, block = (10, 200, 32, 3) if full else (4, 8, 4, 3)
    nn, F = m.nn, m.nn.functional
    rng = np.random.default_rng(40)
    C = nn.Parameter(m.tensor(_weights(rng, (27, emb), 1.0)))
    layers = []
    for fan_in in (emb * block, hid, hid):
        layers += [nn.Linear(fan_in, hid, bias=False), nn.BatchNorm1d(hid), nn.Tanh()]
    mlp = nn.Sequential(*layers, nn.Linear(hid, 27))
    _copy_in(m, mlp, rng, lambda n, s: _weights(rng, s, 0.01) if n == "9.weight" else None)
    params = [C, *mlp.parameters()]
    opt = m.optim.SGD(params, lr=0.1)
    xb = m.tensor(rng.integers(0, 27, (batch, block)))
    yb = m.tensor(rng.integers(0, 27, batch))

    def backward():
        for p in params:
            p.grad = None
        logits = mlp(C[xb].view(xb.shape[0], -1))
        F.cross_entropy(logits, yb).backward()

    def step():
        backward()
        opt.step()

    def grads():
        backward()
        return _grads_of(params)

    return step, grads, ("ms", 1e3)


# --- P5: PyTorch's VAE example -------------------------------------------------------


def p5_vae(m, size):
    """P5: the VAE of pytorch/examples: 784-400-20 encoder (mu, logvar), reparameterized
    with ``randn_like``, 20-400-784 decoder with sigmoid, BCE (sum) + KL, batch 128, Adam
    lr 1e-3 (tiny: 20-8-2, batch 4). ``m.manual_seed(0)`` before the steps: retrograd
    draws PyTorch's CPU normal stream, so both frameworks reparameterize alike."""
    full = size == "full"
    d, h, z, batch = (784, 400, 20, 128) if full else (20, 8, 2, 4)
    nn, F = m.nn, m.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(d, h)
            self.fc21 = nn.Linear(h, z)
            self.fc22 = nn.Linear(h, z)
            self.fc3 = nn.Linear(z, h)
            self.fc4 = nn.Linear(h, d)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = m.exp(0.5 * logvar)
            eps = m.randn_like(std)
            return mu + eps * std

        def decode(self, zz):
            return m.sigmoid(self.fc4(F.relu(self.fc3(zz))))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, d))
            return self.decode(self.reparameterize(mu, logvar)), mu, logvar

    model = VAE()
    rng = np.random.default_rng(50)
    _copy_in(m, model, rng)
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    x = m.tensor(rng.random((batch, d)).astype(np.float32))

    def backward():
        opt.zero_grad()
        recon, mu, logvar = model(x)
        bce = F.binary_cross_entropy(recon, x.view(-1, d), reduction="sum")
        kld = -0.5 * m.sum(1 + logvar - mu.pow(2) - logvar.exp())
        (bce + kld).backward()

    def step():
        backward()
        opt.step()

    def grads():
        backward()
        return _grads_of(model.parameters())

    m.manual_seed(0)
    return step, grads, ("ms", 1e3)


PROGRAMS = {
    "P1": p1_gpt,
    "P2": p2_resnet,
    "P3": p3_lstm,
    "P4": p4_makemore,
    "P5": p5_vae,
}
