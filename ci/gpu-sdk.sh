#!/usr/bin/env bash
# ci/gpu-sdk.sh - install (Debian 12 bookworm, root) what a cgo compile-check
# needs for one GPU vendor, then print the environment to use.
#
#   ci/gpu-sdk.sh cuda       headers + libs (nvidia-cuda-dev 11.8, non-free)
#   ci/gpu-sdk.sh cuda-lean  same headers + link stubs, unpacked from the .deb
#                            into $CUDA_LEAN_DIR (default /opt/cuda-lean) without
#                            dpkg: ~0.8 GB download, ~50 MB kept on disk
#   ci/gpu-sdk.sh nvcc       nvidia-cuda-toolkit 11.8 (nvcc; pulls gcc-11)
#   ci/gpu-sdk.sh hip        hipcc + libamdhip64-dev 5.2.3 (main)
#
# Idempotent: already-installed packages are skipped (no apt-get update then).
# Prints "export ..." lines on stdout for `eval "$(ci/gpu-sdk.sh X)"`; progress on stderr.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
log() { echo "ci-gpu-sdk: $*" >&2; }
SRC=/etc/apt/sources.list.d/debian-contrib-nonfree.sources
updated=0

need_nonfree() {
  if ! grep -rqsE '^Components:.*non-free( |$)|^deb .* non-free( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    log "adding $SRC"
    cat > "$SRC" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
}
apt_update_once() {
  if [ "$updated" = 0 ]; then
    log "apt-get update"; apt-get update -qq >&2; updated=1
  fi
}
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
apt_install() {
  local missing=()
  for p in "$@"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && { log "already installed: $*"; return 0; }
  apt_update_once
  log "apt-get install ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

case "${1:-}" in
  cuda)
    need_nonfree
    apt_install nvidia-cuda-dev
    # headers in /usr/include, libs (+ stubs/) in /usr/lib/x86_64-linux-gnu: default search paths
    echo 'export CGO_CFLAGS="-O2 -g"'
    echo 'export CGO_LDFLAGS="-O2 -g -L/usr/lib/x86_64-linux-gnu/stubs"'
    ;;
  cuda-lean)
    need_nonfree
    dir=${CUDA_LEAN_DIR:-/opt/cuda-lean}
    if [ ! -f "$dir/include/cuda.h" ]; then
      apt_update_once
      tmp=$(mktemp -d)
      (cd "$tmp" && apt-get download -qq nvidia-cuda-dev libcudart11.0 >&2)
      mkdir -p "$dir/unpack"
      # only headers, link stubs and libcudart: skips ~2.6 GB of static libs
      dpkg-deb --fsys-tarfile "$tmp"/nvidia-cuda-dev_*.deb | tar -x -C "$dir/unpack" --wildcards \
        './usr/include/*' './usr/lib/x86_64-linux-gnu/stubs/*' './usr/lib/x86_64-linux-gnu/libcudart.so'
      dpkg-deb --fsys-tarfile "$tmp"/libcudart11.0_*.deb | tar -x -C "$dir/unpack" --wildcards \
        './usr/lib/x86_64-linux-gnu/libcudart.so*'
      rm -rf "$tmp" "$dir/include" "$dir/lib64"
      mv "$dir/unpack/usr/include" "$dir/include"
      mkdir -p "$dir/lib64"
      mv "$dir/unpack/usr/lib/x86_64-linux-gnu/stubs" "$dir/lib64/stubs"
      mv "$dir/unpack/usr/lib/x86_64-linux-gnu/"libcudart.so* "$dir/lib64/"
      rm -rf "$dir/unpack"
    fi
    echo "export CUDA_HOME=$dir"
    echo "export CGO_CFLAGS=\"-O2 -g -I$dir/include\""
    echo "export CGO_LDFLAGS=\"-O2 -g -L$dir/lib64 -L$dir/lib64/stubs\""
    ;;
  nvcc)
    need_nonfree
    apt_install nvidia-cuda-toolkit
    # Debian's nvcc wrapper picks g++-11 (installed as a dependency); nvcc 11.8 rejects gcc 12.
    echo 'export NVCC=/usr/bin/nvcc'
    ;;
  hip)
    apt_install hipcc libamdhip64-dev
    # hipcc picks the nvidia platform when nvcc is on PATH and clang++ is not: force AMD.
    echo 'export HIP_PLATFORM=amd'
    echo 'export CGO_CFLAGS="-O2 -g -D__HIP_PLATFORM_AMD__"'
    echo 'export CGO_LDFLAGS="-O2 -g"'
    ;;
  *)
    echo "usage: $0 cuda|cuda-lean|nvcc|hip" >&2; exit 2 ;;
esac
