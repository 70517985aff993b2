// braid::nn: modules, layers, activations, losses and initializers (MLX's mlx.nn, in C++).
#pragma once

#include "braid/nn/activations.h"
#include "braid/nn/module.h"
