// libpq, PostgreSQL's C client (Debian: libpq-dev; Homebrew: libpq). Only DicRecordPostgres uses it.
#include <libpq-fe.h>
