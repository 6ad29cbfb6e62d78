# makemore part 3/4: a deeper MLP with a hand-written batch norm, kaiming-scaled init,
# retain_grad on the activations and a manual backward check of the last layers
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
vocab_size, n_embd, n_hidden, block_size, batch = 27, 10, 64, 3, 32
X = torch.randint(0, vocab_size, (200, block_size), generator=g)
Y = torch.randint(0, vocab_size, (200,), generator=g)
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = (torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3)
      / ((n_embd * block_size) ** 0.5))
b1 = torch.randn(n_hidden, generator=g) * 0.1
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.1
b2 = torch.randn(vocab_size, generator=g) * 0.1
bngain = torch.randn((1, n_hidden), generator=g) * 0.1 + 1.0
bnbias = torch.randn((1, n_hidden), generator=g) * 0.1
parameters = [C, W1, b1, W2, b2, bngain, bnbias]
for p in parameters:
    p.requires_grad = True
for step in range(30):
    ix = torch.randint(0, X.shape[0], (batch,), generator=g)
    Xb, Yb = X[ix], Y[ix]
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / batch * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (batch - 1) * (bndiff2).sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum ** -1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(batch), Yb].mean()
    for p in parameters:
        p.grad = None
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes,
              logits, h, hpreact, bnraw, bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani,
              embcat, emb]:
        t.retain_grad()
    loss.backward()
    dlogits = F.softmax(logits, 1)
    dlogits[range(batch), Yb] -= 1
    dlogits /= batch
    dh = dlogits @ W2.T
    dhpreact = (1.0 - h ** 2) * dh
    if step % 10 == 0:
        print(step, f"{loss.item():.6f}", (dlogits - logits.grad).abs().max().item() < 1e-6,
              (dhpreact - hpreact.grad).abs().max().item() < 1e-6,
              f"{bnvar_inv.grad.abs().sum().item():.6f}")
    with torch.no_grad():
        for p in parameters:
            p += -0.1 * p.grad
print(f"{F.cross_entropy(logits, Yb).item():.6f}")
