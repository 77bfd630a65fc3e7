// The Python-literal parser the daemon runs on the frameworks' printed dicts, and the flattening
// of what it returns into metric series.
#include "backend/agent/python_literal.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane::agent;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::pair<std::string, double>> leaves;
    if (auto value = parsePythonLiteral(text); value.ok()) {
        flattenNumeric(*value, "", leaves);
        (void)value->asDouble();
        (void)value->keyText();
    }
    std::size_t consumed = 0;
    if (auto prefix = parsePythonLiteralPrefix(text, &consumed); prefix.ok() && consumed > size) {
        __builtin_trap();  // it may never claim more than it was given
    }
    return 0;
}
