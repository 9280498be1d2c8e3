/* Unpacks a dataset tarball (e.g. $BIGBATCH_CIFAR10_TAR, cifar10-jpeg.tar.gz) into place on
 * first use. The system tar does the work (spawned directly, no shell, so odd path
 * names are harmless). It unpacks into a fresh temporary folder beside the target and
 * the result is renamed into place, so an interrupted unpack never leaves a
 * half-filled dataset folder behind, and two runs unpacking at once do not clash. */
#include "data.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char *xasprintf2(const char *fmt, const char *a, const char *b)
{
    char *p;
    if (asprintf(&p, fmt, a, b) < 0) {
        fprintf(stderr, "bigbatch: out of memory building a path\n");
        exit(3);
    }
    return p;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A folder itself, not a symbolic link to one: what a tarball unpacks must not point the
 * dataset (and the caches written beside it) somewhere else. */
static bool is_real_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p */
static int make_dirs(const char *path, Error *err)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1; rc == 0; s++) {
        if (*s != '/' && *s != '\0') continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            error_set(err, "%s: cannot create folder: %s", p, strerror(errno));
            rc = -1;
        } else if (!is_dir(p)) {
            error_set(err, "%s: exists and is not a folder", p);
            rc = -1;
        }
        *s = saved;
        if (saved == '\0') break;
    }
    free(p);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

/* rm -rf of a folder this code created; failures are harmless leftovers. */
static void remove_tree(const char *path)
{
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        /* nothing more to do: a stray temporary folder is left for the user */
    }
}

static int run_tar(const char *tarball, const char *into, Error *err)
{
    char *argv[] = {"tar", "-xzf", (char *)tarball, "-C", (char *)into, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "tar", NULL, NULL, argv, environ);
    if (rc != 0) {
        error_set(err, "cannot run tar to unpack %s: %s", tarball, strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            error_set(err, "waiting for tar unpacking %s: %s", tarball, strerror(errno));
            return -1;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        error_set(err, "%s: tar failed to unpack it (exit status %d)", tarball,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return 0;
}

/* The unpacked dataset folder inside tmp: tmp itself when it holds train/, else its
 * only subfolder when that holds train/ (the tarball's top folder). Symbolic links do not
 * count as folders. */
static char *find_unpacked(const char *tmp)
{
    char *train = xasprintf2("%s/%s", tmp, "train");
    bool here = is_real_dir(train);
    free(train);
    if (here) return xstrdup(tmp);
    DIR *d = opendir(tmp);
    if (!d) return NULL;
    char *found = NULL;
    int subdirs = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *p = xasprintf2("%s/%s", tmp, e->d_name);
        if (is_real_dir(p)) {
            subdirs++;
            free(found);
            found = p;
        } else {
            free(p);
        }
    }
    closedir(d);
    if (subdirs != 1) {
        free(found);
        return NULL;
    }
    train = xasprintf2("%s/%s", found, "train");
    here = is_real_dir(train);
    free(train);
    if (!here) {
        free(found);
        return NULL;
    }
    return found;
}

int unpack_tarball(const char *tarball, const char *root, bool quiet, Error *err)
{
    if (access(tarball, R_OK) != 0) {
        error_set(err, "%s: %s", tarball, strerror(errno));
        return -1;
    }
    char *copy = xstrdup(root);
    char *parent = xstrdup(dirname(copy));
    free(copy);
    copy = xstrdup(root);
    char *base = xstrdup(basename(copy));
    free(copy);
    int rc = make_dirs(parent, err);
    char *tmp = xasprintf2("%s/.%s.unpack.XXXXXX", parent, base);
    if (rc == 0 && !mkdtemp(tmp)) {
        error_set(err, "%s: cannot create a temporary folder: %s", parent, strerror(errno));
        rc = -1;
    }
    bool made_tmp = rc == 0;
    if (rc == 0 && !quiet) fprintf(stderr, "unpacking %s into %s ...\n", tarball, root);
    if (rc == 0) rc = run_tar(tarball, tmp, err);
    char *src = NULL;
    if (rc == 0 && !(src = find_unpacked(tmp))) {
        error_set(err, "%s: does not contain a dataset folder with train/ in it", tarball);
        rc = -1;
    }
    if (rc == 0 && rename(src, root) != 0) {
        int e = errno;
        char *train = xasprintf2("%s/%s", root, "train");
        bool done = is_dir(train); /* another run unpacked it first */
        free(train);
        if (!done) {
            error_set(err, "%s: cannot move the unpacked %s there: %s", root, tarball, strerror(e));
            rc = -1;
        }
    }
    if (made_tmp) remove_tree(tmp); /* no-op when src was tmp itself and got renamed */
    free(src);
    free(tmp);
    free(parent);
    free(base);
    return rc;
}
