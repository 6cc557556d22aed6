#include <sqlite3.h>

/// Turns off SQLite's legacy rule that makes an unknown "double-quoted" identifier a string
/// literal, for DML and DDL (SQLite's docs advise it: https://sqlite.org/quirks.html#dblquote).
/// `sqlite3_db_config` is variadic, which Swift cannot call; this wrapper can be.
/// Returns SQLITE_OK, or the first error code.
static inline int dicrecord_disable_double_quoted_strings(sqlite3 *db) {
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
