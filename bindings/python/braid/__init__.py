"""braid: lazy arrays on the CPU and NVIDIA GPUs whose streams work from any thread.

``import braid.core as mx`` gives mlx.core's names: arrays, ops, transforms, random numbers,
io, devices and streams.
"""


def _dtype(name):
    """The dtype braid.core.<name> (unpickling a Dtype calls this)."""
    import braid.core

    return getattr(braid.core, name)
