// braid::nn: modules, layers, activations, losses and initializers (MLX's mlx.nn, in C++).
#pragma once

#include "braid/nn/layers.h"
#include "braid/nn/module.h"
