/* gpu.c — a GPU as a chip kind: presets, the chip file of "kind": "gpu",
 * --set and validation (docs/gpu.md, docs/chip-format.md "GPU chips").
 *
 * One table (FIELDS) holds each key's type, place and range, as base/chip.c's
 * does for an ICCA; the reader, --set and rotor_gpu_validate walk it, so a
 * field's rule is written once (check_field). */
#include "rotor/base/gpu.h"
#include "rotor/base/readfile.h"
#include "jsontext.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB 1024LL
#define MIB (1024LL * 1024)
#define GIB (1024LL * 1024 * 1024)

/* ---- presets ------------------------------------------------------------ */

typedef struct gpu_preset {
    const char *name;
    rotor_gpu gpu;
} gpu_preset;

/* Sources (docs/gpu.md, "Presets", gives each with its table):
 *  [A] NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020),
 *      https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf
 *      Table 1 (108 SMs, 1410 MHz boost; FP16/BF16 312, TF32 156, INT8 624
 *      dense tensor TFLOP/s; FP32 19.5), Table 3 (40 MB L2, 164 KB shared
 *      memory per SM, 256 KB = 65536 registers per SM), Figure 7 "GA100 Streaming
 *      Multiprocessor" (16 SFUs an SM: 4 a partition), section "A100 L2
 *      cache" (5120 bytes a clock: 5120 x 1.41 GHz = 7219 GB/s).
 *  [B] NVIDIA A100 datasheet,
 *      https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf
 *      (SXM: 40 GB HBM2 at 1555 GB/s, 80 GB HBM2e at 2039 GB/s).
 *  [C] NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022),
 *      https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper
 *      Table 3 and the H100 datasheet,
 *      https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet
 *      (SXM5: 132 SMs, 1980 MHz boost; dense FP16/BF16 989.4, TF32 494.7,
 *      INT8 1978.9; FP32 66.9; 50 MB L2; 228 KB shared memory per SM;
 *      80 GB HBM3 at 3350 GB/s; 16 SFUs an SM, its Figure 7).  Its L2 bandwidth is not published:
 *      rotor assumes A100's 5120 bytes a clock, 5120 x 1.98 GHz = 10138 GB/s.
 * launch_us: a kernel's fixed cost is on no spec sheet.  5 us is the GPU
 * time of a one-block kernel on an A100-SXM4-40GB in an Nsight Systems
 * trace (4.7 us, github.com/csarofeen/pytorch/issues/880), rounded; the
 * same for every preset (docs/gpu.md says why). */
#define A100_COMMON                                                                        \
    .sms = 108, .clock_mhz = 1410.0, .fp16_tflops = 312.0, .bf16_tflops = 312.0,           \
    .tf32_tflops = 156.0, .int8_tops = 624.0, .fp32_tflops = 19.5, .sfu_per_sm = 16,       \
    .l2_bytes = 40 * MIB,                                                                  \
    .l2_gbps = 7219.2, .smem_bytes = 164 * KIB, .regs_per_sm = 65536, .launch_us = 5.0,    \
    .dtype = ROTOR_GPU_FP16, .fused_attention = 1

static const gpu_preset PRESETS[] = {
    {"a100-80gb", {.name = "a100-80gb", A100_COMMON, .hbm_bytes = 80 * GIB, .hbm_gbps = 2039.0}},
    {"a100-40gb", {.name = "a100-40gb", A100_COMMON, .hbm_bytes = 40 * GIB, .hbm_gbps = 1555.0}},
    {"h100-sxm",
     {.name = "h100-sxm", .sms = 132, .clock_mhz = 1980.0, .fp16_tflops = 989.4, .bf16_tflops = 989.4,
      .tf32_tflops = 494.7, .int8_tops = 1978.9, .fp32_tflops = 66.9, .sfu_per_sm = 16, .hbm_bytes = 80 * GIB,
      .hbm_gbps = 3350.0, .l2_bytes = 50 * MIB, .l2_gbps = 10137.6, .smem_bytes = 228 * KIB,
      .regs_per_sm = 65536, .launch_us = 5.0, .dtype = ROTOR_GPU_FP16, .fused_attention = 1}},
};
#define NPRESETS ((int)(sizeof PRESETS / sizeof PRESETS[0]))

int rotor_gpu_preset_count(void) { return NPRESETS; }
const char *rotor_gpu_preset_name(int i) { return i >= 0 && i < NPRESETS ? PRESETS[i].name : NULL; }

static const gpu_preset *find_preset(const char *name) {
    for (int i = 0; i < NPRESETS; i++)
        if (!strcmp(PRESETS[i].name, name)) return &PRESETS[i];
    return NULL;
}

rotor_status rotor_gpu_preset(const char *name, rotor_gpu *out, rotor_error *err) {
    const gpu_preset *p = find_preset(name);
    if (!p) return rotor_fail(err, ROTOR_ERR_INPUT, "unknown GPU '%s' (presets: a100-80gb, a100-40gb, h100-sxm)", name);
    *out = p->gpu;
    return ROTOR_OK;
}

/* ---- the field table ------------------------------------------------------ */

static const char *const DTYPE_NAMES[ROTOR_GPU_NDTYPES] = {"fp16", "bf16", "tf32", "fp32", "int8"};

const char *rotor_gpu_dtype_name(rotor_gpu_dtype d) {
    return d >= 0 && d < ROTOR_GPU_NDTYPES ? DTYPE_NAMES[d] : "?";
}

int64_t rotor_gpu_dtype_bytes(rotor_gpu_dtype d) {
    return d == ROTOR_GPU_INT8 ? 1 : d == ROTOR_GPU_TF32 || d == ROTOR_GPU_FP32 ? 4 : 2;
}

double rotor_gpu_matrix_rate(const rotor_gpu *g, rotor_gpu_dtype d) {
    double t = d == ROTOR_GPU_FP16 ? g->fp16_tflops : d == ROTOR_GPU_BF16 ? g->bf16_tflops
             : d == ROTOR_GPU_TF32 ? g->tf32_tflops : d == ROTOR_GPU_INT8 ? g->int8_tops : g->fp32_tflops;
    return t * 1e12;
}

typedef enum { K_NAME, K_INT, K_NUM, K_DTYPE } gkind;

typedef struct gfield {
    const char *key;
    gkind kind;
    size_t off;
    double max;   /* upper bound, a sanity limit far above any GPU (catches a size in bits) */
    bool zero_ok;
    double min;   /* a rate's floor (0: any positive value) */
} gfield;

/* A rate divides a size into a time: at least ROTOR_RATE_MIN (MHz, TFLOP/s,
 * GB/s), as an inter-core chip's rates. */
#define G(m, k, max, z) {#m, k, offsetof(rotor_gpu, m), max, z, 0}
#define GR(m, max) {#m, K_NUM, offsetof(rotor_gpu, m), max, false, ROTOR_RATE_MIN}
static const gfield FIELDS[] = {
    G(name, K_NAME, 0, false),
    G(sms, K_INT, 65536, false),
    GR(clock_mhz, 1e5),
    GR(fp16_tflops, 1e6),
    GR(bf16_tflops, 1e6),
    GR(tf32_tflops, 1e6),
    GR(int8_tops, 1e6),
    GR(fp32_tflops, 1e6),
    G(sfu_per_sm, K_INT, 4096, false),
    G(hbm_bytes, K_INT, (double)(1LL << 50), false),
    GR(hbm_gbps, 1e6),
    G(l2_bytes, K_INT, (double)(16 * GIB), false),
    GR(l2_gbps, 1e6),
    G(smem_bytes, K_INT, (double)GIB, false),
    G(regs_per_sm, K_INT, 1 << 24, false),
    G(launch_us, K_NUM, 1e6, true),
    G(dtype, K_DTYPE, 0, false),
    G(fused_attention, K_INT, 1, true),
};
#undef G
#undef GR
#define NFIELDS ((int)(sizeof FIELDS / sizeof FIELDS[0]))

static const gfield *find_field(const char *key) {
    for (int i = 0; i < NFIELDS; i++)
        if (!strcmp(FIELDS[i].key, key)) return &FIELDS[i];
    return NULL;
}

static int64_t *int_at(rotor_gpu *g, const gfield *f) { return (int64_t *)(void *)((char *)g + f->off); }
static double *num_at(rotor_gpu *g, const gfield *f) { return (double *)(void *)((char *)g + f->off); }

static const char *expects(const gfield *f) {
    switch (f->kind) {
    case K_NAME: return "a name of 1 to 63 letters, digits, '.', '_' or '-'";
    case K_DTYPE: return "one of \"fp16\", \"bf16\", \"tf32\", \"fp32\", \"int8\"";
    case K_INT: return f->max == 1 ? "0 or 1" : f->zero_ok ? "a non-negative integer" : "a positive integer";
    default: return f->zero_ok ? "a non-negative number" : "a positive number";
    }
}

/* Puts number d (text got, for messages) into field f of g, range-checked. */
static rotor_status put_number(rotor_gpu *g, const gfield *f, double d, const char *got, rotor_error *err) {
    bool ok = isfinite(d) && (f->zero_ok ? d >= 0 : d > 0) && d <= f->max && !(d > 0 && d < f->min);
    if (f->kind == K_INT) ok = ok && d == floor(d);
    if (!ok) {
        if (isfinite(d) && d > f->max)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s of at most %.17g, got %s", f->key, expects(f),
                              f->max, got);
        if (isfinite(d) && d > 0 && d < f->min)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s of at least %g, got %s", f->key, expects(f),
                              f->min, got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s, got %s", f->key, expects(f), got);
    }
    if (f->kind == K_INT) *int_at(g, f) = (int64_t)d;
    else *num_at(g, f) = d;
    return ROTOR_OK;
}

static rotor_status put_text(rotor_gpu *g, const gfield *f, const char *s, const char *got, rotor_error *err) {
    if (f->kind == K_DTYPE) {
        for (int d = 0; d < ROTOR_GPU_NDTYPES; d++)
            if (!strcmp(s, DTYPE_NAMES[d])) {
                g->dtype = (rotor_gpu_dtype)d;
                return ROTOR_OK;
            }
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s, got %s", f->key, expects(f), got);
    }
    size_t len = strlen(s);
    bool ok = len > 0 && len < ROTOR_CHIP_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++)
        ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
             s[i] == '.' || s[i] == '_' || s[i] == '-';
    if (!ok) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s, got %s", f->key, expects(f), got);
    memset(g->name, 0, sizeof g->name);
    memcpy(g->name, s, len);
    return ROTOR_OK;
}

rotor_status rotor_gpu_validate(const rotor_gpu *gpu, rotor_error *err) {
    rotor_gpu copy = *gpu;
    char got[64];
    for (int i = 0; i < NFIELDS; i++) {
        const gfield *f = &FIELDS[i];
        rotor_status st = ROTOR_OK;
        if (f->kind == K_INT) {
            snprintf(got, sizeof got, "%lld", (long long)*int_at(&copy, f));
            st = put_number(&copy, f, (double)*int_at(&copy, f), got, err);
        } else if (f->kind == K_NUM) {
            snprintf(got, sizeof got, "%.17g", *num_at(&copy, f));
            st = put_number(&copy, f, *num_at(&copy, f), got, err);
        } else if (f->kind == K_DTYPE && (gpu->dtype < 0 || gpu->dtype >= ROTOR_GPU_NDTYPES)) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "dtype: expected %s", expects(f));
        } else if (f->kind == K_NAME) {
            char name[ROTOR_CHIP_NAME_MAX + 1];
            memcpy(name, gpu->name, ROTOR_CHIP_NAME_MAX);
            name[ROTOR_CHIP_NAME_MAX] = '\0';
            snprintf(got, sizeof got, "\"%.40s\"", name);
            st = put_text(&copy, f, name, got, err);
        }
        if (st) return st;
    }
    return ROTOR_OK;
}

rotor_status rotor_gpu_set(rotor_gpu *gpu, const char *assignment, rotor_error *err) {
    const char *eq = strchr(assignment, '=');
    char key[64];
    size_t klen = eq ? (size_t)(eq - assignment) : 0;
    if (!eq || klen == 0 || klen >= sizeof key)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--set: expected KEY=VALUE, got '%s'", assignment);
    memcpy(key, assignment, klen);
    key[klen] = '\0';
    const gfield *f = find_field(key);
    if (!f) return rotor_fail(err, ROTOR_ERR_INPUT, "--set: %s: unknown key of a GPU chip (docs/gpu.md)", key);
    rotor_gpu g = *gpu;
    const char *v = eq + 1;
    char got[96];
    snprintf(got, sizeof got, "'%.80s'", v);
    rotor_status st;
    if (f->kind == K_INT || f->kind == K_NUM) {
        char *end;
        double d = strtod(v, &end);
        st = end == v || *end ? rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s, got %s", f->key, expects(f), got)
                              : put_number(&g, f, d, got, err);
    } else {
        st = put_text(&g, f, v, got, err);
    }
    if (st) {
        rotor_error_prefix(err, "--set");
        return st;
    }
    *gpu = g;
    return ROTOR_OK;
}

/* ---- the chip file -------------------------------------------------------- */

#define GPU_FILE_MAX (1024 * 1024)

/* Reads every key after format, version, kind and base. */
static rotor_status put_keys(const cJSON *root, rotor_gpu *g, bool *seen, rotor_error *err) {
    char got[96];
    for (const cJSON *item = root->child; item; item = item->next) {
        const char *key = item->string;
        if (!strcmp(key, "format") || !strcmp(key, "version") || !strcmp(key, "kind") || !strcmp(key, "base"))
            continue;
        const gfield *f = find_field(key);
        if (!f)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "%s: unknown key of a GPU chip (known keys: format, version, kind, base, name, sms, "
                              "clock_mhz, fp16_tflops, bf16_tflops, tf32_tflops, int8_tops, fp32_tflops, "
                              "sfu_per_sm, hbm_bytes, hbm_gbps, l2_bytes, l2_gbps, smem_bytes, regs_per_sm, launch_us, dtype, "
                              "fused_attention)",
                              key);
        int i = (int)(f - FIELDS); /* a key given twice was refused when the text was read (rotor_json_parse) */
        seen[i] = true;
        rotor_json_describe(item, got, sizeof got);
        bool text = f->kind == K_NAME || f->kind == K_DTYPE;
        rotor_status st;
        if (text && cJSON_IsString(item)) st = put_text(g, f, item->valuestring, got, err);
        else if (!text && cJSON_IsNumber(item)) st = put_number(g, f, item->valuedouble, got, err);
        else st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s, got %s", key, expects(f), got);
        if (st) return st;
    }
    return ROTOR_OK;
}

static rotor_status gpu_from_json(const cJSON *root, const char *path, rotor_gpu *out, rotor_error *err) {
    char got[96];
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, "rotor-chip"))
        return rotor_fail(err, ROTOR_ERR_INPUT, "format: expected \"rotor-chip\"");
    if (!cJSON_IsNumber(version) || version->valuedouble != 1.0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "version: expected 1");
    if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "gpu"))
        return rotor_fail(err, ROTOR_ERR_INPUT, "kind: expected \"gpu\"");
    rotor_gpu g;
    memset(&g, 0, sizeof g);
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(root, "base");
    if (base) {
        const gpu_preset *p = cJSON_IsString(base) ? find_preset(base->valuestring) : NULL;
        if (!p) {
            rotor_json_describe(base, got, sizeof got);
            return rotor_fail(err, ROTOR_ERR_INPUT, "base: expected a GPU preset (a100-80gb, a100-40gb, h100-sxm), got %s",
                              got);
        }
        g = p->gpu;
    }
    bool seen[NFIELDS] = {false};
    rotor_status st = put_keys(root, &g, seen, err);
    if (st) return st;
    for (int i = 1; !base && i < NFIELDS; i++) /* name (0) defaults to the file's basename */
        if (!seen[i] && FIELDS[i].kind != K_DTYPE && strcmp(FIELDS[i].key, "fused_attention"))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: missing key (expected %s; or start from a preset with \"base\": "
                              "\"a100-80gb\")", FIELDS[i].key, expects(&FIELDS[i]));
    if (!seen[0]) {
        const char *b = strrchr(path, '/');
        b = b ? b + 1 : path;
        size_t len = strlen(b);
        if (len >= 5 && !strcmp(b + len - 5, ".json")) len -= 5;
        char name[ROTOR_CHIP_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name - 1 ? len : sizeof name - 1), b);
        snprintf(got, sizeof got, "\"%s\"", name);
        if ((st = put_text(&g, &FIELDS[0], name, got, err))) return st;
    }
    if ((st = rotor_gpu_validate(&g, err))) return st;
    *out = g;
    return ROTOR_OK;
}

rotor_status rotor_gpu_parse(const char *text, size_t len, const char *label, rotor_gpu *out, rotor_error *err) {
    cJSON *root;
    rotor_status pst = rotor_json_parse_bytes(text, len, label, &root, err);
    if (pst) return pst;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: not a JSON object", label);
    }
    rotor_status st = gpu_from_json(root, label, out, err);
    cJSON_Delete(root);
    if (st && st != ROTOR_ERR_NOMEM) rotor_error_prefix(err, label);
    return st;
}

rotor_status rotor_gpu_load(const char *path, rotor_gpu *out, rotor_error *err) {
    char *text = NULL;
    size_t len = 0;
    rotor_status st = rotor_read_file(path, GPU_FILE_MAX, &text, &len, err);
    if (st) return st;
    st = rotor_gpu_parse(text, len, path, out, err);
    free(text);
    return st;
}

static bool spec_is_file(const char *spec) {
    size_t len = strlen(spec);
    return strchr(spec, '/') || (len >= 5 && !strcmp(spec + len - 5, ".json"));
}

rotor_status rotor_gpu_resolve(const char *spec, rotor_gpu *out, rotor_error *err) {
    return spec_is_file(spec) ? rotor_gpu_load(spec, out, err) : rotor_gpu_preset(spec, out, err);
}

bool rotor_gpu_spec_is_gpu(const char *spec) {
    if (!spec) return false;
    if (!spec_is_file(spec)) return find_preset(spec) != NULL;
    char *text = NULL;
    size_t len = 0;
    rotor_error err = {{0}};
    if (rotor_read_file(spec, GPU_FILE_MAX, &text, &len, &err)) return false;
    cJSON *root;
    (void)rotor_json_parse(text, len, spec, &root, &err); /* not JSON: not a GPU file (the chip's parse says why) */
    free(text);
    const cJSON *kind = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "kind") : NULL;
    bool gpu = cJSON_IsString(kind) && !strcmp(kind->valuestring, "gpu");
    cJSON_Delete(root);
    return gpu;
}
