#!/usr/bin/env bash
# pip install, patient with the network: `bash scripts/pip-install.sh PYTHON
# ARGS...` runs `PYTHON -m pip install --quiet ARGS...`, and when it fails,
# runs it again, three attempts in all, 20 s and then 40 s apart.
#
# Why: the package registries drop connections now and then.  A CI run once
# ended after 42 s on one wheel cut off at 524 kB of 1 MB, six resumes in a
# row.  pip is also told to retry a connection 10 times (PIP_RETRIES), to
# resume a cut download 20 times (PIP_RESUME_RETRIES, pip >= 25.1; an older
# pip ignores it) and to wait 60 s for a stalled one (PIP_TIMEOUT); a value
# already in the environment wins.  A download that completed is cached, so
# a second attempt fetches only what failed.
#
# Exit status: 0 once an attempt succeeds, else the last attempt's status.
set -uo pipefail
if [ $# -lt 2 ]; then
    echo "usage: bash scripts/pip-install.sh PYTHON ARGS..." >&2
    exit 2
fi
py=$1
shift
export PIP_RETRIES=${PIP_RETRIES:-10} PIP_RESUME_RETRIES=${PIP_RESUME_RETRIES:-20}
export PIP_TIMEOUT=${PIP_TIMEOUT:-60} PIP_DISABLE_PIP_VERSION_CHECK=1
attempts=3
for attempt in $(seq 1 $attempts); do
    "$py" -m pip install --quiet "$@"
    status=$?
    [ $status -eq 0 ] && exit 0
    if [ "$attempt" -lt $attempts ]; then
        wait_s=$((attempt * 20))
        echo "pip install failed (exit $status, attempt $attempt of $attempts);" \
             "trying again in $wait_s s" >&2
        sleep $wait_s
    fi
done
echo "pip install failed $attempts times: see pip's messages above" >&2
exit $status
