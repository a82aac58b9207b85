/* SPDX-License-Identifier: MIT */
#pragma once

/* What made the daemon look at a knob: a journal field, a log word and a metrics label. */

typedef enum Trigger {
        TRIGGER_STARTUP,
        TRIGGER_INOTIFY,
        TRIGGER_RECHECK,
        TRIGGER_RELOAD,
        TRIGGER_BPF, /* the BPF write probe saw the write (write-probe.h), through any sysfs mount */
        _TRIGGER_MAX,
} Trigger;

static inline const char *trigger_to_string(Trigger t) {
        static const char *const names[_TRIGGER_MAX] = {
                [TRIGGER_STARTUP] = "startup", [TRIGGER_INOTIFY] = "inotify", [TRIGGER_RECHECK] = "recheck",
                [TRIGGER_RELOAD] = "reload",   [TRIGGER_BPF] = "bpf",
        };

        return t >= 0 && t < _TRIGGER_MAX ? names[t] : "unknown";
}
