#pragma once
// A run's diagnosis as one archive to attach to a bug report (issue #44, docs/diagnosis.md
// "Export"): a gzip-compressed tar (libarchive) with the verdict, the whole stored document,
// every node's collection split into its pieces (node JSON, stacks, NCCL RAS, kernel log lines,
// the node's output tail), the run's record and recipe, its last events and last output lines
// from the history, and a README.txt saying what each file is. No gRPC or libarchive type here.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/result.h"

namespace runplane::control {

/// One file of the archive: its path under the archive's top folder and its bytes.
struct ArchiveFile {
    std::string path;
    std::string content;
};

struct DiagnosisArchiveSource {
    std::string historyPath;
    RunId runId;
    /// The diagnosis document (toJson(RunDiagnosis) text). Empty: the stored one with
    /// `diagnosisId`, or the newest stored when that is 0.
    std::string diagnosisJson;
    std::int64_t diagnosisId = 0;
    /// Last lines of the run's stored stdout/stderr put in logs/ (each cut at kArchiveLogBytes).
    std::size_t logLines = 200;
    /// Last events of the run put in events.txt.
    std::size_t eventCount = 200;
};

/// Bytes kept of each stored output stream's tail.
inline constexpr std::size_t kArchiveLogBytes = 256u << 10;

struct DiagnosisArchiveContent {
    /// The stored diagnosis exported (a given document: the newest stored one when it has the
    /// same time, else 0).
    std::int64_t diagnosisId = 0;
    std::vector<ArchiveFile> files;  // README.txt first
};

/// The archive's files in order: independent of the archive format, so a test or another writer
/// can use them. The history is opened read-only; a history that is missing or unreadable is
/// said in README.txt instead of the run's record, recipe, events and logs.
/// Errors: no stored diagnosis of the run, a document that is not a diagnosis.
Result<DiagnosisArchiveContent> diagnosisArchiveFiles(const DiagnosisArchiveSource& source);

/// The archive's top folder (every path in it starts with it): runplane-diagnosis-RUN[-ID],
/// with characters outside [A-Za-z0-9._-] of the run id as '_'.
std::string diagnosisArchiveFolder(const RunId& runId, std::int64_t diagnosisId);

struct DiagnosisArchiveWritten {
    std::string path;
    std::string folder;
    std::vector<std::string> files;  // paths inside the folder
    std::uint64_t bytes = 0;         // the archive's size on disk
};

/// Writes `files` as FOLDER/PATH entries of a .tar.gz at outPath (through outPath.tmp, renamed
/// when complete: a failed export leaves no partial archive). Errors name the file.
Result<DiagnosisArchiveWritten> writeTarGz(const std::string& outPath, const std::string& folder,
                                           const std::vector<ArchiveFile>& files);

/// diagnosisArchiveFiles, then writeTarGz.
Result<DiagnosisArchiveWritten> exportDiagnosisArchive(const DiagnosisArchiveSource& source,
                                                       const std::string& outPath);

/// The files of a .tar.gz (or any archive libarchive reads), for checks: path and content,
/// at most maxBytes in all. Errors name the file.
Result<std::vector<ArchiveFile>> readArchive(const std::string& path,
                                             std::uint64_t maxBytes = 64u << 20);

}  // namespace runplane::control
