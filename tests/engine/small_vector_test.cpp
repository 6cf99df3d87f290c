// SmallVector behaves as std::vector under random operations, in place and on the heap, across copies and moves.
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "engine/small_vector.h"

using namespace clustersim;

namespace {

template <class V>
bool same(const V& v, const std::vector<std::uint32_t>& reference) {
    return v.size() == reference.size() && std::equal(v.begin(), v.end(), reference.begin());
}

}  // namespace

TEST_CASE("a small vector agrees with std::vector under random operations", "[engine][small_vector]") {
    engine::SmallVector<std::uint32_t, 4> v;
    std::vector<std::uint32_t> reference;
    std::mt19937_64 rng(5);
    for (int i = 0; i < 100'000; ++i) {
        switch (rng() % 8) {
            case 0:
            case 1: {
                const auto x = static_cast<std::uint32_t>(rng());
                v.push_back(x);
                reference.push_back(x);
                break;
            }
            case 2: {
                const std::size_t n = rng() % 12;
                v.resize(n);
                reference.resize(n);
                break;
            }
            case 3: {
                std::vector<std::uint32_t> other(rng() % 10);
                for (auto& x : other) x = static_cast<std::uint32_t>(rng());
                v.assign(other.begin(), other.end());
                reference = other;
                break;
            }
            case 4: {
                std::vector<std::uint32_t> other(rng() % 6, 7);
                v.append(other.begin(), other.end());
                reference.insert(reference.end(), other.begin(), other.end());
                break;
            }
            case 5: {
                engine::SmallVector<std::uint32_t, 4> copy = v;  // copy, then move back
                REQUIRE(same(copy, reference));
                v = std::move(copy);
                REQUIRE(copy.empty());
                break;
            }
            case 6:
                if (rng() % 8 == 0) {
                    v.release();
                    reference.clear();
                    REQUIRE(v.capacity() == 4);
                }
                break;
            default:
                if (!reference.empty()) {
                    const std::size_t k = rng() % reference.size();
                    v[k] = reference[k] = static_cast<std::uint32_t>(rng());
                }
        }
        REQUIRE(same(v, reference));
        if (!reference.empty()) REQUIRE((v.front() == reference.front() && v.back() == reference.back()));
        REQUIRE(v.capacity() >= v.size());
    }
}

TEST_CASE("a small vector holds up to N values in place", "[engine][small_vector]") {
    engine::SmallVector<std::uint32_t, 3> v;
    for (std::uint32_t k = 0; k < 3; ++k) v.push_back(k);
    const std::uint32_t* in_place = v.data();
    REQUIRE(v.capacity() == 3);
    REQUIRE(reinterpret_cast<const char*>(in_place) >= reinterpret_cast<const char*>(&v));
    REQUIRE(reinterpret_cast<const char*>(in_place) < reinterpret_cast<const char*>(&v) + sizeof(v));
    v.push_back(v.front());  // grows to the heap, the value read before it moves
    REQUIRE(v.size() == 4);
    REQUIRE(v.back() == 0);
    REQUIRE(v.data() != in_place);
    v.release();
    REQUIRE(v.data() == in_place);
}
