"""braid.nn: neural network layers, losses and initializers, as mlx.nn.

``import braid.nn as nn`` gives MLX's names: Module, the layers, the activation functions,
``nn.losses``, ``nn.init``, ``nn.value_and_grad``, ``nn.average_gradients`` and ``nn.quantize``.
"""

from braid.nn import init, losses
from braid.nn.layers import *  # noqa: F401,F403
from braid.nn.layers import activations
from braid.nn.utils import average_gradients, checkpoint, value_and_grad
