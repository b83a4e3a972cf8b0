/* jwt_cache.c -- the JWT cache directory: its default place, the names of
 * its files, the lock per fingerprint, the choice between reusing a file
 * and generating one (jwt_pregen.c) into a temporary file renamed when
 * complete, the stderr lines saying which, and clear-cache. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jwt_cache.h"
#include "jwt_pregen.h"

#define JWT_CACHE_FP 32        /* hex digits of the fingerprint in names */
#define JWT_CACHE_ANNOUNCED 64 /* fingerprints announced once per process */

typedef enum { JWT_CACHE_NONE, JWT_CACHE_TOKENS, JWT_CACHE_TMP, JWT_CACHE_LOCK } jwt_cache_kind;

/* What a directory entry's name says, when it is one of ours. */
typedef struct jwt_cache_name {
    jwt_cache_kind kind;
    char fp[JWT_CACHE_FP + 1];
    unsigned long long count; /* TOKENS */
    long long start;          /* TOKENS */
    long pid;                 /* TMP */
} jwt_cache_name;

static pthread_mutex_t jwt_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static char jwt_cache_announced[JWT_CACHE_ANNOUNCED][JWT_CACHE_FP + 1];
static int jwt_cache_nannounced;

int ll_jwt_cache_default_dir(char *out, size_t outlen) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = -1;
    if (xdg && xdg[0] == '/') n = snprintf(out, outlen, "%s/luaload/jwt", xdg);
    else if (home && home[0]) n = snprintf(out, outlen, "%s/.cache/luaload/jwt", home);
    return n > 0 && (size_t)n < outlen ? 0 : -1;
}

static int jwt_cache_is_hex(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

/* ALG-FP-COUNT-START.jwt, FP.tmp.PID or FP.lock */
static jwt_cache_name jwt_cache_parse(const char *name) {
    jwt_cache_name c = {0};
    const char *dash = strchr(name, '-');
    int used = 0;
    if (strlen(name) > JWT_CACHE_FP && name[JWT_CACHE_FP] == '.' && jwt_cache_is_hex(name, JWT_CACHE_FP)) {
        memcpy(c.fp, name, JWT_CACHE_FP);
        const char *rest = name + JWT_CACHE_FP;
        if (strcmp(rest, ".lock") == 0) c.kind = JWT_CACHE_LOCK;
        else if (sscanf(rest, ".tmp.%ld%n", &c.pid, &used) == 1 && rest[used] == '\0') c.kind = JWT_CACHE_TMP;
    } else if (dash && strlen(dash + 1) > JWT_CACHE_FP && dash[1 + JWT_CACHE_FP] == '-' &&
               jwt_cache_is_hex(dash + 1, JWT_CACHE_FP)) {
        memcpy(c.fp, dash + 1, JWT_CACHE_FP);
        const char *rest = dash + 1 + JWT_CACHE_FP;
        if (sscanf(rest, "-%llu-%lld.jwt%n", &c.count, &c.start, &used) == 2 && rest[used] == '\0')
            c.kind = JWT_CACHE_TOKENS;
    }
    return c;
}

/* dir/name into out: 0, or -1 when it does not fit */
static int jwt_cache_join(char *out, size_t outlen, const char *dir, const char *name) {
    int n = snprintf(out, outlen, "%s/%s", dir, name);
    return n > 0 && (size_t)n < outlen ? 0 : -1;
}

/* mkdir -p, 0700 (the tokens are credentials) */
static int jwt_cache_mkdir(const char *dir, char *err, size_t errlen) {
    char p[4096];
    int n = snprintf(p, sizeof(p), "%s", dir);
    for (int i = 1; n > 0 && (size_t)n < sizeof(p) && i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create the cache directory '%s': %s", p, strerror(errno));
            return -1;
        }
        p[i] = c;
    }
    return 0;
}

/* 1 the first time fp is asked about in this process */
static int jwt_cache_first(const char *fp) {
    int first = 1;
    pthread_mutex_lock(&jwt_cache_mu);
    for (int i = 0; i < jwt_cache_nannounced && first; i++) first = strcmp(jwt_cache_announced[i], fp) != 0;
    if (first && jwt_cache_nannounced < JWT_CACHE_ANNOUNCED)
        snprintf(jwt_cache_announced[jwt_cache_nannounced++], JWT_CACHE_FP + 1, "%s", fp);
    pthread_mutex_unlock(&jwt_cache_mu);
    return first;
}

/* Scans dir for fp's files: removes temporary files of dead processes,
 * and (keep NULL) the token files but keep, or picks in best the largest
 * token file that holds n tokens still fresh enough. */
static void jwt_cache_scan(const char *dir, const char *fp, uint64_t n, int64_t exp_in, const char *keep,
                           jwt_cache_name *best, char *bestname, size_t bestlen) {
    DIR *d = opendir(dir);
    struct dirent *e;
    long long now = (long long)time(NULL);
    while (d && (e = readdir(d))) {
        jwt_cache_name c = jwt_cache_parse(e->d_name);
        if (c.kind == JWT_CACHE_NONE || strcmp(c.fp, fp) != 0) continue;
        int remove = c.kind == JWT_CACHE_TMP && c.pid != getpid() && kill((pid_t)c.pid, 0) != 0 && errno == ESRCH;
        if (keep && c.kind == JWT_CACHE_TOKENS) remove = strcmp(e->d_name, keep) != 0;
        if (remove) {
            char p[4096];
            if (jwt_cache_join(p, sizeof(p), dir, e->d_name) == 0) unlink(p);
            continue;
        }
        int fresh = exp_in <= 0 || now < c.start + exp_in / 2;
        if (!keep && c.kind == JWT_CACHE_TOKENS && c.count >= n && fresh && c.count > best->count) {
            *best = c;
            snprintf(bestname, bestlen, "%s", e->d_name);
        }
    }
    if (d) closedir(d);
}

/* Generates n tokens into dir/NAME; puts the path in path. */
static int jwt_cache_generate(ll_jwt_gen *g, uint64_t n, const ll_jwt_cache_opts *o, const char *dir,
                              const char *fp, int say, char *path, size_t pathlen, char *err, size_t errlen) {
    char tmp[4096], name[256];
    long long start = (long long)time(NULL);
    snprintf(name, sizeof(name), "%s.tmp.%ld", fp, (long)getpid());
    int bad = jwt_cache_join(tmp, sizeof(tmp), dir, name);
    snprintf(name, sizeof(name), "%s-%s-%llu-%lld.jwt", ll_jwt_gen_alg(g), fp, (unsigned long long)n, start);
    if (bad || jwt_cache_join(path, pathlen, dir, name) != 0) {
        snprintf(err, errlen, "the cache directory's path is too long");
        return -1;
    }
    int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    if (say)
        fprintf(stderr, "luaload: jwt: generating %llu %s tokens on %d threads into %s\n", (unsigned long long)n,
                ll_jwt_gen_alg(g), threads, dir);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
        return -1;
    }
    int rc = ll_jwt_pregen_write(g, n, fd, threads, say && isatty(STDERR_FILENO), o->stop, err, errlen);
    if (rc == 0 && (fsync(fd) != 0 || rename(tmp, path) != 0)) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        rc = -1;
    }
    if (close(fd) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        unlink(tmp);
        unlink(path);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (say)
        fprintf(stderr, "luaload: jwt: generated %llu tokens in %.2f s (%.0f/s, %.0f/s per thread)\n",
                (unsigned long long)n, secs, (double)n / secs, (double)n / secs / threads);
    return 0;
}

int ll_jwt_cache_ensure(ll_jwt_gen *g, uint64_t n, const ll_jwt_cache_opts *o, char *path, size_t pathlen,
                        char *err, size_t errlen) {
    char dir[4096], lock[4200], fp[JWT_CACHE_FP + 1];
    if (n == 0) {
        snprintf(err, errlen, "expected 1 or more tokens to generate");
        return -1;
    }
    if (o->dir) snprintf(dir, sizeof(dir), "%s", o->dir);
    else if (ll_jwt_cache_default_dir(dir, sizeof(dir)) != 0) {
        snprintf(err, errlen, "no cache directory: neither XDG_CACHE_HOME nor HOME is set (give cache_dir)");
        return -1;
    }
    if (jwt_cache_mkdir(dir, err, errlen) != 0) return -1;
    snprintf(fp, sizeof(fp), "%s", ll_jwt_gen_fingerprint(g));
    char lockname[64];
    snprintf(lockname, sizeof(lockname), "%s.lock", fp);
    if (jwt_cache_join(lock, sizeof(lock), dir, lockname) != 0) {
        snprintf(err, errlen, "the cache directory's path is too long");
        return -1;
    }
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    int locked = lfd >= 0 ? flock(lfd, LOCK_EX) : -1;
    while (locked != 0 && lfd >= 0 && errno == EINTR) locked = flock(lfd, LOCK_EX);
    if (locked != 0) {
        snprintf(err, errlen, "cannot lock '%s': %s", lock, strerror(errno));
        if (lfd >= 0) close(lfd);
        return -1;
    }
    jwt_cache_name best = {0};
    char name[512] = "";
    jwt_cache_scan(dir, fp, n, ll_jwt_gen_exp_in(g), NULL, &best, name, sizeof(name));
    int say = !o->quiet && jwt_cache_first(fp), rc = 0;
    if (best.kind == JWT_CACHE_TOKENS) {
        jwt_cache_join(path, pathlen, dir, name);
        if (say) fprintf(stderr, "luaload: jwt: %llu tokens from the cache %s\n", best.count, path);
    } else {
        rc = jwt_cache_generate(g, n, o, dir, fp, say, path, pathlen, err, errlen);
        const char *slash = strrchr(path, '/');
        if (rc == 0) jwt_cache_scan(dir, fp, n, 0, slash + 1, &best, name, sizeof(name));
    }
    close(lfd); /* and the lock with it */
    return rc;
}

int ll_jwt_cache_clear(const char *dir, char *err, size_t errlen) {
    char def[4096];
    if (!dir && ll_jwt_cache_default_dir(def, sizeof(def)) != 0) {
        snprintf(err, errlen, "no cache directory: neither XDG_CACHE_HOME nor HOME is set");
        return -1;
    }
    if (!dir) dir = def;
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT) return 0;
    if (!d) {
        snprintf(err, errlen, "cannot open '%s': %s", dir, strerror(errno));
        return -1;
    }
    int removed = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (jwt_cache_parse(e->d_name).kind == JWT_CACHE_NONE) continue;
        char p[4096];
        if (jwt_cache_join(p, sizeof(p), dir, e->d_name) == 0 && unlink(p) == 0) {
            removed++;
        } else if (errno != ENOENT) {
            snprintf(err, errlen, "cannot remove '%s': %s", p, strerror(errno));
            rc = -1;
        }
    }
    closedir(d);
    rmdir(dir); /* fails, and is left, when something else is in it */
    return rc ? -1 : removed;
}
