/* SPDX-License-Identifier: MIT */
/*
 * write-knob FILE VALUE: what a tuning DaemonSet's container does to a THP
 * knob, built static for an image of its own. Prints "PID NETNS" (its pid
 * and its network namespace's inode, as the host numbers neither: in its
 * own namespaces), then writes VALUE to FILE once and exits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct stat st;
        int fd;

        if (argc != 3) {
                fprintf(stderr, "usage: write-knob FILE VALUE\n");
                return 2;
        }
        if (stat("/proc/self/ns/net", &st) < 0) {
                perror("write-knob: /proc/self/ns/net");
                return 1;
        }
        printf("%d %lu\n", (int)getpid(), (unsigned long)st.st_ino);
        fflush(stdout);
        fd = open(argv[1], O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, argv[2], strlen(argv[2])) < 0) {
                perror("write-knob");
                return 1;
        }
        return close(fd) < 0;
}
