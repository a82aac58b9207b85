/* SPDX-License-Identifier: MIT */
/*
 * Is a process a Go program? Go binaries are usually static and their
 * mappings name only the binary, so smaps cannot tell; the ELF section
 * table can: the Go linker always emits .go.buildinfo (1.13+) or
 * .note.go.buildid. Only the section headers and their name table are read.
 * (A JVM is told by its libjvm.so mapping, in smaps: see pid.c.)
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

/* Go binaries have about 40 sections; a bound keeps a hostile file cheap. */
#define SECTIONS_MAX 4096
#define SHSTRTAB_MAX (1024 * 1024)

static bool read_exact(int fd, void *buf, size_t size, uint64_t offset) {
        ssize_t n;

        if (offset > (uint64_t)INT64_MAX)
                return false;
        n = pread(fd, buf, size, (off_t)offset);
        return n >= 0 && (size_t)n == size;
}

const char *ctl_language_runtime_to_string(CtlLanguageRuntime r) {
        switch (r) {
        case CTL_LANGUAGE_RUNTIME_GO:
                return "go";
        case CTL_LANGUAGE_RUNTIME_JVM:
                return "jvm";
        default:
                return "unknown";
        }
}

bool ctl_exe_is_go(const char *proc_root, uint64_t pid) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ Elf64_Shdr *sh = NULL;
        _cleanup_free_ char *names = NULL;
        char rel[64], path[PATH_MAX];
        Elf64_Ehdr eh;

        snprintf(rel, sizeof(rel), "%" PRIu64 "/exe", pid);
        if (path_join_root(proc_root, rel, path, sizeof(path)) < 0)
                return false;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || !read_exact(fd, &eh, sizeof(eh), 0))
                return false;
        /* 64-bit native-endian only: other binaries simply get the generic advice. */
        if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
            eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > SECTIONS_MAX ||
            eh.e_shstrndx >= eh.e_shnum)
                return false;
        sh = calloc(eh.e_shnum, sizeof(*sh));
        if (!sh || !read_exact(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff))
                return false;
        if (sh[eh.e_shstrndx].sh_size == 0 || sh[eh.e_shstrndx].sh_size > SHSTRTAB_MAX)
                return false;
        names = malloc(sh[eh.e_shstrndx].sh_size + 1);
        if (!names || !read_exact(fd, names, sh[eh.e_shstrndx].sh_size, sh[eh.e_shstrndx].sh_offset))
                return false;
        names[sh[eh.e_shstrndx].sh_size] = '\0';
        for (size_t i = 0; i < eh.e_shnum; i++) {
                const char *name;

                if (sh[i].sh_name >= sh[eh.e_shstrndx].sh_size)
                        continue;
                name = names + sh[i].sh_name;
                if (strcmp(name, ".go.buildinfo") == 0 || strcmp(name, ".note.go.buildid") == 0)
                        return true;
        }
        return false;
}
