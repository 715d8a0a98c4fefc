#!/usr/bin/env bash
# fetch-sources.sh WORK: obtain the peer test suites from package registries (never
# from a source-code host) into WORK/downloads and unpack the test folders into WORK/src.
#   - MPICH's test/mpi tree from Debian's `mpich` source package, through a private apt
#     configuration under WORK/apt (its own sources list, lists and cache; the system's
#     apt state is neither read for sources nor written);
#   - mpi4py's test folder from its source distribution on PyPI.
# Downloads are kept, so a second run needs no network.
# Exit status: 0 ready, 3 a source could not be obtained (message on stderr).
set -euo pipefail
work=${1:?usage: fetch-sources.sh WORK}
debian_suite=${PEER_DEBIAN_SUITE:-bookworm}
mpi4py_version=${PEER_MPI4PY_VERSION:-4.1.2}
python=${PEER_PIP_PYTHON:-python3}
downloads="$work/downloads"
src="$work/src"
mkdir -p "$downloads" "$src"
say() { printf '[peer-tests] %s\n' "$*"; }
unavailable() { printf '[peer-tests] SOURCES UNAVAILABLE: %s\n' "$*" >&2; exit 3; }

fetch_mpich() {
  if ls "$downloads"/mpich_*.orig.tar.* >/dev/null 2>&1; then return 0; fi
  command -v apt-get >/dev/null 2>&1 || unavailable "apt-get is not installed: cannot fetch Debian's mpich source package"
  local apt="$work/apt"
  mkdir -p "$apt/etc/sources.list.d" "$apt/etc/apt.conf.d" "$apt/etc/preferences.d" \
           "$apt/lists/partial" "$apt/cache/archives/partial"
  echo "deb-src http://deb.debian.org/debian $debian_suite main" >"$apt/etc/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt/etc/sources.list" -o "Dir::Etc::SourceParts=$apt/etc/sources.list.d"
              -o "Dir::Etc::Parts=$apt/etc/apt.conf.d" -o "Dir::Etc::PreferencesParts=$apt/etc/preferences.d"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
              -o Debug::NoLocking=1 -o APT::Sandbox::User=root -o Acquire::Retries=2)
  say "fetching Debian $debian_suite's mpich source package (private apt configuration)"
  timeout 120 apt-get -q "${opts[@]}" update >"$apt/update.log" 2>&1 \
    || { tail -3 "$apt/update.log" >&2; unavailable "apt-get update of the private deb-src list failed (no network?)"; }
  (cd "$downloads" && timeout 600 apt-get -q "${opts[@]}" source --download-only mpich) >"$apt/source.log" 2>&1 \
    || { tail -3 "$apt/source.log" >&2; unavailable "apt-get source --download-only mpich failed"; }
  ls "$downloads"/mpich_*.orig.tar.* >/dev/null 2>&1 || unavailable "the mpich source package has no orig tarball"
}

fetch_mpi4py() {
  if [ -f "$downloads/mpi4py-$mpi4py_version.tar.gz" ]; then return 0; fi
  say "fetching the mpi4py $mpi4py_version source distribution from PyPI"
  # --no-binary for mpi4py only: its build requirements may come as wheels, which keeps
  # pip's metadata step to seconds instead of minutes.
  timeout 300 "$python" -m pip download --disable-pip-version-check -q --no-deps --no-binary mpi4py \
      -d "$downloads" "mpi4py==$mpi4py_version" >"$downloads/pip.log" 2>&1 \
    || { tail -3 "$downloads/pip.log" >&2; unavailable "pip download of the mpi4py $mpi4py_version sdist failed (no network?)"; }
}

unpack() {
  local tarball
  tarball=$(ls "$downloads"/mpich_*.orig.tar.* | head -1)
  local top
  top=$(tar -tf "$tarball" 2>/dev/null | head -1 | cut -d/ -f1 || true)   # tar ends on SIGPIPE
  if [ ! -f "$src/.mpich-unpacked" ] || [ "$(cat "$src/.mpich-unpacked")" != "$top" ]; then
    say "unpacking the MPICH test folders from $(basename "$tarball")"
    rm -rf "$src/mpich"
    mkdir -p "$src/mpich"
    local t="$top/test/mpi"
    tar -xf "$tarball" -C "$src/mpich" --strip-components=3 \
      "$t/part" "$t/threads/part" "$t/util" "$t/include" "$t/dtpools" "$t/maint" \
      || unavailable "$(basename "$tarball") lacks test/mpi/{part,threads/part,util,include,dtpools,maint}"
    echo "$top" >"$src/.mpich-unpacked"
  fi
  if [ ! -f "$src/.mpi4py-unpacked" ] || [ "$(cat "$src/.mpi4py-unpacked")" != "$mpi4py_version" ]; then
    say "unpacking mpi4py $mpi4py_version's test folder"
    rm -rf "$src/mpi4py-test"
    mkdir -p "$src/mpi4py-test"
    tar -xzf "$downloads/mpi4py-$mpi4py_version.tar.gz" -C "$src/mpi4py-test" --strip-components=2 \
      "mpi4py-$mpi4py_version/test" || unavailable "the mpi4py sdist has no test folder"
    [ -f "$src/mpi4py-test/test_p2p_buf_part.py" ] || unavailable "the mpi4py sdist has no test/test_p2p_buf_part.py"
    echo "$mpi4py_version" >"$src/.mpi4py-unpacked"
  fi
}

fetch_mpich
fetch_mpi4py
unpack
