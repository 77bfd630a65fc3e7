// Command lists joined by && / || (issue 45): `[ a ] || [ b ] && X=v`, `[ -n "$X" ] && Y=1 || Y=0`
// on known values, `[ -z "${X:-}" ] && echo ... && exit 1` on a parameter (a guard clause, read as
// passed), and a launch command followed by `|| true` / `|| exit 1` / `&& echo done`. Bash runs an
// AND-OR list left to right, each command only when the status so far allows it (`A || B && C` is
// `(A || B) && C`); the reader does the same with the test commands it decides, assignments and
// the commands that cannot change the recipe (status 0). Anything it cannot decide is left to the
// caller's "not understood" path.

#include "backend/launch/bash_eval.h"

namespace runplane::plan::launch::detail {
namespace {

bool isTestCommand(const SimpleCommand& cmd) {
    if (!cmd.assigns.empty() || cmd.words.empty()) {
        return false;
    }
    const std::string w = cmd.words[0].literal();
    return w == "[" || w == "[[" || w == "test" || w == "true" || w == "false" || w == "!";
}

}  // namespace

bool Evaluator::evalAndOrList(const Node& node, const std::vector<CmdKind>& kinds) {
    const std::size_t n = node.commands.size();
    for (const auto& op : node.ops) {
        if (op != "&&" && op != "||") {
            return false;
        }
    }
    // a launch followed by what cannot change the recipe: the launch is the run
    if (kinds[0] == CmdKind::Launch) {
        for (std::size_t i = 1; i < n; ++i) {
            if (kinds[i] != CmdKind::Ignorable && kinds[i] != CmdKind::Exit) {
                return false;
            }
        }
        note(NoteLevel::Info, node.line,
             "the launch command is followed by '" + node.ops[0] +
                 " ...' (its exit status only): read as the launch");
        evalCommand(node.commands[0]);
        return true;
    }
    // the leading test commands are the condition; the rest are assignments, ignorable commands
    // or an exit
    std::size_t k = 0;
    while (k < n && isTestCommand(node.commands[k])) {
        ++k;
    }
    if (k == 0 || k == n) {
        return false;
    }
    bool exits = false;
    bool launches = false;
    for (std::size_t i = k; i < n; ++i) {
        if (isTestCommand(node.commands[i]) ||
            (kinds[i] != CmdKind::Assign && kinds[i] != CmdKind::Ignorable &&
             kinds[i] != CmdKind::Exit && kinds[i] != CmdKind::Launch)) {
            return false;
        }
        exits = exits || kinds[i] == CmdKind::Exit;
        launches = launches || kinds[i] == CmdKind::Launch;
    }
    Node cond;
    cond.kind = Node::Kind::Commands;
    cond.line = node.line;
    cond.commands.assign(node.commands.begin(), node.commands.begin() + static_cast<long>(k));
    cond.ops.assign(node.ops.begin(), node.ops.begin() + static_cast<long>(k - 1));
    std::string why;
    m_conditionParams.clear();
    Truth t = evalCondition({cond}, &why);
    for (const auto& name : m_conditionParams) {
        if (m_probeVars.count(name)) {
            return false;  // a run-time probe's verdict: the pre-launch steps carry it
        }
    }
    if (t == Truth::Unknown || (launches && !m_conditionParams.empty())) {
        return false;  // a launch on one side of a parameter's test: the caller's path
    }
    if (!m_conditionParams.empty()) {
        std::string names;
        for (const auto& name : m_conditionParams) {
            names += (names.empty() ? "" : ", ") + name;
        }
        if (exits) {
            // `[ -z "${X:-}" ] && echo ... && exit 1`: a guard clause, read as passed
            for (auto& p : m_out.parameters) {
                p.required = p.required || m_conditionParams.count(p.name) > 0;
            }
            note(NoteLevel::Info, node.line,
                 "guard on the parameter(s) " + names +
                     ": read as passed; they are required variables of the recipe");
            return true;
        }
        note(NoteLevel::Info, node.line,
             "the condition reads the parameter(s) " + names +
                 ", decided as if unset (give them with --env to decide otherwise)");
    }
    bool status = t == Truth::True;
    for (std::size_t i = k; i < n; ++i) {
        const std::string& op = node.ops[i - 1];
        if ((op == "&&" && !status) || (op == "||" && status)) {
            continue;  // not run; the status stays
        }
        if (kinds[i] == CmdKind::Exit) {
            evalCommand(node.commands[i]);
            return true;
        }
        if (kinds[i] == CmdKind::Assign || kinds[i] == CmdKind::Launch) {
            evalCommand(node.commands[i]);
        }
        status = true;
    }
    return true;
}

}  // namespace runplane::plan::launch::detail
