/* k8s.h -- `luaload k8s`: the Kubernetes manifests of a test split in N
 * parts (an Indexed Job, its headless Service, the script's ConfigMap, a
 * results volume and the collector that merges the parts). */
#ifndef LL_K8S_H
#define LL_K8S_H

#include "flags.h"

/* argv[0] is "k8s". Writes the manifests on stdout; returns the exit code
 * (104 for bad flags or files). */
int ll_k8s_main(int argc, char **argv);

/* Its flags, for luaload's help, completion and command reference. */
extern const ll_flag_group ll_k8s_flag_groups[1];

#endif
