# A small ViT as the tutorials build it: patches by unfold/reshape/permute, a class token and
# learned positions as nn.Parameter, nn.TransformerEncoder (batch_first, pre-norm), AdamW with a
# cosine schedule
import torch
import torch.nn as nn

torch.manual_seed(42)
img, patch, dim, depth, heads, ncls = 16, 4, 32, 2, 4, 5
images = torch.randn(16, 3, img, img)
labels = torch.randint(0, ncls, (16,))


class ViT(nn.Module):
    def __init__(self):
        super().__init__()
        n = (img // patch) ** 2
        self.to_patch = nn.Linear(3 * patch * patch, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embedding = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, ncls))

    def forward(self, x):
        b = x.shape[0]
        p = x.unfold(2, patch, patch).unfold(3, patch, patch)  # b c h w p p
        p = p.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, 3 * patch * patch)
        x = self.to_patch(p)
        x = torch.cat([self.cls_token.expand(b, -1, -1), x], dim=1) + self.pos_embedding
        x = self.encoder(x)
        return self.head(x[:, 0])


model = ViT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
for step in range(10):
    loss = nn.functional.cross_entropy(model(images), labels, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.6f}")
