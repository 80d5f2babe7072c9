/* jsonstamp.c — the version of rotor in every JSON document (jsontext.h). */
#include "base/jsontext.h"

#include "rotor/base/version.h"

#include <string.h>

bool rotor_json_stamp(cJSON *root) {
    if (!cJSON_IsObject(root)) return true; /* a document that is not an object has no keys to add */
    if (cJSON_GetObjectItemCaseSensitive(root, ROTOR_JSON_VERSION_KEY)) return true;
    cJSON *v = cJSON_CreateString(ROTOR_VERSION);
    if (!v) return false;
    /* the position: after "version", else after "format", else first */
    int at = 0, i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, root) {
        i++;
        if (it->string && !strcmp(it->string, "version")) at = i;
        else if (it->string && !strcmp(it->string, "format") && !at) at = i;
    }
    /* appended, then the keys after its place moved behind it in order
     * (cJSON inserts by index into arrays only) */
    cJSON_AddItemToObject(root, ROTOR_JSON_VERSION_KEY, v);
    for (int k = at; k < i; k++) cJSON_AddItemToArray(root, cJSON_DetachItemFromArray(root, at));
    return true;
}
