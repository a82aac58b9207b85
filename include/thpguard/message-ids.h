/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The journal MESSAGE_IDs, one per event type. They are a contract: the
 * catalog (thpguard.catalog), alerting rules and `journalctl MESSAGE_ID=`
 * queries depend on them. Never change one; add a new one instead.
 */

#define THPGUARD_MESSAGE_CORRECTED         "5b0a3c7e2f8d4e61a9c4d2b7f1e08a31"
#define THPGUARD_MESSAGE_CORRECTION_FAILED "c3e9174a6b2d48f0b5a18e6d9f2c7b04"
#define THPGUARD_MESSAGE_AUDIT_DRIFT       "8d41f6b29e0c4a7d93b5e2a1c6f8d057"
#define THPGUARD_MESSAGE_POLICY_RELOADED   "1f7c2e94d5a84b36b0e9c3a7d2f6e418"
#define THPGUARD_MESSAGE_POLICY_REJECTED   "e6a0b3d8c1f94e27a5d7b9c2e4f1a863"
#define THPGUARD_MESSAGE_WRITER_FIGHT      "47d9e2c1a8b64f05b3e7d0a9c5f2e196"
/* At startup: which write source is in force (THPGUARD_WRITE_SOURCE, write-source.h), and why. */
#define THPGUARD_MESSAGE_WRITE_SOURCE "b35413fac67548eb8690c045cb4c2b7f"
/* Lock mode: at startup, what refuses other writers (THPGUARD_LOCK, write-source.h), and why none. */
#define THPGUARD_MESSAGE_LOCK "e5c9950567d4448a9bfac4cd37549ff1"
/* Lock mode: a write to a knob refused, and who tried. */
#define THPGUARD_MESSAGE_WRITE_REFUSED "7b4bad02aeec4e5999c53cd2130f7364"
