/* A page filled from the dated `make bench` outputs (the .txt files of bench/results/):
 * docs/performance.md is its template (bench/performance.md.in) with each directive line
 * replaced by what it names in one of those files, so the page's numbers are the kept runs',
 * never copied by hand.
 *
 * A directive is a whole line; FILE is a file name in the bench folder, TEXT what a line of it
 * starts with (in double quotes, no quote inside):
 *   {{table FILE "TEXT"}}  the table after the first line starting with TEXT (blank lines
 *                          between skipped): a Markdown table as it is, an ASCII table (a
 *                          header, a ----+---- rule, rows split by |) as Markdown
 *   {{line FILE "TEXT"}}   that line itself
 *   {{block FILE "TEXT"}}  the lines after it, up to a blank line or the end, as a text block
 *   {{# any text}}         a comment: nothing
 * Any other line is copied as it is. */
#ifndef BB_BENCH_PAGE_H
#define BB_BENCH_PAGE_H
#include <stdio.h>

#include "../engine/base/util.h"

/* Writes the page of template `tmpl` to `out`, directives filled from the files of `bench`. 0,
 * or -1 with err naming the template's line ("tmpl:LINE: ..."); `out` then holds a part. */
int bench_page_write(const char *tmpl, const char *bench, FILE *out, Error *err);

#endif
