// A watchdog for concurrent tests: a hang becomes a failure with the test's name, not a
// silent timeout of the whole run.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace braid_test {

/// Aborts the process if it is still alive `limit` after construction. Limits are generous
/// (sanitizer builds run many times slower); BRAID_WATCHDOG_SCALE multiplies them.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit = std::chrono::seconds(120)) : limit_(scaled(limit)) {
    if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
      name_ = std::string(info->test_suite_name()) + "." + info->name();
    } else {
      name_ = "(outside a test)";
    }
    thread_ = std::thread([this] { watch(); });
  }

  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  static std::chrono::seconds scaled(std::chrono::seconds limit) {
    if (const char* env = std::getenv("BRAID_WATCHDOG_SCALE")) {
      int k = std::atoi(env);
      if (k > 0) return limit * k;
    }
    return limit;
  }

  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, limit_, [this] { return done_; })) return;
    std::fprintf(stderr, "\n[WATCHDOG] %s did not finish within %lld s: treating the hang as a failure.\n",
                 name_.c_str(), static_cast<long long>(limit_.count()));
    std::fflush(stderr);
    std::abort();
  }

  std::chrono::seconds limit_;
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace braid_test
