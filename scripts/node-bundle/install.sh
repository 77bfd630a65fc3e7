#!/usr/bin/env bash
# Installs this Runplane node bundle on a GPU host. Run it from the unpacked bundle, as root:
#
#   sudo ./install.sh [--prefix /opt/runplane] [--state-dir /var/lib/runplane] [--user runplane]
#                     [--root DIR] [--no-user] [--no-systemd]
#
# It copies bin/, lib/ and share/ to PREFIX (replacing files by rename, so a running daemon keeps
# its old binary until it restarts), creates the service user and the state directory (0700,
# owned by the user), installs the systemd unit with PREFIX filled in, and prints the next step.
# It never starts or restarts the daemon. --root installs into a staging tree (packaging, tests).
set -euo pipefail

PREFIX=/opt/runplane
STATE_DIR=/var/lib/runplane
SERVICE_USER=runplane
ROOT=
MAKE_USER=1
SYSTEMD=1
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
        --state-dir) STATE_DIR=${2:?--state-dir needs a directory}; shift 2 ;;
        --user) SERVICE_USER=${2:?--user needs a name}; shift 2 ;;
        --root) ROOT=${2:?--root needs a directory}; shift 2 ;;
        --no-user) MAKE_USER=0; shift ;;
        --no-systemd) SYSTEMD=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
case "$PREFIX$STATE_DIR" in *[[:space:]\'\"\\]*)
    echo "install.sh: --prefix and --state-dir must not contain spaces, quotes or backslashes" >&2; exit 2 ;;
esac
[[ $PREFIX == /* && $STATE_DIR == /* ]] || { echo "install.sh: --prefix and --state-dir must be absolute" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$HERE/bin/runplaned" ] || { echo "install.sh: run me from the unpacked bundle ($HERE/bin/runplaned not found)" >&2; exit 1; }
if [ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: needs root (or --root DIR to stage the files elsewhere)" >&2
    exit 1
fi

# The bundle must run here before anything is replaced.
if ! version=$(env -u LD_LIBRARY_PATH "$HERE/bin/runplaned" --version 2>&1); then
    echo "install.sh: the bundled runplaned does not start on this host: $version" >&2
    exit 1
fi

dest=$ROOT$PREFIX
mkdir -p "$dest"
for part in bin lib share; do
    mkdir -p "$dest/$part"
    (cd "$HERE" && find "$part" -type d) | while read -r d; do mkdir -p "$dest/$d"; done
    (cd "$HERE" && find "$part" -type f) | while read -r f; do
        cp -p "$HERE/$f" "$dest/$f.new.$$"
        mv -f "$dest/$f.new.$$" "$dest/$f"
    done
done
cp -p "$HERE/VERSION" "$HERE/README.md" "$dest/"

if [ "$MAKE_USER" -eq 1 ] && ! id "$SERVICE_USER" >/dev/null 2>&1; then
    if [ -n "$ROOT" ]; then
        echo "install.sh: not creating user '$SERVICE_USER' inside --root (use --no-user)" >&2
    else
        useradd --system --no-create-home --home-dir "$STATE_DIR" --shell /usr/sbin/nologin "$SERVICE_USER"
        echo "install.sh: created system user $SERVICE_USER"
    fi
fi
mkdir -p "$ROOT$STATE_DIR"
chmod 0700 "$ROOT$STATE_DIR"
if [ -z "$ROOT" ] && id "$SERVICE_USER" >/dev/null 2>&1; then
    chown "$SERVICE_USER:" "$ROOT$STATE_DIR"
fi

unit_dir=$ROOT/etc/systemd/system
mkdir -p "$unit_dir"
sed -e "s|/opt/runplane|$PREFIX|g" -e "s|/var/lib/runplane|$STATE_DIR|g" \
    -e "s|^User=runplane$|User=$SERVICE_USER|" -e "s|^Group=runplane$|Group=$SERVICE_USER|" \
    "$HERE/share/runplane/runplaned.service" >"$unit_dir/runplaned.service"
if [ "$SYSTEMD" -eq 1 ] && [ -z "$ROOT" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
fi

cat <<NEXT
install.sh: installed $version
  binaries   $dest/bin
  state      $ROOT$STATE_DIR (0700)
  unit       $unit_dir/runplaned.service
Next:
  systemctl enable --now runplaned        # loopback only; edit ExecStart for TLS + token first
  $PREFIX/bin/runplanectl nodes 127.0.0.1:7070
NEXT
