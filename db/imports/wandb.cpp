// W&B offline runs (docs/imports.md, "W&B offline runs"): `run-ID.wandb` is a LevelDB-log-style
// record stream after a 7-byte header (":W&B", uint16 0xBEE1, uint8 version), in 32 KiB blocks:
//   uint32 CRC-32 (zlib's) of type byte + data | uint16 length | uint8 type | data[length]
// type FULL = 1 holds a whole record, FIRST = 2 / MIDDLE = 3 / LAST = 4 its fragments; fewer
// than 7 bytes left in a block are padding. Each whole record is one `Record`
// (wandb_record.proto): history rows, config, summary, system metrics, the run, its exit.
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "db/imports/content_hash.h"
#include "db/imports/mapped_file.h"
#include "db/imports/run_import.h"
#include "wandb_record.pb.h"  // generated (runplane_imports_proto)

namespace runplane::imports {
namespace {

namespace wb = runplane::imports::wb;

constexpr std::size_t kBlock = 32768;
constexpr std::size_t kRecordHeader = 7;
constexpr std::size_t kFileHeader = 7;
/// A record assembled from fragments longer than this is taken for damage.
constexpr std::size_t kMaxRecordBytes = 256u << 20;

enum : unsigned char { kFull = 1, kFirst = 2, kMiddle = 3, kLast = 4 };

std::string keyOf(const std::string& key,
                  const google::protobuf::RepeatedPtrField<std::string>& nested) {
    if (nested.empty()) {
        return key;
    }
    std::string out;
    for (const auto& part : nested) {
        out += (out.empty() ? "" : "/") + part;
    }
    return out;
}

std::int64_t secondsToNs(double s) {
    const double ns = std::nearbyint(s * 1e9);
    return (ns > -9.2e18 && ns < 9.2e18) ? static_cast<std::int64_t>(ns) : 0;
}

/// What one history row contributes, gathered before its time and step are known.
struct RowValue {
    std::string name;
    double value;
};

class Reader {
  public:
    explicit Reader(ImportedRun& run) : m_run(run) {}

    std::size_t seriesFor(const std::string& name) {
        auto [it, fresh] = m_index.try_emplace(name, m_run.series.size());
        if (fresh) {
            m_run.series.push_back(ImportedSeries{name, {}});
        }
        return it->second;
    }

    void history(const wb::HistoryRecord& h) {
        std::int64_t step = h.has_step() ? h.step().num() : -1;
        std::optional<double> wall;
        m_row.clear();
        for (const wb::HistoryItem& item : h.item()) {
            const std::string name = keyOf(item.key(), item.nested_key());
            std::optional<double> v;
            switch (item.value_case()) {
                case wb::HistoryItem::kBoolean:
                    v = item.boolean() ? 1.0 : 0.0;
                    break;
                case wb::HistoryItem::kInteger:
                    v = static_cast<double>(item.integer());
                    break;
                case wb::HistoryItem::kNumber:
                    v = item.number();
                    break;
                case wb::HistoryItem::kText:
                case wb::HistoryItem::kJson:
                    break;
                default: {
                    const auto j = nlohmann::json::parse(item.value_json(), nullptr, false);
                    if (j.is_number()) {
                        v = j.get<double>();
                    } else if (j.is_boolean()) {
                        v = j.get<bool>() ? 1.0 : 0.0;
                    } else if (j.is_string() && (j == "NaN" || j == "nan")) {
                        v = std::nan("");
                    } else if (j.is_string() && (j == "Infinity" || j == "-Infinity")) {
                        v = j == "Infinity" ? HUGE_VAL : -HUGE_VAL;
                    }
                }
            }
            if (name == "_step") {
                if (v && step < 0) {
                    step = stepFromNumber(*v);
                }
                continue;
            }
            if (name == "_timestamp") {
                wall = v;
                continue;
            }
            if (!v) {
                ++m_run.skippedValues;
                continue;
            }
            m_row.push_back({name, *v});
        }
        const std::int64_t tNs =
            wall ? secondsToNs(*wall) : (step >= 0 ? step : 0) * 1'000'000'000LL;
        for (const RowValue& r : m_row) {
            m_run.series[seriesFor(r.name)].points.push_back(ImportedPoint{step, tNs, r.value});
        }
        ++m_historyRows;
    }

    void stats(const wb::StatsRecord& s) {
        const std::int64_t tNs = s.timestamp().seconds() * 1'000'000'000LL + s.timestamp().nanos();
        for (const wb::StatsItem& item : s.item()) {
            const auto j = nlohmann::json::parse(item.value_json(), nullptr, false);
            if (!j.is_number()) {
                ++m_run.skippedValues;
                continue;
            }
            m_run.series[seriesFor("system/" + item.key())].points.push_back(
                ImportedPoint{-1, tNs, j.get<double>()});
        }
    }

    static void keyValues(const wb::KeyValueRecord& r, nlohmann::json& into) {
        for (const wb::KeyValue& kv : r.update()) {
            into[keyOf(kv.key(), kv.nested_key())] =
                nlohmann::json::parse(kv.value_json(), nullptr, false).is_discarded()
                    ? nlohmann::json(kv.value_json())
                    : nlohmann::json::parse(kv.value_json(), nullptr, false);
        }
        for (const wb::KeyValue& kv : r.remove()) {
            into.erase(keyOf(kv.key(), kv.nested_key()));
        }
    }

    void record(const wb::Record& r) {
        switch (r.record_type_case()) {
            case wb::Record::kHistory:
                history(r.history());
                break;
            case wb::Record::kStats:
                stats(r.stats());
                break;
            case wb::Record::kConfig:
                keyValues(r.config(), m_config);
                break;
            case wb::Record::kSummary:
                keyValues(r.summary(), m_summary);
                break;
            case wb::Record::kRun: {
                const wb::RunRecord& run = r.run();
                if (!run.display_name().empty()) {
                    m_displayName = run.display_name();
                }
                m_run.extra["wandb_run_id"] = run.run_id();
                m_run.extra["project"] = run.project();
                if (!run.entity().empty()) {
                    m_run.extra["entity"] = run.entity();
                }
                m_run.extra["tags"] =
                    std::vector<std::string>(run.tags().begin(), run.tags().end());
                if (!run.notes().empty()) {
                    m_run.extra["notes"] = run.notes();
                }
                if (run.has_config()) {
                    keyValues(run.config(), m_config);
                }
                break;
            }
            case wb::Record::kExit:
                m_run.extra["exit_code"] = r.exit().exit_code();
                m_run.extra["runtime_s"] = r.exit().runtime();
                break;
            default:
                break;
        }
    }

    void finish() {
        m_run.extra["config"] = m_config;
        m_run.extra["summary"] = m_summary;
        m_run.extra["history_rows"] = m_historyRows;
        if (!m_displayName.empty()) {  // the name W&B users know the run by
            m_run.extra["display_name"] = m_displayName;
            m_run.extra["folder"] = m_run.name;
            m_run.name = m_displayName;
        }
    }

  private:
    ImportedRun& m_run;
    std::unordered_map<std::string, std::size_t> m_index;
    std::vector<RowValue> m_row;
    nlohmann::json m_config = nlohmann::json::object();
    nlohmann::json m_summary = nlohmann::json::object();
    std::string m_displayName;
    std::int64_t m_historyRows = 0;
};

}  // namespace

Result<ImportedRun> readWandb(const ImportSource& source) {
    ImportedRun run;
    run.format = "wandb";
    run.name = source.name;
    run.files = source.files;
    const std::string& path = source.files.at(0);
    auto mapped = MappedFile::open(path);
    if (!mapped.ok()) {
        return mapped.failure();
    }
    const unsigned char* p = mapped->data();
    const std::size_t size = mapped->size();
    ContentHash hash;
    hash.update(p, size);
    run.contentSha256 = hash.hex();
    if (size < kFileHeader || std::memcmp(p, ":W&B", 4) != 0 || p[4] != 0xE1 || p[5] != 0xBE) {
        return Error{path + ": not a W&B transaction log (no \":W&B\" header)"};
    }
    Reader reader(run);
    wb::Record record;
    std::string assembled;
    bool inFragments = false;
    std::size_t recordStart = kFileHeader;  // where the record being assembled began
    std::size_t at = kFileHeader;
    auto stop = [&](std::size_t where, const std::string& why) {
        run.stopped = path + ": stopped at byte " + std::to_string(where) + ": " + why;
    };
    while (at < size) {
        const std::size_t left = kBlock - at % kBlock;
        if (left < kRecordHeader) {
            at += left;  // block trailer
            continue;
        }
        if (size - at < kRecordHeader) {
            stop(inFragments ? recordStart : at, "truncated record header");
            break;
        }
        std::uint32_t crc = 0;
        std::uint16_t length = 0;
        std::memcpy(&crc, p + at, 4);
        std::memcpy(&length, p + at + 4, 2);
        const unsigned char type = p[at + 6];
        if (crc == 0 && length == 0 && type == 0) {
            at += left;  // a zero-filled rest of a block: padding
            continue;
        }
        if (length > left - kRecordHeader) {
            stop(at, "record length " + std::to_string(length) + " runs past its 32 KiB block");
            break;
        }
        if (size - at - kRecordHeader < length) {
            stop(inFragments ? recordStart : at,
                 "truncated record (" + std::to_string(length) + " bytes of data, " +
                     std::to_string(size - at - kRecordHeader) + " left in the file)");
            break;
        }
        const unsigned char* data = p + at + kRecordHeader;
        uLong c = crc32(0L, &type, 1);
        c = crc32(c, data, length);
        if (static_cast<std::uint32_t>(c) != crc) {
            stop(at, "record fails its CRC");
            break;
        }
        const std::size_t here = at;
        at += kRecordHeader + length;
        const char* bytes = reinterpret_cast<const char*>(data);
        bool whole = false;
        if (type == kFull && !inFragments) {
            assembled.assign(bytes, length);
            whole = true;
        } else if (type == kFirst && !inFragments) {
            assembled.assign(bytes, length);
            inFragments = true;
            recordStart = here;
        } else if ((type == kMiddle || type == kLast) && inFragments) {
            assembled.append(bytes, length);
            if (assembled.size() > kMaxRecordBytes) {
                stop(recordStart, "record longer than 256 MiB");
                break;
            }
            if (type == kLast) {
                inFragments = false;
                whole = true;
            }
        } else {
            stop(here, "record type " + std::to_string(type) + " out of place");
            break;
        }
        if (!whole) {
            continue;
        }
        if (!record.ParseFromString(assembled)) {
            stop(type == kFull ? here : recordStart, "record is not a W&B Record message");
            break;
        }
        ++run.records;
        reader.record(record);
    }
    if (run.stopped.empty() && inFragments) {
        stop(recordStart, "the file ends inside a record");
    }
    reader.finish();
    return run;
}

}  // namespace runplane::imports
