/* SPDX-License-Identifier: MIT */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/escape.h"

#define LIT(s) s, sizeof(s) - 1

static void test_printable(void **state) {
        char buf[8], big[64];

        assert_true(escape_printable(LIT("abc"), buf, sizeof(buf)));
        assert_string_equal(buf, "abc");
        assert_true(escape_printable(LIT("abc\x01"), buf, sizeof(buf))); /* 7 characters and the NUL */
        assert_string_equal(buf, "abc\\x01");
        assert_false(escape_printable(LIT("abcd\x01"), buf, sizeof(buf))); /* no room for a whole escape */
        assert_string_equal(buf, "abcd");
        assert_true(escape_printable(LIT("\x7f"), buf, sizeof(buf)));
        assert_string_equal(buf, "\\x7f");
        assert_false(escape_printable(LIT("x"), buf, 0));

        /* The hostile policy value: no ESC, no newline, no byte above 0x7e left. */
        assert_string_equal(escape_str("\xff\x1b[31mRED\n", big, sizeof(big)), "\\xff\\x1b[31mRED\\x0a");
        assert_string_equal(escape_str("", big, sizeof(big)), "");

        /*
         * A backslash is doubled: a comm that spells "\x1b" with four
         * printable bytes must not read like the escape of a real ESC, and
         * two different names must never come out as one label.
         */
        assert_string_equal(escape_str("a\\x1bb", big, sizeof(big)), "a\\\\x1bb");
        assert_string_equal(escape_str("a\x1b"
                                       "b",
                                       big, sizeof(big)),
                            "a\\x1bb");
        assert_string_not_equal(escape_str("a\\x1bb", big, sizeof(big)), escape_str("a\x1b"
                                                                                    "b",
                                                                                    buf, sizeof(buf)));
        assert_true(escape_printable(LIT("ab\\"), buf, sizeof(buf)));
        assert_string_equal(buf, "ab\\\\");
        /* A doubled backslash is never cut in half. */
        assert_false(escape_printable(LIT("abcdef\\"), buf, sizeof(buf)));
        assert_string_equal(buf, "abcdef");
}

static void expect_sanitized(const char *in, const char *want) {
        char *out = utf8_sanitize(in);

        assert_non_null(out);
        assert_string_equal(out, want);
        free(out);
}

#define FFFD "\xef\xbf\xbd"

static void test_utf8(void **state) {
        /* Valid UTF-8 passes as it is, 1 to 4 bytes a character, the extremes included. */
        expect_sanitized("", "");
        expect_sanitized("plain \x1b[31m ASCII\n", "plain \x1b[31m ASCII\n");
        expect_sanitized("na\xc3\xafve \xe2\x82\xac \xf0\x9f\x90\xa7",
                         "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x90\xa7");
        expect_sanitized("\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
                         "\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");

        /* Every other byte becomes U+FFFD, one for each, and what follows is read afresh. */
        expect_sanitized("\xff\x1b[31mRED\n", FFFD "\x1b[31mRED\n");
        expect_sanitized("a\x80z", "a" FFFD "z");         /* a lone continuation byte */
        expect_sanitized("\xc3", FFFD);                   /* cut at the end */
        expect_sanitized("\xe2\x82z", FFFD FFFD "z");     /* cut in the middle */
        expect_sanitized("\xc0\xaf", FFFD FFFD);          /* overlong "/" */
        expect_sanitized("\xe0\x80\xaf", FFFD FFFD FFFD); /* overlong, 3 bytes */
        expect_sanitized("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD);
        expect_sanitized("\xed\xa0\x80", FFFD FFFD FFFD);          /* a UTF-16 surrogate, U+D800 */
        expect_sanitized("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* U+110000 */
        expect_sanitized("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
        expect_sanitized("\xc3\xc3\xaf", FFFD "\xc3\xaf");
}

/* What a JSON parser must accept: json-c escapes the controls, the rest is now valid UTF-8. */
static void test_json(void **state) {
        json_object *o = json_object_new_object();
        const char *text;

        assert_null(json_string_utf8(NULL));
        json_object_object_add(o, "v", json_string_utf8("\xff\x1b[31mRED\n"));
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        assert_string_equal(text, "{\"v\":\"" FFFD "\\u001b[31mRED\\n\"}");
        json_object_put(o);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_printable),
                cmocka_unit_test(test_utf8),
                cmocka_unit_test(test_json),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
