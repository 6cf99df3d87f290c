// A vector of trivially copyable values that holds up to N of them in place and moves to the heap beyond: for
// per-flow lists that are short (a route's hops) and read on every event, where a std::vector costs a pointer
// chase into a separate allocation per list. Only what the flow network uses of std::vector's interface. Heap
// storage is raw (values are copied in, never value-initialized first), and short copies are done in place rather
// than by a library call: a class of a ring step's flows appends hundreds of 8-hop routes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <type_traits>

namespace clustersim::engine {

template <class T, std::uint32_t N>
class SmallVector {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    static_assert(N > 0);

public:
    SmallVector() = default;
    SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
    SmallVector& operator=(const SmallVector& other) {
        if (this != &other) assign(other.begin(), other.end());
        return *this;
    }
    SmallVector(SmallVector&& other) noexcept { take(other); }
    SmallVector& operator=(SmallVector&& other) noexcept {
        if (this != &other) {
            free_heap();
            take(other);
        }
        return *this;
    }
    ~SmallVector() { free_heap(); }

    [[nodiscard]] T* data() { return heap_ ? heap_.get() : inline_; }
    [[nodiscard]] const T* data() const { return heap_ ? heap_.get() : inline_; }
    [[nodiscard]] T* begin() { return data(); }
    [[nodiscard]] T* end() { return data() + size_; }
    [[nodiscard]] const T* begin() const { return data(); }
    [[nodiscard]] const T* end() const { return data() + size_; }
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    [[nodiscard]] std::size_t capacity() const { return capacity_; }
    [[nodiscard]] T& operator[](std::size_t i) { return data()[i]; }
    [[nodiscard]] const T& operator[](std::size_t i) const { return data()[i]; }
    [[nodiscard]] T& front() { return data()[0]; }
    [[nodiscard]] const T& front() const { return data()[0]; }
    [[nodiscard]] T& back() { return data()[size_ - 1]; }
    [[nodiscard]] const T& back() const { return data()[size_ - 1]; }

    void clear() { size_ = 0; }
    /// New values (when growing) are value-initialized.
    void resize(std::size_t n) {
        reserve(n);
        if (n > size_) std::fill(data() + size_, data() + n, T{});
        size_ = static_cast<std::uint32_t>(n);
    }
    void reserve(std::size_t n) {
        if (n <= capacity_) return;
        const std::size_t grown = std::max<std::size_t>(n, std::size_t{capacity_} * 2);
        std::unique_ptr<T, RawFree> fresh(static_cast<T*>(::operator new(sizeof(T) * grown)));
        if (size_ > 0) std::memcpy(fresh.get(), data(), sizeof(T) * size_);
        heap_ = std::move(fresh);
        capacity_ = static_cast<std::uint32_t>(grown);
    }
    void push_back(const T& value) {
        if (size_ == capacity_) {
            const T copy = value;  // `value` may live in this vector
            reserve(std::size_t{size_} + 1);
            data()[size_++] = copy;
            return;
        }
        data()[size_++] = value;
    }
    template <std::contiguous_iterator It>
    void assign(It first, It last) {
        const auto n = static_cast<std::size_t>(std::distance(first, last));
        reserve(n);
        copy_in(first, n, data());
        size_ = static_cast<std::uint32_t>(n);
    }
    /// Appends [first, last), which must not lie in this vector.
    template <std::contiguous_iterator It>
    void append(It first, It last) {
        const auto n = static_cast<std::size_t>(std::distance(first, last));
        reserve(std::size_t{size_} + n);
        copy_in(first, n, data() + size_);
        size_ += static_cast<std::uint32_t>(n);
    }
    /// Empties it and gives back heap memory (back to the values held in place).
    void release() {
        free_heap();
        size_ = 0;
    }

private:
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    struct RawFree {
        void operator()(T* p) const noexcept { ::operator delete(static_cast<void*>(p)); }
    };
    /// Copies n contiguous values: up to N in place (no library call for a route's few hops), more with std::copy.
    template <std::contiguous_iterator It>
    static void copy_in(It first, std::size_t n, T* out) {
        if (n > N) {
            std::copy(first, first + static_cast<std::ptrdiff_t>(n), out);
            return;
        }
        // (Fixed-size copies of two values at a time: plain moves, where a loop of unknown length becomes memmove.)
        const T* from = std::to_address(first);  // (not &*first: an empty range's iterator may be null)
        std::size_t i = 0;
        for (; i + 2 <= n; i += 2) std::memcpy(out + i, from + i, 2 * sizeof(T));
        if (i < n) out[i] = from[i];
    }
    void free_heap() {
        heap_.reset();
        capacity_ = N;
    }
    void take(SmallVector& other) {
        if (other.heap_) {
            heap_ = std::move(other.heap_);
            capacity_ = other.capacity_;
        } else {
            std::memcpy(inline_, other.inline_, sizeof(T) * other.size_);
            capacity_ = N;
        }
        size_ = other.size_;
        other.size_ = 0;
        other.capacity_ = N;
    }

    std::unique_ptr<T, RawFree> heap_;
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = N;
    T inline_[N];
};

}  // namespace clustersim::engine
