# The PyTorch tutorials' CIFAR-10 classifier: Conv2d, MaxPool2d, flatten, SGD with momentum
# (random images stand in for CIFAR-10)
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
images = torch.randn(64, 3, 32, 32)
targets = torch.randint(0, 10, (64,))
trainloader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(images, targets), batch_size=8, shuffle=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(2):
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 4 == 3:
            print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 4:.3f}")
            running_loss = 0.0
with torch.no_grad():
    _, predicted = torch.max(net(images[:8]), 1)
print("Predicted:", " ".join(f"{p.item()}" for p in predicted))
