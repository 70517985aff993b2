// braid::distributed with no communication backend, as MLX behaves when none can start: the
// singleton group (rank 0, size 1), collectives that return their input, send and recv that
// refuse, strict init that fails with MLX's messages, and groups shared between threads.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "braid/distributed.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
namespace dist = braid::distributed;

namespace {

template <typename Error, typename Fn>
void expect_error(Fn fn, const std::string& message) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected " << message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

}  // namespace

TEST(Distributed, NoBackendIsAvailable) {
  EXPECT_FALSE(dist::is_available());
  for (const char* bk : {"any", "mpi", "ring", "nccl", "jaccl", "no-such-backend"}) {
    EXPECT_FALSE(dist::is_available(bk)) << bk;
  }
}

TEST(Distributed, InitReturnsTheSingletonGroupForEveryBackendName) {
  for (const char* bk : {"any", "mpi", "ring", "nccl", "jaccl"}) {
    const dist::Group g = dist::init(false, bk);
    EXPECT_EQ(g.rank(), 0) << bk;
    EXPECT_EQ(g.size(), 1) << bk;
  }
  EXPECT_EQ(dist::init().size(), 1);
}

TEST(Distributed, StrictInitThrowsMlxsRuntimeErrors) {
  expect_error<std::runtime_error>([] { dist::init(true); }, "[distributed] Couldn't initialize any backend");
  expect_error<std::runtime_error>([] { dist::init(true, "mpi"); }, "Cannot initialize MPI");
  expect_error<std::runtime_error>([] { dist::init(true, "ring"); }, "Cannot initialize ring distributed backend.");
  expect_error<std::runtime_error>([] { dist::init(true, "nccl"); }, "Cannot initialize nccl distributed backend.");
  expect_error<std::runtime_error>([] { dist::init(true, "jaccl"); },
                                   "Cannot initialize jaccl distributed backend.");
}

TEST(Distributed, UnknownBackendIsAnInvalidArgumentStrictOrNot) {
  const std::string message =
      "[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', 'jaccl' and 'ring' but 'gloo' "
      "was provided.";
  expect_error<std::invalid_argument>([] { dist::init(false, "gloo"); }, message);
  expect_error<std::invalid_argument>([] { dist::init(true, "gloo"); }, message);
}

TEST(Distributed, SingletonGroupCannotBeSplit) {
  const dist::Group g = dist::init();
  expect_error<std::runtime_error>([&] { g.split(0); }, "[split] Cannot split the distributed group further.");
  expect_error<std::runtime_error>([&] { g.split(1, 3); }, "[split] Cannot split the distributed group further.");
}

TEST(Distributed, CollectivesReturnTheirInputOnASingletonGroup) {
  const array x = array({1.0f, -2.0f, 3.0f, 4.0f}, {2, 2});
  const dist::Group g = dist::init();
  using Collective = array (*)(const array&, std::optional<dist::Group>, StreamOrDevice);
  for (Collective op : {&dist::all_sum, &dist::all_gather, &dist::all_max, &dist::all_min, &dist::sum_scatter}) {
    EXPECT_EQ(op(x, std::nullopt, {}).id(), x.id());
    EXPECT_EQ(op(x, g, Device::cpu).id(), x.id());
  }
  EXPECT_EQ(test::values(dist::all_sum(x)), (std::vector<double>{1, -2, 3, 4}));
}

TEST(Distributed, SingletonCollectivesKeepShapesThatALargerGroupWouldChange) {
  // all_gather of a scalar and sum_scatter of an axis 0 that no group size divides: still `x`.
  const array scalar(5);
  EXPECT_EQ(dist::all_gather(scalar).shape(), Shape{});
  const array odd = zeros({3, 2}, int32);
  EXPECT_EQ(dist::sum_scatter(odd).shape(), (Shape{3, 2}));
  EXPECT_EQ(dist::all_gather(odd).dtype(), int32);
}

TEST(Distributed, SendAndRecvOnASingletonGroupAreInvalidArguments) {
  const array x = ones({3});
  expect_error<std::invalid_argument>([&] { dist::send(x, 0); }, "[send] Cannot send to a singleton group");
  expect_error<std::invalid_argument>([&] { dist::send(x, 1, dist::init()); },
                                      "[send] Cannot send to a singleton group");
  expect_error<std::invalid_argument>([] { dist::recv({3}, float32, 0); },
                                      "[recv] Cannot recv from a singleton group");
  expect_error<std::invalid_argument>([&] { dist::recv_like(x, 0); }, "[recv] Cannot recv from a singleton group");
}

TEST(DistributedThreads, GroupsAndCollectivesWorkFromManyThreads) {
  braid_test::Watchdog watchdog;
  const dist::Group shared = dist::init();
  const array x = arange(8.0f);
  std::vector<int> sizes(8, 0);
  std::vector<double> sums(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const dist::Group g = t % 2 ? dist::init() : shared;
      sizes[t] = g.size() + g.rank();
      sums[t] = test::values(sum(dist::all_sum(x, g)))[0];
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(sizes[t], 1) << "thread " << t;
    EXPECT_EQ(sums[t], 28.0) << "thread " << t;
  }
}
