// What-if retargeting of measured kernel times to another GPU.
#include <catch2/catch.hpp>

#include "sim/retarget.h"

using namespace clustersim;

TEST_CASE("retargeting scales compute-bound kernels by peak FLOP/s and the rest by HBM bandwidth", "[sim][retarget]") {
    const auto& catalogue = topo::GpuCatalogue::builtin();
    const auto& v100 = catalogue.gpus()[*catalogue.find("V100")];
    const auto& h100 = catalogue.gpus()[*catalogue.find("H100")];
    traces::OpGraph g;
    g.rank_count = 1;
    const auto s = g.stream(traces::RankId{0}, "compute");
    traces::Op gemm{s, g.intern("gemm"), traces::OpKind::compute, traces::KernelClass::gemm, traces::DataType::fp16};
    traces::Op copy = gemm;
    copy.kernel_class = traces::KernelClass::elementwise;
    traces::Op delay = gemm;
    delay.kind = traces::OpKind::delay;
    for (const auto& op : {gemm, copy, delay}) g.add(op, {}, engine::Time{100'000'000});
    sim::retarget(g, v100, h100);
    // FP16 tensor: 125 -> 989.4 TFLOP/s: 100 us x 125 / 989.4 = 12.63392 us. HBM: 900 -> 3350 GB/s: 26.86567 us
    // (rounded to ps).
    REQUIRE(g.durations == std::vector<engine::Time>{engine::Time{12'633'920}, engine::Time{26'865'672},
                                                     engine::Time{100'000'000}});  // host time is not the GPU's
}
