// The distributed groups: is_available, init and Group, for a build with no communication backend.
// Every group is the process's singleton group, one immutable object shared by all callers; a
// backend would add a GroupImpl of its own and be tried by init.
#include <array>
#include <stdexcept>
#include <string>

#include "braid/distributed.h"

namespace braid::distributed {

namespace detail {

/// What a group is to the ops: its rank, its size and its subgroups.
class GroupImpl {
 public:
  virtual ~GroupImpl() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::shared_ptr<GroupImpl> split(int color, int key) const = 0;
};

}  // namespace detail

namespace {

class SingletonGroup final : public detail::GroupImpl {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::shared_ptr<GroupImpl> split(int, int) const override {
    throw std::runtime_error("[split] Cannot split the distributed group further.");
  }
};

// Created on first use and never destroyed, so no exit-time destructor races a thread that
// still holds a group.
const std::shared_ptr<detail::GroupImpl>& singleton_group() {
  static const auto* group = new std::shared_ptr<detail::GroupImpl>(std::make_shared<SingletonGroup>());
  return *group;
}

// MLX's backend names, and what its strict init says when each cannot start.
struct BackendName {
  const char* name;
  const char* strict_error;
};
constexpr std::array<BackendName, 4> kBackends = {{
    {"mpi", "Cannot initialize MPI"},
    {"ring", "Cannot initialize ring distributed backend."},
    {"nccl", "Cannot initialize nccl distributed backend."},
    {"jaccl", "Cannot initialize jaccl distributed backend."},
}};

}  // namespace

bool is_available() { return false; }

bool is_available(const std::string&) { return false; }

int Group::rank() const { return group_->rank(); }

int Group::size() const { return group_->size(); }

Group Group::split(int color, int key) const { return Group(group_->split(color, key)); }

Group init(bool strict, const std::string& bk) {
  if (bk == "any") {
    if (strict) throw std::runtime_error("[distributed] Couldn't initialize any backend");
    return Group(singleton_group());
  }
  for (const auto& backend : kBackends) {
    if (bk != backend.name) continue;
    if (strict) throw std::runtime_error(backend.strict_error);
    return Group(singleton_group());
  }
  throw std::invalid_argument("[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', "
                              "'jaccl' and 'ring' but '" + bk + "' was provided.");
}

}  // namespace braid::distributed
