/* SPDX-License-Identifier: MIT */
#include "nfd-features.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/fileio.h"

struct NfdFile {
        char *path;
        char written[NFD_FILE_MAX]; /* what the file holds, as far as we know */
        size_t written_len;
        bool valid; /* written[] is the file's content */
        int error;
};

static bool is_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void nfd_label_value(const char *s, char *buf, size_t size) {
        size_t n = 0, max = size > 0 ? size - 1 : 0;

        if (max > NFD_LABEL_VALUE_MAX - 1)
                max = NFD_LABEL_VALUE_MAX - 1;
        for (; *s && n < max; s++)
                buf[n++] = is_alnum(*s) || *s == '.' || *s == '_' || *s == '-' ? *s : '-';
        /* Must start and end with an alphanumeric character. */
        while (n > 0 && !is_alnum(buf[n - 1]))
                n--;
        buf[n] = '\0';
        if (n > 0 && !is_alnum(buf[0])) {
                size_t skip = strspn(buf, "._-");

                memmove(buf, buf + skip, n - skip + 1);
        }
}

static int add_label(char *buf, size_t size, size_t *len, const char *name, const char *value) {
        char v[NFD_LABEL_VALUE_MAX];
        int r;

        if (!value)
                return 0;
        nfd_label_value(value, v, sizeof(v));
        if (!v[0])
                return 0;
        r = snprintf(buf + *len, size - *len, NFD_LABEL_PREFIX "%s=%s\n", name, v);
        if (r < 0 || (size_t)r >= size - *len)
                return -ENOBUFS;
        *len += (size_t)r;
        return 0;
}

int nfd_features_render(const NfdLabels *l, char *buf, size_t size, size_t *ret_len) {
        static const char header[] =
            "# thpguardd keeps this node-feature-discovery feature file: the node's THP\n"
            "# mode and whether it complies with the policy. Rewritten on change.\n";
        size_t len = 0;
        int r;

        if (size < sizeof(header))
                return -ENOBUFS;
        memcpy(buf, header, sizeof(header));
        len = sizeof(header) - 1;
        r = add_label(buf, size, &len, "enabled", l->enabled[0] ? l->enabled : NULL);
        if (r >= 0)
                r = add_label(buf, size, &len, "defrag", l->defrag[0] ? l->defrag : NULL);
        if (r >= 0)
                r = add_label(buf, size, &len, "compliant",
                              l->compliant < 0 ? NULL
                              : l->compliant   ? "true"
                                               : "false");
        if (r >= 0)
                r = add_label(buf, size, &len, "policy-mode", l->policy_mode);
        if (r < 0)
                return r;
        *ret_len = len;
        return 0;
}

int nfd_file_new(const char *path, NfdFile **ret) {
        NfdFile *f;

        if (!path || path[0] != '/')
                return -EINVAL;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->path = strdup(path);
        if (!f->path) {
                free(f);
                return -ENOMEM;
        }
        *ret = f;
        return 0;
}

NfdFile *nfd_file_free(NfdFile *f) {
        if (f) {
                free(f->path);
                free(f);
        }
        return NULL;
}

const char *nfd_file_path(const NfdFile *f) {
        return f->path;
}

int nfd_file_error(const NfdFile *f) {
        return f->error;
}

int nfd_file_update(NfdFile *f, const NfdLabels *l) {
        char text[NFD_FILE_MAX];
        size_t len;
        int r;

        r = nfd_features_render(l, text, sizeof(text), &len);
        if (r < 0)
                return r;
        if (f->valid && len == f->written_len && memcmp(text, f->written, len) == 0)
                return 0;
        r = write_file_atomic(f->path, text, len);
        f->error = r < 0 ? r : 0;
        f->valid = r >= 0;
        if (r < 0)
                return r;
        memcpy(f->written, text, len);
        f->written_len = len;
        return 1;
}
