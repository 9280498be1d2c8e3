/* A VFS over SQLite's default one that forwards every call, checking the fault counter
 * (engine/base/fault.h) before each xWrite, xTruncate and xSync (store_fault_vfs.h). */
#include "store_fault_vfs.h"

#include <sqlite3.h>

#include "../engine/base/fault.h"

static const char NAME[] = "bigbatch-faults";

/* An open file: ours, which SQLite sees, and right after it the default VFS's, in the one
 * block of szOsFile bytes SQLite allocates. */
typedef struct {
    sqlite3_file base;
    sqlite3_file *real;
} FaultFile;

static sqlite3_file *real(sqlite3_file *f) { return ((FaultFile *)f)->real; }

static int f_close(sqlite3_file *f) { return real(f)->pMethods->xClose(real(f)); }
static int f_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    return real(f)->pMethods->xRead(real(f), buf, n, off);
}
static int f_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    if (fault_should_fail(FAULT_DBWRITE)) return SQLITE_IOERR_WRITE;
    return real(f)->pMethods->xWrite(real(f), buf, n, off);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    if (fault_should_fail(FAULT_DBWRITE)) return SQLITE_IOERR_TRUNCATE;
    return real(f)->pMethods->xTruncate(real(f), size);
}
static int f_sync(sqlite3_file *f, int flags)
{
    if (fault_should_fail(FAULT_DBSYNC)) return SQLITE_IOERR_FSYNC;
    return real(f)->pMethods->xSync(real(f), flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *size) { return real(f)->pMethods->xFileSize(real(f), size); }
static int f_lock(sqlite3_file *f, int lock) { return real(f)->pMethods->xLock(real(f), lock); }
static int f_unlock(sqlite3_file *f, int lock) { return real(f)->pMethods->xUnlock(real(f), lock); }
static int f_reserved(sqlite3_file *f, int *out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); }
static int f_control(sqlite3_file *f, int op, void *arg) { return real(f)->pMethods->xFileControl(real(f), op, arg); }
static int f_sector(sqlite3_file *f) { return real(f)->pMethods->xSectorSize(real(f)); }
static int f_device(sqlite3_file *f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
/* version 2: the WAL's shared memory */
static int f_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
    return real(f)->pMethods->xShmMap(real(f), page, size, extend, out);
}
static int f_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return real(f)->pMethods->xShmLock(real(f), off, n, flags);
}
static void f_shm_barrier(sqlite3_file *f) { real(f)->pMethods->xShmBarrier(real(f)); }
static int f_shm_unmap(sqlite3_file *f, int del) { return real(f)->pMethods->xShmUnmap(real(f), del); }
/* version 3: memory-mapped reads */
static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
    return real(f)->pMethods->xFetch(real(f), off, n, out);
}
static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return real(f)->pMethods->xUnfetch(real(f), off, p);
}

/* One table per version the default VFS's files may report: SQLite calls no method past a
 * file's iVersion, so each file gets the table of its real file's version. */
#define IO_METHODS(v)                                                                              \
    {v, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_reserved,        \
     f_control, f_sector, f_device, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, f_fetch,    \
     f_unfetch}
static const sqlite3_io_methods IO[3] = {IO_METHODS(1), IO_METHODS(2), IO_METHODS(3)};

/* SQLite's registration keeps a pointer to the VFS for the life of the process, so it must be
 * static: the one piece of state here. pAppData holds the default VFS; all zero (zName NULL)
 * until store_fault_vfs_install registers it. */
static sqlite3_vfs vfs;

static sqlite3_vfs *under(sqlite3_vfs *v) { return v->pAppData; }

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    FaultFile *ff = (FaultFile *)f;
    ff->real = (sqlite3_file *)(ff + 1);
    ff->real->pMethods = NULL;
    int rc = under(v)->xOpen(under(v), name, ff->real, flags, out_flags);
    /* SQLite closes a file whose open failed when pMethods is set, so mirror the real one */
    const sqlite3_io_methods *m = ff->real->pMethods;
    int version = !m ? 0 : m->iVersion < 1 ? 1 : m->iVersion > 3 ? 3 : m->iVersion;
    ff->base.pMethods = m ? &IO[version - 1] : NULL;
    return rc;
}
static int v_delete(sqlite3_vfs *v, const char *name, int sync_dir)
{
    return under(v)->xDelete(under(v), name, sync_dir);
}
static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    return under(v)->xAccess(under(v), name, flags, out);
}
static int v_full(sqlite3_vfs *v, const char *name, int n, char *out)
{
    return under(v)->xFullPathname(under(v), name, n, out);
}
static void *v_dlopen(sqlite3_vfs *v, const char *name) { return under(v)->xDlOpen(under(v), name); }
static void v_dlerror(sqlite3_vfs *v, int n, char *msg) { under(v)->xDlError(under(v), n, msg); }
static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    return under(v)->xDlSym(under(v), h, sym);
}
static void v_dlclose(sqlite3_vfs *v, void *h) { under(v)->xDlClose(under(v), h); }
static int v_random(sqlite3_vfs *v, int n, char *out) { return under(v)->xRandomness(under(v), n, out); }
static int v_sleep(sqlite3_vfs *v, int us) { return under(v)->xSleep(under(v), us); }
static int v_time(sqlite3_vfs *v, double *out) { return under(v)->xCurrentTime(under(v), out); }
static int v_last_error(sqlite3_vfs *v, int n, char *out) { return under(v)->xGetLastError(under(v), n, out); }
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out) { return under(v)->xCurrentTimeInt64(under(v), out); }

int store_fault_vfs_install(Error *err)
{
    sqlite3_vfs *def = sqlite3_vfs_find(NULL);
    if (!def) {
        error_set(err, "BIGBATCH_FAULT: SQLite has no default VFS to wrap");
        return -1;
    }
    /* version 2 at most: version 3 adds only the system-call overrides of SQLite's own tests */
    vfs = (sqlite3_vfs){def->iVersion >= 2 ? 2 : 1, (int)sizeof(FaultFile) + def->szOsFile, def->mxPathname,
                        NULL, NAME, def, v_open, v_delete, v_access, v_full, v_dlopen, v_dlerror, v_dlsym,
                        v_dlclose, v_random, v_sleep, v_time, v_last_error, v_time64, NULL, NULL, NULL};
    int rc = sqlite3_vfs_register(&vfs, 0);
    if (rc != SQLITE_OK) {
        vfs = (sqlite3_vfs){0};
        error_set(err, "BIGBATCH_FAULT: cannot register the fault VFS: %s", sqlite3_errstr(rc));
        return -1;
    }
    return 0;
}

const char *store_fault_vfs_name(void) { return vfs.zName; }
