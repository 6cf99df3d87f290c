// The fields of a Kineto trace that the Kineto reader uses, extracted in one streaming (SAX) pass without
// building a JSON document: complete events ("ph": "X") that are GPU work, launches, iteration steps or
// communication CPU ops, with the few arguments read; plus distributedInfo and the first device's name.
#pragma once

#include <string>
#include <vector>

namespace clustersim::traces {

struct KinetoEvent {
    std::size_t index = 0;  // position in traceEvents, for messages
    std::string name;
    std::string cat;
    double ts_us = 0;
    double dur_us = 0;
    bool has_ts = false;
    // args
    double correlation = -1;
    double stream = -1;
    bool has_stream = false;
    double bytes = 0;
    double in_msg_nelems = -1;
    // cuda_sync "Stream Wait Event" (PyTorch's enable_cuda_sync_events): the stream waited on and the correlation
    // of the cudaEventRecord call that recorded the awaited event; -1 when absent.
    double wait_on_stream = -1;
    double wait_on_record_correlation = -1;
    std::string dtype;
    std::string collective_name;
    std::string pg_ranks;
    std::string pg_name;
    std::string pg_description;
    std::vector<std::vector<double>> input_dims;
    std::vector<std::string> input_types;
};

struct KinetoFile {
    std::vector<KinetoEvent> events;  // in file order, only those kept
    std::size_t event_count = 0;      // all entries of traceEvents, kept or not
    bool has_trace_events = false;
    double rank = 0;
    double world_size = 1;
    std::string gpu;
    double min_ts_us = 0;  // earliest ts of any event (for rebasing)
    bool has_ts = false;
};

/// Parses `text`; throws InputError naming `file` and the byte offset on malformed JSON, or when it is not a
/// Chrome trace object with a traceEvents list.
KinetoFile parse_kineto_events(const std::string& text, const std::string& file);

}  // namespace clustersim::traces
