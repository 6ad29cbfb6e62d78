# makemore part 2 (Karpathy): a character-level MLP language model, trained with
# hand-written SGD on a few names
import random

import torch
import torch.nn.functional as F

words = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia",
         "harper", "evelyn", "abigail", "emily", "elizabeth", "mila", "ella", "avery"]
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
block_size = 3


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)


random.seed(42)
random.shuffle(words)
Xtr, Ytr = build_dataset(words[:12])
Xdev, Ydev = build_dataset(words[12:])
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((len(stoi), 10), generator=g)
W1 = torch.randn((30, 200), generator=g) * (5 / 3) / (30 ** 0.5)  # part 3's fixed init
b1 = torch.randn(200, generator=g) * 0.01
W2 = torch.randn((200, len(stoi)), generator=g) * 0.01
b2 = torch.randn(len(stoi), generator=g) * 0
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True
for i in range(60):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 40 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    if i % 10 == 0:
        print(f"{i:7d}: {loss.item():.4f}")
emb = C[Xdev]
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
print("dev", F.cross_entropy(h @ W2 + b2, Ydev).item())
g = torch.Generator().manual_seed(2147483647 + 10)
for _ in range(3):
    out, context = [], [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        probs = F.softmax(h @ W2 + b2, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0 or len(out) > 12:
            break
    print(out)
