// Which framework an imported script runs (issue 15): decided by what the script says -- miles'
// entry point, Python model arguments, paths or miles-only flags; a slime path or slime-only flag;
// vLLM engine flags (vime) -- and, where its text says nothing, by where it lives (a `miles` /
// `slime` / `vime` checkout above it). Where nothing decides, the script reads as slime with
// framework_assumed set, so that a rule of one framework only is a warning, not an error.

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "backend/launch/flag_rules.h"
#include "backend/launch/import_parts.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {

namespace {

bool namesFramework(const std::string& value, std::string_view word) {
    // a path component that is the word or ends with it: /miles/, _miles/, -miles/, ..._miles
    for (std::size_t at = value.find(word); at != std::string::npos;
         at = value.find(word, at + 1)) {
        const std::size_t end = at + word.size();
        const bool before =
            at == 0 || value[at - 1] == '/' || value[at - 1] == '_' || value[at - 1] == '-';
        const bool after = end == value.size() || value[end] == '/';
        // a path, or a name ending in _WORD (a wandb project "..._miles")
        const bool pathLike = value.find('/') != std::string::npos ||
                              (at > 0 && value[at - 1] == '_' && end == value.size());
        if (before && after && pathLike) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::optional<std::pair<Flavour, std::string>> frameworkFromLocation(const std::string& path) {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::absolute(path, ec);
    if (ec) {
        return std::nullopt;
    }
    dir = dir.lexically_normal().parent_path();
    const std::pair<const char*, Flavour> names[] = {
        {"miles", Flavour::Miles}, {"slime", Flavour::Slime}, {"vime", Flavour::Vime}};
    for (int depth = 0; depth < 16 && !dir.empty(); ++depth) {
        // a checkout's root holds the framework's Python package
        std::optional<std::pair<Flavour, std::string>> found;
        for (const auto& [name, flavour] : names) {
            if (std::filesystem::is_regular_file(dir / name / "__init__.py", ec)) {
                if (found) {
                    return std::nullopt;  // both packages: not decided here
                }
                found =
                    std::make_pair(flavour, "it lives in a " + std::string(name) + " checkout (" +
                                                dir.string() + " holds the " + name + "/ package)");
            }
        }
        if (found) {
            return found;
        }
        // the checkout's folder: its name, as words, says one framework
        const std::string base = asciiLower(dir.filename().string());
        std::vector<std::string> words(1);
        for (char c : base) {
            if (std::isalnum(static_cast<unsigned char>(c))) {
                words.back() += c;
            } else if (!words.back().empty()) {
                words.emplace_back();
            }
        }
        for (const auto& [name, flavour] : names) {
            if (std::find(words.begin(), words.end(), name) != words.end()) {
                if (found) {
                    return std::nullopt;
                }
                found = std::make_pair(flavour, "it lives under the folder " + dir.string() +
                                                    ", whose name says " + name);
            }
        }
        if (found) {
            return found;
        }
        if (dir == dir.root_path()) {
            break;
        }
        dir = dir.parent_path();
    }
    return std::nullopt;
}

FrameworkReading readFramework(const Interpreted& in, const ScriptReading& reading,
                               const std::string& path) {
    auto trainLevel = [&](const ScriptFlag& f) {
        return !f.fromModelFile && (in.milesScript ? f.inExtraArgs : true);
    };
    bool anyVllm = false;
    for (const auto& f : in.flags) {
        anyVllm = anyVllm || (trainLevel(f) && f.flag.rfind("--vllm-", 0) == 0);
    }
    std::vector<std::string> milesHints = reading.milesHints;
    std::vector<std::string> slimeHints;
    if (in.program.find("miles") != std::string::npos) {
        milesHints.push_back("the entry point " + in.program + " is miles'");
    }
    if (in.program.find("slime") != std::string::npos) {
        slimeHints.push_back("the entry point " + in.program + " is slime's");
    }
    auto where = [](const ScriptFlag& f) { return f.file + ":" + std::to_string(f.line) + ": "; };
    for (const auto& f : in.flags) {
        if (!f.known || f.splice) {
            continue;
        }
        for (const auto& v : f.values) {
            if (milesHints.empty() && namesFramework(v, "miles")) {
                milesHints.push_back(where(f) + f.flag + " names a miles path");
            }
            if (slimeHints.empty() && namesFramework(v, "slime")) {
                slimeHints.push_back(where(f) + f.flag + " names a slime path");
            }
        }
    }
    // a slime path in a value (a checkpoint folder named `..._slime`) or entry point is weaker
    // than a slime-only flag: vime is slime's fork and its own scripts keep such paths
    const bool slimeByNameOnly = !slimeHints.empty();
    bool slimeFlag = false;
    for (const auto& f : in.flags) {
        const FlagRule* rule = trainLevel(f) ? findRule(f.flag) : nullptr;
        if (rule == nullptr) {
            continue;
        }
        slimeFlag = slimeFlag || (rule->flavours & kTrainBits) == kSlimeBit;
        if ((rule->flavours & kTrainBits) == kMilesBit && milesHints.size() < 8) {
            milesHints.push_back(where(f) + f.flag + " is a miles-only flag");
        }
        if ((rule->flavours & kTrainBits) == kSlimeBit && slimeHints.size() < 8) {
            slimeHints.push_back(where(f) + f.flag + " is a slime-only flag");
        }
    }
    FrameworkReading out;
    if (in.milesScript) {
        out.flavour = Flavour::Miles;
        return out;
    }
    if (!milesHints.empty() && slimeHints.empty()) {
        out.flavour = Flavour::Miles;
        out.why = "read as a miles script: " + milesHints.front();
        return out;
    }
    if (!slimeHints.empty() && milesHints.empty()) {
        if (slimeByNameOnly && !slimeFlag) {
            // only names say slime: a vime checkout around the script decides (issue 45: vime's
            // run-glm4-9B.sh saves to /root/GLM-Z1-9B-0414_slime/ and names no vLLM flag)
            if (auto located = frameworkFromLocation(path);
                located && located->first == Flavour::Vime) {
                out.flavour = Flavour::Vime;
                out.why =
                    "read as a vime script: " + slimeHints.front() + ", but " + located->second;
                return out;
            }
        }
        out.flavour = anyVllm ? Flavour::Vime : Flavour::Slime;
        out.why = std::string("read as a ") + (anyVllm ? "vime" : "slime") +
                  " script: " + slimeHints.front();
        return out;
    }
    if (!milesHints.empty()) {
        // both: miles is slime's fork and keeps most of its flags; its own word wins
        out.flavour = Flavour::Miles;
        out.why = "read as a miles script: " + milesHints.front() + " (though " +
                  slimeHints.front() + ")";
        return out;
    }
    if (auto located = frameworkFromLocation(path)) {
        out.flavour = located->first == Flavour::Slime && anyVllm ? Flavour::Vime : located->first;
        out.why = std::string("read as a ") + toString(out.flavour) + " script: nothing in its " +
                  "text says which framework, and " + located->second;
        return out;
    }
    if (anyVllm) {
        out.flavour = Flavour::Vime;  // vLLM engine flags: the vLLM-based variant
        return out;
    }
    out.flavour = Flavour::Slime;
    out.assumed = true;
    out.why =
        "nothing in the script says slime or miles (no miles path, flag or entry point, no "
        "slime-only flag, no slime / miles checkout above it): read as slime with "
        "framework_assumed, so a rule of one framework only is a warning; --framework "
        "miles or --framework slime decides";
    return out;
}

}  // namespace runplane::plan::launch::detail
