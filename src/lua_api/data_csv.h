/* data_csv.h -- the one RFC 4180 CSV parser of luaload.data: data.csv
 * reads a whole file through it, data.stream one record at a time. It
 * parses a span of memory into Lua values and raises with the file, line
 * and column; ll_data_csv_record_end finds where a record ends in a
 * stream's buffer (quotes may hold line breaks) without making values. */
#ifndef LL_DATA_CSV_H
#define LL_DATA_CSV_H

#include <stddef.h>

typedef struct lua_State lua_State;

typedef struct ll_data_csv {
    lua_State *L;
    const char *fn;   /* "luaload.data.csv": what errors start with */
    const char *path; /* as the script gave it, for messages */
    const char *p, *end;
    int line;               /* the line p is on (1-based) */
    const char *line_start; /* where that line starts */
    char sep;
} ll_data_csv;

/* Skips empty lines; returns 0 at the end of the input. */
int ll_data_csv_skip_empty(ll_data_csv *c);
/* Reads the header record into the list at hdr (absolute); returns its
 * length. Raises on a name given twice. */
int ll_data_csv_header(ll_data_csv *c, int hdr);
/* Pushes the record at c->p as a list of strings; returns its length.
 * ncols: a size hint (the previous record's length). */
int ll_data_csv_list_row(ll_data_csv *c, int ncols);
/* Pushes the record at c->p as { [header name] = field }; raises when its
 * length is not nhdr. */
void ll_data_csv_named_row(ll_data_csv *c, int hdr, int nhdr);

/* Where the record starting at p ends, read as the parser reads it (a
 * quote opens a quoted field only at the field's start): past its line
 * break (*lines: the line breaks in it, more than 1 when a quoted field
 * holds some), or NULL
 * when [p, end) holds no whole record yet (at the end of the input the
 * record ends at end; an unclosed quote is the parser's error to raise). */
const char *ll_data_csv_record_end(const char *p, const char *end, char sep, int *lines);

/* The separator option at idx: one character, not a quote or a line
 * break; raises naming fn otherwise. */
char ll_data_csv_separator(lua_State *L, int idx, const char *fn);

#endif
