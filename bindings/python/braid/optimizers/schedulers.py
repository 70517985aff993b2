"""Learning-rate schedules of braid.optimizers, as mlx.optimizers': each returns a function of
the step (an array) that an optimizer accepts as its learning rate."""

import math
from typing import Callable, List

import braid.core as mx


def exponential_decay(init: float, decay_rate: float) -> Callable:
    """``init * decay_rate ** step``."""

    def schedule(step):
        return init * decay_rate**step

    return schedule


def step_decay(init: float, decay_rate: float, step_size: int) -> Callable:
    """``init * decay_rate ** (step // step_size)``: a decay every ``step_size`` steps."""

    def schedule(step):
        return init * (decay_rate ** (step // step_size))

    return schedule


def cosine_decay(init: float, decay_steps: int, end: float = 0.0) -> Callable:
    """Half a cosine from ``init`` down to ``end`` over ``decay_steps`` steps, then ``end``."""

    def schedule(step):
        s = mx.minimum(step, decay_steps)
        decay = 0.5 * (1.0 + mx.cos((math.pi / decay_steps) * s))
        return end + decay * (init - end)

    return schedule


def join_schedules(schedules: List[Callable], boundaries: List[int]) -> Callable:
    """``schedules[0]`` until ``boundaries[0]``, then ``schedules[1]`` (counting its steps
    from that boundary), and so on; ``len(boundaries) == len(schedules) - 1``."""
    if len(schedules) == 0:
        raise ValueError("Must provide at least 1 schedule to join.")
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(
            f"Received {len(boundaries)} boundaries but expected {len(schedules) - 1}."
        )

    def schedule(step):
        value = schedules[0](step)
        for boundary, later in zip(boundaries, schedules[1:]):
            value = mx.where(step < boundary, value, later(step - boundary))
        return value

    return schedule


def linear_schedule(init: float, end: float, steps: int) -> Callable:
    """From ``init`` to ``end`` linearly over ``steps`` steps, then ``end``."""
    if steps < 1:
        raise ValueError(f"steps must be greater than 0, but got {steps}.")

    def schedule(step):
        step = mx.minimum(step, steps)
        return step * ((end - init) / steps) + init

    return schedule
