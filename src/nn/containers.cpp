// Sequential (MLX's containers.py).
#include "braid/nn/layers.h"

namespace braid::nn {

namespace {

// A plain function in a Sequential: no parameters, an (empty) place in the layer list.
class FunctionLayer : public Module {
 public:
  explicit FunctionLayer(UnaryFunction fn) : fn_(std::move(fn)) {}
  std::string name() const override { return "Function"; }
  array operator()(const array& x) override { return fn_(x); }

 private:
  UnaryFunction fn_;
};

}  // namespace

std::shared_ptr<Module> Sequential::as_layer(UnaryFunction fn) {
  if (!fn) throw std::invalid_argument("[Sequential] A layer is an empty function.");
  return std::make_shared<FunctionLayer>(std::move(fn));
}

Sequential::Sequential(std::vector<std::shared_ptr<Module>> layers) {
  layers_ = register_modules("layers", std::move(layers));
}

array Sequential::operator()(const array& x) {
  array y = x;
  for (auto& layer : layers_) y = (*layer)(y);
  return y;
}

}  // namespace braid::nn
