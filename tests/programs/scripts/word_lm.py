# The PyTorch examples' word_language_model: Embedding, LSTM, Linear decoder with tied
# weights, truncated BPTT with repackaged hidden state, clip_grad_norm_, manual SGD
import math

import torch
import torch.nn as nn

torch.manual_seed(1111)
ntokens, emsize, nhid, nlayers, bptt, bsz = 50, 32, 32, 2, 8, 4
corpus = torch.randint(0, ntokens, (400,))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntokens, emsize)
        self.rnn = nn.LSTM(emsize, nhid, nlayers, dropout=0.2)
        self.decoder = nn.Linear(nhid, ntokens)
        self.decoder.weight = self.encoder.weight
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, ntokens)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(nlayers, bsz, nhid), weight.new_zeros(nlayers, bsz, nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


train_data = batchify(corpus, bsz)
model = RNNModel()
criterion = nn.NLLLoss()
lr = 20
for epoch in range(2):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(bsz)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        if batch % 4 == 3:
            cur_loss = total_loss / 4
            print(f"| epoch {epoch:3d} | batch {batch:3d} | loss {cur_loss:5.2f} | "
                  f"ppl {math.exp(cur_loss):8.2f}")
            total_loss = 0.0
model.eval()
with torch.no_grad():
    out, _ = model(train_data[:bptt], model.init_hidden(bsz))
    print(f"eval {criterion(out, train_data[1:bptt + 1].reshape(-1)).item():.4f}")
