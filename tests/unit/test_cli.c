/* test_cli.c -- `luaload run` flag parsing and LUALOAD_* env (src/core/cli.c). */
/* links: ll_app */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "test_util.h"

static int parse(ll_config *cfg, const char *line) {
    static char buf[512]; /* cfg points into it */
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof(buf), "%s", line);
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w"); /* the one-line errors are checked end to end */
    int rc = ll_cli_parse_run(argc, argv, cfg);
    fclose(stderr);
    stderr = saved;
    return rc;
}

int main(void) {
    ll_config c;
    int rc = parse(&c, "run s.lua -u 250 -d 10s");
    tu_check(rc == 0 && c.run.vus == 250 && c.run.vus_set && c.run.duration_us == 10000000 && !c.run.iterations_set,
             "-u 250 -d 10s");
    tu_check(c.script_path && strcmp(c.script_path, "s.lua") == 0 && !c.quick_url, "script path");
    ll_config_free(&c);

    rc = parse(&c, "run --vus=3 --iterations=7 --workers=2 s.lua");
    tu_check(rc == 0 && c.run.vus == 3 && c.run.iterations == 7 && c.run.iterations_set && c.run.workers == 2, "--flag=value forms");
    ll_config_free(&c);

    rc = parse(&c, "run http://127.0.0.1:8080/ -c 125 -d 30s");
    tu_check(rc == 0 && c.quick_url && c.run.vus == 125 && c.run.duration_us == 30000000, "quick mode with -c");
    ll_config_free(&c);

    rc = parse(&c, "run s.lua -e A=1 -e B=x=y --env C=");
    tu_check(rc == 0 && c.nenv == 3 && strcmp(c.env[1], "B=x=y") == 0, "-e repeated");
    ll_config_free(&c);

    rc = parse(&c, "run s.lua -q --no-summary --summary-export out.json --graceful-stop 5s");
    tu_check(rc == 0 && c.quiet && c.summary.off && strcmp(c.summary.export, "out.json") == 0 &&
                 c.run.graceful_stop_us == 5000000,
             "summary flags");
    ll_config_free(&c);

    rc = parse(&c, "run s.lua --seed 42");
    tu_check(rc == 0 && c.run.seed_set && c.run.seed == 42, "--seed 42");
    ll_config_free(&c);
    rc = parse(&c, "run s.lua --seed=18446744073709551615");
    tu_check(rc == 0 && c.run.seed_set && c.run.seed == UINT64_MAX, "--seed=2^64-1");
    ll_config_free(&c);
    rc = parse(&c, "run s.lua --seed 0");
    tu_check(rc == 0 && c.run.seed_set && c.run.seed == 0, "--seed 0");
    ll_config_free(&c);
    rc = parse(&c, "run s.lua");
    tu_check(rc == 0 && !c.run.seed_set, "no --seed: unset");
    ll_config_free(&c);

    const char *bad[] = {
        "run s.lua --seed abc", "run s.lua --seed -1", "run s.lua --seed 18446744073709551616",
        "run s.lua --seed 1.5", "run s.lua --seed= ", "run s.lua --seed 0x10", "run s.lua --seed",
        "run s.lua -u 0", "run s.lua -u x", "run s.lua -d 0", "run s.lua -d 5", "run s.lua -i -1",
        "run s.lua -w 0", "run s.lua -e NOVALUE", "run s.lua -e =x", "run s.lua --bogus", "run s.lua -u",
        "run", "run a.lua b.lua",
        /* VU counts past INT_MAX (VU ids are ints) */
        "run s.lua -u 2147483648", "run s.lua -c 99999999999", "run s.lua -s 1s:2147483648",
        "run s.lua -u 1e9",
        /* URLs that are no valid http(s) URL: never a script */
        "run http://", "run https://", "run http:///x", "run ftp://x", "run http//x", "run https:x",
        "run http:/x", "run HTTP//x", "run file:///etc/passwd",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rc = parse(&c, bad[i]);
        tu_check(rc == LL_EXIT_CONFIG, "'%s' -> 104 (got %d)", bad[i], rc);
        ll_config_free(&c);
    }
    rc = parse(&c, "run s.lua -u 2147483647 -s 1s:2147483647");
    tu_check(rc == 0 && c.run.vus == 2147483647 && c.run.nstages == 1 && c.run.stages[0].target == 2147483647.0,
             "-u and -s up to INT_MAX");
    ll_config_free(&c);
    rc = parse(&c, "run HTTPS://127.0.0.1:8443/x");
    tu_check(rc == 0 && c.quick_url && !c.script_path, "quick mode: any-case scheme");
    ll_config_free(&c);
    const char *scripts[] = {"run http.lua", "run httpbin.lua", "run ./http//x.lua", "run dir/http:x.lua"};
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
        rc = parse(&c, scripts[i]);
        tu_check(rc == 0 && c.script_path && !c.quick_url, "'%s' is a script", scripts[i]);
        ll_config_free(&c);
    }

    rc = parse(&c, "run --help");
    tu_check(rc == -1, "--help");
    ll_config_free(&c);

    /* env fills only what the CLI left unset */
    parse(&c, "run s.lua -u 4");
    setenv("LUALOAD_VUS", "9", 1);
    setenv("LUALOAD_ITERATIONS", "11", 1);
    setenv("LUALOAD_DURATION", "2s", 1);
    rc = ll_config_read_env(&c);
    tu_check(rc == 0 && c.run.vus == 4 && c.run.iterations == 11 && c.run.duration_us == 2000000, "env under CLI");
    ll_config_free(&c);
    parse(&c, "run s.lua");
    setenv("LUALOAD_DURATION", "soon", 1);
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    rc = ll_config_read_env(&c);
    fclose(stderr);
    stderr = saved;
    tu_check(rc == LL_EXIT_CONFIG, "bad LUALOAD_DURATION -> 104");
    ll_config_free(&c);
    unsetenv("LUALOAD_DURATION");
    parse(&c, "run s.lua");
    setenv("LUALOAD_VUS", "3000000000", 1);
    saved = stderr;
    stderr = fopen("/dev/null", "w");
    rc = ll_config_read_env(&c);
    fclose(stderr);
    stderr = saved;
    tu_check(rc == LL_EXIT_CONFIG, "LUALOAD_VUS past INT_MAX -> 104");
    ll_config_free(&c);
    unsetenv("LUALOAD_VUS");

    /* LUALOAD_SEED under --seed */
    parse(&c, "run s.lua --seed 5");
    setenv("LUALOAD_SEED", "9", 1);
    rc = ll_config_read_env(&c);
    tu_check(rc == 0 && c.run.seed == 5, "LUALOAD_SEED under --seed");
    ll_config_free(&c);
    parse(&c, "run s.lua");
    rc = ll_config_read_env(&c);
    tu_check(rc == 0 && c.run.seed_set && c.run.seed == 9, "LUALOAD_SEED=9");
    ll_config_free(&c);
    parse(&c, "run s.lua");
    setenv("LUALOAD_SEED", "nine", 1);
    saved = stderr;
    stderr = fopen("/dev/null", "w");
    rc = ll_config_read_env(&c);
    fclose(stderr);
    stderr = saved;
    tu_check(rc == LL_EXIT_CONFIG, "bad LUALOAD_SEED -> 104");
    ll_config_free(&c);
    unsetenv("LUALOAD_SEED");
    return tu_summary();
}
