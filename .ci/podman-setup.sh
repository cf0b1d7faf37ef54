#!/usr/bin/env bash
# podman-setup.sh - rootful podman + podman-compose + a locally built
# "python:3.11-slim-bookworm" base image, for a Debian bookworm machine that
# reaches only the Debian and PyPI package registries (no image registry).
#
# Idempotent: every step checks whether it is already done and skips it.
# Exits non-zero with a message on the first step that cannot be done.
#
# Tunables (environment):
#   PC_VENV=/opt/podman-compose              venv that holds podman-compose
#   PODMAN_COMPOSE_VERSION=1.6.0      pinned podman-compose (empty = latest)
#   BASE_TAG=docker.io/library/python:3.11-slim-bookworm
#   SUITE=bookworm                    Debian suite for the base rootfs
#   ROOTFS=/tmp/rootfs-$SUITE         debootstrap target (kept for re-import)
#   DEBIAN_MIRROR=<from apt sources>  mirror passed to debootstrap
#   BASE_INCLUDE=python3,python3-venv,python-is-python3,ca-certificates
#   FORCE_BASE=1                      rebuild rootfs and re-import the image
#   SELFTEST=1                        also run an offline build + compose smoke test
set -Eeuo pipefail

PC_VENV=${PC_VENV:-/opt/podman-compose}
PODMAN_COMPOSE_VERSION=${PODMAN_COMPOSE_VERSION-1.6.0}
BASE_TAG=${BASE_TAG:-docker.io/library/python:3.11-slim-bookworm}
SUITE=${SUITE:-bookworm}
ROOTFS=${ROOTFS:-/tmp/rootfs-$SUITE}
BASE_INCLUDE=${BASE_INCLUDE:-python3,python3-venv,python-is-python3,ca-certificates}
FORCE_BASE=${FORCE_BASE:-0}
SELFTEST=${SELFTEST:-0}
APT_PACKAGES=(podman runc netavark aardvark-dns iptables uidmap slirp4netns fuse-overlayfs debootstrap)

log()  { printf '[podman-setup] %s\n' "$*" >&2; }
die()  { printf '[podman-setup] ERROR: %s\n' "$*" >&2; exit 1; }
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR
timed() { # timed LABEL cmd...
  local label=$1 t0=$SECONDS; shift
  "$@"
  log "TIME $label: $((SECONDS - t0))s"
}

# ---------------------------------------------------------------- 0. sanity
[ "$(id -u)" -eq 0 ] || die "must run as root (rootful podman; apt-get; debootstrap)"
command -v apt-get >/dev/null || die "apt-get not found: this script targets Debian"
[ "$(uname -s)" = Linux ] || die "Linux only"

# ---------------------------------------------------------------- 1. packages
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  timed apt-get-update apt-get update -q
  timed apt-get-install env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" \
    || die "apt-get install ${missing[*]} failed"
else
  log "apt packages already installed"
fi
command -v podman >/dev/null || die "podman not on PATH after install"

# ---------------------------------------------------------------- 2. config
# toml_set FILE SECTION KEY VALUE: set KEY=VALUE in [SECTION], keeping the rest.
toml_set() {
  local f=$1 sec=$2 key=$3 val=$4 tmp
  tmp=$(mktemp)
  awk -v sec="[$sec]" -v key="$key" -v val="$val" '
    function emit() { print key " = " val; done = 1 }
    /^[[:space:]]*\[/ {
      if (insec && !done) emit()
      s = $0; gsub(/[[:space:]]/, "", s); insec = (s == sec)
      print; next
    }
    insec && $0 ~ "^[[:space:]]*" key "[[:space:]]*=" { if (!done) emit(); next }
    { print }
    END { if (!done) { if (!insec) print "\n" sec; emit() } }
  ' "$f" > "$tmp"
  cat "$tmp" > "$f"; rm -f "$tmp"
}
CONF=/etc/containers/containers.conf
mkdir -p /etc/containers
[ -f "$CONF" ] || : > "$CONF"
before=$(md5sum < "$CONF")
toml_set "$CONF" containers default_ulimits '[]'
toml_set "$CONF" engine cgroup_manager '"cgroupfs"'
toml_set "$CONF" engine runtime '"runc"'
toml_set "$CONF" network network_backend '"netavark"'
[ "$before" = "$(md5sum < "$CONF")" ] && log "$CONF already configured" || log "wrote $CONF"

# Storage: overlay if it works, else fall back to vfs.
driver=$(podman info --format '{{.Store.GraphDriverName}}' 2>/dev/null) \
  || die "podman info failed: $(podman info 2>&1 | tail -3)"
log "storage driver: $driver, network backend: $(podman info --format '{{.Host.NetworkBackend}}')"
# Probe: import a one-file image, create a container, mount its rootfs (this is
# exactly what overlay must do for every container), look for the file.
overlay_ok() {
  local d cid ok=1 img=localhost/podman-setup-probe:latest
  d=$(mktemp -d); echo probe > "$d/probe"
  if tar -C "$d" -c probe | podman import -q - "$img" >/dev/null 2>&1 \
     && cid=$(podman create -q --network=none "$img" /probe 2>/dev/null); then
    mnt=$(podman mount "$cid" 2>/dev/null) && [ -f "$mnt/probe" ] && ok=0
    podman umount "$cid" >/dev/null 2>&1 || true
    podman rm -f "$cid" >/dev/null 2>&1 || true
  fi
  podman rmi -f "$img" >/dev/null 2>&1 || true
  rm -rf "$d"; return $ok
}
if [ "$driver" = overlay ] && ! overlay_ok; then
  log "overlay storage does not work here; switching to vfs in /etc/containers/storage.conf (resets /var/lib/containers/storage)"
  [ -f /etc/containers/storage.conf ] || cp /usr/share/containers/storage.conf /etc/containers/storage.conf 2>/dev/null \
    || printf '[storage]\nrunroot = "/run/containers/storage"\ngraphroot = "/var/lib/containers/storage"\n' > /etc/containers/storage.conf
  toml_set /etc/containers/storage.conf storage driver '"vfs"'
  podman system reset -f >/dev/null 2>&1 || true
  [ "$(podman info --format '{{.Store.GraphDriverName}}')" = vfs ] || die "could not switch storage to vfs"
fi

# ---------------------------------------------------------------- 3. podman-compose
want_pc=${PODMAN_COMPOSE_VERSION:+podman-compose==$PODMAN_COMPOSE_VERSION}
want_pc=${want_pc:-podman-compose}
if [ -x "$PC_VENV/bin/podman-compose" ] && \
   { [ -z "$PODMAN_COMPOSE_VERSION" ] || "$PC_VENV/bin/pip" show podman-compose 2>/dev/null | grep -qx "Version: $PODMAN_COMPOSE_VERSION"; }; then
  log "podman-compose already in $PC_VENV"
else
  py=${PYTHON:-python3}
  if ! "$py" -m venv --clear "$PC_VENV" >/dev/null 2>&1; then
    log "venv with $py failed; installing python3-venv and using /usr/bin/python3"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null
    py=/usr/bin/python3; "$py" -m venv --clear "$PC_VENV" || die "cannot create venv $PC_VENV"
  fi
  timed pip-install-podman-compose "$PC_VENV/bin/pip" install -q "$want_pc" \
    || die "pip install $want_pc failed"
fi
ln -sf "$PC_VENV/bin/podman-compose" /usr/local/bin/podman-compose
log "$(podman --version); $(podman-compose --version 2>/dev/null | head -1)"

# ---------------------------------------------------------------- 4. base image
debian_mirror() {
  local m=""
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  # deb822 sources: first URIs line of a stanza whose Suites mention $SUITE (not -security)
  m=$(awk -v s="$SUITE" '
        /^URIs:/ {u=$2} /^Suites:/ {for(i=2;i<=NF;i++) if ($i==s) ok=1}
        /^$/ { if (ok && u!="" && !f) {print u; f=1} ok=0; u="" }
        END { if (ok && u!="" && !f) print u }' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$m" ] || m=$(grep -hE "^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?[a-z]+://[^ ]+[[:space:]]+$SUITE([[:space:]]|$)" \
                       /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
                     | sed -E 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' | awk '{print $1}' | head -1)
  echo "${m:-http://deb.debian.org/debian}"
}

if [ "$FORCE_BASE" = 1 ] || ! podman image exists "$BASE_TAG"; then
  if [ "$FORCE_BASE" = 1 ] || [ ! -f "$ROOTFS/.podman-setup-complete" ]; then
    mirror=$(debian_mirror)
    log "debootstrap $SUITE from $mirror into $ROOTFS (include: $BASE_INCLUDE)"
    rm -rf "$ROOTFS"
    timed debootstrap debootstrap --variant=minbase --include="$BASE_INCLUDE" "$SUITE" "$ROOTFS" "$mirror" \
      > /tmp/podman-setup-debootstrap.log 2>&1 \
      || die "debootstrap failed, see /tmp/podman-setup-debootstrap.log"
    chroot "$ROOTFS" apt-get clean
    rm -rf "$ROOTFS"/var/lib/apt/lists/*
    # Trust the host's extra CAs (egress TLS proxy) so pip/https work inside containers.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
      mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
      cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
      chroot "$ROOTFS" update-ca-certificates >/dev/null
    fi
    touch "$ROOTFS/.podman-setup-complete"
  else
    log "reusing existing rootfs $ROOTFS"
  fi
  ca=/etc/ssl/certs/ca-certificates.crt
  import_image() {
    tar -C "$ROOTFS" --exclude=./.podman-setup-complete -c . | podman import -q \
      --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' \
      --change "ENV SSL_CERT_FILE=$ca" --change "ENV REQUESTS_CA_BUNDLE=$ca" --change "ENV PIP_CERT=$ca" \
      - "$BASE_TAG" >/dev/null
  }
  timed podman-import import_image || die "podman import failed"
  podman image prune -f >/dev/null 2>&1 || true
else
  log "image $BASE_TAG already present"
fi
pyver=$(podman run --rm --network=none "$BASE_TAG" python3 -c 'import sys, venv; print(sys.version.split()[0])') \
  || die "cannot run python3 in $BASE_TAG"
log "base image $BASE_TAG: Python $pyver"

# ---------------------------------------------------------------- 5. self-test
if [ "$SELFTEST" = 1 ]; then
  t=$(mktemp -d /tmp/podman-setup-test.XXXXXX)
  cleanup_test() { (cd "$t" && podman-compose down >/dev/null 2>&1) || true; podman rmi -f localhost/podman-setup-test:latest >/dev/null 2>&1 || true; rm -rf "$t"; }
  cat > "$t/Dockerfile" <<'EOF'
FROM python:3.11-slim-bookworm
RUN python3 -m venv /opt/v && /opt/v/bin/python -c 'print(42)'
EOF
  timed podman-build podman build -q --pull=never -t localhost/podman-setup-test:latest "$t" >/dev/null \
    || { cleanup_test; die "offline podman build failed"; }
  cat > "$t/compose.yml" <<'EOF'
services:
  a:
    image: localhost/podman-setup-test:latest
    init: true
    command: python3 -m http.server 8000
  b:
    image: localhost/podman-setup-test:latest
    depends_on: [a]
    command: ["python3", "-c", "import urllib.request,time; time.sleep(2); print('STATUS', urllib.request.urlopen('http://a:8000').status)"]
EOF
  out=$(cd "$t" && timeout 120 podman-compose up --exit-code-from b 2>&1) || { echo "$out" >&2; cleanup_test; die "podman-compose smoke test failed"; }
  grep -q 'STATUS 200' <<<"$out" || { echo "$out" >&2; cleanup_test; die "service-name DNS test did not print 200"; }
  cleanup_test
  log "self-test OK (offline build, compose up, service-name DNS)"
fi
log "done: podman $(podman --version | awk '{print $3}'), podman-compose at /usr/local/bin/podman-compose, base $BASE_TAG (Python $pyver)"
