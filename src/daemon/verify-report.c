/* SPDX-License-Identifier: MIT */
#include "verify-report.h"

#include <errno.h>
#include <json-c/json.h>

#include "thpguard/escape.h"
#include "thpguard/json-util.h"
#include "thpguard/macro.h"

/* Every string escaped: the parsers vouch for the words, this for the terminal. */
void report_verify_text(FILE *f, const Policy *p, const KnobStatus *statuses) {
        fprintf(f, "%-32s %-14s %-14s %s\n", "KNOB", "DESIRED", "ACTUAL", "STATE");
        for (size_t i = 0; i < p->n_knobs; i++) {
                const KnobStatus *st = &statuses[i];
                char desired[4 * KNOB_VALUE_MAX], actual[4 * KNOB_VALUE_MAX], reason[4 * sizeof(st->reason)];

                fprintf(f, "%-32s %-14s %-14s %s", p->knobs[i].path,
                        escape_str(p->knobs[i].desired, desired, sizeof(desired)),
                        st->actual[0] ? escape_str(st->actual, actual, sizeof(actual)) : "-",
                        knob_state_to_string(st->state));
                if (st->reason[0])
                        fprintf(f, " (%s)", escape_str(st->reason, reason, sizeof(reason)));
                fputc('\n', f);
        }
}

int report_verify_json(FILE *f, const Policy *p, const Sysfs *s, const KnobStatus *statuses,
                       const char *write_source, const char *write_source_detail) {
        _cleanup_(json_object_putp) json_object *root = json_object_new_object();
        json_object *knobs = json_object_new_array();
        bool compliant = true;

        if (!root || !knobs) {
                json_object_put(knobs);
                return -ENOMEM;
        }
        json_object_object_add(root, "config", json_string_utf8(p->file));
        json_object_object_add(root, "sysfs_root", json_string_utf8(s->root));
        json_object_object_add(root, "mode", json_object_new_string(policy_mode_to_string(p->mode)));
        for (size_t i = 0; i < p->n_knobs; i++) {
                const KnobStatus *st = &statuses[i];
                json_object *row = json_object_new_object();

                if (!row)
                        return -ENOMEM;
                json_object_object_add(row, "knob", json_string_utf8(p->knobs[i].path));
                json_object_object_add(row, "desired", json_string_utf8(p->knobs[i].desired));
                json_object_object_add(row, "actual", st->actual[0] ? json_string_utf8(st->actual) : NULL);
                json_object_object_add(row, "state",
                                       json_object_new_string(knob_state_to_string(st->state)));
                if (st->reason[0])
                        json_object_object_add(row, "reason", json_string_utf8(st->reason));
                json_object_array_add(knobs, row);
                if (st->state == KNOB_STATE_DRIFT || st->state == KNOB_STATE_ERROR)
                        compliant = false;
        }
        json_object_object_add(root, "compliant", json_object_new_boolean(compliant));
        json_object_object_add(root, "knobs", knobs);
        json_object_object_add(root, "write_source", json_object_new_string(write_source));
        json_object_object_add(root, "write_source_detail", json_string_utf8(write_source_detail));

        fprintf(f, "%s\n",
                json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
        return 0;
}
