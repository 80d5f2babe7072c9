/* rotor CLI — output files (README, "Output files").
 *
 * An output is checked and opened before the work starts, so that a bad
 * path fails in a second with the system's reason instead of after minutes
 * of work.  It is written to a temporary name beside the final one and
 * renamed over it only when complete: a failed or interrupted run never
 * leaves a truncated file under the name asked for.  "-" is standard
 * output; a directory is written into, under the subcommand's default name. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_print_json(const char *cmd, cJSON *root) {
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return cli_nomem(cmd);
    puts(text);
    free(text);
    return 0;
}

bool cli_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int cli_output_open(const char *cmd, const char *opt, const char *path, const char *default_name, cli_output *o) {
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {
        o->is_stdout = true;
        o->f = stdout;
        snprintf(o->path, sizeof o->path, "-");
        return 0;
    }
    int n = cli_is_dir(path) ? snprintf(o->path, sizeof o->path, "%s%s%s", path,
                                        path[strlen(path) - 1] == '/' ? "" : "/", default_name)
                             : snprintf(o->path, sizeof o->path, "%s", path);
    if (n < 0 || (size_t)n >= sizeof o->path) return cli_usage_error(cmd, "%s: path too long", opt);
    if (cli_is_dir(o->path)) return cli_usage_error(cmd, "%s: %s: is a directory", opt, o->path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
    /* "x": a stale temporary of another process is never written into */
    if (!(o->f = fopen(o->tmp, "wx")))
        return cli_usage_error(cmd, "%s: %s: cannot write (%s)", opt, o->path, strerror(errno));
    return 0;
}

int cli_output_commit(const char *cmd, const char *opt, cli_output *o) {
    if (!o->f) return 0;
    int rc = 0;
    if (o->is_stdout) {
        if (fflush(stdout) != 0) rc = cli_usage_error(cmd, "%s: standard output: cannot write (%s)", opt, strerror(errno));
        o->f = NULL;
        return rc;
    }
    bool bad = ferror(o->f) != 0;
    int saved = errno;
    if (fclose(o->f) != 0) {
        bad = true;
        saved = errno;
    }
    o->f = NULL;
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = true;
        saved = errno;
    }
    if (bad) {
        remove(o->tmp);
        return cli_usage_error(cmd, "%s: %s: cannot write (%s)", opt, o->path, strerror(saved));
    }
    return 0;
}

void cli_output_abort(cli_output *o) {
    if (o->f && !o->is_stdout) {
        fclose(o->f);
        remove(o->tmp);
    }
    o->f = NULL;
}

void cli_model_base(const char *input, char *buf, size_t size) {
    const char *base = input;
    size_t len = strlen(input);
    if (rotor_model_is_onnx(input)) {
        const char *slash = strrchr(input, '/');
        if (slash) base = slash + 1;
        len = strlen(base);
        if (len > 5 && !strcmp(base + len - 5, ".onnx")) len -= 5;
    }
    snprintf(buf, size, "%.*s", (int)len, base);
}

int cli_output_open_model(const char *cmd, const char *opt, const char *path, const char *input, const char *suffix,
                          cli_output *o) {
    char name[300], base[256];
    cli_model_base(input, base, sizeof base);
    snprintf(name, sizeof name, "%s%s", base, suffix);
    return cli_output_open(cmd, opt, path ? path : name, name, o);
}
