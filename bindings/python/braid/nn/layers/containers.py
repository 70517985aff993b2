"""Sequential, the container that calls its layers one after another."""

from braid.nn.layers.base import Module


class Sequential(Module):
    """Calls ``modules`` in order, each on the previous one's output. Plain callables
    (``nn.relu``, ``mx.sigmoid``) may stand between the modules."""

    def __init__(self, *modules):
        super().__init__()
        self.layers = list(modules)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
