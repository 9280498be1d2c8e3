/* The canonical form of a run's settings and its id (run_config.h). */
#include "run_config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags/train_flags.h"

uint64_t fnv1a64(const char *s) { return fnv1a64_bytes(FNV1A64_START, s, strlen(s)); }

void run_config_id(const char *config_json, char id[17])
{
    snprintf(id, 17, "%016llx", (unsigned long long)fnv1a64(config_json));
}

bool run_config_number(const char *s, double *out)
{
    if (!*s || strspn(s, "0123456789+-.eE") != strlen(s)) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v)) return false;
    *out = v;
    return true;
}

char *run_config_value(const char *s)
{
    char buf[64];
    const char *p = s + (*s == '+' || *s == '-');
    double v;
    if (*p && strspn(p, "0123456789") == strlen(p)) {
        errno = 0;
        long long i = strtoll(s, NULL, 10);
        if (errno) return xstrdup(s);
        snprintf(buf, sizeof buf, "%lld", i);
    } else if (run_config_number(s, &v)) {
        snprintf(buf, sizeof buf, "%.10g", v);
    } else {
        return xstrdup(s);
    }
    return xstrdup(buf);
}

bool run_config_is_execution_detail(const char *flag)
{
    static const char *const names[] = {"db",   "run-id",     "record-stream", "threads",   "quiet",
                                        "save", "save-every", "resume",        "bucket-mb", "plain-allreduce",
                                        "device",  "loader-threads", "cuda-graph"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(flag, names[i])) return true;
    return false;
}

static int cmp_item_names(const void *a, const void *b)
{
    return strcmp((*(cJSON *const *)a)->string, (*(cJSON *const *)b)->string);
}

char *run_config_from_argv(int argc, char **argv, Error *err)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj) {
        error_set(err, "out of memory");
        return NULL;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) continue; /* values are taken with their flag */
        char name[64];
        const char *value = NULL, *eq = strchr(a + 2, '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - (a + 2) : (long)strlen(a + 2)), a + 2);
        int takes = train_flag_takes_value(name);
        if (takes < 0) continue; /* train_flags_parse already rejected unknown flags */
        if (takes == 1) value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : "");
        else value = "true";
        if (run_config_is_execution_detail(name)) continue;
        char *norm = run_config_value(value);
        cJSON_DeleteItemFromObjectCaseSensitive(obj, name); /* the last occurrence wins, as in getopt */
        cJSON *added = cJSON_AddStringToObject(obj, name, norm);
        free(norm);
        if (!added) {
            cJSON_Delete(obj);
            error_set(err, "out of memory");
            return NULL;
        }
    }
    /* Sorted keys: the same settings in any order hash alike. */
    int n = cJSON_GetArraySize(obj);
    cJSON **items = xcalloc((size_t)n + 1, sizeof *items, "config items");
    int k = 0;
    for (cJSON *it = obj->child; it; it = it->next) items[k++] = it;
    qsort(items, (size_t)n, sizeof *items, cmp_item_names);
    cJSON *sorted = cJSON_CreateObject();
    bool ok = sorted != NULL;
    for (int i = 0; ok && i < n; i++) ok = cJSON_AddStringToObject(sorted, items[i]->string, items[i]->valuestring);
    char *text = ok ? cJSON_PrintUnformatted(sorted) : NULL;
    free(items);
    cJSON_Delete(obj);
    cJSON_Delete(sorted);
    if (!text) error_set(err, "out of memory");
    return text;
}

char *run_config_command(const char *prefix, int argc, char *const *argv)
{
    size_t len = (prefix ? strlen(prefix) : 0) + 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 3;
    char *s = xmalloc(len, "command line");
    size_t used = (size_t)snprintf(s, len, "%s", prefix ? prefix : "");
    for (int i = 0; i < argc; i++)
        used += (size_t)snprintf(s + used, len - used, strchr(argv[i], ' ') ? "%s'%s'" : "%s%s",
                                 used ? " " : "", argv[i]);
    return s;
}
