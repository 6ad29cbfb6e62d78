# A DDPM on 2-D points, as the diffusion tutorials write it: a linear beta schedule,
# sinusoidal time embeddings, q_sample with gathered alphas, an MLP noise predictor,
# MSE on the noise, Adam, and a few reverse sampling steps
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 50
betas = torch.linspace(1e-4, 0.02, T)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)
alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
sqrt_recip_alphas = torch.sqrt(1.0 / alphas)
sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
sqrt_one_minus_alphas_cumprod = torch.sqrt(1.0 - alphas_cumprod)
posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)


def extract(a, t, x_shape):
    out = a.gather(-1, t)
    return out.reshape(t.shape[0], *((1,) * (len(x_shape) - 1)))


def q_sample(x_start, t, noise):
    return (extract(sqrt_alphas_cumprod, t, x_start.shape) * x_start
            + extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)


class SinusoidalPositionEmbeddings(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, time):
        half_dim = self.dim // 2
        embeddings = math.log(10000) / (half_dim - 1)
        embeddings = torch.exp(torch.arange(half_dim) * -embeddings)
        embeddings = time[:, None] * embeddings[None, :]
        return torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(16), nn.Linear(16, 32),
                                      nn.GELU())
        self.net = nn.Sequential(nn.Linear(2 + 32, 64), nn.SiLU(), nn.Linear(64, 64),
                                 nn.SiLU(), nn.Linear(64, 2))

    def forward(self, x, t):
        return self.net(torch.cat([x, self.time_mlp(t.float())], dim=1))


data = torch.randn(256, 2) * torch.tensor([1.0, 0.3]) + torch.tensor([0.5, -1.0])
model = Denoiser()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(40):
    batch = data[torch.randperm(256)[:64]]
    t = torch.randint(0, T, (64,), dtype=torch.long)
    noise = torch.randn_like(batch)
    loss = F.mse_loss(model(q_sample(batch, t, noise), t), noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.5f}")
x = torch.randn(8, 2)
with torch.no_grad():
    for i in reversed(range(0, T, 10)):
        t = torch.full((8,), i, dtype=torch.long)
        mean = extract(sqrt_recip_alphas, t, x.shape) * (
            x - extract(betas, t, x.shape) * model(x, t)
            / extract(sqrt_one_minus_alphas_cumprod, t, x.shape))
        x = mean + torch.sqrt(extract(posterior_variance, t, x.shape)) * torch.randn_like(x)
print(x.mean(0), x.std(0))
