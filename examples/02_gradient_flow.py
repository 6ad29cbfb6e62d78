"""Exercise 2: visualise the magnitude of gradients at each layer during training.

Two deep multilayer perceptrons learn the 8x8 digits shipped with retrograd, from the
same initial weights with the same optimiser: one with sigmoid activations, one with
ReLU. A ``GradFlowMonitor`` records the mean |grad| of
every parameter at every optimizer step and plots it per layer.

The pattern to notice: with sigmoids the gradient shrinks layer by layer on its way
back to the input (the sigmoid's slope is at most 1/4), so the first layers learn
slowest: the *vanishing gradient*. With ReLU the layers get gradients of a similar
size, and the network learns. The script prints the ratio mean|grad(first layer)| /
mean|grad(last layer)| and the final loss of each.

Run: ``python examples/02_gradient_flow.py --out flow`` (the plots need matplotlib:
``pip install "retrograd[demo]"``; without it the numbers are still printed).
"""

import argparse
import os

import retrograd as torch
from retrograd import nn
from retrograd.data import load_digits
from retrograd.viz import GradFlowMonitor


def deep_mlp(activation, depth: int = 6, width: int = 32):
    """``depth`` hidden layers; every Linear starts from He initialisation."""
    layers, n_in = [nn.Flatten()], 64
    for _ in range(depth):
        layers += [nn.Linear(n_in, width), activation()]
        n_in = width
    layers.append(nn.Linear(n_in, 10))
    for layer in layers:
        if isinstance(layer, nn.Linear):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


def train(model, x, y, steps: int, lr: float, batch: int = 64):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    monitor = GradFlowMonitor(model, optimizer=opt, vanish=1e-5, explode=10.0)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        idx = torch.randint(0, x.shape[0], (batch,), generator=g)
        loss = loss_fn(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    monitor.remove()
    return monitor, loss.item()


def first_last_ratio(monitor) -> float:
    weights = [n for n in monitor.names if n.endswith("weight")]
    first = monitor.history[weights[0]]["mean"]
    last = monitor.history[weights[-1]]["mean"]
    return (sum(first) / len(first)) / (sum(last) / len(last))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--out", default="gradient-flow")
    args = p.parse_args(argv)
    torch.manual_seed(0)
    x, y = load_digits()
    result = {}
    for name, act in (("sigmoid", nn.Sigmoid), ("relu", nn.ReLU)):
        torch.manual_seed(0)  # same data order, same initial weights: only the activation differs
        model = deep_mlp(act, depth=args.depth)
        monitor, loss = train(model, x, y, args.steps, lr=0.05)
        ratio = first_last_ratio(monitor)
        result[name] = {"ratio": ratio, "loss": loss, "flagged": monitor.flagged_layers()}
        print(f"\n{name}: final loss {loss:.3f}; mean|grad| first/last layer = {ratio:.3g}")
        print(monitor.summary())
        try:
            os.makedirs(args.out, exist_ok=True)
            path = os.path.join(args.out, f"grad_flow_{name}.png")
            monitor.plot(path, title=f"{args.depth} hidden layers with {name}: mean |grad| "
                         "per layer")
            result[name]["plot"] = path
            print(f"plot: {path}")
        except ImportError as e:
            print(f"(no plot: {e})")
    print(f"\nThe sigmoid network's first layer gets {result['sigmoid']['ratio']:.2g}x the "
          f"gradient of its last; the ReLU network's {result['relu']['ratio']:.2g}x.")
    return result


if __name__ == "__main__":
    main()
