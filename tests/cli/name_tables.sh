# One lookup serves every table of names (engine/base/name_table.h): models, data sets,
# optimizers, figures, devices, precisions, commands, flags ... each keep their table, and no
# other file walks one comparing its rows' names itself (issue 56: find, names and check were
# written four times). The rule: outside name_table.c, no strcmp (strncmp, strcasecmp) reads a
# static table's row name, TABLE[i].name (tables are the capitalised arrays), nor the helper's
# own name_at. Then the checker is run on copies with a copy planted, each of which it must catch.
. tests/cli/lib.inc

# copies ROOT: prints file:line: text for each copy of the lookup under ROOT; exit 1 if any.
copies() {
    (cd "$1" || exit 1
        find engine sweeps cli -name '*.[ch]' ! -path engine/base/name_table.c | sort |
            xargs grep -nE 'str(n|case|ncase)?cmp[[:space:]]*\(.*([A-Z][A-Z0-9_]*[[:space:]]*\[[^]]*\][[:space:]]*\.[[:space:]]*name\b|name_at[[:space:]]*\()' |
            sed 's/$/  <- a second copy of the name-table lookup: use name_table_find (engine\/base\/name_table.h)/' |
            grep . && exit 1
        exit 0)
}

copies . >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "a table of names is searched by hand"; }
[ -s "$TMP/out" ] && { cat "$TMP/out"; fail "the checker printed something on a clean tree"; }

plant() { # plant WHAT FILE LINE MESSAGE: LINE added to FILE in a copy must fail with MESSAGE
    rm -rf "$TMP/copy" && mkdir "$TMP/copy" && cp -r engine sweeps cli "$TMP/copy/" &&
        printf '%s\n' "$3" >>"$TMP/copy/$2" || fail "cannot copy the tree"
    if copies "$TMP/copy" >"$TMP/out" 2>&1; then cat "$TMP/out"; fail "missed $1"; fi
    expect_output "$4"
}
# the four copies issue 56 found were this loop (models.c's, before the helper)
plant "models.c's own find" engine/net/models.c \
    'static const ModelInfo *find2(const char *name) { for (int i = 0; name && i < N_MODELS; i++) if (strcmp(MODELS[i].name, name) == 0) return &MODELS[i]; return NULL; }' \
    'engine/net/models.c:.*a second copy of the name-table lookup'
plant "a lookup with the name second" engine/backend.c \
    'static int p2(const char *p) { for (int i = 0; i < 4; i++) if (!strcmp(p, PRECISIONS[i].name)) return i; return -1; }' \
    'engine/backend.c:.*a second copy'
plant "a while loop over a table" sweeps/run_stream.c \
    'static size_t r2(const char *k) { size_t i = 0; while (i < 7 && strcmp(RECORDS[i].name, k)) i++; return i; }' \
    'sweeps/run_stream.c:.*a second copy'
plant "the helper copied" cli/main.c \
    'static int f2(NameTable t, const char *n) { for (int i = 0; i < t.count; i++) if (!strcmp(name_at(t, i), n)) return i; return -1; }' \
    'cli/main.c:.*a second copy'
rm -rf "$TMP/copy"
