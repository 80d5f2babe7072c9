/* rotor explore's run record (docs/explore.md, "Resuming"): the options that
 * change a row's figures, written beside the CSV as FILE.csv.run whenever
 * the CSV is, so that --resume can tell whether the rows it takes were run
 * with this run's options.  The CSV itself names each row's point and
 * design, and ex_resume checks those against the grid; everything else
 * that shapes a figure (the model, its shape, the chip and its overrides,
 * the schedule's settings) is only known from the record.  What does not
 * change a figure is left out: the output names, --threads, --checkpoint,
 * --resume, --json, --report, --quiet. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsontext.h"
#include "explore.h"
#include "op/planjson.h"

#define RUN_FORMAT "rotor-explore-run"
#define RUN_VERSION 1

/* The record's slots in order: an entry belongs to the slot its option
 * names ("--set link_gbps=11" to --set), the model (no "--") to "model",
 * --decode and --prefill to "phase".  Repeatable options keep their order. */
static const char *const SLOTS[] = {"model", "--chip", "--set",   "--hbm-bw", "--batch", "--seq", "--layers",
                                    "phase", "--dim",  "--input", "--value",  "--tp",    "--max-orders",
                                    "--sram-nonblocking"};
#define NSLOTS ((int)(sizeof SLOTS / sizeof *SLOTS))

/* The slot of one entry, -1 when it names no slot. */
static int slot_of(const char *entry) {
    if (strncmp(entry, "--", 2)) return 0;
    if (!strcmp(entry, "--decode") || !strcmp(entry, "--prefill")) return 7;
    size_t len = strcspn(entry, " ");
    for (int k = 1; k < NSLOTS; k++)
        if (k != 7 && strlen(SLOTS[k]) == len && !strncmp(entry, SLOTS[k], len)) return k;
    return -1;
}

/* Appends "NAME VALUE" (or NAME alone: value NULL) to arr. */
static bool push(cJSON *arr, const char *name, const char *value) {
    char buf[4200];
    snprintf(buf, sizeof buf, "%s%s%s", name, value ? " " : "", value ? value : "");
    cJSON *s = cJSON_CreateString(buf);
    return s && cJSON_AddItemToArray(arr, s);
}

static bool push_int(cJSON *arr, const char *name, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return push(arr, name, buf);
}

char *ex_run_text(const char *input, const cli_hbm_args *ha, const rotor_pipeline_options *po,
                  const rotor_schedule_options *so, const ex_grid *g) {
    const cli_shared_args *m = &ha->m;
    bool onnx = rotor_model_is_onnx(input), ok = true;
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    if (!root || !arr) {
        cJSON_Delete(root);
        cJSON_Delete(arr);
        return NULL;
    }
    ok = cJSON_AddStringToObject(root, "format", RUN_FORMAT) && cJSON_AddNumberToObject(root, "version", RUN_VERSION) &&
         cJSON_AddItemToObject(root, "options", arr);
    if (!ok) cJSON_Delete(arr);
    ok = ok && push(arr, input, NULL) && push(arr, "--chip", m->chip ? m->chip : "ipu-pod4");
    for (int i = 0; i < m->nsets && ok; i++) ok = push(arr, "--set", m->sets[i]);
    if (ok && ha->hbm) ok = push(arr, "--hbm-bw", ha->hbm);
    if (!onnx) { /* a zoo model's shape, as resolved: the batch is 1 unless given or swept */
        if (ok && g->axis_of[KEY_BATCH] < 0) ok = push_int(arr, "--batch", po->zoo.batch);
        if (ok && m->seq) ok = push_int(arr, "--seq", po->zoo.seq);
        if (ok && m->layers) ok = push_int(arr, "--layers", po->zoo.layers);
        if (ok) ok = push(arr, po->zoo.phase == ROTOR_PHASE_DECODE ? "--decode" : "--prefill", NULL);
    }
    if (ok && m->dims) ok = push(arr, "--dim", m->dims);
    if (ok && m->inputs) ok = push(arr, "--input", m->inputs);
    for (int i = 0; i < m->nvalues && ok; i++) ok = push(arr, "--value", m->values[i]);
    if (ok && ha->tp) ok = push_int(arr, "--tp", so->tensor_parallel);
    if (ok && ha->orders) ok = push_int(arr, "--max-orders", so->preload.max_orders);
    if (ok && ha->nonblocking) ok = push(arr, "--sram-nonblocking", NULL);
    char *text = ok && rotor_json_stamp(root) ? cJSON_Print(root) : NULL; /* with rotor's version */
    cJSON_Delete(root);
    return text;
}

/* Slot k's entries of options (a cJSON array of strings) joined by spaces
 * into buf; "" when there are none.  The model's gets "model " before it. */
static void slot_text(const cJSON *options, int k, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    const cJSON *e;
    cJSON_ArrayForEach(e, options) {
        if (slot_of(e->valuestring) != k) continue;
        int w = snprintf(buf + used, size - used, "%s%s%s", used ? " " : "", k == 0 ? "model " : "", e->valuestring);
        if (w > 0 && (size_t)w < size - used) used += (size_t)w;
    }
}

/* Reads path whole into a malloc'd string, bounded like every JSON file
 * rotor reads (rotor_json_read_text: a device or an endless pipe is
 * refused, not read); NULL with the reason in *err. */
static char *slurp(const char *path, rotor_error *err) {
    char *text = NULL;
    return rotor_json_read_text(path, &text, err) ? NULL : text;
}

/* Checks a parsed record: format, version, keys, options.  0 or the error printed. */
static int check_record(const char *cmd, const char *csv, const char *run, const cJSON *root) {
    const char *pre = "--resume";
    if (!cJSON_IsObject(root)) return cli_usage_error(cmd, "%s %s: %s: expected a JSON object", pre, csv, run);
    const cJSON *it;
    cJSON_ArrayForEach(it, root) {
        if (strcmp(it->string, "format") && strcmp(it->string, "version") && strcmp(it->string, "options") &&
            strcmp(it->string, ROTOR_JSON_VERSION_KEY))
            return cli_usage_error(cmd, "%s %s: %s: unknown key '%s'", pre, csv, run, it->string);
    }
    const cJSON *f = cJSON_GetObjectItem(root, "format"), *v = cJSON_GetObjectItem(root, "version"),
                *o = cJSON_GetObjectItem(root, "options");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, RUN_FORMAT))
        return cli_usage_error(cmd, "%s %s: %s: format: expected \"%s\"", pre, csv, run, RUN_FORMAT);
    if (!cJSON_IsNumber(v) || v->valuedouble != RUN_VERSION)
        return cli_usage_error(cmd, "%s %s: %s: version: expected %d, this rotor's", pre, csv, run, RUN_VERSION);
    if (!cJSON_IsArray(o)) return cli_usage_error(cmd, "%s %s: %s: options: expected an array", pre, csv, run);
    int i = 0;
    cJSON_ArrayForEach(it, o) {
        if (!cJSON_IsString(it))
            return cli_usage_error(cmd, "%s %s: %s: options[%d]: expected a string", pre, csv, run, i);
        if (slot_of(it->valuestring) < 0)
            return cli_usage_error(cmd, "%s %s: %s: options[%d]: '%s' is not an option that shapes a row", pre, csv,
                                   run, i, it->valuestring);
        i++;
    }
    return 0;
}

int ex_run_check(const char *cmd, const char *csv, const char *want) {
    char run[4200];
    snprintf(run, sizeof run, "%s.run", csv);
    if (access(run, F_OK) != 0 && errno == ENOENT)
        return cli_usage_error(cmd, "--resume %s: %s is missing, so rotor cannot tell the options the rows were run "
                               "with (it is written beside every CSV; copy it with the rows)", csv, run);
    rotor_error rerr = {0};
    char *text = slurp(run, &rerr);
    if (!text) return cli_usage_error(cmd, "--resume %s: %s", csv, rerr.msg);
    cJSON *have = cJSON_Parse(text), *mine = cJSON_Parse(want);
    free(text);
    int rc = 0;
    if (!mine) rc = cli_nomem(cmd);
    else if (!have) rc = cli_usage_error(cmd, "--resume %s: %s: not JSON", csv, run);
    else rc = check_record(cmd, csv, run, have);
    for (int k = 0; k < NSLOTS && !rc; k++) {
        char a[4200], b[4200];
        slot_text(cJSON_GetObjectItem(have, "options"), k, a, sizeof a);
        slot_text(cJSON_GetObjectItem(mine, "options"), k, b, sizeof b);
        if (!strcmp(a, b)) continue;
        const char *name = k == 7 ? "--decode or --prefill" : SLOTS[k];
        if (!*a) rc = cli_usage_error(cmd, "--resume %s: it was run without %s, this run has %s", csv, name, b);
        else if (!*b) rc = cli_usage_error(cmd, "--resume %s: it was run with %s, this run has no %s", csv, a, name);
        else rc = cli_usage_error(cmd, "--resume %s: it was run with %s, this run has %s", csv, a, b);
    }
    cJSON_Delete(have);
    cJSON_Delete(mine);
    return rc;
}

bool ex_run_is(const char *csv, const char *text) {
    char run[4200];
    snprintf(run, sizeof run, "%s.run", csv);
    rotor_error rerr = {0};
    char *have = slurp(run, &rerr);
    size_t n = strlen(text);
    bool same = have && strlen(have) == n + 1 && !strncmp(have, text, n) && have[n] == '\n'; /* ex_run_write's */
    free(have);
    return same;
}

void ex_run_forget(const char *csv) {
    char run[4200];
    snprintf(run, sizeof run, "%s.run", csv);
    remove(run);
}

bool ex_run_write(const char *csv, const char *text) {
    char run[4200];
    snprintf(run, sizeof run, "%s.run", csv);
    cli_output o;
    int e = cli_side_open(run, &o);
    if (!e) {
        fprintf(o.f, "%s\n", text);
        e = cli_side_commit(&o);
    }
    errno = e;
    return !e;
}
