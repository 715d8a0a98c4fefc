#!/usr/bin/env bash
# install-chromium.sh: install Debian's `chromium` for the report's browser test
# (tests/python/test_report_browser.py) when it is missing and we are root with apt-get.
# Otherwise say what is left out; never fails the caller (the test then skips itself).
set -u
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then exit 0; fi
done
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: no chromium and not root with apt-get: the report browser test will be skipped" \
       "(install Debian's chromium package to run it)"
  exit 0
fi
echo "install-chromium: installing Debian's chromium for the report browser test"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
  tail -5 "$log"
  echo "install-chromium: apt-get failed: the report browser test will be skipped"
fi
rm -f "$log"
exit 0
