/* Raw SQLite peer (issue 21): the history's workload through the bare C API, as the floor any
 * SQLite-row store can reach. The table is the history's samples table (schema v5: WITHOUT ROWID,
 * primary key (series_id, t_ns, seq), unique index (series_id, seq)), WAL, synchronous=NORMAL,
 * one prepared INSERT, BATCH rows per transaction. The stream is the one every peer gets
 * (docs/performance.md, "Peers"): SERIES series x STEPS steps, step-major. Then every series is
 * read back in time order into memory. --no-index drops the unique index (the primary key stays).
 * Prints one "RESULT key=value ..." line for bench/peers/run.py. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double nowSeconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long long fileBytes(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

static int check(sqlite3* db, int rc, const char* what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite_peer: %s: %s\n", what, sqlite3_errmsg(db));
        return 0;
    }
    return 1;
}

static int exec(sqlite3* db, const char* sql) {
    return check(db, sqlite3_exec(db, sql, NULL, NULL, NULL), sql);
}

static sqlite3_stmt* prepare(sqlite3* db, const char* sql) {
    sqlite3_stmt* stmt = NULL;
    return check(db, sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), sql) ? stmt : NULL;
}

static long parseCount(const char* flag, const char* text) {
    char* end = NULL;
    const long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v <= 0 || v > 100000000L) {
        fprintf(stderr, "sqlite_peer: %s wants a positive integer, got '%s'\n", flag, text);
        exit(2);
    }
    return v;
}

typedef struct {
    long long tNs, step;
    double value, min, max;
} Point;

int main(int argc, char** argv) {
    long series = 32, steps = 31250, batch = 1000;
    int index = 1;
    const char* path = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--no-index") == 0) {
            index = 0;
        } else if (i + 1 < argc && strcmp(argv[i], "--series") == 0) {
            series = parseCount("--series", argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "--steps") == 0) {
            steps = parseCount("--steps", argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "--batch") == 0) {
            batch = parseCount("--batch", argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "--db") == 0) {
            path = argv[++i];
        } else {
            fprintf(stderr,
                    "sqlite_peer: unknown argument '%s'\nusage: sqlite_peer --db FILE [--series N] "
                    "[--steps N] [--batch N] [--no-index]\n",
                    argv[i]);
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(stderr, "sqlite_peer: --db FILE is required\n");
        return 2;
    }
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", path);
    remove(path);
    remove(wal);
    sqlite3* db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        fprintf(stderr, "sqlite_peer: cannot open %s: %s\n", path, sqlite3_errmsg(db));
        return 1;
    }
    if (!exec(db,
              "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
              "CREATE TABLE samples (series_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
              " seq INTEGER NOT NULL, value REAL, min REAL, max REAL,"
              " step INTEGER NOT NULL DEFAULT -1, PRIMARY KEY (series_id, t_ns, seq))"
              " WITHOUT ROWID;") ||
        (index &&
         !exec(db, "CREATE UNIQUE INDEX samples_series_seq ON samples(series_id, seq);"))) {
        return 1;
    }
    sqlite3_stmt* insert =
        prepare(db,
                "INSERT INTO samples(series_id, t_ns, seq, value, min, max, step)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7);");
    if (insert == NULL) {
        return 1;
    }
    const long long t0 = 1700000000000000000LL, dt = 100000000LL;
    const long long total = (long long)series * steps;
    const double start = nowSeconds();
    for (long long i = 0; i < total; ++i) {
        if (i % batch == 0 && !exec(db, "BEGIN;")) {
            return 1;
        }
        const long long step = i / series, key = i % series;
        const double v = 1.0 + 0.5 * sin((double)step * 1e-3 + (double)key);
        sqlite3_bind_int64(insert, 1, key + 1);
        sqlite3_bind_int64(insert, 2, t0 + step * dt);
        sqlite3_bind_int64(insert, 3, i + 1);
        sqlite3_bind_double(insert, 4, v);
        sqlite3_bind_double(insert, 5, v);
        sqlite3_bind_double(insert, 6, v);
        sqlite3_bind_int64(insert, 7, step);
        if (!check(db, sqlite3_step(insert), "insert")) {
            return 1;
        }
        sqlite3_reset(insert);
        if ((i + 1) % batch == 0 || i + 1 == total) {
            if (!exec(db, "COMMIT;")) {
                return 1;
            }
        }
    }
    const double ingestS = nowSeconds() - start;
    sqlite3_finalize(insert);

    sqlite3_stmt* select = prepare(db,
                                   "SELECT t_ns, value, min, max, step FROM samples"
                                   " WHERE series_id = ?1 ORDER BY t_ns;");
    if (select == NULL) {
        return 1;
    }
    Point* points = malloc(sizeof(Point) * (size_t)total);
    if (points == NULL) {
        fprintf(stderr, "sqlite_peer: out of memory for %lld points\n", total);
        return 1;
    }
    long long read = 0;
    const double readStart = nowSeconds();
    for (long key = 1; key <= series; ++key) {
        sqlite3_bind_int64(select, 1, key);
        int rc;
        while ((rc = sqlite3_step(select)) == SQLITE_ROW && read < total) {
            points[read].tNs = sqlite3_column_int64(select, 0);
            points[read].value = sqlite3_column_double(select, 1);
            points[read].min = sqlite3_column_double(select, 2);
            points[read].max = sqlite3_column_double(select, 3);
            points[read].step = sqlite3_column_int64(select, 4);
            ++read;
        }
        if (!check(db, rc, "select")) {
            return 1;
        }
        sqlite3_reset(select);
    }
    const double readS = nowSeconds() - readStart;
    sqlite3_finalize(select);
    free(points);
    sqlite3_close(db); /* the last connection checkpoints and removes the WAL */
    const long long bytes = fileBytes(path) + fileBytes(wal);
    printf(
        "RESULT peer=%s samples=%lld ingest_s=%.4f ingest_per_s=%.0f bytes=%lld "
        "bytes_per_sample=%.2f read_points=%lld read_s=%.4f read_per_s=%.0f\n",
        index ? "sqlite_c" : "sqlite_c_noindex", total, ingestS, (double)total / ingestS, bytes,
        (double)bytes / (double)total, read, readS, (double)read / readS);
    remove(path);
    return read == total ? 0 : 1;
}
