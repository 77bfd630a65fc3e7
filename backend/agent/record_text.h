#pragma once
// The spool's text boundary (docs/daemon.md, "Text from runs"): every string of a telemetry
// record (run id, series name, event message, attribute keys and values) is made valid UTF-8
// before the record is serialized into the spool, because a protobuf `string` that is not
// UTF-8 serializes but never parses back, and one such record would stop every watcher.
// Ill-formed bytes become U+FFFD (common/utf8_text.h); the record keeps its place and seq.

#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

/// In place; returns how many strings were changed (0 for a record that was valid already).
int makeRecordTextValid(v1::TelemetryRecord& record);

}  // namespace runplane::agent
