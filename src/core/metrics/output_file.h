/* output_file.h -- a buffered file for the JSON and CSV outputs, gzip
 * compressed when its name ends in .gz. */
#ifndef LL_OUTPUT_FILE_H
#define LL_OUTPUT_FILE_H

#include <stddef.h>

typedef struct ll_outfile ll_outfile;

/* NULL with "cannot open PATH: reason" in err. */
ll_outfile *ll_output_file_open(const char *path, char *err, size_t errlen);
/* Return 0 or -1 (errors stick: later calls fail too). */
int ll_output_file_write(ll_outfile *f, const char *p, size_t n);
int ll_output_file_printf(ll_outfile *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ll_output_file_flush(ll_outfile *f);
int ll_output_file_close(ll_outfile *f);

#endif
