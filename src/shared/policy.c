/* SPDX-License-Identifier: MIT */
#include "thpguard/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy-prescan.h"
#include "thpguard/fileio.h"
#include "thpguard/path.h"

/*
 * Walks the libconfig tree. Each check reports into diag and goes on, so
 * one run lists every error of the file.
 */
typedef struct PolicyParser {
        const char *file;
        Diag *diag;
        Policy *policy;
        size_t n_alloc;
        const unsigned *wrapped_lines; /* lines whose integer was already reported as wrapped */
        size_t n_wrapped_lines;
} PolicyParser;

Policy *policy_free(Policy *p) {
        if (!p)
                return NULL;
        free(p->file);
        free(p->metrics_file);
        free(p->nfd_features_file);
        free(p->knobs);
        free(p);
        return NULL;
}

const char *policy_mode_to_string(PolicyMode mode) {
        return mode == POLICY_MODE_AUDIT ? "audit" : mode == POLICY_MODE_LOCK ? "lock" : "enforce";
}

static const char *type_name(int type) {
        switch (type) {
        case CONFIG_TYPE_GROUP:
                return "a group";
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
                return "an integer";
        case CONFIG_TYPE_FLOAT:
                return "a float";
        case CONFIG_TYPE_STRING:
                return "a string";
        case CONFIG_TYPE_BOOL:
                return "a boolean";
        case CONFIG_TYPE_ARRAY:
                return "an array";
        case CONFIG_TYPE_LIST:
                return "a list";
        default:
                return "nothing";
        }
}

static unsigned line_of(const config_setting_t *s) {
        return config_setting_source_line(s);
}

static bool expect_type(PolicyParser *pp, const config_setting_t *s, const char *name, int type,
                        const char *what) {
        int t = config_setting_type(s);

        if (t == type || (type == CONFIG_TYPE_INT && t == CONFIG_TYPE_INT64))
                return true;
        diag_error(pp->diag, pp->file, line_of(s), "%s: expected %s, got %s", name, what, type_name(t));
        return false;
}

/* An integer setting in [min, max], or false with the error reported. */
static bool get_uint(PolicyParser *pp, const config_setting_t *s, const char *name, uint64_t min,
                     uint64_t max, uint64_t *ret) {
        long long v;

        if (!expect_type(pp, s, name, CONFIG_TYPE_INT, "an integer"))
                return false;
        for (size_t i = 0; i < pp->n_wrapped_lines; i++)
                if (pp->wrapped_lines[i] == line_of(s))
                        return false; /* reported with the literal the user wrote */
        v = config_setting_get_int64(s);
        if (v < 0 || (uint64_t)v < min || (uint64_t)v > max) {
                diag_error(pp->diag, pp->file, line_of(s), "%s: %lld is out of range %" PRIu64 "..%" PRIu64,
                           name, v, min, max);
                return false;
        }
        *ret = (uint64_t)v;
        return true;
}

static int add_knob(PolicyParser *pp, const PolicyKnob *k) {
        Policy *p = pp->policy;

        if (p->n_knobs == pp->n_alloc) {
                size_t n = pp->n_alloc ? pp->n_alloc * 2 : 8;
                PolicyKnob *nk = realloc(p->knobs, n * sizeof(*nk));
                if (!nk)
                        return -ENOMEM;
                p->knobs = nk;
                pp->n_alloc = n;
        }
        p->knobs[p->n_knobs++] = *k;
        return 0;
}

static int parse_knob(PolicyParser *pp, KnobGroup group, const char *size, const KnobSpec *spec,
                      const config_setting_t *s, const char *name) {
        PolicyKnob k = { .spec = spec, .line = line_of(s) };
        char vocab[128];
        uint64_t u;
        int r;

        switch (spec->type) {
        case KNOB_CHOICE: {
                const char *word;

                if (!expect_type(pp, s, name, CONFIG_TYPE_STRING, "a string"))
                        return 0;
                word = config_setting_get_string(s);
                if (!knob_spec_accepts_word(spec, word)) {
                        knob_spec_vocabulary_string(spec, vocab, sizeof(vocab));
                        diag_error(pp->diag, pp->file, k.line, "%s: invalid value \"%s\" (expected %s)",
                                   name, word, vocab);
                        return 0;
                }
                snprintf(k.desired, sizeof(k.desired), "%s", word);
                break;
        }
        case KNOB_BOOL:
                if (!expect_type(pp, s, name, CONFIG_TYPE_BOOL, "a boolean (true or false)"))
                        return 0;
                snprintf(k.desired, sizeof(k.desired), "%d", config_setting_get_bool(s) ? 1 : 0);
                break;
        case KNOB_UINT:
                if (!get_uint(pp, s, name, spec->min, UINT_KNOB_MAX, &u))
                        return 0;
                snprintf(k.desired, sizeof(k.desired), "%" PRIu64, u);
                break;
        }

        r = knob_path_build(group, size, spec, k.path, sizeof(k.path));
        if (r < 0)
                return r;
        return add_knob(pp, &k);
}

static void unknown_key(PolicyParser *pp, const config_setting_t *s, const char *parent,
                        const char *expected) {
        diag_error(pp->diag, pp->file, line_of(s), "%s: unknown key \"%s\" (expected %s)", parent,
                   config_setting_name(s), expected);
}

static int parse_sizes(PolicyParser *pp, const config_setting_t *list);

/* The knobs of one group: thp, thp.khugepaged, or one thp.sizes entry, in file order. */
static int parse_knob_group(PolicyParser *pp, KnobGroup group, const char *size, const config_setting_t *g,
                            const char *gname) {
        char keys[256], name[128];
        int r;

        knob_group_keys(group, keys, sizeof(keys));
        for (int i = 0; i < config_setting_length(g); i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
                const char *key = config_setting_name(s);
                const KnobSpec *spec;

                if (group == KNOB_GROUP_SIZE && strcmp(key, "size") == 0)
                        continue;
                snprintf(name, sizeof(name), "%s.%s", gname, key);
                if (group == KNOB_GROUP_TOP && strcmp(key, "khugepaged") == 0) {
                        if (expect_type(pp, s, name, CONFIG_TYPE_GROUP, "a group, khugepaged = { ... }")) {
                                r = parse_knob_group(pp, KNOB_GROUP_KHUGEPAGED, NULL, s, name);
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                if (group == KNOB_GROUP_TOP && strcmp(key, "sizes") == 0) {
                        r = parse_sizes(pp, s);
                        if (r < 0)
                                return r;
                        continue;
                }
                spec = knob_spec_find(group, key);
                if (!spec) {
                        unknown_key(pp, s, gname, keys);
                        continue;
                }
                r = parse_knob(pp, group, size, spec, s, name);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_sizes(PolicyParser *pp, const config_setting_t *list) {
        int n = config_setting_length(list);
        char name[64];
        int r;

        if (!expect_type(pp, list, "thp.sizes", CONFIG_TYPE_LIST,
                         "a list of groups, ( { size = \"64kB\"; ... } )"))
                return 0;

        for (int i = 0; i < n; i++) {
                const config_setting_t *entry = config_setting_get_elem(list, (unsigned)i);
                const config_setting_t *size_s;
                const char *size;
                bool dup = false;

                snprintf(name, sizeof(name), "thp.sizes[%d]", i);
                if (!expect_type(pp, entry, name, CONFIG_TYPE_GROUP, "a group, { size = \"64kB\"; ... }"))
                        continue;
                size_s = config_setting_get_member(entry, "size");
                if (!size_s) {
                        diag_error(pp->diag, pp->file, line_of(entry), "%s: missing key \"size\"", name);
                        continue;
                }
                snprintf(name, sizeof(name), "thp.sizes[%d].size", i);
                if (!expect_type(pp, size_s, name, CONFIG_TYPE_STRING, "a string such as \"64kB\""))
                        continue;
                size = config_setting_get_string(size_s);
                if (!knob_size_is_valid(size)) {
                        diag_error(pp->diag, pp->file, line_of(size_s),
                                   "%s: malformed size \"%s\" (expected <digits>kB, such as \"64kB\")", name,
                                   size);
                        continue;
                }
                for (int j = 0; j < i && !dup; j++) {
                        const config_setting_t *other = config_setting_get_elem(list, (unsigned)j);
                        const config_setting_t *os =
                            config_setting_is_group(other) ? config_setting_get_member(other, "size") : NULL;

                        if (os && config_setting_type(os) == CONFIG_TYPE_STRING &&
                            strcmp(config_setting_get_string(os), size) == 0) {
                                diag_error(pp->diag, pp->file, line_of(size_s),
                                           "%s: duplicate size \"%s\" (first given at line %u)", name, size,
                                           line_of(os));
                                dup = true;
                        }
                }
                if (dup)
                        continue;

                snprintf(name, sizeof(name), "thp.sizes[%d]", i);
                r = parse_knob_group(pp, KNOB_GROUP_SIZE, size, entry, name);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_thp(PolicyParser *pp, const config_setting_t *thp) {
        if (!expect_type(pp, thp, "thp", CONFIG_TYPE_GROUP, "a group, thp = { ... }"))
                return 0;
        return parse_knob_group(pp, KNOB_GROUP_TOP, NULL, thp, "thp");
}

static int parse_root(PolicyParser *pp, const config_setting_t *root) {
        Policy *p = pp->policy;
        uint64_t u;

        for (int i = 0; i < config_setting_length(root); i++) {
                const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
                const char *key = config_setting_name(s);

                if (strcmp(key, "mode") == 0) {
                        const char *m;

                        if (!expect_type(pp, s, "mode", CONFIG_TYPE_STRING, "a string"))
                                continue;
                        m = config_setting_get_string(s);
                        if (strcmp(m, "enforce") == 0)
                                p->mode = POLICY_MODE_ENFORCE;
                        else if (strcmp(m, "audit") == 0)
                                p->mode = POLICY_MODE_AUDIT;
                        else if (strcmp(m, "lock") == 0)
                                p->mode = POLICY_MODE_LOCK;
                        else
                                diag_error(pp->diag, pp->file, line_of(s),
                                           "mode: invalid value \"%s\" (expected enforce, audit or lock)",
                                           m);
                } else if (strcmp(key, "write_probe_hook") == 0) {
                        const char *h;

                        if (!expect_type(pp, s, "write_probe_hook", CONFIG_TYPE_STRING, "a string"))
                                continue;
                        h = config_setting_get_string(s);
                        /* diag escapes what it is given */
                        if (write_probe_hook_from_string(h, &p->write_probe_hook) < 0)
                                diag_error(pp->diag, pp->file, line_of(s),
                                           "write_probe_hook: invalid value \"%s\" (expected auto, fexit, "
                                           "kprobe or syscall-exit)",
                                           h);
                        else
                                p->write_probe_hook_line = line_of(s);
                } else if (strcmp(key, "recheck_interval") == 0) {
                        if (get_uint(pp, s, "recheck_interval", POLICY_RECHECK_MIN, POLICY_RECHECK_MAX, &u))
                                p->recheck_interval_sec = (unsigned)u;
                } else if (strcmp(key, "fight_threshold") == 0) {
                        if (get_uint(pp, s, "fight_threshold", 0, POLICY_FIGHT_THRESHOLD_MAX, &u))
                                p->fight_threshold = (unsigned)u;
                } else if (strcmp(key, "fight_window") == 0) {
                        if (get_uint(pp, s, "fight_window", 1, POLICY_RECHECK_MAX, &u))
                                p->fight_window_sec = (unsigned)u;
                } else if (strcmp(key, "metrics_file") == 0 || strcmp(key, "nfd_features_file") == 0) {
                        char **dest = key[0] == 'm' ? &p->metrics_file : &p->nfd_features_file;
                        const char *m;

                        if (!expect_type(pp, s, key, CONFIG_TYPE_STRING, "a string"))
                                continue;
                        m = config_setting_get_string(s);
                        if (m[0] != '/') {
                                diag_error(pp->diag, pp->file, line_of(s),
                                           "%s: \"%s\" is not an absolute path", key, m);
                                continue;
                        }
                        if (dest == &p->metrics_file && !path_is_textfile_name(m)) {
                                diag_error(pp->diag, pp->file, line_of(s),
                                           "metrics_file: \"%s\" is not a NAME.prom file", m);
                                continue;
                        }
                        if (dest == &p->metrics_file)
                                p->metrics_file_line = line_of(s);
                        free(*dest);
                        *dest = strdup(m);
                        if (!*dest)
                                return -ENOMEM;
                } else if (strcmp(key, "thp") == 0) {
                        int r = parse_thp(pp, s);
                        if (r < 0)
                                return r;
                } else
                        unknown_key(pp, s, "policy",
                                    "mode, recheck_interval, fight_threshold, fight_window, metrics_file, "
                                    "nfd_features_file, write_probe_hook or thp");
        }
        return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(config_t *, config_destroy);

int policy_parse(const char *file, const char *buf, size_t len, Diag *diag, Policy **ret) {
        _cleanup_policy_ Policy *p = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_(policy_prescan_done) PolicyPrescan pre = {};
        config_t cfg_storage;
        _cleanup_(config_destroyp) config_t *cfg = NULL;
        size_t errors_before = diag->n_errors;
        PolicyParser pp;
        int r;

        if (len > POLICY_SIZE_MAX) {
                diag_error(diag, file, 0, "is %zu bytes; a policy may be at most %d bytes", len,
                           POLICY_SIZE_MAX);
                return -EFBIG;
        }
        if (memchr(buf, '\0', len)) {
                diag_error(diag, file, 0, "contains a NUL byte; a policy is a text file");
                return -EINVAL;
        }
        /* buf need not be NUL-terminated; libconfig and the @include scan want a string. */
        text = strndup(buf, len);
        if (!text)
                return -ENOMEM;
        r = policy_prescan(file, text, diag, &pre);
        if (r < 0)
                return r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->file = strdup(file);
        if (!p->file)
                return -ENOMEM;
        p->mode = POLICY_MODE_ENFORCE;
        p->recheck_interval_sec = POLICY_RECHECK_DEFAULT;
        p->fight_threshold = POLICY_FIGHT_THRESHOLD_DEFAULT;
        p->fight_window_sec = POLICY_FIGHT_WINDOW_DEFAULT;

        config_init(&cfg_storage);
        cfg = &cfg_storage;
        if (!config_read_string(cfg, text)) {
                diag_error(diag, file, (unsigned)config_error_line(cfg), "%s",
                           config_error_text(cfg) ? config_error_text(cfg) : "syntax error");
                return -EINVAL;
        }

        pp = (PolicyParser){ .file = file,
                             .diag = diag,
                             .policy = p,
                             .wrapped_lines = pre.wrapped_lines,
                             .n_wrapped_lines = pre.n_wrapped_lines };
        r = parse_root(&pp, config_root_setting(cfg));
        if (r < 0)
                return r;
        if (diag->n_errors > errors_before)
                return -EINVAL;
        /*
         * An error, not a warning: an empty or truncated file (an editor
         * mid-save) must not replace a good policy and silently stop enforcement.
         */
        if (p->n_knobs == 0) {
                diag_error(diag, file, 0, "manages no knob; set at least one key in thp = { ... }");
                return -EINVAL;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

int policy_check_owner(const char *file, const struct stat *st, uid_t euid, Diag *diag) {
        bool bad_owner = st->st_uid != 0;
        bool bad_mode = (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
        DiagLevel level = euid == 0 ? DIAG_ERROR : DIAG_WARNING;
        const char *consequence = euid == 0 ? "refusing it" : "thpguardd running as root would refuse it";

        if (bad_owner)
                diag_add(diag, level, file, 0, "owned by uid %u, not root; %s", (unsigned)st->st_uid,
                         consequence);
        if (bad_mode)
                diag_add(diag, level, file, 0, "mode %04o lets group or others write it; %s (chmod go-w)",
                         (unsigned)(st->st_mode & 07777), consequence);
        return euid == 0 && (bad_owner || bad_mode) ? -EPERM : 0;
}

/* What check_directory() needs to say why, and whether it did. */
typedef struct DirectoryCheck {
        const char *file;
        uid_t euid;
        Diag *diag;
        bool reported; /* it refused a directory, and said so */
} DirectoryCheck;

/* The StrictModes rule (dir_strict_modes(), fileio.h) for one directory the policy's path goes through. */
static int check_directory(int fd, const char *dir, void *userdata) {
        DirectoryCheck *c = userdata;
        DiagLevel level = c->euid == 0 ? DIAG_ERROR : DIAG_WARNING;
        const char *consequence = c->euid == 0 ? "refusing it" : "thpguardd running as root would refuse it";
        bool bad = false;
        unsigned faults;
        struct stat st;
        int r;

        r = dir_strict_modes(fd, &st, &faults);
        if (r < 0) {
                diag_error(c->diag, c->file, 0, "cannot stat directory %s: %s", dir, strerror(-r));
                c->reported = true;
                return r;
        }
        if (faults & DIR_FAULT_OWNER) {
                diag_add(c->diag, level, c->file, 0, "directory %s is owned by uid %u, not root; %s", dir,
                         (unsigned)st.st_uid, consequence);
                bad = true;
        }
        if (faults & DIR_FAULT_WRITABLE) {
                diag_add(c->diag, level, c->file, 0,
                         "directory %s is mode %04o: group or others can replace the policy; %s", dir,
                         (unsigned)(st.st_mode & 07777), consequence);
                bad = true;
        }
        c->reported = c->euid == 0 && bad;
        return c->reported ? -EPERM : 0;
}

/*
 * Opens the policy for reading the way the kernel would resolve its path,
 * so that every directory a name is looked up in, from / down and along
 * each symlink's target, passes check_directory() (as sshd's safe_path()
 * does, but for each link too: who may replace a link decides what is
 * read): open_path_checked(), fileio.h. Anything but a regular file at the
 * end is refused before it is opened.
 */
static int open_policy(const char *file, uid_t euid, Diag *diag, int *ret_fd) {
        DirectoryCheck c = { .file = file, .euid = euid, .diag = diag };
        int fd;

        fd = open_path_checked(file, check_directory, &c);
        if (fd == -EISDIR || fd == -EBADFD) {
                diag_error(diag, file, 0, "not a regular file");
                return -EINVAL;
        }
        if (fd < 0) {
                if (!c.reported)
                        diag_error(diag, file, 0, "cannot open: %s", strerror(-fd));
                return fd;
        }
        *ret_fd = fd;
        return 0;
}

int policy_load(const char *file, Diag *diag, Policy **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t len;
        struct stat st;
        int r;

        r = open_policy(file, geteuid(), diag, &fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                diag_error(diag, file, 0, "cannot stat: %s", strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                diag_error(diag, file, 0, "not a regular file");
                return -EINVAL;
        }
        if (st.st_size > POLICY_SIZE_MAX) {
                diag_error(diag, file, 0, "is %jd bytes; a policy may be at most %d bytes",
                           (intmax_t)st.st_size, POLICY_SIZE_MAX);
                return -EFBIG;
        }
        r = policy_check_owner(file, &st, geteuid(), diag);
        if (r < 0)
                return r;

        /* Sized by fstat(), plus one byte to notice a file that grew since and one for the NUL. */
        buf = malloc((size_t)st.st_size + 2);
        if (!buf)
                return -ENOMEM;
        r = read_fd(fd, buf, (size_t)st.st_size + 2, &len);
        if (r == -EFBIG) {
                diag_error(diag, file, 0, "changed while being read; try again");
                return -EAGAIN;
        }
        if (r < 0) {
                diag_error(diag, file, 0, "cannot read: %s", strerror(-r));
                return r;
        }
        return policy_parse(file, buf, len, diag, ret);
}

int policy_load_as_daemon(const char *file, PolicyMode mode, Diag *diag, Policy **ret) {
        Policy *p = NULL;
        int r;

        r = policy_load(file, diag, &p);
        if (r < 0)
                return r;
        if (mode != _POLICY_MODE_UNSET)
                p->mode = mode;
        *ret = p;
        return 0;
}
