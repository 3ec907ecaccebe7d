#!/usr/bin/env bash
# Truncated and bit-flipped bert payloads: a clear error naming the payload, or correct output.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
source "$(dirname "$0")/hostile_payloads.sh"
payload_corruption_suite bert
