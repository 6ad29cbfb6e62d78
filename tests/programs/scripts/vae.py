# The PyTorch examples' VAE: fc encoder to mu/logvar, reparameterization with randn_like,
# BCE reconstruction + KL divergence summed, Adam (random images stand in for MNIST)
import torch
from torch import nn, optim
from torch.nn import functional as F

torch.manual_seed(1)
data = torch.rand(64, 1, 28, 28)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=16,
                                     shuffle=True)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 100)
        self.fc21 = nn.Linear(100, 10)
        self.fc22 = nn.Linear(100, 10)
        self.fc3 = nn.Linear(10, 100)
        self.fc4 = nn.Linear(100, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(1, 3):
    model.train()
    train_loss = 0
    for (x,) in loader:
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(x)
        loss = loss_function(recon_batch, x, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    print(f"====> Epoch: {epoch} Average loss: {train_loss / len(loader.dataset):.4f}")
with torch.no_grad():
    sample = model.decode(torch.randn(4, 10))
    print(sample.sum(1))
