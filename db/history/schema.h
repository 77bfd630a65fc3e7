#pragma once
// The history's schema as an ordered list of forward migrations (private to runplane_db).

#include <span>

#include "common/result.h"

namespace runplane::sqlite {
class Database;
}

namespace runplane::db {

/// One forward step: applying sql (then backfill, if any, in the same transaction) to a file at
/// version - 1 brings it to version.
struct Migration {
    int version;
    const char* description;
    const char* sql;
    Status (*backfill)(sqlite::Database& db) = nullptr;
};

/// Every migration, in ascending version order; the last one's version is kSchemaVersion.
std::span<const Migration> migrations();

}  // namespace runplane::db

namespace runplane::sqlite {
class Database;
}

namespace runplane::db {

/// Reads the file's version (0 for an empty file), refuses a newer one or a foreign database,
/// and applies every later migration of list, each in its own transaction. With readOnly set it
/// never writes and refuses a file that would need migrating. Errors name the file.
Result<int> applyMigrations(sqlite::Database& db, std::span<const Migration> list, bool readOnly);

}  // namespace runplane::db
