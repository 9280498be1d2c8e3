/* The lookup and the list of names over any table of named rows (name_table.h). */
#include "name_table.h"

#include <stdio.h>
#include <string.h>

static const char *name_at(NameTable t, int i)
{
    return *(const char *const *)((const char *)t.rows + (size_t)i * t.stride);
}

int name_table_index(NameTable t, const char *name)
{
    for (int i = 0; name && i < t.count; i++)
        if (name_at(t, i) && strcmp(name_at(t, i), name) == 0) return i;
    return -1;
}

const void *name_table_find(NameTable t, const char *name)
{
    int i = name_table_index(t, name);
    return i < 0 ? NULL : (const char *)t.rows + (size_t)i * t.stride;
}

char *name_table_join(NameTable t, char *buf, size_t len, const char *sep, const char *last_sep)
{
    int last = t.count - 1, first = 1;
    while (last >= 0 && !name_at(t, last)) last--;
    size_t used = 0;
    if (len) buf[0] = 0;
    for (int i = 0; i <= last && used < len; i++) {
        if (!name_at(t, i)) continue;
        const char *before = first ? "" : i == last ? last_sep : sep;
        int w = snprintf(buf + used, len - used, "%s%s", before, name_at(t, i));
        if (w < 0) break;
        used += (size_t)w;
        first = 0;
    }
    return buf;
}

int name_table_unknown(NameTable t, const char *what, const char *name, const char *lead, const char *last_sep,
                       Error *err)
{
    char names[sizeof err->msg];
    error_set(err, "unknown %s '%s' (%s%s)", what, name ? name : "", lead,
              name_table_join(t, names, sizeof names, ", ", last_sep));
    return -1;
}
