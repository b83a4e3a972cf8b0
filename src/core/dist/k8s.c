/* k8s.c -- `luaload k8s SCRIPT.lua --instances N [--image IMG] [-- RUN FLAGS]`:
 * the Kubernetes manifests that run a test split in N parts, as one JSON
 * List for `kubectl apply -f -`.
 *
 * Owns: the manifests and the shell steps inside them.
 *   - ConfigMap NAME-script: the script and the --file libraries beside it.
 *   - Service NAME (headless): a DNS name per part for the status API.
 *   - PersistentVolumeClaim NAME-results: setup.json, the parts' hdrlogs,
 *     the merged summary.
 *   - Job NAME-parts, completionMode Indexed, parallelism = completions = N:
 *     part i+1 of N (JOB_COMPLETION_INDEX = i) starts --paused, takes
 *     setup()'s result from the volume, writes --out hdrlog there; only the
 *     first runs teardown().
 *   - Job NAME-collect: its init container runs setup() once and releases
 *     the paused parts together (k6's PATCH /v1/status); its container waits
 *     for the N parts and runs `luaload merge`: the Job fails when a
 *     threshold of the whole test fails.
 * The steps read their places from the environment (SCRIPTS, RESULTS,
 * API_ADDR, PART_HOSTS) so that they run the same outside a cluster. */
#include "k8s.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "duration.h"
#include "exit.h"
#include "xmalloc.h"

#define API_PORT 6565
#define CONFIGMAP_MAX (1000 * 1000) /* Kubernetes refuses ConfigMaps over 1 MiB */

typedef struct k8s_opts {
    const char *script;
    const char *image, *name, *access_mode, *storage;
    const char **files;
    int nfiles;
    char **extra; /* after --: flags for every luaload run */
    int nextra;
    int64_t instances;
    uint64_t timeout_us;
} k8s_opts;

static const ll_flag K8S_FLAGS[] = {
    {"-n", "--instances", NULL, "N", NULL, "the number of parts (pods), 1 to 1000"},
    {NULL, "--image", NULL, "IMG", NULL, "the luaload image (default luaload:" LUALOAD_VERSION ")"},
    {NULL, "--name", NULL, "NAME", NULL, "the prefix of every object's name (default luaload)"},
    {NULL, "--file", NULL, "F", "@file",
     "a file the script needs (require, open), beside it or under its directory (repeatable)"},
    {NULL, "--storage", NULL, "SIZE", NULL, "the results volume's size (default 1Gi)"},
    {NULL, "--access-mode", NULL, "M", "ReadWriteMany ReadWriteOnce ReadWriteOncePod",
     "its access mode (default ReadWriteMany; ReadWriteOnce on a single-node cluster)"},
    {NULL, "--timeout", NULL, "D", NULL,
     "the longest the parts may take, paused or running (default 1h): the Jobs' activeDeadlineSeconds"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};

const ll_flag_group ll_k8s_flag_groups[1] = {{NULL, K8S_FLAGS, (int)(sizeof(K8S_FLAGS) / sizeof(K8S_FLAGS[0]))}};

static void usage(FILE *f) {
    fputs("usage: luaload k8s SCRIPT.lua --instances N [flags] [-- RUN FLAGS]\n"
          "writes the Kubernetes manifests (a JSON List, for kubectl apply -f -) that run\n"
          "SCRIPT.lua split in N parts and merge their results; see docs/distributed.md\n",
          f);
    ll_flag_usage(f, ll_k8s_flag_groups, 1);
    fputs("  -- RUN FLAGS              flags for every part's luaload run, e.g. -- -e BASE=http://svc\n", f);
}

static int bad(const char *flag, const char *v, const char *want) {
    fprintf(stderr, "luaload: k8s: invalid %s '%s' (expected %s)\n", flag, v, want);
    return LL_EXIT_CONFIG;
}

/* A DNS-1035 label of at most 40 bytes (room for the suffixes). */
static int valid_name(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 40 || s[0] < 'a' || s[0] > 'z' || s[n - 1] == '-') return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) return 0;
    return 1;
}

static int parse_args(int argc, char **argv, k8s_opts *o) {
    memset(o, 0, sizeof(*o));
    o->image = "luaload:" LUALOAD_VERSION;
    o->name = "luaload";
    o->access_mode = "ReadWriteMany";
    o->storage = "1Gi";
    o->timeout_us = 3600ull * 1000000;
    o->files = ll_xcalloc((size_t)argc, sizeof(*o->files));
    for (int i = 1; i < argc; i++) {
        char flag[64];
        const char *eqv = argv[i][0] == '-' ? ll_flag_split(argv[i], flag, sizeof(flag)) : NULL;
        const char *a = eqv ? flag : argv[i], *v = eqv ? eqv : i + 1 < argc ? argv[i + 1] : NULL;
        const ll_flag *known = ll_flag_find(ll_k8s_flag_groups, 1, a);
        int takes = known && known->arg;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        }
        if (strcmp(a, "--") == 0) {
            o->extra = argv + i + 1;
            o->nextra = argc - i - 1;
            break;
        }
        if (takes && !v) {
            fprintf(stderr, "luaload: k8s: flag %s needs a value\n", a);
            return LL_EXIT_CONFIG;
        }
        if (takes && !eqv) i++;
        char *end = NULL;
        if (strcmp(a, "-n") == 0 || strcmp(a, "--instances") == 0) {
            errno = 0;
            long long n = strtoll(v, &end, 10);
            if (errno || !*v || *end || n < 1 || n > 1000) return bad(a, v, "a number of parts from 1 to 1000");
            o->instances = n;
        } else if (strcmp(a, "--image") == 0) {
            if (!*v || strpbrk(v, " \t\n\"'")) return bad(a, v, "an image reference such as registry/luaload:tag");
            o->image = v;
        } else if (strcmp(a, "--name") == 0) {
            if (!valid_name(v)) return bad(a, v, "lowercase letters, digits and '-', from a letter, 40 at most");
            o->name = v;
        } else if (strcmp(a, "--file") == 0) {
            o->files[o->nfiles++] = v;
        } else if (strcmp(a, "--storage") == 0) {
            if (!*v || strspn(v, "0123456789") == 0 || strpbrk(v, " \t\n\"'")) return bad(a, v, "a size such as 1Gi");
            o->storage = v;
        } else if (strcmp(a, "--access-mode") == 0) {
            if (strcmp(v, "ReadWriteMany") && strcmp(v, "ReadWriteOnce") && strcmp(v, "ReadWriteOncePod"))
                return bad(a, v, "ReadWriteMany, ReadWriteOnce or ReadWriteOncePod");
            o->access_mode = v;
        } else if (strcmp(a, "--timeout") == 0) {
            if (ll_duration_parse(v, &o->timeout_us) != 0 || o->timeout_us < 1000000)
                return bad(a, v, "a duration of 1s or more, such as 2h");
        } else if (a[0] == '-' && a[1]) {
            char hint[96];
            fprintf(stderr, "luaload: k8s: unknown flag %s%s (see luaload k8s --help; run flags go after --)\n", a,
                    ll_flag_hint(hint, sizeof(hint), ll_k8s_flag_groups, 1, a));
            return LL_EXIT_CONFIG;
        } else if (o->script) {
            fprintf(stderr, "luaload: k8s: more than one script given: '%s'\n", a);
            return LL_EXIT_CONFIG;
        } else {
            o->script = a;
        }
    }
    if (!o->script || !o->instances) {
        fprintf(stderr, "luaload: k8s: expected a script and --instances N (luaload k8s script.lua --instances 4)\n");
        return LL_EXIT_CONFIG;
    }
    size_t n = strlen(o->script);
    if (n < 5 || strcmp(o->script + n - 4, ".lua") != 0) { /* what luaload merge takes for the script */
        fprintf(stderr, "luaload: k8s: the script's name must end in .lua: %s\n", o->script);
        return LL_EXIT_CONFIG;
    }
    return 0;
}

/* ---- shell text ---- */

/* s single-quoted for sh. */
static void sh_quote(ll_buf *b, const char *s) {
    ll_buf_puts(b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'') ll_buf_puts(b, "'\\''");
        else ll_buf_append(b, p, 1);
    }
    ll_buf_puts(b, "'");
}

/* The run flags after --, quoted, each after a space. */
static void sh_extra(ll_buf *b, const k8s_opts *o) {
    for (int i = 0; i < o->nextra; i++) {
        ll_buf_puts(b, " ");
        sh_quote(b, o->extra[i]);
    }
}

/* Just the -e/--env pairs of the run flags, for merge (the script's init
 * code and handle_summary see the same __ENV). */
static void sh_env_only(ll_buf *b, const k8s_opts *o) {
    for (int i = 0; i < o->nextra; i++) {
        const char *a = o->extra[i];
        if ((strcmp(a, "-e") == 0 || strcmp(a, "--env") == 0) && i + 1 < o->nextra) {
            ll_buf_puts(b, " -e ");
            sh_quote(b, o->extra[++i]);
        } else if (strncmp(a, "--env=", 6) == 0) {
            ll_buf_puts(b, " ");
            sh_quote(b, a);
        }
    }
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static char *part_step(const k8s_opts *o) {
    ll_buf b = {0};
    char n[32];
    snprintf(n, sizeof(n), "%lld", (long long)o->instances);
    ll_buf_puts(&b, "i=$JOB_COMPLETION_INDEX\n");
    ll_buf_puts(&b, "set -- run \"$SCRIPTS\"/");
    sh_quote(&b, base_name(o->script));
    ll_buf_puts(&b, " --shard \"$((i + 1))/");
    ll_buf_puts(&b, n);
    ll_buf_puts(&b, "\" --paused --address \"$API_ADDR\" --setup-data \"$RESULTS/setup.json\""
                    " --out \"hdrlog=$RESULTS/part-$((i + 1)).hlog\"");
    sh_extra(&b, o);
    ll_buf_puts(&b, "\n[ \"$i\" -eq 0 ] || set -- \"$@\" --no-teardown # teardown() runs in part 1 only\n"
                    "luaload \"$@\"\n"
                    "rc=$?\n"
                    "# the whole test's thresholds are judged by the collector's luaload merge\n"
                    "[ \"$rc\" -eq 99 ] && rc=0\n"
                    "exit \"$rc\"\n");
    return b.failed ? (ll_buf_free(&b), NULL) : b.p;
}

static char *start_step(const k8s_opts *o) {
    ll_buf b = {0};
    /* the parts removed their own old sidecars when they started (before they paused) */
    ll_buf_puts(&b, "rm -f \"$RESULTS/setup.json\" \"$RESULTS/summary.json\"\n"
                    "luaload run \"$SCRIPTS\"/");
    sh_quote(&b, base_name(o->script));
    ll_buf_puts(&b, " --setup-only --setup-data-out \"$RESULTS/setup.json\" -q");
    sh_extra(&b, o);
    ll_buf_puts(&b, " || exit $?\n"
                    "for h in $PART_HOSTS; do # each part is up and paused before setup()\n"
                    "  n=0\n"
                    "  until curl -sf --max-time 2 \"http://$h/v1/status\" | grep -q '\"paused\":true'; do\n"
                    "    n=$((n + 1))\n"
                    "    [ \"$n\" -le 600 ] || { echo \"luaload: part $h is not paused after 10 minutes\" >&2; exit 1; }\n"
                    "    sleep 1\n"
                    "  done\n"
                    "done\n"
                    "for h in $PART_HOSTS; do # released together\n"
                    "  curl -sf --max-time 5 -X PATCH -H 'Content-Type: application/json' "
                    "-d '{\"data\":{\"type\":\"status\",\"id\":\"default\",\"attributes\":{\"paused\":false}}}' "
                    "\"http://$h/v1/status\" >/dev/null || { echo \"luaload: cannot release part $h\" >&2; exit 1; }\n"
                    "done\n");
    return b.failed ? (ll_buf_free(&b), NULL) : b.p;
}

static char *collect_step(const k8s_opts *o) {
    ll_buf b = {0};
    char line[512];
    long long n = (long long)o->instances, wait_s = (long long)(o->timeout_us / 1000000);
    snprintf(line, sizeof(line),
             "set --\n"
             "i=1\n"
             "while [ \"$i\" -le %lld ]; do set -- \"$@\" \"$RESULTS/part-$i.hlog\"; i=$((i + 1)); done\n"
             "n=0\n"
             "while :; do # each part writes its sidecar (FILE.json) when it ends\n"
             "  ended=0\n"
             "  for f in \"$@\"; do [ -e \"$f.json\" ] && ended=$((ended + 1)); done\n"
             "  [ \"$ended\" -eq %lld ] && break\n"
             "  n=$((n + 2))\n"
             "  [ \"$n\" -le %lld ] || { echo \"luaload: $ended of %lld parts finished in %llds\" >&2; exit 1; }\n"
             "  sleep 2\n"
             "done\n",
             n, n, wait_s, n, wait_s);
    ll_buf_puts(&b, line);
    ll_buf_puts(&b, "exec luaload merge \"$SCRIPTS\"/");
    sh_quote(&b, base_name(o->script));
    ll_buf_puts(&b, " \"$@\" --summary-export \"$RESULTS/summary.json\"");
    sh_env_only(&b, o);
    ll_buf_puts(&b, "\n");
    return b.failed ? (ll_buf_free(&b), NULL) : b.p;
}

/* ---- the objects ---- */

static cJSON *meta(const k8s_opts *o, const char *suffix, const char *role) {
    char name[128];
    snprintf(name, sizeof(name), "%s%s", o->name, suffix);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", name);
    cJSON *labels = cJSON_AddObjectToObject(m, "labels");
    cJSON_AddStringToObject(labels, "app.kubernetes.io/name", "luaload");
    cJSON_AddStringToObject(labels, "app.kubernetes.io/instance", o->name);
    if (role) cJSON_AddStringToObject(labels, "app.kubernetes.io/component", role);
    return m;
}

static cJSON *object(const char *api, const char *kind, cJSON *metadata) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "apiVersion", api);
    cJSON_AddStringToObject(x, "kind", kind);
    cJSON_AddItemToObject(x, "metadata", metadata);
    return x;
}

static cJSON *env_var(const char *name, const char *value) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddStringToObject(e, "value", value);
    return e;
}

static cJSON *mount(const char *name, const char *path, int read_only) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "mountPath", path);
    if (read_only) cJSON_AddBoolToObject(m, "readOnly", 1);
    return m;
}

/* A container running step with sh, the script and the results mounted. */
static cJSON *container(const k8s_opts *o, const char *name, char *step, cJSON *env) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddStringToObject(c, "image", o->image);
    cJSON_AddStringToObject(c, "imagePullPolicy", "IfNotPresent");
    cJSON *cmd = cJSON_AddArrayToObject(c, "command");
    cJSON_AddItemToArray(cmd, cJSON_CreateString("/bin/sh"));
    cJSON_AddItemToArray(cmd, cJSON_CreateString("-c"));
    cJSON_AddItemToArray(cmd, cJSON_CreateString(step ? step : ""));
    free(step);
    cJSON_AddItemToArray(env, env_var("SCRIPTS", "/scripts"));
    cJSON_AddItemToArray(env, env_var("RESULTS", "/results"));
    cJSON_AddItemToObject(c, "env", env);
    cJSON *mounts = cJSON_AddArrayToObject(c, "volumeMounts");
    cJSON_AddItemToArray(mounts, mount("script", "/scripts", 1));
    cJSON_AddItemToArray(mounts, mount("results", "/results", 0));
    return c;
}

/* The volumes: the ConfigMap's files at their paths, and the results. */
static cJSON *volumes(const k8s_opts *o, const cJSON *items) {
    char name[128];
    cJSON *vs = cJSON_CreateArray();
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "name", "script");
    cJSON *cm = cJSON_AddObjectToObject(v, "configMap");
    snprintf(name, sizeof(name), "%s-script", o->name);
    cJSON_AddStringToObject(cm, "name", name);
    cJSON_AddItemToObject(cm, "items", cJSON_Duplicate(items, 1));
    cJSON_AddItemToArray(vs, v);
    v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "name", "results");
    cJSON *pvc = cJSON_AddObjectToObject(v, "persistentVolumeClaim");
    snprintf(name, sizeof(name), "%s-results", o->name);
    cJSON_AddStringToObject(pvc, "claimName", name);
    cJSON_AddItemToArray(vs, v);
    return vs;
}

/* The script's directory, resolved ("." when none). */
static int script_dir(const char *script, char *out) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", script);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    return realpath(slash ? (dir[0] ? dir : "/") : ".", out) ? 0 : -1;
}

/* Adds path (the script, or a --file under the script's directory) to the
 * ConfigMap: its text as data (bytes that are not plain text as
 * binaryData), and an item mapping the key to its path under /scripts. */
static int add_file(const char *path, const char *dir, cJSON *data, cJSON *binary, cJSON *items, size_t *total) {
    char real[PATH_MAX];
    size_t dn = strlen(dir);
    if (!realpath(path, real)) {
        fprintf(stderr, "luaload: k8s: cannot read %s: %s\n", path, strerror(errno));
        return LL_EXIT_CONFIG;
    }
    if (strncmp(real, dir, dn) != 0 || (real[dn] != '/' && !(dn == 1 && dir[0] == '/'))) {
        fprintf(stderr, "luaload: k8s: --file %s is not under the script's directory %s\n", path, dir);
        return LL_EXIT_CONFIG;
    }
    const char *rel = real + dn + (dn == 1 ? 0 : 1);
    char key[256];
    size_t k = 0;
    for (const char *p = rel; *p && k + 1 < sizeof(key); p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                 *p == '.' || *p == '_';
        key[k++] = ok ? *p : '_';
    }
    key[k] = 0;
    if (cJSON_GetObjectItemCaseSensitive(data, key) || cJSON_GetObjectItemCaseSensitive(binary, key)) {
        fprintf(stderr, "luaload: k8s: %s is given twice (or its name clashes with another file's)\n", path);
        return LL_EXIT_CONFIG;
    }
    ll_buf text = {0};
    if (ll_buf_read_file(&text, path) != 0) {
        fprintf(stderr, "luaload: k8s: cannot read %s: %s\n", path, strerror(errno));
        ll_buf_free(&text);
        return LL_EXIT_CONFIG;
    }
    int plain = 1;
    for (size_t i = 0; i < text.len && plain; i++) {
        unsigned char c = (unsigned char)text.p[i];
        plain = c >= 0x20 ? c < 0x7f : c == '\n' || c == '\t' || c == '\r';
    }
    *total += plain ? text.len : (text.len + 2) / 3 * 4; /* binaryData is base64 */
    if (plain) {
        cJSON_AddItemToObject(data, key, cJSON_CreateString(text.p ? text.p : ""));
    } else {
        char *b64 = ll_base64_encode(text.p, text.len, NULL);
        cJSON_AddItemToObject(binary, key, cJSON_CreateString(b64));
        free(b64);
    }
    ll_buf_free(&text);
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "key", key);
    cJSON_AddStringToObject(item, "path", rel);
    cJSON_AddItemToArray(items, item);
    return 0;
}

static cJSON *config_map(const k8s_opts *o, cJSON *items, int *rc) {
    char dir[PATH_MAX];
    cJSON *cm = object("v1", "ConfigMap", meta(o, "-script", "script"));
    cJSON *data = cJSON_AddObjectToObject(cm, "data"), *binary = cJSON_CreateObject();
    size_t total = 0;
    *rc = 0;
    if (script_dir(o->script, dir) != 0) {
        fprintf(stderr, "luaload: k8s: cannot read %s: %s\n", o->script, strerror(errno));
        *rc = LL_EXIT_CONFIG;
    }
    if (!*rc) *rc = add_file(o->script, dir, data, binary, items, &total);
    for (int i = 0; !*rc && i < o->nfiles; i++) *rc = add_file(o->files[i], dir, data, binary, items, &total);
    if (!*rc && total > CONFIGMAP_MAX) {
        fprintf(stderr, "luaload: k8s: the script and its files are %zu bytes; a ConfigMap holds 1 MB at most\n", total);
        *rc = LL_EXIT_CONFIG;
    }
    if (cJSON_GetArraySize(binary) > 0) cJSON_AddItemToObject(cm, "binaryData", binary);
    else cJSON_Delete(binary);
    return cm;
}

static cJSON *service(const k8s_opts *o) {
    cJSON *s = object("v1", "Service", meta(o, "", "parts"));
    cJSON *spec = cJSON_AddObjectToObject(s, "spec");
    cJSON_AddStringToObject(spec, "clusterIP", "None");
    cJSON_AddBoolToObject(spec, "publishNotReadyAddresses", 1);
    cJSON *sel = cJSON_AddObjectToObject(spec, "selector");
    cJSON_AddStringToObject(sel, "app.kubernetes.io/instance", o->name);
    cJSON_AddStringToObject(sel, "app.kubernetes.io/component", "part");
    cJSON *ports = cJSON_AddArrayToObject(spec, "ports"), *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", "api");
    cJSON_AddNumberToObject(p, "port", API_PORT);
    cJSON_AddItemToArray(ports, p);
    return s;
}

static cJSON *claim(const k8s_opts *o) {
    cJSON *c = object("v1", "PersistentVolumeClaim", meta(o, "-results", "results"));
    cJSON *spec = cJSON_AddObjectToObject(c, "spec");
    cJSON *modes = cJSON_AddArrayToObject(spec, "accessModes");
    cJSON_AddItemToArray(modes, cJSON_CreateString(o->access_mode));
    cJSON *req = cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "resources"), "requests");
    cJSON_AddStringToObject(req, "storage", o->storage);
    return c;
}

/* A Job's pod template around containers (and init containers); the Job
 * is stopped after deadline_s (parts paused forever, a collector waiting
 * for a part that never ends). */
static cJSON *job(const k8s_opts *o, const char *suffix, const char *role, cJSON *pod_spec, int64_t deadline_s) {
    cJSON *j = object("batch/v1", "Job", meta(o, suffix, role));
    cJSON *spec = cJSON_AddObjectToObject(j, "spec");
    cJSON_AddNumberToObject(spec, "backoffLimit", 0);
    cJSON_AddNumberToObject(spec, "activeDeadlineSeconds", (double)deadline_s);
    cJSON *tmpl = cJSON_AddObjectToObject(spec, "template");
    cJSON *m = meta(o, suffix, role);
    cJSON_DeleteItemFromObject(m, "name");
    cJSON_AddItemToObject(tmpl, "metadata", m);
    cJSON_AddStringToObject(pod_spec, "restartPolicy", "Never");
    cJSON *sec = cJSON_AddObjectToObject(pod_spec, "securityContext"); /* the image's user, and a writable volume */
    cJSON_AddNumberToObject(sec, "runAsUser", 65534);
    cJSON_AddNumberToObject(sec, "runAsGroup", 65534);
    cJSON_AddNumberToObject(sec, "fsGroup", 65534);
    cJSON_AddItemToObject(tmpl, "spec", pod_spec);
    return j;
}

static cJSON *parts_job(const k8s_opts *o, const cJSON *items) {
    cJSON *pod = cJSON_CreateObject();
    cJSON_AddStringToObject(pod, "subdomain", o->name); /* NAME-parts-I.NAME: the headless Service */
    cJSON *env = cJSON_CreateArray();
    char addr[32];
    snprintf(addr, sizeof(addr), "0.0.0.0:%d", API_PORT);
    cJSON_AddItemToArray(env, env_var("API_ADDR", addr));
    cJSON *c = container(o, "part", part_step(o), env);
    cJSON *ports = cJSON_AddArrayToObject(c, "ports"), *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", "api");
    cJSON_AddNumberToObject(p, "containerPort", API_PORT);
    cJSON_AddItemToArray(ports, p);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(pod, "containers"), c);
    cJSON_AddItemToObject(pod, "volumes", volumes(o, items));
    cJSON *j = job(o, "-parts", "part", pod, (int64_t)(o->timeout_us / 1000000));
    cJSON *spec = cJSON_GetObjectItem(j, "spec");
    cJSON_AddStringToObject(spec, "completionMode", "Indexed");
    cJSON_AddNumberToObject(spec, "completions", (double)o->instances);
    cJSON_AddNumberToObject(spec, "parallelism", (double)o->instances);
    return j;
}

static cJSON *collect_job(const k8s_opts *o, const cJSON *items) {
    ll_buf hosts = {0};
    char h[160];
    for (int64_t i = 0; i < o->instances; i++) {
        snprintf(h, sizeof(h), "%s%s-parts-%lld.%s:%d", i ? " " : "", o->name, (long long)i, o->name, API_PORT);
        ll_buf_puts(&hosts, h);
    }
    cJSON *pod = cJSON_CreateObject();
    cJSON *env = cJSON_CreateArray();
    cJSON_AddItemToArray(env, env_var("PART_HOSTS", hosts.p ? hosts.p : ""));
    ll_buf_free(&hosts);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(pod, "initContainers"), container(o, "start", start_step(o), env));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(pod, "containers"),
                         container(o, "collect", collect_step(o), cJSON_CreateArray()));
    cJSON_AddItemToObject(pod, "volumes", volumes(o, items));
    return job(o, "-collect", "collect", pod, (int64_t)(o->timeout_us / 1000000) + 600); /* + setup, merge */
}

int ll_k8s_main(int argc, char **argv) {
    k8s_opts o;
    int rc = parse_args(argc, argv, &o);
    cJSON *list = NULL, *items = cJSON_CreateArray();
    if (rc) {
        rc = rc < 0 ? LL_EXIT_OK : rc;
        goto done;
    }
    list = object("v1", "List", cJSON_CreateObject());
    cJSON *all = cJSON_AddArrayToObject(list, "items");
    cJSON_AddItemToArray(all, config_map(&o, items, &rc));
    if (rc) goto done;
    cJSON_AddItemToArray(all, service(&o));
    cJSON_AddItemToArray(all, claim(&o));
    cJSON_AddItemToArray(all, parts_job(&o, items));
    cJSON_AddItemToArray(all, collect_job(&o, items));
    char *text = cJSON_Print(list);
    if (!text || puts(text) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "luaload: k8s: cannot write the manifests: %s\n", text ? strerror(errno) : "out of memory");
        rc = LL_EXIT_FAILURE;
    }
    free(text);

done:
    cJSON_Delete(list);
    cJSON_Delete(items);
    free(o.files);
    return rc;
}
