// Reading framework flags out of a recipe's extra_args (recipe_flags.h).

#include "backend/plan/detail/recipe_flags.h"

#include <charconv>
#include <cstdlib>

namespace runplane::plan::detail {
namespace {

/// "--x=v" -> ("--x", "v"); "--x" -> ("--x", nullopt).
std::pair<std::string_view, std::optional<std::string_view>> splitFlag(std::string_view text) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) {
        return {text, std::nullopt};
    }
    return {text.substr(0, eq), text.substr(eq + 1)};
}

/// "--x" -> "--no-x".
bool isNegationOf(std::string_view written, std::string_view flag) {
    return flag.size() > 2 && written.size() == flag.size() + 3 &&
           written.substr(0, 5) == "--no-" && written.substr(5) == flag.substr(2);
}

}  // namespace

const ExtraArg* RecipeFlags::find(std::string_view flag, std::size_t* index) const {
    const auto& args = m_recipe.extraArgs;
    for (std::size_t i = args.size(); i-- > 0;) {
        const auto name = splitFlag(args[i].flag).first;
        if (name == flag || isNegationOf(name, flag)) {
            if (index != nullptr) {
                *index = i;
            }
            return &args[i];
        }
    }
    return nullptr;
}

bool RecipeFlags::runTime(std::string_view flag) const {
    const ExtraArg* arg = find(flag);
    if (arg == nullptr || arg->values.size() != 1) {
        return false;
    }
    const std::string& v = arg->values[0];
    if (v.size() < 4 || v.rfind("${", 0) != 0 || v.back() != '}') {
        return false;
    }
    const std::string assign = v.substr(2, v.size() - 3) + "=";
    for (const auto& step : m_recipe.launcher.preLaunch) {
        for (std::size_t at = step.find(assign); at != std::string::npos;
             at = step.find(assign, at + 1)) {
            if (at == 0 || step[at - 1] == '\n' || step[at - 1] == ' ' || step[at - 1] == '\t') {
                return true;
            }
        }
    }
    return false;
}

std::optional<bool> RecipeFlags::boolean(std::string_view flag) const {
    const ExtraArg* arg = find(flag);
    if (arg == nullptr) {
        return std::nullopt;
    }
    const auto [name, inlineValue] = splitFlag(arg->flag);
    if (name != flag) {
        return false;  // --no-x
    }
    std::string_view v = inlineValue ? *inlineValue
                                     : (arg->values.empty() ? std::string_view("true")
                                                            : std::string_view(arg->values[0]));
    return !(v == "false" || v == "False" || v == "0" || v == "no");
}

std::optional<std::string> RecipeFlags::value(std::string_view flag) const {
    const ExtraArg* arg = find(flag);
    if (arg == nullptr) {
        return std::nullopt;
    }
    const auto [name, inlineValue] = splitFlag(arg->flag);
    if (name != flag) {
        return std::nullopt;
    }
    if (inlineValue) {
        return std::string(*inlineValue);
    }
    if (arg->values.empty()) {
        return std::nullopt;
    }
    return arg->values[0];
}

std::optional<double> RecipeFlags::number(std::string_view flag) const {
    const auto text = value(flag);
    if (!text || text->empty()) {
        return std::nullopt;
    }
    double out = 0;
    const char* begin = text->data();
    const char* end = begin + text->size();
    auto [ptr, ec] = std::from_chars(begin, end, out);
    if (ec != std::errc() || ptr != end) {
        return std::nullopt;
    }
    return out;
}

std::vector<std::string> RecipeFlags::values(std::string_view flag) const {
    const ExtraArg* arg = find(flag);
    if (arg == nullptr) {
        return {};
    }
    const auto [name, inlineValue] = splitFlag(arg->flag);
    if (name != flag) {
        return {};
    }
    std::vector<std::string> out;
    if (inlineValue) {
        out.emplace_back(*inlineValue);
    }
    out.insert(out.end(), arg->values.begin(), arg->values.end());
    return out;
}

std::string RecipeFlags::field(std::string_view flag) const {
    std::size_t index = 0;
    if (find(flag, &index) == nullptr) {
        return {};
    }
    return "extra_args[" + std::to_string(index) + "]";
}

}  // namespace runplane::plan::detail
