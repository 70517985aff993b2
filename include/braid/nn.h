// braid::nn: modules, layers, activations, losses and initializers (MLX's mlx.nn, in C++).
#pragma once

#include "braid/nn/activations.h"
#include "braid/nn/init.h"
#include "braid/nn/losses.h"
#include "braid/nn/layers.h"
#include "braid/nn/module.h"
