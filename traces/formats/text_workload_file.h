// The text workload file as read (ASTRA-sim 1.0's format and its SimAI / AICB descendant): the parallelism
// header, the layer lines, and how the lines group into micro-batches and model chunks. Expansion into an OpGraph
// is text_workload_reader.cpp's. Semantics: docs/formats.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/time.h"

namespace clustersim::traces {

struct TextPhase {
    engine::Time compute{};
    std::string comm = "NONE";
    std::uint64_t bytes = 0;
};

struct TextLayer {
    std::string name;
    std::array<TextPhase, 3> phases;  // forward, input gradient, weight gradient
    engine::Time update{};
    int line = 0;
};

struct TextHeader {
    std::string kind;
    std::uint32_t tp = 0, ep = 1, pp = 1, vpp = 1, ga = 1, all_gpus = 0;
    std::uint64_t pp_comm = 0;
};

struct TextWorkloadFile {
    TextHeader header;
    std::vector<TextLayer> layers;
};

/// Parses the header and the layer lines; compute times are multiplied by `time_unit`. Errors name the file and
/// the line.
TextWorkloadFile parse_text_workload_file(const std::string& path, engine::Time time_unit);

/// Whether `text` (the start of a file) looks like a text workload (its first word names a parallelism).
bool looks_like_text_workload(const std::string& text);
/// Whether a text workload's header has keys only SimAI / AICB write (all_gpus, ep, pp, vpp, ga, pp_comm).
bool looks_like_simai_workload(const std::string& text);

/// Which lines make up each micro-batch. AICB writes every micro-batch out: its generator repeats the model's
/// layers `ga` times between iteration-level lines (gradient synchronisation before, loss and optimizer after);
/// ASTRA-sim lists the layers once and each micro-batch runs them all.
struct MicroBatchLayout {
    std::size_t prefix = 0;  // iteration-level lines before the micro-batches (unrolled only)
    std::size_t block = 0;   // lines per micro-batch
    std::size_t suffix = 0;  // first iteration-level line after the micro-batches (unrolled only)
    std::uint32_t micro_batches = 1;
    bool unrolled = false;
    [[nodiscard]] std::size_t first(std::uint32_t mb) const { return unrolled ? prefix + mb * block : 0; }
    [[nodiscard]] std::size_t last(std::uint32_t mb) const { return unrolled ? prefix + (mb + 1) * block : block; }
};

/// The unrolled layout covering the most lines with `ga` blocks of the same layer names and collectives (ties:
/// the earliest), if there is one.
MicroBatchLayout micro_batch_layout(const std::vector<TextLayer>& layers, std::uint32_t ga);

/// Where each of `chunks` model chunks starts inside a micro-batch (offsets from its first line; one more entry,
/// the micro-batch's size): before every (n / chunks)-th line named like the first line (after the first) whose
/// name occurs a multiple n of `chunks` times, a layer's first line; else equal runs.
std::vector<std::size_t> chunk_starts(const std::vector<TextLayer>& layers, const MicroBatchLayout& layout,
                                      std::uint32_t chunks);

}  // namespace clustersim::traces
