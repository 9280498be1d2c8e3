/* The results store's fault-injecting VFS (BIGBATCH_FAULT's dbwrite:N and dbsync:N,
 * engine/base/fault.h): SQLite's own writes, truncates and syncs of a database, its WAL and
 * journal fail in turn, as the devsym VFS of SQLite's own tests makes them. Registered only under
 * BIGBATCH_FAULT and never as the default: other runs open with SQLite's own VFS. */
#ifndef BB_STORE_FAULT_VFS_H
#define BB_STORE_FAULT_VFS_H
#include "../engine/base/util.h"

/* Registers the VFS over the default one; call once, after sqlite3_config, before any open. */
int store_fault_vfs_install(Error *err);
/* sqlite3_open_v2's zVfs: this VFS's name once installed, else NULL (SQLite's default). */
const char *store_fault_vfs_name(void);

#endif
