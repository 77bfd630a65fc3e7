#pragma once
// A run's state, spoken in types (issue #22). Two enums, because two parties speak:
//  - NodeRunState is what a node reports about the run it supervises (starting ... lost); the
//    protocol's v1::RunState mirrors it and only backend/control/node_convert.cpp maps the two;
//  - RunState is what the history records (runs.state): the node's word folded into the five
//    states a user filters by. Its stored spelling ("finished", "daemon_lost") is a file format:
//    existing history files carry it, so it never changes.
// Plain C++ (no Qt, no protobuf): the daemon, the controller, the history, the CLI and the GUI
// share it.

#include <array>
#include <optional>
#include <string_view>

namespace runplane::telemetry {

/// A run's state in the history.
enum class RunState { Running, Finished, Failed, Stopped, DaemonLost };

/// Every history state, in the order the GUI's status filter lists them.
inline constexpr std::array<RunState, 5> kRunStates{RunState::Running, RunState::Finished,
                                                    RunState::Failed, RunState::Stopped,
                                                    RunState::DaemonLost};

/// The stored spelling: "running", "finished", "failed", "stopped", "daemon_lost".
constexpr std::string_view toString(RunState state) {
    switch (state) {
        case RunState::Running:
            return "running";
        case RunState::Finished:
            return "finished";
        case RunState::Failed:
            return "failed";
        case RunState::Stopped:
            return "stopped";
        case RunState::DaemonLost:
            return "daemon_lost";
    }
    return "daemon_lost";
}

/// Inverse of toString (the stored spelling only); nullopt for anything else.
constexpr std::optional<RunState> runStateFromString(std::string_view text) {
    for (RunState s : kRunStates) {
        if (toString(s) == text) {
            return s;
        }
    }
    return std::nullopt;
}

/// The words a person reads: the stored spelling with '_' as a space ("daemon lost").
constexpr std::string_view label(RunState state) {
    return state == RunState::DaemonLost ? std::string_view("daemon lost") : toString(state);
}

/// True once the run can no longer change by itself (every state but Running).
constexpr bool isEnded(RunState state) {
    return state != RunState::Running;
}

/// A run's state as its node reports it (RunStatus.state in the protocol).
enum class NodeRunState { Unspecified, Starting, Running, Succeeded, Failed, Stopped, Lost };

/// "starting", "running", "succeeded", "failed", "stopped", "lost", "unspecified" (the CLI's
/// and the GUI's spelling of a node's answer; never stored). A C string, as its callers join it.
constexpr const char* toString(NodeRunState state) {
    switch (state) {
        case NodeRunState::Starting:
            return "starting";
        case NodeRunState::Running:
            return "running";
        case NodeRunState::Succeeded:
            return "succeeded";
        case NodeRunState::Failed:
            return "failed";
        case NodeRunState::Stopped:
            return "stopped";
        case NodeRunState::Lost:
            return "lost";
        case NodeRunState::Unspecified:
            break;
    }
    return "unspecified";
}

/// The history's record of a node's answer: succeeded -> finished, lost -> daemon_lost (the
/// daemon cannot tell; not "failed"), starting and unspecified -> running.
constexpr RunState historyState(NodeRunState state) {
    switch (state) {
        case NodeRunState::Succeeded:
            return RunState::Finished;
        case NodeRunState::Failed:
            return RunState::Failed;
        case NodeRunState::Stopped:
            return RunState::Stopped;
        case NodeRunState::Lost:
            return RunState::DaemonLost;
        default:
            return RunState::Running;
    }
}

}  // namespace runplane::telemetry
