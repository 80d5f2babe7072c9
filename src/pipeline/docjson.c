/* docjson.c — the pieces several documents share (docint.h): the energy
 * object (docs/energy.md, "In the CLI") and the topology's text. */
#include "pipeline/docint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rotor_doc_energy_per(bool decode, int64_t batch, const char *whole) {
    return !decode ? whole : batch <= 1 ? "token" : "step";
}

bool rotor_doc_energy_json(cJSON *parent, const char *per, const rotor_energy_counts *c, const rotor_energy *e) {
    cJSON *o = cJSON_AddObjectToObject(parent, "energy"), *k = NULL;
    if (!o) return false;
    bool ok = cJSON_AddStringToObject(o, "per", per) && cJSON_AddNumberToObject(o, "total_j", e->total_j) &&
              cJSON_AddNumberToObject(o, "compute_j", e->compute_j) && cJSON_AddNumberToObject(o, "sram_j", e->sram_j) &&
              cJSON_AddNumberToObject(o, "link_j", e->link_j) && cJSON_AddNumberToObject(o, "hbm_j", e->hbm_j) &&
              cJSON_AddNumberToObject(o, "interchip_j", e->interchip_j) &&
              cJSON_AddNumberToObject(o, "static_j", e->static_j) && cJSON_AddNumberToObject(o, "seconds", e->seconds) &&
              cJSON_AddNumberToObject(o, "edp_js", e->edp);
    ok = ok && (k = cJSON_AddObjectToObject(o, "counts"));
    ok = ok && cJSON_AddNumberToObject(k, "matrix_flops", (double)c->matrix_flops) &&
         cJSON_AddNumberToObject(k, "vector_flops", (double)c->vector_flops) &&
         cJSON_AddNumberToObject(k, "sram_read_bytes", (double)c->sram_read_bytes) &&
         cJSON_AddNumberToObject(k, "sram_write_bytes", (double)c->sram_write_bytes) &&
         cJSON_AddNumberToObject(k, "byte_hops", (double)c->byte_hops) &&
         cJSON_AddNumberToObject(k, "hbm_bytes", (double)c->hbm_bytes) &&
         cJSON_AddNumberToObject(k, "interchip_bytes", (double)c->interchip_bytes);
    return ok;
}

char *rotor_doc_energy_splice(const char *text, const char *per, const rotor_energy_counts *c, const rotor_energy *e) {
    cJSON *holder = cJSON_CreateObject();
    char *obj = NULL, *out = NULL;
    if (holder && rotor_doc_energy_json(holder, per, c, e)) obj = cJSON_Print(cJSON_GetObjectItem(holder, "energy"));
    cJSON_Delete(holder);
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] != '}') n--; /* the root object's closing brace */
    size_t lines = 0;
    for (const char *q = obj; q && *q; q++) lines += *q == '\n';
    if (obj && n > 0 && (out = malloc(n + strlen(obj) + lines + 32))) {
        /* the object one level in, as the writer indents the root's keys */
        int w = sprintf(out, "%.*s,\n\t\"energy\":\t", (int)(n - 1 - (n > 1 && text[n - 2] == '\n')), text);
        for (const char *q = obj; *q; q++) {
            out[w++] = *q;
            if (*q == '\n') out[w++] = '\t';
        }
        strcpy(out + w, "\n}");
    }
    free(obj);
    return out;
}

