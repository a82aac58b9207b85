/* SPDX-License-Identifier: MIT */
#pragma once

/* json-c calls newer than json-c 0.13 (RHEL 8), with their fallbacks; see src/CMakeLists.txt. */

#include <json-c/json.h>
#include <stdint.h>

#include "thpguard/macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* json_object_new_uint64() (json-c 0.14). Before it, a signed 64-bit integer: no counter reaches 2^63. */
static inline json_object *json_new_uint64(uint64_t v) {
#if HAVE_JSON_OBJECT_NEW_UINT64
        return json_object_new_uint64(v);
#else
        return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
#endif
}
