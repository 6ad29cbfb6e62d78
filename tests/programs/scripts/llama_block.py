# A llama2.c-style block (real-valued rotary embeddings): RMSNorm, rotary position
# embeddings by cos/sin, grouped-query attention through scaled_dot_product_attention with
# is_causal, a SwiGLU feed-forward, and a few Adam steps on next-token prediction
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
dim, n_heads, n_kv_heads, vocab, seq, batch = 32, 4, 2, 40, 12, 3
head_dim = dim // n_heads


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def precompute_freqs(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.cos(freqs), torch.sin(freqs)


def apply_rotary_emb(x, cos, sin):
    xr, xi = x.float().reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    cos = cos.view(1, x.shape[1], 1, -1)
    sin = sin.view(1, x.shape[1], 1, -1)
    out_r = xr * cos - xi * sin
    out_i = xr * sin + xi * cos
    return torch.stack([out_r, out_i], dim=-1).flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.wo = nn.Linear(n_heads * head_dim, dim, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        xq = self.wq(x).view(b, s, n_heads, head_dim)
        xk = self.wk(x).view(b, s, n_kv_heads, head_dim)
        xv = self.wv(x).view(b, s, n_kv_heads, head_dim)
        xq, xk = apply_rotary_emb(xq, cos, sin), apply_rotary_emb(xk, cos, sin)
        rep = n_heads // n_kv_heads
        xk = xk[:, :, :, None, :].expand(b, s, n_kv_heads, rep, head_dim)
        xk = xk.reshape(b, s, n_heads, head_dim)
        xv = torch.repeat_interleave(xv, rep, dim=2)
        out = F.scaled_dot_product_attention(xq.transpose(1, 2), xk.transpose(1, 2),
                                             xv.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.attention_norm, self.ffn_norm, self.norm = RMSNorm(dim), RMSNorm(dim), RMSNorm(dim)
        self.attention, self.feed_forward = Attention(), FeedForward()
        self.output = nn.Linear(dim, vocab, bias=False)
        self.tok.weight = self.output.weight
        cos, sin = precompute_freqs(head_dim, seq)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens, targets):
        h = self.tok(tokens)
        h = h + self.attention(self.attention_norm(h), self.cos, self.sin)
        h = h + self.feed_forward(self.ffn_norm(h))
        logits = self.output(self.norm(h))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1),
                               ignore_index=-1)


model = Model()
tokens = torch.randint(0, vocab, (batch, seq + 1))
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
for step in range(8):
    loss = model(tokens[:, :-1], tokens[:, 1:])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
