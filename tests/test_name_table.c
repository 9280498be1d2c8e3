/* The one lookup over tables of named rows (engine/base/name_table.h): finding a row or its
 * index, joining the names (separators, truncation at a small buffer), skipping rows without a
 * name, and the error for an unknown name. */
#include <criterion/criterion.h>
#include <string.h>

#include "../engine/base/name_table.h"

typedef struct {
    const char *name;
    int value;
} Row;

static const Row ROWS[] = {{"alpha", 1}, {"beta", 2}, {"gamma", 3}};
static const NameTable T = NAME_TABLE(ROWS);

Test(name_table, finds_present_rows)
{
    cr_assert_eq(T.count, 3);
    const Row *r = name_table_find(T, "beta");
    cr_assert_eq(r, &ROWS[1]);
    cr_assert_eq(r->value, 2);
    cr_assert_eq(name_table_index(T, "alpha"), 0);
    cr_assert_eq(name_table_index(T, "gamma"), 2);
}

Test(name_table, absent_and_null_names)
{
    cr_assert_null(name_table_find(T, "delta"));
    cr_assert_null(name_table_find(T, "bet")); /* a prefix is not a name */
    cr_assert_null(name_table_find(T, ""));
    cr_assert_null(name_table_find(T, NULL));
    cr_assert_eq(name_table_index(T, "Alpha"), -1);
    cr_assert_eq(name_table_index(T, NULL), -1);
}

Test(name_table, joins_with_separators)
{
    char buf[64];
    cr_assert_str_eq(name_table_join(T, buf, sizeof buf, ", ", " or "), "alpha, beta or gamma");
    cr_assert_str_eq(name_table_join(T, buf, sizeof buf, " | ", " | "), "alpha | beta | gamma");
    const Row one[] = {{"solo", 0}};
    cr_assert_str_eq(name_table_join((NameTable)NAME_TABLE(one), buf, sizeof buf, ", ", " or "), "solo");
    cr_assert_str_eq(name_table_join((NameTable){ROWS, 0, sizeof ROWS[0]}, buf, sizeof buf, ", ", " or "), "");
}

Test(name_table, truncates_at_a_small_buffer)
{
    char buf[16];
    memset(buf, 'x', sizeof buf);
    cr_assert_str_eq(name_table_join(T, buf, 9, ", ", " or "), "alpha, b"); /* 8 characters and the end */
    cr_assert_eq(buf[9], 'x', "nothing written past len");
    cr_assert_str_eq(name_table_join(T, buf, 12, ", ", " or "), "alpha, beta");
    cr_assert_str_eq(name_table_join(T, buf, 1, ", ", " or "), "");
    buf[0] = 'x';
    name_table_join(T, buf, 0, ", ", " or ");
    cr_assert_eq(buf[0], 'x', "a zero-length buffer is left alone");
}

/* An array of strings is a table too; rows without a name (headings) are skipped. */
Test(name_table, strings_and_headings)
{
    static const char *const WORDS[] = {"off", NULL, "on", "rrc", NULL};
    const NameTable w = NAME_TABLE(WORDS);
    char buf[32];
    cr_assert_eq(name_table_index(w, "rrc"), 3);
    cr_assert_eq(name_table_index(w, "x"), -1);
    cr_assert_str_eq(name_table_join(w, buf, sizeof buf, ", ", " or "), "off, on or rrc");
}

Test(name_table, unknown_names_error)
{
    Error err = {{0}};
    cr_assert_eq(name_table_unknown(T, "letter", "delta", "expected ", " or ", &err), -1);
    cr_assert_str_eq(err.msg, "unknown letter 'delta' (expected alpha, beta or gamma)");
    cr_assert_eq(name_table_unknown(T, "letter", NULL, "known: ", ", ", &err), -1);
    cr_assert_str_eq(err.msg, "unknown letter '' (known: alpha, beta, gamma)");
}
