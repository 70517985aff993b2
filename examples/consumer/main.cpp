// Builds a lazy graph on the main thread and evaluates it on another thread: the installed
// library keeps braid's promise that graphs cross threads.
#include <braid/braid.h>

#include <cstdio>
#include <thread>

int main() {
  braid::Stream stream = braid::new_stream(braid::Device::cpu);
  braid::array x = braid::arange(8.0f, stream);
  braid::array y = x * 3.0f + 1.0f;  // nothing is computed yet

  bool ok = true;
  std::thread evaluator([&] {
    braid::eval(y);
    const float* values = y.data<float>();
    for (int i = 0; i < 8; ++i) {
      if (values[i] != 3.0f * i + 1.0f) {
        std::fprintf(stderr, "y[%d] = %g, expected %g\n", i, values[i], 3.0f * i + 1.0f);
        ok = false;
      }
    }
  });
  evaluator.join();

  std::printf("braid %s: %s\n", braid::version(), ok ? "graph built on one thread, evaluated on another" : "FAILED");
  return ok ? 0 : 1;
}
