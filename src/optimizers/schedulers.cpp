// Learning-rate schedules (MLX's mlx.optimizers.schedulers): functions of the step count, an
// integer array, built from ops so that an optimizer can evaluate them lazily.
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "braid/ops.h"
#include "braid/optimizers.h"
#include "python_scalars.h"

namespace braid::optimizers {

using detail::py_float;
using detail::py_int;

Schedule exponential_decay(double init, double decay_rate) {
  return [init, decay_rate](const array& step) {
    array rate = py_float(decay_rate, step);
    array decay = power(rate, astype(step, rate.dtype()));
    return py_float(init, decay) * decay;
  };
}

Schedule step_decay(double init, double decay_rate, int64_t step_size) {
  return [init, decay_rate, step_size](const array& step) {
    array periods = floor_divide(step, py_int(step_size, step));
    array rate = py_float(decay_rate, periods);
    array decay = power(rate, astype(periods, rate.dtype()));
    return py_float(init, decay) * decay;
  };
}

Schedule cosine_decay(double init, int64_t decay_steps, double end) {
  // MLX's pi / decay_steps raises ZeroDivisionError at the first call; here before any.
  if (decay_steps == 0) throw std::invalid_argument("[cosine_decay] decay_steps must not be 0.");
  return [init, decay_steps, end](const array& step) {
    array s = minimum(step, py_int(decay_steps, step));
    array angle = py_float(std::numbers::pi / static_cast<double>(decay_steps), s);
    angle = angle * astype(s, angle.dtype());
    array decay = py_float(0.5, angle) * (py_float(1.0, angle) + cos(angle));
    return py_float(end, decay) + decay * py_float(init - end, decay);
  };
}

Schedule linear_schedule(double init, double end, int64_t steps) {
  if (steps < 1)
    throw std::invalid_argument("[linear_schedule] steps must be greater than 0, but got " +
                                std::to_string(steps) + ".");
  return [init, end, steps](const array& step) {
    array s = minimum(step, py_int(steps, step));
    array slope = py_float((end - init) / static_cast<double>(steps), s);
    array value = astype(s, slope.dtype()) * slope;
    return value + py_float(init, value);
  };
}

Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries) {
  if (schedules.empty())
    throw std::invalid_argument("[join_schedules] Must provide at least 1 schedule to join.");
  if (schedules.size() != boundaries.size() + 1) {
    throw std::invalid_argument("[join_schedules] Received " + std::to_string(boundaries.size()) +
                                " boundaries but expected " + std::to_string(schedules.size() - 1) + ".");
  }
  for (const auto& schedule : schedules) {
    if (!schedule) throw std::invalid_argument("[join_schedules] A schedule is empty.");
  }
  return [schedules = std::move(schedules), boundaries = std::move(boundaries)](const array& step) {
    array output = schedules[0](step);
    for (size_t i = 0; i < boundaries.size(); ++i) {
      array boundary = py_int(boundaries[i], step);
      // Before the boundary an unsigned step - boundary wraps around, as in MLX; where discards it.
      output = where(step < boundary, output, schedules[i + 1](step - boundary));
    }
    return output;
  };
}

}  // namespace braid::optimizers
