"""braid: lazy arrays on the CPU and NVIDIA GPUs whose streams work from any thread.

``import braid.core as mx`` gives mlx.core's names: arrays, ops, transforms, random numbers,
io, devices and streams.
"""

import ctypes as _ctypes

# The C++ runtime must be in the process's global symbol scope before braid.core loads. When a
# module imported earlier had loaded libstdc++ privately (RTLD_LOCAL; NumPy 2.5's wheels on
# Ubuntu 24.04 do), formatting a number through iostreams in braid (repr, error messages)
# crashed; with the runtime global, as LD_PRELOAD would make it, it does not. Promoting it here
# is harmless when it is already global or not used.
try:
    _ctypes.CDLL("libstdc++.so.6", mode=_ctypes.RTLD_GLOBAL)
except OSError:
    pass


def _dtype(name):
    """The dtype braid.core.<name> (unpickling a Dtype calls this)."""
    import braid.core

    return getattr(braid.core, name)
