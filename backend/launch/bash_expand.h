#pragma once
// Internal: word expansion of the launch-script reader -- ${...} forms, quoting and field
// splitting (bash_expand.cpp), $(...) idioms and $((...)) arithmetic (bash_subst.cpp). Depends on
// the reader state only; the command level (bash_eval.h) builds on it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/launch/bash_state.h"

namespace runplane::plan::launch::detail {

class Expander : public ReaderState {
  public:
    using ReaderState::ReaderState;

    std::vector<Field> expandWord(const Word& word, bool split);
    /// The word as one string (assignment context: no splitting; lists joined by spaces).
    Value scalarOf(const Word& word);

  protected:
    struct ParamResult {
        bool list = false;         // ${A[@]} / ${A[*]} / $@
        bool star = false;         // ${A[*]}
        bool quotedItems = false;  // ${A[@]+"${A[@]}"}: the items as "${A[@]}" gives them
        std::vector<Value> items;
        Value scalar;
    };

    ParamResult evalParam(const std::string& expr, bool quoted, int line);
    Value evalCommandSubst(const std::string& text, int line);
    Value evalArith(const std::string& text, int line);
    Value evalSeq(const std::vector<long long>& args, const std::string& text, int line);
    /// $(echo WORDS | sed SCRIPT | tr SET1 SET2 ...) on known words (bash_textfilter.h);
    /// nullopt when the pipeline is not made of those commands alone.
    std::optional<Value> evalTextPipeline(const Node& node, const std::string& text, int line);
};

/// Ends the `why` of an unknown value that stands for the model arguments model_args_utils.py
/// prints for a model.
inline constexpr std::string_view kPythonModelArgsMark = " (computed by model_args_utils.py)";

/// True when NAME's value word is exactly ${NAME...} / $NAME (a parameter with a default).
bool isSelfParameter(const Word& word, const std::string& name);

}  // namespace runplane::plan::launch::detail
