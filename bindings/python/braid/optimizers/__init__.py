"""braid.optimizers: optimizers, learning-rate schedules and gradient clipping, as
mlx.optimizers (``import braid.optimizers as optim``)."""

from braid.optimizers.optimizers import (
    AdaDelta,
    Adafactor,
    Adagrad,
    Adam,
    Adamax,
    AdamW,
    Lion,
    MultiOptimizer,
    Muon,
    Optimizer,
    RMSprop,
    SGD,
    clip_grad_norm,
)
from braid.optimizers.schedulers import (
    cosine_decay,
    exponential_decay,
    join_schedules,
    linear_schedule,
    step_decay,
)
