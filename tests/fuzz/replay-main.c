/* SPDX-License-Identifier: MIT */
/*
 * A main() for the harnesses where libFuzzer is not available (gcc): runs
 * each file given, or each file in each directory given, once through
 * LLVMFuzzerTestOneInput(). Built with ASan and UBSan, it replays the seed
 * corpus and every kept reproducer as a regression test.
 *
 * Each input is copied into a heap block of exactly its size, as libFuzzer
 * does, so a read one byte past the end is caught.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-common.h"

/* The input being run, so an exit() from inside the parser is reported, not passed. */
static const char *current_input;

static void exit_during_input(void) {
        if (current_input) {
                fprintf(stderr, "%s: the code under test called exit() on this input\n", current_input);
                _exit(1);
        }
}

static int run_file(const char *path) {
        struct stat st;
        uint8_t *data;
        size_t len = 0;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        /* malloc(0) may return NULL; one spare byte that is never part of the input. */
        data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
        if (!data) {
                close(fd);
                return -1;
        }
        while (len < (size_t)st.st_size) {
                ssize_t n = read(fd, data + len, (size_t)st.st_size - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        close(fd);
        if (st.st_size > 0 && len < (size_t)st.st_size) {
                /* Exact size again: the file shrank while we read it. */
                uint8_t *exact = malloc(len ? len : 1);
                if (!exact) {
                        free(data);
                        return -1;
                }
                memcpy(exact, data, len);
                free(data);
                data = exact;
        }
        fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
        current_input = path;
        LLVMFuzzerTestOneInput(data, len);
        current_input = NULL;
        free(data);
        return 0;
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *n_run) {
        struct dirent *de;
        char **names = NULL;
        size_t n = 0;
        int r = 0;
        DIR *d;

        d = opendir(dir);
        if (!d) {
                fprintf(stderr, "%s: %s\n", dir, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                char **nn;

                if (de->d_name[0] == '.')
                        continue;
                nn = realloc(names, (n + 1) * sizeof(*names));
                if (!nn) {
                        r = -1;
                        break;
                }
                names = nn;
                if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0) {
                        r = -1;
                        break;
                }
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof(*names), cmp_names);
        for (size_t i = 0; i < n; i++) {
                struct stat st;

                if (r == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
                        if (run_file(names[i]) < 0)
                                r = -1;
                        else
                                (*n_run)++;
                }
                free(names[i]);
        }
        free(names);
        return r;
}

int main(int argc, char *argv[]) {
        size_t n_run = 0;

        atexit(exit_during_input);
        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                if (S_ISDIR(st.st_mode)) {
                        if (run_dir(argv[i], &n_run) < 0)
                                return 1;
                } else if (run_file(argv[i]) < 0)
                        return 1;
                else
                        n_run++;
        }
        if (n_run == 0) {
                fprintf(stderr, "no input found: an empty corpus tests nothing\n");
                return 1;
        }
        fprintf(stderr, "%zu inputs replayed, no failure\n", n_run);
        return 0;
}
