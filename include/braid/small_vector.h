// SmallVector: a std::vector-like container that keeps up to N elements inline, so shapes
// and strides of ordinary arrays cost no heap allocation. Trivially copyable T only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace braid {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types");

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() = default;
  explicit SmallVector(size_t n) { resize(n); }
  SmallVector(size_t n, const T& v) { resize(n, v); }
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: as MLX's Shape
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> init) {
    assign(init.begin(), init.end());
    return *this;
  }
  ~SmallVector() { release(); }

  template <typename It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data_);
    size_ = static_cast<uint32_t>(n);
  }
  void assign(size_t n, const T& v) {
    size_ = 0;
    resize(n, v);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* cbegin() const { return data_; }
  const T* cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& at(size_t i) {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return data_[i];
  }
  const T& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return data_[i];
  }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    if (n > kMaxSize) throw std::length_error("SmallVector: more than 2^32 - 1 elements");
    size_t cap = std::min<size_t>(std::max<size_t>(n, size_t{capacity_} * 2), kMaxSize);
    T* p = static_cast<T*>(std::malloc(cap * sizeof(T)));
    if (p == nullptr) throw std::bad_alloc();
    if (size_ > 0) std::memcpy(p, data_, size_ * sizeof(T));
    if (data_ != inline_) std::free(data_);
    data_ = p;
    capacity_ = static_cast<uint32_t>(cap);
  }
  void resize(size_t n) { resize(n, T{}); }
  void resize(size_t n, const T& v) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = v;
    size_ = static_cast<uint32_t>(n);
  }
  void clear() { size_ = 0; }
  void push_back(const T& v) {
    if (size_ == capacity_) {
      T copy = v;  // v may live inside this vector
      reserve(size_ + 1);
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = v;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() { --size_; }

  T* insert(const T* pos, const T& v) {
    size_t i = static_cast<size_t>(pos - data_);
    T copy = v;
    reserve(size_ + 1);
    std::memmove(data_ + i + 1, data_ + i, (size_ - i) * sizeof(T));
    data_[i] = copy;
    ++size_;
    return data_ + i;
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  T* insert(const T* pos, It first, It last) {
    size_t i = static_cast<size_t>(pos - data_);
    size_t n = static_cast<size_t>(std::distance(first, last));
    SmallVector tmp(first, last);  // the range may alias this vector
    reserve(size_ + n);
    std::memmove(data_ + i + n, data_ + i, (size_ - i) * sizeof(T));
    std::copy(tmp.begin(), tmp.end(), data_ + i);
    size_ += static_cast<uint32_t>(n);
    return data_ + i;
  }
  T* insert(const T* pos, size_t n, const T& v) {
    SmallVector tmp(n, v);
    return insert(pos, tmp.begin(), tmp.end());
  }
  T* insert(const T* pos, std::initializer_list<T> init) { return insert(pos, init.begin(), init.end()); }
  T* erase(const T* pos) { return erase(pos, pos + 1); }
  T* erase(const T* first, const T* last) {
    size_t i = static_cast<size_t>(first - data_);
    size_t n = static_cast<size_t>(last - first);
    std::memmove(data_ + i, data_ + i + n, (size_ - i - n) * sizeof(T));
    size_ -= static_cast<uint32_t>(n);
    return data_ + i;
  }

  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }
  friend bool operator<(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void release() {
    if (data_ != inline_) std::free(data_);
    data_ = inline_;
    capacity_ = N;
    size_ = 0;
  }
  void take(SmallVector& o) {
    if (o.data_ == o.inline_) {
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
      data_ = inline_;
      capacity_ = N;
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_;
      o.capacity_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  // 32-bit counts keep a Shape at 40 bytes and Strides at 64, so that a node (two of each)
  // fits four cache lines.
  static constexpr size_t kMaxSize = 0xFFFFFFFFu;
  T* data_ = inline_;
  uint32_t size_ = 0;
  uint32_t capacity_ = N;
  T inline_[N];
};

}  // namespace braid
