// A SAX handler over nlohmann-json's lexer: a small context stack tells where each value belongs.
#include "traces/formats/kineto_events.h"

#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/error.h"

namespace clustersim::traces {

namespace {

using nlohmann::json;

enum class Ctx {
    root,
    trace_events,
    event,
    args,
    input_dims,
    input_dims_row,
    input_types,
    dist_info,
    device_list,
    device,
    skip
};

bool kept(const KinetoEvent& e, bool complete) {
    if (!complete) return false;
    if (e.cat == "kernel" || e.cat == "gpu_memcpy" || e.cat == "gpu_memset" || e.cat == "cuda_runtime" ||
        e.cat == "cuda_driver")
        return true;
    if (e.cat == "cuda_sync") return e.name == "Stream Wait Event";  // the only synchronisation the reader uses
    return e.name.rfind("ProfilerStep#", 0) == 0 || e.name.rfind("nccl:", 0) == 0 || e.name == "record_param_comms";
}

class Handler final : public nlohmann::json_sax<json> {
public:
    explicit Handler(KinetoFile& out) : out_(out) {}

    bool null() override { return scalar_done(); }
    bool boolean(bool) override { return scalar_done(); }
    bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
    bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
    bool number_float(number_float_t v, const string_t&) override { return number(v); }
    bool binary(binary_t&) override { return scalar_done(); }

    bool string(string_t& v) override {
        switch (top()) {
            case Ctx::event:
                if (key_ == "name")
                    event_.name = std::move(v);
                else if (key_ == "cat")
                    event_.cat = std::move(v);
                else if (key_ == "ph")
                    complete_ = v == "X";
                break;
            case Ctx::args:
                if (key_ == "dtype")
                    event_.dtype = std::move(v);
                else if (key_ == "Collective name")
                    event_.collective_name = std::move(v);
                else if (key_ == "Process Group Ranks")
                    event_.pg_ranks = std::move(v);
                else if (key_ == "Process Group Name")
                    event_.pg_name = std::move(v);
                else if (key_ == "Process Group Description")
                    event_.pg_description = std::move(v);
                break;
            case Ctx::input_types:
                event_.input_types.push_back(std::move(v));
                break;
            case Ctx::device:
                if (key_ == "name" && out_.gpu.empty()) out_.gpu = std::move(v);
                break;
            default:
                break;
        }
        return true;
    }

    bool start_object(std::size_t) override {
        const Ctx parent = top();
        Ctx next = Ctx::skip;
        if (stack_.empty())
            next = Ctx::root;
        else if (parent == Ctx::trace_events) {
            next = Ctx::event;
            event_ = KinetoEvent{};
            event_.index = out_.event_count;
            complete_ = false;
        } else if (parent == Ctx::event && key_ == "args")
            next = Ctx::args;
        else if (parent == Ctx::root && key_ == "distributedInfo")
            next = Ctx::dist_info;
        else if (parent == Ctx::device_list)
            next = Ctx::device;
        stack_.push_back(next);
        return true;
    }

    bool end_object() override {
        const Ctx ending = top();
        stack_.pop_back();
        if (ending == Ctx::event) {
            ++out_.event_count;
            if (event_.has_ts && (!out_.has_ts || event_.ts_us < out_.min_ts_us)) {
                out_.min_ts_us = event_.ts_us;
                out_.has_ts = true;
            }
            if (kept(event_, complete_)) out_.events.push_back(std::move(event_));
        }
        return true;
    }

    bool start_array(std::size_t) override {
        const Ctx parent = top();
        Ctx next = Ctx::skip;
        if (parent == Ctx::root && key_ == "traceEvents") {
            next = Ctx::trace_events;
            out_.has_trace_events = true;
        } else if (parent == Ctx::root && key_ == "deviceProperties")
            next = Ctx::device_list;
        else if (parent == Ctx::args && key_ == "Input Dims")
            next = Ctx::input_dims;
        else if (parent == Ctx::args && key_ == "Input type")
            next = Ctx::input_types;
        else if (parent == Ctx::input_dims) {
            next = Ctx::input_dims_row;
            event_.input_dims.emplace_back();
        }
        stack_.push_back(next);
        return true;
    }

    bool end_array() override {
        stack_.pop_back();
        return true;
    }

    bool key(string_t& k) override {
        key_ = std::move(k);
        return true;
    }

    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
        error_position_ = position;
        error_ = e.what();
        return false;
    }

    std::size_t error_position_ = 0;
    std::string error_;

private:
    [[nodiscard]] Ctx top() const { return stack_.empty() ? Ctx::skip : stack_.back(); }
    bool scalar_done() { return true; }
    bool number(double v) {
        switch (top()) {
            case Ctx::event:
                if (key_ == "ts") {
                    event_.ts_us = v;
                    event_.has_ts = true;
                } else if (key_ == "dur") {
                    event_.dur_us = v;
                }
                break;
            case Ctx::args:
                if (key_ == "correlation")
                    event_.correlation = v;
                else if (key_ == "stream") {
                    event_.stream = v;
                    event_.has_stream = true;
                } else if (key_ == "bytes")
                    event_.bytes = v;
                else if (key_ == "In msg nelems")
                    event_.in_msg_nelems = v;
                else if (key_ == "wait_on_stream")
                    event_.wait_on_stream = v;
                else if (key_ == "wait_on_cuda_event_record_corr_id")
                    event_.wait_on_record_correlation = v;
                break;
            case Ctx::input_dims_row:
                event_.input_dims.back().push_back(v);
                break;
            case Ctx::dist_info:
                if (key_ == "rank")
                    out_.rank = v;
                else if (key_ == "world_size")
                    out_.world_size = v;
                break;
            default:
                break;
        }
        return true;
    }

    KinetoFile& out_;
    std::vector<Ctx> stack_;
    std::string key_;
    KinetoEvent event_;
    bool complete_ = false;
};

}  // namespace

KinetoFile parse_kineto_events(const std::string& text, const std::string& file) {
    KinetoFile out;
    Handler handler(out);
    const bool ok = json::sax_parse(text, &handler);
    if (!ok) {
        throw engine::InputError(engine::SourceLocation{file},
                                 fmt::format("not valid JSON at byte {}: {}", handler.error_position_, handler.error_));
    }
    if (!out.has_trace_events)
        throw engine::InputError(engine::SourceLocation{file},
                                 "expected a Chrome trace object with a 'traceEvents' list (a PyTorch profiler trace)");
    return out;
}

}  // namespace clustersim::traces
