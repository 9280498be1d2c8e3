/* Restoring an archived results database: zlib reads the dump, SQLite runs it. */
#include "archive.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "store_fault_vfs.h"

/* The whole decompressed dump as one string (NULL with err). */
static char *read_dump(const char *sql_gz, Error *err)
{
    errno = 0;
    gzFile f = gzopen(sql_gz, "rb");
    if (!f) {
        error_set(err, "%s: cannot open: %s", sql_gz, errno ? strerror(errno) : "zlib out of memory");
        return NULL;
    }
    size_t len = 0, cap = 1 << 20;
    char *text = xmalloc(cap, "archive text");
    for (;;) {
        if (cap - len < (1 << 16)) text = xrealloc(text, cap *= 2, "archive text");
        int got = gzread(f, text + len, (unsigned)(cap - len - 1));
        if (got < 0) {
            int code;
            const char *msg = gzerror(f, &code);
            error_set(err, "%s: not a readable gzip file (%s)", sql_gz, msg && *msg ? msg : "zlib error");
            gzclose(f);
            free(text);
            return NULL;
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    gzclose(f);
    text[len] = 0;
    if (memchr(text, 0, len)) {
        error_set(err, "%s: not an SQL dump (contains a NUL byte)", sql_gz);
        free(text);
        return NULL;
    }
    return text;
}

int archive_restore(const char *sql_gz, const char *db, Error *err)
{
    if (access(db, F_OK) == 0) {
        error_set(err, "%s: already exists (an archive is restored into a new database)", db);
        return -1;
    }
    char *text = read_dump(sql_gz, err);
    if (!text) return -1;
    sqlite3 *h = NULL;
    char *msg = NULL;
    int rc = sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, store_fault_vfs_name());
    if (rc == SQLITE_OK) rc = sqlite3_exec(h, text, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        error_set(err, "%s: %s", rc == SQLITE_CANTOPEN ? db : sql_gz,
                  msg ? msg : h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    sqlite3_free(msg);
    if (sqlite3_close(h) != SQLITE_OK && rc == SQLITE_OK) {
        error_set(err, "%s: cannot close", db);
        rc = SQLITE_ERROR;
    }
    free(text);
    if (rc != SQLITE_OK) {
        unlink(db);
        return -1;
    }
    return 0;
}
