// The daemon's spool reading a file it did not write: meta values and record rows (seq, size,
// protobuf body, gap_first) from the fuzzer are stored with plain SQLite (built in memory, written
// as the file a clean close leaves), then Spool::open loads the counters, read() decodes every
// body, and acknowledge/append run on what was loaded; the append's text (a series name, run id,
// message and attributes) is the input's first 48 bytes, and must read back (issue 41 item 1).
//
// Input: one flag byte (bit i: meta key i present), the four meta values (short strings), then
// records: seq (8 bytes), flag byte (bit 0: gap_first set, bit 1: size column from the input),
// [gap_first 8 bytes], [size 8 bytes], body (long string).
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backend/agent/spool.h"
#include "common/utf8_text.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane::agent;

namespace {

// The spool's on-disk format (backend/agent/spool.cpp), as an older or damaged daemon left it.
constexpr const char* kSchema =
    "CREATE TABLE records (seq INTEGER PRIMARY KEY, size INTEGER NOT NULL, body BLOB NOT NULL,"
    " gap_first INTEGER);"
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE cursors (consumer TEXT PRIMARY KEY, acked_through INTEGER NOT NULL,"
    " updated_unix_ms INTEGER NOT NULL);";
constexpr const char* kMetaKeys[] = {"next_seq", "trimmed_through", "dropped_records",
                                     "incarnation"};

const std::string& spoolPath() {
    static const std::string path = [] {
        return runplane::fuzz::scratchDir("spool") + "/spool.sqlite";
    }();
    return path;
}

void removeSpool(const std::string& path) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal", ".highwater"}) {
        ::unlink((path + suffix).c_str());
    }
}

/// An in-memory database for building the raw file, kept for the whole process: each input
/// starts from a copy of the empty schema's image (sqlite3_deserialize), byte for byte what a
/// fresh database with the schema is, without opening a connection and running the CREATE
/// statements again (a third of the input's time).
sqlite3* imageBuilder() {
    static sqlite3* db = nullptr;
    static std::string schemaImage;
    if (db == nullptr) {
        if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
            sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
            std::abort();  // the fixture itself must come up
        }
        sqlite3_int64 bytes = 0;
        unsigned char* image = sqlite3_serialize(db, "main", &bytes, 0);
        if (image == nullptr) {
            std::abort();
        }
        schemaImage.assign(reinterpret_cast<const char*>(image), static_cast<std::size_t>(bytes));
        sqlite3_free(image);
    }
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(schemaImage.size()));
    if (copy == nullptr) {
        std::abort();
    }
    std::memcpy(copy, schemaImage.data(), schemaImage.size());
    const auto size = static_cast<sqlite3_int64>(schemaImage.size());
    if (sqlite3_deserialize(db, "main", copy, size, size,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) !=
        SQLITE_OK) {
        std::abort();
    }
    return db;
}

/// The fuzzer's rows in a fresh database with the spool's schema, returned as the bytes of a
/// database file in WAL mode without a -wal file: what the daemon leaves after a clean close (the
/// WAL is checkpointed into the file and removed, the header says WAL). Building it in memory and
/// writing it with one write() gives the same file as opening it with SQLite, WAL, inserting and
/// closing (127 of the 322 system calls an input made, strace -c).
std::string rawSpoolImage(runplane::fuzz::ByteReader& in) {
    sqlite3* db = imageBuilder();
    sqlite3_exec(db, "BEGIN;", nullptr, nullptr, nullptr);
    const std::uint8_t present = in.u8();
    sqlite3_stmt* put = nullptr;
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta VALUES(?1, ?2)", -1, &put, nullptr);
    for (int i = 0; i < 4; ++i) {
        const std::string value = in.shortString();
        if ((present & (1u << i)) != 0) {
            sqlite3_bind_text(put, 1, kMetaKeys[i], -1, SQLITE_STATIC);
            sqlite3_bind_text(put, 2, value.data(), static_cast<int>(value.size()),
                              SQLITE_TRANSIENT);
            sqlite3_step(put);
            sqlite3_reset(put);
        }
    }
    sqlite3_finalize(put);
    sqlite3_stmt* ins = nullptr;
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO records VALUES(?1, ?2, ?3, ?4)", -1, &ins,
                       nullptr);
    for (int n = 0; n < 64 && !in.empty(); ++n) {
        const auto seq = static_cast<sqlite3_int64>(in.u64());
        const std::uint8_t flags = in.u8();
        const auto gapFirst = (flags & 1u) != 0 ? static_cast<sqlite3_int64>(in.u64()) : 0;
        const auto size = (flags & 2u) != 0 ? static_cast<sqlite3_int64>(in.u64()) : -1;
        const std::string body = in.longString();
        sqlite3_bind_int64(ins, 1, seq);
        sqlite3_bind_int64(ins, 2, size >= 0 ? size : static_cast<sqlite3_int64>(body.size()));
        sqlite3_bind_blob(ins, 3, body.data(), static_cast<int>(body.size()), SQLITE_TRANSIENT);
        if ((flags & 1u) != 0) {
            sqlite3_bind_int64(ins, 4, gapFirst);
        } else {
            sqlite3_bind_null(ins, 4);
        }
        sqlite3_step(ins);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr);
    sqlite3_int64 bytes = 0;
    // NOCOPY: the builder's own buffer (it is a deserialized, in-memory database)
    const unsigned char* image = sqlite3_serialize(db, "main", &bytes, SQLITE_SERIALIZE_NOCOPY);
    std::string out;
    if (image != nullptr && bytes >= 100) {
        out.assign(reinterpret_cast<const char*>(image), static_cast<std::size_t>(bytes));
        out[18] = 2;  // file format write/read version 2: WAL (as PRAGMA journal_mode=WAL sets)
        out[19] = 2;
    }
    return out;
}

bool writeRawSpool(const std::string& path, runplane::fuzz::ByteReader& in) {
    const std::string image = rawSpoolImage(in);
    if (image.empty()) {
        return false;
    }
    // 0644 as SQLite creates files (SQLITE_DEFAULT_FILE_PERMISSIONS): the spool tightens it.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return false;
    }
    const bool whole =
        ::write(fd, image.data(), image.size()) == static_cast<ssize_t>(image.size());
    ::close(fd);
    return whole;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    runplane::fuzz::quietProtobuf();
    const std::string& path = spoolPath();
    removeSpool(path);
    runplane::fuzz::ByteReader in(data, size);
    if (!writeRawSpool(path, in)) {
        return 0;
    }
    SpoolOptions options;
    options.path = path;
    options.maxBytes = 64 << 10;  // small, so that append may also trigger the size bound
    auto spool = Spool::open(options);
    if (!spool.ok()) {
        return 0;
    }
    Spool& s = **spool;
    const SpoolStats stats = s.stats();
    auto records = s.read(0, 1000);
    if (records.ok() && !records->empty()) {
        (void)s.acknowledge(records->front().seq());
    }
    (void)s.read(stats.oldestKeptSeq, 10);
    // Text from a run into the spool (issue 41 item 1): the input's first bytes, whatever they
    // are, as a series name, a run id, a message and an attribute. What was appended must read
    // back (never as an unreadable-record gap), its text valid UTF-8.
    const std::string text(reinterpret_cast<const char*>(data), std::min<std::size_t>(size, 48));
    std::vector<runplane::v1::TelemetryRecord> fresh(2);
    fresh[0].mutable_sample()->set_series(text);
    fresh[0].set_run_id(text.substr(0, 16));
    fresh[1].mutable_event()->set_kind(runplane::v1::EVENT_INFO);
    fresh[1].mutable_event()->set_message(text);
    (*fresh[1].mutable_event()->mutable_attrs())[text.substr(0, 8)] = text;
    (*fresh[1].mutable_event()->mutable_attrs())[text.substr(std::min<std::size_t>(8, text.size()),
                                                             8)] = text.substr(0, 4);
    const auto last = s.append(fresh);
    if (last.ok() && *last >= 2) {
        auto back = s.read(*last - 1, 2);
        for (const auto& r : back.ok() ? *back : std::vector<runplane::v1::TelemetryRecord>{}) {
            if (r.seq() + 1 < *last || r.seq() > *last) {
                continue;  // a row of the fuzzed file (a damaged one may hold seqs past 2^63)
            }
            const auto& attrs = r.event().attrs();
            if (r.has_event() && attrs.count("why") != 0 &&
                attrs.at("why") == "unreadable_record") {
                std::abort();  // a record the spool itself wrote did not read back
            }
            if (!runplane::isValidUtf8(r.sample().series()) ||
                !runplane::isValidUtf8(r.event().message()) || !runplane::isValidUtf8(r.run_id())) {
                std::abort();
            }
        }
    }
    (void)s.acknowledge(s.lastSeq());
    return 0;  // the next input removes the files first (the scratch folder goes with the process)
}
