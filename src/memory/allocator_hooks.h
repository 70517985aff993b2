// Test hooks into the allocator.
#pragma once

namespace braid::detail {
/// The next `count` allocations throw std::bad_alloc (injected failure, for tests).
void fail_next_allocations(int count);
}  // namespace braid::detail
