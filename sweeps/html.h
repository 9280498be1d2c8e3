/* Writing HTML: text escaped for element content and attribute values. */
#ifndef BB_HTML_H
#define BB_HTML_H
#include <stdio.h>

/* `text` with &, <, > and both quotes as character references. */
void html_escape(FILE *out, const char *text);

#endif
