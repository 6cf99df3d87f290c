// The GEMM efficiency model (sim/compute_model.cpp) against closed forms: tile quantization, wave quantization
// over the SMs, the tile-size factor, and split-K for shapes with fewer tiles than SMs.
#include <cmath>

#include <catch2/catch.hpp>

#include "sim/compute_model.h"

using namespace clustersim;

namespace {
// One tile size, so that the choice among tiles does not enter: 128 x 128 on 100 SMs at 0.8 of peak.
topo::GpuSpec one_tile_gpu() {
    topo::GpuSpec gpu;
    gpu.sms = 100;
    gpu.gemm_efficiency = 0.8;
    gpu.gemm_tiles = {{128, 128}};
    return gpu;
}
}  // namespace

TEST_CASE("GEMM efficiency: tile and wave quantization", "[sim][compute]") {
    const topo::GpuSpec gpu = one_tile_gpu();
    // 1,280 x 1,280: 100 tiles, one full wave, no padding.
    auto t = sim::gemm_timing({1280, 1280, 4096, 1}, 1e12, gpu, 1e15);
    REQUIRE(t.tile_efficiency == 1);
    REQUIRE(t.wave_efficiency == 1);
    REQUIRE(t.splits == 1);
    REQUIRE(t.efficiency == Approx(0.8));
    REQUIRE(t.seconds == Approx(1e12 / (1e15 * 0.8)));
    // 1,300 x 1,280: 11 x 10 tiles padded from 1,300 rows to 1,408, 110 tiles in two waves of 100.
    t = sim::gemm_timing({1300, 1280, 4096, 1}, 1e12, gpu, 1e15);
    REQUIRE(t.tile_efficiency == Approx(1300.0 / 1408));
    REQUIRE(t.wave_efficiency == Approx(110.0 / 200));
    REQUIRE(t.efficiency == Approx(0.8 * 1300.0 / 1408 * 110.0 / 200));
}

TEST_CASE("GEMM efficiency: split-K fills the SMs when the output has few tiles", "[sim][compute]") {
    const topo::GpuSpec gpu = one_tile_gpu();
    // 8 x 1,280 (a decode step's rows): 10 tiles of 128 x 128, 8 of 128 rows used. K = 8,192 splits 10 ways
    // (100 SMs / 10 tiles; each split 819 deep, above the 256 minimum): one full wave.
    auto t = sim::gemm_timing({8, 1280, 8192, 1}, 1e9, gpu, 1e15);
    REQUIRE(t.splits == 10);
    REQUIRE(t.tile_efficiency == Approx(8.0 / 128));
    REQUIRE(t.wave_efficiency == 1);
    REQUIRE(t.efficiency == Approx(0.8 * 8.0 / 128));
    // A short K limits the splits: K = 1,024 gives at most 4 (256 deep each): 40 blocks on 100 SMs.
    t = sim::gemm_timing({8, 1280, 1024, 1}, 1e9, gpu, 1e15);
    REQUIRE(t.splits == 4);
    REQUIRE(t.wave_efficiency == Approx(40.0 / 100));
    // K below the minimum: no split, 10 tiles on 100 SMs.
    t = sim::gemm_timing({8, 1280, 200, 1}, 1e9, gpu, 1e15);
    REQUIRE(t.splits == 1);
    REQUIRE(t.wave_efficiency == Approx(10.0 / 100));
    // 7 tiles: 100 / 7 = 14 splits, 98 blocks in one wave.
    t = sim::gemm_timing({128, 896, 65536, 1}, 1e9, gpu, 1e15);
    REQUIRE(t.splits == 14);
    REQUIRE(t.wave_efficiency == Approx(98.0 / 100));
}
