/* test_registry.c -- the registry's checks and groups
 * (src/core/metrics/registry.c): ids by (group, name) and by path through
 * its hash indexes, 50,000 distinct names each found again, and the
 * bounds: past max checks a new one is its group's "(other)" (folded set,
 * one per group, never more), past max groups a new one is "::(other)"; the
 * warning comes once and names the first folded, the end counts every
 * folded look-up; several threads agree on ids while folding. */
/* links: ll_metrics */
#include "metrics.h"
#include "test_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MANY = 50000 };

static void test_many(void) {
    ll_registry *reg = ll_registry_new(3);
    reg->max_checks = reg->max_groups = MANY + 10;
    char name[64], path[64];
    int seq = 1, again = 1;
    for (int i = 0; i < MANY; i++) {
        snprintf(name, sizeof(name), "id %d ok", i);
        seq &= ll_registry_check(reg, i % 2 ? "::g" : "", name, NULL) == i;
    }
    for (int i = MANY - 1; i >= 0; i--) {
        snprintf(name, sizeof(name), "id %d ok", i);
        int folded = -1;
        again &= ll_registry_check(reg, i % 2 ? "::g" : "", name, &folded) == i && folded == 0;
    }
    tu_check(seq && again && reg->nchecks == MANY && reg->check_index.used == MANY,
             "checks: 50,000 distinct names get ids 0..49999 and are found again (%d, index %zu)", reg->nchecks,
             reg->check_index.used);
    tu_check(ll_registry_check(reg, "::g", "id 0 ok", NULL) == MANY && reg->nchecks == MANY + 1,
             "checks: the same name in another group is another check");
    tu_check(ll_registry_check(reg, "a", "bc", NULL) != ll_registry_check(reg, "ab", "c", NULL),
             "checks: (a, bc) and (ab, c) are different checks");
    seq = again = 1;
    for (int i = 0; i < MANY; i++) {
        snprintf(path, sizeof(path), "::order %d", i);
        seq &= ll_registry_group(reg, path) == i;
    }
    for (int i = 0; i < MANY; i += 7) {
        snprintf(path, sizeof(path), "::order %d", i);
        again &= ll_registry_group(reg, path) == i && strcmp(ll_registry_group_path(reg, i), path) == 0;
    }
    tu_check(seq && again && reg->ngroups == MANY && reg->groups_folded == 0 && reg->checks_folded == 0,
             "groups: 50,000 distinct paths get ids in order, found again with their paths");
    ll_registry_free(reg);
}

static void test_check_bound(void) {
    ll_registry *reg = ll_registry_new(3);
    tu_check(reg->max_checks == LL_REGISTRY_MAX_CHECKS && reg->max_groups == LL_REGISTRY_MAX_GROUPS,
             "bound: the defaults are %d checks and %d groups", reg->max_checks, reg->max_groups);
    reg->max_checks = 10;
    char name[64];
    int folded = -1, seq = 1;
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "id %d ok", i);
        seq &= ll_registry_check(reg, "::g", name, &folded) == i && folded == 0;
    }
    tu_check(seq && reg->nchecks == 10, "bound: 10 checks fill it, none folded");
    tu_captured cap = tu_capture_stderr();
    int other = ll_registry_check(reg, "::g", "id 10 ok", &folded);
    tu_check(other == 10 && folded == 1 && strcmp(reg->checks[other].name, LL_REGISTRY_OTHER) == 0 &&
                 strcmp(reg->checks[other].group_path, "::g") == 0,
             "bound: the 11th is the group's \"(other)\" check, folded (%d)", other);
    int same = 1;
    for (int i = 11; i < 5000; i++) {
        snprintf(name, sizeof(name), "id %d ok", i);
        same &= ll_registry_check(reg, "::g", name, &folded) == other && folded == 1;
    }
    tu_check(same && reg->nchecks == 11, "bound: 5,000 more names all go there, still 11 checks");
    tu_check(ll_registry_check(reg, "::g", "id 3 ok", &folded) == 3 && folded == 0,
             "bound: a check made before the bound keeps its id, not folded");
    int other2 = ll_registry_check(reg, "::h", "id 1 ok", &folded);
    tu_check(other2 == 11 && folded == 1 && strcmp(reg->checks[other2].group_path, "::h") == 0 &&
                 ll_registry_check(reg, "::h", "id 2 ok", NULL) == other2 && reg->nchecks == 12,
             "bound: another group gets its own \"(other)\", one per group");
    tu_check(ll_registry_check(reg, "::g", LL_REGISTRY_OTHER, &folded) == other && folded == 0,
             "bound: the \"(other)\" check itself is found, not folded");
    tu_check(reg->checks_folded == 4992, "bound: every folded look-up counted (%lld)", (long long)reg->checks_folded);
    int warned = tu_release_stderr(cap, "more than 10 distinct checks");
    tu_check(warned == 1, "bound: one warning (%d)", warned);
    cap = tu_capture_stderr();
    ll_registry_report_folds(reg, stderr);
    int counted = tu_release_stderr(cap, "4992 check results were counted as \"(other)\" (more than 10 distinct checks)");
    tu_check(counted == 1, "bound: the end counts them");
    ll_registry_free(reg);
}

static void test_group_bound(void) {
    ll_registry *reg = ll_registry_new(3);
    reg->max_groups = 5;
    char path[64];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "::order %d", i);
        ll_registry_group(reg, path);
    }
    tu_captured cap = tu_capture_stderr();
    int other = ll_registry_group(reg, "::order 5");
    tu_check(other == 5 && strcmp(ll_registry_group_path(reg, other), "::" LL_REGISTRY_OTHER) == 0,
             "groups: the 6th is \"::(other)\" (%d: %s)", other, ll_registry_group_path(reg, other));
    int same = 1;
    for (int i = 6; i < 3000; i++) {
        snprintf(path, sizeof(path), "::(other)::step %d", i); /* nested under the folded one */
        same &= ll_registry_group(reg, path) == other;
    }
    tu_check(same && reg->ngroups == 6, "groups: 3,000 more (nested ones too) all go there, still 6 groups");
    tu_check(ll_registry_group(reg, "::order 2") == 2, "groups: a group made before keeps its id");
    ll_registry_report_folds(reg, stderr);
    int warned = tu_release_stderr(cap, "more than 5 distinct groups: the group \"::order 5\"");
    tu_check(warned == 1, "groups: one warning, naming the first folded (%d)", warned);
    tu_check(reg->groups_folded == 2995 && reg->checks_folded == 0, "groups: every folded look-up counted (%lld)",
             (long long)reg->groups_folded);
    ll_registry_free(reg);
}

enum { WORKERS = 4, NAMES = 300 };
typedef struct worker_arg {
    ll_registry *reg;
    int w;
    int ids[NAMES];
} worker_arg;

static void *worker(void *p) {
    worker_arg *a = p;
    char name[64];
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < NAMES; k++) {
            int i = a->w % 2 ? NAMES - 1 - k : k;
            snprintf(name, sizeof(name), "id %d ok", i);
            int id = ll_registry_check(a->reg, "", name, NULL);
            if (round == 0) a->ids[i] = id;
            else if (a->ids[i] != id) a->ids[i] = -2;
        }
    return NULL;
}

static void test_threads(void) {
    ll_registry *reg = ll_registry_new(3);
    reg->max_checks = 100;
    tu_captured cap = tu_capture_stderr();
    pthread_t th[WORKERS];
    worker_arg *args = calloc(WORKERS, sizeof(worker_arg));
    for (int w = 0; w < WORKERS; w++) {
        args[w] = (worker_arg){.reg = reg, .w = w};
        pthread_create(&th[w], NULL, worker, &args[w]);
    }
    for (int w = 0; w < WORKERS; w++) pthread_join(th[w], NULL);
    int warned = tu_release_stderr(cap, "distinct checks");
    int agree = 1, own = 0, other = 0;
    for (int i = 0; i < NAMES; i++) {
        for (int w = 0; w < WORKERS; w++) agree &= args[w].ids[i] == args[0].ids[i] && args[w].ids[i] >= 0;
        own += args[0].ids[i] < 100;
        other += args[0].ids[i] == 100;
    }
    tu_check(agree && own == 100 && other == 200 && reg->nchecks == 101 && warned == 1,
             "threads: 4 workers agree; 100 checks of their own, 200 folded into one, one warning");
    free(args);
    ll_registry_free(reg);
}

int main(void) {
    test_many();
    test_check_bound();
    test_group_bound();
    test_threads();
    return tu_summary();
}
