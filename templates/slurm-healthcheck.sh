#!/usr/bin/env bash
# Slurm health check for the NVGEMM stack, from envcheck (templates/slurm-healthcheck.sh).
#
# Install on every GPU node and name it in slurm.conf:
#   HealthCheckProgram=/etc/slurm/envcheck-healthcheck.sh
#   HealthCheckInterval=3600
# It runs `envcheck doctor` (node-problem-detector mode: one line, exit 0 OK, 1 problem, 2 unknown) against the
# job environment's interpreter, and drains the node with the failing finding as the reason when a required
# check fails. It resumes nothing: a node drained by envcheck is resumed by a person (`scontrol update
# nodename=NODE state=resume`) once `envcheck fix` has run.
#
# Settings (environment, or edit the defaults here):
#   ENVCHECK       the envcheck executable                (default: envcheck on PATH)
#   STACK_PYTHON   the interpreter jobs use               (default: python3 on PATH)
#   ENVCHECK_ARGS  more doctor flags, e.g. "--profile /etc/envcheck/profile.toml"
#   REPORT_DIR     where the node's JSON report is kept   (default: /var/lib/envcheck)
set -euo pipefail

ENVCHECK="${ENVCHECK:-envcheck}"
STACK_PYTHON="${STACK_PYTHON:-python3}"
REPORT_DIR="${REPORT_DIR:-/var/lib/envcheck}"
read -r -a EXTRA <<< "${ENVCHECK_ARGS:-}"
NODE="$(hostname -s)"

mkdir -p "${REPORT_DIR}"
# The full report, for `envcheck fleet` and for people; its exit code is not the verdict here.
"${ENVCHECK}" doctor --python "${STACK_PYTHON}" --json -o "${REPORT_DIR}/${NODE}.json" "${EXTRA[@]}" || true

status=0
line="$("${ENVCHECK}" doctor --python "${STACK_PYTHON}" --format npd "${EXTRA[@]}")" || status=$?
case "${status}" in
  0) exit 0 ;;
  1)
    reason="envcheck: ${line}"
    logger -t envcheck "draining ${NODE}: ${reason}" || true
    scontrol update nodename="${NODE}" state=drain reason="${reason:0:120}"
    exit 1
    ;;
  *)
    # Unknown (envcheck could not decide): say so, drain nothing.
    logger -t envcheck "health check of ${NODE} inconclusive: ${line}" || true
    exit 0
    ;;
esac
