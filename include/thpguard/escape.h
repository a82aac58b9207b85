/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Bytes from a policy, /proc or sysfs on their way out: every one of them is
 * hostile. Text for a terminal or a log gets printable ASCII only; a JSON
 * document gets valid UTF-8 (json-c escapes the control characters itself,
 * but passes any other byte through).
 */

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/*
 * Copies src[0..len) into buf as printable ASCII, "\xNN" for every other
 * byte and "\\" for a backslash (so the output reads back one way only:
 * a literal "\x1b" comes out as "\\x1b"), cutting at a whole character.
 * Returns false if it had to cut.
 */
bool escape_printable(const char *src, size_t len, char *buf, size_t size);

/* The same for a string; returns buf, for a printf() argument. */
const char *escape_str(const char *s, char *buf, size_t size);

/*
 * A copy of s in valid UTF-8: each byte that does not start a well-formed
 * sequence (RFC 3629: no overlong form, surrogate or code point above
 * U+10FFFF) becomes U+FFFD. NULL on ENOMEM.
 */
char *utf8_sanitize(const char *s);

/* json_object_new_string() of utf8_sanitize(s); NULL if s is NULL or on ENOMEM. */
struct json_object *json_string_utf8(const char *s);
