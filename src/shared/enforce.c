/* SPDX-License-Identifier: MIT */
#include "thpguard/enforce.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/sysfs.h"

_hot_ void enforce_knob(const Sysfs *s, const PolicyKnob *k, SysfsHandle *h, PolicyMode mode,
                        EnforceOutcome *ret) {
        EnforceOutcome o = { .action = ENFORCE_NONE };
        KnobStatus after;
        int r;

        compliance_read(s, k, h, &o.before);
        if (o.before.state != KNOB_STATE_DRIFT) {
                *ret = o;
                return;
        }
        if (mode == POLICY_MODE_AUDIT) {
                o.action = ENFORCE_AUDIT;
                *ret = o;
                return;
        }

        r = h ? sysfs_write_handle(s, k->path, h, k->desired) : sysfs_write(s, k->path, k->desired);
        if (r < 0) {
                o.action = ENFORCE_FAILED;
                o.error = r;
                *ret = o;
                return;
        }

        o.written = true;

        /* Confirm: the kernel may accept a write and keep another value. */
        compliance_read(s, k, h, &after);
        snprintf(o.after, sizeof(o.after), "%s", after.actual);
        if (after.state == KNOB_STATE_OK)
                o.action = ENFORCE_CORRECTED;
        else {
                o.action = ENFORCE_FAILED;
                /* EBADMSG: the write went through but the file no longer reads as a knob. */
                o.error = after.state == KNOB_STATE_ERROR ? -EBADMSG : -EIO;
        }
        *ret = o;
}

void enforce_describe_failure(const EnforceOutcome *o, char *buf, size_t size) {
        switch (-o->error) {
        case EROFS:
        case EACCES:
        case EPERM:
                snprintf(buf, size,
                         "sysfs is read-only here (%s): a read-only mount or an unprivileged container",
                         strerror(-o->error));
                break;
        case EINVAL:
                snprintf(buf, size, "the kernel rejected the value (%s)", strerror(-o->error));
                break;
        case EBADMSG:
                snprintf(buf, size, "the write went through, but the file no longer reads as a value");
                break;
        case EIO:
                if (o->after[0]) {
                        snprintf(buf, size, "the write did not stick: reads back %s", o->after);
                        break;
                }
                /* fallthrough */
        default:
                snprintf(buf, size, "write failed: %s", sysfs_strerror(-o->error));
        }
}
