"""Optimizers of braid.optimizers, as mlx.optimizers: each one updates a tree of parameters
from a tree of gradients, keeping its per-parameter state in a tree of the same structure."""

from typing import Callable, List, Optional, Tuple, Union

import braid.core as mx
from braid.nn import Module
from braid.utils import tree_flatten, tree_map, tree_merge, tree_reduce, tree_unflatten


class Optimizer:
    """Base class: a subclass gives the state of one parameter (:meth:`init_single`) and its
    update (:meth:`apply_single`); this class applies them over trees.

    ``state`` holds ``step`` (uint64, counted before each update), the hyper-parameters put
    on a schedule (``learning_rate``) and one dict per parameter.
    """

    def __init__(self, schedulers=None):
        self._initialized = False
        self._state = {"step": mx.array(0, mx.uint64)}
        self._schedulers = {k: v for k, v in (schedulers or {}).items()}

    def update(self, model: Module, gradients: dict):
        """Applies ``gradients`` (e.g. from :func:`braid.nn.value_and_grad`) to ``model``'s
        parameters and stores the results in the model."""
        model.update(self.apply_gradients(gradients, model))

    def init(self, parameters: dict):
        """Creates the state of every parameter of ``parameters`` that has none yet.

        Optional: the first update does it. Useful to see :attr:`state` before updating.
        """

        def match_structure(params, state):
            if isinstance(params, (list, tuple)):
                state = list(state)
                for i in range(len(state)):
                    state[i] = match_structure(params[i], state[i])
                if len(state) != len(params):
                    state.extend(tree_map(lambda _: {}, params[len(state):]))
                return type(params)(state)
            if isinstance(params, dict):
                for k, v in params.items():
                    if k not in state:
                        state[k] = tree_map(lambda _: {}, v)
                    else:
                        state[k] = match_structure(v, state[k])
                return state
            return state

        def init_one(parameter, state):
            # Only the entries a state lacks: a loaded state keeps its values, and a lone
            # array shares the top-level dict (which holds "step") as its state.
            fresh = {}
            self.init_single(parameter, fresh)
            for key, value in fresh.items():
                state.setdefault(key, value)

        match_structure(parameters, self._state)
        tree_map(init_one, parameters, self._state)
        self._initialized = True

    def init_single(self, parameter: mx.array, state: dict):
        """Fills ``state`` for one parameter (subclasses)."""
        raise NotImplementedError()

    def apply_gradients(self, gradients: dict, parameters: dict):
        """The updated parameters, a tree shaped like ``gradients`` (``parameters`` may hold
        more). ``model.update(opt.apply_gradients(grads, model))`` is :meth:`update`."""
        if not self._initialized:
            self.init(gradients)
        for name, schedule in self._schedulers.items():
            self.state[name] = schedule(self.step)
        self.state["step"] = self.step + 1
        return tree_map(self.apply_single, gradients, parameters, self.state)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        """The updated ``parameter``; may update ``state`` (subclasses)."""
        raise NotImplementedError()

    @property
    def state(self):
        """The optimizer's state: a tree that can be saved and set back."""
        return self._state

    @state.setter
    def state(self, state: dict):
        self._initialized = False
        self._state = state

    @property
    def step(self):
        return self.state["step"]

    @property
    def learning_rate(self):
        return self.state["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, learning_rate: Union[float, mx.array]):
        self.state["learning_rate"] = mx.array(learning_rate)

    def _maybe_schedule(self, name: str, param: Union[float, Callable[[mx.array], mx.array]]):
        """Sets hyper-parameter ``name`` to a value or a schedule of the step (subclasses)."""
        if callable(param):
            self._schedulers[name] = param
            value = param(self.step)
        else:
            value = mx.array(param)
        self.state[name] = value


class MultiOptimizer(Optimizer):
    """Dispatches parameters to several optimizers: parameter ``(path, array)`` goes to the
    first optimizer whose filter accepts it; the last optimizer (which has no filter) takes
    the rest. ``filters`` has one element fewer than ``optimizers``."""

    def __init__(self, optimizers, filters: list = []):
        super().__init__()
        self._state = {}
        if len(filters) != len(optimizers) - 1:
            raise ValueError(f"Given {len(filters)} filters but {len(optimizers) - 1} needed.")
        self.optimizers = optimizers
        self.filters = list(filters) + [lambda *args, **kwargs: True]

    def _split_dictionary(self, gradients: dict):
        if len(self.optimizers) == 1:
            return [gradients]
        parts = [[] for _ in self.optimizers]
        for key, grad in tree_flatten(gradients):
            for i, accepts in enumerate(self.filters):
                if accepts(key, grad):
                    parts[i].append((key, grad))
                    break
        return [tree_unflatten(p) if p else {} for p in parts]

    def init(self, parameters: dict):
        for optimizer, params in zip(self.optimizers, self._split_dictionary(parameters)):
            optimizer.init(params)

    def apply_gradients(self, gradients: dict, parameters: dict):
        tree = {}
        for optimizer, grads in zip(self.optimizers, self._split_dictionary(gradients)):
            tree = tree_merge(tree, optimizer.apply_gradients(grads, parameters))
        return tree

    @property
    def state(self):
        return {"states": [o.state for o in self.optimizers]}

    @state.setter
    def state(self, state: dict):
        if "states" not in state or len(state["states"]) != len(self.optimizers):
            raise ValueError("Invalid state provided")
        for optimizer, s in zip(self.optimizers, state["states"]):
            optimizer.state = s

    @property
    def learning_rate(self):
        return self.optimizers[0].learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate: Union[float, mx.array]):
        for optimizer in self.optimizers:
            optimizer.learning_rate = learning_rate


class SGD(Optimizer):
    r"""Stochastic gradient descent with optional momentum:
    :math:`v_{t+1} = \mu v_t + (1 - \tau) g_t`, :math:`w_{t+1} = w_t - \lambda v_{t+1}`
    (Nesterov: :math:`w_{t+1} = w_t - \lambda (g_t + \mu v_{t+1})`); ``weight_decay`` adds
    :math:`\text{wd} \cdot w` to the gradient."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        dampening: float = 0.0,
        nesterov: bool = False,
    ):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening.")
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.dampening = dampening
        self.nesterov = nesterov

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        lr = self.learning_rate.astype(gradient.dtype)
        if self.momentum <= 0:
            return parameter - lr * gradient

        v = self.momentum * state.get("v")
        if self.dampening > 0:
            v = v + (1 - self.dampening) * gradient
        else:
            v = v + gradient
        state["v"] = v
        update = gradient + self.momentum * v if self.nesterov else v
        return parameter - lr * update


class RMSprop(Optimizer):
    r"""RMSprop: :math:`v_{t+1} = \alpha v_t + (1 - \alpha) g_t^2`,
    :math:`w_{t+1} = w_t - \lambda g_t / (\sqrt{v_{t+1}} + \epsilon)`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        alpha: float = 0.99,
        eps: float = 1e-8,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.alpha = alpha
        self.eps = eps
        if self.alpha < 0.0:
            raise ValueError(f"RMSprop alpha should be >=0, {self.alpha} was provided instead")
        if self.eps < 0.0:
            raise ValueError(f"RMSprop epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        v = self.alpha * state["v"] + (1 - self.alpha) * mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adagrad(Optimizer):
    r"""Adagrad: :math:`v_{t+1} = v_t + g_t^2`,
    :math:`w_{t+1} = w_t - \lambda g_t / (\sqrt{v_{t+1}} + \epsilon)`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        eps: float = 1e-8,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        if self.eps < 0.0:
            raise ValueError(f"Adagrad epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        v = state["v"] + mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class AdaDelta(Optimizer):
    r"""AdaDelta with a learning rate: :math:`v_{t+1} = \rho v_t + (1 - \rho) g_t^2`,
    :math:`\Delta = \sqrt{u_t + \epsilon} / \sqrt{v_{t+1} + \epsilon} \, g_t`,
    :math:`u_{t+1} = \rho u_t + (1 - \rho) \Delta^2`, :math:`w_{t+1} = w_t - \lambda \Delta`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        rho: float = 0.9,
        eps: float = 1e-6,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.rho = rho
        self.eps = eps
        if self.rho < 0.0:
            raise ValueError(f"AdaDelta rho should be >=0, {self.rho} was provided instead")
        if self.eps < 0.0:
            raise ValueError(f"AdaDelta epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)
        state["u"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        rho, eps = self.rho, self.eps
        v = rho * state["v"] + (1 - rho) * mx.square(gradient)
        delta = mx.sqrt(state["u"] + eps) / mx.sqrt(v + eps) * gradient
        u = rho * state["u"] + (1 - rho) * mx.square(delta)
        state["v"] = v
        state["u"] = u
        return parameter - lr * delta


class Adam(Optimizer):
    r"""Adam: :math:`m_{t+1} = \beta_1 m_t + (1 - \beta_1) g_t`,
    :math:`v_{t+1} = \beta_2 v_t + (1 - \beta_2) g_t^2`,
    :math:`w_{t+1} = w_t - \lambda m_{t+1} / (\sqrt{v_{t+1}} + \epsilon)`; with
    ``bias_correction`` the moments are divided by :math:`1 - \beta^t`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        bias_correction: bool = False,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.eps = eps
        self.bias_correction = bias_correction

    def init_single(self, parameter: mx.array, state: dict):
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = b2 * state["v"] + (1 - b2) * mx.square(gradient)
        state["m"] = m
        state["v"] = v
        if self.bias_correction:
            # The corrections in the gradient's dtype, so a float16 parameter stays float16.
            step = self.step
            c1 = (lr / (1 - b1**step)).astype(gradient.dtype)
            c2 = mx.rsqrt(1 - b2**step).astype(gradient.dtype)
            return parameter - c1 * m / (mx.sqrt(v) * c2 + self.eps)
        return parameter - lr * m / (mx.sqrt(v) + self.eps)


class AdamW(Adam):
    r"""Adam with decoupled weight decay: the parameter is first scaled by
    :math:`1 - \lambda \cdot \text{weight\_decay}` (default 0.01), then updated as in
    :class:`Adam`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        bias_correction: bool = False,
    ):
        super().__init__(
            learning_rate=learning_rate, betas=betas, eps=eps, bias_correction=bias_correction
        )
        self.weight_decay = weight_decay

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        return super().apply_single(gradient, parameter * (1 - lr * self.weight_decay), state)


class Adamax(Adam):
    r"""Adamax, Adam with the infinity norm: :math:`v_{t+1} = \max(\beta_2 v_t, |g_t|)`,
    :math:`w_{t+1} = w_t - \lambda m_{t+1} / (v_{t+1} + \epsilon)`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
    ):
        super().__init__(learning_rate, betas, eps)
        if not 0.0 <= eps:
            raise ValueError(f"Epsilon value should be >=0, {self.eps} was provided instead")

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = mx.maximum(b2 * state["v"], mx.abs(gradient))
        state["m"] = m
        state["v"] = v
        return parameter - lr * m / (v + self.eps)


class Lion(Optimizer):
    r"""Lion: :math:`c = \beta_1 m_t + (1 - \beta_1) g_t`,
    :math:`m_{t+1} = \beta_2 m_t + (1 - \beta_2) g_t`,
    :math:`w_{t+1} = w_t (1 - \eta \lambda) - \eta \operatorname{sign}(c)`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.99],
        weight_decay: float = 0.0,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.weight_decay = weight_decay

    def init_single(self, parameter: mx.array, state: dict):
        state["m"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = state["m"]
        direction = b1 * m + (1 - b1) * gradient
        state["m"] = b2 * m + (1 - b2) * gradient
        if self.weight_decay > 0:
            parameter = (1 - lr * self.weight_decay) * parameter
        return parameter - lr * mx.sign(direction)


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern, 2018): second moments kept as row and column averages
    for parameters of 2 or more axes, updates clipped at ``clip_threshold`` RMS, a relative
    step size (``relative_step``) scaled by the parameter's RMS (``scale_parameter``)."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array], None] = None,
        eps: Tuple[float, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = -0.8,
        beta_1: Optional[float] = None,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
    ):
        super().__init__()
        if learning_rate is not None:
            self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta_1 = beta_1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init

    def init_single(self, parameter: mx.array, state: dict):
        if parameter.ndim >= 2:
            shape = parameter.shape
            dtype = parameter.dtype
            state["exp_avg_sq_row"] = mx.zeros(shape[:-1], dtype=dtype)
            state["exp_avg_sq_col"] = mx.zeros(shape[:-2] + shape[-1:], dtype=dtype)
        else:
            state["exp_avg_sq"] = mx.zeros_like(parameter)
        if self.beta_1 is not None:
            state["exp_avg"] = mx.zeros_like(parameter)

    def _compute_rms(self, inputs):
        return mx.sqrt(mx.mean(mx.square(inputs)))

    def _compute_learning_rate(self, step, parameter_rms):
        if self.relative_step:
            min_step = 1e-6 * step if self.warmup_init else 1e-2
            step_size = mx.minimum(min_step, mx.rsqrt(step))
        else:
            step_size = self.learning_rate
        step_size = step_size.astype(parameter_rms.dtype)
        scale = mx.maximum(self.eps[1], parameter_rms) if self.scale_parameter else 1.0
        return scale * step_size

    def _approximate_exp_moving_avg(self, exp_avg_sq_row, exp_avg_sq_col):
        row_factor = mx.rsqrt(exp_avg_sq_row / mx.mean(exp_avg_sq_row, axis=-1, keepdims=True))
        col_factor = mx.rsqrt(exp_avg_sq_col)
        return mx.matmul(mx.expand_dims(row_factor, axis=-1), mx.expand_dims(col_factor, axis=0))

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        factored = gradient.ndim >= 2
        step = self.step
        parameter_rms = self._compute_rms(parameter)
        learning_rate = self._compute_learning_rate(step, parameter_rms)
        beta_2 = 1.0 - (step**self.decay_rate).astype(parameter_rms.dtype)
        update = mx.square(gradient) + self.eps[0]

        if factored:
            row = beta_2 * state["exp_avg_sq_row"] + (1 - beta_2) * mx.mean(update, axis=-1)
            col = beta_2 * state["exp_avg_sq_col"] + (1 - beta_2) * mx.mean(update, axis=-2)
            state["exp_avg_sq_row"] = row
            state["exp_avg_sq_col"] = col
            update = self._approximate_exp_moving_avg(row, col) * gradient
        else:
            exp_avg_sq = beta_2 * state["exp_avg_sq"] + (1 - beta_2) * update
            state["exp_avg_sq"] = exp_avg_sq
            update = mx.rsqrt(exp_avg_sq) * gradient

        update = update / mx.maximum(1.0, self._compute_rms(update) / self.clip_threshold)
        update = learning_rate * update

        if self.beta_1 is not None:
            exp_avg = self.beta_1 * state["exp_avg"] + (1 - self.beta_1) * update
            state["exp_avg"] = exp_avg
            update = exp_avg

        if self.weight_decay != 0:
            parameter = parameter + parameter * (-self.weight_decay * learning_rate)
        return parameter - update


class Muon(Optimizer):
    r"""Muon, momentum orthogonalized by Newton-Schulz: the momentum update of a parameter
    with 2 or more axes (flattened to ``[shape[0], -1]`` above 2) is replaced by an
    approximately orthogonal matrix (``ns_steps`` quintic Newton-Schulz iterations) and the
    learning rate scaled by :math:`\sqrt{\max(1, \text{shape}[-2] / \text{shape}[-1])}`
    of the parameter's own shape, as MLX's; other parameters take the plain momentum update.
    ``weight_decay`` adds :math:`\text{wd} \cdot w` to the gradient. The same numbers as
    ``braid::optimizers::Muon`` in C++."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        momentum: float = 0.95,
        weight_decay: float = 0.01,
        nesterov: bool = True,
        ns_steps: int = 5,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.ns_steps = ns_steps

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def _zeropower_via_newtonschulz5(self, x, steps: int):
        """An approximately orthogonal matrix with the singular vectors of ``x`` (2-d)."""
        # Coefficients of the quintic iteration, chosen for a steep slope at zero.
        a, b, c = 3.4445, -4.7750, 2.0315
        wide = x.shape[-2] <= x.shape[-1]
        if not wide:
            x = x.T
        x = x / (mx.sqrt(mx.sum(mx.square(x))) + 1e-7)
        for _ in range(steps):
            gram = x @ x.T
            poly = mx.addmm(b * gram, gram, gram, alpha=c, beta=1.0)
            x = mx.addmm(a * x, poly, x, alpha=1.0, beta=1.0)
        return x if wide else x.T

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        v = self.momentum * state["v"] + (1 - self.momentum) * gradient
        state["v"] = v
        if self.nesterov:
            update = gradient * (1 - self.momentum) + v * self.momentum
        else:
            update = v

        lr = self.learning_rate.astype(gradient.dtype)
        if update.ndim >= 2:
            shape = update.shape
            matrix = update.reshape(shape[0], -1) if update.ndim > 2 else update
            update = self._zeropower_via_newtonschulz5(matrix, steps=self.ns_steps).reshape(shape)
            # MLX scales by the parameter's last two axes, not by the flattened matrix's.
            lr = lr * max(1, shape[-2] / shape[-1]) ** 0.5
        return parameter - lr * update


def clip_grad_norm(grads, max_norm):
    """``(grads scaled by max_norm / (norm + 1e-6) if their global L2 norm reaches max_norm,
    that norm)``."""
    norm_squared = tree_reduce(lambda acc, g: acc + mx.sum(mx.square(g)), grads, 0.0)
    total_norm = mx.sqrt(norm_squared)
    normalizer = max_norm / (total_norm + 1e-6)

    def clip(g):
        return mx.where(total_norm < max_norm, g, g * normalizer)

    return tree_map(clip, grads), total_norm
