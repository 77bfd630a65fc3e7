#include "compute/smoke/metrics_log.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace runplane::smoke {

std::string pythonFloatRepr(double value) {
    if (std::isnan(value)) {
        return "nan";
    }
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    // Shortest round-trip digits in scientific form, e.g. "-1.2345e-05" or "0e+00".
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    const bool negative = sci[0] == '-';
    const std::size_t start = negative ? 1 : 0;
    const std::size_t ePos = sci.find('e');
    std::string digits;
    for (std::size_t i = start; i < ePos; ++i) {
        if (sci[i] != '.') {
            digits.push_back(sci[i]);
        }
    }
    const int exponent = std::atoi(sci.c_str() + ePos + 1);
    std::string out = negative ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            out += "0.";
            out += std::string(static_cast<std::size_t>(-exponent - 1), '0');
            out += digits;
        } else {
            const std::size_t intDigits = static_cast<std::size_t>(exponent) + 1;
            if (digits.size() <= intDigits) {
                out += digits + std::string(intDigits - digits.size(), '0') + ".0";
            } else {
                out += digits.substr(0, intDigits) + "." + digits.substr(intDigits);
            }
        }
    } else {
        out += digits.substr(0, 1);
        if (digits.size() > 1) {
            out += "." + digits.substr(1);
        }
        char expBuf[16];
        std::snprintf(expBuf, sizeof(expBuf), "e%c%02d", exponent < 0 ? '-' : '+',
                      std::abs(exponent));
        out += expBuf;
    }
    return out;
}

namespace {

std::string pythonStringRepr(std::string_view s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'' || c == '\\') {
            out.push_back('\\');
        }
        out.push_back(c);
    }
    out.push_back('\'');
    return out;
}

std::string jsonString(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(c);
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof(esc), "\\u%04x", c);
            out += esc;
        } else {
            out.push_back(c);
        }
    }
    out.push_back('"');
    return out;
}

}  // namespace

std::string formatMetricLine(std::string_view prefix, std::int64_t id,
                             const std::vector<Metric>& metrics) {
    std::string out(prefix);
    out += " " + std::to_string(id) + ": {";
    bool first = true;
    for (const Metric& m : metrics) {
        if (!first) {
            out += ", ";
        }
        first = false;
        out += pythonStringRepr(m.key) + ": ";
        if (const auto* i = std::get_if<std::int64_t>(&m.value)) {
            out += std::to_string(*i);
        } else {
            out += pythonFloatRepr(std::get<double>(m.value));
        }
    }
    out += "}";
    return out;
}

std::string formatMetricJson(std::string_view prefix, std::int64_t id,
                             const std::vector<Metric>& metrics) {
    std::string out =
        "{\"kind\":" + jsonString(prefix) + ",\"id\":" + std::to_string(id) + ",\"metrics\":{";
    bool first = true;
    for (const Metric& m : metrics) {
        if (!first) {
            out += ",";
        }
        first = false;
        out += jsonString(m.key) + ":";
        if (const auto* i = std::get_if<std::int64_t>(&m.value)) {
            out += std::to_string(*i);
        } else {
            const double d = std::get<double>(m.value);
            if (!std::isfinite(d)) {
                out += "null";
            } else {
                char buf[64];
                auto res = std::to_chars(buf, buf + sizeof(buf), d);
                out.append(buf, res.ptr);
            }
        }
    }
    out += "}}";
    return out;
}

MetricsLog::~MetricsLog() {
    if (m_jsonl != nullptr) {
        std::fclose(m_jsonl);
    }
}

Status MetricsLog::openJsonl(const std::string& path) {
    m_jsonl = std::fopen(path.c_str(), "a");
    if (m_jsonl == nullptr) {
        return Error{"runplane-smoke: --metrics-jsonl " + path +
                     ": cannot open for writing: " + std::strerror(errno)};
    }
    return {};
}

void MetricsLog::metrics(std::string_view prefix, std::int64_t id,
                         const std::vector<Metric>& metrics) {
    line(formatMetricLine(prefix, id, metrics));
    if (m_jsonl != nullptr) {
        const std::string json = formatMetricJson(prefix, id, metrics);
        std::fprintf(m_jsonl, "%s\n", json.c_str());
        std::fflush(m_jsonl);
    }
}

void MetricsLog::phase(std::string_view name) {
    line("[runplane-phase] " + std::string(name));
}

void MetricsLog::line(std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), m_out);
    std::fputc('\n', m_out);
    std::fflush(m_out);
}

}  // namespace runplane::smoke
