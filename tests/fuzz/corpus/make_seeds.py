#!/usr/bin/env python3
"""Writes the binary seed inputs of the spool, history_ingest and agent_rpc fuzz targets
(docs/fuzzing.md) from the text-format messages below, with `protoc --encode` (no Python protobuf
needed). Input layouts are described at the top of each target's .cpp. Run from anywhere."""
import pathlib
import struct
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
PROTO_DIR = HERE / "../../../proto"


def encode(message, text):
    return subprocess.run(
        ["protoc", f"--proto_path={PROTO_DIR}", f"--encode=runplane.v1.{message}",
         "runplane/v1/agent.proto"], input=text.encode(), capture_output=True, check=True).stdout


def long_string(b):
    return struct.pack(">H", len(b)) + b


def short_string(b):
    return bytes([len(b)]) + b


def write(folder, name, data):
    (HERE / folder).mkdir(exist_ok=True)
    (HERE / folder / name).write_bytes(data)


SAMPLE = 'seq: %d t_unix_ns: 1700000000000000000 sample { series: "host.mem.used_bytes" value: 1e9 min: 9e8 max: 2e9 step: -1 }'
METRIC = 'seq: %d t_unix_ns: 1700000000000000001 run_id: "r1" sample { series: "train/loss" value: 0.25 min: 0.25 max: 0.25 step: 3 }'
GAP = 'seq: %d event { kind: EVENT_GAP message: "dropped" attrs { key: "first_seq" value: "2" } attrs { key: "last_seq" value: "4" } }'
STATE = 'seq: %d t_unix_ns: 1700000000000000002 run_id: "r1" event { kind: EVENT_RUN_STATE message: "ended" attrs { key: "state" value: "RUN_STATE_FAILED" } }'
EXIT = 'seq: %d run_id: "r1" event { kind: EVENT_PROCESS_EXIT attrs { key: "state" value: "succeeded" } attrs { key: "exit_code" value: "0" } }'


def records(*items):
    return " ".join("records { %s }" % it for it in items)


# history_ingest: up to 8 batches, each a long string of TelemetryBatch bytes.
b1 = encode("TelemetryBatch", 'node_id: "n" spool_incarnation: 7 ' + records(SAMPLE % 1, METRIC % 2))
b2 = encode("TelemetryBatch", 'spool_incarnation: 7 oldest_kept_seq: 2 ' + records(GAP % 5, STATE % 6, EXIT % 9))
b3 = encode("TelemetryBatch", records(SAMPLE % 3, SAMPLE % 3, METRIC % 1))  # duplicates, going back
write("history_ingest", "samples-then-gap.bin", long_string(b1) + long_string(b2))
write("history_ingest", "duplicates.bin", long_string(b1) + long_string(b3) + long_string(b1))
write("history_ingest", "single.bin", long_string(encode("TelemetryBatch", records(METRIC % 1))))

# spool: flags, four meta values, then records (seq, flags, [gap_first], [size], body).
def spool_record(seq, body, gap_first=None, size=None):
    flags = (1 if gap_first is not None else 0) | (2 if size is not None else 0)
    out = struct.pack(">QB", seq, flags)
    if gap_first is not None:
        out += struct.pack(">Q", gap_first)
    if size is not None:
        out += struct.pack(">Q", size)
    return out + long_string(body)


def spool(meta, recs):
    present = sum(1 << i for i, v in enumerate(meta) if v is not None)
    out = bytes([present]) + b"".join(short_string((v or "").encode()) for v in meta)
    return out + b"".join(recs)


r1 = encode("TelemetryRecord", SAMPLE % 1)
r2 = encode("TelemetryRecord", METRIC % 2)
rg = encode("TelemetryRecord", GAP % 5)
write("spool", "normal.bin", spool(["4", None, "0", "1234"], [spool_record(1, r1), spool_record(2, r2), spool_record(5, rg, gap_first=2)]))
write("spool", "corrupt-body.bin", spool(["3", None, None, "99"], [spool_record(1, r1), spool_record(2, b"\xff\xff\xff\x0f")]))
write("spool", "meta-not-numbers.bin", spool(["x", "-1", "18446744073709551616", "abc"], [spool_record(1, r1)]))
write("spool", "huge-seq.bin", spool([None, None, None, None], [spool_record(0x7FFFFFFFFFFFFFFF, r1, size=0xFFFFFFFFFFFF)]))

# agent_rpc: method byte (StartRun 0, StopRun 1, ListRuns 2, TailLogs 3, WatchTelemetry 4,
# AckTelemetry 5, GetNode 6), auth byte (0 right token, 1 none, else a short-string token), request.
def rpc(method, message, text, auth=b"\x00"):
    return bytes([method]) + auth + encode(message, text)


write("agent_rpc", "start-run.bin", rpc(0, "StartRunRequest", 'run_id: "r-1" argv: "/bin/true" env { key: "A" value: "1" } workdir: "w" sample_hz: 1'))
write("agent_rpc", "start-run-escape.bin", rpc(0, "StartRunRequest", 'run_id: "../x" argv: "" workdir: "../../etc"'))
write("agent_rpc", "start-run-bad-env.bin", rpc(0, "StartRunRequest", 'run_id: "r2" argv: "sh" env { key: "A=B" value: "x" }'))
write("agent_rpc", "stop-run.bin", rpc(1, "StopRunRequest", 'run_id: "r-1" grace_seconds: 1e300'))
write("agent_rpc", "list-runs.bin", rpc(2, "ListRunsRequest", ""))
write("agent_rpc", "tail-logs.bin", rpc(3, "TailLogsRequest", 'run_id: "r-1" stream: LOG_STREAM_STDERR from_offset: 18446744073709551615 follow: true'))
write("agent_rpc", "watch.bin", rpc(4, "WatchTelemetryRequest", 'from_seq: 1 sample_hz: 2 consumer: "gui"'))
write("agent_rpc", "watch-bad-hz.bin", rpc(4, "WatchTelemetryRequest", 'sample_hz: nan consumer: "a b"'))
write("agent_rpc", "ack.bin", rpc(5, "AckTelemetryRequest", 'committed_through_seq: 2 consumer: "gui"'))
write("agent_rpc", "ack-beyond.bin", rpc(5, "AckTelemetryRequest", 'committed_through_seq: 18446744073709551615'))
write("agent_rpc", "get-node-wrong-token.bin", rpc(6, "GetNodeRequest", "", auth=b"\x02" + short_string(b"Bearer nope")))
write("agent_rpc", "get-node-no-token.bin", rpc(6, "GetNodeRequest", "", auth=b"\x01"))

# issue 41 (daemon side): deep and NUL-carrying working directories, a large argv.
write("agent_rpc", "start-run-deep-workdir.bin", rpc(0, "StartRunRequest", 'run_id: "deep" argv: "/bin/true" workdir: "%s"' % ("d/" * 2000)))
write("agent_rpc", "start-run-nul-workdir.bin", rpc(0, "StartRunRequest", 'run_id: "nul" argv: "/bin/true" workdir: "q\\000r"'))
write("agent_rpc", "start-run-large-argv.bin", rpc(0, "StartRunRequest", 'run_id: "big" ' + " ".join('argv: "%s"' % (chr(97 + i % 26) * 100) for i in range(70))))

# credentials: five fixture selectors (0 token, 1 FIFO, 2 link to the FIFO, 3 /dev/zero,
# 4 folder, 5 2 MiB file, 6 missing, 7 empty), then YAML text after the keys.
write("credentials", "good.bin", bytes([0, 0, 0, 0, 0]) + b"basic_auth_users:\n  p: '$2y$10$abcdefghijklmnopqrstuuvwxyz0123456789ABCDEFGHIJKLMNOP'\n")
write("credentials", "fifo.bin", bytes([1, 1, 2, 1, 1]))
write("credentials", "dev-zero.bin", bytes([3, 3, 3, 3, 3]))
write("credentials", "folder-huge-missing.bin", bytes([4, 5, 6, 7, 5]))
write("credentials", "bcrypt-cost-31.bin", bytes([0, 0, 0, 0, 2]) + b"basic_auth_users:\n  p: '$2y$31$abcdefghijklmnopqrstuuvwxyz0123456789ABCDEFGHIJKLMNOP'\ntelemetry_hz: 1\n")
