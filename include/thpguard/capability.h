/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Drops every capability for good: the bounding set where we may (it takes
 * CAP_SETPCAP), the ambient set, then the permitted, effective and
 * inheritable sets. After startup the daemon needs none: the THP files are
 * root's, 0644, and root may write them with no capability at all.
 * A process that has none already makes no capset() call, which a
 * seccomp filter may refuse.
 */
int capability_drop_all(void);
