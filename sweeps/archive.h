/* The archived results (results/archive/<experiment>.sql.gz, written by sweeps/archive.sh):
 * a gzip'd SQL dump of one results database, read back into a database file. */
#ifndef BB_ARCHIVE_H
#define BB_ARCHIVE_H
#include "../engine/base/util.h"

/* Creates the database `db` (which must not exist) from the dump `sql_gz`. 0, or -1 with err
 * naming the file; a failed load leaves no `db` behind. */
int archive_restore(const char *sql_gz, const char *db, Error *err);

#endif
