/* output_file.h -- a buffered file for the JSON and CSV outputs, gzip
 * compressed when its name ends in .gz. */
#ifndef LL_OUTPUT_FILE_H
#define LL_OUTPUT_FILE_H

#include <stddef.h>

typedef struct ll_outfile ll_outfile;

/* NULL with "cannot open PATH: reason" in err. */
ll_outfile *ll_output_file_open(const char *path, char *err, size_t errlen);
/* Return 0 or -1 (errors stick: later calls fail too, and close reports
 * the first). */
int ll_output_file_write(ll_outfile *f, const char *p, size_t n);
int ll_output_file_printf(ll_outfile *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ll_output_file_flush(ll_outfile *f);
/* Flushes, closes (gzip's trailer too) and frees: 0, or -1 when anything
 * failed, from the first write to the close, with why in why. */
int ll_output_file_close(ll_outfile *f, char *why, size_t len);
/* Why the first failure failed ("No space left on device"). */
const char *ll_output_file_error(const ll_outfile *f);
/* The sinks' one message for a failed file: "write failed: WHY; ...". */
void ll_output_file_failed(char *err, size_t len, const char *why);

#endif
