#include "traces/report/collective_report.h"

#include <fmt/format.h>

#include "traces/json_text.h"
#include "traces/report/categories.h"
#include "traces/report/svg.h"

namespace clustersim::traces::report {

std::string collective_csv(const CollectiveRun& run) {
    std::string out = "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,nccl_model_us\n";
    for (const CollectivePoint& r : run.rows)
        out += fmt::format("{},{},{},{},{},{},{},{},{}\n", r.bytes, r.count, r.type, json_number(r.time_us),
                           json_number(r.algbw_gbps), json_number(r.busbw_gbps), r.algorithm, r.protocol,
                           json_number(r.nccl_model_us));
    return out;
}

std::string collective_json(const CollectiveRun& run) {
    std::string out = fmt::format("{{\n  \"run\": {},\n  \"rows\": [", json_string(run.title));
    for (std::size_t i = 0; i < run.rows.size(); ++i) {
        const CollectivePoint& r = run.rows[i];
        out += fmt::format(
            "{}\n    {{\"size_bytes\": {}, \"count\": {}, \"type\": {}, \"time_us\": {}, \"algbw_GBps\": {}, "
            "\"busbw_GBps\": {}, \"algorithm\": {}, \"protocol\": {}, \"nccl_model_us\": {}}}",
            i ? "," : "", r.bytes, r.count, json_string(r.type), json_number(r.time_us), json_number(r.algbw_gbps),
            json_number(r.busbw_gbps), json_string(r.algorithm), json_string(r.protocol), json_number(r.nccl_model_us));
    }
    return out + "\n  ]\n}\n";
}

std::string collective_report(const CollectiveRun& run) {
    LinePlot plot{"busbw-plot", "size (bytes)", "bus bandwidth (GB/s)", {}};
    LineSeries simulated{"simulated", std::string(partition_categories[0].colour), {}, false};
    LineSeries model{"NCCL's model", std::string(partition_categories[2].colour), {}, true};
    for (const CollectivePoint& r : run.rows) {
        const auto x = static_cast<double>(r.bytes);
        simulated.points.emplace_back(x, r.busbw_gbps);
        // The model's bus bandwidth: the same bytes over its predicted time.
        if (r.nccl_model_us > 0) model.points.emplace_back(x, r.busbw_gbps * r.time_us / r.nccl_model_us);
    }
    plot.series.push_back(std::move(simulated));
    if (!model.points.empty()) plot.series.push_back(std::move(model));
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
    out += fmt::format(
        "<title>{0}</title><style>body{{font-family:system-ui,sans-serif;margin:24px;color:#222}}h1{{font-size:20px}}"
        "table{{border-collapse:collapse;font-size:13px}}td,th{{padding:3px 10px;border-bottom:1px solid #eee;"
        "text-align:right}}.plot text{{font-size:11px}}.plot .axis-label{{font-size:12px}}</style></head><body>\n"
        "<h1>{0}</h1>\n<section id=\"busbw\"><h2>Bus bandwidth against size</h2>{1}</section>\n",
        escape(run.title), log_log_plot(plot));
    out +=
        "<section id=\"rows\"><h2>Rows</h2><table id=\"collective-rows\"><tr><th>size (B)</th><th>time (us)</th>"
        "<th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>algorithm</th><th>protocol</th><th>NCCL model (us)</th></tr>";
    for (const CollectivePoint& r : run.rows)
        out += fmt::format(
            "<tr><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td><td>{}</td><td>{:.2f}</td></tr>",
            r.bytes, r.time_us, r.algbw_gbps, r.busbw_gbps, escape(r.algorithm), escape(r.protocol), r.nccl_model_us);
    return out + "</table></section>\n</body></html>\n";
}

}  // namespace clustersim::traces::report
