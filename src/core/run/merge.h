/* merge.h -- `luaload merge`: the parts of a split test (--out hdrlog)
 * added up into one summary, judged by the thresholds. */
#ifndef LL_MERGE_H
#define LL_MERGE_H

/* argv[0] is "merge". Returns the process exit code: 0, 99 when a
 * threshold fails on the merged data, 104 when the parts are refused. */
int ll_merge_main(int argc, char **argv);

#endif
