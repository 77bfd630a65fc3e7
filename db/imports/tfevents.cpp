// TensorBoard event files (docs/imports.md, "TensorBoard event files"): TFRecord framing
//   uint64 length (LE) | uint32 masked CRC-32C of those 8 bytes | data[length] |
//   uint32 masked CRC-32C of data
// where each data is one Event message (tensorboard_event.proto). Scalars come from
// Summary.Value.simple_value (TF1 writers, tensorboardX, PyTorch) and from rank-0 tensors of
// the "scalars" plugin (TF2 writers; the plugin is named only on a tag's first value).
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "db/imports/content_hash.h"
#include "db/imports/crc32c.h"
#include "db/imports/mapped_file.h"
#include "db/imports/run_import.h"
#include "tensorboard_event.pb.h"  // generated (runplane_imports_proto)

namespace runplane::imports {
namespace {

namespace tb = runplane::imports::tb;

/// A record longer than this is taken for damage (a length field gone wrong), not allocated.
constexpr std::uint64_t kMaxRecordBytes = 256ull << 20;

std::uint64_t le64(const unsigned char* p) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, 8);
    return v;  // x86-64 / aarch64: little-endian, as the format
}
std::uint32_t le32(const unsigned char* p) {
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
}

double halfToDouble(std::uint32_t bits) {
    const std::uint32_t sign = (bits >> 15) & 1u;
    const std::uint32_t exp = (bits >> 10) & 0x1fu;
    const std::uint32_t frac = bits & 0x3ffu;
    double v = 0;
    if (exp == 0) {
        v = std::ldexp(static_cast<double>(frac), -24);
    } else if (exp == 31) {
        v = frac == 0 ? std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
    } else {
        v = std::ldexp(static_cast<double>(frac | 0x400u), static_cast<int>(exp) - 25);
    }
    return sign != 0u ? -v : v;
}

double bfloat16ToDouble(std::uint32_t bits) {
    return static_cast<double>(std::bit_cast<float>((bits & 0xffffu) << 16));
}

template <typename T>
T fromContent(const std::string& content) {
    T v{};
    std::memcpy(&v, content.data(), sizeof(T));
    return v;
}

/// How a one-element tensor of each DataType (tensorflow/core/framework/types.proto) gives its
/// value: from its typed repeated field, or from `content` (little-endian, `bytes` wide).
struct DtypeRow {
    int dtype;
    const char* name;
    std::size_t bytes;  // width in tensor_content
    double (*typed)(const tb::Tensor& t, bool& ok);
    double (*content)(const std::string& c);
};

template <typename Field>
double first(const Field& f, bool& ok) {
    ok = f.size() == 1;
    return ok ? static_cast<double>(f.Get(0)) : 0.0;
}

const std::array<DtypeRow, 13> kDtypes{{
    {1, "float", 4, [](const tb::Tensor& t, bool& ok) { return first(t.float_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<float>(c)); }},
    {2, "double", 8, [](const tb::Tensor& t, bool& ok) { return first(t.double_val(), ok); },
     [](const std::string& c) { return fromContent<double>(c); }},
    {3, "int32", 4, [](const tb::Tensor& t, bool& ok) { return first(t.int_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::int32_t>(c)); }},
    {4, "uint8", 1, [](const tb::Tensor& t, bool& ok) { return first(t.int_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::uint8_t>(c)); }},
    {5, "int16", 2, [](const tb::Tensor& t, bool& ok) { return first(t.int_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::int16_t>(c)); }},
    {6, "int8", 1, [](const tb::Tensor& t, bool& ok) { return first(t.int_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::int8_t>(c)); }},
    {9, "int64", 8, [](const tb::Tensor& t, bool& ok) { return first(t.int64_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::int64_t>(c)); }},
    {10, "bool", 1, [](const tb::Tensor& t, bool& ok) { return first(t.bool_val(), ok); },
     [](const std::string& c) { return c[0] != 0 ? 1.0 : 0.0; }},
    {14, "bfloat16", 2,
     [](const tb::Tensor& t, bool& ok) {
         ok = t.half_val_size() == 1;
         return ok ? bfloat16ToDouble(static_cast<std::uint32_t>(t.half_val(0))) : 0.0;
     },
     [](const std::string& c) { return bfloat16ToDouble(fromContent<std::uint16_t>(c)); }},
    {17, "uint16", 2, [](const tb::Tensor& t, bool& ok) { return first(t.int_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::uint16_t>(c)); }},
    {19, "half", 2,
     [](const tb::Tensor& t, bool& ok) {
         ok = t.half_val_size() == 1;
         return ok ? halfToDouble(static_cast<std::uint32_t>(t.half_val(0))) : 0.0;
     },
     [](const std::string& c) { return halfToDouble(fromContent<std::uint16_t>(c)); }},
    {22, "uint32", 4, [](const tb::Tensor& t, bool& ok) { return first(t.uint32_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::uint32_t>(c)); }},
    {23, "uint64", 8, [](const tb::Tensor& t, bool& ok) { return first(t.uint64_val(), ok); },
     [](const std::string& c) { return static_cast<double>(fromContent<std::uint64_t>(c)); }},
}};

/// The value of a one-element numeric tensor; false for anything else (strings, shapes > 1).
bool tensorScalar(const tb::Tensor& t, double& value) {
    std::int64_t elements = 1;
    for (const auto& d : t.shape().dim()) {
        elements *= d.size();
    }
    if (elements != 1) {
        return false;
    }
    for (const DtypeRow& row : kDtypes) {
        if (row.dtype != t.dtype()) {
            continue;
        }
        if (!t.content().empty()) {
            if (t.content().size() != row.bytes) {
                return false;
            }
            value = row.content(t.content());
            return true;
        }
        bool ok = false;
        value = row.typed(t, ok);
        return ok;
    }
    return false;
}

std::int64_t wallNs(double wallTime) {
    const double ns = std::nearbyint(wallTime * 1e9);
    if (!(ns > -9.2e18 && ns < 9.2e18)) {
        return 0;
    }
    return static_cast<std::int64_t>(ns);
}

/// What is known of one tag: its series (index into run.series) and whether it holds scalars.
struct TagState {
    std::size_t series = 0;
    bool hasSeries = false;
    int scalarPlugin = -1;  // -1: no metadata seen yet; 1: scalars plugin / class; 0: another
};

}  // namespace

Result<ImportedRun> readTensorBoard(const ImportSource& source) {
    ImportedRun run;
    run.format = "tensorboard";
    run.name = source.name;
    run.files = source.files;
    ContentHash hash;
    std::unordered_map<std::string, TagState> tags;
    tb::Event event;
    std::int64_t fileVersions = 0;
    for (const std::string& path : source.files) {
        auto mapped = MappedFile::open(path);
        if (!mapped.ok()) {
            return mapped.failure();
        }
        const unsigned char* p = mapped->data();
        const std::size_t size = mapped->size();
        hash.update(p, size);
        std::size_t at = 0;
        auto stop = [&](const std::string& why) {  // every file's stop, in reading order
            run.stopped += (run.stopped.empty() ? "" : "; ") + path + ": stopped at byte " +
                           std::to_string(at) + ": " + why;
        };
        while (at < size) {
            if (size - at < 12) {
                stop("truncated record header (" + std::to_string(size - at) + " of 12 bytes)");
                break;
            }
            const std::uint64_t length = le64(p + at);
            if (maskCrc(crc32c(p + at, 8)) != le32(p + at + 8)) {
                stop("record header fails its CRC (damaged length)");
                break;
            }
            if (length > kMaxRecordBytes) {
                stop("record length " + std::to_string(length) + " exceeds 256 MiB");
                break;
            }
            if (size - at - 12 < length + 4) {
                stop("truncated record (" + std::to_string(length) + " bytes of data, " +
                     std::to_string(size - at - 12) + " left in the file)");
                break;
            }
            const unsigned char* data = p + at + 12;
            if (maskCrc(crc32c(data, length)) != le32(data + length)) {
                stop("record data fails its CRC");
                break;
            }
            if (!event.ParseFromArray(data, static_cast<int>(length))) {
                stop("record is not an Event message");
                break;
            }
            ++run.records;
            if (event.has_summary()) {
                const std::int64_t tNs = wallNs(event.wall_time());
                for (const tb::SummaryValue& v : event.summary().value()) {
                    auto [it, fresh] = tags.try_emplace(v.tag());
                    TagState& tag = it->second;
                    if (v.has_metadata() && tag.scalarPlugin < 0) {
                        const auto& md = v.metadata();
                        tag.scalarPlugin =
                            (md.plugin_data().plugin_name() == "scalars" || md.data_class() == 1)
                                ? 1
                                : 0;
                    }
                    double value = 0;
                    bool scalar = false;
                    if (v.value_case() == tb::SummaryValue::kSimpleValue) {
                        value = static_cast<double>(v.simple_value());
                        scalar = true;
                    } else if (v.value_case() == tb::SummaryValue::kTensor &&
                               tag.scalarPlugin == 1) {
                        scalar = tensorScalar(v.tensor(), value);
                    }
                    if (!scalar) {
                        ++run.skippedValues;
                        continue;
                    }
                    if (!tag.hasSeries) {
                        tag.hasSeries = true;
                        tag.series = run.series.size();
                        run.series.push_back(ImportedSeries{v.tag(), {}});
                    }
                    run.series[tag.series].points.push_back(
                        ImportedPoint{event.step(), tNs, value});
                }
            } else if (!event.file_version().empty()) {
                ++fileVersions;
            }
            at += 12 + length + 4;
        }
    }
    run.contentSha256 = hash.hex();
    run.extra["event_files"] = source.files.size();
    run.extra["file_version_records"] = fileVersions;
    return run;
}

}  // namespace runplane::imports
