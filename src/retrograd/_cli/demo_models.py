"""The two small networks ``retrograd demo`` trains on the 8x8 digits.

They are written the way a user would write them (one line per layer in
``features``/``classifier``), so the graph picture's source lines point here.

Example:
    >>> import retrograd as torch
    >>> from retrograd._cli.demo_models import DigitsCNN
    >>> torch.manual_seed(0) is not None
    True
    >>> DigitsCNN()(torch.zeros(2, 1, 8, 8)).shape
    torch.Size([2, 10])
"""

from __future__ import annotations

import retrograd as torch
from retrograd import nn

__all__ = ["DigitsCNN", "DigitsMLP", "step_loss", "as_user_code"]


class DigitsCNN(nn.Module):
    """Two 3x3 convolutions with max-pooling, then two linear layers (8x8 -> 10 classes)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(32 * 2 * 2, 64)
        self.fc2 = nn.Linear(64, 10)

    def features(self, x):
        x = self.pool(torch.relu(self.conv1(x)))  # (N, 16, 4, 4)
        x = self.pool(torch.relu(self.conv2(x)))  # (N, 32, 2, 2)
        return x

    def classifier(self, x):
        x = torch.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)

    def forward(self, x):
        return self.classifier(self.features(x))


class DigitsMLP(nn.Module):
    """A multilayer perceptron on the 64 pixels: 64 -> 64 -> 32 -> 10."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, 10)

    def features(self, x):
        x = torch.relu(self.fc1(x.flatten(1)))
        x = torch.relu(self.fc2(x))
        return x

    def classifier(self, x):
        return self.fc3(x)

    def forward(self, x):
        return self.classifier(self.features(x))


def step_loss(net, loss_fn, x, y, amp: str | None = None, checkpoint: bool = False):
    """Logits and loss of one batch, optionally under bfloat16 autocast and with the
    feature layers checkpointed (recomputed in backward instead of saved)."""
    if amp:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return step_loss(net, loss_fn, x, y, None, checkpoint)
    if checkpoint:
        from retrograd.utils.checkpoint import checkpoint as ckpt

        logits = net.classifier(ckpt(net.features, x, use_reentrant=False))
    else:
        logits = net(x)
    loss = loss_fn(logits, y)
    return logits, loss


def as_user_code(*files: str) -> None:
    """Name lines of this file (and of ``files``) as the source of the nodes they create.

    Note [Demo sites]: nodes record the first frame outside the retrograd package as
    their source line (Note [User sites] in _graph/node.py). These models live inside
    the package but stand for user code, so the demo marks this file as user code in
    that per-file cache; the graph picture then shows `x = self.pool(...)` lines.
    """
    from .._graph.node import _IS_OURS

    _IS_OURS[__file__] = False
    for f in files:  # e.g. the tour (Note [Tour sites] in retrograd/_cli/tour.py)
        _IS_OURS[f] = False
    _IS_OURS[DigitsCNN.forward.__code__.co_filename] = False
